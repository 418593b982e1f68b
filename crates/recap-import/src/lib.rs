//! Importers that turn recorded agent logs into recap sessions (SPEC section 4).
//!
//! Each importer reads its files in a fixed order and returns the sessions it could
//! build plus a [`Problem`] for everything it could not map — a skipped record, a
//! truncated file, a tool result without its call. Nothing is dropped silently, and the
//! same input always gives byte-identical output. The exact mapping of every importer is
//! documented in this crate's README.

pub mod adp;
pub mod anthropic_messages;
pub mod atif;
mod auto;
pub mod claude_code;
mod conversation;
pub mod convert;
pub mod inspect;
pub mod lisp;
mod messages;
pub mod ojson;
pub mod openai_chat;
pub mod openhands;
pub mod openhands_sdk;
pub mod problem;
pub mod ptc_runner;
pub mod pydefs;
pub mod pylit;
pub mod smolagents;
mod sniff;
pub mod source;
pub mod swe_agent;
pub mod tau2;
mod text;
mod unmapped;
pub mod walk;

pub use problem::{At, Problem, Severity};

use recap_core::{Form, Session};
use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The log formats recap can import, and `auto`, which tells them apart per file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    PtcRunner,
    Smolagents,
    OpenaiChat,
    AnthropicMessages,
    ClaudeCode,
    SweAgent,
    Openhands,
    Tau2,
    Adp,
    Atif,
    OpenhandsSdk,
    Inspect,
    Auto,
}

impl Kind {
    pub const ALL: [Kind; 13] = [
        Kind::PtcRunner,
        Kind::Smolagents,
        Kind::OpenaiChat,
        Kind::AnthropicMessages,
        Kind::ClaudeCode,
        Kind::SweAgent,
        Kind::Openhands,
        Kind::Tau2,
        Kind::Adp,
        Kind::Atif,
        Kind::OpenhandsSdk,
        Kind::Inspect,
        Kind::Auto,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::PtcRunner => "ptc-runner",
            Kind::Smolagents => "smolagents",
            Kind::OpenaiChat => "openai-chat",
            Kind::AnthropicMessages => "anthropic-messages",
            Kind::ClaudeCode => "claude-code",
            Kind::SweAgent => "swe-agent",
            Kind::Openhands => "openhands",
            Kind::Tau2 => "tau2",
            Kind::Adp => "adp",
            Kind::Atif => "atif",
            Kind::OpenhandsSdk => "openhands-sdk",
            Kind::Inspect => "inspect",
            Kind::Auto => "auto",
        }
    }

    /// The data extensions (looking through `.gz`) a directory walk picks up.
    fn extensions(self) -> &'static [&'static str] {
        match self {
            Kind::PtcRunner | Kind::Smolagents => &["jsonl"],
            Kind::OpenaiChat | Kind::AnthropicMessages => &["json", "jsonl", "ndjson"],
            Kind::ClaudeCode | Kind::Openhands | Kind::Adp | Kind::OpenhandsSdk => {
                &["json", "jsonl"]
            }
            Kind::SweAgent => &["traj"],
            Kind::Tau2 | Kind::Atif => &["json"],
            Kind::Inspect => &["eval", "json"],
            Kind::Auto => &["json", "jsonl", "ndjson", "traj", "eval"],
        }
    }

    /// Which files a directory walk picks up.
    fn accepts(self, path: &Path) -> bool {
        match self {
            Kind::PtcRunner => ptc_runner::is_inspection_log(path),
            _ => source::data_extension(path)
                .is_some_and(|e| self.extensions().contains(&e.as_str())),
        }
    }

    /// Whether the importer reads all its files together (a session may span files).
    fn reads_files_together(self) -> bool {
        matches!(
            self,
            Kind::PtcRunner | Kind::ClaudeCode | Kind::Atif | Kind::OpenhandsSdk
        )
    }

    /// How to name the files a walk looks for, in messages.
    fn wanted(self) -> String {
        match self {
            Kind::PtcRunner => "run.inspection.jsonl files".into(),
            _ => {
                let exts: Vec<String> = self.extensions().iter().map(|e| format!(".{e}")).collect();
                format!("{} files (or .gz of them)", exts.join("/"))
            }
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

/// What to do with Claude Code's sub-agent traffic (`isSidechain`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sidechains {
    /// Each sub-agent conversation becomes a session of its own (the default).
    #[default]
    Sessions,
    /// Sub-agent entries are left out (one lossy problem per file counts them).
    Exclude,
}

impl FromStr for Sidechains {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "sessions" => Ok(Sidechains::Sessions),
            "exclude" => Ok(Sidechains::Exclude),
            _ => Err(format!("expected `sessions` or `exclude`, got {s:?}")),
        }
    }
}

/// Importer options.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub sidechains: Sidechains,
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
    /// Sessions whose parts were found in several files and joined (claude-code).
    pub joins: Vec<Join>,
    /// `auto`: the format each file was read as (`None`: not recognised).
    pub formats: Vec<(PathBuf, Option<Kind>)>,
}

/// The files whose entries were joined into one session, in the order the session
/// runs through them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Join {
    /// The main-thread session ids the files share.
    pub session_ids: Vec<String>,
    pub files: Vec<PathBuf>,
    /// Entries dropped because an earlier file held the same uuid.
    pub duplicates: usize,
}

impl Import {
    pub fn turns(&self) -> usize {
        self.sessions.iter().map(Session::turn_count).sum()
    }

    pub fn failed_turns(&self) -> usize {
        self.sessions
            .iter()
            .map(|s| match s.form {
                Form::Ptc => s.turns.iter().filter(|t| !t.success).count(),
                Form::Chat => s.chat_turns.iter().filter(|t| !t.success).count(),
            })
            .sum()
    }

    pub fn tool_calls(&self) -> usize {
        self.sessions
            .iter()
            .map(|s| match s.form {
                Form::Ptc => s.turns.iter().map(|t| t.tool_calls.len()).sum::<usize>(),
                Form::Chat => s
                    .chat_turns
                    .iter()
                    .map(|t| t.assistant.tool_calls.len())
                    .sum(),
            })
            .sum()
    }

    /// Problems counted by severity and kind, in that order.
    pub fn problem_counts(&self) -> BTreeMap<(Severity, &'static str), usize> {
        let mut counts = BTreeMap::new();
        for p in &self.problems {
            *counts.entry((p.severity, p.kind)).or_default() += 1;
        }
        counts
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
        self.joins.extend(other.joins);
        self.formats.extend(other.formats);
    }
}

/// Imports every file below `paths` (see [`walk::collect`]) with the importer of `kind`.
pub fn import(kind: Kind, paths: &[PathBuf]) -> Result<Import, ImportError> {
    import_with(kind, paths, &Options::default())
}

/// [`import`] with options.
pub fn import_with(kind: Kind, paths: &[PathBuf], opts: &Options) -> Result<Import, ImportError> {
    let files = walk::collect(paths, |p| kind.accepts(p), &kind.wanted())?;
    let mut all = Import {
        files: files.len(),
        ..Import::default()
    };
    match kind {
        Kind::PtcRunner => {
            let fitting = keep_fitting(kind, &files, &mut all);
            all.extend(ptc_runner::import_files(&fitting));
        }
        Kind::Smolagents => {
            for file in keep_fitting(kind, &files, &mut all) {
                all.extend(smolagents::import_file(&file));
            }
        }
        Kind::Auto => auto::auto(&files, opts, &mut all),
        Kind::ClaudeCode => all.extend(claude_code::import_files(&files, opts)),
        Kind::Atif => all.extend(atif::import_files(&files)),
        Kind::OpenhandsSdk => all.extend(openhands_sdk::import_files(&files)),
        Kind::Inspect => {
            for file in &files {
                all.extend(inspect::import_file(file));
            }
        }
        chat => {
            for file in &files {
                all.extend(import_file(chat, file, opts));
            }
        }
    }
    report_duplicate_ids(&mut all);
    Ok(all)
}

/// Imports one file of a chat format.
fn import_file(kind: Kind, file: &Path, opts: &Options) -> Import {
    let mut out = Import::default();
    if let Some(text) = source::read_text(file, &mut out.problems) {
        import_text_into(kind, file, &text, opts, &mut out);
    }
    out
}

/// Imports one file's text (already read and decompressed) as `name` with the chat
/// importer of `kind` (`auto` sniffs it). Benchmarks and tests use it without files.
pub fn import_text(kind: Kind, name: &Path, text: &str, opts: &Options) -> Import {
    let mut out = Import::default();
    import_text_into(kind, name, text, opts, &mut out);
    out
}

pub(crate) fn import_text_into(
    kind: Kind,
    name: &Path,
    text: &str,
    opts: &Options,
    out: &mut Import,
) {
    let start = out.problems.len();
    let lines = matches!(
        source::data_extension(name).as_deref(),
        Some("jsonl" | "ndjson")
    );
    let doc = source::parse(name, text, lines, &mut out.problems);
    let kind = match kind {
        Kind::Auto => match sniff::file_kind(name, Some(&doc)) {
            Some(k) => k,
            None => {
                if !doc.is_empty() {
                    out.problems.push(
                        Problem::skipped(
                            name,
                            "recap cannot tell which log format this file is; name the importer (`recap import --help` lists them)",
                        )
                        .kind("unknown-format"),
                    );
                }
                return;
            }
        },
        k => k,
    };
    if let Some((other, n, total)) = sniff::misfit(kind, name, &doc) {
        // The other importer reports this file's own problems; here it is one.
        out.problems.truncate(start);
        out.problems
            .push(wrong_importer(name, kind, other, n, total));
        return;
    }
    match kind {
        Kind::OpenaiChat => openai_chat::import_doc(name, &doc, opts, out),
        Kind::AnthropicMessages => anthropic_messages::import_doc(name, &doc, opts, out),
        Kind::ClaudeCode => claude_code::import_doc(name, &doc, opts, out),
        Kind::SweAgent => swe_agent::import_doc(name, &doc, opts, out),
        Kind::Openhands => openhands::import_doc(name, &doc, opts, out),
        Kind::Tau2 => tau2::import_doc(name, &doc, opts, out),
        Kind::Adp => adp::import_doc(name, &doc, opts, out),
        Kind::Atif | Kind::OpenhandsSdk | Kind::Inspect => {
            let mut one = match kind {
                Kind::Atif => atif::import_text(name, text),
                Kind::Inspect => inspect::import_text(name, text),
                _ => openhands_sdk::import_text(name, text),
            };
            out.problems.append(&mut one.problems);
            out.sessions.append(&mut one.sessions);
        }
        Kind::PtcRunner | Kind::Smolagents | Kind::Auto => out.problems.push(
            Problem::skipped(
                name,
                format!("the {kind} importer reads files, not text; import the file itself"),
            )
            .kind("unknown-format"),
        ),
    }
    problem::sort_from(&mut out.problems, start);
}

pub(crate) fn wrong_importer(
    file: &Path,
    chosen: Kind,
    fits: Kind,
    n: usize,
    total: usize,
) -> Problem {
    Problem::skipped(
        file,
        format!(
            "not {chosen} input: {n} of {total} records read as {fits} instead; import it with `recap import {fits}` (or `recap import auto`)"
        ),
    )
    .kind("wrong-importer")
}

/// The files that do not look like another format; the others get one problem each.
fn keep_fitting(kind: Kind, files: &[PathBuf], out: &mut Import) -> Vec<PathBuf> {
    let mut keep = Vec::new();
    for file in files {
        let mut ignored = Vec::new();
        let head = source::read_text(file, &mut ignored).map(|t| head_lines(&t));
        let doc = head
            .as_deref()
            .map(|h| source::parse(file, h, true, &mut ignored));
        match doc.as_ref().and_then(|d| sniff::misfit(kind, file, d)) {
            Some((other, n, total)) => out
                .problems
                .push(wrong_importer(file, kind, other, n, total)),
            None => keep.push(file.clone()),
        }
    }
    keep
}

/// The first lines of a JSON Lines text: enough to tell its format.
fn head_lines(text: &str) -> String {
    text.split_inclusive('\n').take(32).collect()
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

/// A PTC-Lisp session of `turns` whose budget is its number of turns: the logs of
/// the PTC importers do not record the agent's limit (their `meta.import.max_turns`
/// says so).
pub(crate) fn ptc_session(
    id: String,
    mission: String,
    system_prompt: String,
    turns: Vec<recap_core::Turn>,
    meta: serde_json::Map<String, serde_json::Value>,
) -> Session {
    Session {
        id,
        mission,
        system_prompt,
        max_turns: turns.len() as u32,
        budget_recorded: true,
        form: Form::Ptc,
        tools: BTreeMap::new(),
        data: BTreeMap::new(),
        meta,
        turns,
        chat_turns: Vec::new(),
    }
}

/// A corpus needs unique ids. A session id met again (the same run in two files, or
/// one file under two names) keeps its first session; each later copy is a skipped
/// problem naming both places.
fn report_duplicate_ids(import: &mut Import) {
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    let mut problems = Vec::new();
    let file_of = |s: &Session| {
        s.meta
            .get("import")
            .and_then(|m| m.get("file"))
            .and_then(|f| f.as_str())
            .unwrap_or("<input>")
            .to_string()
    };
    import.sessions.retain(|s| {
        let file = file_of(s);
        match seen.get(&s.id) {
            None => {
                seen.insert(s.id.clone(), file);
                true
            }
            Some(first) => {
                let line = s
                    .meta
                    .get("import")
                    .and_then(|m| m.get("line"))
                    .and_then(|l| l.as_u64())
                    .map_or(0, |l| l as usize);
                problems.push(
                    Problem::skipped(
                        Path::new(&file),
                        format!(
                            "session id {:?} was already imported from {first}; this copy is not imported (the same run in two files?)",
                            s.id
                        ),
                    )
                    .at(At::line(line))
                    .in_session(&s.id)
                    .kind("duplicate-id"),
                );
                false
            }
        }
    });
    import.problems.extend(problems);
}
