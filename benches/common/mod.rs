//! Inputs shared by the criterion benchmarks: the bench-data corpora, the shared real
//! corpora (imported in memory), sessions of a chosen size from the public generator,
//! and whether criterion is measuring or only smoke-testing.
//!
//! Each bench binary uses a different subset of these helpers.
#![allow(dead_code)]

pub mod cpu;
pub mod naive;
pub mod pairs;
pub mod plugin_twins;

/// The benches allocate as the `recap` binary does (src/main.rs says why mimalloc), so
/// that they time the work the real command does, and the naive loop and the floor in
/// the same process allocate the same way.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use recap_core::{CorpusReader, Form, Message, Session, Strategy, render_call};
use recap_harness::calls::calls;
use recap_harness::{
    Backend, Encoding, Hooks, Report, RunConfig, StrategyEntry, Tokenizer, run_corpora,
};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// recap's workspace root (the root package is the `recap` binary).
pub fn workspace_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Whether criterion will measure. `cargo bench` passes `--bench`; `cargo test
/// --benches` does not, and criterion then runs every benchmark once as a smoke test
/// (as with `cargo bench -- --test`). Benches keep their setup small in that mode
/// (smaller generated inputs, a debug build of the plugin libraries).
pub fn measuring() -> bool {
    let args: Vec<String> = std::env::args().collect();
    args.iter().any(|a| a == "--bench") && !args.iter().any(|a| a == "--test" || a == "--list")
}

/// `bench-data/*.jsonl`, sorted.
pub fn bench_data_files() -> Vec<PathBuf> {
    let dir = workspace_root().join("bench-data");
    let entries = std::fs::read_dir(&dir).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (bench-data/ is part of the repository)",
            dir.display()
        )
    });
    let mut files: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no *.jsonl in {}", dir.display());
    files
}

/// Every session of a corpus file; bench inputs must be valid.
pub fn read_corpus(path: &Path) -> Vec<Session> {
    let reader =
        CorpusReader::open(path).unwrap_or_else(|e| panic!("{}: cannot open: {e}", path.display()));
    reader
        .map(|entry| {
            entry.session.unwrap_or_else(|e| {
                panic!(
                    "{}: bench input must be valid, line {}: {e}",
                    path.display(),
                    entry.line
                )
            })
        })
        .collect()
}

/// Every session of every bench-data corpus, in file order; for the smoke run
/// (`cargo test --benches`, one unmeasured iteration) the first few of each file.
pub fn bench_data_sessions() -> Vec<Session> {
    let per_file = if measuring() {
        usize::MAX
    } else {
        SMOKE_SESSIONS
    };
    bench_data_files()
        .iter()
        .flat_map(|p| read_corpus(p).into_iter().take(per_file))
        .collect()
}

/// Sessions per corpus in the smoke run: enough to exercise every code path once.
pub const SMOKE_SESSIONS: usize = 4;

/// A real corpus of `../shared/corpora`, imported in memory with recap's importer, or
/// `None` (with a visible message) when the directory is missing. Under `CI=true` a
/// missing corpus is an error, as for the tests.
pub fn shared_corpus(kind: recap_import::Kind, dir: &str) -> Option<Vec<Session>> {
    let path = recap_gen::shared::path(&format!("corpora/{dir}"), "real-corpus benchmarks")?;
    let import = recap_import::import(kind, std::slice::from_ref(&path))
        .unwrap_or_else(|e| panic!("importing {}: {e}", path.display()));
    assert!(
        !import.sessions.is_empty(),
        "{}: the importer found no sessions",
        path.display()
    );
    Some(import.sessions)
}

/// Writes sessions as a JSON Lines corpus file (for benches that read files end to end).
pub fn write_corpus(path: &Path, sessions: &[Session]) {
    let file = std::fs::File::create(path)
        .unwrap_or_else(|e| panic!("cannot create {}: {e}", path.display()));
    let mut out = std::io::BufWriter::new(file);
    recap_gen::write_jsonl(&mut out, sessions)
        .and_then(|()| std::io::Write::flush(&mut out))
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
}

/// One generated session of `form` with exactly `turns` recorded turns, from the public
/// generators (the same for the same arguments).
pub fn generated_session_of(form: Form, seed: u64, turns: u32) -> Session {
    let mut sessions = match form {
        Form::Ptc => recap_gen::generate_corpus(seed, 1, turns..=turns),
        Form::Chat => recap_gen::generate_chat_corpus(seed, 1, turns..=turns),
    };
    let session = sessions
        .pop()
        .expect("the generators return the sessions asked for");
    assert_eq!(session.turn_count(), turns as usize);
    assert_eq!(session.form, form);
    session
}

/// The last call the harness replays of a session (the longest prompt).
pub fn last_call(session: &Session) -> usize {
    calls(session).last().unwrap_or(0)
}

/// Bytes of a prompt: what a provider receives, the role names and call ids aside
/// (contents, and the names and arguments of tool calls, which are counted too).
pub fn prompt_bytes(messages: &[Message]) -> u64 {
    messages
        .iter()
        .map(|m| {
            m.content.len() as u64
                + m.tool_calls
                    .iter()
                    .map(|c| (c.name.len() + c.arguments.len()) as u64)
                    .sum::<u64>()
        })
        .sum()
}

/// The tokenizer `recap run` counts with by default (o200k_base, default backend).
pub fn run_tokenizer() -> Tokenizer {
    Tokenizer::get(Encoding::O200kBase, Backend::default())
}

/// The strategies `recap run` runs when none is named, in its order (the four of SPEC
/// section 6, then the other built-ins in registry order), built as the command builds
/// them: strategies with token budgets count with the run's tokenizer.
pub fn run_strategies() -> Vec<Arc<dyn Strategy>> {
    let mut registry = recap_builtins::registry();
    registry.set_counter(Arc::new(run_tokenizer()));
    let mut names: Vec<String> = recap_builtins::SPEC_BUILTINS
        .iter()
        .map(|s| s.to_string())
        .collect();
    for info in registry.infos() {
        if info.origin == "built-in" && !names.contains(&info.name) {
            names.push(info.name.clone());
        }
    }
    names
        .iter()
        .map(|name| {
            registry
                .build(name)
                .unwrap_or_else(|e| panic!("built-in {name}: {e}"))
        })
        .collect()
}

/// Whether `strategy` renders `session` (the harness replays only those; the others are
/// not applicable).
pub fn applies(strategy: &dyn Strategy, session: &Session) -> bool {
    strategy.applies_to(session)
}

/// The sessions `strategy` renders.
pub fn applicable(strategy: &dyn Strategy, sessions: &[Session]) -> Vec<Session> {
    sessions
        .iter()
        .filter(|s| applies(strategy, s))
        .cloned()
        .collect()
}

/// How many calls the harness replays over `sessions`.
pub fn call_count(sessions: &[Session]) -> usize {
    sessions.iter().map(|s| calls(s).len()).sum()
}

/// Renders every call the harness replays of every session, each in isolation
/// ([`render_call`]: a fresh replay per call, no per-session work kept); returns the
/// prompt bytes produced.
pub fn render_calls(strategy: &dyn Strategy, sessions: &[Session]) -> u64 {
    let mut bytes = 0;
    for session in sessions {
        for k in calls(session) {
            let messages = render_call(strategy, session, k)
                .unwrap_or_else(|e| panic!("{} on {}: {e}", strategy.spec(), session.id));
            bytes += prompt_bytes(&messages);
        }
    }
    bytes
}

/// Renders every call the harness replays of every session the way the harness does
/// (one replay per session, calls in order, each answered as what it keeps of the
/// prompt held), so that strategies and plugins that work incrementally do; returns
/// the prompt bytes.
pub fn render_sessions(strategy: &dyn Strategy, sessions: &[Session]) -> u64 {
    let mut bytes = 0;
    for session in sessions {
        each_session_prompt(strategy, session, |messages| {
            bytes += prompt_bytes(messages)
        });
    }
    bytes
}

/// Hands `f` each prompt of `session` as the harness renders it: every call it
/// replays, in order, through one replay, each answer applied to the prompt before.
pub fn each_session_prompt(
    strategy: &dyn Strategy,
    session: &Session,
    mut f: impl FnMut(&[Message]),
) {
    let mut replay = strategy.open();
    let mut prompt: Vec<Message> = Vec::new();
    for k in calls(session) {
        let delta = replay
            .call(session, k, prompt.len())
            .and_then(|d| d.within(prompt.len()))
            .unwrap_or_else(|e| panic!("{} on {}: {e}", strategy.spec(), session.id));
        delta.apply_in_place(&mut prompt);
        f(&prompt);
    }
}

/// Every prompt (the messages of every call) of `strategy` over `sessions`.
pub fn every_prompt(strategy: &dyn Strategy, sessions: &[Session]) -> Vec<Vec<Message>> {
    let mut prompts = Vec::new();
    for session in sessions {
        each_session_prompt(strategy, session, |messages| {
            prompts.push(messages.to_vec())
        });
    }
    prompts
}

/// `recap run`'s engine configured as the command runs it by default (o200k_base, the
/// default backend, every check) for `strategies`, with one job; the full-history
/// baseline is added when not among them.
pub fn engine_config(strategies: &[Arc<dyn Strategy>]) -> RunConfig {
    let baseline = recap_builtins::registry()
        .build("full-history")
        .expect("full-history builds");
    let entries = strategies
        .iter()
        .map(|s| StrategyEntry::new(Arc::clone(s)))
        .collect();
    let mut cfg =
        RunConfig::new(entries, baseline, vec![run_tokenizer()]).expect("valid run config");
    cfg.jobs = 1;
    cfg
}

/// The engine over one corpus file, from the file to the finished report (serialising
/// the report is not part of what the benches compare).
pub fn engine(cfg: &RunConfig, corpus: &Path) -> Report {
    run_corpora(cfg, &[corpus.to_path_buf()], Hooks::default())
        .unwrap_or_else(|e| panic!("recap run engine on {}: {e}", corpus.display()))
}
