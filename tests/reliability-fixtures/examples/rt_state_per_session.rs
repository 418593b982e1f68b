//! Behaves like `Echo` until 3 completed turns, then names the per-session state it was
//! given in its prompt: every `SessionState` gets its own number, so the two renders of
//! a call by recap's determinism check — two independent states — differ. That holds
//! when the check's two plugin-side sessions share one copy of the turns (`pair`):
//! what they share is the turns, never a strategy's state.
use recap_reliability_fixtures::recap_abi::{Plugin, export_strategy};
use recap_reliability_fixtures::recap_core::{
    Message, RenderError, RenderRequest, Session, SessionState, SpecError, Strategy,
    StrategySpec,
};
use recap_reliability_fixtures::{Echo, FAULT_FROM_TURNS};
use std::sync::atomic::{AtomicU64, Ordering};

pub struct RtStatePerSession;

static STATES: AtomicU64 = AtomicU64::new(0);

/// The number a session state was given when first used.
struct StateNumber(u64);

impl Strategy for RtStatePerSession {
    fn spec(&self) -> String {
        "rt-state-per-session".into()
    }
    fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        Echo.render(request)
    }
    fn render_session(
        &self,
        session: &Session,
        k: usize,
        state: &mut SessionState,
    ) -> Result<Vec<Message>, RenderError> {
        let request = RenderRequest::for_call(session, k)?;
        let number = state
            .reuse_or_set(
                |_: &StateNumber| true,
                || StateNumber(STATES.fetch_add(1, Ordering::Relaxed)),
            )
            .0;
        let mut messages = Echo.render(&request)?;
        if k >= FAULT_FROM_TURNS
            && let Some(last) = messages.pop()
        {
            let text = format!("{} (session state {number})", &*last.content);
            messages.push(Message::user(text));
        }
        Ok(messages)
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
