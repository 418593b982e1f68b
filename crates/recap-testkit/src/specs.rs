//! The strategy specs that the cross-strategy properties run (the fuzz target
//! `strategies`, a replay equal to each call rendered alone): every built-in with its
//! defaults, and option settings where cuts, windows and folding happen on almost every
//! call.

use recap_core::tokens::WordCounter;
use recap_core::{Registry, Strategy};
use std::sync::Arc;

/// Settings tried besides each strategy's defaults: the smallest limits and windows,
/// and mixed ones.
const VARIANTS: &[&str] = &[
    "single-user-coalesced:println_limit=1,tool_call_limit=1",
    "single-user-coalesced:println_limit=2,tool_call_limit=3",
    "per-turn-summary:println_limit=1,tool_call_limit=2",
    "rolling-window:window=1",
    "rolling-window:window=1,println_limit=1,tool_call_limit=1",
    "rolling-window:window=2,println_limit=3,tool_call_limit=1",
];

/// Every strategy of `registry` by name (its defaults), then the `VARIANTS` of the
/// strategies it has.
pub fn builtin_specs(registry: &Registry) -> Vec<String> {
    let mut specs: Vec<String> = registry.infos().map(|i| i.name.clone()).collect();
    specs.extend(
        VARIANTS
            .iter()
            .filter(|v| {
                v.split(':')
                    .next()
                    .is_some_and(|name| registry.get(name).is_some())
            })
            .map(|v| v.to_string()),
    );
    specs
}

/// The built-in strategies. No run's tokenizer exists here, so strategies with token
/// budgets count with recap-core's stand-in ([`WordCounter`]).
pub fn builtins() -> Registry {
    let mut registry = recap_builtins::registry();
    registry.set_counter(Arc::new(WordCounter));
    registry
}

/// Each of [`builtin_specs`] of [`builtins`] built anew, with its spec; panics on a
/// spec that does not build. Compression strategies only: `recorded` replays a
/// session's record, renders no bare request, and has its own properties
/// (strategies/recorded).
pub fn build_all() -> Vec<(String, Arc<dyn Strategy>)> {
    let registry = builtins();
    builtin_specs(&registry)
        .into_iter()
        .map(|spec| {
            let strategy = registry
                .build(&spec)
                .unwrap_or_else(|e| panic!("built-in spec {spec:?} does not build: {e}"));
            (spec, strategy)
        })
        .filter(|(_, strategy)| !strategy.replays_record())
        .collect()
}
