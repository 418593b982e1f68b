//! Where a run's results go: the report printed on stdout (the table fitted to the
//! terminal), the report directory, the prompt dumps, the progress bar, and the notes
//! and errors about them.

use super::{Args, ColumnList, Format};
use anyhow::{Context, Result, bail};
use recap_harness::output::OutputDir;
use recap_harness::report::{self, Columns, Report};
use std::io::{BufWriter, IsTerminal, Write};
use std::path::{Path, PathBuf};

/// A file name for a strategy's prompt dump: the spec with unsafe characters replaced.
pub(crate) fn dump_file_name(spec: &str, taken: &mut Vec<String>) -> String {
    let base: String = spec
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '=') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let mut name = format!("{base}.jsonl");
    let mut i = 2;
    while taken.contains(&name) {
        name = format!("{base}-{i}.jsonl");
        i += 1;
    }
    taken.push(name.clone());
    name
}

/// The width of the terminal the table is read in: stdout's, else stderr's (`recap run
/// | less` still shows in it); `None` when neither is a terminal.
fn terminal_width() -> Option<usize> {
    [console::Term::stdout(), console::Term::stderr()]
        .iter()
        .find_map(console::Term::size_checked)
        .map(|(_, columns)| usize::from(columns))
        .filter(|w| *w > 0)
}

/// The table's columns: `--columns`, else those that fit the terminal (or
/// [`report::DEFAULT_WIDTH`] without one).
pub(crate) fn table_columns(columns: Option<&ColumnList>) -> Columns {
    match columns {
        Some(list) => Columns::Only(list.0.clone()),
        None => Columns::Fit(terminal_width().unwrap_or(report::DEFAULT_WIDTH)),
    }
}

pub(crate) fn progress_bar(total_bytes: u64) -> Option<indicatif::ProgressBar> {
    if !std::io::stderr().is_terminal() {
        return None;
    }
    let bar = indicatif::ProgressBar::new(total_bytes);
    let style = indicatif::ProgressStyle::with_template(
        "{spinner} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {msg} (eta {eta})",
    )
    .ok()?;
    bar.set_style(style);
    Some(bar)
}

/// Every corpus must open before anything runs: a misspelt path is a usage error, not
/// a report of nothing.
pub(super) fn check_readable(corpora: &[PathBuf]) -> Result<()> {
    let unreadable: Vec<String> = corpora
        .iter()
        .filter_map(|path| recap_core::corpus::open_file(path).err())
        .map(|e| format!("  {}: {}", e.file.display(), e.message))
        .collect();
    if unreadable.is_empty() {
        return Ok(());
    }
    bail!(
        "{} of {} cannot be read, so nothing was run:\n{}",
        unreadable.len(),
        report::fmt::plural(corpora.len() as u64, "corpus file", "corpus files"),
        unreadable.join("\n")
    )
}

/// Why a run that replayed no session at all has nothing to report.
pub(crate) fn no_sessions(report: &Report) -> anyhow::Error {
    if report.rejected.is_empty() {
        let names = report.settings.corpus_paths();
        anyhow::anyhow!(
            "no sessions to replay: {} {} empty or only blank lines (a corpus is JSON Lines, one session per line; docs/format.md)",
            names.join(", "),
            if names.len() == 1 { "is" } else { "are" }
        )
    } else {
        let which = match report.rejected.len() {
            1 => "the only corpus line was".to_string(),
            n => format!("every one of the {n} corpus lines was"),
        };
        anyhow::anyhow!(
            "no sessions to replay: {which} rejected (see above; `recap validate` lists each)"
        )
    }
}

/// The report directory: `--out DIR` itself, or a new `run-NNNN` under the experiment
/// file's `out` (each run of an experiment keeps the earlier ones).
pub(super) fn open_out_dir(args: &Args) -> Result<Option<OutputDir>> {
    let out = match (&args.out, &args.runs_dir) {
        (Some(dir), _) => OutputDir::create(dir, args.force)?,
        (None, Some(parent)) => OutputDir::create_next_run(parent)?,
        (None, None) => return Ok(None),
    };
    if !out.cleaned_up().is_empty() {
        let n = out.cleaned_up().len();
        crate::say!(
            "note: removed {n} staging director{} left by interrupted runs",
            if n == 1 { "y" } else { "ies" },
        );
    }
    Ok(Some(out))
}

/// A JSON report larger than this gets a note on how to make it smaller.
const LARGE_REPORT_BYTES: u64 = 64 << 20;

fn large_report_bytes() -> u64 {
    // Tests lower it to see the note without writing 64 MiB.
    std::env::var("RECAP_LARGE_REPORT_BYTES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(LARGE_REPORT_BYTES)
}

pub(crate) fn note_large_report(what: &str, bytes: u64, report: &Report) {
    if bytes < large_report_bytes() {
        return;
    }
    let records: usize = report.runs.iter().map(|r| r.session_details.len()).sum();
    if records == 0 {
        return;
    }
    crate::say!(
        "note: {what} is {:.1} MB, mostly its {records} per-session records (session_details); \
         --no-session-details leaves them out",
        bytes as f64 / 1e6
    );
}

/// Counts the bytes written through it (the size of the report on stdout).
struct Counting<W> {
    inner: W,
    bytes: u64,
}

impl<W: Write> Write for Counting<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.bytes += n as u64;
        Ok(n)
    }
    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// Prints the report on stdout; returns the bytes written. A reader that stops early
/// (`| head`) ends the printing, not the run: its problems still reach stderr and the
/// exit code.
pub(crate) fn print_report(report: &Report, format: Format, columns: &Columns) -> Result<u64> {
    // Buffered: stdout is line-buffered, and a JSON report has a line per field.
    let mut out = Counting {
        inner: BufWriter::new(std::io::stdout().lock()),
        bytes: 0,
    };
    let written = match format {
        Format::Json => report.write_json(&mut out),
        Format::Table => out.write_all(report::to_table_with(report, columns).as_bytes()),
        Format::Csv => out.write_all(report::to_csv(report).as_bytes()),
        Format::Markdown => out.write_all(report::to_markdown(report).as_bytes()),
    }
    .and_then(|()| out.flush());
    match written {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(out.bytes),
        Err(e) => Err(e).context("writing the report to stdout"),
        Ok(()) => Ok(out.bytes),
    }
}

/// `./bench-data/*.jsonl`, sorted; outside the repository, an error saying what to do.
pub(crate) fn default_corpora() -> Result<Vec<PathBuf>> {
    let dir = Path::new("bench-data");
    let Ok(entries) = std::fs::read_dir(dir) else {
        bail!(
            "no corpus given, and there is no bench-data/ here (the example corpora of recap's repository); \
             name corpus files (`recap run my-sessions.jsonl`), or write an experiment with an example corpus: \
             `recap init && recap run --config experiment.toml`"
        );
    };
    let mut files = Vec::new();
    for e in entries {
        let path = e
            .with_context(|| format!("reading {}", dir.display()))?
            .path();
        if path.extension().is_some_and(|x| x == "jsonl") {
            files.push(path);
        }
    }
    if files.is_empty() {
        bail!(
            "no corpus given and {} holds no *.jsonl files",
            dir.display()
        );
    }
    files.sort();
    Ok(files)
}
