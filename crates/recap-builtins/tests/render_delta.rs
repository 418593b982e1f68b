//! `Strategy::render_session_delta`, applied to the prompt the caller holds, must give
//! what `render(for_call(session, k))` gives, however the calls come: in order (the
//! harness), out of order and repeated, with the previous prompt forgotten now and then
//! (the harness forgets it after a failed render). Every built-in over PTC-Lisp sessions
//! here; the chat strategies over chat sessions in `chat_properties.rs`.

use proptest::prelude::*;
use recap_core::invariants::calls;
use recap_core::{Message, RenderRequest, Session, SessionState, Strategy};
use recap_gen::arb_session;
use std::sync::Arc;

fn strategies() -> Vec<Arc<dyn Strategy>> {
    recap_testkit::specs::build_all()
        .into_iter()
        .map(|(_, strategy)| strategy)
        .filter(|s| s.forms().contains(&recap_core::Form::Ptc))
        .collect()
}

/// Walks `ks` (call, forget the held prompt first) through one state as a caller holding
/// each answer would; returns how many calls kept some of the previous prompt.
fn walk(
    strategy: &dyn Strategy,
    session: &Session,
    ks: &[(usize, bool)],
) -> Result<usize, TestCaseError> {
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
            .map_err(|e| TestCaseError::fail(format!("{name} call {k}: {e}")))?;
        prop_assert!(
            delta.kept <= held_len.unwrap_or(0),
            "{} call {}: keeps {} of {:?}",
            name,
            k,
            delta.kept,
            held_len
        );
        kept_some += usize::from(delta.kept > 0);
        let prompt = delta.apply(held.as_deref().unwrap_or_default());
        let request = RenderRequest::for_call(session, k).unwrap();
        prop_assert_eq!(
            &prompt,
            &strategy.render(&request).unwrap(),
            "{} call {}",
            name,
            k
        );
        held = Some(prompt);
    }
    Ok(kept_some)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn deltas_in_order_equal_render(session in arb_session()) {
        let ks: Vec<(usize, bool)> = calls(&session).map(|k| (k, false)).collect();
        for strategy in strategies() {
            let kept = walk(strategy.as_ref(), &session, &ks)?;
            // full-history's prompt only grows: every call after the first keeps all of
            // the previous one.
            if strategy.spec() == "full-history" {
                prop_assert_eq!(kept, ks.len() - 1);
            }
        }
    }

    #[test]
    fn deltas_out_of_order_and_forgotten_equal_render(
        session in arb_session(),
        picks in prop::collection::vec((0u16..1000, any::<bool>()), 1..40),
    ) {
        let n = calls(&session).len();
        let ks: Vec<(usize, bool)> =
            picks.iter().map(|&(p, forget)| (p as usize * n / 1000, forget)).collect();
        for strategy in strategies() {
            walk(strategy.as_ref(), &session, &ks)?;
        }
    }
}
