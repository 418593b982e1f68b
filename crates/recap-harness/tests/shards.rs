//! A run split into shards and merged reports what the whole run reports, in every
//! deterministic field: on bench-data, on generated sessions of both forms with rejected
//! lines and repeated ids, for 1, 2, 3 and 7 shards (some of them empty), and on every
//! real corpus of `../shared/corpora`, imported.

mod common;

use common::builtins;
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

/// Runs every shard of `count` into `dir/partI` and merges them.
fn sharded(cfg: &RunConfig, corpora: &[PathBuf], count: u32, dir: &Path) -> Value {
    let mut parts = Vec::new();
    for i in 0..count {
        let part = dir.join(format!("part{i}"));
        let out = OutputDir::create(&part, false).unwrap();
        let opts = PartOptions {
            shard: Shard::new(i, count).unwrap(),
            provenance: Provenance::default(),
            prompt_files: None,
            lowest_max_chars: 200,
            started: SystemTime::now(),
        };
        run_part(cfg, corpora, &out, opts, None).unwrap();
        out.commit().unwrap();
        parts.push(part);
    }
    let parts = open_parts(&parts).unwrap();
    let opts = MergeOptions {
        command_line: vec!["recap".into(), "merge".into()],
        lowest_calls: 6,
    };
    deterministic(&merge(&parts, None, &opts).unwrap().report)
}

fn check(corpora: &[PathBuf], counts: &[u32]) {
    let cfg = config();
    let whole = deterministic(&run_corpora(&cfg, corpora, Hooks::default()).unwrap());
    let tmp = tempfile::tempdir().unwrap();
    for &count in counts {
        let dir = tmp.path().join(count.to_string());
        let merged = sharded(&cfg, corpora, count, &dir);
        assert!(merged == whole, "{count} shards differ from the whole run");
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
