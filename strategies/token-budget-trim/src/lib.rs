//! `token-budget-trim` (SPEC 11.3; chat form): SYSTEM, USER(mission), then the longest
//! suffix of the history whose whole prompt fits `max_tokens`, counted with the run's
//! tokenizer by the formula of SPEC 11.2. After LangChain's `trim_messages(strategy=
//! "last", include_system=True, start_on="human")`, with one deliberate difference: a
//! suffix never starts with a TOOL message, where LangChain can send a result without
//! its call (an open LangChain bug; OpenAI rejects such a request).
//!
//! With `keep_mission=false` it behaves as LangChain does: the mission is the first
//! history message, the suffix must start with a USER message, and when none fits only
//! SYSTEM is sent. A dropped mission is then reported by the `mission-verbatim`
//! invariant at every call that drops it — counted, never hidden.
//!
//! `max_tokens` has no published default (LangChain requires it); recap's default of
//! 8,000 is chosen so that the strategy trims on the bundled bench-data.

use recap_core::{
    BuildContext, Form, Invariant, OptionInfo, RenderRequest, Replay, Role, SpecError, Strategy,
    StrategyInfo, StrategySpec, TokenCounter,
};
use recap_history::chat::{History, Plan, Planner, Source, planned};
use std::sync::Arc;

pub const NAME: &str = "token-budget-trim";
pub const DEFAULT_MAX_TOKENS: u64 = 8_000;

#[derive(Clone)]
pub struct TokenBudgetTrim {
    pub max_tokens: u64,
    pub keep_mission: bool,
    counter: Arc<dyn TokenCounter>,
}

impl std::fmt::Debug for TokenBudgetTrim {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenBudgetTrim")
            .field("max_tokens", &self.max_tokens)
            .field("keep_mission", &self.keep_mission)
            .field("counter", &self.counter.name())
            .finish()
    }
}

pub fn info() -> StrategyInfo {
    StrategyInfo {
        name: NAME.to_string(),
        summary: "chat form: the most recent messages that fit `max_tokens` (the run's tokenizer), never a tool result without its call (LangChain trim_messages, strategy=last)".to_string(),
        options: vec![
            OptionInfo {
                key: "max_tokens".into(),
                default: DEFAULT_MAX_TOKENS.to_string(),
                help: "prompt budget in tokens, counted as the report counts them".into(),
            },
            OptionInfo {
                key: "keep_mission".into(),
                default: "true".into(),
                help: "always send the mission; false trims it like any message (LangChain), and each drop is reported".into(),
            },
        ],
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec, ctx: &BuildContext) -> Result<Arc<dyn Strategy>, SpecError> {
    spec.only_options(&["max_tokens", "keep_mission"])?;
    Ok(Arc::new(TokenBudgetTrim {
        max_tokens: spec.int_at_least("max_tokens", 1, DEFAULT_MAX_TOKENS)?,
        keep_mission: spec.flag("keep_mission", true)?,
        counter: ctx.require_counter(NAME)?,
    }))
}

impl TokenBudgetTrim {
    /// A strategy counting with `counter` (what [`build`] does with the run's one).
    pub fn new(max_tokens: u64, keep_mission: bool, counter: Arc<dyn TokenCounter>) -> Self {
        TokenBudgetTrim {
            max_tokens,
            keep_mission,
            counter,
        }
    }
}

impl Planner for TokenBudgetTrim {
    fn plan(&mut self, request: &RenderRequest<'_>, history: &mut History) -> Plan {
        let counter = self.counter.as_ref();
        let [system_tokens, mission_tokens] = history.opening_tokens(counter, request);
        let end = history.messages().len();
        // What the messages before the history cost: the 3 of the prompt, SYSTEM, and
        // the mission when it is always kept.
        let fixed = 3 + system_tokens + if self.keep_mission { mission_tokens } else { 0 };
        let budget = self.max_tokens.saturating_sub(fixed);
        // The earliest start whose suffix fits: sums only grow going back, so only the
        // messages of the suffix (and the one that does not fit) are ever counted.
        let mut start = end;
        let mut sum = 0u64;
        while start > 0 {
            let tokens = history.message_tokens(counter, start - 1);
            if sum + tokens > budget {
                break;
            }
            start -= 1;
            sum += tokens;
        }
        let mut plan = Plan::new();
        plan.push(Source::System);
        if self.keep_mission {
            // Never a result without its call.
            plan.push(Source::Mission);
            plan.push_run(history.next_safe_cut(start, end)..end);
            return plan;
        }
        // The mission is history message "-1": it fits when the whole history does and
        // there is room for it too.
        let mission_fits = start == 0 && fixed + sum + mission_tokens <= self.max_tokens;
        if mission_fits {
            plan.push(Source::Mission);
            plan.push_run(0..end);
            return plan;
        }
        // LangChain's start_on="human": the suffix starts at a USER message (and, unlike
        // LangChain, at one that orphans no result).
        let msgs = history.messages();
        let start = (start..end)
            .map(|i| history.next_safe_cut(i, end))
            .find(|&i| msgs.get(i).is_some_and(|m| m.role == Role::User))
            .unwrap_or(end);
        plan.push_run(start..end);
        plan
    }
}

impl Strategy for TokenBudgetTrim {
    fn spec(&self) -> String {
        StrategySpec::named(NAME)
            .non_default("keep_mission", self.keep_mission, true)
            .non_default("max_tokens", self.max_tokens, DEFAULT_MAX_TOKENS)
            .to_string()
    }

    fn open(&self) -> Box<dyn Replay> {
        planned(self.clone())
    }

    fn invariants(&self) -> Vec<Invariant> {
        let mut all = Invariant::UNIVERSAL.to_vec();
        if self.keep_mission {
            all.push(Invariant::MissionLeadsFirstUser);
        }
        all
    }

    fn forms(&self) -> Vec<Form> {
        vec![Form::Chat]
    }
}

#[cfg(test)]
mod tests;
