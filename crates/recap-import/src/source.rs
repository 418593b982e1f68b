//! Reading one input file into records that know their line: JSON Lines, a JSON array
//! (pretty-printed or not), or one JSON object whose list members are split into their
//! items. A file cut off in the middle keeps every record before the cut, and the cut
//! becomes one problem naming the line where the broken record starts.

use crate::ojson::J;
use crate::problem::Problem;
use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

/// A value and the 1-based line where it starts.
#[derive(Debug, Clone)]
pub struct Located<'a> {
    pub line: usize,
    pub value: J<'a>,
}

/// A member of a top-level object. When its value is a list, `item_lines` holds the
/// line of each item (the items are read one by one, so a cut inside the list keeps
/// the items before it).
#[derive(Debug, Clone)]
pub struct Member<'a> {
    pub key: String,
    pub line: usize,
    pub value: J<'a>,
    pub item_lines: Vec<usize>,
}

/// What a file holds.
#[derive(Debug, Clone)]
pub enum Doc<'a> {
    /// JSON Lines: one value per non-blank line.
    Lines(Vec<Located<'a>>),
    /// One JSON array; its items with their lines.
    Array(Vec<Located<'a>>),
    /// One JSON object; its members in recorded order.
    Object(Vec<Member<'a>>),
    /// One value that is neither (a string, a number…), or nothing readable.
    Other(Option<Located<'a>>),
}

impl Doc<'_> {
    /// Nothing was read.
    pub fn is_empty(&self) -> bool {
        match self {
            Doc::Lines(items) | Doc::Array(items) => items.is_empty(),
            Doc::Object(members) => members.is_empty(),
            Doc::Other(v) => v.is_none(),
        }
    }
}

/// The members as one object value.
pub fn object_of<'a>(members: &[Member<'a>]) -> J<'a> {
    J::Obj(
        members
            .iter()
            .map(|m| (Cow::Owned(m.key.clone()), m.value.clone()))
            .collect(),
    )
}

/// True for `x.gz`: the input is gzip-compressed.
pub fn is_gzip_name(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("gz"))
}

/// The file's extension, looking through a `.gz` suffix (`a.jsonl.gz` → `jsonl`),
/// lower-cased.
pub fn data_extension(path: &Path) -> Option<String> {
    let name = path.file_name()?.to_str()?;
    let name = if is_gzip_name(path) {
        &name[..name.len() - 3]
    } else {
        name
    };
    let (_, ext) = name.rsplit_once('.')?;
    Some(ext.to_ascii_lowercase())
}

/// The file name without `.gz` and without its data extension (`run.jsonl.gz` → `run`).
pub fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name = if is_gzip_name(path) {
        name[..name.len() - 3].to_string()
    } else {
        name
    };
    match name.rsplit_once('.') {
        Some((s, _)) if !s.is_empty() => s.to_string(),
        _ => name,
    }
}

/// Reads a file (gunzipping `.gz` or gzip-magic input) as text; `None` with a problem
/// when it cannot be read.
pub fn read_text(path: &Path, problems: &mut Vec<Problem>) -> Option<String> {
    let bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) => {
            problems.push(
                Problem::skipped(path, format!("cannot read file: {e}")).kind("unreadable-file"),
            );
            return None;
        }
    };
    Some(decode(path, bytes, problems))
}

/// Turns file bytes into text: gunzips gzip data (a cut-off archive keeps what was
/// decompressed, with a problem), drops a UTF-8 byte-order mark, replaces invalid UTF-8.
pub fn decode(path: &Path, bytes: Vec<u8>, problems: &mut Vec<Problem>) -> String {
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::with_capacity(bytes.len() * 4);
        let mut gz = flate2::read::MultiGzDecoder::new(bytes.as_slice());
        if let Err(e) = gz.read_to_end(&mut out) {
            problems.push(
                Problem::skipped(
                    path,
                    format!(
                        "gzip data ends early or is corrupt ({e}); the text decompressed before it is read"
                    ),
                )
                .kind("truncated"),
            );
        }
        out
    } else {
        bytes
    };
    let body = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(&bytes);
    match std::str::from_utf8(body) {
        Ok(text) => text.to_string(),
        Err(e) => {
            let line = memchr::memchr_iter(b'\n', &body[..e.valid_up_to()]).count() + 1;
            problems.push(
                Problem::lossy(path, "invalid UTF-8; bad bytes were replaced by U+FFFD")
                    .at_line(line)
                    .kind("invalid-utf8"),
            );
            String::from_utf8_lossy(body).into_owned()
        }
    }
}

/// Counts lines up to a byte offset, moving forward only (each byte is scanned once).
struct Lines<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        Lines {
            bytes: text.as_bytes(),
            pos: 0,
            line: 1,
        }
    }

    /// The 1-based line of byte `at` (at ≥ every earlier call's offset).
    fn at(&mut self, at: usize) -> usize {
        let at = at.min(self.bytes.len());
        if at > self.pos {
            self.line += memchr::memchr_iter(b'\n', &self.bytes[self.pos..at]).count();
            self.pos = at;
        }
        self.line
    }
}

/// Describes a JSON syntax error; a record that stops early says so.
pub fn json_error(e: &serde_json::Error) -> String {
    if e.is_eof() {
        format!(
            "truncated JSON record (it stops before it is complete; was the file cut off?): {e}"
        )
    } else {
        format!("malformed JSON: {e}")
    }
}

fn error_kind(e: &serde_json::Error) -> &'static str {
    if e.is_eof() {
        "truncated"
    } else {
        "malformed-json"
    }
}

/// Parses `text` as JSON Lines when `lines` is set, else by its shape.
pub fn parse<'a>(path: &Path, text: &'a str, lines: bool, problems: &mut Vec<Problem>) -> Doc<'a> {
    if lines {
        return Doc::Lines(json_lines(path, text, problems));
    }
    let start = text.len() - text.trim_start().len();
    let mut p = Parser {
        text,
        pos: start,
        lines: Lines::new(text),
        path,
    };
    match text.as_bytes().get(start) {
        None => {
            problems.push(Problem::skipped(path, "empty file: no records").kind("empty-file"));
            Doc::Other(None)
        }
        Some(b'[') | Some(b'{') => {
            let first_line_end = text[start..].find('\n').map_or(text.len(), |i| start + i);
            let doc = if text.as_bytes()[start] == b'[' {
                p.array()
                    .map(Doc::Array)
                    .map_err(|b| (Doc::Array(b.0), b.1))
            } else {
                p.object()
                    .map(Doc::Object)
                    .map_err(|b| (Doc::Object(b.0), b.1))
            };
            match doc {
                Ok(doc) => {
                    let end = p.pos;
                    p.skip_ws();
                    if p.pos >= text.len() {
                        doc
                    } else if end <= first_line_end {
                        // The first value ended on its own line and more follows: JSON
                        // Lines under another extension.
                        Doc::Lines(json_lines(path, text, problems))
                    } else {
                        problems.push(
                            Problem::skipped(
                                path,
                                "malformed JSON: text after the end of the top-level value; it is not read",
                            )
                            .at_line(p.lines.at(p.pos))
                            .kind("malformed-json"),
                        );
                        doc
                    }
                }
                Err((doc, problem)) => {
                    // A broken first line followed by lines that are values of their own
                    // is JSON Lines with one bad record, not a broken document.
                    if second_line_is_a_value(&text[first_line_end..]) {
                        return Doc::Lines(json_lines(path, text, problems));
                    }
                    problems.push(problem);
                    doc
                }
            }
        }
        Some(_) => match p.value() {
            Ok(v) => Doc::Other(Some(Located {
                line: p.lines.at(start),
                value: v,
            })),
            Err(e) => {
                problems.push(
                    Problem::skipped(path, json_error(&e))
                        .at_line(p.error_line(start, &e))
                        .kind(error_kind(&e)),
                );
                Doc::Other(None)
            }
        },
    }
}

/// Whether the first non-blank line of `rest` is a complete JSON value on its own.
fn second_line_is_a_value(rest: &str) -> bool {
    rest.split('\n')
        .map(str::trim)
        .find(|l| !l.is_empty())
        .is_some_and(|l| serde_json::from_str::<serde::de::IgnoredAny>(l).is_ok())
}

/// Every non-blank line parsed; an unreadable line is a problem and reading goes on.
pub fn json_lines<'a>(path: &Path, text: &'a str, problems: &mut Vec<Problem>) -> Vec<Located<'a>> {
    let mut out = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<J>(raw) {
            Ok(value) => out.push(Located { line: i + 1, value }),
            Err(e) => problems.push(
                Problem::skipped(path, json_error(&e))
                    .at_line(i + 1)
                    .kind(error_kind(&e)),
            ),
        }
    }
    out
}

/// A cut or broken document: what was read before the break, and the problem.
type Partial<T> = Box<(T, Problem)>;

struct Parser<'a, 'p> {
    text: &'a str,
    pos: usize,
    lines: Lines<'a>,
    path: &'p Path,
}

impl<'a> Parser<'a, '_> {
    fn skip_ws(&mut self) {
        let rest = &self.text.as_bytes()[self.pos..];
        let n = rest
            .iter()
            .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
            .count();
        self.pos += n;
    }

    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    /// One JSON value starting at `pos`.
    fn value(&mut self) -> Result<J<'a>, serde_json::Error> {
        let mut stream =
            serde_json::Deserializer::from_str(&self.text[self.pos..]).into_iter::<J>();
        match stream.next() {
            Some(Ok(v)) => {
                self.pos += stream.byte_offset();
                Ok(v)
            }
            Some(Err(e)) => Err(e),
            // Only white space is left: the EOF error serde_json gives for it.
            None => match serde_json::from_str::<J>("") {
                Err(e) => Err(e),
                Ok(v) => Ok(v),
            },
        }
    }

    /// The absolute line of an error met parsing from byte `from`.
    fn error_line(&mut self, from: usize, e: &serde_json::Error) -> usize {
        self.lines.at(from) + e.line().saturating_sub(1)
    }

    fn problem_at(&mut self, at: usize, message: String, kind: &'static str) -> Problem {
        Problem::skipped(self.path, message)
            .at_line(self.lines.at(at))
            .kind(kind)
    }

    /// A value that could not be read: at the line where it starts, the message naming
    /// the line and column of the error in the file.
    fn value_problem(&mut self, from: usize, e: &serde_json::Error, what: &str) -> Problem {
        let start = self.lines.at(from);
        let line = self.error_line(from, e);
        let message = json_error(e);
        let message = match message.rfind(" at line ") {
            Some(i) => format!("{} at line {line} column {}", &message[..i], e.column()),
            None => message,
        };
        Problem::skipped(self.path, format!("{message}; {what}"))
            .at_line(start)
            .kind(error_kind(e))
    }

    /// `[a, b, …]` at `pos`, item by item.
    fn array(&mut self) -> Result<Vec<Located<'a>>, Partial<Vec<Located<'a>>>> {
        let mut items = Vec::new();
        self.pos += 1;
        loop {
            self.skip_ws();
            if self.peek() == Some(b']') && items.is_empty() {
                self.pos += 1;
                return Ok(items);
            }
            let at = self.pos;
            let line = self.lines.at(at);
            match self.value() {
                Ok(value) => items.push(Located { line, value }),
                Err(e) => {
                    let p = self.value_problem(
                        at,
                        &e,
                        &format!(
                            "record {} and the rest of the list are not read",
                            items.len() + 1
                        ),
                    );
                    let p = p.at_record(items.len() + 1);
                    return Err(Box::new((items, p)));
                }
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(items);
                }
                None => {
                    let n = items.len();
                    let p = self.problem_at(
                        self.pos,
                        format!("truncated JSON array (the file looks cut off after record {n}): missing `]`"),
                        "truncated",
                    );
                    return Err(Box::new((items, p)));
                }
                Some(c) => {
                    let p = self.problem_at(
                        self.pos,
                        format!(
                            "malformed JSON array: expected `,` or `]` after record {}, got {:?}; the rest is not read",
                            items.len(),
                            c as char
                        ),
                        "malformed-json",
                    );
                    return Err(Box::new((items, p)));
                }
            }
        }
    }

    /// `{"k": v, …}` at `pos`, member by member; list members item by item.
    fn object(&mut self) -> Result<Vec<Member<'a>>, Partial<Vec<Member<'a>>>> {
        let mut members: Vec<Member> = Vec::new();
        self.pos += 1;
        loop {
            self.skip_ws();
            if self.peek() == Some(b'}') && members.is_empty() {
                self.pos += 1;
                return Ok(members);
            }
            let at = self.pos;
            let key = match self.value() {
                Ok(J::Str(k)) => k.into_owned(),
                Ok(other) => {
                    let p = self.problem_at(
                        at,
                        format!(
                            "malformed JSON object: expected a key string, got {}",
                            other.type_name()
                        ),
                        "malformed-json",
                    );
                    return Err(Box::new((members, p)));
                }
                Err(e) => {
                    let p = self.value_problem(at, &e, "the rest of the object is not read");
                    return Err(Box::new((members, p)));
                }
            };
            self.skip_ws();
            if self.peek() != Some(b':') {
                let p = match self.peek() {
                    None => self.problem_at(
                        self.pos,
                        format!("truncated JSON object (the file looks cut off at member {key:?})"),
                        "truncated",
                    ),
                    Some(_) => self.problem_at(
                        self.pos,
                        format!("malformed JSON object: expected `:` after {key:?}"),
                        "malformed-json",
                    ),
                };
                return Err(Box::new((members, p)));
            }
            self.pos += 1;
            self.skip_ws();
            let line = self.lines.at(self.pos);
            if self.peek() == Some(b'[') {
                match self.array() {
                    Ok(items) => members.push(list_member(key, line, items)),
                    Err(partial) => {
                        let (items, p) = *partial;
                        let p = Problem {
                            message: format!("in `{key}`: {}", p.message),
                            ..p
                        };
                        members.push(list_member(key, line, items));
                        return Err(Box::new((members, p)));
                    }
                }
            } else {
                let at = self.pos;
                match self.value() {
                    Ok(value) => members.push(Member {
                        key,
                        line,
                        value,
                        item_lines: Vec::new(),
                    }),
                    Err(e) => {
                        let p = self.value_problem(
                            at,
                            &e,
                            &format!("member {key:?} and the rest of the object are not read"),
                        );
                        return Err(Box::new((members, p)));
                    }
                }
            }
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(members);
                }
                None => {
                    let p = self.problem_at(
                        self.pos,
                        "truncated JSON object (the file looks cut off): missing `}`".into(),
                        "truncated",
                    );
                    return Err(Box::new((members, p)));
                }
                Some(c) => {
                    let p = self.problem_at(
                        self.pos,
                        format!(
                            "malformed JSON object: expected `,` or `}}`, got {:?}",
                            c as char
                        ),
                        "malformed-json",
                    );
                    return Err(Box::new((members, p)));
                }
            }
        }
    }
}

fn list_member(key: String, line: usize, items: Vec<Located<'_>>) -> Member<'_> {
    let item_lines = items.iter().map(|l| l.line).collect();
    Member {
        key,
        line,
        value: J::Arr(items.into_iter().map(|l| l.value).collect()),
        item_lines,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(text: &str) -> (Doc<'_>, Vec<Problem>) {
        let mut problems = Vec::new();
        let d = parse(Path::new("f.json"), text, false, &mut problems);
        (d, problems)
    }

    #[test]
    fn array_items_know_their_lines() {
        let (d, p) = doc("[\n  {\"a\": 1},\n\n  {\"b\":\n 2}\n]\n");
        assert!(p.is_empty(), "{p:?}");
        let Doc::Array(items) = d else { panic!() };
        assert_eq!(items.iter().map(|l| l.line).collect::<Vec<_>>(), [2, 4]);
    }

    #[test]
    fn a_cut_array_keeps_the_items_before_the_cut() {
        let (d, p) = doc("[\n{\"a\": 1},\n{\"b\": [1,\n");
        let Doc::Array(items) = d else { panic!() };
        assert_eq!(items.len(), 1);
        assert_eq!(p.len(), 1);
        assert_eq!((p[0].line, p[0].record), (Some(3), Some(2)));
        assert_eq!(p[0].kind, "truncated");
    }

    #[test]
    fn object_list_members_are_read_item_by_item() {
        let (d, p) = doc("{\n \"info\": {\"x\": 1},\n \"items\": [\n  1,\n  2,\n  {\"c\": ");
        let Doc::Object(members) = d else { panic!() };
        assert_eq!(members.len(), 2);
        assert_eq!(members[1].key, "items");
        assert_eq!(members[1].item_lines, [4, 5]);
        assert_eq!(p[0].line, Some(6));
        assert!(
            p[0].message.starts_with("in `items`: truncated"),
            "{}",
            p[0]
        );
    }

    #[test]
    fn values_on_several_lines_are_json_lines() {
        let (d, p) = doc("{\"a\": 1}\n{\"a\": 2}\nnot json\n");
        let Doc::Lines(items) = d else { panic!() };
        assert_eq!(items.len(), 2);
        assert_eq!(p.len(), 1);
        assert_eq!(p[0].line, Some(3));
        let (d, _) = doc("{\"a\": \n{\"a\": 2}\n");
        assert!(matches!(d, Doc::Lines(ref v) if v.len() == 1), "{d:?}");
    }

    #[test]
    fn extensions_look_through_gz() {
        assert_eq!(
            data_extension(Path::new("a/b.JSONL.gz")).as_deref(),
            Some("jsonl")
        );
        assert_eq!(data_extension(Path::new("x.traj")).as_deref(), Some("traj"));
        assert_eq!(stem(Path::new("d/run.jsonl.gz")), "run");
        assert_eq!(stem(Path::new("d/conv.json")), "conv");
    }

    #[test]
    fn gzip_input_is_decompressed() {
        use std::io::Write;
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all("{\"a\": 1}\n".as_bytes()).unwrap();
        let bytes = gz.finish().unwrap();
        let mut problems = Vec::new();
        assert_eq!(
            decode(Path::new("x.gz"), bytes.clone(), &mut problems),
            "{\"a\": 1}\n"
        );
        assert!(problems.is_empty());
        let cut = bytes[..bytes.len() - 6].to_vec();
        let text = decode(Path::new("x.gz"), cut, &mut problems);
        assert!(text.starts_with("{\"a\""), "{text:?}");
        assert_eq!(problems.len(), 1);
        assert_eq!(problems[0].kind, "truncated");
    }
}
