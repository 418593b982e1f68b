//! smolagents importer on hand-written CodeAgent runs.

mod common;

use common::{fixture, import, jsonl, one_problem, read_back};
use recap_core::{DefKind, Value};
use recap_import::{Import, Kind, Severity};

fn runs() -> Import {
    import(Kind::Smolagents, &[fixture("smolagents/runs.jsonl")])
}

#[test]
fn steps_become_turns() {
    let imp = runs();
    let ids: Vec<&str> = imp.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["runs:1", "runs:2", "runs:3"]);
    let s = &imp.sessions[0];
    assert_eq!(s.mission, "New task:\nWhat is 6*7?");
    assert_eq!(s.system_prompt, "You solve tasks with code.");
    assert_eq!(s.meta["true_answer"], "42");
    assert_eq!(s.meta["import"]["importer"], "smolagents");
    assert_eq!(s.turns.len(), 4);
    assert_eq!(s.max_turns, 4);

    // Step 1: the executed code, its prints (one per log line), the last output.
    let t = &s.turns[0];
    assert!(t.success);
    assert!(t.raw_response.starts_with("Thought: compute it.\n<code>"));
    assert!(t.program.starts_with("def times(a, b):"));
    assert_eq!(t.prints, vec!["x is 42", "done"]);
    assert_eq!(t.result, Some(Value::Nil));
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.tool_calls[0].name, "python_interpreter");
    assert_eq!(t.tool_calls[0].args, Value::Str(t.program.clone()));
    let defs: Vec<(&str, DefKind, Option<&str>)> = t
        .definitions
        .iter()
        .map(|d| (d.name.as_str(), d.kind, d.docstring.as_deref()))
        .collect();
    assert_eq!(
        defs,
        [
            ("times", DefKind::Defn, Some("Multiply two numbers.")),
            ("x", DefKind::Def, None)
        ]
    );
    assert!(
        t.feedback
            .as_deref()
            .unwrap()
            .starts_with("Observation:\nExecution logs:\nx is 42")
    );

    // Step 2: no code block — a parsing error without a program.
    let t = &s.turns[1];
    assert!(!t.success);
    assert_eq!(t.program, "");
    assert!(t.tool_calls.is_empty());
    assert_eq!(
        t.error.as_ref().unwrap().reason.as_deref(),
        Some("code_parsing")
    );
    assert!(
        t.error_message()
            .unwrap()
            .starts_with("Error in code parsing:")
    );

    // Step 3: an execution error; the retry boilerplate is not part of the message.
    let t = &s.turns[2];
    assert!(!t.success);
    assert_eq!(
        t.error_message(),
        Some(
            "Code execution failed at line 'import numpy' due to: InterpreterError: Import of numpy is not allowed."
        )
    );
    assert_eq!(
        t.error.as_ref().unwrap().reason.as_deref(),
        Some("InterpreterError")
    );
    assert!(
        t.feedback
            .as_deref()
            .unwrap()
            .ends_with("try a completely different approach.\n")
    );

    // Step 4: the final answer.
    assert_eq!(s.turns[3].result, Some(Value::Str("42".into())));

    let bytes = jsonl(&imp);
    assert_eq!(read_back(&bytes).len(), 3);
    assert!(bytes == jsonl(&runs()));
}

#[test]
fn reaching_max_steps_is_a_run_error_not_a_failed_step() {
    let imp = runs();
    let s = &imp.sessions[1];
    assert_eq!(s.turns.len(), 1);
    assert!(s.turns[0].success);
    assert_eq!(s.meta["import"]["run_error"], "Reached max steps.");
    assert_eq!(
        s.turns[0].feedback.as_deref(),
        Some("Observation:\nExecution logs:\nLast output from code snippet:\n1")
    );
}

#[test]
fn broken_messages_are_reported_and_the_run_is_still_imported() {
    let imp = runs();
    let s = &imp.sessions[2];
    assert_eq!(s.turns.len(), 1);
    let p = one_problem(&imp, "cannot read the tool calls", Severity::Lossy);
    assert_eq!((p.line, p.session.as_deref()), (Some(3), Some("runs:3")));
    assert!(p.message.starts_with("intermediate_steps[3]:"));
    one_problem(&imp, "unknown role \"narrator\"", Severity::Lossy);
    one_problem(&imp, "message without a string `role`", Severity::Lossy);
    one_problem(&imp, "neither an observation nor an error", Severity::Lossy);
    assert_eq!(
        s.turns[0].feedback.as_deref(),
        Some("Something nobody expected")
    );
}

#[test]
fn unusable_records_are_skipped_by_line() {
    let imp = runs();
    let at = |text: &str| one_problem(&imp, text, Severity::Skipped).line;
    assert_eq!(at("missing `intermediate_steps`"), Some(4));
    assert_eq!(at("expected a JSON object per line"), Some(5));
    assert_eq!(at("no user message with the task"), Some(6));
    assert_eq!(at("truncated JSON record"), Some(7));
    assert_eq!(imp.problems.len(), 8, "{:#?}", imp.problems);
}
