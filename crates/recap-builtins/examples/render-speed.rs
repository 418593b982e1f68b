//! Rough render throughput of each built-in over a corpus (every call of every session):
//! `cargo run --release -p recap-builtins --example render-speed -- bench-data/generated.jsonl`.
//! The criterion benches are the measurement of record; this is a quick look.

use recap_core::{CorpusReader, RenderRequest, Session};
use recap_core::invariants::calls;
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let path = std::env::args().nth(1).unwrap_or_else(|| "bench-data/generated.jsonl".into());
    let sessions: Vec<Session> = CorpusReader::open(std::path::Path::new(&path))?
        .filter_map(|e| e.session.ok())
        .collect();
    let registry = recap_builtins::registry();
    for spec in recap_builtins::SPEC_BUILTINS {
        let strategy = registry.build(spec)?;
        let (mut bytes, mut renders) = (0usize, 0usize);
        let start = Instant::now();
        for _ in 0..5 {
            for s in &sessions {
                for k in calls(s) {
                    let msgs = strategy.render(&RenderRequest::for_call(s, k)?)?;
                    bytes += msgs.iter().map(|m| m.content.len()).sum::<usize>();
                    renders += 1;
                }
            }
        }
        let secs = start.elapsed().as_secs_f64();
        println!(
            "{spec:24} {renders:6} renders  {:8.1} MB out  {:8.1} MB/s  {:7.1} µs/render",
            bytes as f64 / 1e6,
            bytes as f64 / 1e6 / secs,
            secs * 1e6 / renders as f64
        );
    }
    Ok(())
}
