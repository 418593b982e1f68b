//! `recap inspect`: the debug view (DBG-001..005). Compression is for the prompt only;
//! this shows, call by call, the full recorded trace of the turn the call produced
//! (program, prints, tool calls, definitions, error) beside what the strategy sent for
//! that call, with the token count of every message.

use crate::calls::calls;
use crate::counting::{RoleTokens, content_tokens, message_tokens};
use crate::retention::SessionRetention;
use crate::tokenizer::{PROMPT_OVERHEAD, Tokenizer};
use recap_core::{ChatTurn, Form, Observation, PrintOptions, Session, Strategy, Turn, to_clojure};
use std::fmt::Write as _;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InspectError {
    #[error(
        "session {session:?} has {turns} turns; --turn must be between 1 and {turns}, got {asked}"
    )]
    NoSuchTurn {
        session: String,
        turns: usize,
        asked: usize,
    },
    #[error("session {0:?} has no turns: there is no call to show")]
    NoTurns(String),
    /// The strategy does not replay this session (its form, or outside its scope).
    #[error("{0}")]
    NotApplicable(String),
}

/// What to show.
#[derive(Debug, Clone)]
pub struct InspectOptions {
    /// Only the call that produced this turn (1-based); all calls when `None`.
    pub turn: Option<usize>,
    pub tokenizers: Vec<Tokenizer>,
    /// Cut printed values and texts to this many characters (`None`: everything).
    pub max_chars: Option<usize>,
}

fn indent(out: &mut String, text: &str, max_chars: Option<usize>) {
    let (text, cut) = match max_chars {
        Some(n) if text.chars().count() > n => (text.chars().take(n).collect::<String>(), true),
        _ => (text.to_string(), false),
    };
    if text.is_empty() {
        out.push_str("    (empty)\n");
    }
    for line in text.lines() {
        out.push_str("    ");
        out.push_str(line);
        out.push('\n');
    }
    if cut {
        out.push_str("    … (cut; --max-chars)\n");
    }
}

fn value_text(v: &recap_core::Value) -> String {
    to_clojure(v, PrintOptions::default()).0
}

/// The full recorded trace of one turn.
pub fn turn_trace(turn: &Turn, max_chars: Option<usize>) -> String {
    let mut out = String::new();
    let status = if turn.success { "success" } else { "FAILED" };
    let _ = writeln!(out, "── recorded turn {} ({status}) ──", turn.number);
    out.push_str("  program:\n");
    indent(&mut out, &turn.program, max_chars);
    if turn.raw_response != recap_core::session::fenced_program(&turn.program) {
        out.push_str("  raw response (as the model wrote it):\n");
        indent(&mut out, &turn.raw_response, max_chars);
    }
    if let Some(e) = &turn.error {
        out.push_str("  error:\n");
        indent(&mut out, &e.message, max_chars);
        if let Some(r) = e.reason.as_ref().filter(|r| **r != e.message) {
            let _ = writeln!(out, "  error reason: {r}");
        }
    }
    let _ = writeln!(out, "  prints ({}):", turn.prints.len());
    for p in &turn.prints {
        indent(&mut out, p, max_chars);
    }
    let _ = writeln!(out, "  tool calls ({}):", turn.tool_calls.len());
    for c in &turn.tool_calls {
        let mut line = format!("{}({})", c.name, value_text(&c.args));
        if let Some(r) = &c.result {
            let _ = write!(line, " -> {}", value_text(r));
        }
        indent(&mut out, &line, max_chars);
    }
    let _ = writeln!(out, "  definitions ({}):", turn.definitions.len());
    for d in &turn.definitions {
        let mut line = format!("({} {}", d.kind.as_str(), d.name);
        if let Some(doc) = &d.docstring {
            let _ = write!(line, " {doc:?}");
        }
        match &d.value {
            Some(v) => {
                let _ = write!(line, ") = {}", value_text(v));
            }
            None => line.push_str(") = (value not recorded)"),
        }
        indent(&mut out, &line, max_chars);
    }
    if let Some(r) = &turn.result {
        out.push_str("  result:\n");
        indent(&mut out, &value_text(r), max_chars);
    }
    if let Some(f) = &turn.feedback {
        out.push_str("  feedback shown to the model:\n");
        indent(&mut out, f, max_chars);
    }
    if let Some(u) = &turn.usage {
        let usage: Vec<String> = u.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(out, "  recorded usage: {}", usage.join(" "));
    }
    out
}

/// The full recorded trace of one chat turn: the response (text, reasoning, each call
/// with its arguments as written) and every observation.
pub fn chat_turn_trace(turn: &ChatTurn, max_chars: Option<usize>) -> String {
    let mut out = String::new();
    let status = if turn.success { "success" } else { "FAILED" };
    let _ = writeln!(out, "── recorded turn {} ({status}) ──", turn.number);
    out.push_str("  assistant:\n");
    match &turn.assistant.content {
        Some(text) => indent(&mut out, text, max_chars),
        None => out.push_str("    (null)\n"),
    }
    if let Some(r) = &turn.assistant.reasoning {
        out.push_str("  reasoning (not sent back to the model):\n");
        indent(&mut out, r, max_chars);
    }
    let _ = writeln!(out, "  tool calls ({}):", turn.assistant.tool_calls.len());
    for c in &turn.assistant.tool_calls {
        indent(
            &mut out,
            &format!("{} {}({})", c.id, c.name, c.arguments),
            max_chars,
        );
    }
    let _ = writeln!(out, "  observations ({}):", turn.observations.len());
    for o in &turn.observations {
        let head = match o {
            Observation::Tool {
                tool_call_id,
                name,
                is_error,
                ..
            } => format!(
                "  tool result for {tool_call_id}{}{}:",
                name.as_deref()
                    .map(|n| format!(" ({n})"))
                    .unwrap_or_default(),
                if *is_error { " — ERROR" } else { "" }
            ),
            Observation::User {
                environment: true, ..
            } => "  environment output (as a user message):".to_string(),
            Observation::User { .. } => "  user:".to_string(),
        };
        let _ = writeln!(out, "{head}");
        indent(&mut out, o.content(), max_chars);
    }
    if let Some(u) = &turn.usage {
        let usage: Vec<String> = u.iter().map(|(k, v)| format!("{k}={v}")).collect();
        let _ = writeln!(out, "  recorded usage: {}", usage.join(" "));
    }
    out
}

/// The whole debug view of one session under one strategy.
pub fn inspect(
    session: &Session,
    strategy: &dyn Strategy,
    opts: &InspectOptions,
) -> Result<String, InspectError> {
    if let Some(why) = recap_core::strategy::not_applicable(strategy, session) {
        return Err(InspectError::NotApplicable(why));
    }
    let all = calls(session);
    let n = all.len();
    if n == 0 {
        return Err(InspectError::NoTurns(session.id.clone()));
    }
    let shown: Vec<usize> = match opts.turn {
        Some(t) if (1..=n).contains(&t) => vec![t - 1],
        Some(t) => {
            return Err(InspectError::NoSuchTurn {
                session: session.id.clone(),
                turns: n,
                asked: t,
            });
        }
        None => all.collect(),
    };
    let mut retention = SessionRetention::new(session);
    let roles: Vec<RoleTokens> = opts.tokenizers.iter().map(RoleTokens::new).collect();
    let names: Vec<&str> = opts
        .tokenizers
        .iter()
        .map(|t| t.encoding().name())
        .collect();
    let mut out = String::new();
    let budget = match session.budget() {
        Some(b) => format!("max_turns {b}"),
        None => "no turn budget".to_string(),
    };
    let _ = writeln!(
        out,
        "session {} — {} turns ({budget}) — strategy {} — tokens: {}",
        session.id,
        n,
        strategy.spec(),
        names.join(", ")
    );
    out.push_str("mission:\n");
    indent(&mut out, &session.mission, opts.max_chars);
    for k in shown {
        let _ = writeln!(
            out,
            "\n════ call {} of {n}: the prompt after {k} completed turns, which produced turn {} ════",
            k + 1,
            k + 1
        );
        out.push_str(&match session.form {
            Form::Ptc => turn_trace(&session.turns[k], opts.max_chars),
            Form::Chat => chat_turn_trace(&session.chat_turns[k], opts.max_chars),
        });
        match recap_core::render_call(strategy, session, k) {
            Err(e) => {
                let _ = writeln!(out, "── {} FAILED to render: {e} ──", strategy.spec());
            }
            Ok(messages) => {
                let mut totals = vec![PROMPT_OVERHEAD as u64; opts.tokenizers.len()];
                let mut body = String::new();
                for (i, m) in messages.iter().enumerate() {
                    let counts: Vec<String> = opts
                        .tokenizers
                        .iter()
                        .enumerate()
                        .map(|(t, tok)| {
                            let n = message_tokens(&roles[t], m, content_tokens(tok, m));
                            totals[t] += n;
                            format!("{n} tokens ({})", names[t])
                        })
                        .collect();
                    let answers = m
                        .tool_call_id
                        .as_deref()
                        .map(|id| format!(" → {id}"))
                        .unwrap_or_default();
                    let _ = writeln!(
                        body,
                        "  [{i}] {}{answers} · {} · {} chars",
                        m.role,
                        counts.join(", "),
                        m.content.chars().count()
                    );
                    indent(&mut body, &m.content, opts.max_chars);
                    for c in &m.tool_calls {
                        indent(
                            &mut body,
                            &format!("[tool call {} {}] {}", c.id, c.name, c.arguments),
                            opts.max_chars,
                        );
                    }
                }
                let kept = retention.marks(k, &messages);
                let facts = retention.facts_before(k);
                let missing: Vec<&str> = facts
                    .iter()
                    .zip(&kept)
                    .filter(|(_, k)| !**k)
                    .map(|(f, _)| f.as_str())
                    .collect();
                let totals: Vec<String> = totals
                    .iter()
                    .zip(&names)
                    .map(|(t, n)| format!("{t} ({n})"))
                    .collect();
                let _ = writeln!(
                    out,
                    "── sent by {}: {} messages, prompt tokens {} ──",
                    strategy.spec(),
                    messages.len(),
                    totals.join(", ")
                );
                out.push_str(&body);
                let _ = writeln!(
                    out,
                    "  retention: {} of {} facts kept verbatim",
                    facts.len() - missing.len(),
                    facts.len()
                );
                for m in missing {
                    let _ = writeln!(out, "    missing: {m:?}");
                }
            }
        }
    }
    Ok(out)
}
