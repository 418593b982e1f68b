//! `report.html`: the whole report in one self-contained file — no scripts, no fonts,
//! nothing fetched — that a browser opens from disk: the summary table and its notes,
//! the SVG charts inline, a per-session table, the calls with the lowest retention
//! (recorded trace beside the prompt sent) and the run's provenance.

use crate::charts::Chart;
use crate::lowest_retention::CallView;
use crate::report::{
    Align, FormGroup, Report, Run, SessionDetail, Shown, cells, fmt, heading, notes, shown_columns,
};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Sessions shown in the per-session table; `sessions.csv` has all of them.
pub const MAX_SESSION_ROWS: usize = 500;
/// Characters of one side of a lowest-retention call; the rest is cut with a note.
const MAX_PANE_CHARS: usize = 30_000;

const STYLE: &str = "
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',sans-serif;margin:24px;color:#1b1f23;background:#fff}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 8px;border-bottom:1px solid #d0d7de;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}
.meta{color:#57606a;margin:0 0 12px}
.scroll{overflow-x:auto}
table{border-collapse:collapse;font-size:13px;font-variant-numeric:tabular-nums}
th,td{border:1px solid #d0d7de;padding:3px 6px;white-space:nowrap}
th{background:#f0f3f6;text-align:center}
td.num{text-align:right}td.text{text-align:left}
tbody tr:nth-child(even){background:#f8fafc}
ul.notes{color:#3d444d;padding-left:20px}
figure{margin:12px 0}figure svg{max-width:100%;height:auto;border:1px solid #e4e8ec}
figcaption{color:#57606a;font-size:13px}
.pair{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:12px}
.pair h4{margin:0 0 4px;font-size:13px;color:#57606a}
pre{background:#f6f8fa;border:1px solid #d0d7de;padding:8px;margin:0;overflow:auto;max-height:640px;font:12px/1.4 ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;word-break:break-word}
dl{display:grid;grid-template-columns:max-content 1fr;gap:2px 16px}dt{color:#57606a}dd{margin:0;word-break:break-all}
";

/// Text as HTML character data or a quoted attribute value.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!(
            "{}\n… ({} more characters; `recap inspect` shows everything)",
            &text[..i],
            text[i..].chars().count()
        ),
        None => text.to_string(),
    }
}

/// The whole document.
pub fn to_html(report: &Report, charts: &[Chart], calls: &[CallView]) -> String {
    let mut out = String::with_capacity(64 * 1024);
    let corpora = report.settings.corpus_paths();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>recap run — {}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
        escape(&corpora.join(", "))
    );
    out.push_str("<h1>recap run</h1>\n");
    let _ = writeln!(out, "<p class=\"meta\">{}</p>", escape(&meta_line(report)));
    summary(&mut out, report);
    charts_section(&mut out, charts);
    sessions(&mut out, report);
    lowest(&mut out, calls);
    provenance(&mut out, report);
    out.push_str("</body>\n</html>\n");
    out
}

fn meta_line(report: &Report) -> String {
    let corpora: Vec<String> = report
        .settings
        .corpora
        .iter()
        .map(|c| format!("{} {}", c.path, c.counts()))
        .collect();
    let mut line = format!("Corpora: {}", corpora.join(", "));
    if let Some(p) = &report.provenance {
        let _ = write!(line, " · recap {} ({})", p.recap_version, p.git_commit);
    }
    if let Some(t) = &report.non_deterministic {
        let _ = write!(line, " · run at {}", t.started_at);
    }
    line
}

/// A table and notes per session form, then the report's own notes.
fn summary(out: &mut String, report: &Report) {
    out.push_str("<section id=\"summary\">\n<h2>Summary</h2>\n");
    let columns: Vec<&Shown> = shown_columns().collect();
    let notes = notes(report);
    for (g, group) in report.groups.iter().enumerate() {
        let _ = write!(
            out,
            "<h3 id=\"summary-{}\">{}</h3>\n<div class=\"scroll\"><table class=\"summary\" data-form=\"{}\">\n<thead><tr>",
            escape(&group.form),
            escape(&heading(report, group)),
            escape(&group.form)
        );
        for c in &columns {
            let _ = write!(out, "<th>{}</th>", escape(c.header));
        }
        out.push_str("</tr></thead>\n<tbody>\n");
        let runs: Vec<&Run> = report.runs_of(group).collect();
        for row in cells(&runs, &columns) {
            out.push_str("<tr>");
            for (cell, c) in row.iter().zip(&columns) {
                let class = if c.align == Align::Left {
                    "text"
                } else {
                    "num"
                };
                let _ = write!(out, "<td class=\"{class}\">{}</td>", escape(cell));
            }
            out.push_str("</tr>\n");
        }
        out.push_str("</tbody>\n</table></div>\n");
        notes_list(out, notes.groups.get(g).map_or(&[][..], Vec::as_slice));
    }
    notes_list(out, &notes.general);
    out.push_str("</section>\n");
}

fn notes_list(out: &mut String, notes: &[String]) {
    if notes.is_empty() {
        return;
    }
    out.push_str("<ul class=\"notes\">\n");
    for n in notes {
        let _ = writeln!(out, "<li>{}</li>", escape(n));
    }
    out.push_str("</ul>\n");
}

fn charts_section(out: &mut String, charts: &[Chart]) {
    out.push_str("<section id=\"charts\">\n<h2>Charts</h2>\n");
    for c in charts {
        let svg = c.svg.trim_start();
        // An XML declaration is not allowed inside an HTML document.
        let svg = match svg.strip_prefix("<?xml") {
            Some(rest) => rest.split_once("?>").map_or(svg, |(_, s)| s.trim_start()),
            None => svg,
        };
        let _ = writeln!(
            out,
            "<figure>\n{svg}\n<figcaption>{}</figcaption>\n</figure>",
            escape(&c.file_name)
        );
    }
    out.push_str("</section>\n");
}

/// Per session form: sessions as rows, strategies (first tokenizer) as column pairs,
/// prompt tokens and retention.
fn sessions(out: &mut String, report: &Report) {
    out.push_str("<section id=\"sessions\">\n<h2>Sessions</h2>\n");
    let Some(tokenizer) = report.runs.first().map(|r| r.tokenizer.clone()) else {
        out.push_str("<p>No runs.</p>\n</section>\n");
        return;
    };
    if report.runs.iter().all(|r| r.session_details.is_empty()) {
        out.push_str("<p>Per-session records were left out of this run (<code>--no-session-details</code>).</p>\n</section>\n");
        return;
    }
    for group in &report.groups {
        let runs: Vec<&Run> = report
            .runs_of(group)
            .filter(|r| r.tokenizer == tokenizer)
            .collect();
        form_sessions(out, report, group, &runs, &tokenizer);
    }
    out.push_str("</section>\n");
}

/// The per-session table of one form.
fn form_sessions(
    out: &mut String,
    report: &Report,
    group: &FormGroup,
    runs: &[&Run],
    tokenizer: &str,
) {
    let corpus_order: BTreeMap<&str, usize> = report
        .settings
        .corpora
        .iter()
        .enumerate()
        .map(|(i, c)| (c.path.as_str(), i))
        .collect();
    // (corpus order, line) → (session id, calls); cells by (row key, run index).
    let mut rows: BTreeMap<(usize, usize), (&str, &str, usize)> = BTreeMap::new();
    let mut cells: BTreeMap<((usize, usize), usize), &SessionDetail> = BTreeMap::new();
    for (i, r) in runs.iter().enumerate() {
        for d in &r.session_details {
            let key = (
                corpus_order
                    .get(d.corpus.as_str())
                    .copied()
                    .unwrap_or(usize::MAX),
                d.line,
            );
            rows.entry(key)
                .or_insert((d.corpus.as_str(), d.session.as_str(), d.calls));
            cells.insert((key, i), d);
        }
    }
    let _ = writeln!(
        out,
        "<h3>{} sessions</h3>\n<p class=\"meta\">Prompt tokens ({}) and retention per session; {}{}. <code>sessions.csv</code> has every session, strategy and tokenizer.</p>",
        escape(fmt::form_title(&group.form)),
        escape(tokenizer),
        fmt::plural(rows.len() as u64, "session", "sessions"),
        if rows.len() > MAX_SESSION_ROWS {
            format!(", the first {MAX_SESSION_ROWS} shown")
        } else {
            String::new()
        }
    );
    let _ = write!(
        out,
        "<div class=\"scroll\"><table class=\"sessions\" data-form=\"{}\">\n<thead><tr><th rowspan=\"2\">session</th><th rowspan=\"2\">corpus:line</th><th rowspan=\"2\">calls</th>",
        escape(&group.form)
    );
    for r in runs {
        let _ = write!(out, "<th colspan=\"2\">{}</th>", escape(&fmt::strategy(r)));
    }
    out.push_str("</tr>\n<tr>");
    for _ in runs {
        out.push_str("<th>tokens</th><th>retention</th>");
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for (key, (corpus, session, calls)) in rows.iter().take(MAX_SESSION_ROWS) {
        let _ = write!(
            out,
            "<tr><td class=\"text\">{}</td><td class=\"text\">{}:{}</td><td class=\"num\">{}</td>",
            escape(session),
            escape(corpus),
            key.1,
            calls
        );
        for i in 0..runs.len() {
            let (tokens, retention) = match cells.get(&(*key, i)) {
                None => ("n/a".to_string(), "n/a".to_string()),
                Some(d) if !d.complete => ("error".to_string(), "-".to_string()),
                Some(d) => (
                    d.prompt_tokens_total.map_or("-".into(), fmt::int),
                    fmt::pct(d.retention),
                ),
            };
            let _ = write!(
                out,
                "<td class=\"num\">{}</td><td class=\"num\">{}</td>",
                escape(&tokens),
                escape(&retention)
            );
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
}

fn lowest(out: &mut String, calls: &[CallView]) {
    out.push_str("<section id=\"lowest-retention\">\n<h2>Calls with the lowest retention</h2>\n");
    if calls.is_empty() {
        out.push_str(
            "<p>No call of a compressing strategy had recorded facts to keep.</p>\n</section>\n",
        );
        return;
    }
    out.push_str("<p class=\"meta\">For each strategy, its call that kept the smallest share of the facts recorded before it: the recorded turn beside the prompt the strategy sent, as <code>recap inspect</code> shows them.</p>\n");
    for c in calls {
        let _ = writeln!(
            out,
            "<article class=\"call\">\n<h3>{} — session {} ({}:{}), call {}: {} of {} facts kept ({})</h3>",
            escape(&c.strategy),
            escape(&c.session),
            escape(&c.corpus),
            c.line,
            c.call + 1,
            c.retained,
            c.facts,
            fmt::pct(Some(c.retained as f64 / c.facts.max(1) as f64))
        );
        let _ = writeln!(
            out,
            "<div class=\"pair\">\n<div><h4>recorded trace</h4><pre class=\"trace\">{}</pre></div>\n<div><h4>prompt sent</h4><pre class=\"prompt\">{}</pre></div>\n</div>\n</article>",
            escape(&cut(&c.trace, MAX_PANE_CHARS)),
            escape(&cut(&c.prompt, MAX_PANE_CHARS))
        );
    }
    out.push_str("</section>\n");
}

fn provenance(out: &mut String, report: &Report) {
    out.push_str("<section id=\"provenance\">\n<h2>Provenance</h2>\n");
    let Some(p) = &report.provenance else {
        out.push_str("<p>Not recorded.</p>\n</section>\n");
        return;
    };
    let mut rows: Vec<(String, String)> = vec![
        (
            "recap".into(),
            format!("{} (commit {})", p.recap_version, p.git_commit),
        ),
        ("command line".into(), p.command_line.join(" ")),
    ];
    for s in &p.shards {
        rows.push((format!("shard {}", s.shard), s.command_line.join(" ")));
    }
    for c in &p.corpora {
        rows.push((
            "corpus".into(),
            format!("{} — {} bytes — sha256 {}", c.path, c.bytes, c.sha256),
        ));
    }
    for pl in &p.plugins {
        rows.push((
            "plugin".into(),
            format!(
                "{} {} — {} — sha256 {}",
                pl.name, pl.version, pl.path, pl.sha256
            ),
        ));
    }
    for t in &p.tokenizers {
        rows.push((
            "tokenizer".into(),
            format!(
                "{} — {} tokens — vocabulary sha256 {}",
                t.name, t.vocabulary_size, t.vocabulary_sha256
            ),
        ));
    }
    if let Some(t) = &report.non_deterministic {
        rows.push((
            "ran".into(),
            format!(
                "{} to {} ({:.1} s)",
                t.started_at, t.finished_at, t.elapsed_seconds
            ),
        ));
    }
    out.push_str("<dl>\n");
    for (k, v) in rows {
        let _ = writeln!(out, "<dt>{}</dt><dd>{}</dd>", escape(&k), escape(&v));
    }
    out.push_str("</dl>\n");
    if let Some(c) = &p.config {
        let _ = writeln!(
            out,
            "<h3>{}</h3>\n<pre class=\"config\">{}</pre>",
            escape(&c.path),
            escape(&c.content)
        );
    }
    out.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_library_report_without_provenance_or_session_records_is_still_a_document() {
        use scraper::{Html, Selector};
        let registry = recap_builtins::registry();
        let mut cfg = crate::config::RunConfig::new(
            vec![crate::config::StrategyEntry::new(
                registry.build("rolling-window:window=1").unwrap(),
            )],
            registry.build("full-history").unwrap(),
            vec![crate::tokenizer::Tokenizer::get(
                crate::tokenizer::Encoding::O200kBase,
                crate::tokenizer::Backend::Fast,
            )],
        )
        .unwrap();
        cfg.session_details = false;
        let sessions = recap_gen::handwritten::sessions().unwrap();
        let mut report = crate::engine::run_sessions(&cfg, "<hand>.jsonl", sessions).unwrap();
        report.runs[1].strategy = "<b>bold</b>".into();
        let charts = crate::charts::charts(&report).unwrap();
        let doc = Html::parse_document(&to_html(&report, &charts, &[]));
        assert!(doc.errors.is_empty(), "{:?}", doc.errors);
        let sel = |s: &str| Selector::parse(s).unwrap();
        assert_eq!(doc.select(&sel("#summary tbody tr")).count(), 2);
        assert_eq!(doc.select(&sel("#summary table[data-form=ptc]")).count(), 1);
        assert_eq!(
            doc.select(&sel("b")).count(),
            0,
            "names are text, not markup"
        );
        let text = |id: &str| -> String { doc.select(&sel(id)).next().unwrap().text().collect() };
        assert!(text("#sessions").contains("--no-session-details"));
        assert!(text("#lowest-retention").contains("No call"));
        assert!(text("#provenance").contains("Not recorded"));
        assert!(text("title").contains("<hand>.jsonl"));
    }

    #[test]
    fn text_cannot_become_markup() {
        assert_eq!(
            escape("<script>alert('x') & \"y\"</script>"),
            "&lt;script&gt;alert(&#39;x&#39;) &amp; &quot;y&quot;&lt;/script&gt;"
        );
    }

    #[test]
    fn long_panes_are_cut_on_a_character_boundary() {
        assert_eq!(cut("abc", 5), "abc");
        let c = cut("ééééé", 2);
        assert!(c.starts_with("éé\n…"), "{c}");
        assert!(c.contains("3 more characters"), "{c}");
    }
}
