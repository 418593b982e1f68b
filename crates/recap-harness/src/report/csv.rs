//! The CSV view: one row per run, raw numbers (no units, no thousands separators).

use super::Report;

fn field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

pub const CSV_COLUMNS: [&str; 21] = [
    "strategy",
    "tokenizer",
    "implicit",
    "sweep",
    "sessions",
    "calls",
    "prompt_tokens_total",
    "prompt_tokens_peak",
    "savings_vs_full_history",
    "cached_tokens",
    "cache_hit_rate",
    "effective_cost",
    "retention",
    "retention_facts",
    "retention_retained",
    "invariant_violations",
    "render_errors",
    "render_error_sessions",
    "render_ns_median",
    "render_ns_p95",
    "replay_fidelity_median",
];

pub fn to_csv(report: &Report) -> String {
    let mut out = CSV_COLUMNS.join(",");
    out.push('\n');
    for r in &report.runs {
        let row = [
            field(&r.strategy),
            field(&r.tokenizer),
            r.implicit.to_string(),
            field(r.sweep.as_deref().unwrap_or("")),
            r.sessions.to_string(),
            r.calls.to_string(),
            r.prompt_tokens_total.to_string(),
            r.prompt_tokens_peak.to_string(),
            opt(r.savings_vs_full_history),
            r.cached_tokens.to_string(),
            opt(r.cache_hit_rate),
            r.effective_cost.to_string(),
            opt(r.retention),
            r.retention_facts.to_string(),
            r.retention_retained.to_string(),
            r.invariant_violations.count.to_string(),
            r.render_errors.count.to_string(),
            r.render_errors.sessions.to_string(),
            opt(r.render_ns_median),
            opt(r.render_ns_p95),
            opt(r.replay_fidelity.as_ref().map(|f| f.median)),
        ];
        out.push_str(&row.join(","));
        out.push('\n');
    }
    out
}
