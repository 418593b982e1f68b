//! Every real tool-calling corpus of `../shared/corpora`, imported and replayed through
//! every built-in: `full-history` keeps 100% of the chat facts (a fact it misses would
//! be an importer defect), no strategy breaks tool pairing or any invariant it declares,
//! the PTC-only strategies are not applicable (never numbers), and no turns line is
//! invented for an agent that never had a budget.

use recap_core::session::RECORDED_CONTEXT;
use recap_core::{Form, Strategy};
use recap_harness::{Backend, Encoding, RunConfig, StrategyEntry, Tokenizer, run_sessions};
use recap_import::{Kind, import};
use std::sync::Arc;

const CORPORA: [(&str, Kind); 5] = [
    ("corpora/claude-code-attio-mcp-server", Kind::ClaudeCode),
    (
        "corpora/claude-code-reliability-snapshots",
        Kind::ClaudeCode,
    ),
    ("corpora/swe-agent-traj", Kind::SweAgent),
    ("corpora/openhands-events", Kind::Openhands),
    ("corpora/tau2-bench-results", Kind::Tau2),
];

#[test]
fn every_chat_corpus_replays_with_full_retention_and_no_violations() {
    let tok = Tokenizer::get(Encoding::O200kBase, Backend::Fast);
    let mut registry = recap_builtins::registry();
    registry.set_counter(Arc::new(tok));
    let strategies: Vec<Arc<dyn Strategy>> = registry
        .infos()
        .map(|i| {
            registry
                .build(&i.name)
                .expect("every built-in builds with defaults")
        })
        .collect();
    for (rel, kind) in CORPORA {
        let Some(dir) = recap_gen::shared::path(rel, "a real tool-calling corpus") else {
            continue;
        };
        let imported = import(kind, &[dir]).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let sessions = imported.sessions;
        assert!(!sessions.is_empty(), "{rel}: no sessions imported");
        assert!(sessions.iter().all(|s| s.form == Form::Chat), "{rel}");
        let mut cfg = RunConfig::new(
            strategies.iter().cloned().map(StrategyEntry::new).collect(),
            registry.build("full-history").unwrap(),
            vec![tok],
        )
        .unwrap();
        cfg.jobs = 2;
        let n = sessions.len() as u64;
        let recorded = sessions
            .iter()
            .filter(|s| s.meta.contains_key(RECORDED_CONTEXT))
            .count() as u64;
        let restarted = sessions.iter().any(|s| {
            s.meta
                .get(RECORDED_CONTEXT)
                .is_some_and(|r| r.get("restarts").is_some())
        });
        // Which importers know what the agent sent (docs/importers.md).
        let expected = match kind {
            Kind::ClaudeCode | Kind::Tau2 => n,
            Kind::Openhands => 3,
            _ => 0,
        };
        assert_eq!(recorded, expected, "{rel}: sessions with a record");
        let report = run_sessions(&cfg, rel, sessions).unwrap();
        let total = |name: &str| {
            report
                .runs
                .iter()
                .find(|r| r.strategy == name)
                .map(|r| r.prompt_tokens_total)
        };
        for run in &report.runs {
            let what = format!("{rel}: {}", run.strategy);
            let chat = run.forms.iter().any(|f| f == "chat");
            if !chat {
                assert_eq!((run.sessions, run.not_applicable), (0, n), "{what}");
                continue;
            }
            if run.strategy == "recorded" {
                assert_eq!(
                    (run.sessions, run.not_applicable),
                    (recorded, n - recorded),
                    "{what}: the sessions with a record, each rendered completely"
                );
                if recorded == n {
                    // The agent's own compactions are all that make it send less.
                    let (mine, full) = (total("recorded"), total("full-history"));
                    if restarted {
                        assert!(mine < full, "{what}: {mine:?} vs {full:?}");
                    } else {
                        assert_eq!(mine, full, "{what}");
                    }
                    assert!(
                        run.replay_fidelity.is_some(),
                        "{what}: compared with the recorded usage"
                    );
                }
            } else {
                assert_eq!(run.not_applicable, 0, "{what}");
                assert_eq!(run.sessions, n, "{what}: every session rendered completely");
            }

            assert_eq!(
                run.invariant_violations.count, 0,
                "{what}: {:#?}",
                run.invariant_violations.examples
            );
            assert_eq!(run.render_errors.count, 0, "{what}");
            assert!(run.prompt_tokens_total > 0 || run.sessions == 0, "{what}");
            if run.strategy == "full-history" {
                assert!(run.retention_facts > 0, "{what}: facts recorded");
                assert_eq!(
                    run.retention_retained, run.retention_facts,
                    "{what}: full-history keeps every fact"
                );
            }
        }
    }
}

#[test]
fn no_turns_line_is_invented_for_chat_sessions() {
    let Some(dir) = recap_gen::shared::path(
        "corpora/tau2-bench-results",
        "the tau2-bench results corpus",
    ) else {
        return;
    };
    let sessions = import(Kind::Tau2, &[dir]).unwrap().sessions;
    let full = recap_full_history::FullHistory;
    for s in sessions.iter().take(20) {
        assert_eq!(s.budget(), None, "{}: no budget was recorded", s.id);
        for k in 0..s.turn_count() {
            let messages = recap_core::render_call(&full, s, k).unwrap();
            assert!(
                messages.iter().all(
                    |m| !m.content.contains("Turns left:") && !m.content.contains("FINAL TURN")
                ),
                "{} call {k}",
                s.id
            );
        }
    }
}
