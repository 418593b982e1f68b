//! What an importer could not map, with where it was found. Importers never drop input
//! silently: every skipped record and every detail that could not be carried over
//! becomes one `Problem`.

use std::fmt;
use std::path::{Path, PathBuf};

/// How much of the input a problem cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Severity {
    /// A record, turn or whole session was not imported.
    Skipped,
    /// The session was imported, but one detail could not be mapped (or was mapped by a
    /// documented approximation that the user should know about).
    Lossy,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Skipped => "skipped",
            Severity::Lossy => "lossy",
        }
    }
}

/// Where in a file something was found: its line, and the record (the item of a JSON
/// list) when the file holds several.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct At {
    pub line: usize,
    pub record: Option<usize>,
}

impl At {
    pub fn line(line: usize) -> At {
        At { line, record: None }
    }

    pub fn new(line: usize, record: Option<usize>) -> At {
        At { line, record }
    }
}

/// One thing an importer could not map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    /// 1-based line of the file, when the input is line-oriented.
    pub line: Option<usize>,
    /// 1-based index of the conversation in a JSON array file.
    pub record: Option<usize>,
    /// The id of the session it concerns, once known.
    pub session: Option<String>,
    /// The turn number it concerns.
    pub turn: Option<u32>,
    pub severity: Severity,
    /// A short stable name for what went wrong (`unmapped-key`, `truncated`,
    /// `no-result`…), for counting problems by kind; `docs/importers.md` explains each.
    pub kind: &'static str,
    pub message: String,
}

impl Problem {
    pub fn new(file: &Path, severity: Severity, message: impl Into<String>) -> Self {
        Self {
            file: file.to_path_buf(),
            line: None,
            record: None,
            session: None,
            turn: None,
            severity,
            kind: "",
            message: message.into(),
        }
    }

    pub fn skipped(file: &Path, message: impl Into<String>) -> Self {
        Self::new(file, Severity::Skipped, message)
    }

    pub fn lossy(file: &Path, message: impl Into<String>) -> Self {
        Self::new(file, Severity::Lossy, message)
    }

    pub fn at_line(mut self, line: usize) -> Self {
        self.line = Some(line);
        self
    }

    /// Both line and record of `at` (line 0 is "no line").
    pub fn at(mut self, at: At) -> Self {
        if at.line > 0 {
            self.line = Some(at.line);
        }
        self.record = at.record;
        self
    }

    pub fn at_record(mut self, record: usize) -> Self {
        self.record = Some(record);
        self
    }

    pub fn in_session(mut self, id: &str) -> Self {
        self.session = Some(id.to_string());
        self
    }

    pub fn in_turn(mut self, turn: u32) -> Self {
        self.turn = Some(turn);
        self
    }

    pub fn kind(mut self, kind: &'static str) -> Self {
        self.kind = kind;
        self
    }
}

/// Orders the problems from `start` on by file, then line and record (stable, so problems
/// of one record keep the order they were found in).
pub(crate) fn sort_from(problems: &mut [Problem], start: usize) {
    problems[start..].sort_by(|a, b| {
        (&a.file, a.line.unwrap_or(0), a.record.unwrap_or(0)).cmp(&(
            &b.file,
            b.line.unwrap_or(0),
            b.record.unwrap_or(0),
        ))
    });
}

impl fmt::Display for Problem {
    /// `file:line: record 3: session X turn 2: skipped: message`
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        write!(f, ":")?;
        if let Some(record) = self.record {
            write!(f, " record {record}:")?;
        }
        if let Some(session) = &self.session {
            write!(f, " session {session}")?;
            if let Some(turn) = self.turn {
                write!(f, " turn {turn}")?;
            }
            write!(f, ":")?;
        }
        write!(f, " {}: {}", self.severity.as_str(), self.message)
    }
}
