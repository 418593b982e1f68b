//! ptc-runner importer on hand-written inspection logs: the mapping of a clean run, and
//! one problem per kind of damage while the rest is still imported.

mod common;

use common::{fixture, import, jsonl, one_problem, read_back};
use recap_core::{DefKind, Session, Value};
use recap_import::{Import, Kind, Severity};

fn fixtures() -> Import {
    import(Kind::PtcRunner, &[fixture("ptc-runner")])
}

fn session<'a>(import: &'a Import, id: &str) -> &'a Session {
    import
        .sessions
        .iter()
        .find(|s| s.id == id)
        .unwrap_or_else(|| panic!("no session {id}"))
}

#[test]
fn walks_the_directory_in_sorted_order_and_validates() {
    let imp = fixtures();
    assert_eq!(
        imp.files, 4,
        "every run.inspection.jsonl below the directory"
    );
    let ids: Vec<&str> = imp.sessions.iter().map(|s| s.id.as_str()).collect();
    assert_eq!(ids, ["bare/no-traces", "good/clean", "good/damaged"]);
    let bytes = jsonl(&imp);
    assert_eq!(read_back(&bytes).len(), 3);
    assert!(bytes == jsonl(&fixtures()), "byte-identical re-import");
}

#[test]
fn clean_run_maps_every_field() {
    let imp = fixtures();
    let s = session(&imp, "good/clean");
    assert_eq!(s.mission, "Find the failing service.");
    assert_eq!(
        s.system_prompt,
        "PTC agent. Use run_ptc_lisp once per turn."
    );
    assert_eq!(s.max_turns, 2);
    assert_eq!(s.meta["model"], "fixture-model");
    assert_eq!(s.meta["graded"]["published"], true);
    assert_eq!(
        s.meta["workflow_evaluations"], 1,
        "the workflow's own check is not a turn"
    );
    assert_eq!(s.meta["workflow_tool_calls"], 1);
    assert!(s.meta["request_tools"].is_array());

    let t1 = &s.turns[0];
    assert!(t1.success);
    assert_eq!(
        t1.raw_response,
        format!("Listing services first.\n\n```clojure\n{}\n```", t1.program)
    );
    assert_eq!(t1.prints, vec!["services: 1"]);
    assert!(
        t1.feedback
            .as_deref()
            .unwrap()
            .starts_with("The correlated PTC-Lisp program succeeded")
    );
    assert_eq!(t1.usage.as_ref().unwrap()["input_tokens"], 120);
    assert_eq!(t1.usage.as_ref().unwrap()["cache_read_tokens"], 0);
    assert_eq!(t1.usage.as_ref().unwrap()["total_cost"], 0.0001);
    assert_eq!(t1.definitions.len(), 1);
    assert_eq!(t1.definitions[0].name, "services");
    assert_eq!(t1.definitions[0].value, None, "values are not logged");
    // Tool calls keep PTC-Lisp's string keys, `$`-keys included.
    assert_eq!(t1.tool_calls.len(), 1);
    let call = &t1.tool_calls[0];
    assert_eq!(call.name, "services.list");
    assert_eq!(call.args.get("region"), Some(&Value::Str("eu".into())));
    let result = call.result.as_ref().unwrap();
    assert!(result.get("$schema").is_some());

    // A blank reply content is not part of the raw response; the last turn has no
    // feedback; its `(return ...)` is the run's success.
    let t2 = &s.turns[1];
    assert!(t2.success);
    assert_eq!(
        t2.raw_response,
        recap_core::session::fenced_program(&t2.program)
    );
    assert_eq!(t2.feedback, None);
    assert_eq!(t2.definitions[0].kind, DefKind::Defn);
    assert_eq!(
        t2.definitions[0].docstring.as_deref(),
        Some("True when the service reports errors")
    );
    assert!(
        t2.tool_calls.is_empty(),
        "the verification call belongs to the workflow"
    );
}

#[test]
fn damaged_run_reports_each_problem_and_imports_the_rest() {
    let imp = fixtures();
    let s = session(&imp, "good/damaged");
    assert_eq!(s.turns.len(), 2, "the third turn's reply is cut off");
    let p = one_problem(
        &imp,
        "unknown record type \"debug-note\"",
        Severity::Skipped,
    );
    assert_eq!(p.line, Some(4));
    assert!(p.to_string().contains(
        "damaged/run.inspection.jsonl:4: session good/damaged: skipped: record not imported"
    ));
    assert_eq!(
        one_problem(&imp, "without an object `payload`", Severity::Skipped).line,
        Some(5)
    );
    assert_eq!(
        one_problem(&imp, "has no capability-input", Severity::Skipped).line,
        Some(6)
    );
    let malformed: Vec<_> = common::problems_with(&imp, "truncated JSON record")
        .into_iter()
        .filter(|p| p.file.ends_with("damaged/run.inspection.jsonl"))
        .collect();
    assert_eq!(
        malformed.iter().map(|p| p.line).collect::<Vec<_>>(),
        [Some(7), Some(12)]
    );
    assert_eq!(
        one_problem(&imp, "the last llm-request has no reply", Severity::Skipped).line,
        Some(11)
    );

    // The evaluation error's feedback comes from the request whose reply is missing.
    let t2 = &s.turns[1];
    assert!(!t2.success);
    let e = t2.error.as_ref().unwrap();
    assert_eq!(e.message, "type_error: count: expected a collection");
    assert_eq!(e.reason.as_deref(), Some("type_error"));
    assert!(t2.definitions.is_empty());
}

#[test]
fn without_traces_the_status_comes_from_the_feedback() {
    let imp = fixtures();
    let s = session(&imp, "bare/no-traces");
    one_problem(&imp, "no traces file at", Severity::Lossy);
    assert!(
        !s.turns[0].success,
        "an error feedback marks the turn failed"
    );
    assert_eq!(
        s.turns[0].error_message(),
        Some("type_error: count: expected a collection")
    );
    let p = one_problem(&imp, "unknown evaluation status", Severity::Lossy);
    assert_eq!(p.turn, Some(2));
    assert!(s.turns[1].success);
}

#[test]
fn a_log_without_model_calls_is_skipped_and_a_bad_grade_is_reported() {
    let imp = fixtures();
    let p = one_problem(&imp, "no llm-request with a reply", Severity::Skipped);
    assert_eq!(p.session.as_deref(), Some("empty/nothing"));
    let p = one_problem(
        &imp,
        "graded result without a string `tag`",
        Severity::Skipped,
    );
    assert!(p.file.ends_with("good/results.jsonl"));
    assert_eq!(p.line, Some(2));
}

#[test]
fn naming_the_same_run_twice_is_an_error() {
    let file = fixture("ptc-runner/good/inspect/clean/run.inspection.jsonl");
    let e = recap_import::import(Kind::PtcRunner, &[file.clone(), file]).unwrap_err();
    assert!(e.to_string().contains("this file is given twice"), "{e}");
    // The same file through its directory and by name, too.
    let e = recap_import::import(
        Kind::PtcRunner,
        &[
            fixture("ptc-runner/good"),
            fixture("ptc-runner/good/inspect/../inspect/clean/run.inspection.jsonl"),
        ],
    )
    .unwrap_err();
    assert!(e.to_string().contains("this file is also given as"), "{e}");
}
