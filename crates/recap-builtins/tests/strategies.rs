//! Requirements that concern several built-ins (API-001..003, SS-001, CMP-003, ERR-003)
//! and the behaviour of `per-turn-summary` and `rolling-window` beyond the worked example.

use recap_core::{Message, RenderRequest, Session, Value};
use recap_gen::builder::{SessionBuilder, TurnBuilder, value};
use serde_json::json;

const MISSION: &str = "Count the refunds";

fn render(spec: &str, session: &Session, k: usize) -> Vec<Message> {
    let strategy = recap_builtins::registry().build(spec).unwrap();
    recap_core::render_call(strategy.as_ref(), session, k).unwrap()
}

fn v(j: serde_json::Value) -> Value {
    value(j)
}

#[test]
fn api_001_compression_on_is_single_user_coalesced_with_defaults() {
    let registry = recap_builtins::registry();
    let default = registry.build("single-user-coalesced").unwrap();
    let explicit = registry
        .build("single-user-coalesced:println_limit=15,tool_call_limit=20")
        .unwrap();
    assert_eq!(default.spec(), explicit.spec());
    let info = registry.get("single-user-coalesced").unwrap();
    let defaults: Vec<_> = info
        .options
        .iter()
        .map(|o| (o.key.as_str(), o.default.as_str()))
        .collect();
    assert_eq!(
        defaults,
        [("println_limit", "15"), ("tool_call_limit", "20")]
    );
}

#[test]
fn api_002_custom_limits_are_options_of_the_spec() {
    let s = SessionBuilder::new(MISSION)
        .turn(
            TurnBuilder::ok("(calls)")
                .call("a", Value::Nil, None)
                .call("b", Value::Nil, None)
                .prints(["1", "2"]),
        )
        .build();
    let msgs = render(
        "single-user-coalesced:println_limit=1,tool_call_limit=1",
        &s,
        1,
    );
    assert_eq!(
        msgs[1].content,
        format!("{MISSION}\n\n; Tool calls:\n;   b()\n; Output:\n2\n\nTurns left: 4")
    );
}

#[test]
fn api_003_compression_off_is_full_history() {
    let s = SessionBuilder::new(MISSION)
        .turn(TurnBuilder::ok("(a)").print("x"))
        .build();
    let msgs = render("full-history", &s, 1);
    assert_eq!(
        msgs,
        vec![
            Message::system(""),
            Message::user(MISSION),
            Message::assistant("```clojure\n(a)\n```"),
            Message::user("x\n\nTurns left: 4"),
        ]
    );
}

#[test]
fn ss_001_single_shot_is_not_compressed_by_any_builtin() {
    let s = SessionBuilder::new(MISSION)
        .system("sys")
        .max_turns(1)
        .turn(TurnBuilder::ok("(return 1)").result(v(json!(1))))
        .build_validated()
        .unwrap();
    let full = render("full-history", &s, 0);
    for spec in recap_builtins::SPEC_BUILTINS {
        assert_eq!(render(spec, &s, 0), full, "{spec}");
    }
    // Even a request assembled by hand past the budget is not compressed.
    let request = RenderRequest {
        system_prompt: "sys",
        mission: MISSION,
        max_turns: 1,
        tools: &s.tools,
        data: &s.data,
        form: recap_core::Form::Ptc,
        turns: &s.turns,
        chat_turns: &[],
    };
    let full = recap_history::render(&request);
    assert_eq!(recap_single_user_coalesced::render(&request), full);
    assert_eq!(recap_per_turn_summary::render(&request), full);
    assert_eq!(
        recap_rolling_window::RollingWindow::default().render_messages(&request),
        full
    );
}

fn with_failure() -> Session {
    SessionBuilder::new(MISSION)
        .max_turns(4)
        .turn(
            TurnBuilder::ok("(def r (tool/refunds))")
                .call("refunds", Value::Nil, Some(v(json!([1, 2, 3]))))
                .def("r", v(json!([1, 2, 3]))),
        )
        .turn(TurnBuilder::failed("(count-all r)", "Undefined symbol: count-all").print("before"))
        .turn(TurnBuilder::ok("(println (count r))").print("3"))
        .build_validated()
        .unwrap()
}

#[test]
fn cmp_003_failed_turns_keep_full_assistant_user_pairs() {
    let s = with_failure();
    for spec in [
        "per-turn-summary",
        "full-history",
        "rolling-window:window=2",
    ] {
        let msgs = render(spec, &s, 3);
        let at = msgs
            .iter()
            .position(|m| m.content == "```clojure\n(count-all r)\n```")
            .unwrap_or_else(|| panic!("{spec}: failed turn's reply missing"));
        assert!(
            msgs[at + 1]
                .content
                .contains("Error: Undefined symbol: count-all"),
            "{spec}"
        );
    }
}

#[test]
fn err_003_error_message_is_in_the_user_message_after_the_failed_assistant() {
    let s = with_failure();
    let msgs = render("per-turn-summary", &s, 2);
    assert_eq!(
        msgs[5],
        Message::user("Error: Undefined symbol: count-all\n\nTurns left: 2")
    );
    // full-history shows the failed turn's prints too.
    let msgs = render("full-history", &s, 2);
    assert_eq!(
        msgs[5],
        Message::user("before\n\nError: Undefined symbol: count-all\n\nTurns left: 2")
    );
}

#[test]
fn per_turn_summary_drops_samples_only_for_the_turn_that_printed() {
    let s = with_failure();
    let msgs = render("per-turn-summary", &s, 3);
    assert_eq!(
        msgs[2].content,
        "; Tool calls:\n;   refunds() -> list[3]\n; Defined: r = list[3], sample: [1 2 3]"
    );
    assert_eq!(msgs[6].content, "; No tool calls made\n; Output:\n3");
    assert_eq!(
        msgs[7].content,
        "⚠️ FINAL TURN - you must call (return result) or (fail response) next."
    );
}

#[test]
fn rolling_window_folds_older_turns_with_failures_and_no_turns_line() {
    let s = with_failure();
    let msgs = render("rolling-window:window=1", &s, 3);
    assert_eq!(
        msgs[1].content,
        format!(
            "{MISSION}\n\n; Tool calls:\n;   refunds() -> list[3]\n; Defined: r = list[3], sample: [1 2 3]\n\n\
             ---\nYour previous attempt:\n```clojure\n(count-all r)\n```\n\nError: Undefined symbol: count-all\n---"
        )
    );
    assert_eq!(msgs.len(), 4);
    assert_eq!(
        msgs[3].content,
        "3\n\n⚠️ FINAL TURN - you must call (return result) or (fail response) next."
    );
}

#[test]
fn rolling_window_with_only_failed_older_turns_has_no_summary() {
    let s = SessionBuilder::new(MISSION)
        .turn(TurnBuilder::failed("(a)", "e1"))
        .turn(TurnBuilder::ok("(b)"))
        .build();
    let msgs = render("rolling-window:window=1", &s, 2);
    assert_eq!(
        msgs[1].content,
        format!("{MISSION}\n\n---\nYour previous attempt:\n```clojure\n(a)\n```\n\nError: e1\n---")
    );
}

#[test]
fn rolling_window_keeps_recorded_feedback_of_kept_turns() {
    let s = SessionBuilder::new(MISSION)
        .turn(TurnBuilder::ok("(a)"))
        .turn(TurnBuilder::ok("(b)").feedback("Recorded feedback"))
        .build();
    let msgs = render("rolling-window:window=1", &s, 2);
    assert_eq!(msgs[3], Message::user("Recorded feedback"));
}
