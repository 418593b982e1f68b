//! Output safety of `recap run --out DIR`: a previous report is never overwritten
//! silently, and a run killed at any moment leaves either no report or a complete one
//! (never a half-written JSON file) in DIR.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// `n` sessions of 5 turns each.
fn corpus(dir: &Path, n: usize) -> PathBuf {
    let mut text = String::new();
    for s in 0..n {
        let turns: Vec<serde_json::Value> = (1..=5)
            .map(|t| {
                serde_json::json!({
                    "number": t, "program": format!("(def v{t} (range {t}))"), "success": true,
                    "prints": [format!("session {s} turn {t}: {}", "words ".repeat(40))],
                    "definitions": [{"name": format!("v{t}"), "kind": "def", "value": [t, s]}],
                })
            })
            .collect();
        let session = serde_json::json!({
            "id": format!("s{s}"), "mission": "Find it", "max_turns": 6, "turns": turns,
        });
        text.push_str(&session.to_string());
        text.push('\n');
    }
    let path = dir.join("c.jsonl");
    std::fs::write(&path, text).expect("write corpus");
    path
}

fn recap_run(corpus: &Path, out: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_recap"));
    cmd.arg("run")
        .arg(corpus)
        .args([
            "--strategy",
            "full-history",
            "--strategy",
            "single-user-coalesced",
        ])
        .args(["--format", "csv", "--jobs", "1", "--out"])
        .arg(out)
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    cmd
}

#[test]
fn existing_report_is_refused_and_left_intact() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = corpus(dir.path(), 2);
    let out = dir.path().join("report");
    std::fs::create_dir(&out).expect("mkdir");
    std::fs::write(out.join("report.json"), "previous report").expect("write");
    let result = recap_run(&corpus, &out, &[]).output().expect("run recap");
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("refusing to overwrite"), "{stderr}");
    assert!(
        stderr.contains("--force"),
        "the error says how to replace it: {stderr}"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("report.json")).expect("read"),
        "previous report"
    );
}

#[test]
fn force_replaces_the_report_and_keeps_other_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = corpus(dir.path(), 2);
    let out = dir.path().join("report");
    std::fs::create_dir(&out).expect("mkdir");
    std::fs::write(out.join("report.json"), "previous report").expect("write");
    std::fs::write(out.join("my-notes.txt"), "mine").expect("write");
    let result = recap_run(&corpus, &out, &["--force"])
        .output()
        .expect("run recap");
    assert_eq!(
        result.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&result.stderr)
    );
    let json = std::fs::read(out.join("report.json")).expect("read");
    let report: serde_json::Value = serde_json::from_slice(&json).expect("a complete report");
    assert_eq!(report["runs"][0]["sessions"], 2);
    assert_eq!(
        std::fs::read_to_string(out.join("my-notes.txt")).expect("read"),
        "mine"
    );
}

/// What a reader may see in DIR after a killed run: nothing, or a report whose JSON
/// parses completely. Never a truncated file.
fn assert_no_partial_report(out: &Path) {
    if !out.exists() {
        return;
    }
    for entry in std::fs::read_dir(out).expect("read out dir") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "json") {
            let bytes = std::fs::read(&path).expect("read report");
            assert!(
                serde_json::from_slice::<serde_json::Value>(&bytes).is_ok(),
                "{} is half-written ({} bytes)",
                path.display(),
                bytes.len()
            );
        }
    }
    assert!(
        out.join("report.json").is_file(),
        "a report directory without report.json"
    );
}

#[test]
fn a_killed_run_leaves_no_half_written_report() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = corpus(dir.path(), 400);
    // How long a full run takes here, to kill runs at several points within it.
    let full_out = dir.path().join("full");
    let start = Instant::now();
    let full = recap_run(&corpus, &full_out, &[])
        .output()
        .expect("run recap");
    let full_time = start.elapsed();
    assert_eq!(
        full.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&full.stderr)
    );
    assert_no_partial_report(&full_out);

    let mut killed_before_commit = 0;
    for (i, fraction) in [0.1, 0.5, 0.9, 0.98].iter().enumerate() {
        let out = dir.path().join(format!("killed-{i}"));
        let mut child = recap_run(&corpus, &out, &[]).spawn().expect("spawn recap");
        std::thread::sleep(full_time.mul_f64(*fraction));
        let _ = child.kill(); // SIGKILL: no destructor, no cleanup runs
        let _ = child.wait();
        assert_no_partial_report(&out);
        if !out.exists() {
            killed_before_commit += 1;
        }
    }
    assert!(
        killed_before_commit > 0,
        "no run was killed before it finished (full run took {full_time:?})"
    );
    // The kills left only staging directories, never files in a report directory.
    for entry in std::fs::read_dir(dir.path()).expect("read tempdir") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        assert!(
            name == "c.jsonl"
                || name == "full"
                || name.starts_with("killed-")
                || name.starts_with(".recap-report-"),
            "unexpected {name}"
        );
    }
}
