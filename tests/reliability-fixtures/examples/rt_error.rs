//! Returns a strategy error (an `{"error": ...}` response) once 3 turns are completed.
use recap_reliability_fixtures::recap_abi::{Plugin, export_strategy};
use recap_reliability_fixtures::recap_core::{
    Message, RenderError, RenderRequest, Replay, SpecError, Strategy, StrategySpec, each_call,
};
use recap_reliability_fixtures::{Echo, FAULT_FROM_TURNS};

pub struct RtError;

impl RtError {
    pub fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        if request.turns.len() >= FAULT_FROM_TURNS {
            return Err(RenderError::new(
                "fixture_error",
                "this fixture refuses to render 3 turns",
            ));
        }
        Echo.render(request)
    }
}

impl Strategy for RtError {
    fn spec(&self) -> String {
        "rt-error".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| RtError.render(r))
    }
}

impl Plugin for RtError {
    const NAME: &'static str = "rt-error";
    const VERSION: &'static str = "0.0.1";
    fn from_spec(_: &StrategySpec) -> Result<Self, SpecError> {
        Ok(RtError)
    }
}

export_strategy!(RtError);
