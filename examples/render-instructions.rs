//! The render path under an instruction counter (a benchmark that does not depend on
//! the machine's load, `docs/performance.md`):
//! renders every call `recap run` replays of every bench-data session the strategy
//! renders (the sessions of its forms; calls 0 … n−1 of a session of n turns) once with
//! each strategy named, inside [`measured_render`], the one function
//! `scripts/bench-instructions.sh` tells valgrind's callgrind to count
//! (`--toggle-collect`), so loading and parsing the corpus stay out of the count.
//! Strategies with token budgets count with `recap run`'s default tokenizer.
//!
//! ```text
//! cargo run --profile bench --example render-instructions -- full-history rolling-window:window=2
//! ```
//!
//! Prints one line per strategy: spec, calls, prompt bytes (`--list`: the built-in
//! names). Without valgrind it is a plain (single-iteration, unmeasured) render run.

/// Allocates as the `recap` binary does (src/main.rs), so the counts are the command's.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use anyhow::{Context, Result, bail};
use recap_core::{CorpusReader, Session, Strategy};
use recap_harness::calls::calls;
use recap_harness::{Backend, Encoding, Tokenizer};
use std::path::Path;
use std::sync::Arc;

/// Every call of every session the strategy renders, as the harness replays them (one
/// replay per session, calls in order), each prompt asked for whole. Not inlined:
/// callgrind counts exactly this function and what it calls.
#[inline(never)]
fn measured_render(strategy: &dyn Strategy, sessions: &[Session]) -> Result<(u64, u64)> {
    let (mut n_calls, mut bytes) = (0u64, 0u64);
    for session in sessions.iter().filter(|s| strategy.applies_to(s)) {
        let mut replay = strategy.open();
        for k in calls(session) {
            let messages = replay
                .call(session, k, 0)
                .map(|d| d.tail)
                .with_context(|| {
                    format!("{} on session {} call {k}", strategy.spec(), session.id)
                })?;
            n_calls += 1;
            bytes += messages
                .iter()
                .map(|m| {
                    m.content.len()
                        + m.tool_calls
                            .iter()
                            .map(|c| c.name.len() + c.arguments.len())
                            .sum::<usize>()
                })
                .sum::<usize>() as u64;
        }
    }
    Ok((n_calls, bytes))
}

fn bench_data() -> Result<Vec<Session>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench-data");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    let mut sessions = Vec::new();
    for file in &files {
        for entry in
            CorpusReader::open(file).with_context(|| format!("opening {}", file.display()))?
        {
            sessions.push(
                entry
                    .session
                    .with_context(|| format!("{} line {}", file.display(), entry.line))?,
            );
        }
    }
    if sessions.is_empty() {
        bail!("no sessions in {}/*.jsonl", dir.display());
    }
    Ok(sessions)
}

fn main() -> Result<()> {
    let specs: Vec<String> = std::env::args().skip(1).collect();
    if specs.is_empty() {
        bail!("usage: render-instructions SPEC...   (e.g. full-history), or --list");
    }
    if specs == ["--list"] {
        for (info, _) in recap_builtins::builtins() {
            println!("{}", info.name);
        }
        return Ok(());
    }
    let mut registry = recap_builtins::registry();
    registry.set_counter(Arc::new(Tokenizer::get(
        Encoding::O200kBase,
        Backend::default(),
    )));
    let strategies = specs
        .iter()
        .map(|s| registry.build(s).with_context(|| format!("strategy {s:?}")))
        .collect::<Result<Vec<_>>>()?;
    let sessions = bench_data()?;
    for (spec, strategy) in specs.iter().zip(&strategies) {
        let (n_calls, bytes) = measured_render(strategy.as_ref(), &sessions)?;
        println!("{spec} {n_calls} {bytes}");
    }
    Ok(())
}
