//! `ptc-trim` over the full-history transcript of a recorded session.

use recap_core::{Message, RenderRequest, Role, Session, StrategySpec};
use recap_ptc_trim::{PtcTrim, build};
use serde_json::json;

fn session(turns: usize) -> Session {
    let turns: Vec<_> = (1..=turns)
        .map(|n| json!({"number": n, "success": true, "program": format!("(step {n})"), "prints": [format!("out {n}")]}))
        .collect();
    Session::from_json(&json!({
        "id": "s", "system_prompt": "sys", "mission": "the mission", "max_turns": 12, "turns": turns
    }))
    .unwrap()
}

fn render(spec: &str, s: &Session, k: usize) -> Vec<Message> {
    let strategy = PtcTrim::from_spec(&StrategySpec::parse(spec).unwrap()).unwrap();
    strategy.render(&RenderRequest::for_call(s, k).unwrap())
}

fn contents(msgs: &[Message]) -> Vec<&str> {
    msgs.iter().map(|m| m.content.as_str()).collect()
}

#[test]
fn below_the_trigger_it_is_full_history() {
    let s = session(7);
    let full = recap_history::render(&RenderRequest::for_call(&s, 7).unwrap());
    // The call after 7 turns generates turn 8: not past the default trigger of 8.
    assert_eq!(render("ptc-trim", &s, 7), full);
}

#[test]
fn past_the_trigger_keeps_mission_and_recent_tail() {
    let s = session(8);
    let msgs = render("ptc-trim", &s, 8);
    // Head (mission) + the last 6 transcript messages, realigned to start with USER.
    assert_eq!(
        contents(&msgs),
        vec![
            "sys",
            "the mission",
            "out 6\n\nTurns left: 6",
            "```clojure\n(step 7)\n```",
            "out 7\n\nTurns left: 5",
            "```clojure\n(step 8)\n```",
            "out 8\n\nTurns left: 4",
        ]
    );
    // Faithful to the original: two USER messages in a row once it trims.
    assert_eq!((msgs[1].role, msgs[2].role), (Role::User, Role::User));
}

#[test]
fn token_trigger_replaces_the_turn_trigger() {
    let s = session(3);
    // 3 turns: transcript tokens well over 5; turn 4 is not past 8, but tokens fire.
    let msgs = render("ptc-trim:trigger_tokens=5,keep_recent_turns=1", &s, 3);
    assert_eq!(
        contents(&msgs),
        vec!["sys", "the mission", "out 3\n\nTurns left: 9"]
    );
    // With only a turn trigger of 8 nothing happens at turn 4.
    assert_eq!(render("ptc-trim:trigger_turns=8", &s, 3).len(), 8);
}

#[test]
fn without_the_initial_user_the_mission_goes() {
    let s = session(5);
    let msgs = render(
        "ptc-trim:trigger_turns=1,keep_recent_turns=1,keep_initial_user=false",
        &s,
        5,
    );
    assert_eq!(contents(&msgs), vec!["sys", "out 5\n\nTurns left: 7"]);
}

#[test]
fn spec_strings_and_errors() {
    let strategy =
        build(&StrategySpec::parse("ptc-trim:trigger_tokens=100,keep_recent_turns=2").unwrap())
            .unwrap();
    assert_eq!(
        strategy.spec(),
        "ptc-trim:keep_recent_turns=2,trigger_tokens=100"
    );
    assert_eq!(
        build(&StrategySpec::parse("ptc-trim").unwrap())
            .unwrap()
            .spec(),
        "ptc-trim"
    );
    for (spec, needle) in [
        ("ptc-trim:keep_initial_user=yes", "expected true or false"),
        ("ptc-trim:trigger_turns=0", "expected an integer ≥ 1"),
        ("ptc-trim:window=3", "has no option \"window\""),
    ] {
        let err = build(&StrategySpec::parse(spec).unwrap())
            .err()
            .expect(spec);
        assert!(err.to_string().contains(needle), "{spec}: {err}");
    }
}
