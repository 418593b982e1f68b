//! `recap run`'s engine end to end against a naive loop doing the same job, in one group
//! so that criterion prints them side by side:
//! `harness/<corpus>/{engine,naive,naive-reference-tokenizer}`.
//!
//! - `engine`: `recap_harness::run_corpora` over the corpus file, configured as `recap
//!   run` runs by default (every built-in in the command's order, `o200k_base` with the
//!   default backend, token budgets counted with it), one job: reading and parsing the
//!   corpus, rendering each call (twice, for the determinism check), checking the
//!   declared invariants, retention, counting prompt and cached tokens, and aggregating
//!   the report.
//! - `naive`: the same token totals the straightforward way, with the same tokenizer:
//!   read and parse the same file; for every session, every strategy that renders its
//!   form and every call the harness replays, render once (through the same incremental
//!   path, one replay per strategy and session) and tokenize every text of the
//!   prompt whole, summing the prompt tokens of SPEC sections 9 and 11.2. The setup
//!   checks that it counts exactly the engine's total.
//! - `naive-reference-tokenizer`: the naive loop counting with tiktoken-rs (the
//!   reference backend). An extra, not a target: its ratio to `engine` is mostly the gap
//!   between the two tokenizers.
//! - `floor`: the least any implementation of `recap run` pays: parse the same file and
//!   tokenize, once each, the distinct lines of all its prompts (contents, tool-call
//!   names and arguments, split as the harness splits them; distinct over the whole
//!   corpus), nothing else. Which lines those are is found in the setup, by rendering.
//!
//! The engine does strictly more than the naive loop (cached tokens, retention,
//! invariants, a second render, the report). Corpora: bench-data (named by session form:
//! `ptc-generated`, `chat-generated`, …), and the shared real corpora
//! (`../shared/corpora`, imported in memory with recap's importers and written to a
//! temporary file). Throughput is the corpus file's size, so criterion prints MB/s and
//! the two forms compare per MB.
//!
//! On a shared machine the engine (a worker thread handing results to the main thread)
//! suffers more from other load than the single-threaded naive loop; with
//! `RECAP_BENCH_CLOCK=cpu` both are measured in process CPU time instead of wall time
//! (save such runs under their own baseline name).

mod common;

use common::naive::{distinct_prompt_lines, floor, naive, report_total};
use common::{
    bench_data_files, engine, engine_config, measuring, read_corpus, run_strategies, run_tokenizer,
    shared_corpus, write_corpus,
};
use criterion::measurement::Measurement;
use criterion::{Criterion, SamplingMode, Throughput};
use recap_harness::{Backend, Encoding, Tokenizer};
use recap_import::Kind;
use std::hint::black_box;
use std::path::{Path, PathBuf};

/// (name, corpus file) pairs; the temporary directory holds the imported corpora.
fn corpora(tmp: &Path) -> Vec<(String, PathBuf)> {
    let smoke = !measuring();
    let mut out = Vec::new();
    for file in bench_data_files() {
        let sessions = read_corpus(&file);
        let stem = file.file_stem().unwrap_or_default().to_string_lossy();
        let form = sessions.first().map_or("empty", |s| s.form.as_str());
        let name = format!("{form}-{}", stem.trim_start_matches("chat-"));
        let path = if smoke {
            // One iteration of each benchmark only: a few sessions are enough.
            let p = tmp.join(format!("{name}.jsonl"));
            write_corpus(&p, &sessions[..sessions.len().min(common::SMOKE_SESSIONS)]);
            p
        } else {
            file.clone()
        };
        out.push((name, path));
    }
    for (kind, dir) in [
        (Kind::PtcRunner, "ptc-runner-loop"),
        (Kind::Smolagents, "smolagents-code"),
        (Kind::Tau2, "tau2-bench-results"),
    ] {
        if let Some(mut sessions) = shared_corpus(kind, dir) {
            if smoke {
                sessions.truncate(common::SMOKE_SESSIONS);
            }
            let p = tmp.join(format!("{dir}.jsonl"));
            write_corpus(&p, &sessions);
            out.push((dir.to_string(), p));
        }
    }
    out
}

fn harness<M: Measurement>(c: &mut Criterion<M>) {
    let tmp = tempfile::tempdir().expect("temporary directory");
    let strategies = run_strategies();
    let cfg = engine_config(&strategies);
    let fast = run_tokenizer();
    let reference = Tokenizer::get(Encoding::O200kBase, Backend::Reference);
    for (name, path) in corpora(tmp.path()) {
        // Same job: the naive loop must count exactly what the engine reports.
        let want = report_total(&engine(&cfg, &path));
        assert_eq!(naive(&strategies, &fast, &path), want, "{name}: naive loop");
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let mut group = c.benchmark_group(format!("harness/{name}"));
        // Iterations take 0.1–10 s: few samples, one iteration each.
        group.sample_size(10);
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::BytesDecimal(bytes));
        group.bench_function("engine", |b| b.iter(|| engine(black_box(&cfg), &path)));
        group.bench_function("naive", |b| {
            b.iter(|| naive(black_box(&strategies), &fast, &path))
        });
        group.bench_function("naive-reference-tokenizer", |b| {
            b.iter(|| naive(black_box(&strategies), &reference, &path))
        });
        let lines = distinct_prompt_lines(&strategies, &path);
        group.bench_function("floor", |b| {
            b.iter(|| floor(&fast, &path, black_box(&lines)))
        });
        group.finish();
    }
}

// criterion_main! fixes the measurement at compile time; the clock is chosen at run
// time here (`RECAP_BENCH_CLOCK=cpu`), so main is written out.
fn main() {
    if common::cpu::cpu_clock_requested() {
        let mut c = Criterion::default()
            .with_measurement(common::cpu::ProcessCpuTime)
            .configure_from_args();
        harness(&mut c);
        c.final_summary();
    } else {
        let mut c = Criterion::default().configure_from_args();
        harness(&mut c);
        c.final_summary();
    }
}
