//! Metrics on small sessions computed by hand, token counts taken from tiktoken-rs
//! directly (not through the harness's tokenizer type).

mod common;

use common::*;
use recap_core::{Message, Strategy};
use recap_harness::{Backend, Encoding, RunConfig, StrategyEntry, Tokenizer, run_sessions};

fn tiktoken(text: &str) -> u64 {
    tiktoken_rs::o200k_base_singleton()
        .encode_ordinary(text)
        .len() as u64
}

/// SPEC 9 straight from the definition.
fn prompt_tokens(messages: &[Message]) -> u64 {
    3 + messages
        .iter()
        .map(|m| 3 + tiktoken(m.role.as_str()) + tiktoken(&m.content))
        .sum::<u64>()
}

fn prompts(s: &dyn Strategy, session: &recap_core::Session) -> Vec<Vec<Message>> {
    (0..session.turns.len())
        .map(|k| recap_core::render_call(s, session, k).unwrap())
        .collect()
}

fn config(strategies: Vec<StrategyEntry>, backend: Backend) -> RunConfig {
    RunConfig::new(
        strategies,
        arc(TestFull),
        vec![Tokenizer::get(Encoding::O200kBase, backend)],
    )
    .unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-12
}

#[test]
fn tokens_cache_savings_retention_fidelity_by_hand() {
    let session = session("s1");
    for backend in [Backend::Reference, Backend::Fast] {
        let cfg = config(vec![StrategyEntry::new(arc(TestSingle))], backend);
        let report = run_sessions(&cfg, "mem", vec![session.clone()]).unwrap();
        assert_eq!(report.runs.len(), 2);
        let (full, single) = (&report.runs[0], &report.runs[1]);
        assert_eq!(full.strategy, "full-history");
        assert!(full.implicit, "baseline added because not asked for");
        assert_eq!(single.strategy, "test-single");
        assert!(!single.implicit);

        // Prompt tokens, call by call.
        let fp = prompts(&TestFull, &session);
        let sp = prompts(&TestSingle, &session);
        let f_tokens: Vec<u64> = fp.iter().map(|p| prompt_tokens(p)).collect();
        let s_tokens: Vec<u64> = sp.iter().map(|p| prompt_tokens(p)).collect();
        assert_eq!(full.prompt_tokens_total, f_tokens.iter().sum::<u64>());
        assert_eq!(full.prompt_tokens_peak, *f_tokens.iter().max().unwrap());
        assert_eq!(single.prompt_tokens_total, s_tokens.iter().sum::<u64>());
        let by_call: Vec<f64> = single
            .prompt_tokens_by_call
            .iter()
            .map(|c| c.mean_prompt_tokens)
            .collect();
        assert_eq!(
            by_call,
            s_tokens.iter().map(|&t| t as f64).collect::<Vec<_>>()
        );
        assert_eq!((full.sessions, full.calls), (1, 3));

        // Cache: append-only → every message of the previous call is cached whole.
        let whole = |m: &Message| 3 + tiktoken(m.role.as_str()) + tiktoken(&m.content);
        let f_cached: u64 = (1..3)
            .map(|k| fp[k - 1].iter().map(whole).sum::<u64>())
            .sum();
        assert_eq!(full.cached_tokens, f_cached);
        // Single user message: SYSTEM whole, then <|start|> user <|message|> and the
        // common token prefix of the two user contents.
        let enc = |t: &str| tiktoken_rs::o200k_base_singleton().encode_ordinary(t);
        let s_cached: u64 = (1..3)
            .map(|k| {
                let (a, b) = (enc(&sp[k - 1][1].content), enc(&sp[k][1].content));
                let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count() as u64;
                assert!(common > 0, "the mission is a shared prefix");
                whole(&sp[k][0]) + 1 + tiktoken("user") + 1 + common
            })
            .sum();
        assert_eq!(single.cached_tokens, s_cached);
        assert!(close(
            single.effective_cost,
            (single.prompt_tokens_total - s_cached) as f64 + 0.1 * s_cached as f64
        ));

        // Savings against the baseline.
        let expect =
            1.0 - s_tokens.iter().sum::<u64>() as f64 / f_tokens.iter().sum::<u64>() as f64;
        assert!(close(single.savings_vs_full_history.unwrap(), expect));
        assert!(close(full.savings_vs_full_history.unwrap(), 0.0));

        // Retention (facts worked out by hand in tests/common/mod.rs terms):
        // call 1: laptops ✓, cheapest ✗ (full) / ✓ (single), "found 3 laptops" ✓ / ✗
        // call 2: + "2 in stock" ✓ (full) / ✗ (single)
        assert_eq!((full.retention_facts, full.retention_retained), (7, 5));
        assert_eq!((single.retention_facts, single.retention_retained), (7, 4));
        assert!(close(single.retention.unwrap(), 4.0 / 7.0));

        // Replay fidelity: call k against turns[k].usage (40 and 80 recorded).
        let f = full
            .replay_fidelity
            .as_ref()
            .expect("baseline has fidelity");
        assert_eq!(f.calls, 2);
        let r0 = f_tokens[0] as f64 / 40.0;
        let r1 = f_tokens[1] as f64 / 80.0;
        assert!(close(f.min, r0.min(r1)) && close(f.max, r0.max(r1)));
        assert!(single.replay_fidelity.is_none());

        // Reuse: the baseline tokenizes each new message once.
        assert_eq!(full.token_counting.messages_tokenized, 2 + 2 + 2);
        assert_eq!(full.token_counting.messages_reused, 2 + 4);
        assert!(full.render_ns_median.is_some());
        assert_eq!(
            single.invariant_violations.count, 0,
            "{:?}",
            single.invariant_violations
        );
    }
}

#[test]
fn render_errors_and_panics_are_counted_never_hidden() {
    let cfg = config(
        vec![
            StrategyEntry::new(arc(TestFailing)),
            StrategyEntry::new(arc(TestPanicking)),
        ],
        Backend::Fast,
    );
    let report = run_sessions(&cfg, "mem", vec![session("a"), session("b")]).unwrap();
    let failing = &report.runs[1];
    assert_eq!(failing.strategy, "test-failing");
    assert_eq!(failing.render_errors.count, 2);
    assert_eq!(failing.render_errors.sessions, 2);
    assert_eq!(
        failing.sessions, 0,
        "incomplete sessions are not in the token totals"
    );
    assert_eq!(failing.prompt_tokens_total, 0);
    let ex = &failing.render_errors.examples[0];
    assert_eq!((ex.session.as_str(), ex.call), ("a", 1));
    assert_eq!(ex.kind, "invalid_response");
    assert_eq!(ex.message, "no can do");
    let panicking = &report.runs[2];
    assert_eq!(panicking.render_errors.count, 2);
    assert_eq!(panicking.render_errors.examples[0].kind, "panic");
    assert!(
        panicking.render_errors.examples[0]
            .message
            .contains("strategy bug")
    );
    assert!(report.has_problems());
    let details = &failing.session_details;
    assert_eq!(details.len(), 2);
    assert!(!details[0].complete && details[0].prompt_tokens_total.is_none());
    // The table lists them.
    let table = recap_harness::report::to_table(&report);
    assert!(
        table.contains(
            "render error: test-failing mem session a call 1: invalid_response: no can do"
        ),
        "{table}"
    );
}

#[test]
fn invariant_violations_are_counted_with_examples() {
    let cfg = config(vec![StrategyEntry::new(arc(TestForgetful))], Backend::Fast);
    let report = run_sessions(&cfg, "mem", vec![session("a")]).unwrap();
    let v = &report.runs[1].invariant_violations;
    assert_eq!(v.by_invariant.get("mission-verbatim"), Some(&3), "{v:?}");
    assert!(v.count >= 3);
    assert_eq!(v.examples[0].session, "a");
    assert_eq!(v.examples[0].call, 0);
}

#[test]
fn explicit_baseline_is_not_implicit_and_duplicates_are_errors() {
    let cfg = config(
        vec![
            StrategyEntry::new(arc(TestSingle)),
            StrategyEntry::new(arc(TestFull)),
        ],
        Backend::Fast,
    );
    assert_eq!(cfg.baseline, 1);
    assert!(cfg.strategies.iter().all(|s| !s.implicit));
    let dup = RunConfig::new(
        vec![
            StrategyEntry::new(arc(TestSingle)),
            StrategyEntry::new(arc(TestSingle)),
        ],
        arc(TestFull),
        vec![Tokenizer::get(Encoding::O200kBase, Backend::Fast)],
    );
    assert!(dup.err().unwrap().to_string().contains("test-single"));
    let mut bad = cfg.clone();
    bad.cache_read_ratio = 1.5;
    assert!(run_sessions(&bad, "mem", vec![]).is_err());
}

#[test]
fn two_tokenizers_give_one_run_each_tokenizer_major() {
    let cfg = RunConfig::new(
        vec![StrategyEntry::new(arc(TestSingle))],
        arc(TestFull),
        vec![
            Tokenizer::get(Encoding::O200kBase, Backend::Fast),
            Tokenizer::get(Encoding::Cl100kBase, Backend::Fast),
        ],
    )
    .unwrap();
    let report = run_sessions(&cfg, "mem", vec![session("a")]).unwrap();
    let order: Vec<(&str, &str)> = report
        .runs
        .iter()
        .map(|r| (r.strategy.as_str(), r.tokenizer.as_str()))
        .collect();
    assert_eq!(
        order,
        [
            ("full-history", "o200k_base"),
            ("test-single", "o200k_base"),
            ("full-history", "cl100k_base"),
            ("test-single", "cl100k_base"),
        ]
    );
    let cl = tiktoken_rs::cl100k_base_singleton();
    let total: u64 = prompts(&TestSingle, &session("a"))
        .iter()
        .map(|p| {
            3 + p
                .iter()
                .map(|m| {
                    3 + cl.encode_ordinary(m.role.as_str()).len() as u64
                        + cl.encode_ordinary(&m.content).len() as u64
                })
                .sum::<u64>()
        })
        .sum();
    assert_eq!(report.runs[3].prompt_tokens_total, total);
}

#[test]
fn rejected_sessions_are_listed_and_the_rest_still_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.jsonl");
    let good = serde_json::to_string(&session("good").to_json()).unwrap();
    let gap = good
        .replace("\"number\":2", "\"number\":7")
        .replace("\"good\"", "\"gap\"");
    std::fs::write(&path, format!("{good}\n{{not json\n{gap}\n")).unwrap();
    let cfg = config(vec![StrategyEntry::new(arc(TestSingle))], Backend::Fast);
    let report =
        recap_harness::run_corpora(&cfg, std::slice::from_ref(&path), Default::default()).unwrap();
    assert_eq!(report.runs[1].sessions, 1);
    assert_eq!(report.rejected.len(), 2);
    assert_eq!(report.rejected[0].line, 2);
    assert_eq!(report.rejected[0].field, "json");
    assert_eq!(report.rejected[1].line, 3);
    assert_eq!(report.rejected[1].session.as_deref(), Some("gap"));
    assert_eq!(report.rejected[1].field, "turns[1].number");
    assert_eq!(report.settings.corpora[0].rejected, 2);
    // An unreadable file is one rejection (line 0, field `file`), not an error of the
    // run: the files after it still run.
    let missing = dir.path().join("nope.jsonl");
    let report = recap_harness::run_corpora(
        &cfg,
        &[missing.clone(), dir.path().to_path_buf(), path],
        Default::default(),
    )
    .unwrap();
    assert_eq!(report.runs[1].sessions, 1);
    assert_eq!(report.rejected.len(), 4);
    for (r, path, says) in [
        (&report.rejected[0], &missing, "cannot open"),
        (
            &report.rejected[1],
            &dir.path().to_path_buf(),
            "is a directory",
        ),
    ] {
        assert_eq!(r.corpus, path.display().to_string());
        assert_eq!((r.line, r.field.as_str()), (0, "file"));
        assert!(r.session.is_none() && r.message.contains(says), "{r:?}");
    }
    let per_file: Vec<(u64, u64)> = report
        .settings
        .corpora
        .iter()
        .map(|c| (c.sessions, c.rejected))
        .collect();
    assert_eq!(per_file, [(0, 1), (0, 1), (1, 2)]);
}
