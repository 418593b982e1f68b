//! The importers of the evaluation ecosystem's logs (inspect, atif, adp, openhands-sdk)
//! on hand-made logs: every mapping of docs/importers.md that the public samples do
//! not exercise, and the bad inputs — a cut archive, a sample without messages, an
//! unknown schema version: a problem naming the file and field, the rest imported.

mod common;

use common::{documented, fixture, import, jsonl, one_problem, read_back};
use recap_core::{Observation, Session};
use recap_import::{Import, Kind, Severity};

fn checked(kind: Kind, rel: &str) -> (Import, Vec<Session>) {
    let imp = import(kind, &[fixture(rel)]);
    documented(&imp);
    let sessions = read_back(&jsonl(&imp));
    (imp, sessions)
}

fn by_id<'s>(sessions: &'s [Session], id: &str) -> &'s Session {
    sessions.iter().find(|s| s.id == id).unwrap_or_else(|| {
        panic!(
            "no session {id}: {:?}",
            sessions.iter().map(|s| &s.id).collect::<Vec<_>>()
        )
    })
}

fn recorded(s: &Session, k: usize) -> Vec<(recap_core::Role, String)> {
    let strategy = recap_builtins::registry().build("recorded").unwrap();
    strategy
        .render_session(s, k, &mut recap_core::SessionState::new())
        .unwrap()
        .iter()
        .map(|m| (m.role, m.content.to_string()))
        .collect()
}

#[test]
fn inspect_json_log_samples_with_attachments_usage_and_what_was_sent() {
    let (imp, sessions) = checked(Kind::Inspect, "inspect/agent.json");
    assert_eq!(sessions.len(), 2);
    let s = by_id(&sessions, "fix_bug/RUN1/1/epoch-1");
    assert_eq!(s.system_prompt, "You fix bugs.");
    assert_eq!(
        s.mission, "The test in app.py fails. Fix it.",
        "attachment expanded"
    );
    assert_eq!(s.chat_turns.len(), 2);
    let t = &s.chat_turns[0];
    assert_eq!(t.assistant.content.as_deref(), Some("Looking."));
    assert_eq!(
        t.assistant.reasoning.as_deref(),
        Some("List the files first.")
    );
    assert_eq!(
        t.assistant.tool_calls[0].arguments,
        r#"{"cmd":"ls","all":true}"#
    );
    assert_eq!(t.observations[0].content(), "app.py\ntest_app.py\n");
    assert_eq!(t.usage.as_ref().unwrap()["input_tokens"], 120);
    assert_eq!(s.chat_turns[1].usage.as_ref().unwrap()["input_tokens"], 150);
    assert!(s.tools.contains_key("bash"));
    // Every agent call was sent the history before it (the grader's call is not one
    // of them): `recorded` replays it.
    assert_eq!(s.meta["recorded_context"]["sent"], "history");
    assert!(
        imp.problems
            .iter()
            .any(|p| p.message.contains("event=model (not the conversation's)"))
    );
    assert_eq!(s.meta["scores"]["match"]["value"], "C");
    assert_eq!(
        s.meta["inspect"]["eval"]["packages"]["inspect_ai"],
        "0.3.140"
    );

    // A sample without messages: skipped, naming the field; the others imported.
    let p = one_problem(&imp, "has no `messages`", Severity::Skipped);
    assert_eq!(p.kind, "no-messages");
    assert!(p.file.ends_with("inspect/agent.json"));
    assert_eq!(p.session.as_deref(), Some("fix_bug/RUN1/2/epoch-1"));

    // A call sent a system prompt the messages do not hold: no record, and why.
    let s = by_id(&sessions, "fix_bug/RUN1/3/epoch-2");
    assert!(!s.meta.contains_key("recorded_context"));
    let p = one_problem(&imp, "model call 1 was sent 2 messages", Severity::Lossy);
    assert_eq!(p.kind, "context-not-recorded");
}

#[test]
fn inspect_archive_with_a_message_pool_and_a_cut_copy() {
    let (imp, sessions) = checked(Kind::Inspect, "inspect/pool.eval");
    assert!(
        imp.problems.iter().all(|p| p.severity == Severity::Lossy),
        "{:#?}",
        imp.problems
    );
    assert_eq!(sessions.len(), 2);
    let s = by_id(&sessions, "fix_bug/RUN1/count/epoch-1");
    assert_eq!(s.chat_turns.len(), 2);
    assert_eq!(s.chat_turns[1].usage.as_ref().unwrap()["input_tokens"], 60);
    // input_refs ranges into the pool are what each call was sent.
    assert_eq!(s.meta["recorded_context"]["sent"], "history");
    assert!(
        s.meta["import"]["file"]
            .as_str()
            .unwrap()
            .ends_with("pool.eval/samples/count_epoch_1.json")
    );

    // Cut inside the second sample: the first is imported, the cut is one problem.
    let bytes = std::fs::read(fixture("inspect/pool.eval")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cut = dir.path().join("cut.eval");
    std::fs::write(&cut, &bytes[..900]).unwrap();
    let imp = import(Kind::Inspect, &[cut]);
    documented(&imp);
    assert_eq!(imp.sessions.len(), 1, "{:#?}", imp.problems);
    let p = one_problem(&imp, "archive is cut off or damaged", Severity::Skipped);
    assert_eq!(p.kind, "truncated");
    assert!(p.file.ends_with("cut.eval"));
    assert!(p.message.contains("the 2 complete entries"), "{p}");
}

#[test]
fn inspect_unknown_log_version_names_the_field() {
    let imp = import(
        Kind::Inspect,
        &[
            fixture("inspect/future.json"),
            fixture("inspect/agent.json"),
        ],
    );
    documented(&imp);
    let p = one_problem(&imp, "log `version` is 9", Severity::Skipped);
    assert_eq!(p.kind, "unknown-version");
    assert!(p.file.ends_with("future.json"));
    assert_eq!(imp.sessions.len(), 2, "the other log is imported");
}

#[test]
fn atif_continuation_restart_and_subagents() {
    let (imp, sessions) = checked(Kind::Atif, "atif/run");
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(
        ids,
        ["run-7-main", "run-7/trajectory.sub", "run-7-embedded"]
    );
    let main = &sessions[0];
    assert_eq!(main.system_prompt, "You are a careful shell agent.");
    // Two turns of the run, then the continuation's two.
    assert_eq!(main.chat_turns.len(), 4);
    let t = &main.chat_turns[0];
    assert_eq!(t.assistant.reasoning.as_deref(), Some("touch is enough."));
    assert_eq!(
        t.assistant.tool_calls[0].arguments,
        r#"{"cmd":"touch notes.txt"}"#
    );
    let usage = t.usage.as_ref().unwrap();
    assert_eq!(usage["prompt_tokens"], 300);
    assert!(!usage.contains_key("prompt_token_ids"));
    assert_eq!(
        main.chat_turns[1].observations[0].content(),
        "notes.txt\n[image]"
    );
    // The continuation started over from its copied context: a restart at the first
    // copied message, which `recorded` replays.
    assert_eq!(
        main.meta["recorded_context"]["restarts"],
        serde_json::json!([{"after_turns": 2, "observation": 1}])
    );
    let after = recorded(main, 2);
    assert_eq!(after[1].1, "Make a file called notes.txt.");
    assert_eq!(after[2].1, "Summary so far: notes.txt exists.");
    assert_eq!(after.len(), 3);
    // Sub-agents are sessions of their own, linked both ways.
    for sub in &sessions[1..] {
        assert_eq!(sub.meta["subagent_of"], "run-7-main");
    }
    let refs = main.meta["subagent_refs"].as_array().unwrap();
    assert_eq!(refs[0]["session"], "run-7/trajectory.sub");
    assert_eq!(refs[1]["session"], "run-7-embedded");
    assert!(imp.problems.iter().all(|p| p.kind != "missing-trajectory"));

    // Imported alone, the main trajectory says what it misses.
    let imp = import(Kind::Atif, &[fixture("atif/run/trajectory.json")]);
    documented(&imp);
    one_problem(
        &imp,
        "continues in \"trajectory.cont-1.json\"",
        Severity::Lossy,
    );
    one_problem(&imp, "1 sub-agent trajectories", Severity::Lossy);
}

#[test]
fn atif_unknown_schema_version_names_the_field() {
    let imp = import(Kind::Atif, &[fixture("atif")]);
    documented(&imp);
    let p = one_problem(&imp, "`schema_version` is \"ATIF-v2.0\"", Severity::Skipped);
    assert_eq!(p.kind, "unknown-version");
    assert!(p.file.ends_with("future.trajectory.json"));
    assert_eq!(imp.sessions.len(), 3, "the run's trajectories are imported");
}

#[test]
fn adp_schema_13_positional_ids_and_bad_trajectories() {
    let (imp, sessions) = checked(Kind::Adp, "adp/trajectories.jsonl");
    let ids: Vec<&str> = sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["adp-13", "adp-old"]);
    let s = &sessions[0];
    assert_eq!(s.mission, "Find the price of the red lamp.");
    assert!(
        s.tools.contains_key("browse"),
        "details.tools is the tool list"
    );
    let t = &s.chat_turns[0];
    assert_eq!(t.assistant.tool_calls[0].id, "call_a");
    assert_eq!(
        t.assistant.reasoning.as_deref(),
        Some("The shop lists lamps.")
    );
    assert_eq!(
        t.observations,
        [Observation::Tool {
            tool_call_id: "call_a".into(),
            name: None,
            content: "https://shop.test/lamps\n[1] link 'red lamp $20'".into(),
            is_error: false,
        }]
    );
    // Code is code in the message; its output (named by the code action's id) is
    // environment output, and so is the image that follows.
    let code = &s.chat_turns[1];
    assert_eq!(
        code.assistant.content.as_deref(),
        Some("With tax:\n\n```python\nprint(20 * 1.2)\n```")
    );
    assert!(code.assistant.tool_calls.is_empty());
    assert!(matches!(
        &code.observations[..],
        [
            Observation::User {
                environment: true,
                ..
            },
            Observation::User {
                environment: true,
                ..
            }
        ]
    ));
    one_problem(&imp, "not carried: its HTML", Severity::Lossy);
    one_problem(
        &imp,
        "an image_observation is replaced by [image]",
        Severity::Lossy,
    );

    // Before 1.3: a positional id, counted once for the file.
    let old = &sessions[1];
    assert_eq!(old.chat_turns[0].assistant.tool_calls[0].id, "call_1_1");
    assert_eq!(old.chat_turns[0].observations[0].content(), "a.txt");
    let p = one_problem(&imp, "an action without `tool_call_id`", Severity::Lossy);
    assert_eq!(p.kind, "made-up-call-id");
    one_problem(&imp, "unknown class \"thought_action\"", Severity::Lossy);

    // An unknown schema version and a trajectory without content: skipped, named.
    let p = one_problem(&imp, "`schema_version` is \"2.0.0\"", Severity::Skipped);
    assert_eq!((p.kind, p.line), ("unknown-version", Some(2)));
    let p = one_problem(&imp, "needs a `content` list", Severity::Skipped);
    assert_eq!(p.session.as_deref(), Some("adp-no-content"));
}

#[test]
fn openhands_sdk_conversation_with_parallel_calls_usage_and_a_condensation() {
    let (imp, sessions) = checked(Kind::OpenhandsSdk, "openhands-sdk/conv");
    assert_eq!(imp.files, 12);
    assert_eq!(sessions.len(), 1);
    let s = &sessions[0];
    assert_eq!(s.id, "conv-1");
    assert_eq!(s.system_prompt, "You are OpenHands.");
    assert!(s.tools.contains_key("terminal"));
    assert_eq!(s.budget(), Some(50));
    assert_eq!(s.meta["model"], "test/model-b");
    assert_eq!(s.meta["agent"]["llm"].get("api_key"), None);
    assert_eq!(s.chat_turns.len(), 3);
    // The two actions of one response are one turn with two calls.
    let t = &s.chat_turns[0];
    assert_eq!(
        t.assistant.content.as_deref(),
        Some("Two commands at once.")
    );
    assert_eq!(t.assistant.tool_calls.len(), 2);
    assert_eq!(
        t.assistant.tool_calls[1].arguments,
        r#"{"command": "whoami"}"#
    );
    assert_eq!(
        t.observations[0].content(),
        "Mon Jan 5\n[Current working directory: /w]\n[Command finished with exit code 0]"
    );
    assert_eq!(t.usage.as_ref().unwrap()["prompt_tokens"], 500);
    assert_eq!(
        s.chat_turns[2].usage.as_ref().unwrap()["cache_read_tokens"],
        0
    );
    // The condensation forgot turn 1 (its response and both results) and put its
    // summary after the mission; `recorded` replays exactly that.
    assert_eq!(
        s.meta["recorded_context"]["condensations"],
        serde_json::json!([{
            "after_turns": 2,
            "drop": [2, 3, 4],
            "summary": "The user asked for the date and user; both were shown.",
            "summary_at": 2
        }])
    );
    let before = recorded(s, 1);
    assert_eq!(before.len(), 5);
    let after = recorded(s, 2);
    let texts: Vec<&str> = after.iter().map(|(_, c)| c.as_str()).collect();
    assert_eq!(
        texts,
        [
            "You are OpenHands.",
            "Show the date and the user.",
            "The user asked for the date and user; both were shown.",
            "It is Monday; you are ada.",
            "Thanks. What did I ask first?",
        ]
    );
}

#[test]
fn the_wrong_importer_names_the_one_that_fits() {
    for (kind, rel, fits) in [
        (Kind::Inspect, "tau2/solo.json", "tau2"),
        (Kind::Atif, "inspect/agent.json", "inspect"),
        (Kind::OpenhandsSdk, "atif/run/trajectory.json", "atif"),
        (
            Kind::Adp,
            "openhands-sdk/conv/base_state.json",
            "openhands-sdk",
        ),
    ] {
        let imp = import(kind, &[fixture(rel)]);
        assert!(imp.sessions.is_empty(), "{kind}");
        let p = one_problem(&imp, &format!("`recap import {fits}`"), Severity::Skipped);
        assert_eq!(p.kind, "wrong-importer", "{kind}");
    }
}
