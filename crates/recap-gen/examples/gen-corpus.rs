//! Writes a deterministic generated corpus (JSON Lines), of PTC-Lisp sessions or, with
//! `--form chat`, of chat-form sessions.
//!
//! `bench-data/generated.jsonl` and `bench-data/chat-generated.jsonl` are regenerated with:
//!
//! ```text
//! cargo run -p recap-gen --example gen-corpus -- --seed 7 --sessions 30 --turns 1..=30 \
//!     --out bench-data/generated.jsonl
//! cargo run -p recap-gen --example gen-corpus -- --form chat --seed 7 --sessions 30 \
//!     --turns 1..=40 --out bench-data/chat-generated.jsonl
//! ```

use anyhow::{Context, Result, bail};
use clap::{Parser, ValueEnum};
use std::io::{BufWriter, Write};
use std::ops::RangeInclusive;
use std::path::PathBuf;

/// The session form to generate (SPEC 4 and 11).
#[derive(Clone, Copy, ValueEnum)]
enum Form {
    Ptc,
    Chat,
}

#[derive(Parser)]
#[command(about = "Write a deterministic generated corpus of recorded sessions")]
struct Args {
    /// PTC-Lisp sessions, or chat-form (tool-calling) sessions.
    #[arg(long, value_enum, default_value_t = Form::Ptc)]
    form: Form,
    /// The seed: the same seed gives the same corpus.
    #[arg(long, default_value_t = 7)]
    seed: u64,
    /// How many sessions.
    #[arg(long, default_value_t = 30)]
    sessions: usize,
    /// Range of recorded turns per session, `A..=B`.
    #[arg(long, default_value = "1..=30", value_parser = parse_range)]
    turns: RangeInclusive<u32>,
    /// Output file; standard output when absent.
    #[arg(long)]
    out: Option<PathBuf>,
}

fn parse_range(s: &str) -> Result<RangeInclusive<u32>> {
    let (a, b) = s
        .split_once("..=")
        .with_context(|| format!("{s:?}: expected a range A..=B, e.g. 1..=30"))?;
    let (a, b): (u32, u32) = (
        a.trim()
            .parse()
            .with_context(|| format!("{s:?}: bad start"))?,
        b.trim()
            .parse()
            .with_context(|| format!("{s:?}: bad end"))?,
    );
    if a > b {
        bail!("{s:?}: the start is after the end");
    }
    Ok(a..=b)
}

fn main() -> Result<()> {
    let args = Args::parse();
    let sessions = match args.form {
        Form::Ptc => recap_gen::generate_corpus(args.seed, args.sessions, args.turns),
        Form::Chat => recap_gen::generate_chat_corpus(args.seed, args.sessions, args.turns),
    };
    match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path)
                .with_context(|| format!("cannot create {}", path.display()))?;
            let mut out = BufWriter::new(file);
            recap_gen::write_jsonl(&mut out, &sessions)?;
            out.flush()?;
            eprintln!("wrote {} sessions to {}", sessions.len(), path.display());
        }
        None => {
            let stdout = std::io::stdout();
            recap_gen::write_jsonl(&mut stdout.lock(), &sessions)?;
        }
    }
    Ok(())
}
