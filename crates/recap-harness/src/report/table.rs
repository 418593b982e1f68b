//! The aligned terminal table.

use super::columns::{Align, shown_columns, shown_rows};
use super::{Report, notes};

/// Column widths count characters, so `µs` and `…` do not skew alignment.
fn width(s: &str) -> usize {
    s.chars().count()
}

/// The summary table: text columns left-aligned, numbers right-aligned, then notes.
pub fn to_table(report: &Report) -> String {
    let header: Vec<&str> = shown_columns().map(|c| c.header).collect();
    let left: Vec<bool> = shown_columns().map(|c| c.align == Align::Left).collect();
    let rows = shown_rows(report);
    let mut widths: Vec<usize> = header.iter().map(|h| width(h)).collect();
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(width(cell));
        }
    }
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
    let mut out = line(header.clone());
    let rule: Vec<String> = widths.iter().map(|w| "-".repeat(*w)).collect();
    out.push_str(&line(rule.iter().map(String::as_str).collect()));
    for row in &rows {
        out.push_str(&line(row.iter().map(String::as_str).collect()));
    }
    let notes = notes(report);
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            out.push_str(&n);
            out.push('\n');
        }
    }
    out
}
