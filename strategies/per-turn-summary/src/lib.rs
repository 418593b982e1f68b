//! The `per-turn-summary` strategy (SPEC section 6.3): `[SYSTEM, USER(mission)]`, then one
//! ASSISTANT/USER pair per turn. A successful turn's ASSISTANT is the summary of
//! SPEC 6.2 computed over that turn alone; a failed turn's is its `raw_response`. The
//! USER after it is `Error: {message}` (failed turns) and the turns line. Each prompt
//! therefore starts with the previous one: the prompt cache is reused in full.
//!
//! A turn's messages do not depend on the call, so [`Strategy::render_session`] keeps
//! each turn's messages for the session and a call only shares them (their text is
//! reference-counted, [`recap_core::Text`]).

use recap_core::{
    Invariant, Message, RenderError, RenderRequest, Session, SessionIdentity, SessionState,
    SpecError, Strategy, StrategyInfo, StrategySpec, Turn,
};
use recap_full_history::{push_turns_line, turns_left_after};
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

    fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        Ok(render_with(request, self.options))
    }

    fn render_session(
        &self,
        session: &Session,
        k: usize,
        state: &mut SessionState,
    ) -> Result<Vec<Message>, RenderError> {
        let request = RenderRequest::for_call(session, k)?;
        if let Some(full_history) = single_shot(&request) {
            return Ok(full_history);
        }
        let cache = SummaryCache::for_session(state, session, self.options);
        let done = cache.turn_messages.len() / 2;
        for (i, turn) in request.turns.iter().enumerate().skip(done) {
            cache.turn_messages.extend(turn_messages(
                turn,
                assistant_content(turn, self.options),
                i + 1,
                request.max_turns,
            ));
        }
        let opening = cache
            .opening
            .get_or_insert_with(|| recap_full_history::opening_pair(&request));
        let turns = &cache.turn_messages[..2 * request.turns.len()];
        let mut out = Vec::with_capacity(2 + turns.len());
        out.extend_from_slice(opening);
        out.extend_from_slice(turns);
        Ok(out)
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

/// The session's opening and turn messages so far (two per turn), each rendered once.
struct SummaryCache {
    key: SessionIdentity,
    options: SummaryOptions,
    opening: Option<[Message; 2]>,
    turn_messages: Vec<Message>,
}

impl SummaryCache {
    /// The cache in `state` for `session` and `options`, new when `state` held anything
    /// else (another session, other options, another type).
    fn for_session<'s>(
        state: &'s mut SessionState,
        session: &Session,
        options: SummaryOptions,
    ) -> &'s mut Self {
        state.reuse_or_set(
            |cache: &Self| {
                cache.options == options
                    && cache.key.matches(session)
                    && cache.turn_messages.len() <= 2 * session.turns.len()
            },
            || Self {
                key: SessionIdentity::of(session),
                options,
                opening: None,
                turn_messages: Vec::new(),
            },
        )
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
