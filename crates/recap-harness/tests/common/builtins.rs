//! Runs of the built-in strategies, as the tests that replay bench-data and the real
//! corpora configure them.

use recap_core::{Registry, Strategy};
use recap_harness::{Backend, Encoding, RunConfig, StrategyEntry, Tokenizer};
use std::sync::Arc;

/// The built-ins, counting with the run's first tokenizer (o200k_base), as strategies
/// with token budgets do in a run.
pub fn registry() -> Registry {
    let mut registry = recap_builtins::registry();
    registry.set_counter(Arc::new(Tokenizer::get(Encoding::O200kBase, Backend::Fast)));
    registry
}

/// `strategies` against the built-in `full-history` baseline, counted with o200k_base
/// and cl100k_base, on `jobs` threads.
pub fn config(
    registry: &Registry,
    strategies: impl IntoIterator<Item = Arc<dyn Strategy>>,
    jobs: usize,
) -> RunConfig {
    let mut cfg = RunConfig::new(
        strategies.into_iter().map(StrategyEntry::new).collect(),
        registry.build("full-history").unwrap(),
        vec![
            Tokenizer::get(Encoding::O200kBase, Backend::Fast),
            Tokenizer::get(Encoding::Cl100kBase, Backend::Fast),
        ],
    )
    .unwrap();
    cfg.jobs = jobs;
    cfg
}
