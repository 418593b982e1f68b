//! The shared chat-form corpora (Claude Code, SWE-agent, OpenHands, tau2-bench) import
//! completely: pinned counts of sessions, turns, calls and problems by kind; every
//! written line is a valid session; importing twice is byte-identical; full-history
//! keeps 100% of the retention facts; every problem kind is explained in
//! docs/importers.md. (Skipped with a message when ../shared is missing, failing under
//! CI=true.)

mod common;

use common::{counts, pinned, shared, summary};
use recap_core::{Observation, Session};
use recap_import::{Import, Kind, Options, Sidechains};
use std::path::Path;

/// Imports a corpus, checks what every chat corpus must satisfy (and that no budget is
/// invented where the log recorded none), and returns it with its sessions as read back.
fn import_checked(kind: Kind, dir: &Path) -> (Import, Vec<Session>) {
    let (first, sessions) = common::import_checked(kind, dir);
    assert!(
        sessions
            .iter()
            .all(|s| s.budget().is_none() || kind == Kind::Openhands)
    );
    (first, sessions)
}

#[test]
fn claude_code_hook_dumps_import_with_sidechains_and_compactions() {
    let Some(dir) = shared("corpora/claude-code-attio-mcp-server") else {
        return;
    };
    let (imp, sessions) = import_checked(Kind::ClaudeCode, &dir);
    // corpora/README.md: 763 API turns, 730 tool calls, 64 error results; two of the
    // turns are Claude Code's own notices (a usage-limit message, "No response
    // requested."), not model responses.
    assert_eq!(summary(&imp), (5, 19, 761, 730, 64));
    assert_eq!(
        counts(&imp),
        pinned(&[
            ("lossy:dropped-key", 46),
            ("lossy:no-system-prompt", 19),
            ("lossy:synthetic-response", 2),
        ])
    );
    let (side, main): (Vec<&Session>, Vec<&Session>) = sessions
        .iter()
        .partition(|s| s.meta.get("sidechain").is_some());
    assert_eq!((main.len(), side.len()), (5, 14));
    // Every sub-agent session names the Task call that started it.
    for s in &side {
        let link = &s.meta["task_call"];
        let owner = main
            .iter()
            .find(|m| m.id == link["session"])
            .unwrap_or_else(|| panic!("{}: no owner", s.id));
        assert!(s.id.starts_with(&owner.id));
        assert!(owner.chat_turns.iter().any(|t| {
            t.assistant
                .tool_calls
                .iter()
                .any(|c| c.name == "Task" && link["tool_call_id"] == c.id.as_str())
        }));
    }
    // The two compactions are kept as the user messages they are; the resumed session
    // (two session ids) is one conversation.
    let compacted: Vec<&&Session> = main
        .iter()
        .filter(|s| s.meta.contains_key("compactions"))
        .collect();
    assert_eq!(compacted.len(), 2);
    assert!(compacted.iter().all(|s| s.meta.contains_key("session_ids")));
    let summary_text = "This session is being continued from a previous conversation";
    assert!(compacted[0].mission.starts_with(summary_text));
    assert!(compacted[1].chat_turns.iter().any(|t| {
        t.observations
            .iter()
            .any(|o| o.content().starts_with(summary_text))
    }));
    // Responses split over entries sharing message.id are one turn: thinking, text and
    // calls together.
    assert!(sessions.iter().flat_map(|s| &s.chat_turns).any(|t| {
        t.assistant.reasoning.is_some()
            && t.assistant.content.is_some()
            && !t.assistant.tool_calls.is_empty()
    }));

    let excluded = recap_import::import_with(
        Kind::ClaudeCode,
        &[dir],
        &Options {
            sidechains: Sidechains::Exclude,
        },
    )
    .unwrap();
    assert_eq!(excluded.sessions.len(), 5);
    assert_eq!(
        excluded
            .problems
            .iter()
            .filter(|p| p.kind == "sidechain-excluded")
            .count(),
        4,
        "one per file with sub-agents"
    );
}

#[test]
fn claude_code_native_transcripts_import() {
    let Some(dir) = shared("corpora/claude-code-reliability-snapshots") else {
        return;
    };
    let (imp, sessions) = import_checked(Kind::ClaudeCode, &dir);
    assert_eq!(summary(&imp), (7, 7, 70, 61, 1));
    assert_eq!(
        counts(&imp),
        pinned(&[("lossy:dropped-key", 52), ("lossy:no-system-prompt", 7)])
    );
    let port = sessions
        .iter()
        .find(|s| {
            s.meta["import"]["file"]
                .as_str()
                .unwrap()
                .contains("python-to-rust-port")
        })
        .unwrap();
    assert_eq!(
        port.chat_turns
            .iter()
            .map(|t| t.assistant.tool_calls.len())
            .sum::<usize>(),
        39
    );
    assert_eq!(port.meta["model"], "claude-opus-4-5-20251101");
}

#[test]
fn swe_agent_trajectories_import_in_all_three_styles() {
    let Some(dir) = shared("corpora/swe-agent-traj") else {
        return;
    };
    let (imp, sessions) = import_checked(Kind::SweAgent, &dir);
    assert_eq!(summary(&imp), (18, 18, 168, 33, 0));
    assert_eq!(counts(&imp), pinned(&[("lossy:dropped-key", 17)]));
    // Ids tell apart the runs that share an instance name.
    let marshmallow = sessions
        .iter()
        .filter(|s| s.id.ends_with("/marshmallow-code__marshmallow-1867"))
        .count();
    assert_eq!(marshmallow, 7);
    let function_calling: Vec<&Session> = sessions
        .iter()
        .filter(|s| {
            s.chat_turns
                .iter()
                .any(|t| !t.assistant.tool_calls.is_empty())
        })
        .collect();
    assert_eq!(function_calling.len(), 4);
    for s in &sessions {
        let calls = function_calling.iter().any(|f| f.id == s.id);
        for o in s.chat_turns.iter().flat_map(|t| &t.observations) {
            match o {
                Observation::Tool { .. } => assert!(calls, "{}", s.id),
                // SWE-agent: every user message after the task is environment output.
                Observation::User { environment, .. } => assert!(*environment, "{}", s.id),
            }
        }
        assert!(!s.mission.contains("--- DEMONSTRATION ---"), "{}", s.id);
    }
    let with_demos = sessions
        .iter()
        .filter(|s| s.meta.contains_key("demonstrations"))
        .count();
    assert_eq!(with_demos, 1);
    let xml = sessions
        .iter()
        .filter(|s| s.id.contains("xml_sys-env"))
        .flat_map(|s| &s.chat_turns)
        .filter(|t| {
            t.assistant
                .content
                .as_deref()
                .is_some_and(|c| c.contains("<command>"))
        })
        .count();
    assert!(xml > 0);
}

#[test]
fn openhands_event_streams_import_in_both_formats() {
    let Some(dir) = shared("corpora/openhands-events") else {
        return;
    };
    let (imp, sessions) = import_checked(Kind::Openhands, &dir);
    assert_eq!(summary(&imp), (6, 9, 145, 116, 20));
    assert_eq!(
        counts(&imp),
        pinned(&[
            ("lossy:dropped-key", 21),
            ("lossy:no-result", 5),
            ("lossy:old-format", 2),
            ("lossy:workspace-context", 3),
        ])
    );
    // corpora/README.md: the three evaluation runs made 23, 33 and 49 tool calls.
    let mut evaluation: Vec<usize> = sessions
        .iter()
        .filter(|s| s.id.starts_with("ponylang__ponyc"))
        .map(|s| {
            s.chat_turns
                .iter()
                .map(|t| t.assistant.tool_calls.len())
                .sum()
        })
        .collect();
    evaluation.sort();
    assert_eq!(evaluation, [23, 33, 49]);
    for s in sessions
        .iter()
        .filter(|s| s.id.starts_with("ponylang__ponyc"))
    {
        assert_eq!(s.budget(), Some(50), "max_iterations is the budget");
        assert!(s.system_prompt.starts_with("You are OpenHands agent"));
        assert!(!s.tools.is_empty());
    }
    // The older resolver format has no tool calls; its observations are environment
    // output by that format's definition.
    let old: Vec<&Session> = sessions
        .iter()
        .filter(|s| {
            s.meta["import"]["file"]
                .as_str()
                .unwrap()
                .contains("resolver")
        })
        .collect();
    assert_eq!(old.len(), 2);
    assert!(old.iter().flat_map(|s| &s.chat_turns).all(|t| {
        t.assistant.tool_calls.is_empty()
            && t.observations.iter().all(|o| {
                matches!(
                    o,
                    Observation::User {
                        environment: true,
                        ..
                    }
                ) && o.content().starts_with("OBSERVATION:\n")
            })
    }));
}

#[test]
fn tau2_results_import_as_the_agent_saw_them() {
    let Some(dir) = shared("corpora/tau2-bench-results") else {
        return;
    };
    let (imp, sessions) = import_checked(Kind::Tau2, &dir);
    // corpora/README.md: 2,008 assistant messages, of which 100 are tau2's fixed
    // greeting (one per simulation with a user); 1,280 agent tool calls.
    assert_eq!(summary(&imp), (4, 140, 1908, 1280, 15));
    assert_eq!(
        counts(&imp),
        pinned(&[
            ("lossy:dropped-key", 23),
            ("lossy:greeting-before-mission", 100),
            ("lossy:solo-mission", 40),
        ])
    );
    // The 482 user-simulator tool calls of telecom are counted, not imported.
    for what in ["tool_calls(requestor=user)", "tool(requestor=user)"] {
        assert!(
            imp.problems
                .iter()
                .any(|p| p.message.contains(what) && p.message.contains("482 times")),
            "{what}"
        );
    }
    for s in &sessions {
        assert!(
            s.system_prompt
                .starts_with("<instructions>\nYou are a customer service agent")
        );
        assert!(s.system_prompt.contains("\n</instructions>\n<policy>\n"));
        let solo = s.meta["tau2"]["info"]["agent_info"]["implementation"] == "llm_agent_solo";
        assert_eq!(solo, s.system_prompt.contains("<ticket>"), "{}", s.id);
        if solo {
            assert!(
                s.system_prompt
                    .ends_with(&format!("<ticket>\n{}\n</ticket>", s.mission))
            );
        } else {
            assert_eq!(
                s.meta["first_agent_message"],
                "Hi! How can I help you today?"
            );
        }
    }
    // Tool arguments are the text the model wrote (from the raw completion).
    let call = &sessions[0]
        .chat_turns
        .iter()
        .flat_map(|t| &t.assistant.tool_calls)
        .next()
        .unwrap();
    assert!(!call.arguments.contains(": "), "{}", call.arguments);
}

#[test]
fn auto_imports_every_shared_corpus_with_its_own_importer() {
    let Some(dir) = shared("corpora") else {
        return;
    };
    let all = common::import(Kind::Auto, std::slice::from_ref(&dir));
    let by_kind: Vec<Import> = [
        (Kind::PtcRunner, "ptc-runner-loop"),
        (Kind::Smolagents, "smolagents-code"),
        (Kind::ClaudeCode, "claude-code-attio-mcp-server"),
        (Kind::ClaudeCode, "claude-code-reliability-snapshots"),
        (Kind::SweAgent, "swe-agent-traj"),
        (Kind::Openhands, "openhands-events"),
        (Kind::Tau2, "tau2-bench-results"),
        (Kind::Inspect, "inspect-eval-logs"),
        (Kind::Atif, "atif-trajectories"),
        (Kind::Adp, "adp-trajectories"),
        (Kind::OpenhandsSdk, "openhands-sdk-conversations"),
    ]
    .iter()
    .map(|(k, d)| common::import(*k, &[dir.join(d)]))
    .collect();
    let sessions: usize = by_kind.iter().map(|i| i.sessions.len()).sum();
    assert_eq!(all.sessions.len(), sessions);
    // The input skipped is what each importer skips on its own (the same run in two
    // Inspect containers, an OpenHands excerpt without its task), nothing more.
    let skipped = |i: &Import| -> Vec<String> {
        i.problems
            .iter()
            .filter(|p| p.severity == recap_import::Severity::Skipped)
            .map(ToString::to_string)
            .collect()
    };
    let mut expected: Vec<String> = by_kind.iter().flat_map(skipped).collect();
    let mut got = skipped(&all);
    expected.sort();
    got.sort();
    assert_eq!(got, expected);
    assert_eq!(got.len(), 5, "{got:#?}");
    // Every file was recognised.
    assert!(
        all.formats.iter().all(|(_, k)| k.is_some()),
        "{:#?}",
        all.formats
    );
}

#[test]
fn the_wrong_importer_says_which_one_fits() {
    let Some(dir) = shared("corpora/tau2-bench-results") else {
        return;
    };
    let imp = common::import(Kind::ClaudeCode, &[dir]);
    assert!(imp.sessions.is_empty());
    assert_eq!(imp.problems.len(), 4, "one per file: {:#?}", imp.problems);
    assert!(
        imp.problems
            .iter()
            .all(|p| p.kind == "wrong-importer" && p.message.contains("`recap import tau2`"))
    );
    let Some(dir) = shared("corpora/claude-code-reliability-snapshots") else {
        return;
    };
    for kind in [Kind::OpenaiChat, Kind::Openhands, Kind::Smolagents] {
        let imp = common::import(kind, std::slice::from_ref(&dir));
        assert!(imp.sessions.is_empty(), "{kind}");
        assert_eq!(imp.problems.len(), 7, "{kind}: {:#?}", imp.problems);
        assert!(
            imp.problems
                .iter()
                .all(|p| p.message.contains("`recap import claude-code`"))
        );
    }
}
