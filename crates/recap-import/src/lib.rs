//! Importers that turn recorded agent logs into recap sessions (SPEC section 4).
//!
//! Each importer reads its files in a fixed order and returns the sessions it could
//! build plus a [`Problem`] for everything it could not map — a skipped record, a
//! truncated file, a tool result without its call. Nothing is dropped silently, and the
//! same input always gives byte-identical output. The exact mapping of every importer is
//! documented in this crate's README.

pub mod convert;
pub mod lisp;
pub mod openai_chat;
pub mod problem;
pub mod ptc_runner;
pub mod pydefs;
pub mod pylit;
pub mod smolagents;
mod text;
pub mod walk;

pub use problem::{Problem, Severity};

use recap_core::Session;
use std::collections::BTreeSet;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The log formats recap can import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    PtcRunner,
    Smolagents,
    OpenaiChat,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::PtcRunner, Kind::Smolagents, Kind::OpenaiChat];

    pub fn name(self) -> &'static str {
        match self {
            Kind::PtcRunner => "ptc-runner",
            Kind::Smolagents => "smolagents",
            Kind::OpenaiChat => "openai-chat",
        }
    }

    /// Which files a directory walk picks up, and how to name them in messages.
    fn files(self) -> (fn(&Path) -> bool, &'static str) {
        match self {
            Kind::PtcRunner => (ptc_runner::is_inspection_log, "run.inspection.jsonl files"),
            Kind::Smolagents => (|p| walk::has_extension(p, &["jsonl"]), ".jsonl files"),
            Kind::OpenaiChat => (
                |p| walk::has_extension(p, &["json", "jsonl", "ndjson"]),
                ".json/.jsonl/.ndjson files",
            ),
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Kind {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| {
                let names: Vec<_> = Kind::ALL.iter().map(|k| k.name()).collect();
                format!(
                    "unknown import kind {s:?}; expected one of {}",
                    names.join(", ")
                )
            })
    }
}

/// An input that could not be read at all (as opposed to a [`Problem`] inside it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ImportError {
    #[error("{}: {message}", path.display())]
    Path { path: PathBuf, message: String },
}

/// The result of one import: sessions in input order and every problem met.
#[derive(Debug, Default, Clone)]
pub struct Import {
    pub sessions: Vec<Session>,
    pub problems: Vec<Problem>,
    /// How many input files were read.
    pub files: usize,
}

impl Import {
    pub fn turns(&self) -> usize {
        self.sessions.iter().map(|s| s.turns.len()).sum()
    }

    pub fn failed_turns(&self) -> usize {
        self.sessions
            .iter()
            .flat_map(|s| &s.turns)
            .filter(|t| !t.success)
            .count()
    }

    pub fn tool_calls(&self) -> usize {
        self.sessions
            .iter()
            .flat_map(|s| &s.turns)
            .map(|t| t.tool_calls.len())
            .sum()
    }

    /// Writes one session per line in the corpus format.
    pub fn write_jsonl<W: Write>(&self, mut out: W) -> io::Result<()> {
        for session in &self.sessions {
            serde_json::to_writer(&mut out, &session.to_json())?;
            out.write_all(b"\n")?;
        }
        out.flush()
    }

    fn extend(&mut self, other: Import) {
        self.sessions.extend(other.sessions);
        self.problems.extend(other.problems);
    }
}

/// Imports every file below `paths` (see [`walk::collect`]) with the importer of `kind`.
pub fn import(kind: Kind, paths: &[PathBuf]) -> Result<Import, ImportError> {
    let (accept, wanted) = kind.files();
    let files = walk::collect(paths, accept, wanted)?;
    let mut all = Import {
        files: files.len(),
        ..Import::default()
    };
    match kind {
        Kind::PtcRunner => all.extend(ptc_runner::import_files(&files)),
        Kind::Smolagents => {
            for file in &files {
                all.extend(smolagents::import_file(file));
            }
        }
        Kind::OpenaiChat => {
            for file in &files {
                all.extend(openai_chat::import_file(file));
            }
        }
    }
    drop_duplicate_ids(&mut all);
    Ok(all)
}

/// `meta.import`: where a session came from. Kept under its own key so it never
/// collides with the fields a log records about itself.
pub(crate) fn import_meta(
    importer: &str,
    file: &Path,
    line: Option<usize>,
    record: Option<usize>,
) -> serde_json::Value {
    let mut m = serde_json::Map::new();
    m.insert("importer".into(), importer.into());
    m.insert("file".into(), file.display().to_string().into());
    if let Some(l) = line {
        m.insert("line".into(), l.into());
    }
    if let Some(r) = record {
        m.insert("record".into(), r.into());
    }
    serde_json::Value::Object(m)
}

/// A corpus needs unique ids; when the same input is named twice the later copy goes.
fn drop_duplicate_ids(import: &mut Import) {
    let mut seen = BTreeSet::new();
    let mut problems = Vec::new();
    import.sessions.retain(|s| {
        if seen.insert(s.id.clone()) {
            true
        } else {
            let file = s
                .meta
                .get("import")
                .and_then(|m| m.get("file"))
                .and_then(|f| f.as_str())
                .unwrap_or("<input>");
            problems.push(
                Problem::skipped(
                    Path::new(file),
                    "a session with this id was already imported (is the same input named twice?)",
                )
                .in_session(&s.id),
            );
            false
        }
    });
    import.problems.extend(problems);
}
