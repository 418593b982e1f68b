//! The `single-user-coalesced` strategy (SPEC section 6.2, normative source: the
//! requirements table): `[SYSTEM, USER(content)]`, where content is the mission, the
//! summary of all successful turns, each failed turn in full, and the turns line.
//!
//! The summary, the failed-turn part and the "context" (mission + summary + failed
//! turns, without the turns line) are public: `per-turn-summary` and `rolling-window`
//! render them exactly as this strategy does.

mod cache;
mod options;
mod pieces;
mod same;
mod summary;
mod texts;

pub use cache::SummaryCache;

pub use options::{
    DEFAULT_PRINTLN_LIMIT, DEFAULT_TOOL_CALL_LIMIT, SummaryOptions, canonical_spec, reject_unknown,
};
pub use same::same_value;
pub use summary::{summary, summary_len_hint, write_summary};
pub use texts::{
    ARGS_PRINT, PRINT_CHAR_LIMIT, SAMPLE_PRINT, docstring, push_cut_print, push_sanitized_docstring,
};

use pieces::{Direct, Pieces};
use recap_core::{
    Answer, Invariant, Message, PromptDelta, RenderRequest, Replay, Session, SpecError, Strategy,
    StrategyInfo, StrategySpec, Turn, reference_first,
};
use std::sync::Arc;

pub const NAME: &str = "single-user-coalesced";

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SingleUserCoalesced {
    pub options: SummaryOptions,
}

pub fn info() -> StrategyInfo {
    StrategyInfo {
        name: NAME.to_string(),
        summary: "one USER message: mission, summary of successful turns, failed turns in full, turns left (compress_history: true)".to_string(),
        options: SummaryOptions::infos(),
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> {
    reject_unknown(spec, &["println_limit", "tool_call_limit"])?;
    Ok(Arc::new(SingleUserCoalesced {
        options: SummaryOptions::from_spec(spec)?,
    }))
}

impl Strategy for SingleUserCoalesced {
    fn spec(&self) -> String {
        canonical_spec(NAME, self.options.non_default())
    }

    /// [`render_with`] first, then the summary's pieces reused from the earlier calls
    /// of the session (see [`SummaryCache`]).
    fn open(&self) -> Box<dyn Replay> {
        let options = self.options;
        reference_first(
            move |request| Ok(render_with(request, options)),
            Box::new(Summarised {
                options,
                cache: SummaryCache::new(),
            }),
        )
    }

    fn invariants(&self) -> Vec<Invariant> {
        summary_invariants(self.options)
    }
}

/// single-user-coalesced's incremental replay.
struct Summarised {
    options: SummaryOptions,
    cache: SummaryCache,
}

impl Replay for Summarised {
    fn call(&mut self, session: &Session, k: usize, _held: usize) -> Answer {
        let request = RenderRequest::for_call(session, k)?;
        if let Some(uncompressed) = uncompressed(&request) {
            return Ok(PromptDelta::whole(uncompressed));
        }
        let cache = &mut self.cache;
        let mut content = String::with_capacity(cache.len_hint(session, k, self.options) + 80);
        cache.write_context(&mut content, session, k, self.options);
        Ok(PromptDelta::whole(finish(&request, content)))
    }
}

/// The invariants (SPEC 7) that every strategy built on the summary keeps: the
/// universal ones, the mission first, failed turns verbatim, the turns line, and the
/// summary's limits.
pub fn summary_invariants(options: SummaryOptions) -> Vec<Invariant> {
    let mut all = Invariant::UNIVERSAL.to_vec();
    all.extend([
        Invariant::MissionLeadsFirstUser,
        Invariant::FailedTurnsVerbatim,
        Invariant::TurnsLine,
        Invariant::Limits {
            tool_call_limit: options.tool_call_limit,
            println_limit: options.println_limit,
        },
    ]);
    all
}

/// SS-001: a single-shot session (`max_turns = 1`) is not compressed; every strategy
/// built on the summary renders it as full-history. `None` for any other session.
pub fn single_shot(request: &RenderRequest<'_>) -> Option<Vec<Message>> {
    (request.max_turns == 1).then(|| recap_history::render(request))
}

/// The prompts this strategy leaves uncompressed, as full-history: no turn yet
/// (SPEC 5) or a single-shot session ([`single_shot`]).
fn uncompressed(request: &RenderRequest<'_>) -> Option<Vec<Message>> {
    if request.turns.is_empty() {
        return Some(recap_history::render(request));
    }
    single_shot(request)
}

/// The single-user-coalesced prompt for a request; never fails.
pub fn render(request: &RenderRequest<'_>) -> Vec<Message> {
    render_with(request, SummaryOptions::default())
}

/// As [`render`], with explicit options.
pub fn render_with(request: &RenderRequest<'_>, options: SummaryOptions) -> Vec<Message> {
    if let Some(uncompressed) = uncompressed(request) {
        return uncompressed;
    }
    let mut content =
        String::with_capacity(context_len_hint(request.mission, request.turns, options) + 80);
    write_context(&mut content, request.mission, request.turns, options);
    finish(request, content)
}

/// The prompt around a written context: the turns line, then `[SYSTEM, USER]`.
fn finish(request: &RenderRequest<'_>, mut content: String) -> Vec<Message> {
    separate(&mut content, 0);
    recap_history::push_turns_line(&mut content, request.turns_left());
    vec![
        Message::system(request.system_prompt),
        Message::user(content),
    ]
}

/// Appends the mission, the summary of the successful turns among `turns`, and each
/// failed turn (CMP-002, ERR-001/002), the non-empty ones joined by a blank line
/// (MSG-003/004). No turns line.
pub fn write_context(out: &mut String, mission: &str, turns: &[Turn], options: SummaryOptions) {
    write_context_with(out, mission, turns, options, &mut Direct::default());
}

/// [`write_context`] with the summary's per-item texts taken from `pieces`.
fn write_context_with<'t, P: Pieces<'t>>(
    out: &mut String,
    mission: &str,
    turns: &'t [Turn],
    options: SummaryOptions,
    pieces: &mut P,
) {
    let start = out.len();
    out.push_str(mission);
    let before_summary = out.len();
    separate(out, start);
    if !summary::write_summary_with(out, turns, options, pieces) {
        out.truncate(before_summary);
    }
    for turn in turns.iter().filter(|t| !t.success) {
        separate(out, start);
        write_failed_turn(out, turn);
    }
}

/// A rough size of [`write_context`]'s output, to pre-size strings.
pub fn context_len_hint(mission: &str, turns: &[Turn], options: SummaryOptions) -> usize {
    let failed: usize = turns
        .iter()
        .filter(|t| !t.success)
        .map(|t| t.program.len() + t.error_message().map_or(0, str::len) + 64)
        .sum();
    mission.len() + 2 + summary_len_hint(turns, options) + failed
}

/// A failed turn as its own part (CMP-002, ERR-002/003):
/// ````text
/// ---
/// Your previous attempt:
/// ```clojure
/// {program}
/// ```
///
/// Error: {message}
/// ---
/// ````
pub fn write_failed_turn(out: &mut String, turn: &Turn) {
    out.push_str("---\nYour previous attempt:\n```clojure\n");
    out.push_str(&turn.program);
    out.push_str("\n```\n\nError: ");
    out.push_str(turn.error_message().unwrap_or_default());
    out.push_str("\n---");
}

/// Joins parts with a blank line: adds `\n\n` unless nothing was written since `start`.
fn separate(out: &mut String, start: usize) {
    if out.len() > start {
        out.push_str("\n\n");
    }
}
