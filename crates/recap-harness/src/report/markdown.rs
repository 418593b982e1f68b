//! The markdown view: the summary table plus notes as a list.

use super::columns::{Align, Shown, cells, shown_columns};
use super::table::heading;
use super::{Report, Run, notes};

/// Text as a literal in a Markdown table cell or list item: a `|` would end the cell,
/// a line break the row, and `*`, `_`, `` ` `` or `\` could start emphasis or code
/// (`full-history*` marks the implicit baseline; a note starting with `* ` would
/// become a nested list).
fn cell(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '|' | '*' | '_' | '`' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' | '\r' => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// Every column, a section per session form with its table and notes, then the
/// report's own notes.
pub fn to_markdown(report: &Report) -> String {
    let columns: Vec<&Shown> = shown_columns().collect();
    let header: Vec<&str> = columns.iter().map(|c| c.header).collect();
    let mut out = String::from("# recap run\n\n");
    out.push_str("Corpora: ");
    let corpora: Vec<String> = report
        .settings
        .corpora
        .iter()
        .map(|c| format!("`{}` {}", c.path, c.counts()))
        .collect();
    out.push_str(&corpora.join(", "));
    out.push('\n');
    let align: Vec<&str> = columns
        .iter()
        .map(|c| match c.align {
            Align::Left => ":---",
            Align::Right => "---:",
        })
        .collect();
    let notes = notes(report);
    for (g, group) in report.groups.iter().enumerate() {
        out.push_str(&format!("\n## {}\n\n", cell(&heading(report, group))));
        out.push_str(&format!("| {} |\n", header.join(" | ")));
        out.push_str(&format!("| {} |\n", align.join(" | ")));
        let runs: Vec<&Run> = report.runs_of(group).collect();
        for row in cells(&runs, &columns) {
            let row: Vec<String> = row.iter().map(|c| cell(c)).collect();
            out.push_str(&format!("| {} |\n", row.join(" | ")));
        }
        if let Some(group_notes) = notes.groups.get(g).filter(|n| !n.is_empty()) {
            out.push('\n');
            for n in group_notes {
                out.push_str(&format!("- {}\n", cell(n)));
            }
        }
    }
    out.push('\n');
    for n in notes.general {
        out.push_str(&format!("- {}\n", cell(&n)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::cell;

    #[test]
    fn cells_are_literal_markdown() {
        assert_eq!(cell("full-history*"), "full-history\\*");
        assert_eq!(
            cell("* full-history: the baseline"),
            "\\* full-history: the baseline"
        );
        assert_eq!(cell("a|b"), "a\\|b");
        assert_eq!(
            cell("rolling-window:println_limit=2"),
            "rolling-window:println\\_limit=2"
        );
        assert_eq!(cell("`x` \\ y"), "\\`x\\` \\\\ y");
        assert_eq!(cell("two\nlines\r\n"), "two lines  ");
        assert_eq!(cell("naïve ✓"), "naïve ✓");
    }
}
