//! `recap render`: the prompt a strategy renders for one call of one recorded session.

use anyhow::{Context, Result, bail};
use recap_core::{CorpusReader, Message, Registry, RenderRequest, Session};
use recap_harness::tokenizer::{Backend, Encoding, Tokenizer};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The prompt as an OpenAI chat-completions `messages` array ({"role", "content"},
    /// plus `tool_calls`, `tool_call_id` and `name` in chat-form sessions): the exact
    /// bytes, sendable to any compatible endpoint as they are.
    Json,
    /// A readable view with a header per message.
    Text,
}

#[derive(clap::Args)]
pub struct Args {
    /// Corpus file (JSON Lines, one session per line).
    corpus: PathBuf,
    /// The session's id.
    #[arg(long)]
    session: String,
    /// Completed turns before the call (0 = the first call). Default: all recorded
    /// turns, clamped to max_turns - 1 when no call follows the last one.
    #[arg(long, value_name = "K", allow_negative_numbers = true, value_parser = parse_turns)]
    turns: Option<usize>,
    /// Strategy spec: `name` or `name:key=value,...` (see `recap strategies`).
    #[arg(long, value_name = "SPEC")]
    strategy: String,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The tokenizer strategies with token budgets count with.
    #[arg(long, value_name = "NAME", default_value = "o200k_base", value_parser = ["o200k_base", "cl100k_base", "deepseek_v3"])]
    tokenizer: String,
    #[command(flatten)]
    plugins: super::plugins::PluginArgs,
}

/// `K` counts turns, so it is never negative; said in those words instead of clap's
/// generic advice to write `-- -1`.
fn parse_turns(text: &str) -> Result<usize, String> {
    match text.trim().parse::<i128>() {
        Ok(k) if k < 0 => Err(format!(
            "{k} is negative; K counts the turns completed before the call (0 = the first call)"
        )),
        Ok(k) => usize::try_from(k).map_err(|_| format!("{k} is too large")),
        Err(_) => Err(format!(
            "{text:?} is not a number of turns (0 = the first call)"
        )),
    }
}

pub fn run(args: Args) -> Result<ExitCode> {
    // Built-ins plus the strategies of `--plugin` / `--plugin-dir` libraries.
    let mut registry: Registry = args.plugins.registry()?;
    let encoding: Encoding = args
        .tokenizer
        .parse()
        .with_context(|| format!("--tokenizer {:?}", args.tokenizer))?;
    registry.set_counter(Arc::new(Tokenizer::get(encoding, Backend::Fast)));
    let strategy = registry
        .build(&args.strategy)
        .with_context(|| format!("--strategy {:?}", args.strategy))?;
    let session = find_session(&args.corpus, &args.session)?;
    if let Some(why) = recap_core::strategy::not_applicable(strategy.as_ref(), &session) {
        bail!("{why} (see `recap strategies`)");
    }
    let k = call_index(&session, args.turns)?;
    RenderRequest::for_call(&session, k)
        .with_context(|| format!("session {:?}, --turns {k}", session.id))?;
    let messages = recap_core::render_call(strategy.as_ref(), &session, k)
        .with_context(|| format!("strategy {} failed to render call {k}", strategy.spec()))?;

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json => {
            let wire: Vec<_> = messages.iter().map(Message::openai).collect();
            serde_json::to_writer(&mut out, &wire)?;
            writeln!(out)?;
        }
        Format::Text => write_text(&mut out, &session, k, &strategy.spec(), &messages)?,
    }
    Ok(ExitCode::SUCCESS)
}

/// Streams the corpus until the session is found; a rejected line with that id is
/// reported with its reason.
fn find_session(corpus: &Path, id: &str) -> Result<Session> {
    let reader = CorpusReader::open(corpus)?;
    let mut ids: Vec<String> = Vec::new();
    let mut total = 0usize;
    for entry in reader {
        match entry.session {
            Ok(session) if session.id == id => return Ok(session),
            Ok(session) => {
                total += 1;
                if ids.len() < 8 {
                    ids.push(session.id);
                }
            }
            Err(rejected) if rejected.session_id.as_deref() == Some(id) => {
                bail!("session {id:?} is in the corpus but invalid: {rejected}");
            }
            Err(_) => {}
        }
    }
    if total == 0 {
        bail!(
            "{}: no session {id:?} (the corpus has no valid sessions)",
            corpus.display()
        );
    }
    let more = if total > ids.len() {
        format!(", … ({total} in all)")
    } else {
        String::new()
    };
    bail!(
        "{}: no session {id:?}; available: {}{more}",
        corpus.display(),
        ids.join(", ")
    )
}

/// The call to render: `--turns K` as given (checked), or all turns clamped to the
/// last call the budget allows.
fn call_index(session: &Session, turns: Option<usize>) -> Result<usize> {
    let recorded = session.turn_count();
    let last_call = recorded.min(session.max_turns.saturating_sub(1) as usize);
    let budget = match session.budget() {
        Some(n) => format!("max_turns {n}"),
        None => "no recorded turn budget".to_string(),
    };
    match turns {
        Some(k) if k <= last_call => Ok(k),
        Some(k) => bail!(
            "--turns {k}: session {:?} has {recorded} turns and {budget}, so --turns must be in 0..={last_call}",
            session.id,
        ),
        None => {
            if recorded > last_call {
                crate::say!(
                    "note: session {:?} used all {} turns, so no call follows turn {recorded}; rendering the last call (--turns {last_call})",
                    session.id,
                    session.max_turns
                );
            }
            Ok(last_call)
        }
    }
}

fn write_text(
    out: &mut impl Write,
    session: &Session,
    k: usize,
    spec: &str,
    messages: &[Message],
) -> std::io::Result<()> {
    let left = match session.budget() {
        Some(n) => format!("{} left", n as usize - k),
        None => "no turn budget".to_string(),
    };
    let chars: usize = messages.iter().map(|m| m.content.chars().count()).sum();
    writeln!(
        out,
        "# session {} · call after {k} of {} turns ({left}) · {spec} · {} messages, {chars} chars",
        session.id,
        session.turn_count(),
        messages.len()
    )?;
    for (i, m) in messages.iter().enumerate() {
        let answers = match (&m.tool_call_id, &m.name) {
            (Some(id), Some(name)) => format!(" → {name} {id}"),
            (Some(id), None) => format!(" → {id}"),
            _ => String::new(),
        };
        writeln!(
            out,
            "\n=== [{i}] {}{answers} ({} chars) ===",
            m.role.as_str().to_uppercase(),
            m.content.chars().count()
        )?;
        writeln!(out, "{}", m.content)?;
        // Tool calls in the JSON the model wrote, one per line, after the text.
        for call in &m.tool_calls {
            writeln!(
                out,
                "[tool call {} {}] {}",
                call.id, call.name, call.arguments
            )?;
        }
    }
    Ok(())
}
