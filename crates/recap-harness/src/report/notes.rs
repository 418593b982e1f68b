//! The notes under a report's tables: for each session form, what its rows rest on
//! (fidelity, provider cache, retention of the baseline, strategies without a row, the
//! first violations and render errors); then what holds for the whole report (the
//! implicit baseline, column definitions, rejections).

use super::{FormGroup, Report, Run, fmt};
use std::collections::BTreeSet;

/// The notes of a report: one list per entry of `report.groups`, then the general ones.
pub(crate) struct Notes {
    pub groups: Vec<Vec<String>>,
    pub general: Vec<String>,
}

pub(crate) fn notes(report: &Report) -> Notes {
    Notes {
        groups: report
            .groups
            .iter()
            .map(|g| group_notes(report, g))
            .collect(),
        general: general_notes(report),
    }
}

fn general_notes(report: &Report) -> Vec<String> {
    let mut notes = Vec::new();
    if report.runs.iter().any(|r| r.implicit) {
        notes.push(format!(
            "* {}: the savings baseline of each form, run although not asked for",
            report.settings.baseline
        ));
    }
    for f in report.provenance.iter().flat_map(|p| &p.plugin_failures) {
        notes.push(format!(
            "plugin not loaded (--keep-going): {}: {}",
            f.path, f.error
        ));
    }
    notes.push(format!(
        "tokens = prompt tokens over all calls; savings against {} over the same sessions; cached = share of prompt tokens in the common prefix with the previous call; eff. cost = uncached + {} × cached",
        report.settings.baseline, report.settings.cache_read_ratio
    ));
    notes.push(determinism(report));
    for j in &report.rejected {
        notes.push(format!(
            "rejected: {}:{}{}: {}: {}",
            j.corpus,
            j.line,
            j.session
                .as_deref()
                .map(|s| format!(" (session {s})"))
                .unwrap_or_default(),
            recap_core::fields::describe_field(&j.field),
            j.message
        ));
    }
    notes
}

fn group_notes(report: &Report, group: &FormGroup) -> Vec<String> {
    let runs: Vec<&Run> = report.runs_of(group).collect();
    let mut notes = Vec::new();
    for r in &runs {
        if let Some(f) = &r.replay_fidelity {
            notes.push(format!(
                "replay fidelity ({} {}): {} / recorded input tokens, median {:.3} (p10 {:.3}, p90 {:.3}, min {:.3}, max {:.3}) over {}",
                r.strategy,
                r.tokenizer,
                r.strategy,
                f.median,
                f.p10,
                f.p90,
                f.min,
                f.max,
                fmt::plural(f.calls, "call", "calls")
            ));
        }
    }
    // The baseline sends everything the agent was shown; a fact it misses was recorded
    // but never shown (a recorded feedback that leaves a print out, say). Said where
    // the number is shown, so nobody reads it as a loss.
    if let Some(r) = runs.iter().find(|r| r.strategy == report.settings.baseline)
        && let Some(kept) = r.retention.filter(|k| *k < 1.0)
    {
        notes.push(format!(
            "retention: {} keeps {:.1}% of the facts, since it sends exactly what the agent was shown; the other {} were recorded but not in what the agent saw (e.g. prints a recorded feedback leaves out)",
            r.strategy,
            kept * 100.0,
            fmt::plural(r.retention_facts - r.retention_retained, "fact", "facts")
        ));
    }
    for r in &runs {
        if let Some(f) = &r.run_fidelity {
            notes.push(format!(
                "run-level fidelity ({} {}): full-history / recorded input tokens of whole runs, {} over {} ({} vs {} tokens)",
                r.strategy,
                r.tokenizer,
                f.ratio.map_or("-".to_string(), |x| format!("{x:.3}")),
                fmt::plural(f.sessions, "session", "sessions"),
                fmt::int(f.full_history_tokens),
                fmt::int(f.recorded_tokens)
            ));
        }
        if let Some(c) = &r.provider_cache {
            notes.push(format!(
                "provider cache (recorded): {} of input tokens read from the provider's cache over {}; recap's cached share for {} {}: {}",
                fmt::pct(c.hit_rate),
                fmt::plural(c.calls, "call", "calls"),
                r.strategy,
                r.tokenizer,
                fmt::pct(r.cache_hit_rate)
            ));
        }
    }
    // Not-applicable counts are the same for every tokenizer: say them once.
    let mut said = BTreeSet::new();
    for r in &runs {
        if r.not_applicable > 0 && said.insert(r.strategy.as_str()) {
            notes.push(format!(
                "n/a: {} replays {} only; {} without it not replayed",
                r.strategy,
                r.scope.as_deref().unwrap_or("some sessions"),
                fmt::plural(r.not_applicable, "session", "sessions"),
            ));
        }
    }
    notes.extend(not_replayed(group));
    notes.extend(problems(&runs));
    notes
}

/// One note per reason for the strategies without a row in the group.
fn not_replayed(group: &FormGroup) -> Vec<String> {
    // Reason → names, in the order the strategies were asked for.
    let mut reasons: Vec<((String, String), Vec<&str>)> = Vec::new();
    for n in &group.not_replayed {
        let why = match &n.scope {
            Some(scope) if n.forms.contains(&group.form) => (
                format!("it replays {scope} only, and none of these sessions is one"),
                format!("they replay {scope} only, and none of these sessions is one"),
            ),
            _ => {
                let forms = n
                    .forms
                    .iter()
                    .map(|f| fmt::form_title(f))
                    .collect::<Vec<_>>()
                    .join(" and ");
                (
                    format!("it renders {forms} sessions only"),
                    format!("they render {forms} sessions only"),
                )
            }
        };
        match reasons.iter_mut().find(|(w, _)| *w == why) {
            Some((_, names)) => names.push(&n.strategy),
            None => reasons.push((why, vec![&n.strategy])),
        }
    }
    reasons
        .into_iter()
        .map(|((one, many), names)| {
            let why = if names.len() == 1 { one } else { many };
            format!("no row for {} ({why})", names.join(", "))
        })
        .collect()
}

/// The first violations and render errors of the group's rows; the same for every
/// tokenizer, so listed once per strategy.
fn problems(runs: &[&Run]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut seen = BTreeSet::new();
    for r in runs {
        if !seen.insert(r.strategy.as_str()) {
            continue;
        }
        for v in &r.invariant_violations.examples {
            notes.push(format!(
                "violation: {} {} session {} call {}: {}: {}",
                r.strategy, v.corpus, v.session, v.call, v.invariant, v.detail
            ));
        }
        if r.invariant_violations.count > r.invariant_violations.examples.len() as u64 {
            notes.push(format!(
                "violation: {} … {} in all ({})",
                r.strategy,
                r.invariant_violations.count,
                r.invariant_violations
                    .by_invariant
                    .iter()
                    .map(|(k, v)| format!("{k}: {v}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        for e in &r.render_errors.examples {
            notes.push(format!(
                "render error: {} {} session {} call {}: {}: {}",
                r.strategy, e.corpus, e.session, e.call, e.kind, e.message
            ));
        }
        if r.render_errors.count > r.render_errors.examples.len() as u64 {
            notes.push(format!(
                "render error: {} … {} in {}",
                r.strategy,
                fmt::plural(r.render_errors.count, "failed call", "failed calls"),
                fmt::plural(r.render_errors.sessions, "session", "sessions")
            ));
        }
    }
    notes
}

/// Which strategies had every call rendered twice and compared (SPEC 7.6).
fn determinism(report: &Report) -> String {
    let mut checked: Vec<&str> = Vec::new();
    for r in report.runs.iter().filter(|r| r.determinism_checked) {
        if !checked.contains(&r.strategy.as_str()) {
            checked.push(&r.strategy);
        }
    }
    let runs = report.runs.len();
    let all = report.runs.iter().filter(|r| r.determinism_checked).count();
    if checked.is_empty() {
        "determinism: not checked in this run (built-ins, proven by their tests; --check-determinism all renders every call twice and compares)".to_string()
    } else if all == runs {
        "determinism: every call of every strategy rendered twice and compared".to_string()
    } else {
        format!(
            "determinism: every call rendered twice and compared for {}",
            checked.join(", ")
        )
    }
}
