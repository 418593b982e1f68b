//! `tool-result-clearing` (SPEC 11.3; chat form), after Anthropic's context editing
//! `clear_tool_uses_20250919` and LangChain's client-side `ClearToolUsesEdit`.
//!
//! Computed afresh at every call. A *tool use* is one tool call of an ASSISTANT message
//! with its TOOL result. When the `full-history` prompt of the call counts more than
//! `trigger` tokens (the run's tokenizer, SPEC 11.2), every tool use except the newest
//! `keep` — and except uses of the tools in `exclude_tools` — has its result replaced by
//! `[cleared]` and, with `clear_inputs=true`, its arguments by `{}`. If that removes
//! fewer than `clear_at_least` tokens, nothing is cleared.
//!
//! Where recap differs: Anthropic clears server-side with a placeholder it does not
//! publish; `[cleared]` is the client-side implementations' text. The newest `keep`
//! uses are counted over all tool uses, excluded tools included (an excluded use is
//! never cleared, and it still is one of the most recent uses). The trigger counts
//! prompt tokens by recap's formula, not the provider's input tokens.

use recap_core::{
    BuildContext, Form, Invariant, Message, OptionInfo, RenderRequest, Replay, Role, SpecError,
    Strategy, StrategyInfo, StrategySpec, Text, TokenCounter,
};
use recap_history::chat::{History, Plan, Planner, Source, planned};
use std::sync::Arc;

pub const NAME: &str = "tool-result-clearing";
pub const DEFAULT_TRIGGER: u64 = 100_000;
pub const DEFAULT_KEEP: u64 = 3;
pub const CLEARED: &str = "[cleared]";
pub const CLEARED_INPUT: &str = "{}";
// One shared copy of each placeholder per thread: clearing a result is then a reference,
// not a copy, and the threads of a run do not move one reference count between them.
thread_local! {
    static CLEARED_TEXT: Text = CLEARED.into();
    static CLEARED_INPUT_TEXT: Text = CLEARED_INPUT.into();
}

#[derive(Clone)]
pub struct ToolResultClearing {
    pub trigger: u64,
    pub keep: u64,
    pub clear_at_least: u64,
    pub exclude_tools: Vec<String>,
    pub clear_inputs: bool,
    counter: Arc<dyn TokenCounter>,
}

impl std::fmt::Debug for ToolResultClearing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ToolResultClearing")
            .field("trigger", &self.trigger)
            .field("keep", &self.keep)
            .field("clear_at_least", &self.clear_at_least)
            .field("exclude_tools", &self.exclude_tools)
            .field("clear_inputs", &self.clear_inputs)
            .field("counter", &self.counter.name())
            .finish()
    }
}

const OPTIONS: [&str; 5] = [
    "trigger",
    "keep",
    "clear_at_least",
    "exclude_tools",
    "clear_inputs",
];

pub fn info() -> StrategyInfo {
    let option = |key: &str, default: &str, help: &str| OptionInfo {
        key: key.into(),
        default: default.into(),
        help: help.into(),
    };
    StrategyInfo {
        name: NAME.to_string(),
        summary: "chat form: once the full prompt exceeds `trigger` tokens, older tool results become `[cleared]`, keeping the newest `keep` tool uses (Anthropic clear_tool_uses)".to_string(),
        options: vec![
            option("trigger", &DEFAULT_TRIGGER.to_string(), "clear once the full-history prompt exceeds this many tokens"),
            option("keep", &DEFAULT_KEEP.to_string(), "most recent tool uses never cleared"),
            option("clear_at_least", "0", "clear nothing unless at least this many tokens go"),
            option("exclude_tools", "none", "tool names never cleared, separated by `|`"),
            option("clear_inputs", "false", "also replace the cleared calls' arguments by {}"),
        ],
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec, ctx: &BuildContext) -> Result<Arc<dyn Strategy>, SpecError> {
    spec.only_options(&OPTIONS)?;
    Ok(Arc::new(ToolResultClearing {
        trigger: spec.int_at_least("trigger", 0, DEFAULT_TRIGGER)?,
        keep: spec.int_at_least("keep", 0, DEFAULT_KEEP)?,
        clear_at_least: spec.int_at_least("clear_at_least", 0, 0)?,
        exclude_tools: spec.name_list("exclude_tools")?,
        clear_inputs: spec.flag("clear_inputs", false)?,
        counter: ctx.require_counter(NAME)?,
    }))
}

/// One tool use: the ASSISTANT message (history index) and call index making it.
struct Use {
    message: usize,
    call: usize,
}

impl ToolResultClearing {
    /// A strategy counting with `counter`, with the published defaults otherwise.
    pub fn new(counter: Arc<dyn TokenCounter>) -> Self {
        ToolResultClearing {
            trigger: DEFAULT_TRIGGER,
            keep: DEFAULT_KEEP,
            clear_at_least: 0,
            exclude_tools: Vec::new(),
            clear_inputs: false,
            counter,
        }
    }

    fn excluded(&self, tool: &str) -> bool {
        self.exclude_tools.iter().any(|t| t == tool)
    }
}

impl Planner for ToolResultClearing {
    fn plan(&mut self, request: &RenderRequest<'_>, history: &mut History) -> Plan {
        let counter = self.counter.as_ref();
        let opening: u64 = history.opening_tokens(counter, request).iter().sum();
        let full = 3 + opening + history.tokens(counter).iter().sum::<u64>();
        let n = history.messages().len();
        let mut plan = Plan::opening();
        if full <= self.trigger {
            plan.push_run(0..n);
            return plan;
        }
        let msgs = history.messages();
        let uses: Vec<Use> = msgs
            .iter()
            .enumerate()
            .flat_map(|(i, m)| (0..m.tool_calls.len()).map(move |call| Use { message: i, call }))
            .collect();
        let clearable = uses.len().saturating_sub(self.keep as usize);
        let mut removed = 0u64;
        // Per history message, how it is changed: `Some(0)` a result cleared, `Some(c)`
        // the arguments of its first `c` calls cleared (the excluded tools' calls aside:
        // the clearable uses are a prefix of all uses, so within one message a prefix of
        // its calls).
        let mut changes: Vec<Option<u32>> = vec![None; n];
        let mut results = Vec::new();
        for u in &uses[..clearable] {
            let call = &msgs[u.message].tool_calls[u.call];
            if self.excluded(&call.name) {
                continue;
            }
            // The call's result(s): TOOL messages after it, before the next ASSISTANT.
            for (j, m) in msgs.iter().enumerate().skip(u.message + 1) {
                if m.role == Role::Assistant {
                    break;
                }
                if m.role == Role::Tool && m.tool_call_id.as_deref() == Some(call.id.as_str()) {
                    results.push(j);
                    changes[j] = Some(0);
                }
            }
            if self.clear_inputs {
                removed += counter
                    .count(&call.arguments)
                    .saturating_sub(counter.count(CLEARED_INPUT));
                changes[u.message] = Some(u.call as u32 + 1);
            }
        }
        // A TOOL result's content tokens: its message's count less the frame and role
        // (results carry no tool calls), counted once per session by the history.
        let tool_role = counter.count(Role::Tool.as_str());
        let cleared = counter.count(CLEARED);
        for j in results {
            let content = history.message_tokens(counter, j) - 3 - tool_role;
            removed += content.saturating_sub(cleared);
        }
        if removed < self.clear_at_least {
            plan.push_run(0..n);
            return plan;
        }
        for (i, change) in changes.into_iter().enumerate() {
            plan.push(match change {
                Some(variant) => Source::Changed(i, variant),
                None => Source::Kept(i),
            });
        }
        plan
    }

    /// A history message as [`Source::Changed`]`(_, variant)` says (see `plan`).
    fn changed(&self, _i: usize, message: &Message, variant: u32) -> Message {
        let mut m = message.clone();
        if variant == 0 {
            m.content = CLEARED_TEXT.with(Text::clone);
        } else {
            m.tool_calls.edit(|calls| {
                for call in &mut calls[..variant as usize] {
                    if !self.excluded(&call.name) {
                        call.arguments = CLEARED_INPUT_TEXT.with(Text::clone);
                    }
                }
            });
        }
        m
    }
}

impl Strategy for ToolResultClearing {
    fn spec(&self) -> String {
        StrategySpec::named(NAME)
            .non_default("clear_at_least", self.clear_at_least, 0)
            .non_default("clear_inputs", self.clear_inputs, false)
            .non_default("exclude_tools", self.exclude_tools.join("|"), String::new())
            .non_default("keep", self.keep, DEFAULT_KEEP)
            .non_default("trigger", self.trigger, DEFAULT_TRIGGER)
            .to_string()
    }

    fn open(&self) -> Box<dyn Replay> {
        planned(self.clone())
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
