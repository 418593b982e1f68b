//! The `full-history` strategy (SPEC 6.1 and 11.3): the uncompressed baseline every
//! other strategy is measured against. `[SYSTEM, USER(mission)]`, then for each turn:
//! in the PTC-Lisp form `ASSISTANT(raw_response)` and `USER(feedback)`; in the chat
//! form the ASSISTANT message with its tool calls and each observation as its own TOOL
//! or USER message.
//!
//! The prompt itself is `recap-history`'s ([`recap_history::render`], the turn writers
//! and the [`Transcript`] this strategy replays through), which the other strategies
//! share without depending on this one.

use recap_core::{Form, Invariant, Replay, SpecError, Strategy, StrategyInfo, StrategySpec};
use recap_history::transcript::Transcript;
use std::sync::Arc;

pub const NAME: &str = "full-history";

/// The strategy; it has no options.
#[derive(Debug, Clone, Copy, Default)]
pub struct FullHistory;

pub fn info() -> StrategyInfo {
    StrategyInfo {
        name: NAME.to_string(),
        summary:
            "the uncompressed baseline: every turn's reply and feedback (compress_history: false)"
                .to_string(),
        options: Vec::new(),
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> {
    spec.no_options()?;
    Ok(Arc::new(FullHistory))
}

impl Strategy for FullHistory {
    fn spec(&self) -> String {
        NAME.to_string()
    }

    /// Each turn rendered once per session ([`Transcript`]); a call keeps all of the
    /// previous call's prompt.
    fn open(&self) -> Box<dyn Replay> {
        Box::new(Transcript::new())
    }

    fn invariants(&self) -> Vec<Invariant> {
        let mut all = Invariant::UNIVERSAL.to_vec();
        // The checker exempts a call whose last feedback is recorded: what the model was
        // shown then is the reference, not a generated turns line (SPEC 7.5).
        all.extend([
            Invariant::MissionLeadsFirstUser,
            Invariant::FailedTurnsVerbatim,
            Invariant::TurnsLine,
            Invariant::AppendOnly,
        ]);
        all
    }

    fn forms(&self) -> Vec<Form> {
        Form::ALL.to_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_are_rejected() {
        let spec = StrategySpec::parse("full-history:window=2").unwrap();
        assert!(matches!(build(&spec), Err(SpecError::UnknownOption { .. })));
    }

    #[test]
    fn a_replay_answers_the_full_history_prompt() {
        let session = recap_gen::generate_corpus(5, 1, 3..=3).remove(0);
        for k in 0..session.turn_count() {
            let request = recap_core::RenderRequest::for_call(&session, k).expect("a call");
            let prompt = recap_core::render_call(&FullHistory, &session, k).expect("renders");
            assert_eq!(prompt, recap_history::render(&request), "call {k}");
        }
    }
}
