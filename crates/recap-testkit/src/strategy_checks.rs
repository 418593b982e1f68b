//! The property the `strategies` fuzz target checks, shared with the main test suite
//! (`tests/reliability_fuzz_regressions.rs`).

use crate::specs::build_all;
use recap_core::invariants::{calls, check_session};
use recap_core::{RenderRequest, Session, SessionState, Strategy};
use std::sync::{Arc, OnceLock};

/// Every built-in strategy with its defaults, plus the variants of
/// [`builtin_specs`](crate::specs::builtin_specs), built once per process.
pub fn strategies() -> &'static [(String, Arc<dyn Strategy>)] {
    static ALL: OnceLock<Vec<(String, Arc<dyn Strategy>)>> = OnceLock::new();
    ALL.get_or_init(build_all)
}

/// A valid session renders through every built-in, at every call, without an error,
/// a panic, or a broken declared invariant (SPEC section 7; the checker also renders
/// each call twice for determinism), and the incremental path gives the same prompts:
/// one `SessionState` replayed over the calls in order, as `recap run` renders, equals
/// the stateless `render` of each call (the `Strategy` contract; strategies keep
/// per-session caches there).
pub fn session_renders(session: &Session) {
    if let Err(e) = Session::from_json(&session.to_json()) {
        panic!("the fuzz input builder made an invalid session: {e}");
    }
    for (spec, strategy) in strategies() {
        // A strategy is only ever handed sessions of the forms it renders (the
        // harness reports the others as not applicable).
        if !strategy.applies_to(session) {
            continue;
        }
        match check_session(strategy.as_ref(), session) {
            Ok(violations) => assert!(
                violations.is_empty(),
                "{spec} breaks its declared invariants on a valid session: {violations:#?}"
            ),
            Err(e) => panic!("{spec} failed to render a valid session: {e}"),
        }
        let mut state = SessionState::new();
        for k in calls(session) {
            let request = RenderRequest::for_call(session, k)
                .unwrap_or_else(|e| panic!("call {k} of a valid session: {e}"));
            let incremental = strategy.render_session(session, k, &mut state);
            assert_eq!(
                incremental,
                strategy.render(&request),
                "{spec}: render_session differs from render at call {k}"
            );
        }
    }
}
