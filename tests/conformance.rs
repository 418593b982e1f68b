//! `recap conformance`: failures with expected vs actual, the summary line, exit codes.

use recap_testkit::cli::Run;
use recap_testkit::recap;

fn cases_file(dir: &tempfile::TempDir, text: &str) -> String {
    let path = dir.path().join("cases.json");
    std::fs::write(&path, text).expect("write cases");
    path.to_str().expect("utf-8 path").to_string()
}

#[test]
fn prints_failures_and_the_summary_and_exits_1() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = cases_file(
        &dir,
        r#"[
        {"name":"ok","fn":"format.to_clojure","input":{"opts":{"limit":1},"value":[1,2]},
         "expected":{"text":"[1 ...] (2 items, showing first 1)","truncated":true}},
        {"name":"wrong","fn":"type_of","input":{"value":1.5},"expected":"integer"},
        {"name":"skip","fn":"type_of","input":{"value":1},"expected":"x","binding":false},
        {"name":"later","fn":"no.such.kind","input":{},"expected":null}
    ]"#,
    );
    let Run { code, stdout, .. } = recap!(&["conformance", &p]);
    assert_eq!(code, 1, "{stdout}");
    assert_eq!(
        stdout,
        "FAIL wrong (type_of): result differs (text differs at line 1, column 1)\n  \
         expected: \"integer\"\n  actual:   \"float\"\n\
         FAIL later (no.such.kind): not implemented: no.such.kind\n\
         1 passed, 2 failed, 1 skipped\n"
    );
}

#[test]
fn all_passing_exits_0() {
    let dir = tempfile::tempdir().expect("tempdir");
    let p = cases_file(
        &dir,
        r#"[{"name":"t","fn":"type_of","input":{"value":{"$set":[1]}},"expected":"set[1]"}]"#,
    );
    let Run { code, stdout, .. } = recap!(&["conformance", &p]);
    assert_eq!(
        (code, stdout.as_str()),
        (0, "1 passed, 0 failed, 0 skipped\n")
    );
    let Run { code, stdout, .. } = recap!(&["conformance", "--verbose", &p]);
    assert_eq!(code, 0);
    assert_eq!(stdout, "PASS t (type_of)\n1 passed, 0 failed, 0 skipped\n");
}

#[test]
fn unreadable_or_malformed_files_are_errors_naming_the_file() {
    let Run { code, stderr, .. } = recap!(&["conformance", "/nonexistent/cases.json"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("/nonexistent/cases.json: cannot read"),
        "{stderr}"
    );
    assert_eq!(
        stderr.matches("No such file").count(),
        1,
        "the OS error is said once: {stderr}"
    );
    let dir = tempfile::tempdir().expect("tempdir");
    let p = cases_file(&dir, "[\n  {\"name\": \"a\",\n");
    let Run { code, stderr, .. } = recap!(&["conformance", &p]);
    assert_eq!(code, 2);
    assert!(stderr.contains(&format!("{p}:3:")), "{stderr}");
    let p = cases_file(&dir, r#"[{"name":"a","fn":"type_of","input":{}}]"#);
    let Run { code, stderr, .. } = recap!(&["conformance", &p]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("case 0 (a): expected: required field is missing"),
        "{stderr}"
    );
}

/// The shared golden file through the CLI: every binding case passes (the evaluation
/// itself is recap-conformance's and tested there), and the summary is the library's.
#[test]
fn shared_golden_file_passes_through_the_cli() {
    let Some(path) = recap_gen::shared::path("conformance/ptc_runner_cases.json", "golden cases")
    else {
        return;
    };
    let Run {
        code,
        stdout,
        stderr,
    } = recap!(&["conformance", path.to_str().expect("utf-8 path")]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let cases = recap_conformance::load(&path).expect("the golden cases load");
    let summary = recap_conformance::run(&cases).summary_line();
    assert_eq!(stdout, format!("{summary}\n"));
}
