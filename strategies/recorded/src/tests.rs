use super::*;
use recap_core::Role;
use recap_gen::chat::{ChatSessionBuilder, ChatTurnBuilder};
use serde_json::json;

/// Three turns; turn 2 ends with Claude Code's compaction summary and the user's next
/// request.
fn compacted(record: Json) -> Session {
    ChatSessionBuilder::new("Fix the build.")
        .system("You are a coding agent.")
        .push(
            ChatTurnBuilder::says("Looking.")
                .call("c1", "bash", r#"{"cmd":"make"}"#)
                .result("c1", "error: missing semicolon"),
        )
        .push(
            ChatTurnBuilder::says("Patched.")
                .call("c2", "edit", r#"{"file":"a.c"}"#)
                .result("c2", "ok")
                .user("This session is being continued from a previous conversation. Summary: fixed a.c.")
                .user("Now run the tests."),
        )
        .push(
            ChatTurnBuilder::says("Running.")
                .call("c3", "bash", r#"{"cmd":"make test"}"#)
                .result("c3", "all passed"),
        )
        .meta(META_KEY, record)
        .build()
}

fn contents(messages: &[Message]) -> Vec<(Role, String)> {
    messages
        .iter()
        .map(|m| (m.role, m.content.to_string()))
        .collect()
}

fn render(session: &Session, k: usize) -> Result<Vec<Message>, RenderError> {
    recap_core::render_call(&Recorded, session, k)
}

#[test]
fn without_restarts_it_is_full_history() {
    let s = compacted(json!({"sent": "history"}));
    for k in 0..3 {
        let full = recap_history::render(&RenderRequest::for_call(&s, k).unwrap());
        assert_eq!(render(&s, k).unwrap(), full, "call {k}");
    }
}

#[test]
fn a_restart_starts_the_history_over_at_the_summary() {
    let s =
        compacted(json!({"sent": "history", "restarts": [{"after_turns": 2, "observation": 1}]}));
    // Before the compaction: everything.
    assert_eq!(
        render(&s, 1).unwrap(),
        recap_history::render(&RenderRequest::for_call(&s, 1).unwrap())
    );
    // After it: the system prompt, the summary and what followed it, then later turns.
    let after = render(&s, 2).unwrap();
    assert_eq!(
        contents(&after),
        [
            (Role::System, "You are a coding agent.".to_string()),
            (
                Role::User,
                "This session is being continued from a previous conversation. Summary: fixed a.c."
                    .to_string()
            ),
            (Role::User, "Now run the tests.".to_string()),
        ]
    );
    let last = render(&s, 3).unwrap();
    assert_eq!(last.len(), 5);
    assert_eq!(last[3].role, Role::Assistant);
    assert_eq!(last[4].tool_call_id.as_deref(), Some("c3"));
    // The mission is gone, as it was for the agent; the declared invariants hold.
    assert!(!last.iter().any(|m| m.content == "Fix the build."));
    for k in 0..3 {
        let messages = render(&s, k).unwrap();
        let ctx = recap_core::invariants::CheckContext {
            session: &s,
            k,
            messages: &messages,
            previous: None,
            second_render: Some(&messages),
            print_lines: None,
            sightings: None,
        };
        assert_eq!(
            recap_core::invariants::check(&Recorded.invariants(), &ctx),
            [],
            "call {k}"
        );
    }
}

#[test]
fn only_sessions_with_a_record_are_replayed() {
    let with = compacted(json!({"sent": "history"}));
    let mut without = with.clone();
    without.meta.clear();
    assert!(Recorded.applies_to(&with));
    assert!(!Recorded.applies_to(&without));
    let why = recap_core::strategy::not_applicable(&Recorded, &without).unwrap();
    assert!(why.contains("meta.recorded_context"), "{why}");
    // A PTC-Lisp session never, whatever its meta says.
    let mut ptc = recap_gen::builder::SessionBuilder::new("m").build();
    ptc.meta.insert(META_KEY.into(), json!({"sent": "history"}));
    assert!(!Recorded.applies_to(&ptc));
}

#[test]
fn malformed_records_fail_with_the_field_and_what_was_expected() {
    let cases = [
        (json!("history"), "expected an object"),
        (
            json!({"sent": "window"}),
            "meta.recorded_context.sent: expected \"history\"",
        ),
        (json!({}), "found nothing"),
        (
            json!({"sent": "history", "restart": []}),
            "meta.recorded_context.restart: unknown key",
        ),
        (
            json!({"sent": "history", "restarts": {}}),
            "expected a list of restarts",
        ),
        (
            json!({"sent": "history", "restarts": [{"after_turns": 2}]}),
            "restarts[0]: expected {\"after_turns\"",
        ),
        (
            json!({"sent": "history", "restarts": [{"after_turns": 9, "observation": 0}]}),
            "after_turns 9 is not a turn of the session (1..=3)",
        ),
        (
            json!({"sent": "history", "restarts": [{"after_turns": 2, "observation": 0}]}),
            "observation 0 of turn 2 is a tool result",
        ),
        (
            json!({"sent": "history", "restarts": [{"after_turns": 2, "observation": 5}]}),
            "turn 2 has 3 observations",
        ),
        (
            json!({"sent": "history", "restarts": [
                {"after_turns": 2, "observation": 1}, {"after_turns": 2, "observation": 2}]}),
            "restarts[1]: after_turns 2 does not follow",
        ),
    ];
    for (record, expected) in cases {
        let s = compacted(record.clone());
        assert!(
            Recorded.applies_to(&s),
            "a malformed record is reported, not skipped"
        );
        let e = render(&s, 1).unwrap_err();
        assert_eq!(e.kind, "bad_record");
        assert!(e.message.contains(expected), "{record}: {}", e.message);
    }
}

#[test]
fn it_has_no_options() {
    assert!(build(&StrategySpec::parse("recorded").unwrap()).is_ok());
    assert!(build(&StrategySpec::parse("recorded:window=2").unwrap()).is_err());
}

proptest::proptest! {
    /// With no restart the agent sent its whole history: `full-history`, call for call.
    #[test]
    fn a_record_without_restarts_is_full_history(mut s in recap_gen::arb_chat_session()) {
        s.meta.insert(META_KEY.into(), json!({"sent": "history"}));
        for k in 0..s.chat_turns.len() {
            let full = recap_history::render(&RenderRequest::for_call(&s, k).unwrap());
            proptest::prop_assert_eq!(render(&s, k).unwrap(), full);
        }
    }

    /// A restart at any USER observation: calls before it are full-history's, calls
    /// after it are the system prompt, the summary onwards and the later turns — a
    /// suffix of full-history's prompt.
    #[test]
    fn a_restart_cuts_full_history_at_the_summary(mut s in recap_gen::arb_chat_session()) {
        let at = s.chat_turns.iter().enumerate().find_map(|(t, turn)| {
            turn.observations
                .iter()
                .position(|o| matches!(o, recap_core::Observation::User { .. }))
                .map(|j| (t + 1, j))
        });
        let Some((after_turns, observation)) = at else { return Ok(()); };
        s.meta.insert(
            META_KEY.into(),
            json!({"sent": "history", "restarts": [{"after_turns": after_turns, "observation": observation}]}),
        );
        for k in 0..s.chat_turns.len() {
            let full = recap_history::render(&RenderRequest::for_call(&s, k).unwrap());
            let got = render(&s, k).unwrap();
            if k < after_turns {
                proptest::prop_assert_eq!(got, full);
            } else {
                proptest::prop_assert_eq!(&got[0], &full[0]);
                proptest::prop_assert!(got.len() < full.len());
                proptest::prop_assert_eq!(&got[1..], &full[full.len() - (got.len() - 1)..]);
                proptest::prop_assert_eq!(
                    &got[1].content,
                    &s.chat_turns[after_turns - 1].observations[observation].content().to_string()
                );
            }
        }
    }
}

/// One replay across every call: the prompts the record gives call by call, before and
/// after a restart; a malformed record fails every call.
#[test]
fn a_replay_renders_what_the_record_gives_at_every_call() {
    for record in [
        json!({"sent": "history"}),
        json!({"sent": "history", "restarts": [{"after_turns": 2, "observation": 1}]}),
        json!({"sent": "history", "restarts": [{"after_turns": 2, "observation": 2}]}),
    ] {
        let s = compacted(record.clone());
        let want = |k| Record::of(&s).unwrap().prompt(&s, k).unwrap();
        let mut replay = Recorded.open();
        for k in 0..=3 {
            let got = replay.call(&s, k, 0).unwrap().tail;
            assert_eq!(got, want(k), "{record}: call {k}");
        }
    }
    let bad =
        compacted(json!({"sent": "history", "restarts": [{"after_turns": 9, "observation": 0}]}));
    let mut replay = Recorded.open();
    for k in 0..=3 {
        let err = replay.call(&bad, k, 0).unwrap_err();
        assert!(err.to_string().contains("after_turns 9"), "call {k}: {err}");
    }
}

#[test]
fn a_condensation_drops_what_it_forgot_and_sends_its_summary() {
    // Full history at call 3: 0 system, 1 mission, 2 "Looking.", 3 result c1,
    // 4 "Patched.", 5 result c2, 6 summary text, 7 "Now run the tests.", 8-9 turn 3.
    let s = compacted(json!({"sent": "history", "condensations": [
        {"after_turns": 2, "drop": [2, 3], "summary": "Fixed a.c earlier.", "summary_at": 2}
    ]}));
    assert_eq!(
        render(&s, 1).unwrap(),
        recap_history::render(&RenderRequest::for_call(&s, 1).unwrap()),
        "before the condensation: everything"
    );
    let after = contents(&render(&s, 2).unwrap());
    assert_eq!(after[0].1, "You are a coding agent.");
    assert_eq!(after[1].1, "Fix the build.");
    assert_eq!(after[2], (Role::User, "Fixed a.c earlier.".to_string()));
    assert_eq!(after[3], (Role::Assistant, "Patched.".to_string()));
    assert!(!after.iter().any(|(_, c)| c == "Looking."));
    // Later calls keep the cut and grow from it.
    let last = render(&s, 3).unwrap();
    assert_eq!(last.len(), 10 - 2 + 1);
    assert_eq!(last.last().unwrap().tool_call_id.as_deref(), Some("c3"));
}

#[test]
fn malformed_condensations_fail_with_the_field_and_what_was_expected() {
    for (record, expected) in [
        (
            json!({"sent": "history", "condensations": [{"after_turns": 2, "drop": [0]}]}),
            "condensations[0]: `drop` holds 0",
        ),
        (
            json!({"sent": "history", "condensations": [{"after_turns": 1, "drop": [9]}]}),
            "`drop` holds 9: expected positions 1..4",
        ),
        (
            json!({"sent": "history", "condensations": [{"after_turns": 9, "drop": []}]}),
            "after_turns 9 is past the session's 3 turns",
        ),
        (
            json!({"sent": "history", "condensations": [
                {"after_turns": 1, "drop": [2], "summary": "s", "summary_at": 9}]}),
            "`summary_at` must be a position 1..=3",
        ),
        (
            json!({"sent": "history", "restarts": [], "condensations": [{"after_turns": 1}]}),
            "unknown key",
        ),
    ] {
        let e = render(&compacted(record), 2).unwrap_err();
        assert!(e.to_string().contains(expected), "{e} / {expected}");
    }
}
