//! A run split into shards and merged reports what the whole run reports, in every
//! deterministic field: on bench-data, on generated sessions of both forms with rejected
//! lines and repeated ids, for 1, 2, 3 and 7 shards (some of them empty), and on every
//! real corpus of `../shared/corpora`, imported. The calls of lowest retention a merged
//! report shows are the whole run's, with the texts `recap inspect` prints for them.

mod common;

use common::builtins;
use recap_core::{CorpusReader, Session};
use recap_harness::engine::{SessionOutcome, corpus_name};
use recap_harness::inspect::{InspectOptions, inspect};
use recap_harness::lowest_retention::{CallView, LowestCalls};
use recap_harness::output::OutputDir;
use recap_harness::part::{MergeOptions, PartOptions, merge, open_parts, run_part};
use recap_harness::report::provenance::Provenance;
use recap_harness::{Hooks, RunConfig, Shard, run_corpora};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

fn config() -> RunConfig {
    let registry = builtins::registry();
    let strategies = registry.infos().map(|i| registry.build(&i.name).unwrap());
    let mut cfg = builtins::config(&registry, strategies, 2);
    cfg.call_records = true;
    cfg
}

/// The report as JSON without its timings (`render_ns*`) and the blocks a library run
/// leaves empty (`provenance`, `non_deterministic`).
fn deterministic(report: &recap_harness::Report) -> Value {
    let mut v = serde_json::to_value(report).unwrap();
    strip(&mut v);
    v
}

fn strip(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|k, _| {
                !k.starts_with("render_ns") && k != "provenance" && k != "non_deterministic"
            });
            map.values_mut().for_each(strip);
        }
        Value::Array(items) => items.iter_mut().for_each(strip),
        _ => {}
    }
}

/// Texts cut as the tests' shards cut them, and calls shown, as a report shows them.
const MAX_CHARS: usize = 200;
const SHOWN: usize = 6;

/// The whole run's report, and the texts of its calls of lowest retention.
fn whole(cfg: &RunConfig, corpora: &[PathBuf]) -> (Value, Vec<CallView>) {
    let names = corpora.iter().map(|p| corpus_name(p)).collect();
    let mut lowest = LowestCalls::new(cfg, names, MAX_CHARS);
    let mut hook = |corpus: usize, line: usize, session: &Session, o: &SessionOutcome| {
        lowest.session(corpus, line, session, o);
        Ok(())
    };
    let hooks = Hooks {
        session: Some(&mut hook),
        ..Hooks::default()
    };
    let report = deterministic(&run_corpora(cfg, corpora, hooks).unwrap());
    (report, lowest.views(SHOWN))
}

/// Each call's texts are what `recap inspect --turn --max-chars` prints for it, its
/// session read again from the corpus.
fn check_inspected(cfg: &RunConfig, corpora: &[PathBuf], views: &[CallView]) {
    for v in views {
        let path = corpora.iter().find(|p| corpus_name(p) == v.corpus).unwrap();
        let session = CorpusReader::open(path)
            .unwrap()
            .find(|e| e.line == v.line)
            .unwrap()
            .session
            .unwrap();
        let entry = cfg
            .strategies
            .iter()
            .find(|s| s.name == v.strategy)
            .unwrap();
        let opts = InspectOptions {
            turn: Some(v.call + 1),
            tokenizers: cfg.tokenizers[..1].to_vec(),
            max_chars: Some(MAX_CHARS),
        };
        let text = inspect(&session, entry.strategy.as_ref(), &opts).unwrap();
        assert_eq!(format!("{}{}", v.trace, v.prompt), text, "{}", v.strategy);
        assert!(v.prompt.starts_with("── sent by "), "{}", v.prompt);
    }
}

/// Runs every shard of `count` into `dir/partI` and merges them.
fn sharded(cfg: &RunConfig, corpora: &[PathBuf], count: u32, dir: &Path) -> (Value, Vec<CallView>) {
    let mut parts = Vec::new();
    for i in 0..count {
        let part = dir.join(format!("part{i}"));
        let out = OutputDir::create(&part, false).unwrap();
        let opts = PartOptions {
            shard: Shard::new(i, count).unwrap(),
            provenance: Provenance::default(),
            prompt_files: None,
            lowest_max_chars: MAX_CHARS,
            started: SystemTime::now(),
        };
        run_part(cfg, corpora, &out, opts, None).unwrap();
        out.commit().unwrap();
        parts.push(part);
    }
    let parts = open_parts(&parts).unwrap();
    let opts = MergeOptions {
        command_line: vec!["recap".into(), "merge".into()],
        lowest_calls: SHOWN,
    };
    let merged = merge(&parts, None, &opts).unwrap();
    (deterministic(&merged.report), merged.lowest)
}

fn check(corpora: &[PathBuf], counts: &[u32]) {
    let cfg = config();
    let (whole, lowest) = whole(&cfg, corpora);
    assert!(!lowest.is_empty(), "calls of lowest retention");
    check_inspected(&cfg, corpora, &lowest);
    let tmp = tempfile::tempdir().unwrap();
    for &count in counts {
        let dir = tmp.path().join(count.to_string());
        let (merged, merged_lowest) = sharded(&cfg, corpora, count, &dir);
        assert!(merged == whole, "{count} shards differ from the whole run");
        assert!(
            merged_lowest == lowest,
            "{count} shards: other calls of lowest retention"
        );
    }
}

#[test]
fn merged_bench_data_is_the_whole_run() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench-data");
    let mut corpora: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    corpora.sort();
    check(&corpora, &[1, 2, 3, 7]);
}

#[test]
fn merged_generated_sessions_with_rejections_and_repeated_ids_are_the_whole_run() {
    let tmp = tempfile::tempdir().unwrap();
    let mut text = Vec::new();
    recap_gen::write_jsonl(&mut text, &recap_gen::generate_corpus(3, 12, 1..=12)).unwrap();
    let chat = recap_gen::generate_chat_corpus(4, 12, 1..=12);
    recap_gen::write_jsonl(&mut text, &chat).unwrap();
    // A repeated id (rejected the second time), a blank line and a broken one.
    recap_gen::write_jsonl(&mut text, &chat[..1]).unwrap();
    text.extend_from_slice(b"\n{\"id\":\"broken\",\n");
    let corpus = tmp.path().join("generated.jsonl");
    std::fs::write(&corpus, &text).unwrap();
    // The same file twice: two corpora of one run.
    check(&[corpus.clone(), corpus], &[1, 2, 3, 7]);
}

#[test]
fn merged_real_corpora_are_the_whole_run() {
    use recap_import::Kind;
    let imports = [
        ("corpora/ptc-runner-loop", Kind::PtcRunner),
        ("corpora/smolagents-code", Kind::Smolagents),
        ("corpora/tau2-bench-results", Kind::Tau2),
        ("corpora/swe-agent-traj", Kind::SweAgent),
        ("corpora/openhands-events", Kind::Openhands),
        ("corpora/claude-code-attio-mcp-server", Kind::ClaudeCode),
        (
            "corpora/claude-code-reliability-snapshots",
            Kind::ClaudeCode,
        ),
    ];
    let tmp = tempfile::tempdir().unwrap();
    let mut corpora = Vec::new();
    for (rel, kind) in imports {
        let Some(dir) = recap_gen::shared::path(rel, "sharded runs of the real corpora") else {
            return;
        };
        let imported = recap_import::import(kind, &[dir]).unwrap();
        let mut text = Vec::new();
        recap_gen::write_jsonl(&mut text, &imported.sessions).unwrap();
        let file = tmp.path().join(format!("{}.jsonl", corpora.len()));
        std::fs::write(&file, text).unwrap();
        corpora.push(file);
    }
    // One run over all of them: provider cache figures, replay fidelity of both kinds
    // and the recorded strategy's sessions come from these.
    check(&corpora, &[3]);
}
