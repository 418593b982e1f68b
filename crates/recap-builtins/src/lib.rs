//! The registry of recap's built-in strategies: the one place that knows every strategy
//! compiled into the binary. Plugins are added to the returned registry by the caller.

use recap_core::{BuildContext, Registry, SpecError, Strategy, StrategyInfo, StrategySpec};
use std::sync::Arc;

type Build = fn(&StrategySpec, &BuildContext) -> Result<Arc<dyn Strategy>, SpecError>;

/// Every built-in strategy: its description and its factory.
pub fn builtins() -> Vec<(StrategyInfo, Build)> {
    // Factories that need nothing but the spec ignore the context.
    vec![
        (recap_full_history::info(), |s, _| {
            recap_full_history::build(s)
        }),
        (recap_single_user_coalesced::info(), |s, _| {
            recap_single_user_coalesced::build(s)
        }),
        (recap_per_turn_summary::info(), |s, _| {
            recap_per_turn_summary::build(s)
        }),
        (recap_rolling_window::info(), |s, _| {
            recap_rolling_window::build(s)
        }),
        (recap_ptc_runner::info(), |s, _| recap_ptc_runner::build(s)),
        (recap_ptc_trim::info(), |s, _| recap_ptc_trim::build(s)),
        // Chat form (SPEC 11.3).
        (recap_observation_masking::info(), |s, _| {
            recap_observation_masking::build(s)
        }),
        (
            recap_tool_result_clearing::info(),
            recap_tool_result_clearing::build,
        ),
        (
            recap_token_budget_trim::info(),
            recap_token_budget_trim::build,
        ),
        (recap_amortized_forgetting::info(), |s, _| {
            recap_amortized_forgetting::build(s)
        }),
        // Not a policy of recap's: what the recorded agent itself sent.
        (recap_recorded::info(), |s, _| recap_recorded::build(s)),
    ]
}

/// A registry holding every built-in strategy.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    for (info, build) in builtins() {
        let name = info.name.clone();
        if let Err(e) = registry.register_with_context(info, build) {
            // Names are compile-time constants of this workspace: a clash is a bug here,
            // not an input error.
            panic!("built-in strategy {name:?} cannot be registered: {e}");
        }
    }
    registry
}

/// The names of the four strategies of SPEC section 6, in the order reports list them.
pub const SPEC_BUILTINS: [&str; 4] = [
    recap_full_history::NAME,
    recap_single_user_coalesced::NAME,
    recap_per_turn_summary::NAME,
    recap_rolling_window::NAME,
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_is_registered_and_builds_with_defaults() {
        let registry = registry();
        for name in SPEC_BUILTINS {
            let strategy = registry.build(name).unwrap();
            assert_eq!(strategy.spec(), name);
        }
    }

    #[test]
    fn options_are_parsed_and_canonical() {
        let registry = registry();
        let s = registry
            .build("rolling-window:window=2,println_limit=15")
            .unwrap();
        assert_eq!(s.spec(), "rolling-window:window=2");
        let s = registry
            .build("single-user-coalesced:tool_call_limit=5,println_limit=4")
            .unwrap();
        assert_eq!(
            s.spec(),
            "single-user-coalesced:println_limit=4,tool_call_limit=5"
        );
    }

    #[test]
    fn bad_specs_are_clear_errors() {
        let registry = registry();
        let err = registry.build("rolling-window:window=0").err().unwrap();
        assert!(err.to_string().contains("window"), "{err}");
        assert!(err.to_string().contains("integer ≥ 1"), "{err}");
        let err = registry
            .build("single-user-coalesced:window=2")
            .err()
            .unwrap();
        assert!(matches!(err, SpecError::UnknownOption { .. }), "{err}");
        let err = registry.build("full-hist").err().unwrap();
        assert!(err.to_string().contains("full-history"), "{err}");
        let err = registry
            .build("per-turn-summary:println_limit=-1")
            .err()
            .unwrap();
        assert!(matches!(err, SpecError::BadValue { .. }), "{err}");
    }
}
