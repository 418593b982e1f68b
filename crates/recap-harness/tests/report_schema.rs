//! The JSON report schema (docs/report-schema.md) and determinism across job counts,
//! on the bench-data corpora with every built-in strategy of their (PTC-Lisp) form.

mod common;

use common::builtins;
use recap_core::Form;
use recap_harness::{Backend, Encoding, RunConfig, Tokenizer, run_corpora};
use serde_json::Value;
use std::path::PathBuf;

fn bench_data() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../bench-data");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "jsonl"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "bench-data has no corpora");
    files
}

fn config(jobs: usize) -> RunConfig {
    let registry = builtins::registry();
    let strategies = registry
        .infos()
        .map(|i| registry.build(&i.name).unwrap())
        // bench-data is in the PTC-Lisp form.
        .filter(|s| s.forms().contains(&Form::Ptc));
    builtins::config(&registry, strategies, jobs)
}

fn run_json(jobs: usize) -> Value {
    let report = run_corpora(&config(jobs), &bench_data(), Default::default()).unwrap();
    serde_json::from_str(&report.to_json()).unwrap()
}

/// Removes the timing fields (documented: every key starting with `render_ns`).
fn strip_timings(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|k, _| !k.starts_with("render_ns"));
            map.values_mut().for_each(strip_timings);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_timings),
        _ => {}
    }
}

#[derive(Clone, Copy, Debug)]
enum T {
    Str,
    U64,
    F64,
    Bool,
    Arr,
    Obj,
    OptStr,
    OptU64,
    OptF64,
    OptObj,
}

fn check(obj: &Value, key: &str, t: T) {
    let v = obj
        .get(key)
        .unwrap_or_else(|| panic!("missing key {key:?} in {obj}"));
    let ok = match t {
        T::Str => v.is_string(),
        T::U64 => v.is_u64(),
        T::F64 => v.is_number(),
        T::Bool => v.is_boolean(),
        T::Arr => v.is_array(),
        T::Obj => v.is_object(),
        T::OptStr => v.is_null() || v.is_string(),
        T::OptU64 => v.is_null() || v.is_u64(),
        T::OptF64 => v.is_null() || v.is_number(),
        T::OptObj => v.is_null() || v.is_object(),
    };
    assert!(ok, "key {key:?} should be {t:?}, got {v}");
}

#[test]
fn json_schema_keys_and_types() {
    let json = run_json(2);
    check(&json, "schema_version", T::U64);
    check(&json, "settings", T::Obj);
    check(&json, "groups", T::Arr);
    check(&json, "runs", T::Arr);
    check(&json, "rejected", T::Arr);
    let settings = &json["settings"];
    check(settings, "corpora", T::Arr);
    check(settings, "baseline", T::Str);
    check(settings, "tokenizer_backend", T::Str);
    check(settings, "cache_read_ratio", T::F64);
    for c in settings["corpora"].as_array().unwrap() {
        check(c, "path", T::Str);
        check(c, "sessions", T::U64);
        check(c, "rejected", T::U64);
    }
    let groups = json["groups"].as_array().unwrap();
    let forms: Vec<&str> = groups.iter().map(|g| g["form"].as_str().unwrap()).collect();
    assert_eq!(forms, ["ptc", "chat"], "bench-data holds both forms");
    let cfg = config(1);
    let mut expected = 0;
    for g in groups {
        check(g, "form", T::Str);
        check(g, "sessions", T::U64);
        check(g, "not_replayed", T::Arr);
        let form = if g["form"] == "ptc" {
            Form::Ptc
        } else {
            Form::Chat
        };
        let rendering = cfg
            .strategies
            .iter()
            .filter(|e| e.strategy.forms().contains(&form))
            .count();
        let left_out = g["not_replayed"].as_array().unwrap();
        assert_eq!(rendering + left_out.len(), cfg.strategies.len(), "{g}");
        for n in left_out {
            check(n, "strategy", T::Str);
            check(n, "forms", T::Arr);
        }
        expected += 2 * rendering;
    }
    let runs = json["runs"].as_array().unwrap();
    assert_eq!(
        runs.len(),
        expected,
        "every strategy × two tokenizers, per form it renders"
    );
    for run in runs {
        for (k, t) in [
            ("form", T::Str),
            ("strategy", T::Str),
            ("tokenizer", T::Str),
            ("implicit", T::Bool),
            ("sweep", T::OptStr),
            ("sessions", T::U64),
            ("calls", T::U64),
            ("prompt_tokens_total", T::U64),
            ("prompt_tokens_peak", T::U64),
            ("prompt_tokens_mean", T::OptF64),
            ("savings_vs_full_history", T::OptF64),
            ("cached_tokens", T::U64),
            ("cache_hit_rate", T::OptF64),
            ("effective_cost", T::F64),
            ("retention", T::OptF64),
            ("retention_facts", T::U64),
            ("retention_retained", T::U64),
            ("invariant_violations", T::Obj),
            ("render_errors", T::Obj),
            ("render_ns_median", T::OptU64),
            ("render_ns_p95", T::OptU64),
            ("replay_fidelity", T::OptObj),
            ("token_counting", T::Obj),
            ("prompt_tokens_by_call", T::Arr),
            ("session_details", T::Arr),
        ] {
            check(run, k, t);
        }
        let v = &run["invariant_violations"];
        check(v, "count", T::U64);
        check(v, "by_invariant", T::Obj);
        check(v, "examples", T::Arr);
        let e = &run["render_errors"];
        check(e, "count", T::U64);
        check(e, "sessions", T::U64);
        check(e, "examples", T::Arr);
        check(&run["token_counting"], "messages_tokenized", T::U64);
        check(&run["token_counting"], "messages_reused", T::U64);
        for c in run["prompt_tokens_by_call"].as_array().unwrap() {
            check(c, "call", T::U64);
            check(c, "sessions", T::U64);
            check(c, "mean_prompt_tokens", T::F64);
        }
        for d in run["session_details"].as_array().unwrap() {
            for (k, t) in [
                ("corpus", T::Str),
                ("line", T::U64),
                ("session", T::Str),
                ("calls", T::U64),
                ("complete", T::Bool),
                ("prompt_tokens_total", T::OptU64),
                ("prompt_tokens_peak", T::OptU64),
                ("savings_vs_full_history", T::OptF64),
                ("cached_tokens", T::OptU64),
                ("effective_cost", T::OptF64),
                ("retention", T::OptF64),
                ("invariant_violations", T::U64),
                ("render_errors", T::U64),
                ("render_ns_total", T::U64),
            ] {
                check(d, k, t);
            }
        }
        // Built-ins render every bench-data call and keep their invariants.
        assert_eq!(run["render_errors"]["count"], 0, "{}", run["strategy"]);
        assert!(run["prompt_tokens_total"].as_u64().unwrap() > 0);
        if run["strategy"] == "full-history" && run["form"] == "ptc" {
            let f = &run["replay_fidelity"];
            assert!(f.is_object(), "bench-data records usage: fidelity expected");
            for k in ["calls", "median", "p10", "p90", "min", "max"] {
                check(f, k, T::F64);
            }
        }
    }
    for r in json["rejected"].as_array().unwrap() {
        check(r, "corpus", T::Str);
        check(r, "line", T::U64);
        check(r, "session", T::OptStr);
        check(r, "field", T::Str);
        check(r, "message", T::Str);
    }
}

#[test]
fn jobs_1_and_jobs_2_give_identical_json_apart_from_timings() {
    let mut one = run_json(1);
    let mut two = run_json(2);
    assert_ne!(one["runs"][0]["render_ns_median"], Value::Null);
    strip_timings(&mut one);
    strip_timings(&mut two);
    assert_eq!(
        serde_json::to_string_pretty(&one).unwrap(),
        serde_json::to_string_pretty(&two).unwrap()
    );
}

#[test]
fn fast_and_reference_backends_give_the_same_report() {
    let mut fast = config(2);
    fast.tokenizers = vec![Tokenizer::get(Encoding::O200kBase, Backend::Fast)];
    let mut reference = fast.clone();
    reference.tokenizers = vec![Tokenizer::get(Encoding::O200kBase, Backend::Reference)];
    let a = run_corpora(&fast, &bench_data(), Default::default()).unwrap();
    let b = run_corpora(&reference, &bench_data(), Default::default()).unwrap();
    let mut a: Value = serde_json::from_str(&a.to_json()).unwrap();
    let mut b: Value = serde_json::from_str(&b.to_json()).unwrap();
    strip_timings(&mut a);
    strip_timings(&mut b);
    a["settings"]["tokenizer_backend"] = Value::Null;
    b["settings"]["tokenizer_backend"] = Value::Null;
    assert_eq!(a, b);
}
