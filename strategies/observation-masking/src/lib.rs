//! `observation-masking` (SPEC 11.3; chat form): the full history, except that
//! environment output — TOOL results, and USER messages marked `environment` — of turns
//! older than the last `window` is replaced by `Old environment output: (N lines
//! omitted)`. After SWE-agent's `LastNObservations` and the masking of "The Complexity
//! Trap" (arXiv 2508.21433). Messages, roles and tool-call ids stay, so every result
//! keeps its call; the model's own responses and user replies are never masked.
//!
//! `polling` (SWE-agent's option for keeping the prompt cache) moves the boundary only
//! every `polling` calls: the turns masked at the call after `k` turns are those up to
//! ⌊k / polling⌋ · polling − window.
//!
//! Where recap differs from SWE-agent (docs/strategies.md has the full list): the window
//! counts turns, not observation items (the same for one observation per turn), tags do
//! not exist in recorded logs, and lines are broken at `\n`, `\r\n` and `\r` only
//! (SPEC 11.3), where Python's `splitlines` also breaks at a few rare control and
//! Unicode separators.

use recap_core::{
    Form, Invariant, Message, OptionInfo, RenderRequest, Replay, SpecError, Strategy, StrategyInfo,
    StrategySpec, Text,
};
use recap_history::chat::{History, Plan, Planner, Source, planned};
use std::sync::Arc;

pub const NAME: &str = "observation-masking";
pub const DEFAULT_WINDOW: u32 = 10;
pub const DEFAULT_POLLING: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObservationMasking {
    /// How many of the most recent turns keep their environment output.
    pub window: u32,
    /// The boundary moves every `polling` calls (1: at every call).
    pub polling: u32,
}

pub fn info() -> StrategyInfo {
    StrategyInfo {
        name: NAME.to_string(),
        summary: "chat form: full history, environment output older than `window` turns replaced by `Old environment output: (N lines omitted)` (SWE-agent LastNObservations)".to_string(),
        options: vec![
            OptionInfo {
                key: "window".into(),
                default: DEFAULT_WINDOW.to_string(),
                help: "most recent turns whose tool results / environment output stay verbatim"
                    .into(),
            },
            OptionInfo {
                key: "polling".into(),
                default: DEFAULT_POLLING.to_string(),
                help: "move the masking boundary only every `polling` calls (keeps the prompt cache in between)".into(),
            },
        ],
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> {
    spec.only_options(&["window", "polling"])?;
    Ok(Arc::new(ObservationMasking {
        window: spec.positive_int("window", DEFAULT_WINDOW)?,
        polling: spec.positive_int("polling", DEFAULT_POLLING)?,
    }))
}

/// The number of lines of `text`: `\n`, `\r\n` and `\r` break lines, a trailing break
/// starts no new line, and the empty text has none. (memchr finds the breaks: a
/// byte-by-byte loop was 1.4 % of a chat run, masked outputs being long.)
pub fn line_count(text: &str) -> usize {
    let bytes = text.as_bytes();
    let mut lines = 0;
    // Where the line after the last break starts.
    let mut start = 0;
    for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
        // The `\n` of a `\r\n` ends no other line.
        let crlf = i > 0 && i == start && bytes[i] == b'\n' && bytes[i - 1] == b'\r';
        if !crlf {
            lines += 1;
        }
        start = i + 1;
    }
    lines + usize::from(start < bytes.len())
}

/// What replaces a masked observation.
pub fn placeholder(content: &str) -> String {
    format!(
        "Old environment output: ({} lines omitted)",
        line_count(content)
    )
}

/// The strategy's planner, which keeps across the calls of a session the placeholder
/// of each history message masked so far (it depends on the message alone, and a
/// masked message stays masked at every later call).
struct Masking {
    strategy: ObservationMasking,
    placeholders: Vec<Option<Text>>,
}

impl ObservationMasking {
    /// How many of the first turns are masked at the call after `k` turns (SPEC 11.3):
    /// ⌊k / polling⌋ · polling − window, at least 0.
    pub fn masked_turns(&self, k: usize) -> usize {
        let polling = self.polling.max(1) as usize;
        (k / polling * polling).saturating_sub(self.window as usize)
    }
}

impl Planner for Masking {
    /// Environment output of the turns before the last `window` masked
    /// ([`Source::Changed`]), with each masked message's placeholder made once.
    fn plan(&mut self, _request: &RenderRequest<'_>, history: &mut History) -> Plan {
        let masked_turns = self.strategy.masked_turns(history.turns());
        let masked_end = history.turn_start(masked_turns);
        let msgs = history.messages();
        let placeholders = &mut self.placeholders;
        if placeholders.len() < masked_end {
            placeholders.resize(masked_end, None);
        }
        let mut plan = Plan::opening();
        for (i, m) in msgs.iter().enumerate().take(masked_end) {
            if history.is_environment(i) {
                placeholders[i].get_or_insert_with(|| placeholder(&m.content).into());
                plan.push(Source::Changed(i, 0));
            } else {
                plan.push(Source::Kept(i));
            }
        }
        plan.push_run(masked_end..msgs.len());
        plan
    }

    fn changed(&self, i: usize, m: &Message, _variant: u32) -> Message {
        masked(&self.placeholders, i, m)
    }
}

/// History message `i`, `m`, masked: everything but the content, which is replaced
/// (not copied first).
fn masked(placeholders: &[Option<Text>], i: usize, m: &Message) -> Message {
    Message {
        role: m.role,
        content: placeholders[i]
            .clone()
            .unwrap_or_else(|| placeholder(&m.content).into()),
        tool_calls: m.tool_calls.clone(),
        tool_call_id: m.tool_call_id.clone(),
        name: m.name.clone(),
    }
}

impl Strategy for ObservationMasking {
    fn spec(&self) -> String {
        StrategySpec::named(NAME)
            .non_default("window", self.window, DEFAULT_WINDOW)
            .non_default("polling", self.polling, DEFAULT_POLLING)
            .to_string()
    }

    fn open(&self) -> Box<dyn Replay> {
        planned(Masking {
            strategy: *self,
            placeholders: Vec::new(),
        })
    }

    fn invariants(&self) -> Vec<Invariant> {
        let mut all = Invariant::UNIVERSAL.to_vec();
        all.push(Invariant::MissionLeadsFirstUser);
        all
    }

    fn forms(&self) -> Vec<Form> {
        vec![Form::Chat]
    }
}

#[cfg(test)]
mod tests;
