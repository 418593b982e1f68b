//! Repeatable experiments end to end (the binary): `recap init` and `recap run --config`,
//! provenance and determinism of reports, `recap diff`, and what `--out` writes for
//! people and for pandas (report.html — parsed, and rendered in headless Chromium —
//! sessions.csv, calls.csv).

mod cli_common;

use cli_common::{bench, recap, root};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A directory with `bench-data/handwritten.jsonl`, for experiment files that name it.
fn workspace() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("bench-data")).unwrap();
    std::fs::copy(
        bench("handwritten.jsonl"),
        tmp.path().join("bench-data/handwritten.jsonl"),
    )
    .unwrap();
    tmp
}

fn json_file(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The strategies of the report's rows of one form, in order.
fn strategies_of(report: &Value, form: &str) -> Vec<String> {
    report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["form"] == form)
        .map(|r| r["strategy"].as_str().unwrap().to_string())
        .collect()
}

fn strategies(report: &Value) -> Vec<String> {
    strategies_of(report, "ptc")
}

#[test]
fn init_writes_an_example_that_runs_where_it_is_written_and_keeps_every_run() {
    // Anywhere: an empty directory outside the repository.
    let tmp = tempfile::tempdir().unwrap();
    let out = recap(tmp.path(), &["init"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("sessions/example.jsonl (6 example sessions)"),
        "{}",
        out.stderr
    );
    let file = tmp.path().join("experiment.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("compress_history"), "{text}");
    // Never overwritten by accident; the example corpus is kept as the user left it.
    std::fs::write(tmp.path().join("sessions/mine.jsonl"), "").unwrap();
    let again = recap(tmp.path(), &["init"]);
    assert_eq!(again.code, 2);
    assert!(again.stderr.contains("--force"), "{}", again.stderr);
    assert_eq!(recap(tmp.path(), &["init", "-"]).stdout, text);
    std::fs::remove_file(tmp.path().join("sessions/mine.jsonl")).unwrap();

    let args = [
        "run",
        "--config",
        "experiment.toml",
        "--jobs",
        "2",
        "--format",
        "json",
    ];
    let run = recap(tmp.path(), &args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let report = run.json();
    assert_eq!(
        strategies_of(&report, "ptc"),
        [
            "full-history",
            "single-user-coalesced",
            "single-user-coalesced:println_limit=5,tool_call_limit=10",
            "rolling-window:window=4",
            "rolling-window:window=1",
            "rolling-window:window=2",
            "rolling-window:window=3",
        ],
        "compress_history first (false, true, limits), then strategies, then the sweep"
    );
    assert_eq!(
        strategies_of(&report, "chat"),
        [
            "full-history",
            "rolling-window:window=4",
            "observation-masking",
            "rolling-window:window=1",
            "rolling-window:window=2",
            "rolling-window:window=3",
        ]
    );
    assert_eq!(report["provenance"]["config"]["content"], text.as_str());
    // `out` is relative to the file; each run gets its own directory, and a second
    // run keeps the first.
    let first = tmp.path().join("results/run-0001");
    for f in ["report.json", "report.html", "sessions.csv", "calls.csv"] {
        assert!(first.join(f).is_file(), "{f} missing");
    }
    assert!(run.stderr.contains("run-0001"), "{}", run.stderr);
    let before = std::fs::read(first.join("report.json")).unwrap();
    let second = recap(tmp.path(), &args);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert!(tmp.path().join("results/run-0002/report.json").is_file());
    assert_eq!(std::fs::read(first.join("report.json")).unwrap(), before);
    // --force has nothing to replace there, and says so rather than being ignored.
    let forced = recap(
        tmp.path(),
        &["run", "--config", "experiment.toml", "--force"],
    );
    assert_eq!(forced.code, 2);
    assert!(
        forced.stderr.contains("nothing to replace"),
        "{}",
        forced.stderr
    );
    assert!(!tmp.path().join("results/run-0003").exists());
}

#[test]
fn an_experiment_whose_corpora_are_not_there_says_so_before_running() {
    let tmp = tempfile::tempdir().unwrap();
    let text = recap(tmp.path(), &["init", "-"]).stdout;
    std::fs::write(tmp.path().join("experiment.toml"), text).unwrap();
    let run = recap(tmp.path(), &["run", "--config", "experiment.toml"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("\"sessions/*.jsonl\" matches no corpus file"),
        "{}",
        run.stderr
    );
    assert!(!tmp.path().join("results").exists());
}

#[test]
fn plugins_run_with_their_options_and_are_recorded_by_hash() {
    let tmp = workspace();
    let lib = recap_testkit::plugins::sample("recap_ptc_output_masking");
    std::fs::write(
        tmp.path().join("exp.toml"),
        format!(
            "corpora = \"bench-data/*.jsonl\"\n[[plugins]]\npath = {:?}\noptions = {{ window = 2 }}\n",
            lib.display().to_string()
        ),
    )
    .unwrap();
    let out = recap(
        tmp.path(),
        &["run", "--config", "exp.toml", "--format", "json"],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let report = out.json();
    assert_eq!(
        strategies(&report),
        ["full-history", "ptc-output-masking:window=2"]
    );
    let plugin = &report["provenance"]["plugins"][0];
    assert_eq!(plugin["name"], "ptc-output-masking");
    assert_eq!(plugin["path"], lib.display().to_string().as_str());
    assert!(!plugin["version"].as_str().unwrap().is_empty());
    assert_eq!(plugin["sha256"].as_str().unwrap().len(), 64);

    // An option the plugin does not have is an error at the line that gave it.
    std::fs::write(
        tmp.path().join("exp.toml"),
        format!(
            "corpora = \"bench-data/*.jsonl\"\n[[plugins]]\npath = {:?}\noptions = {{ windo = 2 }}\n",
            lib.display().to_string()
        ),
    )
    .unwrap();
    let bad = recap(tmp.path(), &["run", "--config", "exp.toml"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("exp.toml:4:11: `plugins[0].options`"),
        "{}",
        bad.stderr
    );
}

#[test]
fn flags_override_the_file() {
    let tmp = workspace();
    std::fs::write(
        tmp.path().join("exp.toml"),
        "corpora = \"bench-data/*.jsonl\"\nstrategies = [\"rolling-window:window=2\"]\nformat = \"csv\"\ntokenizers = [\"cl100k_base\"]\n",
    )
    .unwrap();
    let from_file = recap(tmp.path(), &["run", "--config", "exp.toml"]);
    assert_eq!(from_file.code, 0, "{}", from_file.stderr);
    assert!(
        from_file.stdout.starts_with("form,strategy,tokenizer,"),
        "{}",
        from_file.stdout
    );
    assert!(
        from_file
            .stdout
            .contains("ptc,rolling-window:window=2,cl100k_base")
    );
    let overridden = recap(
        tmp.path(),
        &[
            "run",
            "--config",
            "exp.toml",
            "--format",
            "json",
            "--strategy",
            "single-user-coalesced",
            "--tokenizer",
            "o200k_base",
        ],
    );
    assert_eq!(overridden.code, 0, "{}", overridden.stderr);
    let report = overridden.json();
    assert_eq!(
        strategies(&report),
        ["full-history", "single-user-coalesced"]
    );
    assert_eq!(report["runs"][0]["tokenizer"], "o200k_base");
}

#[test]
fn a_bad_file_fails_before_any_work_naming_file_line_and_key() {
    let tmp = workspace();
    let cases: [(&str, &str, &[&str]); 5] = [
        (
            "corpora = \"bench-data/*.jsonl\"\nstrategy = [\"full-history\"]\nout = \"r\"\n",
            "exp.toml:2:1",
            &[
                "unknown key `strategy`",
                "valid keys: corpora, strategies, sweeps",
            ],
        ),
        (
            "corpora = \"bench-data/*.jsonl\"\nout = \"r\"\njobs = \"many\"\n",
            "exp.toml:3:8: `jobs`",
            &["expected an integer"],
        ),
        (
            "out = \"r\"\ncorpora = [\"bench-data/*.jsonl\", \"missing/*.jsonl\"]\n",
            "exp.toml:2:34: `corpora`",
            &["\"missing/*.jsonl\" matches no corpus file"],
        ),
        (
            "out = \"r\"\ncorpora = \"bench-data/*.jsonl\"\n[[plugins]]\npath = \"libmissing.so\"\n",
            "exp.toml:4:8: `plugins[0].path`",
            &["plugin library not found"],
        ),
        (
            "out = \"r\"\ncorpora = \"bench-data/*.jsonl\"\nstrategies = [\"full-history\",\n  \"rolling-windw\"]\n",
            "exp.toml:4:3: `strategies`: \"rolling-windw\"",
            &["rolling-windw"],
        ),
    ];
    for (text, at, wanted) in cases {
        std::fs::write(tmp.path().join("exp.toml"), text).unwrap();
        let out = recap(tmp.path(), &["run", "--config", "exp.toml"]);
        assert_eq!(out.code, 2, "{text}\n{}", out.stderr);
        assert!(out.stderr.contains(at), "{at} not in: {}", out.stderr);
        for w in wanted {
            assert!(out.stderr.contains(w), "{w} not in: {}", out.stderr);
        }
        assert!(out.stdout.is_empty(), "{}", out.stdout);
        assert!(
            !tmp.path().join("r").exists(),
            "no output directory for {text}"
        );
    }
}

/// The report without what legitimately differs between two runs: the
/// `non_deterministic` block and the `render_ns*` timings.
fn comparable(text: &str) -> String {
    let at = text
        .find("\"non_deterministic\"")
        .expect("the report has a non_deterministic block");
    assert_eq!(
        text.matches("\"non_deterministic\"").count(),
        1,
        "one block"
    );
    // Last: everything before it can be compared as text. Top-level keys of the
    // pretty JSON are the lines indented by exactly two spaces.
    let later_keys = text[at..].lines().filter(|l| l.starts_with("  \"")).count();
    assert_eq!(later_keys, 0, "non_deterministic is the last key");
    text[..at]
        .lines()
        .filter(|l| !l.trim_start().starts_with("\"render_ns"))
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn identical_runs_give_identical_reports_outside_the_timestamp_block() {
    let c = bench("handwritten.jsonl");
    let args = [
        "run",
        c.as_str(),
        "--strategy",
        "rolling-window:window=2",
        "--sweep",
        "single-user-coalesced:println_limit=1|3",
        "--tokenizer",
        "o200k_base",
        "--tokenizer",
        "cl100k_base",
        "--format",
        "json",
        "--jobs",
        "2",
    ];
    let one = recap(&root(), &args);
    let two = recap(&root(), &args);
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert_eq!(comparable(&one.stdout), comparable(&two.stdout));
    assert_ne!(one.stdout, "", "a report was printed");
    let report = one.json();
    let p = &report["provenance"];
    assert_eq!(p["recap_version"], env!("CARGO_PKG_VERSION"));
    let commit = p["git_commit"].as_str().unwrap();
    assert!(
        commit == "unknown"
            || (commit.len() >= 40 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{commit}"
    );
    let line: Vec<&str> = p["command_line"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(line[1..], args);
    assert_eq!(p["config"], Value::Null);
    let corpus = &p["corpora"][0];
    assert_eq!(corpus["path"], c.as_str());
    assert_eq!(
        corpus["bytes"].as_u64().unwrap(),
        std::fs::metadata(&c).unwrap().len()
    );
    assert_eq!(corpus["sha256"].as_str().unwrap().len(), 64);
    let vocabularies: Vec<&str> = p["tokenizers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["vocabulary_sha256"].as_str().unwrap())
        .collect();
    assert_eq!(vocabularies.len(), 2);
    assert_ne!(vocabularies[0], vocabularies[1]);
    let when = &report["non_deterministic"];
    assert!(when["started_at"].as_str().unwrap().ends_with('Z'));
    assert!(when["elapsed_seconds"].as_f64().unwrap() >= 0.0);

    // Whatever --jobs says, only the command line that records it differs.
    let mut one_job = args.to_vec();
    one_job[args.len() - 1] = "1";
    let single = recap(&root(), &one_job);
    let without_command_line = |s: &str| {
        let mut v: Value = serde_json::from_str(s).unwrap();
        strip_timings(&mut v);
        v["provenance"]["command_line"] = Value::Null;
        v
    };
    assert_eq!(
        without_command_line(&one.stdout),
        without_command_line(&single.stdout)
    );
}

/// Removes the `non_deterministic` block and every `render_ns*` key.
fn strip_timings(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.remove("non_deterministic");
            map.retain(|k, _| !k.starts_with("render_ns"));
            map.values_mut().for_each(strip_timings);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_timings),
        _ => {}
    }
}

/// Runs `recap run … --out DIR --format json` and returns DIR's report.json.
fn run_out(dir: &Path, corpora: &[&str], strategies: &[&str]) -> Value {
    let d = dir.display().to_string();
    let mut args: Vec<&str> = vec!["run"];
    args.extend(corpora);
    for s in strategies {
        args.extend(["--strategy", s]);
    }
    args.extend([
        "--out",
        d.as_str(),
        "--jobs",
        "2",
        "--tokenizer",
        "o200k_base",
    ]);
    let out = recap(&root(), &args);
    assert_eq!(out.code, 0, "{}", out.stderr);
    for f in ["sessions.csv", "calls.csv", "report.html"] {
        assert!(out.stderr.contains(f), "{f} not announced: {}", out.stderr);
    }
    json_file(&dir.join("report.json"))
}

#[test]
fn diff_compares_per_strategy_and_metric_and_fails_on_conditions() {
    let tmp = tempfile::tempdir().unwrap();
    let hand = bench("handwritten.jsonl");
    let strategies = ["rolling-window:window=2", "single-user-coalesced"];
    let old = run_out(&tmp.path().join("old"), &[&hand], &strategies);
    run_out(&tmp.path().join("new"), &[&hand], &strategies);
    let old_path = tmp.path().join("old/report.json").display().to_string();
    let new_path = tmp.path().join("new/report.json").display().to_string();

    let same = recap(
        tmp.path(),
        &[
            "diff",
            &old_path,
            &new_path,
            "--fail-if",
            "savings<-0.01,violations>0,retention<-0.02",
        ],
    );
    assert_eq!(same.code, 0, "{}\n{}", same.stdout, same.stderr);
    let header = same.stdout.lines().next().unwrap();
    for h in [
        "form",
        "strategy",
        "tokenizer",
        "metric",
        "old",
        "new",
        "change",
    ] {
        assert!(header.contains(h), "{header}");
    }
    assert!(
        same.stdout
            .lines()
            .any(|l| l.starts_with("ptc   rolling-window:window=2")
                && l.contains("savings")
                && l.contains("+0.0 pts")),
        "{}",
        same.stdout
    );

    // A regression: the new report's savings drop by 5 points and a violation appears.
    let mut worse = json_file(&tmp.path().join("new/report.json"));
    let savings = worse["runs"][1]["savings_vs_full_history"]
        .as_f64()
        .unwrap();
    worse["runs"][1]["savings_vs_full_history"] = Value::from(savings - 0.05);
    worse["runs"][2]["invariant_violations"]["count"] = Value::from(1);
    let worse_path = tmp.path().join("worse.json");
    std::fs::write(&worse_path, serde_json::to_string_pretty(&worse).unwrap()).unwrap();
    let w = worse_path.display().to_string();
    let fail = recap(
        tmp.path(),
        &[
            "diff",
            &old_path,
            &w,
            "--fail-if",
            "savings<-0.01",
            "--fail-if",
            "violations>0",
            "--format",
            "json",
        ],
    );
    assert_eq!(fail.code, 1, "{}", fail.stderr);
    let doc = fail.json();
    let failed: Vec<(String, String)> = doc["failed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["condition"].as_str().unwrap().to_string(),
                f["strategy"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        failed,
        [
            (
                "savings<-0.01".to_string(),
                "rolling-window:window=2".to_string()
            ),
            (
                "violations>0".to_string(),
                "single-user-coalesced".to_string()
            ),
        ]
    );
    let change = doc["rows"][1]["metrics"]["savings"]["change"]
        .as_f64()
        .unwrap();
    assert!((change + 0.05).abs() < 1e-9, "{change}");
    assert!(
        fail.stderr.contains("fail-if savings<-0.01 met"),
        "{}",
        fail.stderr
    );
    let md = recap(
        tmp.path(),
        &[
            "diff",
            &old_path,
            &w,
            "--fail-if",
            "violations>0",
            "--format",
            "markdown",
        ],
    );
    assert_eq!(md.code, 1);
    assert!(md.stdout.starts_with("### recap diff"), "{}", md.stdout);
    assert!(
        md.stdout.contains(
            "| single-user-coalesced | o200k\\_base | violations | 0 | 1 | +1 | violations>0 |"
        ),
        "{}",
        md.stdout
    );
    let bad = recap(tmp.path(), &["diff", &old_path, &w, "--fail-if", "speed>0"]);
    assert_eq!(bad.code, 2);
    assert!(
        bad.stderr.contains("unknown metric \"speed\""),
        "{}",
        bad.stderr
    );

    // Reports of another corpus are refused unless asked for.
    let other = run_out(
        &tmp.path().join("other"),
        &[&bench("generated.jsonl")],
        &strategies,
    );
    assert_ne!(old["provenance"]["corpora"], other["provenance"]["corpora"]);
    let other_path = tmp.path().join("other/report.json").display().to_string();
    let refused = recap(tmp.path(), &["diff", &old_path, &other_path]);
    assert_eq!(refused.code, 2);
    assert!(
        refused.stderr.contains("different corpora")
            && refused.stderr.contains("--allow-different-corpora"),
        "{}",
        refused.stderr
    );
    assert!(
        refused.stderr.contains("generated.jsonl"),
        "{}",
        refused.stderr
    );
    let allowed = recap(
        tmp.path(),
        &["diff", &old_path, &other_path, "--allow-different-corpora"],
    );
    assert_eq!(allowed.code, 0, "{}", allowed.stderr);
}

#[test]
fn diff_says_which_file_is_truncated_or_foreign() {
    let tmp = tempfile::tempdir().unwrap();
    let good = run_out(
        &tmp.path().join("r"),
        &[&bench("handwritten.jsonl")],
        &["rolling-window:window=2"],
    );
    let good_text = serde_json::to_string_pretty(&good).unwrap();
    let good_path = tmp.path().join("r/report.json").display().to_string();
    let cases: [(&str, String, &str); 4] = [
        (
            "half.json",
            good_text[..good_text.len() / 2].to_string(),
            "truncated",
        ),
        (
            "eval.json",
            "{\"schema_version\": 1, \"model\": \"x\"}".into(),
            "not a recap run report",
        ),
        ("list.json", "[1, 2]".into(), "not a recap run report"),
        ("empty.json", String::new(), "empty"),
    ];
    for (name, text, wanted) in cases {
        let path = tmp.path().join(name);
        std::fs::write(&path, text).unwrap();
        let p = path.display().to_string();
        let out = recap(tmp.path(), &["diff", &good_path, &p]);
        assert_eq!(out.code, 2, "{name}");
        assert!(out.stderr.contains(&p), "{name}: {}", out.stderr);
        assert!(out.stderr.contains(wanted), "{name}: {}", out.stderr);
        let swapped = recap(tmp.path(), &["diff", &p, &good_path]);
        assert!(swapped.stderr.contains(&p), "{name}: {}", swapped.stderr);
    }
}

fn csv_rows(path: &Path) -> (Vec<String>, Vec<BTreeMap<String, String>>) {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines();
    let header: Vec<String> = lines
        .next()
        .unwrap()
        .split(',')
        .map(str::to_string)
        .collect();
    // Test data has no quoted fields.
    let rows = lines
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            assert_eq!(cells.len(), header.len(), "{l}");
            header
                .iter()
                .cloned()
                .zip(cells.iter().map(|c| c.to_string()))
                .collect()
        })
        .collect();
    (header, rows)
}

#[test]
fn sessions_and_calls_tables_add_up_to_the_report() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let report = run_out(
        &dir,
        &[
            &bench("handwritten.jsonl"),
            &bench("chat-handwritten.jsonl"),
        ],
        &[
            "rolling-window:window=2",
            "single-user-coalesced",
            "observation-masking",
        ],
    );
    let (header, sessions) = csv_rows(&dir.join("sessions.csv"));
    for h in [
        "session",
        "strategy",
        "tokenizer",
        "prompt_tokens_total",
        "cached_tokens",
        "retention",
        "invariant_violations",
        "render_ns_total",
    ] {
        assert!(header.iter().any(|x| x == h), "{h}");
    }
    let details: usize = report["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["session_details"].as_array().unwrap().len())
        .sum();
    assert_eq!(sessions.len(), details);

    let (header, calls) = csv_rows(&dir.join("calls.csv"));
    for h in [
        "call",
        "prompt_tokens",
        "cached_tokens",
        "retention",
        "invariant_violations",
        "render_ns",
    ] {
        assert!(header.iter().any(|x| x == h), "{h}");
    }
    for run in report["runs"].as_array().unwrap() {
        let name = run["strategy"].as_str().unwrap();
        let form = run["form"].as_str().unwrap();
        let rows: Vec<&BTreeMap<String, String>> = calls
            .iter()
            .filter(|r| r["strategy"] == name && r["form"] == form)
            .collect();
        let total: u64 = rows
            .iter()
            .map(|r| r["prompt_tokens"].parse::<u64>().unwrap())
            .sum();
        let cached: u64 = rows
            .iter()
            .map(|r| r["cached_tokens"].parse::<u64>().unwrap())
            .sum();
        let name = format!("{form} {name}");
        assert_eq!(rows.len() as u64, run["calls"].as_u64().unwrap(), "{name}");
        assert_eq!(
            total,
            run["prompt_tokens_total"].as_u64().unwrap(),
            "{name}"
        );
        assert_eq!(cached, run["cached_tokens"].as_u64().unwrap(), "{name}");
        assert!(
            rows.iter().all(|r| r["render_ns"].parse::<u64>().is_ok()),
            "{name}"
        );
    }
}

#[test]
fn no_calls_csv_leaves_it_out_and_removes_an_earlier_one() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("r");
    let corpus = bench("handwritten.jsonl");
    run_out(&dir, &[&corpus], &["full-history"]);
    assert!(dir.join("calls.csv").is_file());
    let d = dir.display().to_string();
    let out = recap(
        &root(),
        &[
            "run",
            &corpus,
            "--strategy",
            "full-history",
            "--out",
            &d,
            "--force",
            "--no-calls-csv",
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(!out.stderr.contains("calls.csv"), "{}", out.stderr);
    assert!(
        !dir.join("calls.csv").exists(),
        "the earlier report's calls.csv is not this report's"
    );
    assert!(dir.join("sessions.csv").is_file());
}

/// The HTML report of a run over both forms, for the tests below.
fn html_report(tmp: &Path) -> (PathBuf, Value) {
    let dir = tmp.join("r");
    let report = run_out(
        &dir,
        &[
            &bench("handwritten.jsonl"),
            &bench("chat-handwritten.jsonl"),
        ],
        &[
            "rolling-window:window=2",
            "single-user-coalesced",
            "observation-masking",
        ],
    );
    (dir.join("report.html"), report)
}

#[test]
fn the_html_report_is_one_self_contained_document_with_every_part() {
    use scraper::{Html, Selector};
    let tmp = tempfile::tempdir().unwrap();
    let (path, report) = html_report(tmp.path());
    let doc = Html::parse_document(&std::fs::read_to_string(&path).unwrap());
    assert!(doc.errors.is_empty(), "HTML parse errors: {:?}", doc.errors);
    let sel = |s: &str| Selector::parse(s).unwrap();
    let runs = report["runs"].as_array().unwrap();
    assert_eq!(
        doc.select(&sel("#summary table tbody tr")).count(),
        runs.len()
    );
    let first = doc.select(&sel("#summary tbody tr td")).next().unwrap();
    assert_eq!(first.text().collect::<String>(), "full-history*");
    // A table per form, each starting with its baseline.
    for form in ["ptc", "chat"] {
        let table = format!("#summary table[data-form={form}] tbody tr");
        let rows = runs.iter().filter(|r| r["form"] == form).count();
        assert_eq!(doc.select(&sel(&table)).count(), rows, "{form}");
    }
    // Two charts per form and tokenizer, inline.
    assert_eq!(doc.select(&sel("#charts figure > svg")).count(), 4);
    let sessions: u64 = report["settings"]["corpora"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["sessions"].as_u64().unwrap())
        .sum();
    assert_eq!(
        doc.select(&sel("#sessions tbody tr")).count() as u64,
        sessions
    );
    let calls: Vec<_> = doc.select(&sel("#lowest-retention article.call")).collect();
    assert!(!calls.is_empty());
    for call in &calls {
        let trace: String = call
            .select(&sel("pre.trace"))
            .next()
            .unwrap()
            .text()
            .collect();
        let prompt: String = call
            .select(&sel("pre.prompt"))
            .next()
            .unwrap()
            .text()
            .collect();
        assert!(trace.contains("── recorded turn"), "{trace}");
        assert!(prompt.starts_with("── sent by "), "{prompt}");
        assert!(prompt.contains("retention:"), "{prompt}");
    }
    let provenance: String = doc
        .select(&sel("#provenance"))
        .next()
        .unwrap()
        .text()
        .collect();
    let sha = report["provenance"]["corpora"][0]["sha256"]
        .as_str()
        .unwrap();
    assert!(provenance.contains(sha), "{provenance}");
    // Self-contained: nothing to run or fetch.
    assert_eq!(
        doc.select(&sel("script, link, iframe, img, object"))
            .count(),
        0
    );
    for e in doc.select(&sel("[src], [href]")) {
        let v = e.value();
        let target = v.attr("src").or(v.attr("href")).unwrap_or("");
        assert!(target.starts_with('#'), "external reference {target}");
    }
}

/// Reads a PNG's size and RGB pixels (8-bit, non-interlaced: what Chromium writes).
fn png_pixels(data: &[u8]) -> (u32, u32, Vec<[u8; 3]>) {
    use std::io::Read;
    assert_eq!(&data[..8], b"\x89PNG\r\n\x1a\n", "not a PNG");
    let (mut at, mut idat) = (8, Vec::new());
    let (mut width, mut height, mut channels) = (0u32, 0u32, 0usize);
    while at + 8 <= data.len() {
        let len = u32::from_be_bytes(data[at..at + 4].try_into().unwrap()) as usize;
        let kind = &data[at + 4..at + 8];
        let body = &data[at + 8..at + 8 + len];
        match kind {
            b"IHDR" => {
                width = u32::from_be_bytes(body[0..4].try_into().unwrap());
                height = u32::from_be_bytes(body[4..8].try_into().unwrap());
                assert_eq!(body[8], 8, "8-bit samples");
                assert_eq!(body[12], 0, "not interlaced");
                channels = match body[9] {
                    2 => 3,
                    6 => 4,
                    other => panic!("colour type {other}"),
                };
            }
            b"IDAT" => idat.extend_from_slice(body),
            _ => {}
        }
        at += 12 + len;
    }
    let mut raw = Vec::new();
    flate2::read::ZlibDecoder::new(&idat[..])
        .read_to_end(&mut raw)
        .unwrap();
    let stride = width as usize * channels;
    let mut prev = vec![0u8; stride];
    let mut pixels = Vec::with_capacity((width * height) as usize);
    for row in raw.chunks(stride + 1).take(height as usize) {
        let (filter, line) = (row[0], &row[1..]);
        let mut cur = vec![0u8; stride];
        for i in 0..stride {
            let a = if i >= channels { cur[i - channels] } else { 0 };
            let b = prev[i];
            let c = if i >= channels { prev[i - channels] } else { 0 };
            let predicted = match filter {
                0 => 0,
                1 => a,
                2 => b,
                3 => ((u16::from(a) + u16::from(b)) / 2) as u8,
                4 => {
                    let p = i16::from(a) + i16::from(b) - i16::from(c);
                    let (pa, pb, pc) = (
                        (p - i16::from(a)).abs(),
                        (p - i16::from(b)).abs(),
                        (p - i16::from(c)).abs(),
                    );
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                other => panic!("filter {other}"),
            };
            cur[i] = line[i].wrapping_add(predicted);
        }
        pixels.extend(cur.chunks(channels).map(|p| [p[0], p[1], p[2]]));
        prev = cur;
    }
    (width, height, pixels)
}

const CHROMIUM: &str = "/usr/bin/chromium";

#[test]
fn the_html_report_renders_in_headless_chromium() {
    if !Path::new(CHROMIUM).exists() {
        assert!(
            !recap_gen::shared::required(),
            "{CHROMIUM} is missing; RECAP_REQUIRE_SHARED=1 requires it (.ci/run installs Debian's `chromium`)"
        );
        recap_gen::shared::skipped(&format!(
            "HTML report in a browser: {CHROMIUM} is missing (apt-get install chromium; RECAP_REQUIRE_SHARED=1 makes this a failure)"
        ));
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let (html, _) = html_report(tmp.path());
    let png = tmp.path().join("report.png");
    let profile = tmp.path().join("profile");
    let log = tmp.path().join("chromium.log");
    let mut browser = std::process::Command::new(CHROMIUM)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            &format!("--user-data-dir={}", profile.display()),
            &format!("--screenshot={}", png.display()),
            "--window-size=1280,2000",
            &format!("file://{}", html.display()),
        ])
        .stdout(std::process::Stdio::null())
        // A file, not a pipe: a pipe nobody reads while waiting could fill and stall it.
        .stderr(std::fs::File::create(&log).unwrap())
        .spawn()
        .expect("start chromium");
    // A browser that hangs must not hang the test suite.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(120);
    let status = loop {
        if let Some(status) = browser.try_wait().expect("wait for chromium") {
            break Some(status);
        }
        if std::time::Instant::now() > deadline {
            let _ = browser.kill();
            let _ = browser.wait();
            break None;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    let stderr = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        png.is_file(),
        "no screenshot; chromium ended with {status:?} (None: killed after 120 s): {stderr}"
    );
    let data = std::fs::read(&png).unwrap();
    let (w, h, pixels) = png_pixels(&data);
    assert_eq!((w, h), (1280, 2000));
    assert_eq!(pixels.len(), 1280 * 2000);
    let background = [255u8, 255, 255];
    let inked = pixels.iter().filter(|p| **p != background).count();
    let share = inked as f64 / pixels.len() as f64;
    assert!(
        share > 0.02,
        "only {:.2}% of the page is not white",
        share * 100.0
    );
    // Text, table shading and the charts' colours, not one flat fill.
    let colours: std::collections::BTreeSet<[u8; 3]> = pixels.iter().copied().collect();
    assert!(colours.len() > 50, "{} colours", colours.len());
    // The charts' series colours (Tableau blue and orange) are on screen.
    let near = |p: &[u8; 3], c: [u8; 3]| p.iter().zip(c).all(|(a, b)| a.abs_diff(b) < 24);
    for c in [[31u8, 119, 180], [255, 127, 14]] {
        assert!(
            pixels.iter().filter(|p| near(p, c)).count() > 200,
            "chart colour {c:?} not rendered"
        );
    }
}
