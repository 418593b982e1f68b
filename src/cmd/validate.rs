//! `recap validate`: one line per rejected session on stdout, then `N sessions ok, M
//! rejected`. Exit 1 on rejections or a file that cannot be read beside others that can;
//! exit 2 when nothing could be read or the files hold no session at all (an empty
//! corpus is a mistake, not a pass).

use anyhow::{Result, bail};
use recap_core::CorpusReader;
use recap_harness::report::fmt::plural;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Corpus files (JSON Lines, one session per line).
    #[arg(required = true)]
    corpora: Vec<PathBuf>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let (mut ok, mut rejected, mut unreadable) = (0u64, 0u64, 0u64);
    // Chat sessions: tool-call arguments that are not valid JSON are kept as the text the
    // model wrote (and replayed as such); they are counted, never a rejection.
    let (mut calls, mut not_json) = (0u64, 0u64);
    for path in &args.corpora {
        // Opened as `recap run` opens it (`corpus::open_file`), so both name an
        // unreadable file alike.
        let reader = match CorpusReader::open(path) {
            Ok(reader) => reader,
            Err(e) => {
                writeln!(out, "{e}")?;
                unreadable += 1;
                continue;
            }
        };
        for entry in reader {
            match entry.session {
                Ok(session) => {
                    ok += 1;
                    for call in session
                        .chat_turns
                        .iter()
                        .flat_map(|t| &t.assistant.tool_calls)
                    {
                        calls += 1;
                        if serde_json::from_str::<serde::de::IgnoredAny>(&call.arguments).is_err() {
                            not_json += 1;
                        }
                    }
                }
                Err(e) => {
                    writeln!(out, "{e}")?;
                    rejected += 1;
                }
            }
        }
    }
    if not_json > 0 {
        writeln!(
            out,
            "note: {not_json} of {} have arguments that are not valid JSON; they are kept as the model wrote them",
            plural(calls, "tool call", "tool calls")
        )?;
    }
    let files = if unreadable > 0 {
        format!(", {} unreadable", plural(unreadable, "file", "files"))
    } else {
        String::new()
    };
    writeln!(
        out,
        "{} ok, {rejected} rejected{files}",
        plural(ok, "session", "sessions")
    )?;
    if unreadable == args.corpora.len() as u64 {
        let what = match unreadable {
            1 => "the file could not be read".to_string(),
            n => format!("none of the {n} files could be read"),
        };
        bail!("nothing to validate: {what} (see above)");
    }
    if ok + rejected == 0 {
        bail!(
            "no sessions: {} {} empty or only blank lines (a corpus is JSON Lines, one session per line; docs/format.md)",
            args.corpora
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
            if args.corpora.len() == 1 { "is" } else { "are" }
        );
    }
    Ok(if rejected > 0 || unreadable > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
