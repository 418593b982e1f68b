//! openai-chat importer on hand-written transcripts of every supported shape, and on
//! broken ones: the chat form (SPEC 11.1), with tool roles, ids, calls and reasoning
//! kept, and a counted problem for everything that is not.

mod common;

use common::{counts, fixture, import, jsonl, one_problem, pinned, read_back};
use recap_core::{Observation, Session};
use recap_import::{Import, Kind, Severity};

fn file(name: &str) -> Import {
    let imp = import(Kind::OpenaiChat, &[fixture(&format!("openai-chat/{name}"))]);
    common::documented(&imp);
    imp
}

fn tool(id: &str, name: Option<&str>, content: &str) -> Observation {
    Observation::Tool {
        tool_call_id: id.into(),
        name: name.map(Into::into),
        content: content.into(),
        is_error: false,
    }
}

#[test]
fn bare_message_list_with_tool_calls() {
    let imp = file("bare_list.json");
    assert!(imp.problems.is_empty(), "{:#?}", imp.problems);
    let s = &read_back(&jsonl(&imp))[0];
    assert_eq!(s.id, "bare_list:1");
    assert_eq!(s.budget(), None, "a missing budget is null");
    assert_eq!(s.system_prompt, "You are a careful assistant.");
    assert_eq!(s.mission, "What is the weather in Oslo?");
    assert_eq!(s.chat_turns.len(), 2);
    let t = &s.chat_turns[0];
    assert_eq!(t.assistant.content, None);
    let call = &t.assistant.tool_calls[0];
    assert_eq!(
        (call.id.as_str(), call.name.as_str()),
        ("call_a", "get_weather")
    );
    assert_eq!(
        call.arguments, r#"{"city": "Oslo", "units": "C"}"#,
        "as the model wrote it"
    );
    assert_eq!(t.observations, [tool("call_a", None, "4 degrees, rain")]);
    let last = &s.chat_turns[1];
    assert_eq!(
        last.assistant.content.as_deref(),
        Some("It is 4 °C and raining in Oslo.")
    );
    assert!(last.observations.is_empty());
    assert_eq!(last.usage.as_ref().unwrap()["input_tokens"], 80);
    assert_eq!(s.meta["import"]["importer"], "openai-chat");
}

#[test]
fn reasoning_names_ids_and_object_arguments_are_kept() {
    let imp = file("reasoning.jsonl");
    assert_eq!(
        counts(&imp),
        pinned(&[("lossy:dropped-key", 1)]),
        "{:#?}",
        imp.problems
    );
    // A participant's name has no place in the chat form: counted, not silent.
    let p = one_problem(&imp, "`messages[].name`", Severity::Lossy);
    assert_eq!(p.line, Some(1));
    let s: &Session = &imp.sessions[0];
    assert_eq!(s.id, "r-1");
    assert_eq!(
        s.tools["lookup"].description.as_deref(),
        Some("Looks a word up")
    );
    let t = &s.chat_turns[0];
    assert_eq!(
        t.assistant.reasoning.as_deref(),
        Some("A dictionary lookup is safest.")
    );
    // Stored as an object: written back compactly, keys in their recorded order.
    assert_eq!(
        t.assistant.tool_calls[0].arguments,
        r#"{"word":"lighthouse","lang":"en","a_last":true}"#
    );
    assert_eq!(
        t.observations,
        [tool("call_9", Some("lookup"), "a tower with a light")]
    );
    assert_eq!(read_back(&jsonl(&imp)).len(), 1);
}

#[test]
fn wrapped_conversations_under_messages_or_the_one_list_field() {
    let imp = file("wrapped.json");
    assert!(imp.problems.is_empty(), "{:#?}", imp.problems);
    let ids: Vec<&str> = imp.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        ["conv-1", "wrapped:2"],
        "the object's own id, else file:record"
    );
    let s = &imp.sessions[0];
    assert_eq!(s.meta["model"], "gpt-test", "other fields go to meta");
    assert_eq!(s.meta["import"]["record"], 1);
    assert_eq!(
        s.mission, "Add 2 and 3,\nthen double it.",
        "text parts joined by newlines"
    );
    let t = &s.chat_turns[0];
    assert_eq!(t.assistant.content.as_deref(), Some("Adding first."));
    assert_eq!(
        t.assistant.tool_calls[1].arguments, "",
        "empty arguments stay empty"
    );
    assert_eq!(t.observations.len(), 3);
    assert_eq!(
        t.observations[2],
        Observation::User {
            content: "Now double.".into(),
            environment: false
        }
    );
    let other = &imp.sessions[1];
    assert_eq!(other.mission, "Say hi.");
    assert_eq!(other.meta["outcome"], "solved");
    assert!(!other.meta.contains_key("transcript"));
    assert_eq!(read_back(&jsonl(&imp)).len(), 2);
}

#[test]
fn json_lines_and_every_kind_of_bad_record() {
    let imp = file("conversations.jsonl");
    let ids: Vec<&str> = imp.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["conversations:1", "conversations:2"]);
    assert_eq!(imp.sessions[1].meta["tags"][0], "easy");
    let at = |text: &str| {
        let p = one_problem(&imp, text, Severity::Skipped);
        assert!(p.file.ends_with("conversations.jsonl"));
        p.line
    };
    assert_eq!(at("truncated JSON record"), Some(3));
    assert_eq!(at("no message list"), Some(4));
    assert_eq!(at("several fields hold message lists (a, b)"), Some(5));
    assert_eq!(at("no user message with text"), Some(6));
    assert_eq!(at("or an object holding one), got a string"), Some(7));
    assert_eq!(at("`messages` must be a list"), Some(9));
    one_problem(
        &imp,
        "a response before the first user message",
        Severity::Lossy,
    );
    assert_eq!(
        counts(&imp),
        pinned(&[
            ("skipped:no-mission", 1),
            ("skipped:not-a-conversation", 4),
            ("skipped:truncated", 1),
            ("lossy:before-mission", 1),
        ])
    );
}

#[test]
fn json_lines_of_bare_lists_under_a_json_name() {
    let imp = file("lists.json");
    assert!(imp.problems.is_empty(), "{:#?}", imp.problems);
    let missions: Vec<&str> = imp.sessions.iter().map(|s| s.mission.as_str()).collect();
    assert_eq!(missions, ["One?", "Two?"]);
}

#[test]
fn a_truncated_array_keeps_the_conversations_before_the_cut() {
    let imp = file("truncated.json");
    assert_eq!(imp.sessions.len(), 1);
    assert_eq!(imp.sessions[0].mission, "First conversation.");
    let p = one_problem(&imp, "truncated JSON record", Severity::Skipped);
    assert_eq!((p.line, p.record), (Some(3), Some(2)));
    assert!(
        p.to_string()
            .contains("truncated.json:3: record 2: skipped:"),
        "{p}"
    );
}

#[test]
fn broken_messages_are_reported_one_by_one() {
    let imp = file("broken_messages.json");
    assert_eq!(imp.sessions.len(), 1);
    let s = &imp.sessions[0];
    assert_eq!(s.mission, "Search for cats.");
    assert_eq!(s.chat_turns.len(), 2);
    assert_eq!(
        counts(&imp),
        pinned(&[
            ("lossy:arguments-not-json", 1),
            ("lossy:bad-content", 1),
            ("lossy:bad-message", 1),
            ("lossy:bad-tool-call", 1),
            ("lossy:before-mission", 1),
            ("lossy:made-up-call-id", 1),
            ("lossy:media", 1),
            ("lossy:no-result", 1),
            ("lossy:unknown-call-id", 1),
            ("lossy:unknown-role", 1),
        ])
    );
    for p in &imp.problems {
        assert_eq!(p.session.as_deref(), Some("broken_messages:1"), "{p}");
    }
    assert_eq!(
        one_problem(
            &imp,
            "are not valid JSON; kept as the text",
            Severity::Lossy
        )
        .turn,
        Some(1)
    );
    assert_eq!(
        one_problem(
            &imp,
            "no result for call \"search\" (id \"s2\")",
            Severity::Lossy
        )
        .turn,
        Some(1)
    );
    one_problem(&imp, "unknown role \"critic\"", Severity::Lossy);
    one_problem(&imp, "`content` is a number", Severity::Lossy);

    let t = &s.chat_turns[0];
    let calls: Vec<(&str, &str)> = t
        .assistant
        .tool_calls
        .iter()
        .map(|c| (c.id.as_str(), c.arguments.as_str()))
        .collect();
    // s2 was never answered and a later response follows: it cannot stay (every call
    // is answered before the next response), and its problem says so.
    assert_eq!(calls, [("s1", "{not json")]);
    assert!(
        one_problem(&imp, "(id \"s2\")", Severity::Lossy)
            .message
            .contains("the call is left out of the turn")
    );
    assert_eq!(
        t.observations,
        [
            tool("s1", None, "3 cats"),
            // A result for an unknown call: environment output, counted.
            Observation::User {
                content: "orphan result".into(),
                environment: true
            },
            Observation::User {
                content: "[image]\nAnd this image?".into(),
                environment: false
            },
        ]
    );
    // The legacy function_call / function result pair, under a made-up id.
    let t = &s.chat_turns[1];
    assert_eq!(t.assistant.tool_calls[0].id, "call_2_1");
    assert_eq!(t.assistant.tool_calls[0].name, "describe");
    assert_eq!(
        t.observations,
        [tool("call_2_1", Some("describe"), "a tabby")]
    );
    assert_eq!(read_back(&jsonl(&imp)).len(), 1);
}

#[test]
fn a_directory_is_walked_in_sorted_order() {
    let imp = import(Kind::OpenaiChat, &[fixture("openai-chat")]);
    assert_eq!(imp.files, 8);
    let files: Vec<String> = imp
        .sessions
        .iter()
        .map(|s| {
            s.meta["import"]["file"]
                .as_str()
                .unwrap()
                .rsplit('/')
                .next()
                .unwrap()
                .to_string()
        })
        .collect();
    let mut sorted = files.clone();
    sorted.sort();
    assert_eq!(files, sorted);
    assert!(jsonl(&imp) == jsonl(&import(Kind::OpenaiChat, &[fixture("openai-chat")])));
}

#[test]
fn unreadable_inputs_are_errors() {
    let e = recap_import::import(Kind::OpenaiChat, &[fixture("no-such-dir")]).unwrap_err();
    assert!(e.to_string().contains("no-such-dir: cannot read"), "{e}");
    let empty = tempfile::tempdir().unwrap();
    let e = recap_import::import(Kind::OpenaiChat, &[empty.path().to_path_buf()]).unwrap_err();
    assert!(
        e.to_string()
            .contains("no .json/.jsonl/.ndjson files (or .gz of them) found"),
        "{e}"
    );
}

#[test]
fn a_request_logs_response_is_the_final_turn() {
    let imp = file("responses.jsonl");
    let sessions = read_back(&jsonl(&imp));
    let by_id = |id: &str| sessions.iter().find(|s| s.id == id).unwrap();

    // A chat completion: its first choice's message, with the response's usage.
    let s = by_id("req-1");
    assert_eq!(s.chat_turns.len(), 1);
    let t = &s.chat_turns[0];
    assert_eq!(t.assistant.content.as_deref(), Some("42"));
    assert_eq!(t.usage.as_ref().unwrap()["prompt_tokens"], 21);
    assert_eq!(s.meta["response"]["id"], "chatcmpl-1");
    assert_eq!(s.meta["response"]["finish_reason"], "stop");
    assert!(s.meta["response"].get("choices").is_none());

    // A bare assistant message answers the last tool result.
    let s = by_id("req-2");
    assert_eq!(s.chat_turns.len(), 2);
    assert_eq!(
        s.chat_turns[1].assistant.content.as_deref(),
        Some("4 °C and rain.")
    );
    assert!(!s.meta.contains_key("response"));

    // A response with no message: no turn, so no session; counted, never silent.
    assert!(sessions.iter().all(|s| s.id != "req-3"));
    let p = one_problem(
        &imp,
        "`response` holds no assistant message",
        Severity::Lossy,
    );
    assert_eq!(p.kind, "response-not-a-turn");
    assert!(p.message.contains("rate limited"), "{p}");
    one_problem(&imp, "session not imported", Severity::Skipped);

    // Several choices: the first is the turn, the others are counted.
    let s = by_id("req-4");
    assert_eq!(s.chat_turns[0].assistant.content.as_deref(), Some("Blue."));
    let p = one_problem(&imp, "the response has 2 choices", Severity::Lossy);
    assert_eq!(p.kind, "extra-choices");
    assert_eq!(p.session.as_deref(), Some("req-4"));
}
