//! The columns of a run row, in one list: the CSV writes every column with its raw
//! value; the table and markdown views show the columns that have a human form.

use super::{Run, fmt};

/// How the table and markdown views align a column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Align {
    Left,
    Right,
}

/// A column as the table and markdown views show it.
pub(crate) struct Shown {
    pub header: &'static str,
    pub cell: fn(&Run) -> String,
    pub align: Align,
}

pub(crate) struct Column {
    /// The CSV header (the JSON field name where there is one).
    pub name: &'static str,
    /// The CSV value: raw numbers, no units, no thousands separators.
    pub raw: fn(&Run) -> String,
    /// `None` for columns only the CSV has.
    pub shown: Option<Shown>,
}

const fn csv_only(name: &'static str, raw: fn(&Run) -> String) -> Column {
    Column {
        name,
        raw,
        shown: None,
    }
}

const fn shown(
    name: &'static str,
    raw: fn(&Run) -> String,
    header: &'static str,
    cell: fn(&Run) -> String,
    align: Align,
) -> Column {
    Column {
        name,
        raw,
        shown: Some(Shown {
            header,
            cell,
            align,
        }),
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

pub(crate) const COLUMNS: [Column; 22] = [
    shown(
        "strategy",
        |r| r.strategy.clone(),
        "strategy",
        fmt::strategy,
        Align::Left,
    ),
    shown(
        "tokenizer",
        |r| r.tokenizer.clone(),
        "tokenizer",
        |r| r.tokenizer.clone(),
        Align::Left,
    ),
    csv_only("implicit", |r| r.implicit.to_string()),
    csv_only("sweep", |r| r.sweep.clone().unwrap_or_default()),
    shown(
        "sessions",
        |r| r.sessions.to_string(),
        "sessions",
        |r| fmt::int(r.sessions),
        Align::Right,
    ),
    shown(
        "not_applicable",
        |r| r.not_applicable.to_string(),
        "n/a",
        |r| fmt::int(r.not_applicable),
        Align::Right,
    ),
    shown(
        "calls",
        |r| r.calls.to_string(),
        "calls",
        |r| fmt::int(r.calls),
        Align::Right,
    ),
    shown(
        "prompt_tokens_total",
        |r| r.prompt_tokens_total.to_string(),
        "prompt tokens",
        |r| fmt::int(r.prompt_tokens_total),
        Align::Right,
    ),
    shown(
        "prompt_tokens_peak",
        |r| r.prompt_tokens_peak.to_string(),
        "peak",
        |r| fmt::int(r.prompt_tokens_peak),
        Align::Right,
    ),
    shown(
        "savings_vs_full_history",
        |r| opt(r.savings_vs_full_history),
        "savings",
        |r| fmt::pct(r.savings_vs_full_history),
        Align::Right,
    ),
    csv_only("cached_tokens", |r| r.cached_tokens.to_string()),
    shown(
        "cache_hit_rate",
        |r| opt(r.cache_hit_rate),
        "cached",
        |r| fmt::pct(r.cache_hit_rate),
        Align::Right,
    ),
    shown(
        "effective_cost",
        |r| r.effective_cost.to_string(),
        "eff. cost",
        |r| fmt::float_int(r.effective_cost),
        Align::Right,
    ),
    shown(
        "retention",
        |r| opt(r.retention),
        "retention",
        |r| fmt::pct(r.retention),
        Align::Right,
    ),
    csv_only("retention_facts", |r| r.retention_facts.to_string()),
    csv_only("retention_retained", |r| r.retention_retained.to_string()),
    shown(
        "invariant_violations",
        |r| r.invariant_violations.count.to_string(),
        "violations",
        |r| fmt::int(r.invariant_violations.count),
        Align::Right,
    ),
    shown(
        "render_errors",
        |r| r.render_errors.count.to_string(),
        "errors",
        |r| fmt::int(r.render_errors.count),
        Align::Right,
    ),
    csv_only("render_error_sessions", |r| {
        r.render_errors.sessions.to_string()
    }),
    shown(
        "render_ns_median",
        |r| opt(r.render_ns_median),
        "render p50",
        |r| fmt::ns(r.render_ns_median),
        Align::Right,
    ),
    shown(
        "render_ns_p95",
        |r| opt(r.render_ns_p95),
        "render p95",
        |r| fmt::ns(r.render_ns_p95),
        Align::Right,
    ),
    csv_only("replay_fidelity_median", |r| {
        opt(r.replay_fidelity.as_ref().map(|f| f.median))
    }),
];

/// The columns the table and markdown views show, in order.
pub(crate) fn shown_columns() -> impl Iterator<Item = &'static Shown> {
    COLUMNS.iter().filter_map(|c| c.shown.as_ref())
}

/// Columns that describe a row rather than measure it: a row with no applicable
/// session still shows them.
const DESCRIPTIVE: [&str; 4] = ["strategy", "tokenizer", "sessions", "n/a"];

/// The shown columns' cells of every run. A strategy that applied to no session has
/// no figures: its measured cells say `n/a` rather than a zero nobody measured.
pub(crate) fn shown_rows(report: &super::Report) -> Vec<Vec<String>> {
    report
        .runs
        .iter()
        .map(|r| {
            let no_figures = r.sessions == 0 && r.not_applicable > 0;
            shown_columns()
                .map(|c| {
                    if no_figures && !DESCRIPTIVE.contains(&c.header) {
                        "n/a".to_string()
                    } else {
                        (c.cell)(r)
                    }
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn column_names_are_unique_and_the_views_show_fifteen() {
        let mut names: Vec<&str> = COLUMNS.iter().map(|c| c.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), COLUMNS.len());
        let headers: Vec<&str> = shown_columns().map(|c| c.header).collect();
        assert_eq!(headers.len(), 15);
        assert_eq!(headers[..2], ["strategy", "tokenizer"]);
        assert!(shown_columns().skip(2).all(|c| c.align == Align::Right));
    }

    #[test]
    fn human_numbers() {
        assert_eq!(fmt::int(1234567), "1,234,567");
        assert_eq!(fmt::int(999), "999");
        assert_eq!(fmt::pct(Some(0.8057)), "80.6%");
        assert_eq!(fmt::pct(None), "-");
        assert_eq!(fmt::ns(Some(1_500)), "1.5µs");
        assert_eq!(fmt::float_int(402055.4), "402,055");
    }
}
