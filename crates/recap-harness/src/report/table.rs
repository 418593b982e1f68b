//! The aligned terminal table: one block per session form, each with its own rows and
//! notes, then the notes that hold for the whole report. It fits a given width by
//! leaving out the least needed columns, and says which.

use super::columns::{Align, Shown, cells, shown_columns};
use super::{Report, Run, fmt, notes};

/// The width the table fits when nothing says otherwise (a file, a pipe without a
/// terminal): the full table is 140–190 characters wide.
pub const DEFAULT_WIDTH: usize = 120;

/// Which columns the table shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Columns {
    /// As many as fit in this many characters: columns that say nothing here (one
    /// tokenizer, no `n/a`) are left out, then by their drop rank.
    Fit(usize),
    /// Exactly these (keys of `--columns`), however wide.
    Only(Vec<&'static str>),
}

impl Default for Columns {
    fn default() -> Self {
        Columns::Fit(DEFAULT_WIDTH)
    }
}

/// Column widths count characters, so `µs` and `…` do not skew alignment.
fn width(s: &str) -> usize {
    s.chars().count()
}

/// The summary table at [`DEFAULT_WIDTH`].
pub fn to_table(report: &Report) -> String {
    to_table_with(report, &Columns::default())
}

/// The columns to show, and those a [`Columns::Fit`] left out to fit.
fn choose(report: &Report, columns: &Columns) -> (Vec<&'static Shown>, Vec<&'static Shown>) {
    let budget = match columns {
        Columns::Only(keys) => {
            return (
                shown_columns().filter(|c| keys.contains(&c.key)).collect(),
                Vec::new(),
            );
        }
        Columns::Fit(budget) => *budget,
    };
    let one_tokenizer = report
        .runs
        .iter()
        .all(|r| Some(&r.tokenizer) == report.runs.first().map(|f| &f.tokenizer));
    let no_na = report.runs.iter().all(|r| r.not_applicable == 0);
    let mut shown: Vec<&'static Shown> = shown_columns()
        .filter(|c| {
            let says_nothing = (c.key == "tokenizer" && one_tokenizer) || (c.key == "n/a" && no_na);
            !says_nothing
        })
        .collect();
    let runs: Vec<&Run> = report.runs.iter().collect();
    let mut left_out = Vec::new();
    loop {
        let widths = widths(&shown, &cells(&runs, &shown));
        let total: usize = widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1);
        if total <= budget {
            break;
        }
        let Some(next) = shown
            .iter()
            .enumerate()
            .filter_map(|(i, c)| c.drop_rank.map(|r| (r, i)))
            .min()
        else {
            break;
        };
        left_out.push(shown.remove(next.1));
    }
    (shown, left_out)
}

fn widths(columns: &[&Shown], rows: &[Vec<String>]) -> Vec<usize> {
    let mut widths: Vec<usize> = columns.iter().map(|c| width(c.header)).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
    widths
}

/// The table with a choice of columns: a block per form (heading, rows, notes), then
/// the report's own notes.
pub fn to_table_with(report: &Report, columns: &Columns) -> String {
    let (shown, left_out) = choose(report, columns);
    let all: Vec<&Run> = report.runs.iter().collect();
    // One set of widths for every block, so that the blocks line up.
    let widths = widths(&shown, &cells(&all, &shown));
    let left: Vec<bool> = shown.iter().map(|c| c.align == Align::Left).collect();
    let line = |cells: Vec<&str>| {
        let mut out = String::new();
        for (i, (cell, w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            let pad = " ".repeat(w - width(cell));
            if left[i] {
                out.push_str(cell);
                if i + 1 < cells.len() {
                    out.push_str(&pad);
                }
            } else {
                out.push_str(&pad);
                out.push_str(cell);
            }
        }
        out.push('\n');
        out
    };
    let header: Vec<&str> = shown.iter().map(|c| c.header).collect();
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    let notes = notes(report);
    let mut out = String::new();
    for (g, group) in report.groups.iter().enumerate() {
        if g > 0 {
            out.push('\n');
        }
        out.push_str(&heading(report, group));
        out.push('\n');
        out.push_str(&line(header.clone()));
        out.push_str(&line(rule.iter().map(String::as_str).collect()));
        let runs: Vec<&Run> = report.runs_of(group).collect();
        for row in cells(&runs, &shown) {
            out.push_str(&line(row.iter().map(String::as_str).collect()));
        }
        if let Some(group_notes) = notes.groups.get(g).filter(|n| !n.is_empty()) {
            out.push('\n');
            for n in group_notes {
                out.push_str(n);
                out.push('\n');
            }
        }
    }
    out.push('\n');
    if !left_out.is_empty() {
        let names: Vec<&str> = left_out.iter().map(|c| c.header).collect();
        out.push_str(&format!(
            "columns left out to fit {} characters: {} (`recap run --columns all` shows every column; report.csv and report.md have them all)\n",
            match columns {
                Columns::Fit(w) => *w,
                Columns::Only(_) => 0,
            },
            names.join(", ")
        ));
    }
    for n in notes.general {
        out.push_str(&n);
        out.push('\n');
    }
    out
}

/// `PTC-Lisp sessions: 37 (o200k_base)`: the form, its sessions, and the tokenizer when
/// the report has one only (its column is then left out).
pub(crate) fn heading(report: &Report, group: &super::FormGroup) -> String {
    let mut tokenizers: Vec<&str> = Vec::new();
    for r in report.runs_of(group) {
        if !tokenizers.contains(&r.tokenizer.as_str()) {
            tokenizers.push(&r.tokenizer);
        }
    }
    format!(
        "{} sessions: {} ({})",
        fmt::form_title(&group.form),
        fmt::int(group.sessions),
        tokenizers.join(", ")
    )
}
