//! The markdown view: the summary table plus notes as a list.

use super::columns::{Align, shown_columns, shown_rows};
use super::{Report, notes};

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

pub fn to_markdown(report: &Report) -> String {
    let header: Vec<&str> = shown_columns().map(|c| c.header).collect();
    let rows = shown_rows(report);
    let mut out = String::from("# recap run\n\n");
    out.push_str("Corpora: ");
    let corpora: Vec<String> = report
        .settings
        .corpora
        .iter()
        .map(|c| {
            format!(
                "`{}` ({} sessions, {} rejected)",
                c.path, c.sessions, c.rejected
            )
        })
        .collect();
    out.push_str(&corpora.join(", "));
    out.push_str("\n\n");
    out.push_str(&format!("| {} |\n", header.join(" | ")));
    let align: Vec<&str> = shown_columns()
        .map(|c| match c.align {
            Align::Left => ":---",
            Align::Right => "---:",
        })
        .collect();
    out.push_str(&format!("| {} |\n", align.join(" | ")));
    for row in rows {
        let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    let notes = notes(report);
    if !notes.is_empty() {
        out.push('\n');
        for n in notes {
            out.push_str(&format!("- {}\n", cell(&n)));
        }
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
