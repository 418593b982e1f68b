use anyhow::Result;
use recap_core::CorpusReader;
use std::io::{BufReader, Write};
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
    let (mut ok, mut rejected) = (0usize, 0usize);
    for path in &args.corpora {
        // Opened as `recap run` opens it, so both name an unreadable file alike.
        let reader = match recap_harness::open_corpus(path) {
            Ok(file) => CorpusReader::new(path, BufReader::with_capacity(1 << 16, file)),
            Err(e) => {
                writeln!(out, "{e}")?;
                rejected += 1;
                continue;
            }
        };
        for entry in reader {
            match entry.session {
                Ok(_) => ok += 1,
                Err(e) => {
                    writeln!(out, "{e}")?;
                    rejected += 1;
                }
            }
        }
    }
    writeln!(out, "{ok} sessions ok, {rejected} rejected")?;
    Ok(if rejected > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
