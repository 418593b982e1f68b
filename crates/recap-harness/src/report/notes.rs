//! The notes under a report's table: what the numbers rest on (baseline, fidelity,
//! provider cache, not-applicable strategies) and the first violations, render errors
//! and rejections.

use super::{Report, fmt};

/// Notes under the table: implicit baseline, fidelity, examples, rejections.
pub(crate) fn notes(report: &Report) -> Vec<String> {
    let mut notes = Vec::new();
    if report.runs.iter().any(|r| r.implicit) {
        notes.push(format!(
            "* {}: the savings baseline, run although not asked for",
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
        "cached = share of prompt tokens in the common prefix with the previous call; eff. cost = uncached + {} × cached",
        report.settings.cache_read_ratio
    ));
    notes.push(determinism(report));
    for r in &report.runs {
        if let Some(f) = &r.replay_fidelity {
            notes.push(format!(
                "replay fidelity ({} {}): {} / recorded input tokens, median {:.3} (p10 {:.3}, p90 {:.3}, min {:.3}, max {:.3}) over {} calls",
                r.strategy, r.tokenizer, r.strategy, f.median, f.p10, f.p90, f.min, f.max, f.calls
            ));
        }
    }
    // The baseline sends everything the agent was shown; a fact it misses was recorded
    // but never shown (a recorded feedback that leaves a print out, say). Said where
    // the number is shown, so nobody reads it as a loss.
    for r in report
        .runs
        .iter()
        .filter(|r| r.strategy == report.settings.baseline)
        .take(1)
    {
        if let Some(kept) = r.retention.filter(|k| *k < 1.0) {
            notes.push(format!(
                "retention: {} keeps {:.1}% of the facts, since it sends exactly what the agent was shown; the other {} facts were recorded but not in what the agent saw (e.g. prints a recorded feedback leaves out)",
                r.strategy,
                kept * 100.0,
                r.retention_facts - r.retention_retained
            ));
        }
    }
    for r in &report.runs {
        if let Some(f) = &r.run_fidelity {
            notes.push(format!(
                "run-level fidelity ({} {}): full-history / recorded input tokens of whole runs, {} over {} session{} ({} vs {} tokens)",
                r.strategy,
                r.tokenizer,
                f.ratio.map_or("-".to_string(), |x| format!("{x:.3}")),
                f.sessions,
                if f.sessions == 1 { "" } else { "s" },
                fmt::int(f.full_history_tokens),
                fmt::int(f.recorded_tokens)
            ));
        }
        if let Some(c) = &r.provider_cache {
            notes.push(format!(
                "provider cache (recorded): {} of input tokens read from the provider's cache over {} calls; recap's cached share for {} {}: {}",
                fmt::pct(c.hit_rate),
                fmt::int(c.calls),
                r.strategy,
                r.tokenizer,
                fmt::pct(r.cache_hit_rate)
            ));
        }
    }
    // Not-applicable counts are the same for every tokenizer: say them once.
    let mut said = std::collections::BTreeSet::new();
    for r in &report.runs {
        if r.not_applicable > 0 && said.insert(r.strategy.clone()) {
            let plural = if r.not_applicable == 1 { "" } else { "s" };
            let no_figures = if r.sessions == 0 { " (no figures)" } else { "" };
            notes.push(match &r.scope {
                Some(scope) => format!(
                    "n/a: {} replays {scope} only; {} session{plural} without it not replayed{no_figures}",
                    r.strategy, r.not_applicable,
                ),
                None => format!(
                    "n/a: {} renders {} sessions only; {} session{plural} of another form not replayed{no_figures}",
                    r.strategy,
                    r.forms.join(" and "),
                    r.not_applicable,
                ),
            });
        }
    }
    // Violations and render errors are the same for every tokenizer: list them once.
    let mut seen = std::collections::BTreeSet::new();
    for r in &report.runs {
        if !seen.insert(r.strategy.clone()) {
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
                "render error: {} … {} failed calls in {} sessions",
                r.strategy, r.render_errors.count, r.render_errors.sessions
            ));
        }
    }
    for j in &report.rejected {
        notes.push(format!(
            "rejected: {}:{}{}: {}: {}",
            j.corpus,
            j.line,
            j.session
                .as_deref()
                .map(|s| format!(" (session {s})"))
                .unwrap_or_default(),
            j.field,
            j.message
        ));
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
