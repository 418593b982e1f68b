//! Streaming corpus reader: one session per JSON line, one session in memory at a time.
//!
//! Every line yields either a session or an error naming file, line and field; a bad
//! line never stops the lines after it. Blank lines are not sessions and are skipped.

use crate::session::{FieldError, Session};
use std::collections::HashSet;
use std::fmt;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};

/// A session that could not be read, with where and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct RejectedSession {
    pub file: PathBuf,
    /// 1-based line number; 0 when the whole file could not be read.
    pub line: usize,
    /// The session id when it could be read from the line.
    pub session_id: Option<String>,
    pub field: String,
    pub message: String,
}

impl fmt::Display for RejectedSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{}: {}: {}",
            self.file.display(),
            self.line,
            self.field,
            self.message
        )
    }
}

/// One item of a corpus: where it came from and what it was.
pub struct Entry {
    pub line: usize,
    pub session: Result<Session, RejectedSession>,
}

/// Iterates the sessions of one JSON Lines corpus.
pub struct CorpusReader<R> {
    file: PathBuf,
    reader: R,
    line: usize,
    buf: Vec<u8>,
    seen_ids: HashSet<String>,
    failed: bool,
}

/// Opens a corpus file, or says why it cannot be read as one: a rejection at line 0,
/// field `file`, which `recap validate` and `recap run` both report.
pub fn open_file(path: &Path) -> Result<File, RejectedSession> {
    let unreadable = |message: String| RejectedSession {
        file: path.to_path_buf(),
        line: 0,
        session_id: None,
        field: "file".into(),
        message,
    };
    let file = File::open(path).map_err(|e| unreadable(format!("cannot open: {e}")))?;
    // Opening a directory succeeds on Unix; reading it would fail with a vaguer error.
    if file.metadata().is_ok_and(|m| m.is_dir()) {
        return Err(unreadable(
            "is a directory, expected a JSON Lines file".into(),
        ));
    }
    Ok(file)
}

impl CorpusReader<BufReader<File>> {
    /// Opens a corpus file ([`open_file`]); the error names the file.
    pub fn open(path: &Path) -> Result<Self, RejectedSession> {
        let file = open_file(path)?;
        Ok(Self::new(path, BufReader::with_capacity(1 << 16, file)))
    }
}

impl<R: BufRead> CorpusReader<R> {
    pub fn new(file: &Path, reader: R) -> Self {
        Self {
            file: file.to_path_buf(),
            reader,
            line: 0,
            buf: Vec::new(),
            seen_ids: HashSet::new(),
            failed: false,
        }
    }

    fn reject(&self, id: Option<String>, e: FieldError) -> RejectedSession {
        RejectedSession {
            file: self.file.clone(),
            line: self.line,
            session_id: id,
            field: e.field,
            message: e.message,
        }
    }

    fn parse_line(&mut self) -> Result<Session, RejectedSession> {
        let mut bytes = self.buf.as_slice();
        if self.line == 1 {
            bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        let text = std::str::from_utf8(bytes).map_err(|e| {
            self.reject(
                None,
                FieldError::new("line", format!("invalid UTF-8 at byte {}", e.valid_up_to())),
            )
        })?;
        let json = crate::strict_json::from_str(text).map_err(|e| {
            self.reject(
                None,
                FieldError::new("json", format!("malformed JSON: {e}")),
            )
        })?;
        let id = json.get("id").and_then(|v| v.as_str()).map(str::to_string);
        let session = Session::from_json(&json).map_err(|e| self.reject(id.clone(), e))?;
        if !self.seen_ids.insert(session.id.clone()) {
            return Err(self.reject(
                id,
                FieldError::new(
                    "id",
                    format!("duplicate session id {:?} in this file", session.id),
                ),
            ));
        }
        Ok(session)
    }
}

fn trim_line_end(buf: &mut Vec<u8>) {
    while matches!(buf.last(), Some(b'\n' | b'\r')) {
        buf.pop();
    }
}

impl<R: BufRead> Iterator for CorpusReader<R> {
    type Item = Entry;

    fn next(&mut self) -> Option<Entry> {
        if self.failed {
            return None;
        }
        loop {
            self.buf.clear();
            match self.reader.read_until(b'\n', &mut self.buf) {
                Ok(0) => return None,
                Ok(_) => {}
                Err(e) => {
                    self.failed = true;
                    self.line += 1;
                    let err =
                        self.reject(None, FieldError::new("file", format!("read error: {e}")));
                    return Some(Entry {
                        line: self.line,
                        session: Err(err),
                    });
                }
            }
            self.line += 1;
            trim_line_end(&mut self.buf);
            if self.buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            let session = self.parse_line();
            return Some(Entry {
                line: self.line,
                session,
            });
        }
    }
}

/// Reads a whole corpus from any reader (tests, stdin).
pub fn read_all<R: Read>(file: &Path, reader: R) -> Vec<Entry> {
    CorpusReader::new(file, BufReader::new(reader)).collect()
}
