//! Structure-aware valid sessions through every built-in strategy at every call, with
//! the invariant checker (SPEC section 7) on each render.
#![no_main]

use recap_fuzz::inputs::SessionPlan;

libfuzzer_sys::fuzz_target!(|plan: SessionPlan| {
    recap_fuzz::strategy_checks::session_renders(&plan.build());
});
