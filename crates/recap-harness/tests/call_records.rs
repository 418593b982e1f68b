//! Per-call records (`RunConfig::call_records`, streamed through `Hooks::session`) add
//! up to the run rows the report aggregates, on bench-data of both forms, and the same
//! records arrive whatever the job count.

mod common;

use common::builtins;
use recap_core::Session;
use recap_harness::engine::SessionOutcome;
use recap_harness::report::call_rows::CallsCsv;
use recap_harness::{Hooks, RunConfig, run_corpora};
use std::path::PathBuf;

fn corpora() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench-data");
    ["handwritten.jsonl", "chat-handwritten.jsonl"]
        .iter()
        .map(|f| dir.join(f))
        .collect()
}

fn config(jobs: usize) -> RunConfig {
    let registry = builtins::registry();
    let strategies = [
        "rolling-window:window=2",
        "single-user-coalesced",
        "observation-masking",
    ]
    .iter()
    .map(|s| registry.build(s).unwrap());
    let mut cfg = builtins::config(&registry, strategies, jobs);
    cfg.call_records = true;
    cfg
}

/// (corpus, line, outcome) of every session, in the order the hook saw them.
fn run(jobs: usize) -> (recap_harness::Report, Vec<(usize, usize, SessionOutcome)>) {
    let cfg = config(jobs);
    let mut seen = Vec::new();
    let mut hook = |corpus: usize, line: usize, _: &Session, o: &SessionOutcome| {
        seen.push((corpus, line, o.clone()));
        Ok(())
    };
    let hooks = Hooks {
        session: Some(&mut hook),
        ..Hooks::default()
    };
    let report = run_corpora(&cfg, &corpora(), hooks).unwrap();
    (report, seen)
}

#[test]
fn call_records_add_up_to_the_run_rows() {
    let (report, seen) = run(2);
    let cfg = config(2);
    assert!(!seen.is_empty());
    // Both forms, each with the strategies that render it (and the baseline).
    let forms: Vec<&str> = report.groups.iter().map(|g| g.form.as_str()).collect();
    assert_eq!(forms, ["ptc", "chat"]);
    assert_eq!(report.runs.len(), 2 * (3 + 3));
    for row in &report.runs {
        let t = usize::from(row.tokenizer != "o200k_base");
        let s = cfg
            .strategies
            .iter()
            .position(|e| e.name == row.strategy)
            .unwrap();
        {
            let (mut tokens, mut cached, mut facts, mut retained, mut calls) = (0, 0, 0, 0, 0);
            let mut violations = 0;
            for (_, _, o) in seen.iter().filter(|(_, _, o)| o.form.as_str() == row.form) {
                let so = &o.strategies[s];
                violations += so.calls.iter().map(|c| c.violations).sum::<u64>();
                if !so.applicable || !so.complete {
                    continue;
                }
                assert_eq!(so.calls.len(), o.calls, "one record per call");
                for c in &so.calls {
                    tokens += c.prompt_tokens[t];
                    cached += c.cached_tokens[t];
                    facts += c.facts;
                    retained += c.retained;
                    assert!(c.render_ns.is_some() && c.render_error.is_none());
                }
                calls += so.calls.len() as u64;
            }
            let what = format!("{} {} {}", row.form, row.strategy, row.tokenizer);
            assert_eq!(tokens, row.prompt_tokens_total, "{what}");
            assert_eq!(cached, row.cached_tokens, "{what}");
            assert_eq!(facts, row.retention_facts, "{what}");
            assert_eq!(retained, row.retention_retained, "{what}");
            assert_eq!(calls, row.calls, "{what}");
            assert_eq!(violations, row.invariant_violations.count, "{what}");
        }
    }
}

#[test]
fn the_calls_table_is_the_same_whatever_the_job_count_apart_from_render_times() {
    let table = |jobs: usize| {
        let (_, seen) = run(jobs);
        let cfg = config(jobs);
        let names = corpora().iter().map(|p| p.display().to_string()).collect();
        let mut w = CallsCsv::new(Vec::new(), &cfg, names).unwrap();
        for (c, line, o) in &seen {
            w.session(*c, *line, o).unwrap();
        }
        let text = String::from_utf8(w.finish().unwrap()).unwrap();
        // The last column is the render time.
        text.lines()
            .map(|l| l.rsplit_once(',').map_or(l, |(head, _)| head).to_string())
            .collect::<Vec<_>>()
    };
    let one = table(1);
    assert!(one.len() > 100, "{} rows", one.len());
    assert_eq!(one, table(2));
}

#[test]
fn without_the_option_no_records_are_kept() {
    let mut cfg = config(1);
    cfg.call_records = false;
    let mut kept = 0usize;
    let mut hook = |_: usize, _: usize, _: &Session, o: &SessionOutcome| {
        kept += o.strategies.iter().map(|s| s.calls.len()).sum::<usize>();
        Ok(())
    };
    let hooks = Hooks {
        session: Some(&mut hook),
        ..Hooks::default()
    };
    run_corpora(&cfg, &corpora(), hooks).unwrap();
    assert_eq!(kept, 0);
}
