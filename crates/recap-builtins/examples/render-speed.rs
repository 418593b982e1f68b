//! Rough render throughput of each built-in over a corpus (every call of every session):
//! `cargo run --release -p recap-builtins --example render-speed -- bench-data/generated.jsonl [SPEC...]`.
//! The criterion benches are the measurement of record; this is a quick look.

use recap_core::invariants::calls;
use recap_core::{CorpusReader, RenderRequest, Session};
use std::time::Instant;

fn main() -> anyhow::Result<()> {
    let path = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "bench-data/generated.jsonl".into());
    let sessions: Vec<Session> = CorpusReader::open(std::path::Path::new(&path))?
        .filter_map(|e| e.session.ok())
        .collect();
    let registry = recap_builtins::registry();
    let only: Vec<String> = std::env::args().skip(2).collect();
    let specs: Vec<&str> = if only.is_empty() {
        recap_builtins::SPEC_BUILTINS.to_vec()
    } else {
        only.iter().map(String::as_str).collect()
    };
    for spec in specs {
        let strategy = registry.build(spec)?;
        let (mut bytes, mut renders) = (0usize, 0usize);
        let start = Instant::now();
        // Repeat for at least a second so the numbers are warm and stable, or a fixed
        // number of passes (RENDER_SPEED_PASSES) for instruction counts.
        let passes: Option<usize> = std::env::var("RENDER_SPEED_PASSES")
            .ok()
            .and_then(|p| p.parse().ok());
        let mut pass = 0;
        while passes.map_or(start.elapsed().as_secs_f64() < 1.0, |n| pass < n) {
            pass += 1;
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
