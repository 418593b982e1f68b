//! The plugin twins — built-ins wrapped by the SDK (`crates/recap-plugin-host/tests/
//! fixtures/wrapped`) — and the corpora `recap run` replays them over, for the `plugin`
//! bench and `examples/plugin-cost.rs`.

use recap_core::{Registry, Session, Strategy};
use recap_harness::Report;
use recap_plugin_host::Isolation;
use recap_testkit::plugins as support;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The wrapped built-ins by target name (`wrap_full_history`, …), built with a nested
/// `cargo build`: optimised when `release` (when measuring: the same optimisation as the
/// bench binary, or the comparison is meaningless).
pub fn wrapped_libraries(release: bool) -> BTreeMap<String, PathBuf> {
    let manifest = support::fixtures_manifest();
    let mut args = vec![
        "--manifest-path",
        manifest.to_str().expect("UTF-8 workspace path"),
        "-p",
        "recap-plugin-wrapped-builtins",
        "--examples",
    ];
    if release {
        args.push("--release");
    }
    eprintln!(
        "building the wrapped built-ins: cargo build {}",
        args.join(" ")
    );
    support::build_cdylibs(&args)
}

/// The built-ins that have a twin, in the registry's order: not those that need the
/// run's tokenizer to be built (a plugin gets token counts, not a tokenizer — see the
/// parity test), nor `recorded` (it replays a session's record: nothing for a twin to do).
pub fn twin_names() -> Vec<String> {
    let direct = recap_builtins::registry();
    recap_builtins::builtins()
        .into_iter()
        .map(|(info, _)| info.name)
        .filter(|name| match direct.build(name) {
            Err(recap_core::SpecError::NeedsTokenizer { .. }) => false,
            Ok(s) => !s.replays_record(),
            Err(_) => true,
        })
        .collect()
}

/// The library of `name`'s twin among `libs`.
pub fn twin_library<'a>(libs: &'a BTreeMap<String, PathBuf>, name: &str) -> &'a Path {
    let target = format!("wrap_{}", name.replace('-', "_"));
    libs.get(&target).unwrap_or_else(|| {
        panic!("no wrapped plugin {target} was built for built-in {name}; built: {libs:?}")
    })
}

/// The wrapped built-in `name` loaded as `isolation` says, built from its own registry.
pub fn twin(lib: &Path, name: &str, isolation: &Isolation) -> Arc<dyn Strategy> {
    let plugin = recap_plugin_host::load_with(lib, isolation).unwrap_or_else(|e| panic!("{e}"));
    let mut registry = Registry::new();
    recap_plugin_host::register(&mut registry, &plugin).unwrap_or_else(|e| panic!("{e}"));
    registry.build(name).expect("wrapped built-in builds")
}

/// Prompt tokens per run, in report order: what a built-in's run and its twin's must
/// agree on.
pub fn token_totals(report: &Report) -> Vec<(String, u64)> {
    report
        .runs
        .iter()
        .map(|r| (r.strategy.clone(), r.prompt_tokens_total))
        .collect()
}

/// The corpus files the plugin-run comparison replays, written into `dir`: bench-data
/// (`bench_data`, every session) and a generated corpus (recap-gen seed 7: 30 PTC-Lisp
/// and 30 chat sessions of 8–40 turns; 2 and 2 of 4–6 turns when not `full`). Name,
/// path and size in bytes.
pub fn run_corpora(
    dir: &Path,
    bench_data: &[Session],
    full: bool,
) -> Vec<(&'static str, PathBuf, u64)> {
    let (n, turns) = if full { (30, 8..=40) } else { (2, 4..=6) };
    let mut generated = recap_gen::generate_corpus(7, n, turns.clone());
    generated.extend(recap_gen::generate_chat_corpus(7, n, turns));
    [
        ("bench-data", bench_data.to_vec()),
        ("generated", generated),
    ]
    .into_iter()
    .map(|(name, sessions)| {
        let path = dir.join(format!("{name}.jsonl"));
        super::write_corpus(&path, &sessions);
        let bytes = std::fs::metadata(&path).map_or(0, |m| m.len());
        (name, path, bytes)
    })
    .collect()
}
