//! A plugin twin — a built-in wrapped by the SDK and loaded in-process — gives in
//! `recap run`'s engine the figures its built-in gives, over both forms of bench-data.
//! The engine renders every call twice through a pair of states (its determinism
//! check), whose two plugin-side sessions hold one copy of the turns (`pair` in
//! `session_open`): the second takes what the first applied. This is the end-to-end
//! check that the sharing changes no figure and that the check finds nothing to report.

use recap_core::{Registry, Strategy};
use recap_harness::{Backend, Encoding, Hooks, RunConfig, StrategyEntry, Tokenizer, run_corpora};
use recap_testkit::faulty_runs::timeless_figures;
use recap_testkit::plugins::wrapped_builtin;
use serde_json::Value as Json;
use std::path::PathBuf;
use std::sync::Arc;

fn bench_data() -> Vec<PathBuf> {
    ["handwritten.jsonl", "chat-handwritten.jsonl"]
        .iter()
        .map(|f| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("bench-data")
                .join(f)
        })
        .collect()
}

/// The run's figures that do not depend on time, per strategy, in report order.
fn figures(strategy: Arc<dyn Strategy>) -> Vec<(String, Json)> {
    let baseline = recap_builtins::registry()
        .build("full-history")
        .expect("full-history builds");
    let tokenizer = Tokenizer::get(Encoding::O200kBase, Backend::default());
    let mut cfg = RunConfig::new(
        vec![StrategyEntry::new(strategy)],
        baseline,
        vec![tokenizer],
    )
    .expect("a run configuration");
    cfg.jobs = 2;
    let report = run_corpora(&cfg, &bench_data(), Hooks::default()).expect("the run");
    timeless_figures(&serde_json::to_value(&report).expect("the report as JSON"))
}

#[test]
fn a_twin_in_recap_run_gives_its_builtins_figures() {
    // One PTC-Lisp strategy that rebuilds its prompt and one chat strategy.
    for name in ["ptc-runner", "observation-masking"] {
        let lib = wrapped_builtin(name).unwrap_or_else(|| panic!("no wrapper for {name}"));
        let plugin = recap_plugin_host::load(&lib).unwrap_or_else(|e| panic!("{e}"));
        let mut registry = Registry::new();
        recap_plugin_host::register(&mut registry, &plugin).unwrap_or_else(|e| panic!("{e}"));
        let twin = registry.build(name).unwrap_or_else(|e| panic!("{e}"));
        let builtin = recap_builtins::registry()
            .build(name)
            .unwrap_or_else(|e| panic!("{e}"));
        let want = figures(builtin);
        let got = figures(twin);
        assert_eq!(got, want, "{name}");
        let (_, run) = got
            .iter()
            .find(|(strategy, _)| strategy == name)
            .unwrap_or_else(|| panic!("no row of {name}"));
        assert!(run["calls"].as_u64() > Some(0), "{run}");
        assert_eq!(run["invariant_violations"]["count"], 0, "{run}");
        assert_eq!(run["render_errors"]["count"], 0, "{run}");
    }
}
