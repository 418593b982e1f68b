//! `recap inspect`: the debug view (DBG-001..005) — each turn's full recorded trace
//! beside what a strategy sent for the call that produced it, with token counts.

use anyhow::{Context, Result};
use recap_harness::inspect::{InspectOptions, inspect};
use recap_harness::{Backend, Encoding, Tokenizer};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Corpus file (JSON Lines).
    corpus: PathBuf,
    /// The session's id (`recap sessions FILE` lists them).
    #[arg(long)]
    session: String,
    /// Only turn K and the call that produced it (1 = the first call, whose prompt
    /// holds no turn yet; the prompt of call K holds turns 1..K-1), as `recap render
    /// --turn K`.
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
    let session = super::sessions::find(&args.corpus, &args.session)?;
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
