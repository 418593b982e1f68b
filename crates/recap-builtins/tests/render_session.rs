//! `Strategy::render_session` must always equal `render(for_call(session, k))`, however
//! its `SessionState` is used: every call in order (the harness), calls out of order and
//! repeated, one state shared by different sessions (even with the same id), and a
//! session that gains turns between calls. The strategies that reuse work across calls
//! (per-turn-summary, single-user-coalesced, rolling-window) are the point; every
//! built-in is checked.

use proptest::prelude::*;
use recap_core::invariants::calls;
use recap_core::{Message, RenderError, RenderRequest, Session, SessionState, Strategy, Value};
use recap_gen::arb_session;
use std::sync::Arc;

/// Every built-in with its defaults, and the caching ones with small limits and windows
/// (the specs every cross-strategy property runs).
fn strategies() -> Vec<Arc<dyn Strategy>> {
    recap_testkit::specs::build_all()
        .into_iter()
        .map(|(_, strategy)| strategy)
        .collect()
}

fn reference(strategy: &dyn Strategy, session: &Session, k: usize) -> Vec<Message> {
    let request = RenderRequest::for_call(session, k).unwrap();
    strategy.render(&request).unwrap()
}

fn check(
    strategy: &dyn Strategy,
    session: &Session,
    k: usize,
    state: &mut SessionState,
) -> Result<(), TestCaseError> {
    let got = strategy
        .render_session(session, k, state)
        .map_err(|e| TestCaseError::fail(format!("{} call {k}: {e}", strategy.spec())))?;
    prop_assert_eq!(
        got,
        reference(strategy, session, k),
        "{} on {} call {}",
        strategy.spec(),
        session.id,
        k
    );
    Ok(())
}

/// Call indexes picked by `picks` (fractions in 0..1000) among the calls of `session`.
fn picked_calls(session: &Session, picks: &[u16]) -> Vec<usize> {
    let n = calls(session).len();
    picks.iter().map(|p| *p as usize * n / 1000).collect()
}

/// `session` with the same id but different turns: every tool call's arguments and every
/// definition's value replaced, so a cache keyed by id alone would show stale text.
fn same_id_other_content(session: &Session) -> Session {
    let mut other = session.clone();
    for turn in &mut other.turns {
        for call in &mut turn.tool_calls {
            call.args = Value::List(vec![Value::Str("other".into())]);
            call.result = Some(Value::Int(7));
        }
        for def in &mut turn.definitions {
            def.value = Some(Value::List(vec![Value::Int(1), Value::Int(2)]));
        }
        turn.prints.reverse();
    }
    other
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn every_call_in_order_equals_render(session in arb_session()) {
        for strategy in strategies() {
            let mut state = SessionState::new();
            for k in calls(&session) {
                check(strategy.as_ref(), &session, k, &mut state)?;
            }
        }
    }

    #[test]
    fn calls_out_of_order_and_repeated_equal_render(
        session in arb_session(),
        picks in prop::collection::vec(0u16..1000, 1..40),
    ) {
        for strategy in strategies() {
            let mut state = SessionState::new();
            for k in picked_calls(&session, &picks) {
                check(strategy.as_ref(), &session, k, &mut state)?;
            }
        }
    }

    #[test]
    fn one_state_shared_by_different_sessions_equals_render(
        a in arb_session(),
        b in arb_session(),
        picks in prop::collection::vec((any::<bool>(), 0u16..1000), 1..40),
    ) {
        // The third session has `a`'s id (and max_turns) but other turns.
        let c = same_id_other_content(&a);
        for strategy in strategies() {
            let mut state = SessionState::new();
            for (i, (use_b, p)) in picks.iter().enumerate() {
                let session = match (use_b, i % 3) {
                    (true, _) => &b,
                    (false, 0) => &c,
                    (false, _) => &a,
                };
                let k = picked_calls(session, &[*p])[0];
                check(strategy.as_ref(), session, k, &mut state)?;
            }
        }
    }

    #[test]
    fn a_session_that_gains_turns_equals_render(session in arb_session(), reserve in any::<bool>()) {
        for strategy in strategies() {
            let mut state = SessionState::new();
            let mut live = session.clone();
            live.turns.clear();
            if reserve {
                // Same turn vector throughout: the cache keeps its pieces.
                live.turns.reserve(session.turns.len());
            } else {
                live.turns.shrink_to_fit();
            }
            for turn in &session.turns {
                if let Some(k) = calls(&live).last() {
                    check(strategy.as_ref(), &live, k, &mut state)?;
                }
                live.turns.push(turn.clone());
            }
            for k in calls(&live) {
                check(strategy.as_ref(), &live, k, &mut state)?;
            }
        }
    }
}

/// A call that cannot be made fails exactly as the default `render_session` does, and
/// leaves the state usable.
#[test]
fn calls_past_the_session_fail_like_the_default() {
    for session in recap_gen::generate_corpus(3, 4, 0..=6) {
        check_past_the_end(&session);
    }
}

fn check_past_the_end(session: &Session) {
    let last = calls(session).last().unwrap();
    for strategy in strategies() {
        let mut state = SessionState::new();
        for k in [last + 1, session.turns.len() + 1, usize::MAX] {
            let expected = RenderRequest::for_call(session, k)
                .map(|_| ())
                .map_err(|e| RenderError::new("bad_request", e.to_string()));
            let got = strategy.render_session(session, k, &mut state).map(|_| ());
            if expected.is_ok() {
                continue;
            }
            assert_eq!(got, expected, "{} call {k}", strategy.spec());
        }
        assert_eq!(
            strategy.render_session(session, last, &mut state).unwrap(),
            reference(strategy.as_ref(), session, last)
        );
    }
}

/// A concrete case of the same-id check: identical calls merge in one session and not in
/// the other, which a cache of "repeats the previous call" keyed by id would get wrong.
#[test]
fn same_id_sessions_with_different_calls_do_not_share_pieces() {
    use recap_gen::builder::{SessionBuilder, TurnBuilder};
    let poll = |args: i64| Value::List(vec![Value::Int(args)]);
    let build = |second: i64| {
        SessionBuilder::new("m")
            .id("same")
            .max_turns(5)
            .turn(
                TurnBuilder::ok("(poll 1)")
                    .call("poll", poll(1), None)
                    .call("poll", poll(second), None),
            )
            .turn(TurnBuilder::ok("(x)").def("x", Value::Int(second)))
            .build()
    };
    let (a, b) = (build(1), build(2));
    let registry = recap_builtins::registry();
    for spec in [
        "single-user-coalesced",
        "per-turn-summary",
        "rolling-window:window=1",
    ] {
        let strategy = registry.build(spec).unwrap();
        let mut state = SessionState::new();
        for session in [&a, &b, &a, &b] {
            for k in calls(session) {
                let got = strategy.render_session(session, k, &mut state).unwrap();
                assert_eq!(
                    got,
                    reference(strategy.as_ref(), session, k),
                    "{spec} call {k}"
                );
            }
        }
    }
    // The two really differ where a stale cache would show: merged vs two lines.
    let suc = registry.build("single-user-coalesced").unwrap();
    let text = |s: &Session| reference(suc.as_ref(), s, 2)[1].content.clone();
    assert!(text(&a).contains("poll(1) x2"), "{}", text(&a));
    assert!(text(&b).contains("poll(1)\n;   poll(2)"), "{}", text(&b));
}
