//! The `per-turn-summary` strategy (SPEC section 6.3): `[SYSTEM, USER(mission)]`, then one
//! ASSISTANT/USER pair per turn. A successful turn's ASSISTANT is the summary of
//! SPEC 6.2 computed over that turn alone; a failed turn's is its `raw_response`. The
//! USER after it is `Error: {message}` (failed turns) and the turns line. Each prompt
//! therefore starts with the previous one: the prompt cache is reused in full.
//!
//! A turn's messages do not depend on the call, so the strategy's replay keeps each
//! turn's messages for the session and a call only shares them (their text is
//! reference-counted, [`recap_core::Text`]), answered as the turns added since the
//! previous call.

use recap_core::{
    Answer, Invariant, Message, PromptDelta, RenderRequest, Replay, Session, SpecError, Strategy,
    StrategyInfo, StrategySpec, Turn, reference_first,
};
use recap_history::{push_turns_line, turns_left_after};
use recap_single_user_coalesced::{
    SummaryOptions, canonical_spec, reject_unknown, single_shot, summary_invariants,
    summary_len_hint, write_summary,
};
use std::sync::Arc;

pub const NAME: &str = "per-turn-summary";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PerTurnSummary {
    pub options: SummaryOptions,
}

pub fn info() -> StrategyInfo {
    StrategyInfo {
        name: NAME.to_string(),
        summary: "one ASSISTANT/USER pair per turn; successful turns summarized, failed turns verbatim (append-only)".to_string(),
        options: SummaryOptions::infos(),
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> {
    reject_unknown(spec, &["println_limit", "tool_call_limit"])?;
    Ok(Arc::new(PerTurnSummary {
        options: SummaryOptions::from_spec(spec)?,
    }))
}

impl Strategy for PerTurnSummary {
    fn spec(&self) -> String {
        canonical_spec(NAME, self.options.non_default())
    }

    /// [`render_with`] first, then each turn's messages rendered once per session.
    fn open(&self) -> Box<dyn Replay> {
        let options = self.options;
        reference_first(
            move |request| Ok(render_with(request, options)),
            Box::new(SummaryCache {
                options,
                opening: None,
                turn_messages: Vec::new(),
                last_len: 0,
            }),
        )
    }

    /// The summary's invariants and append-only: a turn's messages never change.
    fn invariants(&self) -> Vec<Invariant> {
        let mut all = summary_invariants(self.options);
        all.push(Invariant::AppendOnly);
        all
    }
}

/// The per-turn-summary prompt with the default options.
pub fn render(request: &RenderRequest<'_>) -> Vec<Message> {
    render_with(request, SummaryOptions::default())
}

pub fn render_with(request: &RenderRequest<'_>, options: SummaryOptions) -> Vec<Message> {
    if let Some(full_history) = single_shot(request) {
        return full_history;
    }
    messages(request, |_, turn| assistant_content(turn, options))
}

/// `[SYSTEM, USER(mission)]`, then per turn its ASSISTANT message (`assistant(i, turn)`)
/// and its USER message.
fn messages(
    request: &RenderRequest<'_>,
    mut assistant: impl FnMut(usize, &Turn) -> String,
) -> Vec<Message> {
    let mut messages = Vec::with_capacity(2 + 2 * request.turns.len());
    messages.push(Message::system(request.system_prompt));
    messages.push(Message::user(request.mission));
    for (i, turn) in request.turns.iter().enumerate() {
        messages.extend(turn_messages(
            turn,
            assistant(i, turn),
            i + 1,
            request.max_turns,
        ));
    }
    messages
}

/// A turn's ASSISTANT message (`assistant`) and the USER message after it; `completed`
/// is its 1-based position.
fn turn_messages(turn: &Turn, assistant: String, completed: usize, max_turns: u32) -> [Message; 2] {
    [
        Message::assistant(assistant),
        Message::user(user_content(turn, completed, max_turns)),
    ]
}

/// The session's opening and turn messages so far (two per turn), each rendered once:
/// per-turn-summary's incremental replay.
struct SummaryCache {
    options: SummaryOptions,
    opening: Option<[Message; 2]>,
    turn_messages: Vec<Message>,
    /// The length of the last prompt answered from the turn messages (0: none).
    last_len: usize,
}

impl Replay for SummaryCache {
    /// Append-only: a call keeps the whole previous prompt when the caller holds it.
    fn call(&mut self, session: &Session, k: usize, held: usize) -> Answer {
        let request = RenderRequest::for_call(session, k)?;
        if let Some(full_history) = single_shot(&request) {
            self.last_len = 0;
            return Ok(PromptDelta::whole(full_history));
        }
        let done = self.turn_messages.len() / 2;
        for (i, turn) in request.turns.iter().enumerate().skip(done) {
            self.turn_messages.extend(turn_messages(
                turn,
                assistant_content(turn, self.options),
                i + 1,
                request.max_turns,
            ));
        }
        let opening = self
            .opening
            .get_or_insert_with(|| recap_history::opening_pair(&request));
        let turns = &self.turn_messages[..2 * request.turns.len()];
        let len = opening.len() + turns.len();
        let kept = if held > 0 && held == self.last_len {
            held
        } else {
            0
        };
        self.last_len = len;
        let mut tail = Vec::with_capacity(len - kept);
        tail.extend_from_slice(&opening[kept.min(2)..]);
        tail.extend_from_slice(&turns[kept.saturating_sub(2)..]);
        Ok(PromptDelta { kept, tail })
    }
}

fn assistant_content(turn: &Turn, options: SummaryOptions) -> String {
    if !turn.success {
        return turn.raw_response.clone();
    }
    successful_summary(turn, options)
}

/// The summary of one successful turn (SPEC 6.3).
fn successful_summary(turn: &Turn, options: SummaryOptions) -> String {
    let one = std::slice::from_ref(turn);
    let mut out = String::with_capacity(summary_len_hint(one, options));
    write_summary(&mut out, one, options);
    out
}
/// `Error: {message}` for a failed turn, then the turns line for the next call.
fn user_content(turn: &Turn, completed: usize, max_turns: u32) -> String {
    let message = if turn.success {
        None
    } else {
        Some(turn.error_message().unwrap_or_default())
    };
    let mut out = String::with_capacity(message.map_or(0, |m| m.len() + 9) + 80);
    if let Some(message) = message {
        out.push_str("Error: ");
        out.push_str(message);
        out.push_str("\n\n");
    }
    push_turns_line(&mut out, turns_left_after(completed, max_turns));
    out
}
