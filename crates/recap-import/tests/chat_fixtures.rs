//! The chat-form importers (anthropic-messages, claude-code, swe-agent, openhands, tau2,
//! auto) on hand-written logs of every shape they read, and on broken ones; gzip input,
//! repeated files and session ids.

mod common;

use common::{
    counts, documented, fixture, full_history_retains_every_fact, import, jsonl, one_problem,
    pinned, read_back,
};
use recap_core::{Observation, Session};
use recap_import::{Import, Kind, Options, Severity, Sidechains};
use std::path::PathBuf;

fn session<'a>(imp: &'a Import, id: &str) -> &'a Session {
    imp.sessions.iter().find(|s| s.id == id).unwrap_or_else(|| {
        panic!(
            "no session {id}: {:?}",
            imp.sessions.iter().map(|s| &s.id).collect::<Vec<_>>()
        )
    })
}

fn user(content: &str, environment: bool) -> Observation {
    Observation::User {
        content: content.into(),
        environment,
    }
}

fn tool(id: &str, content: &str, is_error: bool) -> Observation {
    Observation::Tool {
        tool_call_id: id.into(),
        name: None,
        content: content.into(),
        is_error,
    }
}

/// What every fixture import must satisfy: valid lines, retention under full-history.
fn valid(imp: &Import) -> Vec<Session> {
    documented(imp);
    let sessions = read_back(&jsonl(imp));
    full_history_retains_every_fact(&sessions);
    sessions
}

#[test]
fn anthropic_messages_blocks_become_the_chat_form() {
    let imp = import(
        Kind::AnthropicMessages,
        &[fixture("anthropic-messages/conversation.json")],
    );
    valid(&imp);
    assert_eq!(
        counts(&imp),
        pinned(&[("lossy:dropped-key", 2), ("lossy:media", 1)])
    );
    let s = session(&imp, "msg-conv-1");
    assert_eq!(s.system_prompt, "You are a careful librarian.");
    assert!(s.tools["find_book"].parameters.is_some());
    assert_eq!(s.meta["model"], "claude-test");
    let t = &s.chat_turns[0];
    assert_eq!(t.assistant.reasoning.as_deref(), Some("Look it up first."));
    assert_eq!(t.assistant.content.as_deref(), Some("Let me search."));
    assert_eq!(
        t.assistant.tool_calls[0].arguments,
        r#"{"title":"Atlas of Lighthouses","exact":true,"after":1990}"#,
        "input written back compactly, keys in recorded order"
    );
    assert_eq!(t.usage.as_ref().unwrap()["output_tokens"], 30);
    assert_eq!(
        t.observations,
        [
            tool("toolu_1", "shelf 12, row 3\n[image]", false),
            user("Is it on loan?", false)
        ]
    );
    let t = &s.chat_turns[1];
    assert_eq!(t.assistant.tool_calls[0].arguments, "{}");
    assert_eq!(
        t.observations,
        [tool("toolu_2", "unknown tool loan_status", true)]
    );
    assert!(!t.success, "an error result fails the turn");
    assert!(s.chat_turns[2].success);
}

#[test]
fn anthropic_messages_json_lines_with_responses_and_bad_lines() {
    let imp = import(
        Kind::AnthropicMessages,
        &[fixture("anthropic-messages/requests.jsonl")],
    );
    valid(&imp);
    let s = session(&imp, "requests:1");
    assert_eq!(s.system_prompt, "Answer in one word.");
    assert_eq!(s.chat_turns[0].assistant.content.as_deref(), Some("Oslo."));
    assert_eq!(s.chat_turns[0].usage.as_ref().unwrap()["input_tokens"], 12);
    assert_eq!(session(&imp, "requests:2").meta["metadata"]["user"], "u1");
    assert_eq!(imp.sessions.len(), 2);
    assert_eq!(
        one_problem(&imp, "server_tool_use", Severity::Lossy).line,
        Some(2)
    );
    assert_eq!(
        one_problem(&imp, "no user message", Severity::Skipped).line,
        Some(3)
    );
    assert_eq!(
        one_problem(&imp, "truncated JSON record", Severity::Skipped).line,
        Some(4)
    );
}

#[test]
fn claude_code_turns_sidechains_compaction_and_notices() {
    let imp = import(Kind::ClaudeCode, &[fixture("claude-code/session.jsonl")]);
    valid(&imp);
    assert_eq!(
        counts(&imp),
        pinned(&[
            ("lossy:dropped-key", 11),
            ("lossy:no-system-prompt", 2),
            ("lossy:synthetic-response", 1),
            ("lossy:unknown-key", 1),
        ])
    );
    one_problem(
        &imp,
        "`entry.futureField` not carried over (once)",
        Severity::Lossy,
    );
    let p = one_problem(
        &imp,
        "`entry.timestamp` not carried over (16 times, first here)",
        Severity::Lossy,
    );
    assert_eq!(p.line, Some(2));
    one_problem(&imp, "`entry.type=system`", Severity::Lossy);
    one_problem(&imp, "`entry.type=summary`", Severity::Lossy);
    one_problem(&imp, "`entry.type=queue-operation`", Severity::Lossy);

    let s = session(&imp, "cc-1");
    assert_eq!(s.mission, "Rename notes.txt to todo.txt and check it.");
    assert_eq!(s.system_prompt, "");
    assert_eq!(
        s.chat_turns.len(),
        4,
        "three entries of msg_A are one turn; the synthetic notice none"
    );
    let t = &s.chat_turns[0];
    assert_eq!(t.assistant.reasoning.as_deref(), Some("Two steps."));
    assert_eq!(t.assistant.content.as_deref(), Some("Renaming first."));
    assert_eq!(
        t.assistant.tool_calls[0].arguments,
        r#"{"command":"mv notes.txt todo.txt","description":"Rename the file"}"#
    );
    assert_eq!(
        t.usage.as_ref().unwrap()["output_tokens"],
        40,
        "the response's last entry"
    );
    assert_eq!(
        s.chat_turns[1].observations,
        [tool("toolu_task", "todo.txt exists.", false)]
    );
    let t = &s.chat_turns[2];
    assert!(!t.success);
    assert_eq!(t.observations.len(), 2);
    assert!(
        t.observations[1]
            .content()
            .starts_with("This session is being continued")
    );
    assert_eq!(s.meta["compactions"], serde_json::json!([3]));
    // What the agent sent: its whole history, started over at the summary (turn 3's
    // second observation).
    assert_eq!(
        s.meta["recorded_context"],
        serde_json::json!({"sent": "history", "restarts": [{"after_turns": 3, "observation": 1}]})
    );

    assert_eq!(s.meta["version"], serde_json::json!(["2.0.0", "2.0.1"]));
    assert_eq!(s.meta["model"], "claude-test-1");

    let side = session(&imp, "cc-1/sidechain-1");
    assert_eq!(side.mission, "Confirm that todo.txt exists in /work/demo.");
    assert_eq!(side.meta["sidechain_of"], "cc-1");
    assert_eq!(side.meta["task_call"]["tool_call_id"], "toolu_task");
    assert_eq!(side.meta["model"], "claude-test-small");
    assert_eq!(side.chat_turns.len(), 2);

    let without = recap_import::import_with(
        Kind::ClaudeCode,
        &[fixture("claude-code/session.jsonl")],
        &Options {
            sidechains: Sidechains::Exclude,
        },
    )
    .unwrap();
    assert_eq!(without.sessions.len(), 1);
    let p = one_problem(
        &without,
        "4 sub-agent (sidechain) entries are excluded",
        Severity::Lossy,
    );
    assert_eq!(p.line, Some(9));
}

#[test]
fn claude_code_hook_dumps_and_cut_transcripts() {
    let imp = import(Kind::ClaudeCode, &[fixture("claude-code/hook-dump.json")]);
    valid(&imp);
    let s = session(&imp, "cc-2");
    assert_eq!(s.chat_turns.len(), 2);
    assert_eq!(s.meta["import"]["record"], 1);
    let p = one_problem(&imp, "no result for call \"Task\"", Severity::Lossy);
    assert_eq!(p.turn, Some(2));
    assert_eq!(
        one_problem(&imp, "`entry.type=system`", Severity::Lossy).record,
        Some(5)
    );

    let imp = import(Kind::ClaudeCode, &[fixture("claude-code/truncated.jsonl")]);
    valid(&imp);
    assert_eq!(imp.sessions.len(), 1);
    assert_eq!(
        one_problem(&imp, "truncated JSON record", Severity::Skipped).line,
        Some(5)
    );
    assert_eq!(
        one_problem(&imp, "without a string `type`", Severity::Skipped).line,
        Some(6)
    );
    // The record after the cut is still read: its result answers the first turn's call.
    assert_eq!(imp.sessions[0].chat_turns[0].observations.len(), 1);
}

#[test]
fn swe_agent_classic_and_function_calling_trajectories() {
    let imp = import(
        Kind::SweAgent,
        &[fixture("swe-agent/run-a"), fixture("swe-agent/run-b")],
    );
    valid(&imp);
    assert_eq!(
        counts(&imp),
        pinned(&[("lossy:arguments-not-json", 1), ("lossy:dropped-key", 1)])
    );
    let fenced = session(&imp, "run-a/task-1");
    assert_eq!(
        fenced.system_prompt,
        "SETTING: You are an autonomous programmer in a shell."
    );
    assert!(
        fenced
            .mission
            .starts_with("ISSUE:\nThe greeting prints 'helo'.")
    );
    assert_eq!(fenced.meta["demonstrations"].as_array().unwrap().len(), 1);
    assert_eq!(fenced.meta["info"]["exit_status"], "submitted");
    assert_eq!(fenced.meta["agent"], "primary");
    assert_eq!(fenced.chat_turns.len(), 2);
    for t in &fenced.chat_turns {
        assert!(t.assistant.tool_calls.is_empty());
        assert!(matches!(
            t.observations[..],
            [Observation::User {
                environment: true,
                ..
            }]
        ));
    }
    assert!(
        fenced.chat_turns[1]
            .assistant
            .content
            .as_deref()
            .unwrap()
            .contains("<command>\nsubmit\n</command>")
    );

    let fc = session(&imp, "run-b/task-1");
    let t = &fc.chat_turns[0];
    assert_eq!(t.assistant.tool_calls[0].id, "call_open1");
    assert_eq!(
        t.assistant.tool_calls[0].arguments,
        r#"{"path":"src/greet.py"}"#
    );
    assert_eq!(
        t.observations,
        [tool(
            "call_open1",
            "[File: src/greet.py (1 lines total)]\n1:print('helo')",
            false
        )]
    );
    assert_eq!(
        fc.meta["replay_config"],
        r#"{"agent": {"model": {"name": "test-model"}}}"#
    );
    // Malformed arguments are kept as the model wrote them.
    assert_eq!(
        fc.chat_turns[1].assistant.tool_calls[0].arguments,
        r#"{"start": 1, "replacement": "print('hello')""#
    );
}

#[test]
fn swe_agent_cut_trajectory_keeps_the_messages_before_the_cut() {
    let imp = import(Kind::SweAgent, &[fixture("swe-agent/truncated.traj")]);
    valid(&imp);
    let p = one_problem(
        &imp,
        "in `history`: truncated JSON record",
        Severity::Skipped,
    );
    assert_eq!(
        (p.line, p.record),
        (Some(48), Some(6)),
        "where the cut record starts"
    );
    assert!(p.message.contains("at line 50 column"), "{p}");
    assert_eq!(imp.sessions[0].chat_turns.len(), 1);
}

#[test]
fn openhands_current_and_older_formats() {
    let imp = import(Kind::Openhands, &[fixture("openhands/output.jsonl")]);
    valid(&imp);
    assert_eq!(
        counts(&imp),
        pinned(&[
            ("skipped:truncated", 1),
            ("lossy:dropped-key", 8),
            ("lossy:no-result", 1),
            ("lossy:old-format", 1),
            ("lossy:unknown-event", 1),
            ("lossy:unknown-key", 1),
            ("lossy:workspace-context", 1),
        ])
    );
    let s = session(&imp, "repo__demo-1");
    assert_eq!(s.system_prompt, "You are OpenHands agent.");
    assert!(s.tools.contains_key("execute_bash"));
    assert_eq!(s.budget(), Some(30));
    assert_eq!(s.meta["openhands_version"], "0.35.0");
    assert_eq!(
        s.chat_turns.len(),
        3,
        "one turn per model response, not per action"
    );
    let t = &s.chat_turns[0];
    let ids: Vec<&str> = t
        .assistant
        .tool_calls
        .iter()
        .map(|c| c.id.as_str())
        .collect();
    assert_eq!(ids, ["toolu_01", "toolu_02"]);
    assert_eq!(
        t.assistant.tool_calls[0].arguments,
        r#"{"command": "ls /workspace/repo"}"#
    );
    assert_eq!(
        t.observations[0].content(),
        "setup.py\nsrc\n[Current working directory: /workspace/repo]\n[Python interpreter: /usr/bin/python]\n[Command finished with exit code 0]"
    );
    assert_eq!(t.usage.as_ref().unwrap()["prompt_tokens"], 500);
    let t = &s.chat_turns[1];
    assert!(t.observations[0].is_error() && !t.success);
    assert!(
        t.observations[0]
            .content()
            .ends_with("\n[Error occurred in processing last action]")
    );

    let old = session(&imp, "output:2");
    assert_eq!(old.mission, "Please add a license file.");
    assert_eq!(
        old.chat_turns[0].assistant.content.as_deref(),
        Some("Creating the file.\n<execute_bash>\ntouch LICENSE\n</execute_bash>")
    );
    assert_eq!(
        old.chat_turns[0].observations,
        [user(
            "OBSERVATION:\n\r\nroot@box:/workspace # \n[Command -1 finished with exit code 0]",
            true
        )]
    );
    assert_eq!(
        old.chat_turns[2].assistant.content.as_deref(),
        Some("The license file exists now.")
    );
    assert_eq!(
        one_problem(&imp, "truncated JSON record", Severity::Skipped).line,
        Some(3)
    );

    let events = import(Kind::Openhands, &[fixture("openhands/events.json")]);
    valid(&events);
    let s = session(&events, "events");
    assert_eq!(s.chat_turns[0].assistant.content.as_deref(), Some("4"));
    assert_eq!(s.chat_turns[0].observations, [user("thanks", false)]);
}

#[test]
fn tau2_simulations_as_the_agent_saw_them() {
    let imp = import(Kind::Tau2, &[fixture("tau2")]);
    valid(&imp);
    assert_eq!(
        counts(&imp),
        pinned(&[
            ("lossy:dropped-key", 9),
            ("lossy:greeting-before-mission", 2),
            ("lossy:solo-mission", 1),
        ])
    );
    let s = session(&imp, "sim-1");
    assert_eq!(
        s.system_prompt,
        "<instructions>\nYou are a customer service agent that helps the user according to the <policy> provided below.\nIn each turn you can either:\n- Send a message to the user.\n- Make a tool call.\nYou cannot do both at the same time.\n\nTry to be helpful and always follow the policy. Always make sure you generate valid JSON only.\n</instructions>\n<policy>\n# Library policy\n\nBe kind. Never waive fines.\n</policy>"
    );
    assert_eq!(s.mission, "I want to renew 'Atlas of Lighthouses'.");
    assert_eq!(
        s.meta["first_agent_message"],
        "Hi! How can I help you today?"
    );
    assert_eq!(s.meta["task"]["description"]["purpose"], "renewal");
    assert_eq!(s.meta["tau2"]["info"]["max_steps"], 50);
    assert!(
        s.meta["tau2"]["info"]["environment_info"]
            .get("policy")
            .is_none()
    );
    let t = &s.chat_turns[0];
    assert_eq!(
        t.assistant.tool_calls[0].arguments, r#"{"title":"Atlas of Lighthouses","days":14}"#,
        "the raw completion's text"
    );
    assert_eq!(
        t.observations,
        [tool("call_1", "Error: the book has a pending fine", true)]
    );
    // The user simulator's own tool call and its result never reach the agent.
    assert_eq!(
        s.chat_turns[1].observations,
        [user("My card shows a 2 EUR fine.", false)]
    );
    assert_eq!(
        s.chat_turns[2].assistant.tool_calls[0].arguments, r#"{"amount":2,"currency":"EUR"}"#,
        "no raw completion: the object in recorded order"
    );
    one_problem(
        &imp,
        "`simulations[].messages[].tool_calls(requestor=user)` not carried over (once)",
        Severity::Lossy,
    );

    let solo = session(&imp, "solo-1");
    assert_eq!(
        solo.mission,
        "Customer C7 asks to cancel the hold on 'Sea Charts'."
    );
    assert!(
        solo.system_prompt
            .contains("single tool call to the `done` tool")
    );
    assert!(
        solo.system_prompt
            .ends_with("<ticket>\nCustomer C7 asks to cancel the hold on 'Sea Charts'.\n</ticket>")
    );
    assert!(!solo.meta.contains_key("first_agent_message"));
}

#[test]
fn auto_picks_each_files_importer() {
    let imp = import(Kind::Auto, &[fixture("mixed")]);
    valid(&imp);
    let importers: Vec<(&str, &str)> = imp
        .sessions
        .iter()
        .map(|s| {
            (
                s.meta["import"]["file"]
                    .as_str()
                    .unwrap()
                    .rsplit('/')
                    .next()
                    .unwrap(),
                s.meta["import"]["importer"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        importers,
        [
            ("a-anthropic.jsonl", "anthropic-messages"),
            ("a-anthropic.jsonl", "anthropic-messages"),
            ("b-claude.json", "claude-code"),
            ("c-tau2.json", "tau2"),
            ("d-openhands.json", "openhands"),
            ("e-swe.traj", "swe-agent"),
            ("f-openai.json", "openai-chat"),
        ]
    );
    let p = one_problem(&imp, "cannot tell which log format", Severity::Skipped);
    assert!(p.file.ends_with("g-unknown.json"));
}

#[test]
fn the_wrong_importer_gets_one_problem_per_file_naming_the_right_one() {
    let imp = import(Kind::OpenaiChat, &[fixture("claude-code/session.jsonl")]);
    assert!(imp.sessions.is_empty());
    assert_eq!(imp.problems.len(), 1, "{:#?}", imp.problems);
    assert_eq!(imp.problems[0].kind, "wrong-importer");
    documented(&imp);
    assert!(
        imp.problems[0]
            .message
            .contains("import it with `recap import claude-code`"),
        "{}",
        imp.problems[0]
    );
    let imp = import(Kind::Tau2, &[fixture("openhands/output.jsonl")]);
    assert_eq!(imp.problems.len(), 1, "{:#?}", imp.problems);
    assert!(imp.problems[0].message.contains("`recap import openhands`"));
    // The older importers ask too.
    let imp = import(Kind::Smolagents, &[fixture("claude-code/session.jsonl")]);
    assert_eq!(imp.problems.len(), 1, "{:#?}", imp.problems);
    assert!(
        imp.problems[0]
            .message
            .contains("`recap import claude-code`")
    );
}

#[test]
fn gzip_input_imports_like_the_plain_file() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let plain = fixture("claude-code/session.jsonl");
    let gz_path = dir.path().join("session.jsonl.gz");
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&std::fs::read(&plain).unwrap()).unwrap();
    std::fs::write(&gz_path, gz.finish().unwrap()).unwrap();
    let a = import(Kind::ClaudeCode, &[plain]);
    // Found by a directory walk too: `.jsonl.gz` is a claude-code extension.
    let b = import(Kind::ClaudeCode, &[dir.path().to_path_buf()]);
    assert_eq!(b.files, 1);
    let ids = |i: &Import| {
        i.sessions
            .iter()
            .map(|s| s.chat_turns.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&a), ids(&b));
    assert_eq!(a.problems.len(), b.problems.len());
}

#[test]
fn the_same_file_twice_is_an_error_and_a_repeated_session_id_a_problem() {
    let f = fixture("tau2/solo.json");
    let e = recap_import::import(Kind::Tau2, &[f.clone(), f]).unwrap_err();
    assert!(
        e.to_string()
            .contains("solo.json: this file is given twice"),
        "{e}"
    );
    let e = recap_import::import(
        Kind::Tau2,
        &[fixture("tau2"), fixture("tau2/../tau2/solo.json")],
    )
    .unwrap_err();
    assert!(e.to_string().contains("this file is also given as"), "{e}");

    let dir = tempfile::tempdir().unwrap();
    let copy: PathBuf = dir.path().join("copy.json");
    std::fs::copy(fixture("tau2/solo.json"), &copy).unwrap();
    let imp = import(Kind::Tau2, &[fixture("tau2/solo.json"), copy]);
    assert_eq!(imp.sessions.len(), 1);
    let p = one_problem(
        &imp,
        "session id \"solo-1\" was already imported from",
        Severity::Skipped,
    );
    assert!(p.file.ends_with("copy.json"));
    assert_eq!(p.kind, "duplicate-id");
    documented(&imp);
}
