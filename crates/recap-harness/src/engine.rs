//! The replay engine: every session × strategy × call, rendered, checked and counted.
//!
//! The parts: `config` (what to run), `source` (corpus files streamed entry by entry),
//! `session_run` (one session under every strategy: render and check, token counting,
//! retention, prompt dumps), `driver` (sessions in parallel, folded in input order
//! through a bounded reorder buffer) and `aggregate` (the fold into run rows). Every
//! number in the report is the same whatever the job count; only the `render_ns*`
//! timing fields vary between runs.

use crate::report::Report;
use crate::source::{corpus_entries, session_entries};
use recap_core::Session;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicU64;

pub use crate::calls::recorded_input_tokens;
pub use crate::config::{
    Checker, DeterminismCheck, HarnessError, RunConfig, RunShape, StrategyEntry, StrategyShape,
};
pub use crate::driver::{DumpHook, Hooks, MAX_IN_FLIGHT_PER_JOB, SessionHook, run_entries};
pub use crate::outcome::{
    CallError, CallRecord, Processed, SessionOutcome, StratOutcome, TokOutcome,
};
pub use crate::prompt_dump::{DumpedMessage, PromptDump};
pub use crate::session_run::process_session;
pub use crate::source::{all_corpus_entries, corpus_name};

/// Runs the configuration over corpus files (streamed, a few sessions per worker in
/// flight). A file that cannot be read (missing, unreadable, a directory) does not stop
/// the run: it becomes one rejection at line 0, field `file` (as `recap validate`
/// reports it), and every other file runs.
pub fn run_corpora(
    cfg: &RunConfig,
    corpora: &[PathBuf],
    hooks: Hooks<'_>,
) -> Result<Report, HarnessError> {
    cfg.validate()?;
    let bytes = Arc::new(AtomicU64::new(0));
    let entries = corpus_entries(corpora, &bytes, None);
    let names = corpora.iter().map(|p| corpus_name(p)).collect();
    run_entries(cfg, names, entries, hooks, Some(&bytes))
}

/// Runs the configuration over in-memory sessions of one corpus (tests, benches).
pub fn run_sessions(
    cfg: &RunConfig,
    corpus: &str,
    sessions: Vec<Session>,
) -> Result<Report, HarnessError> {
    cfg.validate()?;
    run_entries(
        cfg,
        vec![corpus.to_string()],
        session_entries(sessions),
        Hooks::default(),
        None,
    )
}
