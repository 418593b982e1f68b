//! Output safety of `recap run --out DIR`: a previous report is never overwritten
//! silently; a run killed at any moment leaves either no report or a complete one
//! (never a half-written JSON file) in DIR, and nothing beside DIR; the next run cleans
//! up after it; two runs into one DIR are refused before any work; a DIR whose parent
//! is not writable works.

use recap_testkit::recap_command;
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
    let mut cmd = recap_command!();
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

/// The names in `dir` that are not hidden (recap's lock file and staging directories
/// are).
fn visible(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| !n.starts_with('.'))
        .collect();
    names.sort();
    names
}

/// What a reader may see in DIR after a killed run: no report file, or a report whose
/// JSON parses completely. Never a truncated file. `report.json` is moved in last, so
/// whenever it is there the files beside it are the complete report.
fn assert_no_partial_report(out: &Path) {
    if !out.exists() {
        return;
    }
    for name in visible(out) {
        let path = out.join(&name);
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
    if out.join("report.json").is_file() {
        for name in ["report.csv", "report.md", "report.txt"] {
            assert!(out.join(name).is_file(), "report.json without {name}");
        }
    }
}

#[test]
fn a_killed_run_leaves_no_half_written_report_and_the_next_run_cleans_up() {
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
    assert_eq!(
        std::fs::read_dir(&full_out)
            .expect("read")
            .filter(|e| e
                .as_ref()
                .expect("entry")
                .file_name()
                .to_string_lossy()
                .starts_with('.'))
            .count(),
        0,
        "a finished run leaves no lock file or staging directory"
    );

    let mut killed_before_commit = Vec::new();
    for (i, fraction) in [0.1, 0.5, 0.9, 0.98].iter().enumerate() {
        let out = dir.path().join(format!("killed-{i}"));
        let mut child = recap_run(&corpus, &out, &[]).spawn().expect("spawn recap");
        std::thread::sleep(full_time.mul_f64(*fraction));
        let _ = child.kill(); // SIGKILL: no destructor, no cleanup runs
        let _ = child.wait();
        assert_no_partial_report(&out);
        if !out.join("report.json").exists() {
            killed_before_commit.push(out);
        }
    }
    assert!(
        !killed_before_commit.is_empty(),
        "no run was killed before it finished (full run took {full_time:?})"
    );
    // Everything a killed run leaves is inside its DIR, never beside it.
    for entry in std::fs::read_dir(dir.path()).expect("read tempdir") {
        let name = entry
            .expect("entry")
            .file_name()
            .to_string_lossy()
            .into_owned();
        assert!(
            name == "c.jsonl" || name == "full" || name.starts_with("killed-"),
            "unexpected {name} beside the report directories"
        );
    }
    // What a killed run left is not a report: the next run into the same DIR needs no
    // --force, removes the leftovers and says so.
    for out in killed_before_commit.iter().filter(|o| o.exists()) {
        let rerun = recap_run(&corpus, out, &[]).output().expect("run recap");
        let stderr = String::from_utf8_lossy(&rerun.stderr);
        assert_eq!(rerun.status.code(), Some(0), "{stderr}");
        let hidden: Vec<String> = std::fs::read_dir(out)
            .expect("read")
            .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with('.'))
            .collect();
        assert!(hidden.is_empty(), "left in {}: {hidden:?}", out.display());
        assert_no_partial_report(out);
        assert!(out.join("report.json").is_file());
    }
}

#[test]
fn a_second_run_into_a_directory_in_use_is_refused_before_any_work() {
    let dir = tempfile::tempdir().expect("tempdir");
    let corpus = corpus(dir.path(), 400);
    // A last line that any run reading the corpus reports as rejected: its absence from
    // the refused run's stderr shows the corpus was never read.
    let mut text = std::fs::read_to_string(&corpus).expect("read corpus");
    text.push_str("{\"id\": \"cut\", \"mission\":\n");
    std::fs::write(&corpus, text).expect("write corpus");
    let out = dir.path().join("report");
    std::fs::create_dir(&out).expect("mkdir");
    // Another run holds the directory: its lock is taken the way recap takes it.
    let held = std::fs::File::create(out.join(".recap.lock")).expect("lock file");
    held.try_lock().expect("take the lock");
    let result = recap_run(&corpus, &out, &["--force"])
        .output()
        .expect("run recap");
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "another recap run is writing a report into {}",
            out.display()
        )),
        "{stderr}"
    );
    assert_eq!(
        std::fs::read_dir(&out).expect("read").count(),
        1,
        "nothing staged: only the lock file"
    );
    assert!(
        !stderr.contains("rejected"),
        "the corpus was read before the refusal: {stderr}"
    );
    drop(held);
    let result = recap_run(&corpus, &out, &[]).output().expect("run recap");
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(
        result.status.code(),
        Some(1),
        "free again once the other run is done (its cut line rejected): {stderr}"
    );
    assert!(
        stderr.contains("1 corpus line rejected"),
        "a run that reads the corpus reports its cut line: {stderr}"
    );
}

/// The uid of this process, from `/proc` (no libc in tests).
#[cfg(target_os = "linux")]
fn uid() -> u32 {
    let status = std::fs::read_to_string("/proc/self/status").expect("read /proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|u| u.parse().ok())
        .expect("a Uid line")
}

/// `cmd` as an unprivileged user: root may write anywhere, so a permission test run by
/// root drops to `nobody` (65534) through `setpriv`.
#[cfg(target_os = "linux")]
fn unprivileged(cmd: &Command) -> Command {
    if uid() != 0 {
        let mut same = Command::new(cmd.get_program());
        same.args(cmd.get_args());
        return same;
    }
    let mut dropped = Command::new("setpriv");
    dropped
        .args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
        .arg(cmd.get_program())
        .args(cmd.get_args());
    dropped
}

#[cfg(target_os = "linux")]
#[test]
fn a_writable_directory_under_a_read_only_parent_takes_the_report() {
    use std::os::unix::fs::{PermissionsExt, chown};
    let tmp = tempfile::tempdir().expect("tempdir");
    let base = tmp.path();
    let corpus = corpus(base, 2);
    // As a mounted volume looks: the parent is not writable, DIR is.
    let parent = base.join("mnt");
    let out = parent.join("out");
    std::fs::create_dir_all(&out).expect("mkdir");
    let as_root = uid() == 0;
    let mode = |p: &Path, m: u32| {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(m)).expect("chmod")
    };
    mode(base, 0o755);
    mode(&corpus, 0o644);
    if as_root {
        chown(&out, Some(65534), Some(65534)).expect("chown");
    }
    mode(&parent, 0o555);
    let result = unprivileged(&recap_run(&corpus, &out, &[]))
        .output()
        .expect("run recap");
    mode(&parent, 0o755);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(0), "{stderr}");
    assert!(out.join("report.json").is_file(), "{stderr}");
    assert_eq!(visible(&parent), ["out"], "nothing was written beside DIR");

    // A DIR that is not writable is one clear error, the reason said once.
    let locked = base.join("locked");
    std::fs::create_dir(&locked).expect("mkdir");
    mode(&locked, 0o555);
    let result = unprivileged(&recap_run(&corpus, &locked, &[]))
        .output()
        .expect("run recap");
    mode(&locked, 0o755);
    let stderr = String::from_utf8_lossy(&result.stderr);
    assert_eq!(result.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr.matches("Permission denied").count(),
        1,
        "the error names its cause once: {stderr}"
    );
    assert!(stderr.contains(&locked.display().to_string()), "{stderr}");
}
