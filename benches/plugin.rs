//! A built-in called directly vs the same built-in wrapped by the SDK and called through
//! the plugin ABI (what a plugin costs over a built-in, `docs/performance.md`):
//! `plugin/<strategy>/{direct,abi,abi-full-request}`, every
//! call of every bench-data session, throughput = prompt bytes.
//!
//! - `direct`: the built-in linked into this binary, rendered as the harness replays a
//!   session (one replay per session, calls in order).
//! - `abi`: the wrapped built-in loaded with `recap_plugin_host::load`, rendered the same
//!   way (one replay per session: only new turns cross the boundary), with the default
//!   per-call time limit: called from a thread that may not be given up, each call runs
//!   on a spare thread. The old micro target (≤ 1.5× `direct`) is retired: `plugin-run`
//!   below has the target.
//! - `abi-full-request`: the same plugin with each call rendered alone (a fresh
//!   plugin-side session per call: the whole history sent each time), to show what the
//!   incremental path saves.
//! - `abi-no-time-limit`: as `abi` with the per-call time limit off
//!   (`RECAP_PLUGIN_TIMEOUT=none`): calls run on the caller's thread, which shows what a
//!   spare thread per call costs.
//! - `session-copy-floor`: no plugin at all: a deep copy of every bench-data session,
//!   then dropping it. Any ABI in which the plugin works on its own copy of the session
//!   (JSON, a binary format, a subprocess, Wasm) pays at least this on top of `direct`,
//!   with no encoding and no parsing; measured beside `direct` so that the two compare.
//!
//! - `plugin-run/<corpus>/<strategy>/{builtin,plugin,plugin-no-time-limit,plugin-process}`:
//!   what a researcher pays for a plugin in `recap run`: the harness engine (one job,
//!   o200k_base, every check on, as the command runs) over a corpus file, asked for the
//!   strategy as a built-in and then as its wrapped twin (both runs also replay the
//!   implicit `full-history` baseline, a built-in, as `recap run --strategy X` does). The
//!   reports must count the same tokens. `plugin` has the default per-call time limit
//!   (its watchdog over calls on the run's workers); `plugin-no-time-limit` has none
//!   (`--plugin-timeout none`); `plugin-process` runs the twin in
//!   `recap plugin-worker` processes (`--plugin-isolation process`, the `recap` binary
//!   cargo built for this bench). Corpora: `bench-data` (both files) and `generated`
//!   (recap-gen, seed 7: 30 PTC-Lisp and 30 chat sessions of 8–40 turns). The target:
//!   `plugin` ≤ 1.3 × `builtin`. With `RECAP_BENCH_CLOCK=cpu` the figures are this
//!   process's CPU time (a worker process's time is not in it).
//!
//! The wrappers are the plugin-host's parity fixtures
//! (`crates/recap-plugin-host/tests/fixtures/wrapped`), built with a nested `cargo
//! build --message-format=json` through the host tests' helper — in release mode when
//! measuring, in debug mode for the smoke run (`cargo test --benches`).

mod common;

use common::plugin_twins::{
    run_corpora, token_totals, twin, twin_library, twin_names, wrapped_libraries,
};
use common::{
    bench_data_sessions, engine, engine_config, measuring, render_calls, render_sessions,
};
use criterion::measurement::Measurement;
use criterion::{Criterion, SamplingMode, Throughput};
use recap_core::invariants::calls;
use recap_core::render_call;
use recap_plugin_host::{Isolation, IsolationConfig};
use std::hint::black_box;
use std::sync::Arc;

fn plugin<M: Measurement>(c: &mut Criterion<M>) {
    let all_sessions = bench_data_sessions();
    let tmp = tempfile::tempdir().expect("temporary directory");
    let corpora = run_corpora(tmp.path(), &all_sessions, measuring());
    let libs = wrapped_libraries(measuring());
    // The recap cargo built for this bench serves as the worker of isolated plugins.
    let isolated = Isolation::Process(IsolationConfig::new(env!("CARGO_BIN_EXE_recap")));
    let direct = recap_builtins::registry();
    // What `recap` uses unless told otherwise (the environment may override it).
    let default_limit =
        recap_plugin_host::call_time_limit().unwrap_or(recap_plugin_host::DEFAULT_CALL_TIME_LIMIT);
    for name in twin_names() {
        let lib = twin_library(&libs, &name);
        let want = direct.build(&name).expect("built-in builds");
        let got = twin(lib, &name, &Isolation::InProcess);
        // The sessions of the forms it renders: a plugin is sent no other.
        let sessions: Vec<recap_core::Session> = all_sessions
            .iter()
            .filter(|s| want.forms().contains(&s.form))
            .cloned()
            .collect();

        let bytes = render_sessions(want.as_ref(), &sessions);
        // Same output both ways (the parity test proves it message for message).
        assert_eq!(render_sessions(got.as_ref(), &sessions), bytes, "{name}");
        let last = sessions.last().expect("bench-data has sessions");
        let k = calls(last).last().unwrap_or(0);
        assert_eq!(
            render_call(got.as_ref(), last, k).expect("plugin renders"),
            render_call(want.as_ref(), last, k).expect("built-in renders"),
            "{name}: the plugin must render what the built-in renders"
        );

        let mut group = c.benchmark_group(format!("plugin/{name}"));
        group.throughput(Throughput::Bytes(bytes));
        // Full requests take up to a second per iteration: a fixed number of iterations
        // per sample keeps the group to about a minute.
        group.sample_size(20);
        group.sampling_mode(SamplingMode::Flat);
        group.bench_function("direct", |b| {
            b.iter(|| render_sessions(black_box(want.as_ref()), black_box(&sessions)))
        });
        recap_plugin_host::set_call_time_limit(Some(default_limit));
        group.bench_function("abi", |b| {
            b.iter(|| render_sessions(black_box(got.as_ref()), black_box(&sessions)))
        });
        group.bench_function("abi-full-request", |b| {
            b.iter(|| render_calls(black_box(got.as_ref()), black_box(&sessions)))
        });
        recap_plugin_host::set_call_time_limit(None);
        group.bench_function("abi-no-time-limit", |b| {
            b.iter(|| render_sessions(black_box(got.as_ref()), black_box(&sessions)))
        });
        group.bench_function("session-copy-floor", |b| {
            b.iter(|| drop(black_box(black_box(&sessions).to_vec())))
        });
        group.finish();

        let in_worker = twin(lib, &name, &isolated);
        for (corpus_name, corpus, corpus_bytes) in &corpora {
            recap_plugin_host::set_call_time_limit(Some(default_limit));
            let builtin_run = engine_config(&[Arc::clone(&want)]);
            let plugin_run = engine_config(&[Arc::clone(&got)]);
            let process_run = engine_config(&[Arc::clone(&in_worker)]);
            let totals = token_totals(&engine(&builtin_run, corpus));
            for (how, cfg) in [("in-process", &plugin_run), ("isolated", &process_run)] {
                assert_eq!(
                    token_totals(&engine(cfg, corpus)),
                    totals,
                    "{name} ({how}) on {corpus_name}: recap run must count the same tokens with the plugin"
                );
            }
            let mut group = c.benchmark_group(format!("plugin-run/{corpus_name}/{name}"));
            group.throughput(Throughput::Bytes(*corpus_bytes));
            group.sample_size(10);
            group.sampling_mode(SamplingMode::Flat);
            group.bench_function("builtin", |b| {
                b.iter(|| engine(black_box(&builtin_run), corpus))
            });
            group.bench_function("plugin", |b| {
                b.iter(|| engine(black_box(&plugin_run), corpus))
            });
            group.bench_function("plugin-process", |b| {
                b.iter(|| engine(black_box(&process_run), corpus))
            });
            recap_plugin_host::set_call_time_limit(None);
            group.bench_function("plugin-no-time-limit", |b| {
                b.iter(|| engine(black_box(&plugin_run), corpus))
            });
            group.finish();
        }
        recap_plugin_host::set_call_time_limit(Some(default_limit));
    }
}

// criterion_main! fixes the measurement at compile time; the clock is chosen at run
// time here (`RECAP_BENCH_CLOCK=cpu`), so main is written out.
fn main() {
    if common::cpu::cpu_clock_requested() {
        let mut c = Criterion::default()
            .with_measurement(common::cpu::ProcessCpuTime)
            .configure_from_args();
        plugin(&mut c);
        c.final_summary();
    } else {
        let mut c = Criterion::default().configure_from_args();
        plugin(&mut c);
        c.final_summary();
    }
}
