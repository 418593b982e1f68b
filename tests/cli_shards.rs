//! Sharded runs end to end (the binary): `recap run --shard I/N` as separate processes,
//! then `recap merge`, writes the report the whole run writes — every file of `--out`,
//! timings and the command line aside — and every set of parts that is not one finished
//! run is refused with nothing written.

mod cli_common;

use cli_common::{bench, recap, root};
use recap_testkit::cli::{Run, run};
use recap_testkit::recap_command;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Stdio;

/// `recap run ARGS --shard I/COUNT --out pI` for every shard at once, as separate
/// processes (a job array); returns the part directories.
fn shards(dir: &Path, args: &[&str], count: u32) -> Vec<String> {
    let parts: Vec<String> = (0..count).map(|i| format!("p{count}-{i}")).collect();
    let children: Vec<_> = (0..count)
        .map(|i| {
            let shard = format!("{i}/{count}");
            recap_command!()
                .current_dir(dir)
                .args(["run"])
                .args(args)
                .args(["--shard", &shard, "--out", &parts[i as usize]])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (i, child) in children.into_iter().enumerate() {
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "shard {i}: {stderr}");
        assert!(out.stdout.is_empty(), "a shard prints no report");
        assert!(stderr.contains(&format!("shard {i}/{count}: ")), "{stderr}");
    }
    parts
}

/// `recap merge PARTS --out OUT ARGS`.
fn merge(dir: &Path, parts: &[String], out: &str, args: &[&str]) -> Run {
    let mut all = vec!["merge"];
    all.extend(parts.iter().map(String::as_str));
    all.extend(["--out", out]);
    all.extend(args);
    recap(dir, &all)
}

/// Every file of a report directory, relative to it.
fn files(dir: &Path) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let path = e.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if path.is_dir() {
            out.extend(files(&path).into_iter().map(|f| format!("{name}/{f}")));
        } else {
            out.insert(name);
        }
    }
    out
}

/// Replaces each duration (`2.2µs`, `14ms`, `1.50s`) by `T`.
fn mask_times(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let starts = chars[i].is_ascii_digit()
            && (i == 0 || !(chars[i - 1].is_alphanumeric() || chars[i - 1] == '.'));
        if starts {
            let mut j = i;
            while j < chars.len() && (chars[j].is_ascii_digit() || chars[j] == '.') {
                j += 1;
            }
            let unit = ["ns", "µs", "ms", "s"].iter().find(|u| {
                let u: Vec<char> = u.chars().collect();
                chars[j..].starts_with(&u)
                    && chars.get(j + u.len()).is_none_or(|c| !c.is_alphanumeric())
            });
            if let Some(u) = unit {
                out.push('T');
                i = j + u.chars().count();
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// A text format with its timings masked, its columns' padding and rules collapsed.
fn text_view(text: &str) -> Vec<String> {
    mask_times(text)
        .lines()
        .map(|l| {
            l.split_whitespace()
                .map(|w| if w.chars().all(|c| c == '-') { "-" } else { w })
                .collect::<Vec<_>>()
                .join(" ")
        })
        .collect()
}

/// A CSV file without its timing columns.
fn csv_view(text: &str) -> Vec<Vec<String>> {
    let mut lines = text.lines();
    let header: Vec<&str> = lines.next().unwrap_or("").split(',').collect();
    let keep: Vec<bool> = header.iter().map(|h| !h.starts_with("render_ns")).collect();
    text.lines()
        .map(|l| {
            // Quoted fields with commas shift columns alike in both files.
            l.split(',')
                .zip(keep.iter().chain(std::iter::repeat(&true)))
                .filter(|(_, k)| **k)
                .map(|(c, _)| c.to_string())
                .collect()
        })
        .collect()
}

fn strip_json(v: &mut Value) {
    match v {
        Value::Object(map) => {
            map.retain(|k, _| !k.starts_with("render_ns") && k != "non_deterministic");
            if let Some(Value::Object(p)) = map.get_mut("provenance") {
                p.remove("command_line");
                p.remove("shards");
            }
            map.values_mut().for_each(strip_json);
        }
        Value::Array(items) => items.iter_mut().for_each(strip_json),
        _ => {}
    }
}

/// The HTML page without its run time, provenance and timings.
fn html_view(text: &str) -> Vec<String> {
    let body = text
        .split("<section id=\"provenance\">")
        .next()
        .unwrap_or("");
    text_view(body)
        .into_iter()
        .filter(|l| !l.starts_with("<p class=\"meta\">"))
        .collect()
}

/// Asserts that two report directories hold the same report.
fn same_report(merged: &Path, whole: &Path) {
    let names = files(whole);
    assert_eq!(files(merged), names, "the same files");
    for name in &names {
        let read = |d: &Path| std::fs::read_to_string(d.join(name)).unwrap();
        let (a, b) = (read(merged), read(whole));
        let same = match name.rsplit('.').next() {
            Some("json") => {
                let (mut x, mut y): (Value, Value) = (
                    serde_json::from_str(&a).unwrap(),
                    serde_json::from_str(&b).unwrap(),
                );
                strip_json(&mut x);
                strip_json(&mut y);
                x == y
            }
            Some("csv") => csv_view(&a) == csv_view(&b),
            Some("txt" | "md") => text_view(&a) == text_view(&b),
            Some("html") => html_view(&a) == html_view(&b),
            // Charts and prompt dumps hold no timing: byte for byte.
            _ => a == b,
        };
        assert!(same, "{name} differs");
    }
}

#[test]
fn bench_data_in_three_shard_processes_merges_into_the_whole_runs_report() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let corpora: Vec<String> = [
        "chat-generated.jsonl",
        "chat-handwritten.jsonl",
        "generated.jsonl",
        "handwritten.jsonl",
    ]
    .iter()
    .map(|f| bench(f))
    .collect();
    let mut args: Vec<&str> = corpora.iter().map(String::as_str).collect();
    args.extend(["--dump-prompts", "--jobs", "1"]);
    let parts = shards(dir, &args, 3);
    let merged = merge(dir, &parts, "merged", &["--format", "json"]);
    assert_eq!(merged.code, 0, "{}", merged.stderr);
    let mut whole_args = vec!["run"];
    whole_args.extend(&args);
    whole_args.extend(["--out", "whole", "--format", "json"]);
    let whole = recap(dir, &whole_args);
    assert_eq!(whole.code, 0, "{}", whole.stderr);
    same_report(&dir.join("merged"), &dir.join("whole"));
    assert!(files(&dir.join("merged")).contains("prompts/full-history.jsonl"));

    // What the merge prints is the report it wrote; its provenance lists the shards.
    let printed = merged.json();
    let written: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("merged/report.json")).unwrap())
            .unwrap();
    assert_eq!(printed["runs"], written["runs"]);
    // Rows per session form hold in the merged report: a group per form, each with its
    // own full-history baseline, as in the whole run's.
    let whole_json: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("whole/report.json")).unwrap())
            .unwrap();
    assert_eq!(written["groups"], whole_json["groups"]);
    let groups: Vec<&str> = written["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["form"].as_str().unwrap())
        .collect();
    assert_eq!(groups, ["ptc", "chat"]);
    for form in groups {
        let rows: Vec<&Value> = written["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["form"] == form)
            .collect();
        assert!(
            rows.iter().any(|r| r["strategy"] == "full-history"),
            "{form}: a baseline row"
        );
        assert!(
            files(&dir.join("merged")).contains(&format!("tokens_per_call_{form}_o200k_base.svg")),
            "{form}: its charts"
        );
    }
    let shards: Vec<&str> = printed["provenance"]["shards"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["shard"].as_str().unwrap())
        .collect();
    assert_eq!(shards, ["0/3", "1/3", "2/3"]);
    assert_eq!(printed["provenance"]["command_line"][1], "merge");
    let html = std::fs::read_to_string(dir.join("merged/report.html")).unwrap();
    assert!(
        html.contains("<dt>shard 2/3</dt>"),
        "the page lists the shards"
    );
    // Every format on stdout, as `recap run` prints it (and writes it into --out).
    for (format, file) in [
        ("table", "report.txt"),
        ("csv", "report.csv"),
        ("markdown", "report.md"),
    ] {
        let m = recap(
            dir,
            &["merge", &parts[0], &parts[1], &parts[2], "--format", format],
        );
        let w = std::fs::read_to_string(dir.join("whole").join(file)).unwrap();
        let view = |s: &str| match format {
            "csv" => format!("{:?}", csv_view(s)),
            _ => text_view(s).join("\n"),
        };
        assert_eq!(view(&m.stdout), view(&w), "{format}");
    }
    // The table's columns are chosen as in `recap run --columns`.
    let m = recap(
        dir,
        &[
            "merge",
            &parts[0],
            &parts[1],
            &parts[2],
            "--columns",
            "strategy,tokens,savings",
        ],
    );
    assert_eq!(m.code, 0, "{}", m.stderr);
    let headers: Vec<Vec<&str>> = m
        .stdout
        .lines()
        .filter(|l| l.starts_with("strategy "))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(headers, vec![vec!["strategy", "tokens", "savings"]; 2]);
}

/// A small corpus: sessions of both forms, a repeated id and a broken line.
fn small_corpus(dir: &Path) -> String {
    let mut text = String::new();
    for f in ["handwritten.jsonl", "chat-handwritten.jsonl"] {
        let all = std::fs::read_to_string(bench(f)).unwrap();
        for line in all.lines().take(2) {
            text.push_str(line);
            text.push('\n');
        }
    }
    let first = text.lines().next().unwrap().to_string();
    text.push_str(&first);
    text.push_str("\n\n{\"id\": \"broken\"\n");
    let path = dir.join("small.jsonl");
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn one_two_and_seven_shards_with_empty_ones_merge_into_the_whole_runs_report() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let corpus = small_corpus(dir);
    let args = [
        corpus.as_str(),
        "--strategy",
        "rolling-window:window=1",
        "--strategy",
        "observation-masking",
        "--strategy",
        "single-user-coalesced",
        "--tokenizer",
        "o200k_base",
        "--tokenizer",
        "cl100k_base",
        "--jobs",
        "1",
    ];
    let mut whole_args = vec!["run"];
    whole_args.extend(args);
    whole_args.extend(["--out", "whole"]);
    let whole = recap(dir, &whole_args);
    assert_eq!(whole.code, 1, "a rejected line: {}", whole.stderr);
    for count in [1, 2, 7] {
        let parts = shards(dir, &args, count);
        let empty = parts
            .iter()
            .filter(|p| {
                let h: Value = serde_json::from_str(
                    &std::fs::read_to_string(dir.join(p).join("part.json")).unwrap(),
                )
                .unwrap();
                h["entries"]["owned"] == 0
            })
            .count();
        if count == 7 {
            assert!(empty > 0, "6 entries over 7 shards leave one empty");
        }
        let out = format!("merged{count}");
        let merged = merge(dir, &parts, &out, &[]);
        assert_eq!(
            merged.code, 1,
            "the merge exits as the run: {}",
            merged.stderr
        );
        assert_eq!(
            merged
                .stderr
                .lines()
                .filter(|l| l.contains("rejected"))
                .count(),
            whole
                .stderr
                .lines()
                .filter(|l| l.contains("rejected"))
                .count(),
            "{}",
            merged.stderr
        );
        same_report(&dir.join(&out), &dir.join("whole"));
    }
}

/// Parts of a two-shard run of `args` in `dir`, named `prefix0` and `prefix1`.
fn two_parts(dir: &Path, corpus: &str, extra: &[&str], prefix: &str) -> Vec<String> {
    (0..2)
        .map(|i| {
            let out = format!("{prefix}{i}");
            let shard = format!("{i}/2");
            let mut args = vec!["run", corpus, "--strategy", "rolling-window", "--jobs", "1"];
            args.extend(extra);
            args.extend(["--shard", &shard, "--out", &out]);
            let r = recap(dir, &args);
            assert_eq!(r.code, 0, "{}", r.stderr);
            out
        })
        .collect()
}

/// Asserts that merging `parts` is refused with a message holding every one of `words`,
/// and that nothing was written.
fn refused(dir: &Path, parts: &[&str], words: &[&str]) {
    let mut args = vec!["merge"];
    args.extend(parts);
    args.extend(["--out", "refused"]);
    let r = recap(dir, &args);
    assert_eq!(r.code, 2, "{parts:?}: {}", r.stderr);
    for w in words {
        assert!(r.stderr.contains(w), "{w:?} in: {}", r.stderr);
    }
    assert!(
        !dir.join("refused").exists(),
        "nothing written: {}",
        r.stderr
    );
}

fn edit_header(part: &Path, edit: impl FnOnce(&mut Value)) {
    let file = part.join("part.json");
    let mut h: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    edit(&mut h);
    std::fs::write(&file, serde_json::to_string_pretty(&h).unwrap()).unwrap();
}

#[test]
fn parts_that_are_not_one_finished_run_are_refused_with_nothing_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let corpus = small_corpus(dir);
    let c = corpus.as_str();
    let base = two_parts(dir, c, &[], "a");
    let (a0, a1) = (base[0].as_str(), base[1].as_str());
    // Nothing wrong: it merges.
    let ok = recap(dir, &["merge", a0, a1]);
    assert_eq!(ok.code, 1, "{}", ok.stderr);

    // Shard 1 run with something else than shard 0; the last an option the part records
    // only on its command line.
    let differing: [(&str, &[&str], [&str; 2]); 5] = [
        (
            "s",
            &["--strategy", "single-user-coalesced"],
            ["different strategies", "single-user-coalesced"],
        ),
        (
            "t",
            &["--tokenizer", "cl100k_base"],
            ["different tokenizers", "cl100k_base"],
        ),
        (
            "r",
            &["--cache-read-ratio", "0.5"],
            ["different settings", "cache_read_ratio"],
        ),
        (
            "d",
            &["--no-session-details"],
            ["different settings", "session_details"],
        ),
        (
            "o",
            &["--plugin-timeout", "9s"],
            ["different settings", "--plugin-timeout"],
        ),
    ];
    for (prefix, extra, words) in differing {
        let other = two_parts(dir, c, extra, prefix);
        refused(dir, &[a0, &other[1]], &words);
    }

    // The same path, other bytes.
    let copy = dir.join("copy.jsonl");
    std::fs::copy(c, &copy).unwrap();
    let copy = copy.display().to_string();
    let first = two_parts(dir, &copy, &[], "c");
    std::fs::write(
        &copy,
        std::fs::read_to_string(c)
            .unwrap()
            .replace("broken", "brokeN"),
    )
    .unwrap();
    let second = two_parts(dir, &copy, &[], "e");
    refused(
        dir,
        &[&first[0], &second[1]],
        &["different corpora", "sha256"],
    );

    std::fs::create_dir(dir.join("v1")).unwrap();
    for f in ["part.json", "outcomes.jsonl", "calls.csv"] {
        std::fs::copy(dir.join(a1).join(f), dir.join("v1").join(f)).unwrap();
    }
    edit_header(&dir.join("v1"), |h| {
        h["provenance"]["recap_version"] = "9.9.9".into()
    });
    refused(dir, &[a0, "v1"], &["different recap versions", "9.9.9"]);
    edit_header(&dir.join("v1"), |h| {
        h["format"] = "recap partial report 0".into()
    });
    refused(
        dir,
        &[a0, "v1"],
        &["not a partial report this recap reads", "report 0"],
    );

    refused(dir, &[a0], &["shard 1/2 of 2 missing", "0/2"]);
    refused(dir, &[a0, a1, a0], &["both shard 0/2"]);
    let three = recap(
        dir,
        &[
            "run",
            c,
            "--strategy",
            "rolling-window",
            "--shard",
            "2/3",
            "--out",
            "x2",
        ],
    );
    assert_eq!(three.code, 0, "{}", three.stderr);
    refused(dir, &[a0, a1, "x2"], &["different settings", "shards"]);
    refused(
        dir,
        &[a0, dir.to_str().unwrap()],
        &["not a shard's partial report", "part.json"],
    );

    // Unfinished: a shard killed while it wrote leaves its lock file or staging
    // directory; a shard still writing holds the lock.
    std::fs::create_dir(dir.join("killed")).unwrap();
    std::fs::create_dir(dir.join("killed/.recap-staging-x1")).unwrap();
    refused(
        dir,
        &[a0, "killed"],
        &["unfinished", "stopped while it wrote"],
    );
    let lock = dir.join(a1).join(".recap.lock");
    let held = std::fs::File::create(&lock).unwrap();
    held.lock().unwrap();
    refused(dir, &[a0, a1], &["unfinished", "is writing into it"]);
    drop(held);
    refused(dir, &[a0, a1], &["unfinished", "stopped while it wrote"]);
    std::fs::remove_file(&lock).unwrap();

    // Damaged after it was written: found while merging, and still nothing written.
    let outcomes = dir.join(a1).join("outcomes.jsonl");
    let text = std::fs::read_to_string(&outcomes).unwrap();
    std::fs::write(&outcomes, &text[..text.len() / 2]).unwrap();
    refused(dir, &[a0, a1], &["damaged", "run that shard again"]);
    // A session's record without its last strategy's outcome.
    let mut cut = false;
    let lines: Vec<String> = text
        .lines()
        .map(|l| {
            let mut record: Value = serde_json::from_str(l).unwrap();
            match record["session"]["strategies"].as_array_mut() {
                Some(s) if !cut => {
                    s.pop();
                    cut = true;
                    format!("{record}\n")
                }
                _ => format!("{l}\n"),
            }
        })
        .collect();
    assert!(cut, "the part has a session");
    std::fs::write(&outcomes, lines.concat()).unwrap();
    refused(dir, &[a0, a1], &["damaged", "not one outcome per strategy"]);
    std::fs::write(&outcomes, &text).unwrap();
    let calls = dir.join(a1).join("calls.csv");
    let rows = std::fs::read_to_string(&calls).unwrap();
    std::fs::write(&calls, rows.replace("rolling-window", "rolling-wind0w")).unwrap();
    refused(dir, &[a0, a1], &["damaged", "calls.csv", "SHA-256"]);
    std::fs::write(&calls, rows).unwrap();
    assert_eq!(recap(dir, &["merge", a0, a1]).code, 1, "intact again");
}

#[test]
fn shard_arguments_are_checked() {
    let tmp = tempfile::tempdir().unwrap();
    let c = bench("handwritten.jsonl");
    let r = recap(tmp.path(), &["run", &c, "--shard", "1/4"]);
    assert_eq!(r.code, 2);
    assert!(
        r.stderr.contains("--shard needs an output directory"),
        "{}",
        r.stderr
    );
    let r = recap(tmp.path(), &["run", &c, "--shard", "4/4", "--out", "p"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("from 0 to 3"), "{}", r.stderr);
    assert!(!tmp.path().join("p").exists());
    let r = recap(tmp.path(), &["merge", "--out", "m"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let parts = two_parts(tmp.path(), &c, &[], "p");
    let r = recap(
        tmp.path(),
        &["merge", &parts[0], &parts[1], "--out", &parts[0], "--force"],
    );
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("one of the parts"), "{}", r.stderr);
}

/// The fenced block of docs/scale.md holding `marker`.
fn doc_block(marker: &str) -> String {
    let doc = std::fs::read_to_string(root().join("docs/scale.md")).unwrap();
    let block = doc
        .split("```")
        .skip(1)
        .step_by(2)
        .find(|b| b.contains(marker))
        .unwrap_or_else(|| panic!("docs/scale.md has no block with {marker:?}"));
    // Without its info string (`bash`, `yaml`).
    block
        .split_once('\n')
        .map_or("", |(_, body)| body)
        .to_string()
}

/// `sh -c SCRIPT` with the built `recap` first on PATH and `env` set.
fn shell(dir: &Path, script: &str, env: &[(&str, String)]) -> Run {
    let bin = Path::new(env!("CARGO_BIN_EXE_recap")).parent().unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = std::process::Command::new("bash");
    cmd.current_dir(dir).args(["-c", script]).env("PATH", path);
    for (k, v) in env {
        cmd.env(k, v);
    }
    run(&mut cmd)
}

/// The unsharded twin of a shard's command: without `--shard …`, into `whole`.
fn unsharded(command: &str, shard: &str, out: &str, whole: &str) -> String {
    assert!(
        command.contains(shard) && command.contains(out),
        "{command}"
    );
    command.replace(shard, "").replace(out, whole)
}

/// A recipe run as this machine allows: `shard` once per shard index with the
/// scheduler's variables (`env` of the index), then `merge`, then the shard command
/// without its `--shard` into `whole`; the merged report is the whole run's.
struct Recipe<'a> {
    shard: String,
    env: &'a dyn Fn(u32) -> Vec<(&'static str, String)>,
    merge: String,
    /// The shard command's `--shard …` and `--out …` arguments.
    shard_arg: &'a str,
    out_arg: String,
    /// Where the merge writes, and the unsharded twin.
    report: PathBuf,
    whole: PathBuf,
}

fn run_recipe(dir: &Path, r: &Recipe) {
    for i in 0..3 {
        let out = shell(dir, &r.shard, &(r.env)(i));
        assert_eq!(out.code, 0, "shard {i}: {}", out.stderr);
    }
    let merged = shell(dir, &r.merge, &[]);
    assert_eq!(
        merged.code, 1,
        "the corpus has a rejected line: {}",
        merged.stderr
    );
    let whole = unsharded(
        &r.shard,
        r.shard_arg,
        &r.out_arg,
        &format!("\"{}\"", r.whole.display()),
    );
    let w = shell(dir, &whole, &(r.env)(0));
    assert_eq!(w.code, 1, "{}", w.stderr);
    same_report(&r.report, &r.whole);
}

#[test]
fn the_slurm_and_kubernetes_recipes_of_docs_scale_run_as_written() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    let root_dir = dir.display().to_string();
    for base in ["shared", "data"] {
        std::fs::create_dir_all(dir.join(base).join("corpora")).unwrap();
        let corpus = small_corpus(dir);
        std::fs::copy(&corpus, dir.join(base).join("corpora/rollouts.jsonl")).unwrap();
    }
    let local = |text: &str| {
        text.replace("/shared/", &format!("{root_dir}/shared/"))
            .replace("/data/", &format!("{root_dir}/data/"))
    };

    // Slurm: the batch script once per array task, as Slurm sets its variables.
    let script = local(&doc_block("#SBATCH --array"));
    let submit = doc_block("sbatch --dependency");
    let wrapped = submit
        .split("--wrap '")
        .nth(1)
        .unwrap()
        .split('\'')
        .next()
        .unwrap();
    let command = script.replace("\\\n", " ");
    let slurm_env = |i: u32| {
        vec![
            ("SLURM_ARRAY_TASK_ID", i.to_string()),
            ("SLURM_ARRAY_TASK_COUNT", "3".to_string()),
            ("SLURM_CPUS_PER_TASK", "1".to_string()),
        ]
    };
    run_recipe(
        dir,
        &Recipe {
            shard: command
                .lines()
                .find(|l| l.starts_with("recap run"))
                .unwrap()
                .to_string(),
            env: &slurm_env,
            merge: local(wrapped),
            shard_arg: r#"--shard "$SLURM_ARRAY_TASK_ID/$SLURM_ARRAY_TASK_COUNT""#,
            out_arg: format!(r#""{root_dir}/shared/parts/$SLURM_ARRAY_TASK_ID""#),
            report: dir.join("shared/report"),
            whole: dir.join("shared/whole"),
        },
    );

    // Kubernetes: the container's command once per completion index, then the merge Job's.
    let job = doc_block("completionMode: Indexed");
    let folded: Vec<&str> = job
        .lines()
        .skip_while(|l| !l.trim_end().ends_with("- >-"))
        .skip(1)
        .take_while(|l| l.trim_start().starts_with("recap") || l.trim_start().starts_with("--"))
        .map(str::trim)
        .collect();
    let merge_job = doc_block("name: recap-merge");
    let merge = merge_job
        .lines()
        .find_map(|l| l.trim().strip_prefix("- recap merge"))
        .map(|rest| format!("recap merge{rest}"))
        .unwrap();
    let k8s_env = |i: u32| {
        vec![
            ("JOB_COMPLETION_INDEX", i.to_string()),
            ("SHARDS", "3".to_string()),
        ]
    };
    run_recipe(
        dir,
        &Recipe {
            shard: local(&folded.join(" ")),
            env: &k8s_env,
            merge: local(&merge),
            shard_arg: r#"--shard "$JOB_COMPLETION_INDEX/$SHARDS""#,
            out_arg: format!(r#""{root_dir}/data/parts/$JOB_COMPLETION_INDEX""#),
            report: dir.join("data/report"),
            whole: dir.join("data/whole"),
        },
    );
}
