//! Never returns once 3 turns are completed (the host must give up on it).
use recap_reliability_fixtures::recap_abi::{Plugin, export_strategy};
use recap_reliability_fixtures::recap_core::{
    Message, RenderError, RenderRequest, Replay, SpecError, Strategy, StrategySpec, each_call,
};
use recap_reliability_fixtures::{Echo, FAULT_FROM_TURNS};

pub struct RtHang;

impl RtHang {
    pub fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        if request.turns.len() >= FAULT_FROM_TURNS {
            loop {
                std::thread::sleep(std::time::Duration::from_secs(3600));
            }
        }
        Echo.render(request)
    }
}

impl Strategy for RtHang {
    fn spec(&self) -> String {
        "rt-hang".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| RtHang.render(r))
    }
}

impl Plugin for RtHang {
    const NAME: &'static str = "rt-hang";
    const VERSION: &'static str = "0.0.1";
    fn from_spec(_: &StrategySpec) -> Result<Self, SpecError> {
        Ok(RtHang)
    }
}

export_strategy!(RtHang);
