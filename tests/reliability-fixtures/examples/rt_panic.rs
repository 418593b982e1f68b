//! Panics with a non-string payload once 3 turns are completed.
use recap_reliability_fixtures::recap_abi::{Plugin, export_strategy};
use recap_reliability_fixtures::recap_core::{
    Message, RenderError, RenderRequest, Replay, SpecError, Strategy, StrategySpec, each_call,
};
use recap_reliability_fixtures::{Echo, FAULT_FROM_TURNS};

pub struct RtPanic;

impl RtPanic {
    pub fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        if request.turns.len() >= FAULT_FROM_TURNS {
            std::panic::panic_any(42u32);
        }
        Echo.render(request)
    }
}

impl Strategy for RtPanic {
    fn spec(&self) -> String {
        "rt-panic".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| RtPanic.render(r))
    }
}

impl Plugin for RtPanic {
    const NAME: &'static str = "rt-panic";
    const VERSION: &'static str = "0.0.1";
    fn from_spec(_: &StrategySpec) -> Result<Self, SpecError> {
        Ok(RtPanic)
    }
}

export_strategy!(RtPanic);
