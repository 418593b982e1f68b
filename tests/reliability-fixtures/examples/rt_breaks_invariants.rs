//! Renders valid messages that break the universal invariants it declares (SPEC
//! section 7), one per call from 3 completed turns on:
//! after 3 turns two USER messages in a row (role alternation), after 4 turns a
//! different text on every render (determinism), from 5 turns on no mission (mission
//! verbatim).
use recap_reliability_fixtures::Echo;
use recap_reliability_fixtures::recap_abi::{Plugin, export_strategy};
use recap_reliability_fixtures::recap_core::{
    Message, RenderError, RenderRequest, Replay, SpecError, Strategy, StrategySpec, each_call,
};
use std::sync::atomic::{AtomicU64, Ordering};

pub struct RtBreaksInvariants;

static RENDERS: AtomicU64 = AtomicU64::new(0);

impl RtBreaksInvariants {
    pub fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        let system = Message::system(request.system_prompt);
        Ok(match request.turns.len() {
            3 => vec![
                system,
                Message::user(request.mission),
                Message::user("again"),
            ],
            4 => {
                let n = RENDERS.fetch_add(1, Ordering::Relaxed);
                vec![
                    system,
                    Message::user(format!("{} (render {n})", request.mission)),
                ]
            }
            k if k >= 5 => vec![system, Message::user("the mission is gone")],
            _ => return Echo.render(request),
        })
    }
}

impl Strategy for RtBreaksInvariants {
    fn spec(&self) -> String {
        "rt-breaks-invariants".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| RtBreaksInvariants.render(r))
    }
}

impl Plugin for RtBreaksInvariants {
    const NAME: &'static str = "rt-breaks-invariants";
    const VERSION: &'static str = "0.0.1";
    fn from_spec(_: &StrategySpec) -> Result<Self, SpecError> {
        Ok(RtBreaksInvariants)
    }
}

export_strategy!(RtBreaksInvariants);
