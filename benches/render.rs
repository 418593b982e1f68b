//! Render speed of every built-in strategy (the render targets of `docs/performance.md`).
//!
//! Every group replays exactly the calls `recap run` replays: for each strategy, the
//! bench-data sessions of the forms it renders, calls 0 … n−1 of a session of n turns.
//!
//! - `render/bench-data/<strategy>`: every such call rendered the way the harness
//!   replays a session (one replay per session, each call answered as what it keeps of
//!   the previous prompt, so incremental strategies can reuse work); throughput = bytes
//!   of prompt produced.
//! - `render/turns/<strategy>/<form>-<n>`: the last call the harness replays of a
//!   generated session of n = 10, 100 and 1,000 turns, for each form the strategy
//!   renders; throughput = bytes of that prompt. Equal bytes/s across n means time
//!   linear in the prompt size (a renderer quadratic in turns would slow down at 1,000).
//! - `render-vs-count/<strategy>/{render,count-in-run}`: the same bench-data calls
//!   rendered, and what `recap run` pays to count their tokens: the harness's own
//!   counting (`CallDiff` against the previous call, equal messages reused, the other
//!   texts counted line by line through the session's line cache, the cache prefix) of
//!   this strategy's prompts, inside the default run: the strategies before it in the
//!   run's order have already filled the session's line cache, as in the command (their
//!   counting is done but not timed). Target: render < 5 % of count-in-run.
//! - `render-floor/read-shown-data`: no strategy: every tool call, definition and print
//!   that ptc-runner's calls can show (the PTC sessions' turns before their last call)
//!   read once, values walked whole — roughly the least a renderer that shows them pays,
//!   to compare with `render-vs-count/ptc-runner/count-in-run`.
//!
//! Token counting is never inside a render measurement.

mod common;

use common::{
    applicable, bench_data_sessions, call_count, every_prompt, generated_session_of, last_call,
    measuring, prompt_bytes, render_sessions, run_strategies, run_tokenizer,
};
use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use recap_core::{Form, Message, Session, Strategy, Value, render_call};
use recap_harness::Tokenizer;
use recap_harness::counting::{CallDiff, Prev, RoleTokens, SegmentCounts, TokenMemory, count_call};
use recap_harness::line_store::LineStore;
use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// `recap run`'s default strategies, by name, in the run's order.
fn builtins() -> Vec<(String, Arc<dyn Strategy>)> {
    run_strategies()
        .into_iter()
        .map(|s| (s.spec(), s))
        .collect()
}

fn bench_data(c: &mut Criterion) {
    let all = bench_data_sessions();
    let mut group = c.benchmark_group("render/bench-data");
    for (name, strategy) in builtins() {
        let sessions = applicable(strategy.as_ref(), &all);
        let bytes = render_sessions(strategy.as_ref(), &sessions);
        eprintln!(
            "render/bench-data/{name}: {} sessions, {} calls, {bytes} bytes",
            sessions.len(),
            call_count(&sessions)
        );
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
    let sessions: Vec<(Form, u32, Session)> = Form::ALL
        .iter()
        .flat_map(|&form| {
            sizes
                .iter()
                .map(move |&n| (form, n, generated_session_of(form, 11, n)))
        })
        .collect();
    let mut group = c.benchmark_group("render/turns");
    for (name, strategy) in builtins() {
        for (form, n, session) in &sessions {
            if !strategy.applies_to(session) {
                continue;
            }
            let k = last_call(session);
            let rendered = render_call(strategy.as_ref(), session, k).expect("built-ins render");
            group.throughput(Throughput::Bytes(prompt_bytes(&rendered)));
            let id = BenchmarkId::new(&name, format!("{}-{n}", form.as_str()));
            group.bench_with_input(id, session, |b, session| {
                b.iter(|| render_call(strategy.as_ref(), black_box(session), k))
            });
        }
    }
    group.finish();
}

/// The harness's counting of one strategy's prompts over one session (`calls` in call
/// order), with the session's line counts `counts` over its line store `lines` (here
/// counting walks each changed text itself; in `recap run` retention, which reads the
/// same texts first, walks them); returns the prompt tokens.
fn count_as_harness(
    tok: &Tokenizer,
    roles: &RoleTokens,
    calls: &[Vec<Message>],
    counts: &mut SegmentCounts,
    lines: &mut LineStore,
) -> u64 {
    let (mut mem, mut per_message) = (TokenMemory::default(), Vec::new());
    let mut prev: Option<&[Message]> = None;
    let mut total = 0;
    for cur in calls {
        let prev_view = prev.map(Prev::from);
        let diff = CallDiff::new(prev_view, cur, 0);
        total += count_call(
            tok,
            roles,
            prev_view,
            cur,
            &diff,
            &mut mem,
            counts,
            &mut lines.call(),
            &mut per_message,
        )
        .prompt;
        prev = Some(cur);
    }
    total
}

/// Per session, per strategy of the run: the prompts of every call, when the strategy
/// renders the session's form.
type RunPrompts = Vec<Vec<Option<Vec<Vec<Message>>>>>;

fn run_prompts(strategies: &[(String, Arc<dyn Strategy>)], sessions: &[Session]) -> RunPrompts {
    sessions
        .iter()
        .map(|session| {
            strategies
                .iter()
                .map(|(_, s)| {
                    common::applies(s.as_ref(), session)
                        .then(|| every_prompt(s.as_ref(), std::slice::from_ref(session)))
                })
                .collect()
        })
        .collect()
}

/// Time spent counting strategy `x`'s prompts in the default run, over `iters` runs.
fn count_in_run(tok: &Tokenizer, prompts: &RunPrompts, x: usize, iters: u64) -> Duration {
    let roles = RoleTokens::new(tok);
    let mut spent = Duration::ZERO;
    for _ in 0..iters {
        for per_strategy in prompts {
            let mut counts = SegmentCounts::new(tok);
            let mut lines = LineStore::default();
            for (s, calls) in per_strategy.iter().enumerate().take(x + 1) {
                let Some(calls) = calls else { continue };
                let start = Instant::now();
                black_box(count_as_harness(
                    tok,
                    &roles,
                    black_box(calls),
                    &mut counts,
                    &mut lines,
                ));
                if s == x {
                    spent += start.elapsed();
                }
            }
        }
    }
    spent
}

fn render_vs_count(c: &mut Criterion) {
    let all = bench_data_sessions();
    let strategies = builtins();
    let prompts = run_prompts(&strategies, &all);
    let tok = run_tokenizer();
    for (x, (name, strategy)) in strategies.iter().enumerate() {
        let sessions = applicable(strategy.as_ref(), &all);
        let bytes = render_sessions(strategy.as_ref(), &sessions);
        let mut group = c.benchmark_group(format!("render-vs-count/{name}"));
        group.sample_size(10);
        group.throughput(Throughput::Bytes(bytes));
        group.bench_function("render", |b| {
            b.iter(|| render_sessions(black_box(strategy.as_ref()), black_box(&sessions)))
        });
        group.bench_function("count-in-run", |b| {
            b.iter_custom(|iters| count_in_run(&tok, &prompts, x, iters))
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
    let sessions: Vec<Session> = bench_data_sessions()
        .into_iter()
        .filter(|s| s.form == Form::Ptc)
        .collect();
    let mut group = c.benchmark_group("render-floor");
    group.bench_function("read-shown-data", |b| {
        b.iter(|| {
            let (mut acc, mut pending) = (0u64, Vec::new());
            // The last call shows every turn before it.
            let shown = black_box(&sessions)
                .iter()
                .flat_map(|s| s.turns.iter().take(last_call(s)));
            for turn in shown {
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

criterion_group!(benches, bench_data, by_turns, render_vs_count, read_floor);
criterion_main!(benches);
