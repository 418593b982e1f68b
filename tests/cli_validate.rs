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
                "{p}:3: turns[0].number: turn numbers must be consecutive from 1: expected 1, got 2"
            )
            .as_str(),
            "1 sessions ok, 2 rejected",
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
    assert_eq!(stdout, "1 sessions ok, 0 rejected\n");
}

#[test]
fn missing_file_is_named() {
    let Run { code, stdout, .. } = recap!(&["validate", "/nonexistent/corpus.jsonl"]);
    assert_eq!(code, 1);
    assert!(
        stdout.starts_with("/nonexistent/corpus.jsonl:0: file: cannot open"),
        "{stdout}"
    );
}
