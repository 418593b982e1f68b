//! `recap inspect` and `recap run` measure retention with one matcher: on a bench-data
//! session, the facts `inspect` shows as kept and missing add up, call by call, to the
//! run's retention numbers, for every built-in.

use recap_core::{CorpusReader, Session};
use recap_harness::inspect::{InspectOptions, inspect};
use recap_harness::{Backend, Encoding, RunConfig, StrategyEntry, Tokenizer, run_sessions};
use std::path::PathBuf;

/// The built-ins that render the PTC-Lisp form of bench-data.
const PTC_BUILTINS: [&str; 6] = [
    "full-history",
    "single-user-coalesced",
    "per-turn-summary",
    "rolling-window",
    "ptc-runner",
    "ptc-trim",
];

/// Thirty turns: most strategies drop some of its facts.
fn long_session() -> Session {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench-data/handwritten.jsonl");
    CorpusReader::open(&path)
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(|e| e.session.ok())
        .find(|s| s.id == "long-30-turns")
        .expect("bench-data/handwritten.jsonl has long-30-turns")
}

/// (facts, kept, missing lines) summed over the calls `inspect` shows.
fn inspect_retention(text: &str) -> (u64, u64, u64) {
    let (mut facts, mut kept, mut missing) = (0, 0, 0);
    for line in text.lines() {
        if let Some(rest) = line.strip_prefix("  retention: ") {
            let (k, rest) = rest.split_once(" of ").expect("\"K of N facts\"");
            let (n, _) = rest.split_once(' ').expect("\"N facts\"");
            kept += k.parse::<u64>().expect("a count");
            facts += n.parse::<u64>().expect("a count");
        } else if line.starts_with("    missing: ") {
            missing += 1;
        }
    }
    (facts, kept, missing)
}

#[test]
fn inspect_missing_facts_agree_with_run_retention() {
    let session = long_session();
    let registry = recap_builtins::registry();
    let tokenizer = Tokenizer::get(Encoding::O200kBase, Backend::Fast);
    let mut some_missing = false;
    for name in PTC_BUILTINS {
        let strategy = registry.build(name).unwrap();
        let cfg = RunConfig::new(
            vec![StrategyEntry::new(strategy.clone())],
            registry.build("full-history").unwrap(),
            vec![tokenizer],
        )
        .unwrap();
        let report = run_sessions(&cfg, "handwritten", vec![session.clone()]).unwrap();
        let run = report
            .runs
            .iter()
            .find(|r| r.strategy == strategy.spec())
            .expect("a run of the strategy");
        assert_eq!(run.sessions, 1, "{}: rendered completely", run.strategy);

        let text = inspect(
            &session,
            strategy.as_ref(),
            &InspectOptions {
                turn: None,
                tokenizers: vec![tokenizer],
                max_chars: Some(40),
            },
        )
        .unwrap();
        let (facts, kept, missing) = inspect_retention(&text);
        let what = &run.strategy;
        assert_eq!(facts, run.retention_facts, "{what}: facts");
        assert_eq!(kept, run.retention_retained, "{what}: kept");
        assert_eq!(missing, facts - kept, "{what}: one line per missing fact");
        some_missing |= missing > 0;
    }
    assert!(some_missing, "the session exercises missing facts");
}
