//! `amortized-forgetting` (SPEC 11.3; chat form), after OpenHands'
//! `AmortizedForgettingCondenser`. SYSTEM and USER(mission) are always sent and never
//! counted. The history (every turn message, in order) is sent as `head + tail`: the
//! first `keep_first` messages, and everything from a forgetting point `f` onward. When
//! `len(head) + len(tail) > max_size`, `f` jumps so that the tail holds the newest
//! `max_size / 2 − keep_first` messages, then past any TOOL message at its start (no
//! result without its call); between jumps `f` stays, so prompts only grow and a prompt
//! cache is reused until the next jump.
//!
//! Where recap differs: OpenHands' `keep_first=1` is its system message, which recap
//! always keeps, so recap's `keep_first` counts history messages and defaults to 0; a
//! head that would end inside a call's group (the call and its results) is extended to
//! the group's end; and OpenHands filters orphaned calls after the fact, while here the
//! cut itself never orphans one.

use recap_core::{
    Form, Invariant, OptionInfo, RenderRequest, Replay, SpecError, Strategy, StrategyInfo,
    StrategySpec,
};
use recap_history::chat::{History, Plan, Planner, planned};
use std::sync::Arc;

pub const NAME: &str = "amortized-forgetting";
pub const DEFAULT_MAX_SIZE: u64 = 100;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AmortizedForgetting {
    pub max_size: u64,
    pub keep_first: u64,
}

impl Default for AmortizedForgetting {
    fn default() -> Self {
        AmortizedForgetting {
            max_size: DEFAULT_MAX_SIZE,
            keep_first: 0,
        }
    }
}

pub fn info() -> StrategyInfo {
    StrategyInfo {
        name: NAME.to_string(),
        summary: "chat form: when the history exceeds `max_size` messages, keep the first `keep_first` and the newest half; prompts grow between cuts (OpenHands amortized forgetting)".to_string(),
        options: vec![
            OptionInfo {
                key: "max_size".into(),
                default: DEFAULT_MAX_SIZE.to_string(),
                help: "history messages sent before a cut (≥ 2)".into(),
            },
            OptionInfo {
                key: "keep_first".into(),
                default: "0".into(),
                help: "first history messages always kept (< max_size / 2)".into(),
            },
        ],
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> {
    spec.only_options(&["max_size", "keep_first"])?;
    let max_size = spec.int_at_least("max_size", 2, DEFAULT_MAX_SIZE)?;
    let keep_first = spec.int_at_least("keep_first", 0, 0)?;
    if keep_first >= max_size / 2 {
        return Err(SpecError::BadValue {
            strategy: spec.name.clone(),
            key: "keep_first".into(),
            value: keep_first.to_string(),
            expected: format!("expected an integer below max_size / 2 = {}", max_size / 2),
        });
    }
    Ok(Arc::new(AmortizedForgetting {
        max_size,
        keep_first,
    }))
}

impl AmortizedForgetting {
    /// The end of the head and the forgetting point for the call after `history.turns()`
    /// turns: replayed call by call from call 0, so that it is the same whether calls
    /// were rendered before or not.
    pub fn cut(&self, history: &History) -> (usize, usize) {
        let max_size = self.max_size as usize;
        let keep_first = self.keep_first as usize;
        let tail_len = max_size / 2 - keep_first;
        let mut f = 0;
        let mut head_end = 0;
        for j in 0..=history.turns() {
            let len = history.turn_start(j);
            head_end = history.next_safe_cut(keep_first.min(len), len);
            f = f.max(head_end);
            if head_end + (len - f) > max_size {
                f = history.next_safe_cut(len.saturating_sub(tail_len).max(head_end), len);
            }
        }
        (head_end, f)
    }
}

impl Planner for AmortizedForgetting {
    fn plan(&mut self, _request: &RenderRequest<'_>, history: &mut History) -> Plan {
        let (head_end, f) = self.cut(history);
        let mut plan = Plan::opening();
        plan.push_run(0..head_end);
        plan.push_run(f..history.messages().len());
        plan
    }
}

impl Strategy for AmortizedForgetting {
    fn spec(&self) -> String {
        StrategySpec::named(NAME)
            .non_default("keep_first", self.keep_first, 0)
            .non_default("max_size", self.max_size, DEFAULT_MAX_SIZE)
            .to_string()
    }

    fn open(&self) -> Box<dyn Replay> {
        planned(*self)
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
