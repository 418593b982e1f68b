//! Chat-form sessions through the command line: `run` (rows in the order asked for,
//! not-applicable strategies), `render --format json` (the OpenAI shape), `inspect`,
//! and `validate`'s field-level rejections.

use recap_testkit::cli::{Run, render_args, run};
use recap_testkit::recap_command;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn recap(args: &[&str]) -> Run {
    run(recap_command!().current_dir(root()).args(args))
}

fn chat() -> String {
    root()
        .join("bench-data/chat-handwritten.jsonl")
        .display()
        .to_string()
}

fn ptc() -> String {
    root()
        .join("bench-data/handwritten.jsonl")
        .display()
        .to_string()
}

#[test]
fn rows_follow_the_command_line_order_of_strategies_and_sweeps() {
    let chat = chat();
    let out = recap(&[
        "run",
        &chat,
        "--strategy",
        "token-budget-trim:max_tokens=2000",
        "--sweep",
        "observation-masking:window=1|2",
        "--strategy",
        "rolling-window",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let names: Vec<&str> = out
        .stdout
        .lines()
        .skip(3)
        .take_while(|l| !l.is_empty())
        .map(|l| l.split_whitespace().next().unwrap_or(""))
        .collect();
    assert_eq!(
        names,
        [
            "full-history*",
            "token-budget-trim:max_tokens=2000",
            "observation-masking:window=1",
            "observation-masking:window=2",
            "rolling-window"
        ]
    );
}

#[test]
fn strategies_of_another_form_have_no_row_in_its_group_never_zero() {
    let (chat, ptc) = (chat(), ptc());
    let out = recap(&[
        "run",
        &chat,
        &ptc,
        "--strategy",
        "single-user-coalesced",
        "--strategy",
        "observation-masking",
        "--format",
        "json",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON report");
    let run = |name: &str, form: &str| {
        report["runs"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["strategy"] == name && r["form"] == form)
            .cloned()
    };
    let groups = report["groups"].as_array().unwrap();
    let sessions = |form: &str| {
        groups.iter().find(|g| g["form"] == form).unwrap()["sessions"]
            .as_u64()
            .unwrap()
    };
    // full-history renders both forms: a row in each, over that form's sessions.
    for form in ["ptc", "chat"] {
        let full = run("full-history", form).expect("a baseline per form");
        assert_eq!(full["sessions"], sessions(form));
        assert_eq!(full["savings_vs_full_history"], 0.0);
    }
    // Each other strategy has a row for its own form only, over all of its sessions.
    let suc = run("single-user-coalesced", "ptc").expect("a PTC-Lisp row");
    let masking = run("observation-masking", "chat").expect("a chat row");
    assert_eq!(suc["sessions"], sessions("ptc"));
    assert_eq!(masking["sessions"], sessions("chat"));
    assert!(run("single-user-coalesced", "chat").is_none());
    assert!(run("observation-masking", "ptc").is_none());
    assert_eq!(suc["forms"], serde_json::json!(["ptc"]));
    assert_eq!(masking["forms"], serde_json::json!(["chat"]));
    let left_out = |form: &str| {
        groups.iter().find(|g| g["form"] == form).unwrap()["not_replayed"][0]["strategy"].clone()
    };
    assert_eq!(left_out("chat"), "single-user-coalesced");
    assert_eq!(left_out("ptc"), "observation-masking");

    // Only chat sessions: a PTC-only strategy has no row at all, and a note says why.
    let out = recap(&["run", &chat, "--strategy", "ptc-runner"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        !out.stdout.lines().any(|l| l.starts_with("ptc-runner")),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("no row for ptc-runner (it renders PTC-Lisp sessions only)"),
        "{}",
        out.stdout
    );
}

#[test]
fn render_json_is_the_openai_chat_completions_shape() {
    let chat = chat();
    let out = recap(&render_args(
        &chat,
        "parallel-research",
        "full-history",
        &["--turn", "3", "--format", "json"],
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    let messages: Vec<serde_json::Value> = serde_json::from_str(&out.stdout).expect("array");
    assert_eq!(messages[0]["role"], "system");
    assert_eq!(messages[1]["role"], "user");
    let call = messages
        .iter()
        .find_map(|m| m["tool_calls"].as_array().and_then(|c| c.first()))
        .expect("a tool call");
    assert_eq!(call["type"], "function");
    assert!(call["function"]["name"].is_string());
    assert!(call["function"]["arguments"].is_string());
    let id = call["id"].as_str().unwrap();
    assert!(
        messages
            .iter()
            .any(|m| m["role"] == "tool" && m["tool_call_id"] == id),
        "the call is answered"
    );
    // No turns line is ever invented for a chat session.
    assert!(!out.stdout.contains("Turns left"));
}

#[test]
fn render_refuses_a_strategy_of_another_form() {
    let chat = chat();
    let out = recap(&render_args(
        &chat,
        "parallel-research",
        "single-user-coalesced",
        &[],
    ));
    assert_eq!(out.code, 2);
    assert!(
        out.stderr.contains("renders ptc sessions only") && out.stderr.contains("in the chat form"),
        "{}",
        out.stderr
    );
}

#[test]
fn inspect_shows_the_chat_trace_and_missing_facts() {
    let chat = chat();
    let out = recap(&[
        "inspect",
        &chat,
        "--session",
        "long-run",
        "--strategy",
        "observation-masking:window=1",
        "--turn",
        "20",
    ]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("no turn budget"), "{}", out.stdout);
    assert!(out.stdout.contains("tool result for"), "{}", out.stdout);
    assert!(out.stdout.contains("Old environment output: ("));
    assert!(out.stdout.contains("    missing: "), "masking loses facts");
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn validate_names_the_field_of_every_chat_form_mistake() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            r#"{"id":"a","mission":"m","systemprompt":"x","turns":[]}"#,
            "systemprompt: unknown field in a session; did you mean `system_prompt`?",
        ),
        (
            r#"{"id":"b","mission":"m","turns":[{"number":1,"assistant":{"content":"x","tool_calls":[]},"program":"(x)"}]}"#,
            "turns[0].program (turn 1): a PTC-Lisp field in a chat-form turn",
        ),
        (
            r#"{"id":"c","mission":"m","turns":[{"number":1,"assistant":{"content":null,"tool_calls":[{"id":"c1","name":"f","arguments":"{}"}]},"observations":[{"role":"tool","tool_call_id":"c9","content":"r"}]}]}"#,
            "turns[0].observations[0].tool_call_id (turn 1): \"c9\" answers no tool call of this turn's `assistant` (its calls: \"c1\")",
        ),
        (
            r#"{"id":"d","mission":"m","turns":[{"number":1,"assistant":{"content":"x"}},{"number":2,"program":"(x)","success":true}]}"#,
            "turns[1] (turn 2): this turn is in the PTC-Lisp form",
        ),
    ];
    for (i, (line, expected)) in cases.iter().enumerate() {
        let file = write(dir.path(), &format!("c{i}.jsonl"), &format!("{line}\n"));
        let out = recap(&["validate", &file]);
        assert_eq!(out.code, 1, "{line}: {}{}", out.stdout, out.stderr);
        let said = format!("{}{}", out.stdout, out.stderr);
        assert!(said.contains(expected), "{expected}\n---\n{said}");
        assert!(said.contains(":1"), "names the line: {said}");
    }
}

#[test]
fn llm_summary_outside_eval_says_what_to_pass() {
    let chat = chat();
    let out = recap(&["run", &chat, "--strategy", "llm-summary:keep=2"]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .contains("recap eval --endpoint URL --model NAME"),
        "{}",
        out.stderr
    );
}

#[test]
fn malformed_arguments_are_kept_and_counted_not_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let line = r#"{"id":"a","mission":"m","turns":[{"number":1,"assistant":{"content":null,"tool_calls":[{"id":"c1","name":"f","arguments":"{\"path\": \"a.py\""},{"id":"c2","name":"f","arguments":"{}"}]},"observations":[{"role":"tool","tool_call_id":"c1","content":"r"},{"role":"tool","tool_call_id":"c2","content":"r"}]}]}"#;
    let file = write(dir.path(), "m.jsonl", &format!("{line}\n"));
    let out = recap(&["validate", &file]);
    assert_eq!(out.code, 0, "{}{}", out.stdout, out.stderr);
    assert!(
        out.stdout
            .contains("note: 1 of 2 tool calls have arguments that are not valid JSON"),
        "{}",
        out.stdout
    );
    // Rendered exactly as written.
    let out = recap(&render_args(
        &file,
        "a",
        "full-history",
        &["--turn", "2", "--format", "json"],
    ));
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.contains(r#""arguments":"{\"path\": \"a.py\"""#),
        "{}",
        out.stdout
    );
}
