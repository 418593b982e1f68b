//! The `ptc-runner` strategy: the original renderer applied to a recap request.

use crate::cache::RenderCache;
use crate::history::CallRef;
use crate::namespace::{MemoryEntry, SampleLimits};
use crate::suc::{self, Context, Limits, TurnView};
use recap_core::memory::fold;
use recap_core::{
    Answer, Invariant, Message, OptionInfo, PromptDelta, RenderRequest, Replay, Session, SpecError,
    Strategy, StrategyInfo, StrategySpec, Turn,
};
use std::borrow::Cow;
use std::sync::Arc;

pub const NAME: &str = "ptc-runner";

/// `(key, default, help)` of every option, in the order `recap strategies` lists them.
const OPTIONS: [(&str, u32, &str); 4] = [
    (
        "println_limit",
        15,
        "most recent println calls kept in ;; Output: (shown only when a tool named println exists)",
    ),
    (
        "tool_call_limit",
        20,
        "most recent tool calls kept in ;; Tool calls made:",
    ),
    (
        "sample_limit",
        3,
        "collection items shown in data/ and user/ samples",
    ),
    (
        "sample_printable_limit",
        80,
        "characters of a string shown in data/ and user/ samples",
    ),
];

/// The original `SingleUserCoalesced` renderer with its options.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PtcRunner {
    pub limits: Limits,
}

pub fn info() -> StrategyInfo {
    StrategyInfo {
        name: NAME.to_string(),
        summary: "the original ptc_runner SingleUserCoalesced renderer, byte for byte \
                  (namespace sections, last error only, FINAL WORK TURN)"
            .to_string(),
        options: OPTIONS
            .iter()
            .map(|(key, default, help)| OptionInfo {
                key: (*key).to_string(),
                default: default.to_string(),
                help: (*help).to_string(),
            })
            .collect(),
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> {
    Ok(Arc::new(PtcRunner::from_spec(spec)?))
}

impl PtcRunner {
    /// Reads the options (integers ≥ 1, defaults when absent); unknown keys are errors.
    pub fn from_spec(spec: &StrategySpec) -> Result<Self, SpecError> {
        if let Some(key) = spec
            .options
            .keys()
            .find(|k| !OPTIONS.iter().any(|(o, _, _)| o == k))
        {
            return Err(SpecError::UnknownOption {
                strategy: spec.name.clone(),
                key: key.clone(),
                known: OPTIONS.map(|(k, _, _)| k).join(", "),
            });
        }
        let get = |i: usize| -> Result<usize, SpecError> {
            let (key, default, _) = OPTIONS[i];
            Ok(spec.positive_int(key, default)? as usize)
        };
        Ok(Self {
            limits: Limits {
                println_limit: get(0)?,
                tool_call_limit: get(1)?,
                samples: SampleLimits {
                    limit: get(2)?,
                    printable_limit: get(3)?,
                },
            },
        })
    }

    fn values(&self) -> [usize; 4] {
        let l = self.limits;
        [
            l.println_limit,
            l.tool_call_limit,
            l.samples.limit,
            l.samples.printable_limit,
        ]
    }

    /// The messages and the original's stats object for a request, through the
    /// reference renderer ([`suc::to_messages`], the code the golden cases check).
    /// [`Strategy::render`] gives the same messages faster ([`RenderCache`]).
    pub fn render_with_stats(&self, request: &RenderRequest<'_>) -> (Vec<Message>, suc::Stats) {
        // The original ran its renderer only from the second call on; the first call is
        // the mission itself (SPEC 5: every strategy's zero-turn prompt).
        if request.turns.is_empty() {
            return (
                vec![
                    Message::system(request.system_prompt),
                    Message::user(request.mission),
                ],
                suc::Stats::default(),
            );
        }
        let live = fold(request.turns);
        let memory: Vec<MemoryEntry<'_>> = live
            .iter()
            .map(|d| MemoryEntry {
                name: &d.name,
                value: d.value.as_ref(),
                function: d.is_function(),
                docstring: d.docstring.as_deref(),
            })
            .collect();
        let turns: Vec<TurnView<'_>> = request.turns.iter().map(view).collect();
        let ctx = Context {
            system_prompt: request.system_prompt,
            prompt: request.mission,
            tools: request.tools,
            data: request.data,
            memory: &memory,
            // The original counted the turns left after the one being generated.
            turns_left: request.turns_left().saturating_sub(1),
            signature: None,
            field_descriptions: None,
            limits: self.limits,
        };
        suc::to_messages(&turns, &ctx)
    }
}

fn view(turn: &Turn) -> TurnView<'_> {
    TurnView {
        success: turn.success,
        program: Some(&turn.program),
        error: Cow::Borrowed(turn.error_message().unwrap_or_default()),
        prints: turn.prints.iter().map(String::as_str).collect(),
        tool_calls: turn
            .tool_calls
            .iter()
            .map(|c| CallRef {
                name: &c.name,
                args: &c.args,
            })
            .collect(),
    }
}

/// ptc-runner's replay: the session's [`RenderCache`], made at its first call.
struct Cached {
    limits: Limits,
    cache: Option<RenderCache>,
}

impl Replay for Cached {
    fn call(&mut self, session: &Session, k: usize, _held: usize) -> Answer {
        let request = RenderRequest::for_call(session, k)?;
        let limits = self.limits;
        let cache = self
            .cache
            .get_or_insert_with(|| RenderCache::sized_for(session, limits));
        Ok(PromptDelta::whole(cache.render(&request)))
    }
}

impl Strategy for PtcRunner {
    fn spec(&self) -> String {
        let mut out = NAME.to_string();
        let mut first = true;
        // OPTIONS is not sorted by key; the canonical spec is.
        let mut pairs: Vec<(&str, usize, u32)> = OPTIONS
            .iter()
            .zip(self.values())
            .map(|((k, d, _), v)| (*k, v, *d))
            .collect();
        pairs.sort_by_key(|(k, _, _)| *k);
        for (key, value, default) in pairs {
            if value != default as usize {
                out.push(if first { ':' } else { ',' });
                first = false;
                out.push_str(&format!("{key}={value}"));
            }
        }
        out
    }

    /// Reuses the texts printed for the session's earlier calls (see [`RenderCache`]).
    fn open(&self) -> Box<dyn Replay> {
        Box::new(Cached {
            limits: self.limits,
            cache: None,
        })
    }

    /// Not kept: every failed turn verbatim (only the last error is shown, and only while
    /// failing), the recap turns line (the text and count differ), append-only.
    fn invariants(&self) -> Vec<Invariant> {
        let mut all = Invariant::UNIVERSAL.to_vec();
        all.extend([
            Invariant::MissionLeadsFirstUser,
            Invariant::Limits {
                tool_call_limit: u32::try_from(self.limits.tool_call_limit).unwrap_or(u32::MAX),
                println_limit: u32::try_from(self.limits.println_limit).unwrap_or(u32::MAX),
            },
        ]);
        all
    }
}
