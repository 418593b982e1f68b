//! `ptc-output-masking` (sample plugin): the `full-history` layout — SYSTEM, USER
//! (mission), then an ASSISTANT/USER pair per turn — where only the last `window`
//! turns (default 10) keep their outputs. An older turn keeps its program (the
//! ASSISTANT message is its raw response) but its output — prints, error, recorded
//! feedback with tool results — is replaced by a short placeholder. The literature on
//! agent context management finds this baseline about as good as LLM summarisation.
//!
//! Built as a `cdylib` and loaded with `recap ... --plugin`.

use recap_core::strategy::turns_line;
use recap_core::{
    Invariant, Message, OptionInfo, RenderError, RenderRequest, Replay, SpecError, Strategy,
    StrategySpec, Turn, each_call,
};

pub const NAME: &str = "ptc-output-masking";
pub const DEFAULT_WINDOW: u32 = 10;

/// The strategy: `window` = how many of the latest turns keep their outputs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtcOutputMasking {
    pub window: u32,
}

impl Default for PtcOutputMasking {
    fn default() -> Self {
        Self {
            window: DEFAULT_WINDOW,
        }
    }
}

/// What replaces the output of a masked turn.
pub fn placeholder(turn_number: u32) -> String {
    format!("[output of turn {turn_number} omitted]")
}

impl PtcOutputMasking {
    /// The USER message after an older turn: the placeholder where there was output,
    /// then the turns line as `full-history` would end it. A recorded feedback is
    /// output through and through (it holds tool results), so it is replaced whole.
    fn masked_feedback(turn: &Turn, completed: usize, max_turns: u32) -> String {
        let had_output =
            turn.feedback.is_some() || !turn.success || turn.prints.iter().any(|p| !p.is_empty());
        if !had_output {
            return recap_history::feedback(turn, completed, max_turns).into_owned();
        }
        if turn.feedback.is_some() {
            return placeholder(turn.number);
        }
        let left = max_turns.saturating_sub(u32::try_from(completed).unwrap_or(u32::MAX));
        format!("{}\n\n{}", placeholder(turn.number), turns_line(left))
    }
}

impl PtcOutputMasking {
    /// The prompt for a request; never fails.
    pub fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        let turns = request.turns;
        let mut messages = Vec::with_capacity(2 + 2 * turns.len());
        messages.push(Message::system(request.system_prompt));
        messages.push(Message::user(request.mission));
        let first_kept = turns.len().saturating_sub(self.window as usize);
        for (i, turn) in turns.iter().enumerate() {
            let completed = i + 1;
            messages.push(Message::assistant(turn.raw_response.as_str()));
            let feedback = if i >= first_kept {
                recap_history::feedback(turn, completed, request.max_turns).into_owned()
            } else {
                Self::masked_feedback(turn, completed, request.max_turns)
            };
            messages.push(Message::user(feedback));
        }
        Ok(messages)
    }
}

impl Strategy for PtcOutputMasking {
    fn open(&self) -> Box<dyn Replay> {
        let strategy = *self;
        each_call(move |request| strategy.render(request))
    }

    fn spec(&self) -> String {
        if self.window == DEFAULT_WINDOW {
            NAME.to_string()
        } else {
            format!("{NAME}:window={}", self.window)
        }
    }

    fn invariants(&self) -> Vec<Invariant> {
        // Not failed-turns-verbatim (old errors are masked) and not append-only (a
        // turn's output is masked once it leaves the window).
        let mut all = Invariant::UNIVERSAL.to_vec();
        all.extend([Invariant::MissionLeadsFirstUser, Invariant::TurnsLine]);
        all
    }
}

impl recap_abi::Plugin for PtcOutputMasking {
    const NAME: &'static str = NAME;
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const SUMMARY: &'static str = "full-history layout; outputs of turns older than the last `window` replaced by a placeholder";

    fn options() -> Vec<OptionInfo> {
        vec![OptionInfo {
            key: "window".into(),
            default: DEFAULT_WINDOW.to_string(),
            help: "how many of the latest turns keep their outputs (integer ≥ 1)".into(),
        }]
    }

    fn from_spec(spec: &StrategySpec) -> Result<Self, SpecError> {
        Ok(Self {
            window: spec.positive_int("window", DEFAULT_WINDOW)?,
        })
    }
}

recap_abi::export_strategy!(PtcOutputMasking);

#[cfg(test)]
mod tests {
    use super::*;
    use recap_abi::Plugin;
    use recap_core::invariants::check_session;
    use recap_gen::builder::{SessionBuilder, TurnBuilder};

    fn spec(text: &str) -> Result<PtcOutputMasking, SpecError> {
        PtcOutputMasking::from_spec(&StrategySpec::parse(text).unwrap())
    }

    #[test]
    fn options() {
        assert_eq!(spec("ptc-output-masking").unwrap().window, 10);
        assert_eq!(spec("ptc-output-masking:window=2").unwrap().window, 2);
        let err = spec("ptc-output-masking:window=0").unwrap_err().to_string();
        assert!(err.contains("window") && err.contains("≥ 1"), "{err}");
        assert_eq!(
            spec("ptc-output-masking:window=3").unwrap().spec(),
            "ptc-output-masking:window=3"
        );
    }

    #[test]
    fn masks_outputs_outside_the_window_and_keeps_programs() {
        let s = SessionBuilder::new("m")
            .system("sys")
            .max_turns(6)
            .turn(TurnBuilder::ok("(println 1)").prints(["one"]))
            .turn(TurnBuilder::failed("(boom)", "bad"))
            .turn(TurnBuilder::ok("(def x 1)"))
            .turn(TurnBuilder::ok("(tool/get)").feedback("recorded: result 42"))
            .turn(TurnBuilder::ok("(println 5)").prints(["five"]))
            .build();
        let strategy = PtcOutputMasking { window: 1 };
        let m = strategy
            .render(&RenderRequest::for_call(&s, 5).unwrap())
            .unwrap();
        let contents: Vec<&str> = m.iter().map(|m| m.content.as_str()).collect();
        assert_eq!(contents[0], "sys");
        assert_eq!(contents[1], "m");
        assert_eq!(contents[2], s.turns[0].raw_response);
        assert_eq!(contents[3], "[output of turn 1 omitted]\n\nTurns left: 5");
        assert_eq!(contents[4], s.turns[1].raw_response);
        assert_eq!(contents[5], "[output of turn 2 omitted]\n\nTurns left: 4");
        // Nothing to mask: the turns line alone, as in full-history.
        assert_eq!(contents[7], "Turns left: 3");
        assert_eq!(contents[9], "[output of turn 4 omitted]");
        assert_eq!(
            contents[11],
            "five\n\n⚠️ FINAL TURN - you must call (return result) or (fail response) next."
        );
    }

    #[test]
    fn equals_full_history_while_everything_fits_in_the_window() {
        for s in recap_gen::generate_corpus(7, 20, 1..=8) {
            for k in recap_core::invariants::calls(&s) {
                let req = RenderRequest::for_call(&s, k).unwrap();
                assert_eq!(
                    PtcOutputMasking { window: 8 }.render(&req).unwrap(),
                    recap_history::render(&req)
                );
            }
        }
    }

    #[test]
    fn declared_invariants_hold_on_generated_sessions() {
        for window in [1, 2, 10] {
            let strategy = PtcOutputMasking { window };
            for s in recap_gen::generate_corpus(11, 30, 0..=12) {
                let violations = check_session(&strategy, &s).unwrap();
                assert!(
                    violations.is_empty(),
                    "window {window}, session {}: {violations:?}",
                    s.id
                );
            }
        }
    }
}
