//! `recap run`'s engine end to end against a naive loop, in the same group so
//! that criterion prints them side by side: `harness/<corpus>/{engine,naive}`.
//!
//! - `engine`: `recap_harness::run_corpora` over the corpus file with the configuration
//!   of `recap run`'s default (every built-in, `o200k_base`, default backend), one job:
//!   reading and parsing the corpus, rendering each call (twice, for the determinism
//!   check), checking the declared invariants, retention, counting tokens with reuse of
//!   the previous call's counts, and aggregating the report.
//! - `naive`: reads and parses the same file, renders every call of every session with
//!   every strategy once and tokenizes every message of every prompt whole with
//!   tiktoken-rs (the reference backend), summing SPEC section 9's prompt tokens.
//!
//! The engine does strictly more work than the naive loop; the target is engine ≥ 5×
//! faster. Corpora: bench-data, and the shared real corpora (`../shared/corpora`,
//! imported in memory with recap's importers and written to a temporary file).
//! Throughput is the corpus file's size.
//!
//! On a shared machine the engine (a worker thread handing results to the main thread)
//! suffers more from other load than the single-threaded naive loop; with
//! `RECAP_BENCH_CLOCK=cpu` both are measured in process CPU time instead of wall time
//! (save such runs under their own baseline name).

mod common;

use common::{
    bench_data_files, engine, engine_config, measuring, read_corpus, shared_corpus, write_corpus,
};
use criterion::measurement::Measurement;
use criterion::{Criterion, SamplingMode, Throughput};
use recap_core::{CorpusReader, Strategy};
use recap_harness::counting::prompt_tokens;
use recap_harness::{Backend, Encoding, Tokenizer};
use recap_import::Kind;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The strategies `recap run` runs by default: every built-in.
fn strategies() -> Vec<Arc<dyn Strategy>> {
    let registry = recap_builtins::registry();
    recap_builtins::builtins()
        .into_iter()
        .map(|(info, _)| {
            registry
                .build(&info.name)
                .unwrap_or_else(|e| panic!("built-in {}: {e}", info.name))
        })
        .collect()
}

fn naive(strategies: &[Arc<dyn Strategy>], tok: &Tokenizer, corpus: &Path) -> u64 {
    let mut total = 0;
    let reader = CorpusReader::open(corpus).expect("corpus opens");
    for entry in reader {
        let session = entry.session.expect("bench corpora are valid");
        for strategy in strategies {
            // The calls the harness replays: after 0, 1, …, n−1 completed turns.
            for k in 0..session.turns.len() {
                let request = common::request(&session, k);
                let messages = strategy.render(&request).expect("built-ins render");
                total += prompt_tokens(tok, &messages);
            }
        }
    }
    total
}

/// (name, corpus file) pairs; the temporary directory holds the imported corpora.
fn corpora(tmp: &Path) -> Vec<(String, PathBuf)> {
    let smoke = !measuring();
    let mut out = Vec::new();
    for file in bench_data_files() {
        let name = file.file_stem().unwrap_or_default().to_string_lossy();
        let path = if smoke {
            // One iteration of each benchmark only: a few sessions are enough.
            let sessions: Vec<_> = read_corpus(&file)
                .into_iter()
                .take(common::SMOKE_SESSIONS)
                .collect();
            let p = tmp.join(format!("bench-data-{name}.jsonl"));
            write_corpus(&p, &sessions);
            p
        } else {
            file.clone()
        };
        out.push((format!("bench-data-{name}"), path));
    }
    for (kind, dir) in [
        (Kind::PtcRunner, "ptc-runner-loop"),
        (Kind::Smolagents, "smolagents-code"),
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
    let strategies = strategies();
    let cfg = engine_config(&strategies);
    let reference = Tokenizer::get(Encoding::O200kBase, Backend::Reference);
    for (name, path) in corpora(tmp.path()) {
        let bytes = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        let mut group = c.benchmark_group(format!("harness/{name}"));
        // Iterations take 0.1–10 s: few samples, one iteration each.
        group.sample_size(10);
        group.sampling_mode(SamplingMode::Flat);
        group.throughput(Throughput::BytesDecimal(bytes));
        group.bench_function("engine", |b| b.iter(|| engine(black_box(&cfg), &path)));
        group.bench_function("naive", |b| {
            b.iter(|| naive(black_box(&strategies), &reference, &path))
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
