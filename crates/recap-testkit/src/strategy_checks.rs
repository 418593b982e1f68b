//! The property the `strategies` fuzz target checks, shared with the main test suite
//! (`tests/reliability_fuzz_regressions.rs`).

use crate::specs::build_all;
use recap_core::invariants::{calls, check_session};
use recap_core::{Message, RenderRequest, Session, SessionState, Strategy};
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
        // Answered as deltas against the prompt the caller holds, as `recap run` asks.
        let in_order: Vec<(usize, bool)> = calls(session).map(|k| (k, false)).collect();
        if let Err(e) = walk_deltas(strategy.as_ref(), session, &in_order) {
            panic!("{spec}: {e}");
        }
    }
}

/// Walks `ks` (a call, and whether to forget the held prompt first) through one state
/// with `render_session_delta`, holding each answer applied as `recap run` does; each
/// must equal `render` of its call, and keep no more than was held. Returns how many
/// calls kept some of the previous prompt.
pub fn walk_deltas(
    strategy: &dyn Strategy,
    session: &Session,
    ks: &[(usize, bool)],
) -> Result<usize, String> {
    let name = strategy.spec();
    let mut state = SessionState::new();
    let mut held: Option<Vec<Message>> = None;
    let mut kept_some = 0;
    for &(k, forget) in ks {
        if forget {
            held = None;
        }
        let held_len = held.as_ref().map(Vec::len);
        let delta = strategy
            .render_session_delta(session, k, &mut state, held_len)
            .and_then(|d| d.within(held_len))
            .map_err(|e| format!("{name}: call {k}: {e}"))?;
        kept_some += usize::from(delta.kept > 0);
        let prompt = delta.apply(held.as_deref().unwrap_or_default());
        let request = RenderRequest::for_call(session, k).map_err(|e| e.to_string())?;
        if Ok(&prompt) != strategy.render(&request).as_ref() {
            return Err(format!(
                "{name}: call {k}: the delta (kept {}) differs from render",
                delta.kept
            ));
        }
        held = Some(prompt);
    }
    Ok(kept_some)
}
