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
    /// Its name in `--columns`.
    pub key: &'static str,
    pub header: &'static str,
    pub cell: fn(&Run) -> String,
    pub align: Align,
    /// When a table is too wide for its terminal, columns are left out from rank 1
    /// up; `None`: never left out.
    pub drop_rank: Option<u8>,
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

/// How a column is shown: `(key, header, cell, align, drop_rank)`.
type View = (
    &'static str,
    &'static str,
    fn(&Run) -> String,
    Align,
    Option<u8>,
);

const fn shown(name: &'static str, raw: fn(&Run) -> String, view: View) -> Column {
    let (key, header, cell, align, drop_rank) = view;
    Column {
        name,
        raw,
        shown: Some(Shown {
            key,
            header,
            cell,
            align,
            drop_rank,
        }),
    }
}

fn opt<T: ToString>(v: Option<T>) -> String {
    v.map(|v| v.to_string()).unwrap_or_default()
}

pub(crate) const COLUMNS: [Column; 23] = [
    csv_only("form", |r| r.form.clone()),
    shown(
        "strategy",
        |r| r.strategy.clone(),
        ("strategy", "strategy", fmt::strategy, Align::Left, None),
    ),
    shown(
        "tokenizer",
        |r| r.tokenizer.clone(),
        (
            "tokenizer",
            "tokenizer",
            |r| r.tokenizer.clone(),
            Align::Left,
            None,
        ),
    ),
    csv_only("implicit", |r| r.implicit.to_string()),
    csv_only("sweep", |r| r.sweep.clone().unwrap_or_default()),
    shown(
        "sessions",
        |r| r.sessions.to_string(),
        (
            "sessions",
            "sessions",
            |r| fmt::int(r.sessions),
            Align::Right,
            None,
        ),
    ),
    shown(
        "not_applicable",
        |r| r.not_applicable.to_string(),
        (
            "n/a",
            "n/a",
            |r| fmt::int(r.not_applicable),
            Align::Right,
            None,
        ),
    ),
    shown(
        "calls",
        |r| r.calls.to_string(),
        (
            "calls",
            "calls",
            |r| fmt::int(r.calls),
            Align::Right,
            Some(4),
        ),
    ),
    shown(
        "prompt_tokens_total",
        |r| r.prompt_tokens_total.to_string(),
        (
            "tokens",
            "tokens",
            |r| fmt::int(r.prompt_tokens_total),
            Align::Right,
            None,
        ),
    ),
    shown(
        "prompt_tokens_peak",
        |r| r.prompt_tokens_peak.to_string(),
        (
            "peak",
            "peak",
            |r| fmt::int(r.prompt_tokens_peak),
            Align::Right,
            Some(2),
        ),
    ),
    shown(
        "savings_vs_full_history",
        |r| opt(r.savings_vs_full_history),
        (
            "savings",
            "savings",
            |r| fmt::pct(r.savings_vs_full_history),
            Align::Right,
            None,
        ),
    ),
    csv_only("cached_tokens", |r| r.cached_tokens.to_string()),
    shown(
        "cache_hit_rate",
        |r| opt(r.cache_hit_rate),
        (
            "cached",
            "cached",
            |r| fmt::pct(r.cache_hit_rate),
            Align::Right,
            Some(6),
        ),
    ),
    shown(
        "effective_cost",
        |r| r.effective_cost.to_string(),
        (
            "cost",
            "eff. cost",
            |r| fmt::float_int(r.effective_cost),
            Align::Right,
            Some(3),
        ),
    ),
    shown(
        "retention",
        |r| opt(r.retention),
        (
            "retention",
            "retention",
            |r| fmt::pct(r.retention),
            Align::Right,
            None,
        ),
    ),
    csv_only("retention_facts", |r| r.retention_facts.to_string()),
    csv_only("retention_retained", |r| r.retention_retained.to_string()),
    shown(
        "invariant_violations",
        |r| r.invariant_violations.count.to_string(),
        (
            "violations",
            "violations",
            |r| fmt::int(r.invariant_violations.count),
            Align::Right,
            Some(8),
        ),
    ),
    shown(
        "render_errors",
        |r| r.render_errors.count.to_string(),
        (
            "errors",
            "errors",
            |r| fmt::int(r.render_errors.count),
            Align::Right,
            Some(7),
        ),
    ),
    csv_only("render_error_sessions", |r| {
        r.render_errors.sessions.to_string()
    }),
    shown(
        "render_ns_median",
        |r| opt(r.render_ns_median),
        (
            "p50",
            "render p50",
            |r| fmt::ns(r.render_ns_median),
            Align::Right,
            Some(5),
        ),
    ),
    shown(
        "render_ns_p95",
        |r| opt(r.render_ns_p95),
        (
            "p95",
            "render p95",
            |r| fmt::ns(r.render_ns_p95),
            Align::Right,
            Some(1),
        ),
    ),
    csv_only("replay_fidelity_median", |r| {
        opt(r.replay_fidelity.as_ref().map(|f| f.median))
    }),
];

/// The columns the table and markdown views show, in order.
pub(crate) fn shown_columns() -> impl Iterator<Item = &'static Shown> {
    COLUMNS.iter().filter_map(|c| c.shown.as_ref())
}

/// The names `--columns` takes, in table order.
pub fn column_keys() -> Vec<&'static str> {
    shown_columns().map(|c| c.key).collect()
}

/// A `--columns` list (`strategy,tokens,savings`, or `all`): the keys in table order,
/// `strategy` always among them. An unknown name is an error naming the known ones.
pub fn parse_columns(list: &str) -> Result<Vec<&'static str>, String> {
    let keys = column_keys();
    if list.trim() == "all" {
        return Ok(keys);
    }
    let mut asked = vec!["strategy"];
    for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        match keys.iter().find(|k| **k == name) {
            Some(k) => asked.push(k),
            None => {
                let near = recap_core::fields::nearest(name, &keys)
                    .map(|k| format!("did you mean `{k}`? "))
                    .unwrap_or_default();
                return Err(format!(
                    "unknown column {name:?}; {near}columns: {}, or `all`",
                    keys.join(", ")
                ));
            }
        }
    }
    Ok(keys.into_iter().filter(|k| asked.contains(k)).collect())
}

/// Columns that describe a row rather than measure it.
const DESCRIPTIVE: [&str; 4] = ["strategy", "tokenizer", "sessions", "n/a"];
/// Measured over every call tried, not only the sessions rendered completely.
const OVER_ALL_CALLS: [&str; 4] = ["violations", "errors", "p50", "p95"];

/// The cells of `runs` in `columns`. A row whose every session failed to render has
/// no token figures: its token cells say `-` rather than a zero nobody measured.
pub(crate) fn cells(runs: &[&Run], columns: &[&Shown]) -> Vec<Vec<String>> {
    runs.iter()
        .map(|r| {
            columns
                .iter()
                .map(|c| {
                    let measured =
                        !DESCRIPTIVE.contains(&c.key) && !OVER_ALL_CALLS.contains(&c.key);
                    if r.sessions == 0 && measured {
                        "-".to_string()
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
        let mut keys = column_keys();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), 15);
        let mut ranks: Vec<u8> = shown_columns().filter_map(|c| c.drop_rank).collect();
        ranks.sort_unstable();
        assert_eq!(ranks, (1..=8).collect::<Vec<u8>>(), "one column per rank");
    }

    #[test]
    fn columns_are_chosen_by_name_in_table_order_with_the_strategy_first() {
        assert_eq!(
            parse_columns("savings, tokens").unwrap(),
            ["strategy", "tokens", "savings"]
        );
        assert_eq!(parse_columns("all").unwrap(), column_keys());
        let e = parse_columns("tokens,retension").unwrap_err();
        assert!(e.contains("unknown column \"retension\""), "{e}");
        assert!(e.contains("did you mean `retention`?"), "{e}");
        assert!(e.contains("p95, or `all`"), "{e}");
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
