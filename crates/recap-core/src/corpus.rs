//! Streaming corpus reader: one session per JSON line, one session in memory at a time.
//!
//! Every line yields either a session or an error naming file, line and field; a bad
//! line never stops the lines after it. Blank lines are not sessions and are skipped.
//!
//! One exception: a file that is one JSON value spread over many lines (a JSON array of
//! sessions, or a pretty-printed object) is not JSON Lines at all. Every line of it
//! would be "malformed JSON"; instead the file gets one rejection that says what it is
//! and how to convert it, and is not read further.

use crate::gz::CorpusFile;
use crate::session::{FieldError, Session};
use crate::strict_json::StrictError;
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

/// Decides which non-blank lines a reader reads: given a line's 1-based number and its
/// bytes (line end removed), whether it is parsed ([`CorpusReader::only_lines`]).
pub type LineFilter = Box<dyn FnMut(usize, &[u8]) -> bool + Send>;

/// Iterates the sessions of one JSON Lines corpus.
pub struct CorpusReader<R> {
    file: PathBuf,
    reader: R,
    line: usize,
    buf: Vec<u8>,
    seen_ids: HashSet<String>,
    failed: bool,
    /// No non-blank line read yet (where a multi-line JSON value would begin).
    at_first_value: bool,
    keep: Option<LineFilter>,
}

/// serde_json's nesting limit (`recursion limit exceeded` beyond it).
pub const MAX_NESTING: usize = 128;

/// Opens a corpus file, or says why it cannot be read as one: a rejection at line 0,
/// field `file`, which `recap validate` and `recap run` both report.
/// A gzip file (`.gz`, recognised by its bytes) is decompressed as it is read.
pub fn open_file(path: &Path) -> Result<CorpusFile, RejectedSession> {
    open_file_counted(path, None)
}

/// [`open_file`], adding the bytes read from the file as stored to `read` (progress).
pub fn open_file_counted(
    path: &Path,
    read: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
) -> Result<CorpusFile, RejectedSession> {
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
    CorpusFile::counted(file, read).map_err(|e| unreadable(format!("cannot read: {e}")))
}

impl CorpusReader<BufReader<CorpusFile>> {
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
            at_first_value: true,
            keep: None,
        }
    }

    /// Reads only the non-blank lines `keep` accepts (called once per non-blank line, in
    /// order); the others are skipped unparsed: neither sessions nor rejections, and their
    /// ids are not remembered for the duplicate-id check. A file that is not JSON Lines
    /// still ends the reading at its first line, reported only if `keep` takes that
    /// line; a read error is offered to `keep` as an empty line.
    pub fn only_lines(mut self, keep: impl FnMut(usize, &[u8]) -> bool + Send + 'static) -> Self {
        self.keep = Some(Box::new(keep));
        self
    }

    fn keeps(&mut self, line: &[u8]) -> bool {
        let n = self.line;
        self.keep.as_mut().is_none_or(|keep| keep(n, line))
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
        let json = crate::strict_json::from_str_exact(text)
            .map_err(|e| self.reject(None, json_error(&e)))?;
        if json.is_array() {
            return Err(self.reject(
                None,
                FieldError::new(
                    "session",
                    format!(
                        "expected an object, got an array (a JSON array of sessions? one session object per line: `jq -c '.[]' {} > corpus.jsonl`)",
                        self.file.display()
                    ),
                ),
            ));
        }
        let id = json.get("id").and_then(|v| v.as_str()).map(str::to_string);
        let session = Session::from_json(&json).map_err(|e| self.reject(id.clone(), e))?;
        if !self.seen_ids.insert(session.id.clone()) {
            return Err(self.reject(id, FieldError::new("id", duplicate_id(&session.id))));
        }
        Ok(session)
    }
}

/// The message of a session whose id an earlier line of the same file has.
pub fn duplicate_id(id: &str) -> String {
    format!("duplicate session id {id:?} in this file")
}

fn not_json_lines(what: &str, file: &Path) -> FieldError {
    let name = file.display();
    let convert = if what == "a JSON array" {
        format!(
            "convert it with `jq -c '.[]' {name} > corpus.jsonl`, or, for OpenAI chat logs, `recap import openai-chat {name} -o corpus.jsonl`"
        )
    } else {
        format!("convert it with `jq -c . {name} > corpus.jsonl`")
    };
    FieldError::new(
        "file",
        format!(
            "{what} spread over several lines, not JSON Lines (one session object per line); {convert}"
        ),
    )
}

/// A corpus line's JSON error in the reader's words.
fn json_error(e: &StrictError) -> FieldError {
    match e {
        StrictError::Json(e) if e.to_string().starts_with("recursion limit exceeded") => {
            FieldError::new(
                "json",
                format!(
                    "nested deeper than {MAX_NESTING} levels (at column {}); recap reads values nested at most {MAX_NESTING} deep, the session and turn objects included",
                    e.column()
                ),
            )
        }
        StrictError::Json(e) => FieldError::new("json", format!("malformed JSON: {e}")),
        StrictError::WideInteger(literal) => FieldError::new(
            "json",
            format!(
                "integer {literal} does not fit in 64 bits (recap would have to round it); record it as a string or a float"
            ),
        ),
    }
}

/// What a file is when its first line opens a JSON value that does not end on it: an
/// array of sessions, or one pretty-printed object. `None` for a JSON Lines file (its
/// first line may still be bad; that is an ordinary rejection).
fn multi_line_value(first_line: &[u8]) -> Option<&'static str> {
    let text = std::str::from_utf8(first_line).ok()?.trim();
    let opens = if text.starts_with('[') {
        "a JSON array"
    } else if text == "{" {
        "one JSON object"
    } else {
        return None;
    };
    match serde_json::from_str::<serde::de::IgnoredAny>(text) {
        Err(e) if e.is_eof() => Some(opens),
        _ => None,
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
                    if !self.keeps(&[]) {
                        return None;
                    }
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
            if std::mem::take(&mut self.at_first_value) {
                let bytes = self.buf.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&self.buf);
                if let Some(what) = multi_line_value(bytes) {
                    self.failed = true;
                    let buf = std::mem::take(&mut self.buf);
                    if !self.keeps(&buf) {
                        return None;
                    }
                    return Some(Entry {
                        line: self.line,
                        session: Err(self.reject(None, not_json_lines(what, &self.file))),
                    });
                }
            }
            if self.keep.is_some() {
                let buf = std::mem::take(&mut self.buf);
                let keep = self.keeps(&buf);
                self.buf = buf;
                if !keep {
                    continue;
                }
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
