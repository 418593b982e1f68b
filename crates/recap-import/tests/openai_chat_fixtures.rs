//! openai-chat importer on hand-written transcripts of every supported shape, and on
//! broken ones.

mod common;

use common::{fixture, import, jsonl, one_problem, read_back};
use recap_core::{Session, Value};
use recap_import::{Import, Kind, Severity};

fn file(name: &str) -> Import {
    import(Kind::OpenaiChat, &[fixture(&format!("openai-chat/{name}"))])
}

fn kw(entries: &[(&str, Value)]) -> Value {
    Value::Map(
        entries
            .iter()
            .map(|(k, v)| (Value::Keyword(k.to_string()), v.clone()))
            .collect(),
    )
}

#[test]
fn bare_message_list_with_tool_calls() {
    let imp = file("bare_list.json");
    assert!(imp.problems.is_empty(), "{:#?}", imp.problems);
    assert_eq!(imp.sessions.len(), 1);
    let s = &imp.sessions[0];
    assert_eq!(s.id, "bare_list:1");
    assert_eq!(s.system_prompt, "You are a careful assistant.");
    assert_eq!(s.mission, "What is the weather in Oslo?");
    assert_eq!(s.turns.len(), 2);
    let t = &s.turns[0];
    assert_eq!(t.program, r#"get_weather({"city": "Oslo", "units": "C"})"#);
    assert_eq!(t.raw_response, t.program, "no content: the calls alone");
    assert_eq!(t.tool_calls[0].name, "get_weather");
    assert_eq!(
        t.tool_calls[0].args,
        kw(&[
            ("city", Value::Str("Oslo".into())),
            ("units", Value::Str("C".into()))
        ])
    );
    assert_eq!(
        t.tool_calls[0].result,
        Some(Value::Str("4 degrees, rain".into()))
    );
    assert_eq!(t.feedback.as_deref(), Some("4 degrees, rain"));
    let last = &s.turns[1];
    assert_eq!(last.program, "It is 4 °C and raining in Oslo.");
    assert_eq!(last.feedback, None);
    assert_eq!(last.usage.as_ref().unwrap()["input_tokens"], 80);
    assert!(last.success && s.turns[0].success);
    assert_eq!(s.meta["import"]["line"], 1);
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
    let t = &s.turns[0];
    assert_eq!(t.program, "add({\"a\": 2, \"b\": 3})\nlog()");
    assert_eq!(
        t.raw_response,
        "Adding first.\n\nadd({\"a\": 2, \"b\": 3})\nlog()"
    );
    assert_eq!(t.tool_calls[1].args, Value::Nil, "empty arguments");
    assert_eq!(t.tool_calls[1].result, Some(Value::Str("logged".into())));
    assert_eq!(t.feedback.as_deref(), Some("5\n\nlogged\n\nNow double."));
    let other: &Session = &imp.sessions[1];
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
        "assistant message before the first user message",
        Severity::Lossy,
    );
    assert_eq!(imp.problems.len(), 7, "{:#?}", imp.problems);
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
    assert_eq!(s.turns.len(), 2);
    let lossy = |text: &str| {
        let p = one_problem(&imp, text, Severity::Lossy);
        assert_eq!(p.session.as_deref(), Some("broken_messages:1"));
        p
    };
    assert!(
        lossy("before the first user message")
            .message
            .starts_with("messages[0]:")
    );
    lossy("tool_calls[2] has no string `function.name`");
    lossy("unknown call id \"zz\"");
    lossy("unknown role \"critic\"");
    lossy("message without a string `role`");
    lossy("got a number; message not imported");
    lossy("non-text content parts not imported: image_url");
    assert_eq!(lossy("are not JSON; kept as a string").turn, Some(1));
    assert_eq!(
        lossy("no tool result for call \"search\" (id \"s2\")").turn,
        Some(1)
    );
    assert_eq!(imp.problems.len(), 9, "{:#?}", imp.problems);

    let t = &s.turns[0];
    assert_eq!(t.tool_calls.len(), 2);
    assert_eq!(t.tool_calls[0].args, Value::Str("{not json".into()));
    assert_eq!(t.tool_calls[0].result, Some(Value::Str("3 cats".into())));
    assert_eq!(t.tool_calls[1].result, None);
    assert_eq!(
        t.feedback.as_deref(),
        Some("3 cats\n\norphan result\n\nAnd this image?")
    );
    // The legacy function_call / function result pair.
    let t = &s.turns[1];
    assert_eq!(t.tool_calls[0].name, "describe");
    assert_eq!(t.tool_calls[0].result, Some(Value::Str("a tabby".into())));
    assert_eq!(t.raw_response, "A cat.\n\ndescribe({\"what\": \"image\"})");
}

#[test]
fn a_directory_is_walked_in_sorted_order() {
    let imp = import(Kind::OpenaiChat, &[fixture("openai-chat")]);
    assert_eq!(imp.files, 6);
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
            .contains("no .json/.jsonl/.ndjson files found"),
        "{e}"
    );
}
