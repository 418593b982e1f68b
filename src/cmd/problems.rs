//! The problems of a run, summarised for stderr whatever the report's format: rejected
//! corpus lines, render errors and invariant violations, each kind once with a count
//! and its first occurrence, so a corpus with 500 bad lines or a plugin failing every
//! call says so in a few lines, and a `--format csv` run is not silent about them.

use recap_harness::report::fmt::{self, form_title};
use recap_harness::report::{Rejected, Report, Run};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One kind of rejection: the field, and the message up to its details.
fn rejection_kind(r: &Rejected) -> String {
    let head = r
        .message
        .split([':', '"'])
        .next()
        .unwrap_or_default()
        .trim();
    let head: String = without_numbers(head).chars().take(80).collect();
    format!("{}: {head}", normalise_field(&r.field))
}

/// `integer 9 is out of the i64 range` → `integer N is out of the i64 range`: numbers
/// standing alone are details; digits inside a word (`i64`) are not.
fn without_numbers(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < chars.len() {
        let starts_word = i == 0 || !chars[i - 1].is_alphanumeric();
        if chars[i].is_ascii_digit() && starts_word {
            let end = (i..chars.len())
                .find(|&j| !chars[j].is_ascii_digit())
                .unwrap_or(chars.len());
            if end == chars.len() || !chars[end].is_alphanumeric() {
                out.push('N');
                i = end;
                continue;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    out
}

/// `turns[3].result` and `turns[0].result` are one kind of problem.
fn normalise_field(field: &str) -> String {
    let mut out = String::with_capacity(field.len());
    let mut in_index = false;
    for c in field.chars() {
        match c {
            '[' => {
                in_index = true;
                out.push_str("[…");
            }
            ']' => {
                in_index = false;
                out.push(']');
            }
            c if in_index && c.is_ascii_digit() => {}
            c => out.push(c),
        }
    }
    out
}

fn where_(r: &Rejected) -> String {
    match &r.session {
        Some(s) => format!("{}:{} (session {s})", r.corpus, r.line),
        None => format!("{}:{}", r.corpus, r.line),
    }
}

/// The rejected lines, one line per kind (most frequent first, then by name).
pub fn rejections(rejected: &[Rejected]) -> Vec<String> {
    if rejected.is_empty() {
        return Vec::new();
    }
    let mut kinds: BTreeMap<String, (usize, &Rejected)> = BTreeMap::new();
    for r in rejected {
        kinds.entry(rejection_kind(r)).or_insert((0, r)).0 += 1;
    }
    let mut kinds: Vec<(String, (usize, &Rejected))> = kinds.into_iter().collect();
    kinds.sort_by(|a, b| b.1.0.cmp(&a.1.0).then_with(|| a.0.cmp(&b.0)));
    let width = kinds[0].1.0.to_string().len();
    let mut lines = vec![format!(
        "{} corpus line{} rejected, not replayed:",
        rejected.len(),
        if rejected.len() == 1 { "" } else { "s" }
    )];
    for (kind, (count, first)) in kinds {
        lines.push(if count == 1 {
            // Alone of its kind: the rejection itself says it best.
            format!(
                "  {count:>width$} × {}: {}: {}",
                where_(first),
                recap_core::fields::describe_field(&first.field),
                first.message
            )
        } else {
            format!(
                "  {count:>width$} × {kind} (first: {}: {})",
                where_(first),
                first.message
            )
        });
    }
    lines
}

/// Render errors and violations, one line per strategy and session form (the same for
/// every tokenizer).
pub fn strategy_problems(report: &Report) -> Vec<String> {
    let mut lines = Vec::new();
    for group in &report.groups {
        let mut seen = std::collections::BTreeSet::new();
        for run in report.runs_of(group) {
            if !seen.insert(run.strategy.as_str()) {
                continue;
            }
            // Which form's sessions, when the report has more than one.
            let name = if report.groups.len() > 1 {
                format!("{} ({} sessions)", run.strategy, form_title(&group.form))
            } else {
                run.strategy.clone()
            };
            if let Some(line) = render_errors(&name, run, group.sessions) {
                lines.push(line);
            }
            if run.invariant_violations.count > 0 {
                let by: Vec<String> = run
                    .invariant_violations
                    .by_invariant
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect();
                lines.push(format!(
                    "{name}: {} ({})",
                    plural(run.invariant_violations.count, "invariant violation"),
                    by.join(", ")
                ));
            }
        }
    }
    lines
}

/// `1 call`, `2 calls`.
fn plural(n: u64, one: &str) -> String {
    fmt::plural(n, one, &format!("{one}s"))
}

fn render_errors(name: &str, run: &Run, total_sessions: u64) -> Option<String> {
    let e = &run.render_errors;
    let first = e.examples.first()?;
    let kinds = e
        .by_kind
        .iter()
        .map(|(k, n)| format!("{k}: {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut line = format!(
        "{name}: {} failed to render in {} of {} ({kinds}); first: {} session {} call {}: {}",
        plural(e.count, "call"),
        e.sessions,
        plural(total_sessions, "session"),
        first.corpus,
        first.session,
        first.call,
        first.message
    );
    if run.sessions < total_sessions {
        let _ = write!(
            line,
            "; its row counts the {} it rendered completely",
            plural(run.sessions, "session")
        );
    }
    Some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(line: usize, field: &str, message: &str) -> Rejected {
        Rejected {
            corpus: "c.jsonl".into(),
            line,
            session: None,
            field: field.into(),
            message: message.into(),
        }
    }

    #[test]
    fn rejections_are_counted_per_kind_with_the_first_of_each() {
        let mut list: Vec<Rejected> = (1..=300)
            .map(|i| {
                rejected(
                    i,
                    "json",
                    &format!("malformed JSON: expected value at line 1 column {i}"),
                )
            })
            .collect();
        list.push(rejected(
            400,
            "turns[3].result",
            "integer 99999999999999999999 is out of the i64 range",
        ));
        list.push(rejected(
            401,
            "turns[0].result",
            "integer 18446744073709551615 is out of the i64 range",
        ));
        let lines = rejections(&list);
        assert_eq!(
            lines,
            [
                "302 corpus lines rejected, not replayed:",
                "  300 × json: malformed JSON (first: c.jsonl:1: malformed JSON: expected value at line 1 column 1)",
                "    2 × turns[…].result: integer N is out of the i64 range (first: c.jsonl:400: integer 99999999999999999999 is out of the i64 range)",
            ]
        );
    }

    #[test]
    fn a_rejection_alone_of_its_kind_is_shown_as_it_is() {
        let mut one = rejected(3, "mission", "required field is missing");
        one.session = Some("x".into());
        assert_eq!(
            rejections(&[one]),
            [
                "1 corpus line rejected, not replayed:",
                "  1 × c.jsonl:3 (session x): mission: required field is missing",
            ]
        );
    }

    #[test]
    fn no_rejection_says_nothing() {
        assert!(rejections(&[]).is_empty());
    }
}
