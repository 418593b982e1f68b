//! The evaluation ecosystem's shared corpora (Inspect AI logs, ATIF and ADP
//! trajectories, OpenHands SDK conversations) import completely: pinned counts of
//! sessions, turns, calls and problems by kind; every written line is a valid session;
//! importing twice is byte-identical; full-history keeps 100% of the retention facts;
//! every problem kind is explained in docs/importers.md. (Skipped with a message when
//! ../shared is missing, failing under CI=true.)

mod common;

use common::{counts, import_checked, pinned, shared, summary};
use recap_import::{Kind, Severity};

#[test]
fn inspect_logs_of_every_version_and_container() {
    let Some(dir) = shared("corpora/inspect-eval-logs") else {
        return;
    };
    let (imp, sessions) = import_checked(Kind::Inspect, &dir);
    // corpora/README.md: 10 files (9 logs and the LICENSE), 8 distinct logs counting
    // each twin once; `log_formats` is the same run in both containers (one
    // duplicate-id), `log_read_sample`'s two files are two runs.
    assert_eq!(summary(&imp), (9, 22, 31, 9, 0));
    assert_eq!(
        counts(&imp),
        pinned(&[("skipped:duplicate-id", 1), ("lossy:dropped-key", 135)])
    );
    let dup = imp
        .problems
        .iter()
        .find(|p| p.kind == "duplicate-id")
        .unwrap();
    assert!(dup.message.contains("log_formats"), "{dup}");
    // The agentic browser run: 5 calls with real usage (cache reads included), tool
    // calls answered by their results.
    let browser = sessions
        .iter()
        .find(|s| s.id.starts_with("browser/"))
        .unwrap();
    assert_eq!(browser.chat_turns.len(), 5);
    assert_eq!(
        browser
            .chat_turns
            .iter()
            .map(|t| t.usage.as_ref().unwrap()["input_tokens"].as_u64().unwrap())
            .sum::<u64>(),
        15235,
        "the sample's model_usage"
    );
    assert_eq!(browser.meta["recorded_context"]["sent"], "history");
    // Version 3: the calls' input_refs into the message pool are what was sent.
    let pooled = sessions
        .iter()
        .find(|s| s.id.starts_with("inspect_test_utils/guess_number/"))
        .unwrap();
    assert_eq!(pooled.chat_turns.len(), 6);
    assert_eq!(pooled.meta["recorded_context"]["sent"], "history");
    assert!(
        sessions
            .iter()
            .all(|s| s.meta.contains_key("recorded_context"))
    );
    // A scorer's model call is not a turn of the conversation.
    let graded = sessions
        .iter()
        .filter(|s| s.id.starts_with("security_guide/"))
        .count();
    assert_eq!(graded, 3);
}

#[test]
fn atif_trajectories_with_a_continuation() {
    let Some(dir) = shared("corpora/atif-trajectories") else {
        return;
    };
    let (imp, sessions) = import_checked(Kind::Atif, &dir);
    // corpora/README.md: 3 sessions, 12 agent steps (one copied), 2 structured calls.
    assert_eq!(summary(&imp), (4, 3, 12, 2, 0));
    assert_eq!(
        counts(&imp),
        pinned(&[
            ("lossy:dropped-key", 5),
            ("lossy:missing-trajectory", 1),
            ("lossy:no-result", 1),
        ])
    );
    let terminus = sessions
        .iter()
        .find(|s| s.id.contains("terminus_2"))
        .unwrap();
    assert_eq!(terminus.chat_turns.len(), 8);
    assert_eq!(
        terminus.meta["recorded_context"]["restarts"],
        serde_json::json!([{"after_turns": 3, "observation": 1}])
    );
    assert_eq!(terminus.meta["subagent_refs"].as_array().unwrap().len(), 3);
    assert_eq!(
        terminus.chat_turns[0].usage.as_ref().unwrap()["prompt_tokens"],
        682
    );
}

#[test]
fn adp_standardised_trajectories() {
    let Some(dir) = shared("corpora/adp-trajectories") else {
        return;
    };
    let (imp, sessions) = import_checked(Kind::Adp, &dir);
    // corpora/README.md: 10 sessions, 217 actions (133 api_action of which 127 are
    // answered, 66 code_action kept as code, 18 message_action).
    assert_eq!(summary(&imp), (2, 10, 217, 127, 0));
    assert_eq!(
        counts(&imp),
        pinned(&[("lossy:made-up-call-id", 2), ("lossy:no-result", 6)])
    );
    let gym = sessions
        .iter()
        .filter(|s| s.meta["details"].get("run_id").is_some())
        .collect::<Vec<_>>();
    assert_eq!(gym.len(), 5);
    assert!(gym.iter().all(|s| s.tools.contains_key("execute_bash")));
}

#[test]
fn openhands_sdk_conversations_and_event_folders() {
    let Some(dir) = shared("corpora/openhands-sdk-conversations") else {
        return;
    };
    let (imp, sessions) = import_checked(Kind::OpenhandsSdk, &dir);
    // corpora/README.md: 7 sessions, 24 LLM responses, 13 tool calls. The goal fixture
    // is a 10-event excerpt without a user message: no mission, not imported (its two
    // responses and two calls with it).
    assert_eq!(summary(&imp), (54, 6, 22, 11, 0));
    assert_eq!(
        counts(&imp),
        pinned(&[
            ("skipped:no-mission", 1),
            ("skipped:result-before-response", 3),
            ("lossy:before-mission", 2),
            ("lossy:dropped-key", 144),
            ("lossy:observation-framing", 5),
            ("lossy:unknown-key", 10),
        ])
    );
    let pr = sessions
        .iter()
        .find(|s| s.id == "cd945624-03b9-487e-bdd4-018e3f531dfd")
        .unwrap();
    // 3 calls, 11,583 prompt tokens in the conversation's metrics.
    assert_eq!(
        pr.chat_turns
            .iter()
            .map(|t| t.usage.as_ref().unwrap()["prompt_tokens"].as_u64().unwrap())
            .sum::<u64>(),
        11583
    );
    assert!(
        sessions
            .iter()
            .all(|s| s.meta["recorded_context"]["sent"] == "history")
    );
    assert!(
        imp.problems
            .iter()
            .filter(|p| p.severity == Severity::Skipped)
            .all(|p| p.file.ends_with("events.jsonl"))
    );
}
