//! `ptc-trim` renders only what it keeps, reading the transcript in place (and, through
//! its replay, from per-session token counts). These properties hold it to the plain
//! definition: the trim run over the rendered full-history transcript. The
//! token-triggered configurations matter most: only they consult the counts.

use proptest::prelude::*;
use recap_core::invariants::calls;
use recap_core::{Message, RenderRequest, Replay, Session, StrategySpec};
use recap_core::{Strategy as _, render_call};
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
    let mut full = recap_history::render(request);
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
    replay: &mut Box<dyn Replay>,
) -> Result<(), TestCaseError> {
    let request = RenderRequest::for_call(session, k).unwrap();
    let (expected, _) = reference(strategy, &request);
    let got = replay.call(session, k, 0).unwrap().tail;
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
            prop_assert_eq!(&strategy.render(&request), &expected);
            let (with_stats, got_stats) = strategy.render_with_stats(&request);
            prop_assert_eq!(&with_stats, &expected);
            prop_assert_eq!(got_stats, stats);
        }
    }

    #[test]
    fn a_replay_in_order_and_skipping_calls(
        s in recap_gen::arb_session(),
        strategy in strategies(),
        picks in prop::collection::vec(0u16..1000, 1..30),
    ) {
        let mut replay = strategy.open();
        for k in calls(&s) {
            check(&strategy, &s, k, &mut replay)?;
        }
        let n = calls(&s).len();
        let mut ks: Vec<usize> = picks.iter().map(|&p| p as usize * n / 1000).collect();
        ks.sort_unstable();
        ks.dedup();
        let mut replay = strategy.open();
        for k in ks {
            check(&strategy, &s, k, &mut replay)?;
        }
    }

    #[test]
    fn a_replay_while_the_session_gains_turns(
        s in recap_gen::arb_session(),
        strategy in strategies(),
    ) {
        let mut replay = strategy.open();
        let mut live = s.clone();
        live.turns.clear();
        for turn in &s.turns {
            if let Some(k) = calls(&live).last() {
                check(&strategy, &live, k, &mut replay)?;
            }
            live.turns.push(turn.clone());
        }
    }
}

/// A call that cannot be made is a bad request, and leaves the replay usable.
#[test]
fn calls_past_the_session_are_bad_requests() {
    let strategy =
        PtcTrim::from_spec(&StrategySpec::parse("ptc-trim:trigger_tokens=5").unwrap()).unwrap();
    for session in recap_gen::generate_corpus(3, 4, 0..=6) {
        let mut replay = strategy.open();
        for k in [
            session.turns.len() + 1,
            session.max_turns as usize,
            usize::MAX,
        ] {
            let Err(expected) = RenderRequest::for_call(&session, k) else {
                continue;
            };
            let err = replay.call(&session, k, 0).unwrap_err();
            assert_eq!(
                (err.kind.as_str(), err.message),
                ("bad_request", expected.to_string())
            );
        }
        let last = calls(&session).last().unwrap();
        assert_eq!(
            replay.call(&session, last, 0).unwrap().tail,
            render_call(&strategy, &session, last).unwrap()
        );
    }
}
