//! Rough render speed of each built-in over a corpus (every call of every session),
//! measured side by side with the fastest tokenizer on the same output (the "render
//! < 5% of tokenize" target of `docs/performance.md`):
//!
//! ```text
//! cargo run --release -p recap-builtins --example render-speed -- [CORPUS] [SPEC...]
//! ```
//!
//! CORPUS is a JSON Lines file or a directory (its `*.jsonl`, in name order); the
//! default, `bench-data`, is what the criterion benches read.
//!
//! For each strategy, one pass over every call is timed three ways, interleaved and
//! repeated, keeping each one's fastest pass (the least disturbed on a busy machine):
//! `render` (each call rendered alone, `render_call`: a fresh replay per call),
//! `session` (one replay per session, calls in order, each prompt whole; the replay's
//! setup is inside the timing) and `tokenize` (the o200k_base `fast` backend counting
//! every message of every prompt, as the harness counts). The ratios are render time /
//! tokenize time. `RENDER_SPEED_PASSES=n` instead runs n passes of `session` only, with
//! no tokenizer (for instruction counts).
//!
//! The criterion benches (`cargo bench --bench render`) are the measurement of record.

use anyhow::Context;
use recap_core::invariants::calls;
use recap_core::{CorpusReader, Message, Session, Strategy, render_call};
use recap_harness::{Backend, Encoding, Tokenizer};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Repetitions of the interleaved (render, session, tokenize) measurement.
const ROUNDS: usize = 7;
/// Each timed sample repeats its pass until at least this long, for clock resolution.
const MIN_SAMPLE: Duration = Duration::from_millis(20);

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "bench-data".into());
    let sessions = read_sessions(Path::new(&path))?;
    let registry = recap_builtins::registry();
    let only: Vec<String> = std::env::args().skip(2).collect();
    let specs: Vec<&str> = if only.is_empty() {
        recap_builtins::SPEC_BUILTINS.to_vec()
    } else {
        only.iter().map(String::as_str).collect()
    };
    let passes: Option<usize> = std::env::var("RENDER_SPEED_PASSES")
        .ok()
        .and_then(|p| p.parse().ok());
    if passes.is_none() {
        println!(
            "{:40} {:>6} {:>8} {:>10} {:>10} {:>11} {:>8} {:>8}",
            "strategy",
            "calls",
            "MB out",
            "render µs",
            "session µs",
            "tokenize µs",
            "render%",
            "session%"
        );
    }
    for spec in specs {
        let strategy = registry.build(spec)?;
        let strategy = strategy.as_ref();
        if let Some(n) = passes {
            let start = Instant::now();
            let mut bytes = 0;
            for _ in 0..n {
                bytes += render_sessions(strategy, &sessions)?;
            }
            println!(
                "{spec:40} {n} passes  {:8.1} MB out  {:8.1} ms",
                bytes as f64 / 1e6,
                start.elapsed().as_secs_f64() * 1e3
            );
            continue;
        }
        let fastest = Tokenizer::get(Encoding::O200kBase, Backend::Fast);
        let prompts = every_prompt(strategy, &sessions)?;
        let calls_n = prompts.len();
        let bytes: usize = prompts.iter().flatten().map(|m| m.content.len()).sum();
        let (mut render, mut session, mut tokenize) = (f64::MAX, f64::MAX, f64::MAX);
        for _ in 0..ROUNDS {
            render = render.min(per_pass(|| render_calls(strategy, &sessions).map(drop))?);
            session = session.min(per_pass(|| render_sessions(strategy, &sessions).map(drop))?);
            tokenize = tokenize.min(per_pass(|| {
                let tokens: usize = prompts
                    .iter()
                    .flatten()
                    .map(|m| fastest.count_tokens(&m.content))
                    .sum();
                std::hint::black_box(tokens);
                Ok(())
            })?);
        }
        let per_call = |secs: f64| secs * 1e6 / calls_n as f64;
        println!(
            "{spec:40} {calls_n:6} {:8.2} {:10.2} {:10.2} {:11.1} {:7.2}% {:7.2}%",
            bytes as f64 / 1e6,
            per_call(render),
            per_call(session),
            per_call(tokenize),
            100.0 * render / tokenize,
            100.0 * session / tokenize,
        );
    }
    Ok(())
}

/// The valid sessions of a corpus file, or of every `*.jsonl` of a directory.
fn read_sessions(path: &Path) -> anyhow::Result<Vec<Session>> {
    let files = if path.is_dir() {
        let mut files: Vec<PathBuf> = std::fs::read_dir(path)
            .with_context(|| format!("reading {}", path.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
            .collect();
        files.sort();
        files
    } else {
        vec![path.to_path_buf()]
    };
    let mut sessions = Vec::new();
    for file in files {
        let reader =
            CorpusReader::open(&file).with_context(|| format!("opening {}", file.display()))?;
        sessions.extend(reader.filter_map(|e| e.session.ok()));
    }
    Ok(sessions)
}

/// Seconds per call of `pass`, averaged over enough calls to last [`MIN_SAMPLE`].
fn per_pass(mut pass: impl FnMut() -> anyhow::Result<()>) -> anyhow::Result<f64> {
    let start = Instant::now();
    let mut n = 0u32;
    while n == 0 || start.elapsed() < MIN_SAMPLE {
        pass()?;
        n += 1;
    }
    Ok(start.elapsed().as_secs_f64() / f64::from(n))
}

fn prompt_bytes(messages: &[Message]) -> usize {
    messages.iter().map(|m| m.content.len()).sum()
}

/// Every call rendered alone; returns the prompt bytes.
fn render_calls(strategy: &dyn Strategy, sessions: &[Session]) -> anyhow::Result<usize> {
    let mut bytes = 0;
    for s in sessions {
        for k in calls(s) {
            bytes += prompt_bytes(&render_call(strategy, s, k)?);
        }
    }
    Ok(std::hint::black_box(bytes))
}

/// Every call through one replay per session, calls in order, each prompt whole.
fn render_sessions(strategy: &dyn Strategy, sessions: &[Session]) -> anyhow::Result<usize> {
    let mut bytes = 0;
    for s in sessions {
        let mut replay = strategy.open();
        for k in calls(s) {
            bytes += prompt_bytes(&replay.call(s, k, 0)?.tail);
        }
    }
    Ok(std::hint::black_box(bytes))
}

fn every_prompt(
    strategy: &dyn Strategy,
    sessions: &[Session],
) -> anyhow::Result<Vec<Vec<Message>>> {
    let mut prompts = Vec::new();
    for s in sessions {
        for k in calls(s) {
            prompts.push(render_call(strategy, s, k)?);
        }
    }
    Ok(prompts)
}
