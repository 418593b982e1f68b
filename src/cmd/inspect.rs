//! `recap inspect`: the debug view (DBG-001..005) — each turn's full recorded trace
//! beside what a strategy sent for the call that produced it, with token counts.

use anyhow::{Context, Result, bail};
use recap_core::{CorpusReader, Session};
use recap_harness::inspect::{InspectOptions, inspect};
use recap_harness::{Backend, Encoding, Tokenizer};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Corpus file (JSON Lines).
    corpus: PathBuf,
    /// The session's id.
    #[arg(long)]
    session: String,
    /// Only turn K (1-based) and the prompt of the call that produced it.
    #[arg(long, value_name = "K")]
    turn: Option<usize>,
    /// Strategy spec (`name` or `name:key=value,...`).
    #[arg(long, value_name = "SPEC")]
    strategy: String,
    /// Tokenizer for the per-message counts. Repeatable. Default: o200k_base.
    #[arg(long = "tokenizer", value_name = "NAME", value_parser = ["o200k_base", "cl100k_base", "deepseek_v3"])]
    tokenizers: Vec<String>,
    /// Cut each printed text or value to N characters (default: everything).
    #[arg(long, value_name = "N")]
    max_chars: Option<usize>,
    #[command(flatten)]
    plugins: super::plugins::PluginArgs,
}

/// Streams the corpus to the session; an invalid line with that id says why.
fn find_session(corpus: &Path, id: &str) -> Result<Session> {
    let reader = CorpusReader::open(corpus)?;
    let mut known = Vec::new();
    for entry in reader {
        match entry.session {
            Ok(s) if s.id == id => return Ok(s),
            Ok(s) => {
                if known.len() < 8 {
                    known.push(s.id);
                }
            }
            Err(r) if r.session_id.as_deref() == Some(id) => {
                bail!("session {id:?} is in the corpus but invalid: {r}")
            }
            Err(_) => {}
        }
    }
    bail!(
        "no session {id:?} in {}; sessions there include: {}",
        corpus.display(),
        if known.is_empty() {
            "(none)".to_string()
        } else {
            known.join(", ")
        }
    )
}

pub fn run(args: Args) -> Result<ExitCode> {
    let mut tokenizers = Vec::new();
    for n in if args.tokenizers.is_empty() {
        vec![Encoding::O200kBase.name().to_string()]
    } else {
        args.tokenizers.clone()
    } {
        let enc: Encoding = n.parse()?;
        tokenizers.push(Tokenizer::get(enc, Backend::Fast));
    }
    let mut registry = args.plugins.registry()?;
    // Token budgets count with the first tokenizer, as in `recap run`.
    if let Some(first) = tokenizers.first() {
        registry.set_counter(std::sync::Arc::new(*first));
    }
    let strategy = registry
        .build(&args.strategy)
        .with_context(|| format!("--strategy {:?}", args.strategy))?;
    let session = find_session(&args.corpus, &args.session)?;
    let text = inspect(
        &session,
        strategy.as_ref(),
        &InspectOptions {
            turn: args.turn,
            tokenizers,
            max_chars: args.max_chars,
        },
    )?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(ExitCode::SUCCESS)
}
