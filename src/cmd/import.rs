//! `recap import <kind> <path>... -o out.jsonl`: turns recorded agent logs into a corpus.
//!
//! Prints a summary to stderr — sessions, turns, tool calls, and the problems (the first
//! `--show-problems`, all of them with `--problems FILE`). The corpus is written to a
//! temporary file beside the output and renamed into place, so a failed import never
//! leaves a half-written corpus. An existing corpus is replaced only with `--force`, and
//! never by an import that produced no session (the usual sign of the wrong importer).
//! Exit 0: imported, nothing skipped; 1: imported, but some input was skipped; 2: could
//! not run, or nothing to write.

use anyhow::{Context, bail};
use recap_import::{Import, Kind, Options, Severity, Sidechains};
use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Log format: ptc-runner, smolagents, openai-chat, anthropic-messages, claude-code,
    /// swe-agent, openhands, tau2, inspect, atif, adp, openhands-sdk, or auto (each
    /// file's format is recognised by its name or content, and the summary says which).
    /// docs/importers.md has every mapping.
    pub kind: Kind,
    /// Log files or directories (directories are walked in sorted order).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The corpus to write (JSON Lines, one session per line). An existing file is
    /// refused unless --force is given.
    #[arg(short, long)]
    pub output: PathBuf,
    /// Replace an existing --output file.
    #[arg(long)]
    pub force: bool,
    /// Also write every problem, one per line, to this file.
    #[arg(long, value_name = "FILE")]
    pub problems: Option<PathBuf>,
    /// How many problems to print on stderr.
    #[arg(long, default_value_t = 20, value_name = "N")]
    pub show_problems: usize,
    /// claude-code: each sub-agent conversation (`isSidechain`) becomes a session of its
    /// own (`sessions`), or is left out (`exclude`, counted as one problem per file).
    #[arg(long, default_value = "sessions", value_name = "sessions|exclude")]
    pub sidechains: Sidechains,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if args.problems.as_deref() == Some(args.output.as_path()) {
        bail!("--problems and --output name the same file");
    }
    // Checked before the work: a corpus may be hours of recorded sessions.
    if !args.force && std::fs::symlink_metadata(&args.output).is_ok() {
        bail!(
            "{} already exists; refusing to replace it — pass --force to overwrite it, or choose another -o",
            args.output.display()
        );
    }
    let options = Options {
        sidechains: args.sidechains,
    };
    let import = recap_import::import_with(args.kind, &args.paths, &options)?;
    if import.sessions.is_empty() {
        print_summary(&args, &import);
        bail!(
            "the {} importer found no session in {} file{}, so nothing was written{}; is {} the right kind of log? (`recap import --help` lists the kinds)",
            args.kind,
            import.files,
            if import.files == 1 { "" } else { "s" },
            if args.output.exists() {
                format!(" ({} is unchanged)", args.output.display())
            } else {
                String::new()
            },
            args.kind
        );
    }
    write_atomically(&args.output, |w| import.write_jsonl(w))
        .with_context(|| format!("writing {}", args.output.display()))?;
    if let Some(path) = &args.problems {
        write_atomically(path, |w| {
            for p in &import.problems {
                writeln!(w, "{p}")?;
            }
            Ok(())
        })
        .with_context(|| format!("writing {}", path.display()))?;
    }
    print_summary(&args, &import);
    let skipped = import
        .problems
        .iter()
        .any(|p| p.severity == Severity::Skipped);
    Ok(if skipped {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn print_summary(args: &Args, import: &Import) {
    crate::say!(
        "{}: {} sessions, {} turns ({} failed), {} tool calls from {} files -> {}",
        args.kind,
        import.sessions.len(),
        import.turns(),
        import.failed_turns(),
        import.tool_calls(),
        import.files,
        args.output.display()
    );
    print_formats(import);
    for join in &import.joins {
        let files: Vec<String> = join.files.iter().map(|f| f.display().to_string()).collect();
        crate::say!(
            "joined: session {} from {} files, in this order: {}{}",
            join.session_ids.join(", "),
            files.len(),
            files.join(", "),
            match join.duplicates {
                0 => String::new(),
                n => format!(
                    " ({n} repeated {} dropped)",
                    if n == 1 { "entry" } else { "entries" }
                ),
            }
        );
    }
    if import.problems.is_empty() {
        crate::say!("no problems");
        return;
    }
    let skipped = import
        .problems
        .iter()
        .filter(|p| p.severity == Severity::Skipped)
        .count();
    crate::say!(
        "{} problems ({skipped} skipped input, {} lossy mappings):",
        import.problems.len(),
        import.problems.len() - skipped
    );
    let by_kind: Vec<String> = import
        .problem_counts()
        .into_iter()
        .map(|((severity, kind), n)| {
            let kind = if kind.is_empty() { "other" } else { kind };
            format!("{n} {} {kind}", severity.as_str())
        })
        .collect();
    crate::say!("  by kind: {}", by_kind.join(", "));
    for p in import.problems.iter().take(args.show_problems) {
        crate::say!("  {p}");
    }
    let rest = import.problems.len().saturating_sub(args.show_problems);
    if rest > 0 {
        match &args.problems {
            Some(path) => crate::say!("  ... and {rest} more (all in {})", path.display()),
            None => crate::say!("  ... and {rest} more (--problems FILE writes all of them)"),
        }
    }
}

/// `auto`: the format each file was read as. Files of one directory read as the same
/// format share a line (the directory, the count, the first and last name), so a
/// directory of event files does not fill the terminal.
fn print_formats(import: &Import) {
    if import.formats.is_empty() {
        return;
    }
    crate::say!("formats read:");
    let name = |k: Option<Kind>| k.map_or("unknown format", Kind::name);
    let mut i = 0;
    while i < import.formats.len() {
        let (file, kind) = &import.formats[i];
        let dir = file.parent();
        let run = import.formats[i..]
            .iter()
            .take_while(|(f, k)| k == kind && f.parent() == dir)
            .count();
        if run == 1 {
            crate::say!("  {}: {}", name(*kind), file.display());
        } else {
            let last = &import.formats[i + run - 1].0;
            let base = |f: &Path| {
                f.file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default()
            };
            crate::say!(
                "  {}: {} files in {} ({} … {})",
                name(*kind),
                run,
                dir.map_or_else(|| ".".into(), |d| d.display().to_string()),
                base(file),
                base(last)
            );
        }
        i += run;
    }
}

/// Writes through a temporary file in the same directory, then renames it over `path`.
fn write_atomically(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> io::Result<()>,
) -> anyhow::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let name = path
        .file_name()
        .with_context(|| format!("{} is not a file name", path.display()))?;
    let tmp = dir.join(format!(
        ".{}.tmp-{}",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = (|| -> anyhow::Result<()> {
        let file = File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        let mut out = BufWriter::new(file);
        write(&mut out)?;
        let file = out.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        fs::rename(&tmp, path)
            .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))?;
        Ok(())
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}
