//! `recap validate`: one line per rejected session, a count, exit 1 on rejections.

use recap_testkit::cli::Run;
use recap_testkit::recap;

#[test]
fn reports_each_rejected_session_and_counts() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.jsonl");
    std::fs::write(
        &path,
        concat!(
            r#"{"id":"a","mission":"m","turns":[]}"#,
            "\n",
            r#"{"id":"b","turns":[]}"#,
            "\n",
            r#"{"id":"c","mission":"m","turns":[{"number":2,"program":"p","success":true}]}"#,
            "\n"
        ),
    )
    .expect("write corpus");
    let p = path.to_str().expect("utf-8 path");
    let Run { code, stdout, .. } = recap!(&["validate", p]);
    assert_eq!(code, 1);
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            format!("{p}:2: mission: required field is missing").as_str(),
            format!(
                "{p}:3: turns[0].number (turn 1): turn numbers must be consecutive from 1: expected 1, got 2"
            )
            .as_str(),
            "1 session ok, 2 rejected",
        ]
    );
}

#[test]
fn all_valid_exits_zero() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("c.jsonl");
    std::fs::write(&path, "{\"id\":\"a\",\"mission\":\"m\"}\n").expect("write corpus");
    let Run { code, stdout, .. } = recap!(&["validate", path.to_str().expect("utf-8")]);
    assert_eq!(code, 0);
    assert_eq!(stdout, "1 session ok, 0 rejected\n");
}

#[test]
fn nothing_readable_is_exit_2_naming_each_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let Run {
        code,
        stdout,
        stderr,
    } = recap!(&["validate", "/nonexistent/corpus.jsonl"]);
    assert_eq!(code, 2, "{stdout}{stderr}");
    assert!(
        stdout.starts_with("/nonexistent/corpus.jsonl:0: file: cannot open"),
        "{stdout}"
    );
    assert!(
        stdout.ends_with("0 sessions ok, 0 rejected, 1 file unreadable\n"),
        "{stdout}"
    );
    assert!(
        stderr.contains("nothing to validate: the file could not be read (see above)"),
        "{stderr}"
    );
    // A directory is no corpus either.
    let d = dir.path().to_str().expect("utf-8");
    let Run { code, stderr, .. } = recap!(&["validate", d, "/nonexistent/b.jsonl"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("none of the 2 files could be read"),
        "{stderr}"
    );
}
