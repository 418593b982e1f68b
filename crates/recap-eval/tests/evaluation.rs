//! Whole evaluations against the stand-in model on 127.0.0.1: both measures with the
//! numbers the stand-in's rules imply, identical requests sent once, a rerun sending
//! nothing, resuming after the server went away mid-run, the judge, a damaged cache.

mod support;

use recap_core::tokens::WordCounter;
use recap_core::{Session, Strategy};
use recap_eval::report::EvalReport;
use recap_eval::standin::{Config, StandIn};
use recap_eval::{EvalError, EvalOptions, evaluate};
use recap_gen::chat::ChatSessionBuilder;
use recap_llm::{Cache, CacheError, Sampling};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;

/// A chat session whose turns 2 and 4 repeat the call before them (the stand-in repeats
/// the last call, so it agrees with the record after turns 1 and 3), and whose facts all
/// begin differently (the stand-in finds a probe's answer by its cue).
fn chat_session() -> Session {
    let log = "\nlog line of the tool".repeat(20);
    let r = |first: &str| format!("{first}{log}");
    ChatSessionBuilder::new("Fix the failing build")
        .id("chat")
        .system("You are a coding agent.")
        .tool(
            "read",
            "Read a file",
            json!({"type": "object", "properties": {"path": {"type": "string"}}}),
        )
        .tool_turn(
            "",
            &[("c1", "read", r#"{"path": "/alpha/main.rs"}"#)],
            &[&r("beta: compiled fine\nmore")],
        )
        .tool_turn(
            "",
            &[("c2", "read", r#"{"path":"/alpha/main.rs"}"#)],
            &[&r("delta: three tests failed")],
        )
        .tool_turn(
            "",
            &[("c3", "read", r#"{"path": "/gamma/lib.rs"}"#)],
            &[&r("epsilon: lint is clean")],
        )
        .tool_turn(
            "",
            &[("c4", "read", r#"{"path": "/gamma/lib.rs"}"#)],
            &[&r("zeta: all done now")],
        )
        .build()
}

/// A PTC session whose second program is the first one spaced differently.
fn ptc_session() -> Session {
    let line = json!({
        "id": "ptc", "mission": "Compute the total", "system_prompt": "Write PTC-Lisp.",
        "max_turns": 5,
        "turns": [
            {"number": 1, "program": "(def x 1)", "success": true, "prints": ["value is 42"],
             "definitions": [{"name": "x", "kind": "def"}]},
            {"number": 2, "program": "(def  x\n  1)", "success": true},
            {"number": 3, "program": "(return x)", "success": true}
        ]
    });
    Session::from_json(&line).expect("a valid PTC session")
}

fn strategies(specs: &[&str]) -> Vec<Arc<dyn Strategy>> {
    let mut r = recap_builtins::registry();
    r.set_counter(Arc::new(WordCounter));
    specs.iter().map(|s| r.build(s).unwrap()).collect()
}

fn options(judge: bool) -> EvalOptions {
    EvalOptions {
        sample: 100,
        seed: 7,
        next_action: true,
        probes: true,
        probes_per_call: 10,
        judge,
        resamples: 200,
        sampling: Sampling {
            model: "stand-in".into(),
            max_tokens: 64,
            temperature: 0.0,
        },
        threads: 3,
        shard: None,
    }
}

fn run(url: &str, cache: &Path, judge: bool) -> Result<EvalReport, EvalError> {
    let e = support::endpoint(url, cache);
    let sessions = [chat_session(), ptc_session()];
    let strategies = strategies(&["full-history", "observation-masking:window=1"]);
    evaluate(&sessions, &strategies, &e, &WordCounter, &options(judge))
}

#[test]
fn both_measures_give_the_numbers_the_rules_imply() {
    let server = StandIn::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let report = run(&server.url(), &dir.path().join("c.sqlite"), false).unwrap();
    assert_eq!(
        (
            report.sample.calls,
            report.sample.chat_calls,
            report.sample.ptc_calls
        ),
        (7, 4, 3)
    );
    let control = &report.strategies[0];
    let masking = &report.strategies[1];
    assert!(control.control && control.strategy == "full-history");
    // Next action: chat after turns 1 and 3, PTC after turn 1 (spacing ignored).
    let na = control.next_action.as_ref().unwrap();
    assert_eq!((na.agreed, na.asked), (3, 7));
    // Masking keeps every call: the same actions, on the 4 chat calls it renders.
    let na = masking.next_action.as_ref().unwrap();
    assert_eq!((na.agreed, na.asked, masking.not_applicable), (2, 4, 3));
    assert_eq!(na.relative, Some(1.0));
    // Probes: the control answers all 12; masking loses the results older than one turn
    // (after turn 2: beta; after turn 3: beta and delta) of its 10 chat questions.
    let p = control.probes.as_ref().unwrap();
    assert_eq!((p.agreed, p.asked), (12, 12));
    let p = masking.probes.as_ref().unwrap();
    assert_eq!((p.agreed, p.asked), (7, 10));
    assert_eq!(p.relative, Some(0.7));
    let ci = p.interval.unwrap();
    assert!(ci.low < 0.7 && 0.7 < ci.high, "{ci:?}");
    assert!(masking.savings.unwrap() > 0.0);
    // Calls 0 and 1 render the same prompt under both strategies: sent once.
    let kinds = server.kinds();
    assert_eq!(kinds["next-action"], 4 + 2 + 3);
    assert_eq!(kinds["probe"], 12 + 8);
    assert_eq!(report.requests.requests, 29);
    assert_eq!(report.requests.sent, 29);
    assert_eq!(report.by_purpose["probe"].requests, 20);
    // Every format carries the evaluation's own requests and tokens.
    for text in [report.to_table(), report.to_markdown(), report.to_json()] {
        assert!(text.contains("29"), "{text}");
        assert!(
            text.contains(&report.requests.prompt_tokens.to_string()),
            "{text}"
        );
    }
}

#[test]
fn a_rerun_sends_nothing_and_reports_the_same() {
    let server = StandIn::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("c.sqlite");
    let first = run(&server.url(), &cache, false).unwrap();
    let sent = server.received();
    let second = run(&server.url(), &cache, false).unwrap();
    assert_eq!(server.received(), sent, "the rerun sent requests");
    assert_eq!(second.requests.cached, first.requests.requests);
    assert_eq!(second.requests.sent, 0);
    let measures = |r: &EvalReport| serde_json::to_string(&r.strategies).unwrap();
    assert_eq!(measures(&first), measures(&second));
}

#[test]
fn an_interrupted_run_resumes_without_asking_anything_twice() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("c.sqlite");
    let dying = StandIn::start(Config {
        stop_after: Some(11),
        ..Config::default()
    })
    .unwrap();
    let err = run(&dying.url(), &cache, false).unwrap_err();
    assert!(err.to_string().contains(&dying.url()), "{err}");
    let answered = dying.answered();
    assert_eq!(answered, 11);
    assert_eq!(Cache::open(&cache).unwrap().len().unwrap(), 11);
    let fresh = StandIn::start(Config::default()).unwrap();
    let report = run(&fresh.url(), &cache, false).unwrap();
    assert_eq!(fresh.received(), 29 - 11);
    assert_eq!((report.requests.cached, report.requests.sent), (11, 18));
}

#[test]
fn the_judge_grades_each_distinct_answer_once() {
    let server = StandIn::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let report = run(&server.url(), &dir.path().join("c.sqlite"), true).unwrap();
    let judged = report.strategies[0].judged.as_ref().unwrap();
    assert_eq!((judged.agreed, judged.asked), (12, 12));
    let judged = report.strategies[1].judged.as_ref().unwrap();
    assert_eq!((judged.agreed, judged.asked), (7, 10));
    // A verdict depends on the question (so the fact) and the answer only: the control's
    // answers are those of its 6 facts, masking's right answers are the control's, and
    // its wrong ones (UNKNOWN for beta and for delta) add two: 8 verdicts for 22 answers.
    assert_eq!(server.kinds()["judge"], 8);
    assert_eq!(report.by_purpose["judge"].requests, 8);
}

#[test]
fn a_damaged_cache_is_refused_with_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("c.sqlite");
    let server = StandIn::start(Config::default()).unwrap();
    run(&server.url(), &cache, false).unwrap();
    // Overwrite pages in the middle of the file, as a disk error would.
    let mut bytes = std::fs::read(&cache).unwrap();
    let len = bytes.len();
    for b in &mut bytes[len / 3..len - 100] {
        *b = 0x5a;
    }
    std::fs::write(&cache, &bytes).unwrap();
    let _ = std::fs::remove_file(dir.path().join("c.sqlite-wal"));
    let err = Cache::open(&cache).unwrap_err();
    assert!(matches!(err, CacheError::Corrupt { .. }), "{err}");
    assert!(
        err.to_string().contains("c.sqlite") && err.to_string().contains("damaged"),
        "{err}"
    );
}

#[test]
fn shards_ask_together_what_one_evaluation_asks_and_their_merged_caches_answer_it_all() {
    let server = StandIn::start(Config::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let sessions = [chat_session(), ptc_session()];
    let strategies = strategies(&["full-history", "observation-masking:window=1"]);
    let whole = run(&server.url(), &dir.path().join("whole.sqlite"), true).unwrap();
    let asked = server.received();
    let merged_path = dir.path().join("merged.sqlite");
    let merged = Cache::open(&merged_path).unwrap();
    let (mut empty, mut calls) = (0, 0);
    for i in 0..3 {
        let cache = dir.path().join(format!("shard{i}.sqlite"));
        let mut opts = options(true);
        opts.shard = Some(recap_harness::Shard::new(i, 3).unwrap());
        let e = support::endpoint(&server.url(), &cache);
        match evaluate(&sessions, &strategies, &e, &WordCounter, &opts) {
            Ok(r) => {
                calls += r.sample.calls;
                let note = format!("shard {i}/3: {} of the 7 sampled calls", r.sample.calls);
                assert!(
                    r.notes.iter().any(|n| n.starts_with(&note)),
                    "{:?}",
                    r.notes
                );
            }
            Err(EvalError::EmptyShard { sampled, .. }) => {
                assert_eq!(sampled, 7);
                empty += 1;
            }
            Err(e) => panic!("{e}"),
        }
        drop(e);
        if cache.exists() {
            merged.merge_from(&cache).unwrap();
        }
    }
    assert!(empty > 0, "two sessions over three shards leave one empty");
    assert_eq!(calls, whole.sample.calls);
    assert_eq!(
        server.received(),
        2 * asked,
        "the shards asked each request once"
    );
    drop(merged);
    let again = run(&server.url(), &merged_path, true).unwrap();
    assert_eq!(
        server.received(),
        2 * asked,
        "nothing asked after the merge"
    );
    assert_eq!(again.requests.sent, 0);
    let measures = |r: &EvalReport| serde_json::to_string(&r.strategies).unwrap();
    assert_eq!(measures(&again), measures(&whole));
}
