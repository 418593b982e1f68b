//! Never returns from any render: loading it (the self-test) must time out.
use recap_reliability_fixtures::recap_abi::{Plugin, export_strategy};
use recap_reliability_fixtures::recap_core::{
    Message, RenderError, RenderRequest, Replay, SpecError, Strategy, StrategySpec, each_call,
};

pub struct RtHangAlways;

impl RtHangAlways {
    pub fn render(&self, _: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

impl Strategy for RtHangAlways {
    fn spec(&self) -> String {
        "rt-hang-always".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| RtHangAlways.render(r))
    }
}

impl Plugin for RtHangAlways {
    const NAME: &'static str = "rt-hang-always";
    const VERSION: &'static str = "0.0.1";
    fn from_spec(_: &StrategySpec) -> Result<Self, SpecError> {
        Ok(RtHangAlways)
    }
}

export_strategy!(RtHangAlways);
