//! Render speed of every built-in strategy (the render targets of `docs/performance.md`).
//!
//! - `render/bench-data/<strategy>`: every call of every bench-data session, rendered
//!   directly the way the harness replays a session (`Strategy::render_session`, one
//!   `SessionState` per session, so incremental strategies can reuse work);
//!   throughput = bytes of prompt produced.
//! - `render/turns/<strategy>/<n>`: the last call of a generated session of n = 10, 100
//!   and 1,000 turns; throughput = bytes of that prompt. Equal bytes/s across n means
//!   time linear in the prompt size (a renderer quadratic in turns would slow down at
//!   1,000).
//! - `render-vs-tokenize/<strategy>/{render,tokenize-fast}`: the same bench-data calls
//!   rendered, and their output tokenized with the fastest tokenizer recap offers
//!   (o200k_base, `fast` backend, one count per message as the harness does). The target
//!   is render < 5% of tokenize.
//!
//! - `render-floor/read-shown-data`: no strategy: every tool call, definition and print
//!   of the bench-data sessions read once, values walked whole — roughly the least a
//!   renderer that shows them pays (ptc-runner shows windows of exactly these), to
//!   compare with `render-vs-tokenize/ptc-runner/tokenize-fast`.
//!
//! Token counting is never inside a render measurement: it is 100–3,000× slower.

mod common;

use common::{
    bench_data_sessions, every_prompt, generated_session, last_call, measuring, prompt_bytes,
    render_sessions, request,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use recap_core::{Strategy, Value};
use recap_harness::{Backend, Encoding, Tokenizer};
use std::hint::black_box;
use std::sync::Arc;

fn builtins() -> Vec<(String, Arc<dyn Strategy>)> {
    let registry = recap_builtins::registry();
    recap_builtins::builtins()
        .into_iter()
        .map(|(info, _)| {
            let strategy = registry
                .build(&info.name)
                .unwrap_or_else(|e| panic!("built-in {}: {e}", info.name));
            (info.name, strategy)
        })
        .collect()
}

fn bench_data(c: &mut Criterion) {
    let sessions = bench_data_sessions();
    let mut group = c.benchmark_group("render/bench-data");
    for (name, strategy) in builtins() {
        let bytes = render_sessions(strategy.as_ref(), &sessions);
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function(&name, |b| {
            b.iter(|| render_sessions(black_box(strategy.as_ref()), black_box(&sessions)))
        });
    }
    group.finish();
}

fn by_turns(c: &mut Criterion) {
    // The smoke run keeps generation cheap; the measured sizes are the issue's.
    let sizes: &[u32] = if measuring() {
        &[10, 100, 1000]
    } else {
        &[10, 100]
    };
    let sessions: Vec<_> = sizes
        .iter()
        .map(|&n| (n, generated_session(11, n)))
        .collect();
    let mut group = c.benchmark_group("render/turns");
    for (name, strategy) in builtins() {
        for (n, session) in &sessions {
            let req = request(session, last_call(session));
            let bytes = prompt_bytes(&strategy.render(&req).expect("built-ins render"));
            group.throughput(Throughput::Bytes(bytes));
            group.bench_with_input(BenchmarkId::new(&name, n), &req, |b, req| {
                b.iter(|| strategy.render(black_box(req)))
            });
        }
    }
    group.finish();
}

fn render_vs_tokenize(c: &mut Criterion) {
    let sessions = bench_data_sessions();
    let fastest = Tokenizer::get(Encoding::O200kBase, Backend::Fast);
    for (name, strategy) in builtins() {
        let prompts = every_prompt(strategy.as_ref(), &sessions);
        let bytes: u64 = prompts.iter().map(|p| prompt_bytes(p)).sum();
        let mut group = c.benchmark_group(format!("render-vs-tokenize/{name}"));
        // Tokenizing every call's output takes ~0.1–1 s per iteration.
        group.sample_size(10);
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function("render", |b| {
            b.iter(|| render_sessions(black_box(strategy.as_ref()), black_box(&sessions)))
        });
        group.bench_function("tokenize-fast", |b| {
            b.iter(|| {
                let mut tokens = 0usize;
                for prompt in &prompts {
                    for m in prompt {
                        tokens += fastest.count_tokens(black_box(&m.content));
                    }
                }
                tokens
            })
        });
        group.finish();
    }
}

/// Adds up lengths, numbers and first bytes of every leaf of `value`, so that each
/// leaf's data is read (iteratively, like the printer, with one stack for all values).
fn read_whole<'v>(value: &'v Value, pending: &mut Vec<&'v Value>, acc: &mut u64) {
    pending.push(value);
    while let Some(v) = pending.pop() {
        match v {
            Value::Str(s) | Value::Keyword(s) => {
                *acc += s.len() as u64 + u64::from(s.as_bytes().first().copied().unwrap_or(0));
            }
            Value::Int(i) => *acc = acc.wrapping_add(i.unsigned_abs()),
            Value::List(items) | Value::Set(items) | Value::Tuple(items) => {
                pending.extend(items.iter());
            }
            Value::Map(entries) => pending.extend(entries.iter().flat_map(|(k, v)| [k, v])),
            _ => *acc += 1,
        }
    }
}

fn read_floor(c: &mut Criterion) {
    let sessions = bench_data_sessions();
    let mut group = c.benchmark_group("render-floor");
    group.bench_function("read-shown-data", |b| {
        b.iter(|| {
            let (mut acc, mut pending) = (0u64, Vec::new());
            for turn in black_box(&sessions).iter().flat_map(|s| &s.turns) {
                if !turn.success {
                    acc += turn.program.len() as u64;
                    continue;
                }
                for call in &turn.tool_calls {
                    acc += call.name.len() as u64;
                    read_whole(&call.args, &mut pending, &mut acc);
                }
                for def in &turn.definitions {
                    acc += def.name.len() as u64;
                    if let Some(value) = &def.value {
                        read_whole(value, &mut pending, &mut acc);
                    }
                }
                for print in &turn.prints {
                    acc += print.len() as u64;
                }
            }
            acc
        })
    });
    group.finish();
}

criterion_group!(
    benches,
    bench_data,
    by_turns,
    render_vs_tokenize,
    read_floor
);
criterion_main!(benches);
