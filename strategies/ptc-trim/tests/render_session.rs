//! `ptc-trim` renders only what it keeps, reading the transcript in place (and, through
//! `render_session`, from per-session token counts). These properties hold it to the
//! plain definition: the trim run over the rendered full-history transcript. The
//! token-triggered configurations matter most: only they consult the counts.

use proptest::prelude::*;
use recap_core::invariants::calls;
use recap_core::{Message, RenderRequest, Session, SessionState, StrategySpec};
use recap_core::{Strategy as _, Value};
use recap_ptc_trim::{PtcTrim, trim};

fn strategies() -> impl Strategy<Value = PtcTrim> {
    (
        prop::option::of(1u32..=6),
        1u32..=3,
        any::<bool>(),
        prop::option::of(1u32..=600),
    )
        .prop_map(|(turns, keep, initial, tokens)| {
            let mut spec = format!("ptc-trim:keep_recent_turns={keep},keep_initial_user={initial}");
            if let Some(t) = turns {
                spec.push_str(&format!(",trigger_turns={t}"));
            }
            if let Some(t) = tokens {
                spec.push_str(&format!(",trigger_tokens={t}"));
            }
            PtcTrim::from_spec(&StrategySpec::parse(&spec).unwrap()).unwrap()
        })
}

/// The definition: full-history's prompt, its transcript trimmed by `trim::run`.
fn reference(
    strategy: &PtcTrim,
    request: &RenderRequest<'_>,
) -> (Vec<Message>, Option<trim::TrimStats>) {
    let mut full = recap_full_history::render(request);
    if request.max_turns <= 1 {
        return (full, None);
    }
    let transcript = full.split_off(1);
    let turn = request.turns.len() as u64 + 1;
    let (kept, stats) = trim::run(&transcript, turn, &strategy.config);
    full.extend(kept.into_iter().map(|i| transcript[i].clone()));
    (full, Some(stats))
}

fn check(
    strategy: &PtcTrim,
    session: &Session,
    k: usize,
    state: &mut SessionState,
) -> Result<(), TestCaseError> {
    let request = RenderRequest::for_call(session, k).unwrap();
    let (expected, _) = reference(strategy, &request);
    let got = strategy.render_session(session, k, state).unwrap();
    prop_assert_eq!(
        &got,
        &expected,
        "{} on {} call {}",
        strategy.spec(),
        session.id,
        k
    );
    Ok(())
}

/// `session` with the same id but every reply and print changed in length, so cached
/// counts of the other would trim elsewhere.
fn same_id_other_content(session: &Session) -> Session {
    let mut other = session.clone();
    for (i, turn) in other.turns.iter_mut().enumerate() {
        turn.raw_response = "x".repeat(i * 37 % 400);
        turn.prints = vec!["y".repeat(i * 53 % 300)];
        turn.feedback = None;
        for def in &mut turn.definitions {
            def.value = Some(Value::Int(1));
        }
    }
    other
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, .. ProptestConfig::default() })]

    #[test]
    fn render_equals_the_trim_over_the_rendered_transcript(
        s in recap_gen::arb_session(),
        strategy in strategies(),
    ) {
        for k in calls(&s) {
            let request = RenderRequest::for_call(&s, k).unwrap();
            let (expected, stats) = reference(&strategy, &request);
            prop_assert_eq!(&strategy.render(&request).unwrap(), &expected);
            let (with_stats, got_stats) = strategy.render_with_stats(&request);
            prop_assert_eq!(&with_stats, &expected);
            prop_assert_eq!(got_stats, stats);
        }
    }

    #[test]
    fn render_session_in_order_out_of_order_and_repeated(
        s in recap_gen::arb_session(),
        strategy in strategies(),
        picks in prop::collection::vec(0u16..1000, 1..30),
    ) {
        let mut state = SessionState::new();
        for k in calls(&s) {
            check(&strategy, &s, k, &mut state)?;
        }
        let n = calls(&s).len();
        let mut state = SessionState::new();
        for p in picks {
            check(&strategy, &s, p as usize * n / 1000, &mut state)?;
        }
    }

    #[test]
    fn render_session_with_one_state_for_several_sessions(
        a in recap_gen::arb_session(),
        b in recap_gen::arb_session(),
        strategy in strategies(),
        picks in prop::collection::vec((0u8..3, 0u16..1000), 1..30),
    ) {
        let c = same_id_other_content(&a);
        let mut state = SessionState::new();
        for (which, p) in picks {
            let session = [&a, &b, &c][which as usize];
            let k = p as usize * calls(session).len() / 1000;
            check(&strategy, session, k, &mut state)?;
        }
    }

    #[test]
    fn render_session_while_the_session_gains_turns(
        s in recap_gen::arb_session(),
        strategy in strategies(),
        reserve in any::<bool>(),
    ) {
        let mut state = SessionState::new();
        let mut live = s.clone();
        live.turns.clear();
        if reserve {
            live.turns.reserve(s.turns.len());
        } else {
            live.turns.shrink_to_fit();
        }
        for turn in &s.turns {
            for k in calls(&live) {
                check(&strategy, &live, k, &mut state)?;
            }
            live.turns.push(turn.clone());
        }
        for k in calls(&live).rev() {
            check(&strategy, &live, k, &mut state)?;
        }
    }
}

/// A call that cannot be made fails as the default `render_session` does.
#[test]
fn calls_past_the_session_are_bad_requests() {
    let strategy =
        PtcTrim::from_spec(&StrategySpec::parse("ptc-trim:trigger_tokens=5").unwrap()).unwrap();
    for session in recap_gen::generate_corpus(3, 4, 0..=6) {
        let mut state = SessionState::new();
        for k in [
            session.turns.len() + 1,
            session.max_turns as usize,
            usize::MAX,
        ] {
            let Err(expected) = RenderRequest::for_call(&session, k) else {
                continue;
            };
            let err = strategy
                .render_session(&session, k, &mut state)
                .unwrap_err();
            assert_eq!(
                (err.kind.as_str(), err.message),
                ("bad_request", expected.to_string())
            );
        }
        let last = calls(&session).last().unwrap();
        let request = RenderRequest::for_call(&session, last).unwrap();
        assert_eq!(
            strategy.render_session(&session, last, &mut state).unwrap(),
            strategy.render(&request).unwrap()
        );
    }
}
