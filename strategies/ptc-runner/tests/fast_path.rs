//! The fast path (the strategy's replay, through `RenderCache`: a call rendered alone,
//! and every call of a session through one replay) gives the reference renderer's
//! bytes (`render_with_stats`, i.e. `suc::to_messages`, the code the golden cases check)
//! on generated sessions, with and without a println tool, an empty mission, small
//! limits, and calls skipped.

use proptest::prelude::*;
use recap_core::invariants::calls;
use recap_core::{
    DefKind, Definition, Message, RenderRequest, Replay, Session, Strategy as _, StrategySpec,
    ToolSpec, Value, render_call,
};
use recap_ptc_runner::PtcRunner;

fn strategies() -> impl Strategy<Value = PtcRunner> {
    (1u32..=4, 1u32..=4, 1u32..=3, 5u32..=80).prop_map(|(p, t, s, w)| {
        PtcRunner::from_spec(
            &StrategySpec::parse(&format!(
                "ptc-runner:println_limit={p},tool_call_limit={t},sample_limit={s},sample_printable_limit={w}"
            ))
            .unwrap(),
        )
        .unwrap()
    })
}

/// Generated sessions, varied where the renderer branches: a println tool (Output
/// section, no `user/` samples), an empty mission, definitions that are not shown
/// (nil, `[]`, `{}`), unrecorded, or redefined from value to function.
fn sessions() -> impl Strategy<Value = Session> {
    (
        recap_gen::arb_session(),
        any::<bool>(),
        any::<bool>(),
        any::<bool>(),
    )
        .prop_map(|(mut s, println, empty_mission, odd_defs)| {
            if println {
                s.tools.insert(
                    "println".to_string(),
                    ToolSpec {
                        signature: Some("(msg :string) -> :nil".to_string()),
                        description: None,
                        parameters: None,
                    },
                );
            }
            if empty_mission {
                s.mission.clear();
            }
            if odd_defs {
                let odd = [
                    (DefKind::Def, Some(Value::Nil)),
                    (DefKind::Def, Some(Value::List(vec![]))),
                    (DefKind::Def, Some(Value::Map(vec![]))),
                    (DefKind::Def, None),
                    (DefKind::Defn, None),
                    (DefKind::Def, Some(Value::Int(3))),
                ];
                for (i, turn) in s.turns.iter_mut().enumerate() {
                    let (kind, value) = odd[i % odd.len()].clone();
                    turn.definitions.push(Definition {
                        name: format!("odd-{}", i % 3),
                        kind,
                        docstring: (i % 2 == 0).then(|| "doc".to_string()),
                        value,
                    });
                }
            }
            s
        })
}

fn reference(strategy: &PtcRunner, s: &Session, k: usize) -> Vec<Message> {
    strategy
        .render_with_stats(&RenderRequest::for_call(s, k).unwrap())
        .0
}

/// Call `k` through `replay`, whole.
fn through(replay: &mut Box<dyn Replay>, s: &Session, k: usize) -> Vec<Message> {
    replay.call(s, k, 0).unwrap().tail
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, .. ProptestConfig::default() })]

    #[test]
    fn a_call_alone_equals_the_reference(s in sessions(), strategy in strategies()) {
        for k in calls(&s) {
            let fast = render_call(&strategy, &s, k).unwrap();
            prop_assert_eq!(fast, reference(&strategy, &s, k), "call {}", k);
        }
    }

    #[test]
    fn a_replay_equals_the_reference_in_order_and_skipping_calls(
        s in sessions(),
        strategy in strategies(),
        picks in prop::collection::vec(0usize..1000, 1..30),
    ) {
        let mut replay = strategy.open();
        for k in calls(&s) {
            let got = through(&mut replay, &s, k);
            prop_assert_eq!(got, reference(&strategy, &s, k), "in order, call {}", k);
        }
        let all = calls(&s);
        let mut picked: Vec<usize> = picks.iter().map(|p| all.start + p * all.len() / 1000).collect();
        picked.sort_unstable();
        picked.dedup();
        let mut replay = strategy.open();
        for k in picked {
            let got = through(&mut replay, &s, k);
            prop_assert_eq!(got, reference(&strategy, &s, k), "picked call {}", k);
        }
    }
}

/// Long names that share their first and last 8 bytes are still different names, and
/// a redefinition of one of them replaces only it.
#[test]
fn long_names_alike_at_both_ends_stay_apart() {
    let def = |name: &str, v: i64| serde_json::json!({"name": name, "kind": "def", "value": v});
    let s = Session::from_json(&serde_json::json!({
        "id": "long-names",
        "system_prompt": "",
        "mission": "m",
        "max_turns": 5,
        "turns": [
            {"number": 1, "success": true, "program": "(def …)",
             "definitions": [def("abcdefgh-one-ijklmnop", 1), def("abcdefgh-two-ijklmnop", 2)]},
            {"number": 2, "success": true, "program": "(def …)",
             "definitions": [def("abcdefgh-two-ijklmnop", 3)]}
        ]
    }))
    .unwrap();
    let strategy = PtcRunner::default();
    let mut replay = strategy.open();
    let mut last = Vec::new();
    for k in calls(&s) {
        last = through(&mut replay, &s, k);
        assert_eq!(last, reference(&strategy, &s, k), "call {k}");
    }
    assert!(
        last[1]
            .content
            .contains("abcdefgh-one-ijklmnop         ; = integer, sample: 1\n")
    );
    assert!(
        last[1]
            .content
            .contains("abcdefgh-two-ijklmnop         ; = integer, sample: 3\n")
    );
}

/// A long session rendered in order through one state: its call lines outgrow the
/// arena's slack, so the lines no longer shown are cut off along the way.
#[test]
fn a_long_session_in_order_equals_the_reference() {
    let s = recap_gen::generate_corpus(11, 1, 600..=600)
        .pop()
        .expect("one session");
    let strategy = PtcRunner::from_spec(
        &StrategySpec::parse("ptc-runner:tool_call_limit=40,println_limit=3").unwrap(),
    )
    .unwrap();
    let mut replay = strategy.open();
    for k in calls(&s) {
        let got = through(&mut replay, &s, k);
        let expected = if k % 25 == 0 || k + 1 == s.turns.len() {
            reference(&strategy, &s, k)
        } else {
            render_call(&strategy, &s, k).unwrap()
        };
        assert_eq!(got, expected, "call {k}");
    }
}

/// A call identical to the one before it shares its printed line; one that is only
/// equal by `==` (`0.0` and `-0.0`) prints its own, across turns and in any order.
#[test]
fn repeated_calls_share_a_line_only_when_identical() {
    let call = |x: serde_json::Value| serde_json::json!({"name": "probe", "args": {"x": x}});
    let zero: serde_json::Value = serde_json::from_str("0.0").unwrap();
    let minus_zero: serde_json::Value = serde_json::from_str("-0.0").unwrap();
    let s = Session::from_json(&serde_json::json!({
        "id": "repeats",
        "system_prompt": "",
        "mission": "m",
        "max_turns": 6,
        "turns": [
            {"number": 1, "success": true, "program": "(probe)",
             "tool_calls": [call(zero.clone()), call(zero.clone()), call(minus_zero.clone())]},
            {"number": 2, "success": true, "program": "(probe)",
             "tool_calls": [call(minus_zero.clone()), call(zero.clone())]},
            {"number": 3, "success": true, "program": "(probe)",
             "tool_calls": [call(zero.clone())]}
        ]
    }))
    .unwrap();
    let strategy = PtcRunner::default();
    let mut replay = strategy.open();
    for k in calls(&s) {
        let got = through(&mut replay, &s, k);
        assert_eq!(got, reference(&strategy, &s, k), "call {k}");
    }
    let last = render_call(&strategy, &s, 3).unwrap();
    let lines: Vec<&str> = last[1]
        .content
        .lines()
        .filter(|l| l.starts_with(";   probe"))
        .collect();
    assert_eq!(
        lines,
        [
            ";   probe({:x 0.0})",
            ";   probe({:x 0.0})",
            ";   probe({:x -0.0})",
            ";   probe({:x -0.0})",
            ";   probe({:x 0.0})",
            ";   probe({:x 0.0})",
        ]
    );
}
