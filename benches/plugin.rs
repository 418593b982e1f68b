//! A built-in called directly vs the same built-in wrapped by the SDK and called through
//! the plugin ABI (what a plugin costs over a built-in, `docs/performance.md`):
//! `plugin/<strategy>/{direct,abi,abi-full-request}`, every
//! call of every bench-data session, throughput = prompt bytes.
//!
//! - `direct`: the built-in linked into this binary, rendered as the harness replays a
//!   session (`Strategy::render_session`, one `SessionState` per session).
//! - `abi`: the wrapped built-in loaded with `recap_plugin_host::load`, rendered with
//!   `Strategy::render_session` and one `SessionState` per session (how the `Strategy`
//!   contract asks callers replaying a session to render: only new turns cross the
//!   boundary), with the default per-call time limit. Target: ≤ 1.5× `direct`.
//! - `abi-full-request`: the same plugin with a full request per call (the request JSON
//!   grows with the history), to show what the incremental path saves.
//! - `abi-no-time-limit`: as `abi` with the per-call time limit off
//!   (`RECAP_PLUGIN_TIMEOUT=none`): calls run on the caller's thread instead of a
//!   helper thread, which shows what the two thread hand-offs per call cost.
//! - `session-copy-floor`: no plugin at all: a deep copy of every bench-data session,
//!   then dropping it. Any ABI in which the plugin works on its own copy of the session
//!   (JSON, a binary format, a subprocess, Wasm) pays at least this on top of `direct`,
//!   with no encoding and no parsing; measured beside `direct` so that the two compare.
//!
//! - `plugin-run/<strategy>/{builtin,plugin}`: what a researcher pays for a plugin in
//!   `recap run`: the harness engine (one job, o200k_base, every check on, as the
//!   command runs) over the same bench-data sessions, asked for the strategy as a
//!   built-in and then as the wrapped plugin (both runs also replay the implicit
//!   `full-history` baseline, a built-in, as `recap run --strategy X` does). The two
//!   reports must count the same tokens. `plugin-no-time-limit`: the same with the
//!   per-call time limit off (`recap run --plugin-timeout none`), which shows what the
//!   limit's thread hand-off costs in a real run.
//!
//! The wrappers are the plugin-host's parity fixtures
//! (`crates/recap-plugin-host/tests/fixtures/wrapped`), built with a nested `cargo
//! build --message-format=json` through the host tests' helper — in release mode when
//! measuring, in debug mode for the smoke run (`cargo test --benches`).

mod common;

use recap_testkit::plugins as support;

use common::{
    bench_data_sessions, engine, engine_config, measuring, render_calls, render_sessions, request,
    write_corpus,
};
use criterion::{Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use recap_core::Registry;
use recap_core::invariants::calls;
use recap_harness::Report;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;

/// The wrapped built-ins by target name (`wrap_full_history`, …).
fn wrapped_libraries() -> BTreeMap<String, PathBuf> {
    let manifest = support::fixtures_manifest();
    let mut args = vec![
        "--manifest-path",
        manifest.to_str().expect("UTF-8 workspace path"),
        "-p",
        "recap-plugin-wrapped-builtins",
        "--examples",
    ];
    if measuring() {
        // Same optimisation as the bench binary, or the comparison is meaningless.
        args.push("--release");
    }
    eprintln!(
        "building the wrapped built-ins: cargo build {}",
        args.join(" ")
    );
    support::build_cdylibs(&args)
}

/// Prompt tokens per run, in report order: what both sides of `plugin-run` must agree on.
fn token_totals(report: &Report) -> Vec<(String, u64)> {
    report
        .runs
        .iter()
        .map(|r| (r.strategy.clone(), r.prompt_tokens_total))
        .collect()
}

fn plugin(c: &mut Criterion) {
    let all_sessions = bench_data_sessions();
    let tmp = tempfile::tempdir().expect("temporary directory");
    let corpus = tmp.path().join("bench-data.jsonl");
    write_corpus(&corpus, &all_sessions);
    let corpus_bytes = std::fs::metadata(&corpus).map_or(0, |m| m.len());
    let libs = wrapped_libraries();
    let direct = recap_builtins::registry();
    // What `recap` uses unless told otherwise (the environment may override it).
    let default_limit =
        recap_plugin_host::call_time_limit().unwrap_or(recap_plugin_host::DEFAULT_CALL_TIME_LIMIT);
    for (info, _) in recap_builtins::builtins() {
        let name = info.name;
        // A plugin gets token counts, not a tokenizer: the built-ins that need one to be
        // built have no wrapper (see the parity test).
        if let Err(recap_core::SpecError::NeedsTokenizer { .. }) = direct.build(&name) {
            continue;
        }
        let target = format!("wrap_{}", name.replace('-', "_"));
        let lib = libs.get(&target).unwrap_or_else(|| {
            panic!("no wrapped plugin {target} was built for built-in {name}; built: {libs:?}")
        });
        let plugin = recap_plugin_host::load(lib).unwrap_or_else(|e| panic!("{e}"));
        let mut through_abi = Registry::new();
        recap_plugin_host::register(&mut through_abi, &plugin).unwrap_or_else(|e| panic!("{e}"));
        let want = direct.build(&name).expect("built-in builds");
        let got = through_abi.build(&name).expect("wrapped built-in builds");
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
            got.render(&request(last, k)).expect("plugin renders"),
            want.render(&request(last, k)).expect("built-in renders"),
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

        recap_plugin_host::set_call_time_limit(Some(default_limit));
        let builtin_run = engine_config(&[Arc::clone(&want)]);
        let plugin_run = engine_config(&[Arc::clone(&got)]);
        assert_eq!(
            token_totals(&engine(&plugin_run, &corpus)),
            token_totals(&engine(&builtin_run, &corpus)),
            "{name}: recap run must count the same tokens with the plugin"
        );
        let mut group = c.benchmark_group(format!("plugin-run/{name}"));
        group.throughput(Throughput::Bytes(corpus_bytes));
        group.sample_size(10);
        group.sampling_mode(SamplingMode::Flat);
        group.bench_function("builtin", |b| {
            b.iter(|| engine(black_box(&builtin_run), &corpus))
        });
        group.bench_function("plugin", |b| {
            b.iter(|| engine(black_box(&plugin_run), &corpus))
        });
        recap_plugin_host::set_call_time_limit(None);
        group.bench_function("plugin-no-time-limit", |b| {
            b.iter(|| engine(black_box(&plugin_run), &corpus))
        });
        group.finish();
    }
}

criterion_group!(benches, plugin);
criterion_main!(benches);
