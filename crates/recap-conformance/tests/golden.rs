//! Runs the shared golden cases (`../shared/conformance/ptc_runner_cases.json` next to
//! the workspace) through the runner. Missing file: fails under `RECAP_REQUIRE_SHARED=1`, otherwise the
//! tests skip with a message.

use recap_conformance::{Outcome, Report, load, run};

const PRINTER_KINDS: [&str; 2] = ["format.to_clojure", "type_of"];

fn shared_report() -> Option<Report> {
    let path = recap_gen::shared::path("conformance/ptc_runner_cases.json", "golden cases")?;
    let cases = load(&path).unwrap_or_else(|e| panic!("{e}"));
    Some(run(&cases))
}

fn failure_text(report: &Report, only: impl Fn(&str) -> bool) -> Vec<String> {
    report
        .failures()
        .filter(|(r, _)| only(&r.fn_name))
        .map(|(r, _)| r.to_string())
        .collect()
}

#[test]
fn every_binding_printer_and_type_of_case_passes() {
    let Some(report) = shared_report() else {
        return;
    };
    let failures = failure_text(&report, |f| PRINTER_KINDS.contains(&f));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let passed = report
        .results
        .iter()
        .filter(|r| PRINTER_KINDS.contains(&r.fn_name.as_str()))
        .filter(|r| r.outcome == Outcome::Passed)
        .count();
    // The shared file holds dozens of binding printer cases; an empty run proves nothing.
    assert!(passed >= 50, "only {passed} printer cases ran");
}

#[test]
fn every_binding_case_passes() {
    let Some(report) = shared_report() else {
        return;
    };
    let failures = failure_text(&report, |_| true);
    assert!(
        failures.is_empty(),
        "{}\n{}",
        failures.join("\n"),
        report.summary_line()
    );
}

#[test]
fn non_binding_cases_are_skipped_not_run() {
    let Some(report) = shared_report() else {
        return;
    };
    assert!(report.skipped() > 0);
    assert!(
        report
            .results
            .iter()
            .filter(|r| r.name.ends_with("_quirk"))
            .all(|r| matches!(&r.outcome, Outcome::Skipped(why) if !why.is_empty()))
    );
    // Every skip says why, with the case's own note where it has one.
    assert!(report.results.iter().any(|r| matches!(
        &r.outcome,
        Outcome::Skipped(why) if why.contains("binding") && why.contains(": ")
    )));
}
