//! Behaves like `Echo` until 3 completed turns, then names the replay it renders through
//! in its prompt: every replay gets its own number, so the two renders of a call by
//! recap's determinism check — two independent replays — differ. That holds when the
//! check's two plugin-side sessions share one copy of the turns (`pair`): what they
//! share is the turns, never a strategy's replay.
use recap_reliability_fixtures::recap_abi::{Plugin, export_strategy};
use recap_reliability_fixtures::recap_core::{
    Answer, Message, PromptDelta, RenderRequest, Replay, Session, SpecError, Strategy, StrategySpec,
};
use recap_reliability_fixtures::{Echo, FAULT_FROM_TURNS};
use std::sync::atomic::{AtomicU64, Ordering};

pub struct RtStatePerSession;

static REPLAYS: AtomicU64 = AtomicU64::new(0);

impl Strategy for RtStatePerSession {
    fn spec(&self) -> String {
        "rt-state-per-session".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        Box::new(Numbered { number: None })
    }
}

/// A replay that takes a number at its first call.
struct Numbered {
    number: Option<u64>,
}

impl Replay for Numbered {
    fn call(&mut self, session: &Session, k: usize, _held: usize) -> Answer {
        let request = RenderRequest::for_call(session, k)?;
        let number = *self
            .number
            .get_or_insert_with(|| REPLAYS.fetch_add(1, Ordering::Relaxed));
        let mut messages = Echo.render(&request)?;
        if k >= FAULT_FROM_TURNS
            && let Some(last) = messages.pop()
        {
            let text = format!("{} (replay {number})", &*last.content);
            messages.push(Message::user(text));
        }
        Ok(PromptDelta::whole(messages))
    }
}

impl Plugin for RtStatePerSession {
    const NAME: &'static str = "rt-state-per-session";
    const VERSION: &'static str = "0.0.1";
    fn from_spec(_: &StrategySpec) -> Result<Self, SpecError> {
        Ok(RtStatePerSession)
    }
}

export_strategy!(RtStatePerSession);
