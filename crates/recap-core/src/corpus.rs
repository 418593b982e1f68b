//! Streaming corpus reader: one session per JSON line, one session in memory at a time.
//!
//! Every line yields either a session or an error naming file, line and field; a bad
//! line never stops the lines after it. Blank lines are not sessions and are skipped.
//!
//! Two exceptions keep one mistake one rejection. A file that is one JSON value spread
//! over many lines (a JSON array of sessions, or a pretty-printed object) is not JSON
//! Lines at all: every line of it would be "malformed JSON"; instead the file gets one
//! rejection that says what it is and how to convert it, and is not read further. And a
//! session spread over a few lines inside a JSON Lines file (pasted from a document,
//! say) is one rejection naming its first and last line, with the command that joins
//! it; the lines after it are read as usual.

use crate::fields::FieldError;
use crate::gz::CorpusFile;
use crate::session::Session;
use crate::strict_json::StrictError;
use std::collections::{HashSet, VecDeque};
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
            crate::fields::describe_field(&self.field),
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
    /// Lines read ahead while looking for the end of a value spread over lines, that
    /// turned out not to belong to it: read again, in order, before new ones.
    pending: VecDeque<(usize, Vec<u8>)>,
    /// Lines read from the file so far.
    read: usize,
    /// The last line a look for a value spread over lines has examined: a line up to it
    /// opens no second look (each line is examined once, so a file of truncated lines
    /// costs no more than one look per line).
    examined: usize,
    /// A read error met while reading ahead, reported after the pending lines.
    read_error: Option<std::io::Error>,
    keep: Option<LineFilter>,
}

/// A session spread over lines is looked for over at most this many lines after the
/// one that opens it, and this many bytes in all: a pasted session is a few lines.
const MAX_SPREAD_LINES: usize = 256;
const MAX_SPREAD_BYTES: usize = 1 << 20;

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
            pending: VecDeque::new(),
            read: 0,
            examined: 0,
            read_error: None,
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

    /// Reads the next line into `buf` (without its line end) and returns its number: a
    /// pending one, else one from the file. `Err` for a read error.
    fn next_line(&mut self) -> Option<std::io::Result<usize>> {
        if let Some((n, line)) = self.pending.pop_front() {
            self.buf = line;
            return Some(Ok(n));
        }
        if let Some(e) = self.read_error.take() {
            return Some(Err(e));
        }
        // One buffer for every line: a corpus of long lines is not reallocated per line.
        self.buf.clear();
        let got = self.reader.read_until(b'\n', &mut self.buf);
        match got {
            Ok(0) => None,
            Ok(_) => {
                self.read += 1;
                trim_line_end(&mut self.buf);
                Some(Ok(self.read))
            }
            Err(e) => {
                self.read += 1;
                Some(Err(e))
            }
        }
    }

    /// When the current line opens a JSON value that ends on a later line: the number
    /// of that last line. The lines read ahead to find out are kept for reading again
    /// when they are not part of it.
    fn spread_to(&mut self) -> Option<usize> {
        if self.buf.len() > MAX_SPREAD_BYTES || self.line <= self.examined {
            return None;
        }
        let current = std::mem::take(&mut self.buf);
        let mut joined = current.clone();
        let mut ahead: Vec<(usize, Vec<u8>)> = Vec::new();
        let mut end = None;
        while ahead.len() < MAX_SPREAD_LINES {
            let n = match self.next_line() {
                Some(Ok(n)) => n,
                Some(Err(e)) => {
                    self.read_error = Some(e);
                    break;
                }
                None => break,
            };
            let line = std::mem::take(&mut self.buf);
            // A line that opens an object at its start begins the next session.
            let next_session = line.first() == Some(&b'{');
            // Only a line that ends a value can complete one: the others need no parse.
            let closes = line
                .iter()
                .rev()
                .find(|b| !b.is_ascii_whitespace())
                .is_some_and(|b| matches!(b, b'}' | b']'));
            ahead.push((n, line));
            if next_session {
                break;
            }
            self.examined = n;
            joined.push(b'\n');
            joined.extend_from_slice(&ahead[ahead.len() - 1].1);
            if joined.len() > MAX_SPREAD_BYTES {
                break;
            }
            if !closes {
                continue;
            }
            match serde_json::from_slice::<serde::de::IgnoredAny>(&joined) {
                Ok(_) => {
                    end = Some(n);
                    break;
                }
                Err(e) if e.is_eof() => {}
                Err(_) => break,
            }
        }
        if end.is_none() {
            // Not one value: those lines are read as lines, after this one.
            for line in ahead.into_iter().rev() {
                self.pending.push_front(line);
            }
        }
        self.buf = current;
        end
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

    /// The current line without the byte order mark a file's first line may have.
    fn line_bytes(&self) -> &[u8] {
        let bytes = self.buf.as_slice();
        if self.line == 1 {
            return bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
        }
        bytes
    }

    /// Whether `parse_line` would reject the current line as ending before its JSON
    /// value does, without its side effects (no id remembered).
    fn ends_early(&self) -> bool {
        std::str::from_utf8(self.line_bytes()).is_ok_and(|text| {
            matches!(
                crate::strict_json::from_str_exact(text),
                Err(StrictError::Json(e)) if e.is_eof()
            )
        })
    }

    fn parse_line(&mut self) -> Result<Session, RejectedSession> {
        let bytes = self.line_bytes();
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

/// How a line that stops inside its JSON value is described.
const ENDS_EARLY: &str = "the line ends before its JSON value does";

/// serde_json's message without its ` at line 1 column N`: the JSON of a corpus line
/// is always on line 1 of what was parsed, which beside the file's own line number
/// only misleads.
fn without_position(e: &serde_json::Error) -> String {
    let text = e.to_string();
    let suffix = format!(" at line {} column {}", e.line(), e.column());
    text.strip_suffix(&suffix).unwrap_or(&text).to_string()
}

/// One session over lines `first..=last`: one rejection, with the command that puts
/// each session on a line of its own.
fn spread_over_lines(first: usize, last: usize, file: &Path) -> FieldError {
    FieldError::new(
        "json",
        format!(
            "a session spread over lines {first}–{last}; JSON Lines holds each session on one line: `jq -c . {} > fixed.jsonl` joins them",
            file.display()
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
        StrictError::Json(e) if e.is_eof() => FieldError::new(
            "json",
            format!(
                "malformed JSON: {ENDS_EARLY} ({} at column {}; a truncated line?)",
                without_position(e),
                e.column()
            ),
        ),
        StrictError::Json(e) => FieldError::new(
            "json",
            format!(
                "malformed JSON: {} at column {}",
                without_position(e),
                e.column()
            ),
        ),
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

/// Whether `line` surely holds no JSON value that ends on a later line: it ends with
/// the `}` that closes every bracket it opens, outside any string. Only the lines this
/// cannot tell are parsed when a shard skips them.
///
/// Every shard runs this over every line it does not own (most of the corpus), so a
/// string is crossed by searching for its end (`memchr2`) instead of byte by byte:
/// corpus lines are mostly string contents.
fn surely_closed(line: &[u8]) -> bool {
    if line.iter().rev().find(|b| !b.is_ascii_whitespace()) != Some(&b'}') {
        return false;
    }
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = line.get(i) {
        i += 1;
        match b {
            b'"' => match string_end(line, i) {
                Some(end) => i = end,
                None => return false,
            },
            b'{' | b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    depth == 0
}

/// The position after the `"` that closes the string whose contents start at `from`,
/// or `None` when the line ends inside it.
fn string_end(line: &[u8], mut from: usize) -> Option<usize> {
    loop {
        let at = from + memchr::memchr2(b'"', b'\\', line.get(from..)?)?;
        if line[at] == b'"' {
            return Some(at + 1);
        }
        // An escape: the next byte is part of it, whatever it is.
        from = at + 2;
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
            let number = match self.next_line()? {
                Ok(n) => n,
                Err(e) => {
                    self.failed = true;
                    self.line = self.read;
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
            };
            self.line = number;
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
                    // A value spread over lines is skipped whole, as the shard that
                    // keeps its first line reads it: its other lines are no one's.
                    if !surely_closed(&self.buf) && self.ends_early() {
                        self.spread_to();
                    }
                    continue;
                }
            }
            let mut session = self.parse_line();
            if let Err(rejected) = &session
                && rejected.field == "json"
                && rejected.message.contains(ENDS_EARLY)
                && let Some(last) = self.spread_to()
            {
                session = Err(self.reject(
                    rejected.session_id.clone(),
                    spread_over_lines(self.line, last, &self.file),
                ));
            }
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

/// How many ids of other sessions a [`Lookup::Missing`] keeps, to show what is there.
pub const LISTED_IDS: usize = 8;

/// What a corpus holds under one session id ([`find_session`]).
#[derive(Debug)]
pub enum Lookup {
    Found(Session),
    /// The line with that id, rejected.
    Invalid(RejectedSession),
    /// No line has that id: the first [`LISTED_IDS`] ids of the valid sessions, and how
    /// many valid sessions there are.
    Missing {
        ids: Vec<String>,
        total: u64,
    },
}

/// Reads `entries` up to the session `id` (`recap render` and `recap inspect`, and
/// their Python counterparts, take one session of a corpus by id).
pub fn find_session(entries: impl IntoIterator<Item = Entry>, id: &str) -> Lookup {
    let mut ids: Vec<String> = Vec::new();
    let mut total = 0u64;
    for entry in entries {
        match entry.session {
            Ok(session) if session.id == id => return Lookup::Found(session),
            Ok(session) => {
                total += 1;
                if ids.len() < LISTED_IDS {
                    ids.push(session.id);
                }
            }
            Err(rejected) if rejected.session_id.as_deref() == Some(id) => {
                return Lookup::Invalid(rejected);
            }
            Err(_) => {}
        }
    }
    Lookup::Missing { ids, total }
}

#[cfg(test)]
mod tests {
    use super::{LISTED_IDS, Lookup, find_session, read_all, surely_closed};
    use proptest::prelude::*;
    use std::path::Path;

    fn lookup(corpus: &str, id: &str) -> Lookup {
        find_session(read_all(Path::new("c.jsonl"), corpus.as_bytes()), id)
    }

    #[test]
    fn find_session_tells_found_invalid_and_missing_apart() {
        let line = |id: &str| {
            format!(r#"{{"id":"{id}","mission":"m","system_prompt":"s","max_turns":2}}"#)
        };
        let corpus: String = (0..10).map(|i| line(&format!("s{i}")) + "\n").collect();
        let corpus = format!("{corpus}{{\"id\":\"bad\"}}\n");
        match lookup(&corpus, "s9") {
            Lookup::Found(s) => assert_eq!(s.id, "s9"),
            other => panic!("{other:?}"),
        }
        match lookup(&corpus, "bad") {
            Lookup::Invalid(r) => assert_eq!((r.line, r.field.as_str()), (11, "mission")),
            other => panic!("{other:?}"),
        }
        match lookup(&corpus, "nope") {
            Lookup::Missing { ids, total } => {
                assert_eq!(ids.len(), LISTED_IDS);
                assert_eq!((ids[0].as_str(), total), ("s0", 10));
            }
            other => panic!("{other:?}"),
        }
    }

    /// The plain byte-by-byte scan `surely_closed` must agree with.
    fn reference(line: &[u8]) -> bool {
        if line.iter().rev().find(|b| !b.is_ascii_whitespace()) != Some(&b'}') {
            return false;
        }
        let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
        for &b in line {
            if in_string {
                match b {
                    _ if escaped => escaped = false,
                    b'\\' => escaped = true,
                    b'"' => in_string = false,
                    _ => {}
                }
                continue;
            }
            match b {
                b'"' => in_string = true,
                b'{' | b'[' => depth += 1,
                b'}' | b']' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
        depth == 0 && !in_string
    }

    #[test]
    fn known_lines() {
        assert!(surely_closed(br#"{"id":"a","x":[1,{"y":"}"}]}"#));
        assert!(surely_closed(br#"{"s":"a \"quoted\" \\"}  "#));
        assert!(!surely_closed(br#"{"id":"a","#));
        assert!(!surely_closed(br#"{"s":"open \"}"#));
        assert!(!surely_closed(br#"{"a":{"b":1}"#));
        assert!(!surely_closed(br#"{"s":"ends in an escape\"#));
        assert!(!surely_closed(b"[1,2]"));
    }

    proptest! {
        #[test]
        fn agrees_with_the_byte_scan(mut line in proptest::collection::vec(
            prop::sample::select(b"\"\\{}[] a:,".to_vec()), 0..64), closed in any::<bool>()) {
            // Half the lines end in `}`, so the scan itself runs, not only the early return.
            if closed {
                line.push(b'}');
            }
            prop_assert_eq!(surely_closed(&line), reference(&line), "{:?}", String::from_utf8_lossy(&line));
        }
    }
}
