//! `recap render`: the prompt strategies render for one call of a recorded session,
//! with its token counts.

use anyhow::{Context, Result, bail};
use recap_core::{Message, Registry, RenderRequest, Session};
use recap_harness::counting::{RoleTokens, content_tokens, message_tokens};
use recap_harness::report::fmt::{int, plural};
use recap_harness::tokenizer::{Backend, Encoding, PROMPT_OVERHEAD, Tokenizer};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// The prompt as an OpenAI chat-completions `messages` array ({"role", "content"},
    /// plus `tool_calls`, `tool_call_id` and `name` in chat-form sessions): the exact
    /// bytes, sendable to any compatible endpoint as they are. With several
    /// strategies, one JSON object per line: `{"strategy", "tokenizer",
    /// "prompt_tokens", "messages"}`.
    Json,
    /// A readable view with a header per message and its token count.
    Text,
}

#[derive(clap::Args)]
pub struct Args {
    /// Corpus file (JSON Lines, one session per line).
    corpus: PathBuf,
    /// The session's id (`recap sessions FILE` lists them).
    #[arg(long)]
    session: String,
    /// The call that produced turn K (1 = the first call, whose prompt holds no turn
    /// yet; the prompt of call K holds turns 1..K-1), as `recap inspect --turn K`. K
    /// may be one past the last recorded turn: the call that would come next. Default:
    /// that next call, or the last one the turn budget allows.
    #[arg(long, value_name = "K", allow_negative_numbers = true, value_parser = parse_turn)]
    turn: Option<usize>,
    /// Not a flag of this recap: a call is named by the turn it produced (`--turn`).
    #[arg(long, value_name = "K", hide = true, allow_negative_numbers = true)]
    turns: Option<String>,
    /// Strategy spec: `name` or `name:key=value,...` (see `recap strategies`).
    /// Repeatable: the prompts one after the other, each with its token count.
    #[arg(long = "strategy", value_name = "SPEC", required = true)]
    strategies: Vec<String>,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// The tokenizer that counts the prompts (and that strategies with token budgets
    /// count with).
    #[arg(long, value_name = "NAME", default_value = "o200k_base", value_parser = ["o200k_base", "cl100k_base", "deepseek_v3"])]
    tokenizer: String,
    #[command(flatten)]
    plugins: super::plugins::PluginArgs,
}

/// `K` names a turn, so it is at least 1; said in those words instead of clap's
/// generic advice to write `-- -1`.
fn parse_turn(text: &str) -> Result<usize, String> {
    match text.trim().parse::<i128>() {
        Ok(k) if k < 1 => Err(format!(
            "{k}: turns are numbered from 1 (--turn 1 is the first call, before any turn)"
        )),
        Ok(k) => usize::try_from(k).map_err(|_| format!("{k} is too large")),
        Err(_) => Err(format!(
            "{text:?} is not a turn number (1 = the first call)"
        )),
    }
}

/// One strategy's prompt and its token counts.
struct Rendered {
    spec: String,
    messages: Vec<Message>,
    /// Tokens of each message in the prompt, and of the whole prompt.
    per_message: Vec<u64>,
    total: u64,
}

pub fn run(args: Args) -> Result<ExitCode> {
    if let Some(k) = &args.turns {
        let next = k
            .trim()
            .parse::<usize>()
            .map_or_else(|_| "K+1".to_string(), |k| (k + 1).to_string());
        bail!(
            "--turns counted the turns completed before the call; recap render now names the call by the turn it produced, as recap inspect does: --turn {next}"
        );
    }
    // Built-ins plus the strategies of `--plugin` / `--plugin-dir` libraries.
    let mut registry: Registry = args.plugins.registry()?;
    let encoding: Encoding = args
        .tokenizer
        .parse()
        .with_context(|| format!("--tokenizer {:?}", args.tokenizer))?;
    let tokenizer = Tokenizer::get(encoding, Backend::Fast);
    registry.set_counter(Arc::new(tokenizer));
    let strategies = args
        .strategies
        .iter()
        .map(|spec| {
            registry
                .build(spec)
                .with_context(|| format!("--strategy {spec:?}"))
        })
        .collect::<Result<Vec<_>>>()?;
    let session = super::sessions::find(&args.corpus, &args.session)?;
    let k = call_index(&session, args.turn)?;
    RenderRequest::for_call(&session, k)
        .with_context(|| format!("session {:?}, --turn {}", session.id, k + 1))?;
    let roles = RoleTokens::new(&tokenizer);
    let mut rendered = Vec::new();
    for strategy in &strategies {
        if let Some(why) = recap_core::strategy::not_applicable(strategy.as_ref(), &session) {
            bail!("{why} (see `recap strategies`)");
        }
        let messages =
            recap_core::render_call(strategy.as_ref(), &session, k).with_context(|| {
                format!(
                    "strategy {} failed to render call {}",
                    strategy.spec(),
                    k + 1
                )
            })?;
        let per_message: Vec<u64> = messages
            .iter()
            .map(|m| message_tokens(&roles, m, content_tokens(&tokenizer, m)))
            .collect();
        rendered.push(Rendered {
            spec: strategy.spec(),
            total: PROMPT_OVERHEAD as u64 + per_message.iter().sum::<u64>(),
            per_message,
            messages,
        });
    }

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match args.format {
        Format::Json if rendered.len() == 1 => {
            let wire: Vec<_> = rendered[0].messages.iter().map(Message::openai).collect();
            serde_json::to_writer(&mut out, &wire)?;
            writeln!(out)?;
        }
        Format::Json => {
            for r in &rendered {
                let wire: Vec<_> = r.messages.iter().map(Message::openai).collect();
                let line = serde_json::json!({
                    "strategy": r.spec,
                    "tokenizer": args.tokenizer,
                    "prompt_tokens": r.total,
                    "messages": wire,
                });
                serde_json::to_writer(&mut out, &line)?;
                writeln!(out)?;
            }
        }
        Format::Text => {
            for (i, r) in rendered.iter().enumerate() {
                if i > 0 {
                    writeln!(out)?;
                }
                write_text(&mut out, &session, k, r, &args.tokenizer)?;
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The call to render, as an index (turns completed before it): `--turn K` as given
/// (checked), or the call after every recorded turn, clamped to the last call the
/// budget allows.
fn call_index(session: &Session, turn: Option<usize>) -> Result<usize> {
    let recorded = session.turn_count();
    let last_call = recorded.min(session.max_turns.saturating_sub(1) as usize);
    let budget = match session.budget() {
        Some(n) => format!("max_turns {n}"),
        None => "no recorded turn budget".to_string(),
    };
    match turn {
        Some(t) if t - 1 <= last_call => Ok(t - 1),
        Some(t) => bail!(
            "--turn {t}: session {:?} has {} and {budget}, so --turn must be in 1..={}",
            session.id,
            plural(recorded as u64, "turn", "turns"),
            last_call + 1
        ),
        None => {
            if recorded > last_call {
                crate::say!(
                    "note: session {:?} used all {} turns, so no call follows turn {recorded}; rendering the last call (--turn {})",
                    session.id,
                    session.max_turns,
                    last_call + 1
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
    r: &Rendered,
    tokenizer: &str,
) -> std::io::Result<()> {
    let left = match session.budget() {
        Some(n) => format!("{} left", n as usize - k),
        None => "no turn budget".to_string(),
    };
    let produced = if k < session.turn_count() {
        format!("produced turn {}", k + 1)
    } else {
        "after the last recorded turn".to_string()
    };
    writeln!(
        out,
        "# session {} · call {} ({produced}; its prompt holds {} of {} recorded turns, {left}) · {} · {}, {} prompt tokens ({tokenizer})",
        session.id,
        k + 1,
        k,
        session.turn_count(),
        r.spec,
        plural(r.messages.len() as u64, "message", "messages"),
        int(r.total),
    )?;
    for (i, (m, tokens)) in r.messages.iter().zip(&r.per_message).enumerate() {
        let answers = match (&m.tool_call_id, &m.name) {
            (Some(id), Some(name)) => format!(" → {name} {id}"),
            (Some(id), None) => format!(" → {id}"),
            _ => String::new(),
        };
        writeln!(
            out,
            "\n=== [{i}] {}{answers} ({}) ===",
            m.role.as_str().to_uppercase(),
            plural(*tokens, "token", "tokens")
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
