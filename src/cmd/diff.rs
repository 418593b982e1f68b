//! `recap diff OLD.json NEW.json`: two run reports compared per session form, strategy,
//! tokenizer and metric, with `--fail-if` conditions on the changes for CI (exit 1 when one holds).
//!
//! Changes are in the unit a reviewer reads: ratios (savings, cached, retention) as a
//! difference of ratios (`-0.01` = one percentage point less), counts (violations,
//! errors) as a difference, sizes and times (tokens, peak, cost, render_p50) as a
//! relative change (`0.05` = 5 % more).

use anyhow::{Result, bail};
use serde_json::{Value, json};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns for the terminal.
    Table,
    /// A table for a pull-request comment.
    Markdown,
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    /// The earlier report (`recap run --format json`, or DIR/report.json).
    #[arg(value_name = "OLD.json")]
    old: PathBuf,
    /// The later report.
    #[arg(value_name = "NEW.json")]
    new: PathBuf,
    /// Exit 1 when a change meets a condition, e.g.
    /// `savings<-0.01,violations>0,retention<-0.02` (METRIC<N, >N, <=N or >=N, on the
    /// change; metrics: tokens, peak, savings, cached, cost, retention, violations,
    /// errors, render_p50). Repeatable.
    #[arg(long = "fail-if", value_name = "CONDITIONS")]
    fail_if: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Compare reports of different corpora (by their SHA-256) all the same.
    #[arg(long)]
    allow_different_corpora: bool,
}

/// How a metric's change is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    /// A ratio in [0, 1]: new − old.
    Ratio,
    /// A count: new − old.
    Count,
    /// A size or time: new / old − 1.
    Relative,
}

struct Metric {
    name: &'static str,
    kind: Kind,
    /// Where the value sits in a `runs` entry.
    pointer: &'static str,
    /// Nanoseconds (shown with a unit).
    nanoseconds: bool,
}

const METRICS: [Metric; 9] = [
    Metric {
        name: "tokens",
        kind: Kind::Relative,
        pointer: "/prompt_tokens_total",
        nanoseconds: false,
    },
    Metric {
        name: "peak",
        kind: Kind::Relative,
        pointer: "/prompt_tokens_peak",
        nanoseconds: false,
    },
    Metric {
        name: "savings",
        kind: Kind::Ratio,
        pointer: "/savings_vs_full_history",
        nanoseconds: false,
    },
    Metric {
        name: "cached",
        kind: Kind::Ratio,
        pointer: "/cache_hit_rate",
        nanoseconds: false,
    },
    Metric {
        name: "cost",
        kind: Kind::Relative,
        pointer: "/effective_cost",
        nanoseconds: false,
    },
    Metric {
        name: "retention",
        kind: Kind::Ratio,
        pointer: "/retention",
        nanoseconds: false,
    },
    Metric {
        name: "violations",
        kind: Kind::Count,
        pointer: "/invariant_violations/count",
        nanoseconds: false,
    },
    Metric {
        name: "errors",
        kind: Kind::Count,
        pointer: "/render_errors/count",
        nanoseconds: false,
    },
    Metric {
        name: "render_p50",
        kind: Kind::Relative,
        pointer: "/render_ns_median",
        nanoseconds: true,
    },
];

fn metric_names() -> String {
    METRICS
        .iter()
        .map(|m| m.name)
        .collect::<Vec<_>>()
        .join(", ")
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Lt,
    Le,
    Gt,
    Ge,
}

/// One `--fail-if` condition.
#[derive(Debug, Clone, PartialEq)]
struct Condition {
    text: String,
    metric: usize,
    op: Op,
    threshold: f64,
}

impl Condition {
    fn holds(&self, change: f64) -> bool {
        match self.op {
            Op::Lt => change < self.threshold,
            Op::Le => change <= self.threshold,
            Op::Gt => change > self.threshold,
            Op::Ge => change >= self.threshold,
        }
    }
}

fn parse_conditions(specs: &[String]) -> Result<Vec<Condition>> {
    let mut out = Vec::new();
    for part in specs.iter().flat_map(|s| s.split(',')) {
        let text = part.trim();
        if text.is_empty() {
            continue;
        }
        let Some(at) = text.find(['<', '>']) else {
            bail!(
                "--fail-if {text:?}: expected METRIC<N or METRIC>N (also <=, >=), e.g. savings<-0.01"
            );
        };
        let name = text[..at].trim();
        let rest = &text[at..];
        let (op, number) = if let Some(n) = rest.strip_prefix("<=") {
            (Op::Le, n)
        } else if let Some(n) = rest.strip_prefix(">=") {
            (Op::Ge, n)
        } else if let Some(n) = rest.strip_prefix('<') {
            (Op::Lt, n)
        } else {
            (Op::Gt, &rest[1..])
        };
        let Some(metric) = METRICS.iter().position(|m| m.name == name) else {
            bail!(
                "--fail-if {text:?}: unknown metric {name:?}; metrics: {}",
                metric_names()
            );
        };
        let threshold: f64 = number
            .trim()
            .parse()
            .ok()
            .filter(|n: &f64| n.is_finite())
            .ok_or_else(|| {
                anyhow::anyhow!("--fail-if {text:?}: {:?} is not a number", number.trim())
            })?;
        out.push(Condition {
            text: text.to_string(),
            metric,
            op,
            threshold,
        });
    }
    Ok(out)
}

/// A report read from disk, checked to be a `recap run` report.
struct Loaded {
    path: PathBuf,
    json: Value,
}

fn load(path: &Path) -> Result<Loaded> {
    let name = path.display();
    let bytes = std::fs::read(path).map_err(|e| anyhow::anyhow!("{name}: cannot read: {e}"))?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        bail!("{name}: the file is empty; expected a recap run report (JSON)");
    }
    let json: Value = serde_json::from_slice(&bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Eof => anyhow::anyhow!(
            "{name}: truncated: the JSON stops at line {}, column {} before the report is complete (was the run or the copy interrupted?)",
            e.line(),
            e.column()
        ),
        _ => anyhow::anyhow!("{name}: not JSON ({e}); expected a recap run report"),
    })?;
    let foreign = |why: &str| {
        anyhow::anyhow!(
            "{name}: not a recap run report ({why}); `recap run --format json` prints one and `recap run --out DIR` writes DIR/report.json"
        )
    };
    let Some(top) = json.as_object() else {
        return Err(foreign("the JSON is not an object"));
    };
    for key in ["schema_version", "settings", "runs"] {
        if !top.contains_key(key) {
            return Err(foreign(&format!("it has no `{key}` key")));
        }
    }
    match top["schema_version"].as_u64() {
        Some(v) if v == u64::from(recap_harness::report::SCHEMA_VERSION) => {}
        Some(1) => bail!(
            "{name}: report schema version 1, whose rows mix PTC-Lisp and chat sessions; this recap writes and reads version {} (a row per session form): run the old revision's experiment again with this recap",
            recap_harness::report::SCHEMA_VERSION
        ),
        Some(v) => bail!(
            "{name}: report schema version {v}; this recap reads version {}",
            recap_harness::report::SCHEMA_VERSION
        ),
        None => return Err(foreign("`schema_version` is not a number")),
    }
    let Some(runs) = top["runs"].as_array() else {
        return Err(foreign("`runs` is not an array"));
    };
    for (i, r) in runs.iter().enumerate() {
        if !r["form"].is_string() || !r["strategy"].is_string() || !r["tokenizer"].is_string() {
            return Err(foreign(&format!(
                "runs[{i}] has no `form`, `strategy` and `tokenizer`"
            )));
        }
    }
    Ok(Loaded {
        path: path.to_path_buf(),
        json,
    })
}

impl Loaded {
    fn runs(&self) -> &[Value] {
        self.json["runs"].as_array().map_or(&[], Vec::as_slice)
    }

    /// The corpora by hash, sorted (`None` for a report without provenance).
    fn corpus_hashes(&self) -> Option<Vec<String>> {
        let corpora = self.json.pointer("/provenance/corpora")?.as_array()?;
        let mut hashes: Vec<String> = corpora
            .iter()
            .map(|c| c["sha256"].as_str().map(str::to_string))
            .collect::<Option<_>>()?;
        hashes.sort();
        Some(hashes)
    }

    /// The corpora by path and session count, for reports without hashes.
    fn corpus_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.json["settings"]["corpora"]
            .as_array()
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|c| {
                format!(
                    "{} ({} sessions)",
                    c["path"].as_str().unwrap_or("?"),
                    c["sessions"]
                )
            })
            .collect();
        names.sort();
        names
    }

    fn corpus_lines(&self) -> Vec<String> {
        match self
            .json
            .pointer("/provenance/corpora")
            .and_then(Value::as_array)
        {
            Some(cs) => cs
                .iter()
                .map(|c| {
                    format!(
                        "{} ({} bytes, sha256 {})",
                        c["path"].as_str().unwrap_or("?"),
                        c["bytes"],
                        c["sha256"].as_str().unwrap_or("?")
                    )
                })
                .collect(),
            None => self.corpus_names(),
        }
    }
}

/// Refuses reports of different corpora unless allowed; says how they were compared.
fn check_corpora(old: &Loaded, new: &Loaded, allow: bool) -> Result<()> {
    let (same, how) = match (old.corpus_hashes(), new.corpus_hashes()) {
        (Some(a), Some(b)) => (a == b, "by SHA-256"),
        _ => {
            crate::say!(
                "note: {} has no corpus hashes (a report of an older recap): corpora compared by path and session count",
                if old.corpus_hashes().is_none() {
                    &old.path
                } else {
                    &new.path
                }
                .display()
            );
            (
                old.corpus_names() == new.corpus_names(),
                "by path and session count",
            )
        }
    };
    if same {
        return Ok(());
    }
    let list = |l: &Loaded| {
        l.corpus_lines()
            .iter()
            .map(|c| format!("\n    {c}"))
            .collect::<String>()
    };
    if allow {
        crate::say!(
            "note: the reports are of different corpora (compared {how}); comparing anyway (--allow-different-corpora)"
        );
        return Ok(());
    }
    bail!(
        "the reports are of different corpora (compared {how}), so their figures are not comparable:\n  {}:{}\n  {}:{}\npass --allow-different-corpora to compare them anyway",
        old.path.display(),
        list(old),
        new.path.display(),
        list(new)
    )
}

/// One metric of one row.
#[derive(Debug, Clone, PartialEq)]
struct Cell {
    old: Option<f64>,
    new: Option<f64>,
    change: Option<f64>,
}

fn change(kind: Kind, old: Option<f64>, new: Option<f64>) -> Option<f64> {
    let (o, n) = (old?, new?);
    match kind {
        Kind::Ratio | Kind::Count => Some(n - o),
        Kind::Relative if o == n => Some(0.0),
        Kind::Relative if o > 0.0 => Some(n / o - 1.0),
        Kind::Relative => None,
    }
}

/// One form × strategy × tokenizer of either report.
struct Row {
    form: String,
    strategy: String,
    tokenizer: String,
    /// `both`, `added` (new only) or `removed` (old only).
    status: &'static str,
    cells: Vec<Cell>,
    /// Indices of the conditions this row meets, per metric.
    failed: Vec<Vec<usize>>,
}

type Key = (String, String, String);

fn key(r: &Value) -> Key {
    (
        r["form"].as_str().unwrap_or_default().to_string(),
        r["strategy"].as_str().unwrap_or_default().to_string(),
        r["tokenizer"].as_str().unwrap_or_default().to_string(),
    )
}

fn rows(old: &Loaded, new: &Loaded, conditions: &[Condition]) -> Vec<Row> {
    let mut keys: Vec<Key> = Vec::new();
    for r in old.runs().iter().chain(new.runs()) {
        let k = key(r);
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let find = |l: &Loaded, k: &Key| l.runs().iter().find(|r| key(r) == *k).cloned();
    keys.into_iter()
        .map(|k| {
            let (o, n) = (find(old, &k), find(new, &k));
            let status = match (&o, &n) {
                (Some(_), Some(_)) => "both",
                (None, _) => "added",
                (_, None) => "removed",
            };
            let value = |r: &Option<Value>, m: &Metric| {
                r.as_ref()
                    .and_then(|r| r.pointer(m.pointer))
                    .and_then(Value::as_f64)
            };
            let cells: Vec<Cell> = METRICS
                .iter()
                .map(|m| {
                    let (old, new) = (value(&o, m), value(&n, m));
                    Cell {
                        old,
                        new,
                        change: change(m.kind, old, new),
                    }
                })
                .collect();
            let failed = cells
                .iter()
                .enumerate()
                .map(|(mi, c)| {
                    conditions
                        .iter()
                        .enumerate()
                        .filter(|(_, cond)| cond.metric == mi)
                        .filter(|(_, cond)| c.change.is_some_and(|ch| cond.holds(ch)))
                        .map(|(ci, _)| ci)
                        .collect()
                })
                .collect();
            Row {
                form: k.0,
                strategy: k.1,
                tokenizer: k.2,
                status,
                cells,
                failed,
            }
        })
        .collect()
}

fn int(v: f64) -> String {
    let n = v.round() as i128;
    let digits = n.unsigned_abs().to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if n < 0 { format!("-{out}") } else { out }
}

fn value_text(m: &Metric, v: Option<f64>) -> String {
    let Some(v) = v else { return "-".into() };
    match (m.kind, m.nanoseconds) {
        (Kind::Ratio, _) => format!("{:.1}%", v * 100.0),
        (_, true) if v >= 1e6 => format!("{:.2}ms", v / 1e6),
        (_, true) if v >= 1e3 => format!("{:.1}µs", v / 1e3),
        (_, true) => format!("{v}ns"),
        _ => int(v),
    }
}

fn change_text(m: &Metric, c: Option<f64>) -> String {
    let Some(c) = c else { return "-".into() };
    match m.kind {
        Kind::Ratio => format!("{:+.1} pts", c * 100.0),
        Kind::Relative => format!("{:+.1}%", c * 100.0),
        Kind::Count if c > 0.0 => format!("+{}", int(c)),
        Kind::Count => int(c),
    }
}

/// The printed lines: form, strategy, tokenizer, metric, old, new, change, failed
/// conditions.
fn text_rows(rows: &[Row], conditions: &[Condition]) -> Vec<[String; 8]> {
    let mut out = Vec::new();
    for r in rows {
        for (mi, m) in METRICS.iter().enumerate() {
            let c = &r.cells[mi];
            if c.old.is_none() && c.new.is_none() {
                continue;
            }
            let change = match r.status {
                "added" => "added".to_string(),
                "removed" => "removed".to_string(),
                _ => change_text(m, c.change),
            };
            let failed: Vec<&str> = r.failed[mi]
                .iter()
                .map(|&i| conditions[i].text.as_str())
                .collect();
            out.push([
                r.form.clone(),
                r.strategy.clone(),
                r.tokenizer.clone(),
                m.name.to_string(),
                value_text(m, c.old),
                value_text(m, c.new),
                change,
                failed.join(", "),
            ]);
        }
    }
    out
}

const HEADER: [&str; 8] = [
    "form",
    "strategy",
    "tokenizer",
    "metric",
    "old",
    "new",
    "change",
    "fail-if",
];

fn to_table(rows: &[[String; 8]]) -> String {
    let mut widths: Vec<usize> = HEADER.iter().map(|h| h.chars().count()).collect();
    for r in rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            let pad = " ".repeat(w - c.chars().count());
            if i > 0 {
                s.push_str("  ");
            }
            // Text left, figures right.
            if i < 4 || i == 7 {
                s.push_str(c);
                s.push_str(&pad);
            } else {
                s.push_str(&pad);
                s.push_str(c);
            }
        }
        s.trim_end().to_string() + "\n"
    };
    let mut out = line(HEADER.to_vec());
    for r in rows {
        out.push_str(&line(r.iter().map(String::as_str).collect()));
    }
    out
}

fn md_cell(s: &str) -> String {
    let mut out = String::new();
    for c in s.chars() {
        if matches!(c, '|' | '*' | '_' | '`' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

fn to_markdown(old: &Loaded, new: &Loaded, rows: &[[String; 8]], failures: usize) -> String {
    let mut out = format!(
        "### recap diff\n\n`{}` → `{}`{}\n\n| {} |\n|:---|:---|:---|:---|---:|---:|---:|:---|\n",
        old.path.display(),
        new.path.display(),
        if failures > 0 {
            format!(
                " — **{failures} fail-if condition{} met**",
                if failures == 1 { "" } else { "s" }
            )
        } else {
            String::new()
        },
        HEADER.join(" | ")
    );
    for r in rows {
        let cells: Vec<String> = r.iter().map(|c| md_cell(c)).collect();
        let _ = writeln!(out, "| {} |", cells.join(" | "));
    }
    out
}

fn to_json(old: &Loaded, new: &Loaded, rows: &[Row], conditions: &[Condition]) -> String {
    let mut failed = Vec::new();
    let rows_json: Vec<Value> = rows
        .iter()
        .map(|r| {
            let mut metrics = serde_json::Map::new();
            for (mi, m) in METRICS.iter().enumerate() {
                let c = &r.cells[mi];
                metrics.insert(m.name.to_string(), json!({"old": c.old, "new": c.new, "change": c.change}));
                for &ci in &r.failed[mi] {
                    failed.push(json!({
                        "condition": conditions[ci].text,
                        "form": r.form,
                        "strategy": r.strategy,
                        "tokenizer": r.tokenizer,
                        "metric": m.name,
                        "change": c.change,
                    }));
                }
            }
            json!({"form": r.form, "strategy": r.strategy, "tokenizer": r.tokenizer, "status": r.status, "metrics": metrics})
        })
        .collect();
    let doc = json!({
        "old": old.path.display().to_string(),
        "new": new.path.display().to_string(),
        "rows": rows_json,
        "failed": failed,
    });
    let mut s = serde_json::to_string_pretty(&doc).unwrap_or_default();
    s.push('\n');
    s
}

pub fn run(args: Args) -> Result<ExitCode> {
    let conditions = parse_conditions(&args.fail_if)?;
    let old = load(&args.old)?;
    let new = load(&args.new)?;
    check_corpora(&old, &new, args.allow_different_corpora)?;
    let rows = rows(&old, &new, &conditions);
    let printed = text_rows(&rows, &conditions);
    let failures: Vec<String> = rows
        .iter()
        .flat_map(|r| {
            r.failed
                .iter()
                .enumerate()
                .flat_map(move |(mi, f)| f.iter().map(move |&ci| (r, mi, ci)))
        })
        .map(|(r, mi, ci)| {
            format!(
                "fail-if {} met: {} ({}, {} sessions) {} changed {}",
                conditions[ci].text,
                r.strategy,
                r.tokenizer,
                r.form,
                METRICS[mi].name,
                change_text(&METRICS[mi], r.cells[mi].change)
            )
        })
        .collect();
    let text = match args.format {
        Format::Table => to_table(&printed),
        Format::Markdown => to_markdown(&old, &new, &printed, failures.len()),
        Format::Json => to_json(&old, &new, &rows, &conditions),
    };
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    for f in &failures {
        crate::say!("{f}");
    }
    Ok(if failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions_parse_and_unknown_metrics_are_named() {
        let c = parse_conditions(&["savings<-0.01, violations>0".into(), "tokens>=0.05".into()])
            .unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!((c[0].metric, c[0].op, c[0].threshold), (2, Op::Lt, -0.01));
        assert_eq!((c[1].metric, c[1].op), (6, Op::Gt));
        assert_eq!(c[2].op, Op::Ge);
        assert!(c[0].holds(-0.02) && !c[0].holds(-0.01));
        let e = parse_conditions(&["savigns<0".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("unknown metric \"savigns\"") && e.contains("retention"),
            "{e}"
        );
        let e = parse_conditions(&["savings=0".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("expected METRIC<N"), "{e}");
        let e = parse_conditions(&["savings<x".into()])
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"x\" is not a number"), "{e}");
    }

    #[test]
    fn changes_are_in_the_unit_of_the_metric() {
        assert_eq!(
            change(Kind::Ratio, Some(0.8), Some(0.75)).map(|c| (c * 1e9).round() / 1e9),
            Some(-0.05)
        );
        assert_eq!(change(Kind::Count, Some(0.0), Some(3.0)), Some(3.0));
        let grown = change(Kind::Relative, Some(200.0), Some(210.0)).unwrap();
        assert!((grown - 0.05).abs() < 1e-12, "{grown}");
        assert_eq!(change(Kind::Relative, Some(0.0), Some(0.0)), Some(0.0));
        assert_eq!(change(Kind::Relative, Some(0.0), Some(5.0)), None);
        assert_eq!(change(Kind::Ratio, None, Some(0.5)), None);
        assert_eq!(change_text(&METRICS[2], Some(-0.0123)), "-1.2 pts");
        assert_eq!(change_text(&METRICS[0], Some(0.05)), "+5.0%");
        assert_eq!(change_text(&METRICS[6], Some(2.0)), "+2");
        assert_eq!(value_text(&METRICS[0], Some(1234567.0)), "1,234,567");
        assert_eq!(value_text(&METRICS[8], Some(1500.0)), "1.5µs");
    }
}
