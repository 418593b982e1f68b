//! Running cases and summarising the outcome.

use crate::cases::Case;
use crate::eval::evaluate;
use serde_json::Value as Json;
use std::fmt;

/// Why a case failed.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    /// No evaluator knows the case's function.
    NotImplemented(String),
    /// The input was unusable or evaluation failed.
    Error(String),
    /// Evaluation gave a different result.
    Mismatch { expected: Json, actual: Json },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Passed,
    /// Not evaluated, and why.
    Skipped(String),
    Failed(Failure),
}

#[derive(Debug, Clone, PartialEq)]
pub struct CaseResult {
    pub name: String,
    pub fn_name: String,
    pub outcome: Outcome,
}

/// All results, in file order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Report {
    pub results: Vec<CaseResult>,
}

/// Why a case is not evaluated: it records a quirk of the original implementation that
/// recap is not held to (SPEC 2), in the case's own words where it has them.
fn skip_reason(case: &Case) -> String {
    let why = if !case.binding {
        "non-binding (\"binding\": false)"
    } else {
        "a quirk of the original (name ends in _quirk)"
    };
    match &case.note {
        Some(note) => format!("{why}: {note}"),
        None => why.to_string(),
    }
}

/// Skips non-binding cases, evaluates the others and compares with `expected`.
pub fn run_case(case: &Case) -> Outcome {
    if !case.binding || case.name.ends_with("_quirk") {
        return Outcome::Skipped(skip_reason(case));
    }
    match evaluate(&case.fn_name, &case.input) {
        None => Outcome::Failed(Failure::NotImplemented(case.fn_name.clone())),
        Some(Err(reason)) => Outcome::Failed(Failure::Error(reason)),
        Some(Ok(actual)) if actual == case.expected => Outcome::Passed,
        Some(Ok(actual)) => Outcome::Failed(Failure::Mismatch {
            expected: case.expected.clone(),
            actual,
        }),
    }
}

pub fn run(cases: &[Case]) -> Report {
    Report {
        results: cases
            .iter()
            .map(|case| CaseResult {
                name: case.name.clone(),
                fn_name: case.fn_name.clone(),
                outcome: run_case(case),
            })
            .collect(),
    }
}

impl Report {
    fn count(&self, pred: impl Fn(&Outcome) -> bool) -> usize {
        self.results.iter().filter(|r| pred(&r.outcome)).count()
    }

    pub fn passed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Passed))
    }

    pub fn failed(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Failed(_)))
    }

    pub fn skipped(&self) -> usize {
        self.count(|o| matches!(o, Outcome::Skipped(_)))
    }

    pub fn failures(&self) -> impl Iterator<Item = (&CaseResult, &Failure)> {
        self.results.iter().filter_map(|r| match &r.outcome {
            Outcome::Failed(f) => Some((r, f)),
            _ => None,
        })
    }

    /// `N passed, M failed, K skipped`.
    pub fn summary_line(&self) -> String {
        format!(
            "{} passed, {} failed, {} skipped",
            self.passed(),
            self.failed(),
            self.skipped()
        )
    }
}

impl fmt::Display for CaseResult {
    /// `FAIL name (fn): reason` for failures, with expected and actual on their own
    /// lines; `PASS`/`SKIP` lines otherwise.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.outcome {
            Outcome::Passed => write!(f, "PASS {} ({})", self.name, self.fn_name),
            Outcome::Skipped(why) => write!(f, "SKIP {} ({}): {why}", self.name, self.fn_name),
            Outcome::Failed(failure) => {
                write!(f, "FAIL {} ({}): {failure}", self.name, self.fn_name)
            }
        }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::NotImplemented(fn_name) => write!(f, "not implemented: {fn_name}"),
            Failure::Error(reason) => write!(f, "{reason}"),
            Failure::Mismatch { expected, actual } => {
                write!(f, "result differs")?;
                if let Some(at) = first_difference(expected, actual) {
                    write!(f, " ({at})")?;
                }
                // JSON keeps every character visible (newlines, trailing spaces).
                write!(f, "\n  expected: {expected}\n  actual:   {actual}")
            }
        }
    }
}

/// Where two results first differ, for long texts: `text differs at line L, column C`
/// (1-based, in chars), looking inside `{text: ..}` objects and message contents too
/// only when both sides are plain strings or both have a string `text`.
fn first_difference(expected: &Json, actual: &Json) -> Option<String> {
    let (e, a) = match (expected, actual) {
        (Json::String(e), Json::String(a)) => (e.as_str(), a.as_str()),
        _ => match (expected.get("text"), actual.get("text")) {
            (Some(Json::String(e)), Some(Json::String(a))) => (e.as_str(), a.as_str()),
            _ => return None,
        },
    };
    let (mut line, mut col) = (1, 1);
    let mut a_chars = a.chars();
    for ec in e.chars() {
        match a_chars.next() {
            Some(ac) if ac == ec => {
                if ec == '\n' {
                    line += 1;
                    col = 1;
                } else {
                    col += 1;
                }
            }
            _ => return Some(format!("text differs at line {line}, column {col}")),
        }
    }
    a_chars
        .next()
        .map(|_| format!("text differs at line {line}, column {col}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cases::parse_cases;
    use serde_json::json;

    fn cases(text: &str) -> Vec<Case> {
        parse_cases(text, "t.json").unwrap()
    }

    #[test]
    fn counts_passes_failures_and_skips() {
        let report = run(&cases(
            r#"[
            {"name":"ok","fn":"type_of","input":{"value":[]},"expected":"list[0]"},
            {"name":"wrong","fn":"type_of","input":{"value":1},"expected":"float"},
            {"name":"nb","fn":"type_of","input":{"value":1},"expected":"x","binding":false},
            {"name":"q_quirk","fn":"type_of","input":{"value":1},"expected":"x"},
            {"name":"nope","fn":"no.such.fn","input":{},"expected":null},
            {"name":"bad","fn":"format.to_clojure","input":{"value":{"$x":1}},"expected":null}
        ]"#,
        ));
        assert_eq!(report.summary_line(), "1 passed, 3 failed, 2 skipped");
        let skips: Vec<String> = report
            .results
            .iter()
            .filter(|r| matches!(r.outcome, Outcome::Skipped(_)))
            .map(ToString::to_string)
            .collect();
        assert_eq!(
            skips,
            [
                "SKIP nb (type_of): non-binding (\"binding\": false)",
                "SKIP q_quirk (type_of): a quirk of the original (name ends in _quirk)"
            ]
        );
        let failures: Vec<String> = report.failures().map(|(r, _)| r.to_string()).collect();
        assert_eq!(
            failures[0],
            "FAIL wrong (type_of): result differs (text differs at line 1, column 1)\n  \
             expected: \"float\"\n  actual:   \"integer\""
        );
        assert_eq!(
            failures[1],
            "FAIL nope (no.such.fn): not implemented: no.such.fn"
        );
        assert!(
            failures[2]
                .starts_with("FAIL bad (format.to_clojure): input.value: at /$x: unknown tag"),
            "{}",
            failures[2]
        );
    }

    #[test]
    fn first_difference_finds_line_and_column() {
        let at = |e: &str, a: &str| first_difference(&json!(e), &json!(a));
        assert_eq!(
            at("ab\ncd", "ab\ncx"),
            Some("text differs at line 2, column 2".into())
        );
        assert_eq!(
            at("ab", "abc"),
            Some("text differs at line 1, column 3".into())
        );
        assert_eq!(
            at("abc", "ab"),
            Some("text differs at line 1, column 3".into())
        );
        assert_eq!(at("same", "same"), None);
        assert_eq!(
            first_difference(&json!({"text": "[1]"}), &json!({"text": "[2]"})),
            Some("text differs at line 1, column 2".into())
        );
        assert_eq!(first_difference(&json!(1), &json!(2)), None);
    }
}
