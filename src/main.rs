//! `recap`: replay recorded agent sessions through message-history compression
//! strategies and compare them.

mod cmd;
mod quiet_panics;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// mimalloc rather than the system allocator: a run allocates and frees every prompt's
/// messages and scan results at every call, and loading a tokenizer's vocabulary makes
/// some 550,000 allocations. Measured (docs/performance.md, "Allocator"): 14–18 % less
/// CPU per MB of corpus and a fifth to a quarter less fixed cost per run than glibc's
/// malloc, for +13 MB peak memory at 256 MB of corpus. Built without transparent huge
/// pages (`no_thp`), which cost another 30–40 MB of peak memory for 2–5 % of time, and
/// with small address-space reservations (`.cargo/config.toml`), so that `ulimit -v`
/// bounds a run as it does with the system allocator.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(name = "recap", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Replay corpora through strategies: tokens, cache reuse, retention, invariants, speed.
    Run(cmd::run::Args),
    /// Debug view: each turn's full recorded trace beside what a strategy sent.
    Inspect(cmd::inspect::Args),
    /// Validate corpora: one line per rejected session, then a count.
    Validate(cmd::validate::Args),
    /// Print the prompt a strategy renders for one call of a recorded session.
    Render(cmd::render::Args),
    /// List every registered strategy with its options and defaults.
    Strategies(cmd::strategies::Args),
    /// Run golden cases: print each failure, then `N passed, M failed, K skipped`.
    Conformance(cmd::conformance::Args),
    /// Strategy plugins: `recap plugins check <lib>...` loads and self-tests them.
    Plugins(cmd::plugins::Args),
    /// The worker process of a plugin run with `--plugin-isolation process` (started by recap).
    #[command(hide = true)]
    PluginWorker(cmd::plugin_worker::Args),
    /// Import recorded agent logs (ptc-runner, smolagents, openai-chat, anthropic-messages,
    /// claude-code, swe-agent, openhands, tau2, auto) as a corpus.
    Import(cmd::import::Args),
    /// Ask a model (OpenAI-compatible endpoint): next-action agreement and probe QA per strategy.
    Eval(cmd::eval::Args),
    /// Write a commented example experiment file for `recap run --config`.
    Init(cmd::init::Args),
    /// Compare two run reports per strategy and metric; `--fail-if` sets the exit code.
    Diff(cmd::diff::Args),
    /// Merge the partial reports of `recap run --shard I/N` into the whole run's report.
    Merge(cmd::merge::Args),
}

fn main() -> ExitCode {
    quiet_panics::install();
    let matches = <Cli as clap::CommandFactory>::command().get_matches();
    let cli = match <Cli as clap::FromArgMatches>::from_arg_matches(&matches) {
        Ok(cli) => cli,
        Err(e) => e.exit(),
    };
    let result = match cli.command {
        Command::Run(mut args) => {
            // Rows follow the order strategies and sweeps were given in, interleaved.
            if let Some(m) = matches.subcommand_matches("run") {
                args.set_given_order(m);
            }
            cmd::run::run(args)
        }
        Command::Inspect(args) => cmd::inspect::run(args),
        Command::Validate(args) => cmd::validate::run(args),
        Command::Render(args) => cmd::render::run(args),
        Command::Strategies(args) => cmd::strategies::run(args),
        Command::Conformance(args) => cmd::conformance::run(args),
        Command::Plugins(args) => cmd::plugins::run(args),
        Command::PluginWorker(args) => cmd::plugin_worker::run(args),
        Command::Import(args) => cmd::import::run(args),
        Command::Eval(args) => cmd::eval::run(args),
        Command::Init(args) => cmd::init::run(args),
        Command::Diff(args) => cmd::diff::run(args),
        Command::Merge(args) => cmd::merge::run(args),
    };
    match result {
        Ok(code) => code,
        // The reader of stdout has gone (`recap inspect … | head -1`): it wanted no more.
        Err(e) if cmd::is_closed_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            crate::say!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}
