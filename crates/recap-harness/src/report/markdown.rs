//! The markdown view: the summary table plus notes as a list.

use super::{Report, notes, summary_rows};

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

pub fn to_markdown(report: &Report) -> String {
    let (header, rows) = summary_rows(report);
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
    let align: Vec<&str> = (0..header.len())
        .map(|i| if i < 2 { ":---" } else { "---:" })
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
