//! Token-counting speed of every tokenizer backend recap offers, on the same
//! prompts: `tokenize/<encoding>/<backend>`, throughput in MB/s (decimal).
//!
//! The prompts are the last call of every bench-data session under `full-history` (the
//! longest prompt of each session: system prompt, mission, programs, outputs), one count
//! per message as the harness does. The setup checks that both backends give the same
//! count and prints it (bytes per token) on stderr.

mod common;

use common::{bench_data_sessions, last_call};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use recap_core::Message;
use recap_harness::{Backend, Encoding, Tokenizer};
use std::hint::black_box;

fn prompts() -> Vec<Vec<Message>> {
    let full = recap_builtins::registry()
        .build("full-history")
        .expect("full-history builds");
    bench_data_sessions()
        .iter()
        .map(|s| recap_core::render_call(full.as_ref(), s, last_call(s)).expect("built-ins render"))
        .collect()
}

fn count(tok: &Tokenizer, prompts: &[Vec<Message>]) -> usize {
    prompts
        .iter()
        .flatten()
        .map(|m| tok.count_tokens(black_box(&m.content)))
        .sum()
}

fn tokenize(c: &mut Criterion) {
    let prompts = prompts();
    let bytes: u64 = prompts
        .iter()
        .flatten()
        .map(|m| m.content.len() as u64)
        .sum();
    for encoding in Encoding::ALL {
        let mut group = c.benchmark_group(format!("tokenize/{encoding}"));
        group.throughput(Throughput::BytesDecimal(bytes));
        // One iteration is ~1.5 MB of text: tens of ms even for the fast backend.
        group.sample_size(10);
        let mut counts = Vec::new();
        for backend in [Backend::Reference, Backend::Fast] {
            // Not every encoding has both backends (tiktoken-rs lacks some vocabularies).
            let Ok(tok) = Tokenizer::try_get(encoding, backend) else {
                eprintln!("tokenize/{encoding}: no {backend} backend, skipped");
                continue;
            };
            // Vocabulary loading stays out of the measurement.
            counts.push(count(&tok, &prompts));
            let id = BenchmarkId::from_parameter(format!(
                "{}={}",
                backend.name(),
                backend.implementation().replace(' ', "-")
            ));
            group.bench_function(id, |b| b.iter(|| count(&tok, &prompts)));
        }
        // Both backends must agree, or the speed comparison is meaningless.
        assert!(
            counts.windows(2).all(|w| w[0] == w[1]),
            "{encoding}: backends disagree on the bench prompts: {counts:?}"
        );
        eprintln!(
            "tokenize/{encoding}: {bytes} bytes, {} tokens ({:.2} bytes/token)",
            counts[0],
            bytes as f64 / counts[0] as f64
        );
        group.finish();
    }
}

criterion_group!(benches, tokenize);
criterion_main!(benches);
