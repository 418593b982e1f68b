//! Panics (with a message) at exactly 3 completed turns; renders like `Echo` before and
//! after, so a host that goes on after a failed call gets every later call rendered.
use recap_reliability_fixtures::recap_abi::{Plugin, export_strategy};
use recap_reliability_fixtures::recap_core::{
    Message, RenderError, RenderRequest, Replay, SpecError, Strategy, StrategySpec, each_call,
};
use recap_reliability_fixtures::{Echo, FAULT_FROM_TURNS};

pub struct RtPanicOnce;

impl RtPanicOnce {
    pub fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        if request.turns.len() == FAULT_FROM_TURNS {
            panic!("rt-panic-once fails at {FAULT_FROM_TURNS} turns");
        }
        Echo.render(request)
    }
}

impl Strategy for RtPanicOnce {
    fn spec(&self) -> String {
        "rt-panic-once".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| RtPanicOnce.render(r))
    }
}

impl Plugin for RtPanicOnce {
    const NAME: &'static str = "rt-panic-once";
    const VERSION: &'static str = "0.0.1";
    fn from_spec(_: &StrategySpec) -> Result<Self, SpecError> {
        Ok(RtPanicOnce)
    }
}

export_strategy!(RtPanicOnce);
