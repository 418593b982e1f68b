//! The property the `strategies` fuzz target checks, shared with the main test suite
//! (`tests/reliability_fuzz_regressions.rs`).

use crate::specs::build_all;
use recap_core::invariants::{calls, check_session};
use recap_core::{Message, Session, Strategy, render_call};
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
/// one replay walked over the calls in order, as `recap run` renders, answers each as
/// the call rendered alone ([`render_call`], the `Strategy` contract; strategies keep
/// per-session caches in their replays) — once with whole prompts, once as deltas
/// against the prompt the caller holds.
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
        let whole: Vec<(usize, bool)> = calls(session).map(|k| (k, true)).collect();
        let in_order: Vec<(usize, bool)> = calls(session).map(|k| (k, false)).collect();
        for ks in [whole, in_order] {
            if let Err(e) = walk_deltas(strategy.as_ref(), session, &ks) {
                panic!("{spec}: {e}");
            }
        }
    }
}

/// Walks `ks` (a call, and whether to forget the held prompt first) through one replay,
/// holding each answer applied as `recap run` does; each must equal the call rendered
/// alone ([`render_call`]), and keep no more than was held. Returns how many calls
/// kept some of the previous prompt.
pub fn walk_deltas(
    strategy: &dyn Strategy,
    session: &Session,
    ks: &[(usize, bool)],
) -> Result<usize, String> {
    let name = strategy.spec();
    let mut replay = strategy.open();
    let mut held: Vec<Message> = Vec::new();
    let mut kept_some = 0;
    for &(k, forget) in ks {
        if forget {
            held.clear();
        }
        let delta = replay
            .call(session, k, held.len())
            .and_then(|d| d.within(held.len()))
            .map_err(|e| format!("{name}: call {k}: {e}"))?;
        kept_some += usize::from(delta.kept > 0);
        let prompt = delta.apply(&held);
        if Ok(&prompt) != render_call(strategy, session, k).as_ref() {
            return Err(format!(
                "{name}: call {k}: the replay's answer (kept {}) differs from the call rendered alone",
                delta.kept
            ));
        }
        held = prompt;
    }
    Ok(kept_some)
}
