//! A strategy's replay must answer every call with the prompt of the call rendered alone
//! (`render_call`, for the strategies with a straightforward render that render itself),
//! however the caller walks the session: every call in order (the harness), calls
//! skipped, and a session that gains turns between calls (a plugin's SDK, which the
//! host sends a turn at a time). The strategies that reuse work across calls
//! (per-turn-summary, single-user-coalesced, rolling-window, ptc-runner, ptc-trim) are
//! the point; every built-in is checked.

use proptest::prelude::*;
use recap_core::invariants::calls;
use recap_core::{Message, RenderError, RenderRequest, Replay, Session, Strategy, Value};
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
    recap_core::render_call(strategy, session, k).unwrap()
}

/// Call `k` through `replay`, asked for whole, against the reference.
fn check(
    strategy: &dyn Strategy,
    replay: &mut dyn Replay,
    session: &Session,
    k: usize,
) -> Result<(), TestCaseError> {
    let got = replay
        .call(session, k, 0)
        .map_err(|e| TestCaseError::fail(format!("{} call {k}: {e}", strategy.spec())))?;
    prop_assert_eq!(got.kept, 0, "{} kept messages nobody held", strategy.spec());
    prop_assert_eq!(
        got.tail,
        reference(strategy, session, k),
        "{} on {} call {}",
        strategy.spec(),
        session.id,
        k
    );
    Ok(())
}

/// Increasing call indexes picked by `picks` (fractions in 0..1000) among the calls of
/// `session`, each once.
fn picked_calls(session: &Session, picks: &[u16]) -> Vec<usize> {
    let n = calls(session).len();
    let mut ks: Vec<usize> = picks.iter().map(|p| *p as usize * n / 1000).collect();
    ks.sort_unstable();
    ks.dedup();
    ks
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
    fn every_call_in_order_equals_the_call_rendered_alone(session in arb_session()) {
        for strategy in strategies() {
            let mut replay = strategy.open();
            for k in calls(&session) {
                check(strategy.as_ref(), replay.as_mut(), &session, k)?;
            }
        }
    }

    #[test]
    fn calls_skipped_equal_the_calls_rendered_alone(
        session in arb_session(),
        picks in prop::collection::vec(0u16..1000, 1..40),
    ) {
        for strategy in strategies() {
            let mut replay = strategy.open();
            for k in picked_calls(&session, &picks) {
                check(strategy.as_ref(), replay.as_mut(), &session, k)?;
            }
        }
    }

    #[test]
    fn a_session_that_gains_turns_equals_the_calls_rendered_alone(session in arb_session()) {
        for strategy in strategies() {
            let mut replay = strategy.open();
            let mut live = session.clone();
            live.turns.clear();
            for turn in &session.turns {
                if let Some(k) = calls(&live).last() {
                    check(strategy.as_ref(), replay.as_mut(), &live, k)?;
                }
                live.turns.push(turn.clone());
            }
            let last = calls(&live).last().unwrap_or(0);
            if calls(&session).len() > session.turns.len() {
                check(strategy.as_ref(), replay.as_mut(), &live, last)?;
            }
        }
    }
}

/// A call that cannot be made fails as a bad request, and leaves the replay usable.
#[test]
fn calls_past_the_session_are_bad_requests() {
    for session in recap_gen::generate_corpus(3, 4, 0..=6) {
        let last = calls(&session).last().unwrap();
        for strategy in strategies() {
            let mut replay = strategy.open();
            if last > 0 {
                assert_eq!(
                    replay.call(&session, last - 1, 0).unwrap().tail,
                    reference(strategy.as_ref(), &session, last - 1)
                );
            }
            for k in [last + 1, session.turns.len() + 1, usize::MAX] {
                let expected = RenderRequest::for_call(&session, k)
                    .map(|_| ())
                    .map_err(|e| RenderError::new("bad_request", e.to_string()));
                if expected.is_ok() {
                    continue;
                }
                let got = strategy.open().call(&session, k, 0).map(|_| ());
                assert_eq!(got, expected, "{} call {k}", strategy.spec());
            }
            assert_eq!(
                replay.call(&session, last, 0).unwrap().tail,
                reference(strategy.as_ref(), &session, last)
            );
        }
    }
}

/// Two sessions with the same id whose identical calls merge in one and not in the
/// other: each replay's pieces are its own session's.
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
        for session in [&a, &b, &a, &b] {
            let mut replay = strategy.open();
            for k in calls(session) {
                let got = replay.call(session, k, 0).unwrap().tail;
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
