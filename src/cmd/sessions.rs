//! `recap sessions FILE...`: the sessions of corpora, one line each — id, form, turns,
//! turn budget and what the log recorded of the provider's usage — to find the id that
//! `recap render` and `recap inspect` take. Also the lookup of one session by id that
//! both of them use.

use anyhow::{Result, bail};
use recap_core::corpus::{Lookup, find_session};
use recap_core::{CorpusReader, Form, Session};
use recap_harness::calls::{calls, recorded_input, recorded_usage};
use recap_harness::report::fmt::{int, plural};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns.
    Table,
    /// One JSON object per session (JSON Lines).
    Json,
}

#[derive(clap::Args)]
pub struct Args {
    /// Corpus files (JSON Lines, one session per line).
    #[arg(required = true, value_name = "FILE")]
    corpora: Vec<PathBuf>,
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
}

/// Streams `corpus` to the session `id`. An invalid line with that id says why; an id
/// that is not there lists the ids that are (`recap sessions` lists them all).
pub fn find(corpus: &Path, id: &str) -> Result<Session> {
    let (ids, total) = match find_session(CorpusReader::open(corpus)?, id) {
        Lookup::Found(session) => return Ok(session),
        Lookup::Invalid(rejected) => {
            bail!("session {id:?} is in the corpus but invalid: {rejected}")
        }
        Lookup::Missing { ids, total } => (ids, total),
    };
    if total == 0 {
        bail!(
            "{}: no session {id:?} (the corpus has no valid sessions)",
            corpus.display()
        );
    }
    let more = if total > ids.len() as u64 {
        format!(
            ", … ({} in all; `recap sessions {}` lists them)",
            int(total),
            corpus.display()
        )
    } else {
        String::new()
    };
    bail!(
        "{}: no session {id:?}; sessions there: {}{more}",
        corpus.display(),
        ids.join(", ")
    )
}

/// One listed session.
struct Listed {
    corpus: String,
    line: usize,
    id: String,
    form: Form,
    turns: usize,
    max_turns: Option<u32>,
    /// Calls whose usage the log recorded, and their input tokens.
    usage_calls: usize,
    input_tokens: u64,
    /// Of those, tokens read from the provider's cache, where recorded.
    cache_read: u64,
}

fn listed(corpus: &Path, line: usize, s: &Session) -> Listed {
    let inputs: Vec<u64> = calls(s).filter_map(|k| recorded_input(s, k)).collect();
    Listed {
        corpus: corpus.display().to_string(),
        line,
        id: s.id.clone(),
        form: s.form,
        turns: s.turn_count(),
        max_turns: s.budget(),
        usage_calls: inputs.len(),
        input_tokens: inputs.iter().sum(),
        cache_read: recorded_usage(s).cache_read,
    }
}

fn usage_text(l: &Listed) -> String {
    if l.usage_calls == 0 {
        return "-".to_string();
    }
    let cached = if l.cache_read > 0 {
        format!(", {} cached", int(l.cache_read))
    } else {
        String::new()
    };
    format!(
        "{} input tokens over {}{cached}",
        int(l.input_tokens),
        plural(l.usage_calls as u64, "call", "calls")
    )
}

fn table(rows: &[Listed]) -> String {
    let header = [
        "corpus:line",
        "id",
        "form",
        "turns",
        "max_turns",
        "recorded usage",
    ];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|l| {
            [
                format!("{}:{}", l.corpus, l.line),
                l.id.clone(),
                l.form.as_str().to_string(),
                l.turns.to_string(),
                l.max_turns.map_or("-".to_string(), |m| m.to_string()),
                usage_text(l),
            ]
        })
        .collect();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &cells {
        for (w, c) in widths.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut out = String::new();
        for (i, (c, w)) in cells.iter().zip(&widths).enumerate() {
            if i > 0 {
                out.push_str("  ");
            }
            let pad = " ".repeat(w - c.chars().count());
            // Counts right-aligned, text left.
            if i == 3 || i == 4 {
                out.push_str(&pad);
                out.push_str(c);
            } else {
                out.push_str(c);
                if i + 1 < cells.len() {
                    out.push_str(&pad);
                }
            }
        }
        out.push('\n');
        out
    };
    let mut out = line(&header);
    for row in &cells {
        out.push_str(&line(&row.iter().map(String::as_str).collect::<Vec<_>>()));
    }
    out
}

fn json_line(l: &Listed) -> String {
    serde_json::json!({
        "corpus": l.corpus,
        "line": l.line,
        "id": l.id,
        "form": l.form.as_str(),
        "turns": l.turns,
        "max_turns": l.max_turns,
        "recorded_usage_calls": l.usage_calls,
        "recorded_input_tokens": l.input_tokens,
        "recorded_cache_read_tokens": l.cache_read,
    })
    .to_string()
}

pub fn run(args: Args) -> Result<ExitCode> {
    let mut rows = Vec::new();
    let mut rejected = 0u64;
    let mut unreadable = 0usize;
    for path in &args.corpora {
        let reader = match CorpusReader::open(path) {
            Ok(r) => r,
            Err(e) => {
                crate::say!("{e}");
                unreadable += 1;
                continue;
            }
        };
        for entry in reader {
            match entry.session {
                Ok(s) => rows.push(listed(path, entry.line, &s)),
                Err(e) => {
                    crate::say!("{e}");
                    rejected += 1;
                }
            }
        }
    }
    if unreadable == args.corpora.len() {
        bail!(
            "none of the {} could be read (see above)",
            plural(args.corpora.len() as u64, "corpus file", "corpus files")
        );
    }
    let mut out = std::io::stdout().lock();
    match args.format {
        Format::Table => out.write_all(table(&rows).as_bytes())?,
        Format::Json => {
            for l in &rows {
                writeln!(out, "{}", json_line(l))?;
            }
        }
    }
    out.flush()?;
    crate::say!(
        "{}{}",
        plural(rows.len() as u64, "session", "sessions"),
        if rejected > 0 {
            format!(
                ", {} rejected (`recap validate` says why)",
                plural(rejected, "line", "lines")
            )
        } else {
            String::new()
        }
    );
    Ok(if rejected > 0 || unreadable > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
