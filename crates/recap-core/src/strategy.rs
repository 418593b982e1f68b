//! The strategy contract (SPEC section 5).

use crate::chat::ChatTurn;
use crate::message::Message;
use crate::session::{Form, Session, ToolSpec, Turn};
use crate::value::Value;
use std::collections::BTreeMap;

/// Everything a strategy may look at to render the prompt for the call that will
/// produce turn `turns.len() + 1`.
#[derive(Debug, Clone, Copy)]
pub struct RenderRequest<'a> {
    pub system_prompt: &'a str,
    pub mission: &'a str,
    pub max_turns: u32,
    pub tools: &'a BTreeMap<String, ToolSpec>,
    pub data: &'a BTreeMap<String, Value>,
    /// The form of the session's turns: only the matching slice below is filled.
    pub form: Form,
    /// The PTC-Lisp turns completed so far (empty in the chat form).
    pub turns: &'a [Turn],
    /// The chat turns completed so far (empty in the PTC form).
    pub chat_turns: &'a [ChatTurn],
}

/// Why a request cannot be made for a session.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RequestError {
    #[error("session has {recorded} turns; cannot render after {asked}")]
    TooManyTurns { asked: usize, recorded: usize },
    #[error("no call follows turn {asked}: max_turns is {max_turns} (the last call is after {last} turns)", last = max_turns.saturating_sub(1))]
    BudgetExhausted { asked: usize, max_turns: u32 },
}

impl<'a> RenderRequest<'a> {
    /// The request for the call after `k` completed turns of `session`.
    pub fn for_call(session: &'a Session, k: usize) -> Result<Self, RequestError> {
        if k > session.turn_count() {
            return Err(RequestError::TooManyTurns {
                asked: k,
                recorded: session.turn_count(),
            });
        }
        if k >= session.max_turns as usize {
            return Err(RequestError::BudgetExhausted {
                asked: k,
                max_turns: session.max_turns,
            });
        }
        Ok(Self {
            system_prompt: &session.system_prompt,
            mission: &session.mission,
            max_turns: session.max_turns,
            tools: &session.tools,
            data: &session.data,
            form: session.form,
            turns: &session.turns[..k.min(session.turns.len())],
            chat_turns: &session.chat_turns[..k.min(session.chat_turns.len())],
        })
    }

    /// Completed turns, whatever the form.
    pub fn completed(&self) -> usize {
        match self.form {
            Form::Ptc => self.turns.len(),
            Form::Chat => self.chat_turns.len(),
        }
    }

    /// Turns left `N = max_turns - k`, the call being made included.
    pub fn turns_left(&self) -> u32 {
        self.max_turns.saturating_sub(self.turns.len() as u32)
    }

    /// The turns line of SPEC section 5 for this call (MSG-005).
    pub fn turns_line(&self) -> String {
        turns_line(self.turns_left())
    }
}

/// MSG-005: `Turns left: N` for N ≥ 2, the final-turn warning for N ≤ 1.
pub fn turns_line(turns_left: u32) -> String {
    if turns_left >= 2 {
        format!("Turns left: {turns_left}")
    } else {
        FINAL_TURN_LINE.to_string()
    }
}

pub const FINAL_TURN_LINE: &str =
    "⚠️ FINAL TURN - you must call (return result) or (fail response) next.";

/// A strategy could not render (plugins can fail; built-ins never do).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}: {message}")]
pub struct RenderError {
    /// A short machine-readable class: `panic`, `invalid_response`, `timeout`, …
    pub kind: String,
    pub message: String,
}

/// A call the session cannot have (past its turns or its budget): the caller asked for
/// something the contract rules out, which a strategy reports as `bad_request`.
impl From<RequestError> for RenderError {
    fn from(e: RequestError) -> Self {
        RenderError::new("bad_request", e.to_string())
    }
}

impl RenderError {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            message: message.into(),
        }
    }
}

/// The invariants of SPEC section 7 that a strategy may declare it keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Invariant {
    /// 1. The first message is SYSTEM with exactly the system prompt.
    SystemFirst,
    /// 2. The mission appears verbatim.
    MissionVerbatim,
    /// 2 (built-ins). The first USER message starts with the mission.
    MissionLeadsFirstUser,
    /// 3. SYSTEM, then USER, then alternating, ending with USER.
    RoleAlternation,
    /// 4. Every failed turn's program and error message appear verbatim.
    FailedTurnsVerbatim,
    /// 5. The last USER message ends with the correct turns line.
    TurnsLine,
    /// 6. Rendering twice gives identical bytes.
    Deterministic,
    /// 7. Tool-call lines ≤ `tool_call_limit`, Output lines ≤ `println_limit` prints.
    Limits {
        tool_call_limit: u32,
        println_limit: u32,
    },
    /// 8. Each prompt starts with the previous one, message for message.
    AppendOnly,
    /// Chat form (SPEC 11.4.2): every TOOL message answers a call of the nearest
    /// preceding ASSISTANT message, and every call is answered before the next one.
    /// In chat sessions it takes the place of [`Invariant::RoleAlternation`].
    ToolPairing,
}

impl Invariant {
    /// A stable identifier for reports.
    pub fn id(&self) -> &'static str {
        match self {
            Invariant::SystemFirst => "system-first",
            Invariant::MissionVerbatim => "mission-verbatim",
            Invariant::MissionLeadsFirstUser => "mission-leads-first-user",
            Invariant::RoleAlternation => "role-alternation",
            Invariant::FailedTurnsVerbatim => "failed-turns-verbatim",
            Invariant::TurnsLine => "turns-line",
            Invariant::Deterministic => "deterministic",
            Invariant::Limits { .. } => "limits",
            Invariant::AppendOnly => "append-only",
            Invariant::ToolPairing => "tool-pairing",
        }
    }

    /// The invariants every strategy must keep, whoever wrote it.
    pub const UNIVERSAL: [Invariant; 4] = [
        Invariant::SystemFirst,
        Invariant::MissionVerbatim,
        Invariant::RoleAlternation,
        Invariant::Deterministic,
    ];
}

/// A message-history compression strategy: a pure function of the request.
///
/// Implementations must be deterministic (same request → byte-identical messages) and
/// thread-safe: the harness renders sessions in parallel.
pub trait Strategy: Send + Sync {
    /// The canonical spec string of this instance, options included
    /// (`rolling-window:window=2`), used as its name in reports.
    fn spec(&self) -> String;

    /// The prompt for the call that will produce turn `request.turns.len() + 1`.
    fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError>;

    /// The invariants of SPEC section 7 this strategy promises to keep.
    fn invariants(&self) -> Vec<Invariant> {
        Invariant::UNIVERSAL.to_vec()
    }

    /// The session forms this strategy renders (SPEC 11.3). Sessions of another form
    /// are reported as *not applicable* for it, never rendered. The default is the
    /// PTC-Lisp form alone, which every strategy written before the chat form renders.
    fn forms(&self) -> Vec<Form> {
        vec![Form::Ptc]
    }

    /// Whether this strategy replays `session`. Sessions it does not replay are
    /// reported as *not applicable* for it, never rendered. The default: the session
    /// is of one of [`Strategy::forms`].
    fn applies_to(&self, session: &Session) -> bool {
        self.forms().contains(&session.form)
    }

    /// What the sessions [`Strategy::applies_to`] accepts are, said in reports where
    /// some were not replayed ("chat sessions with a record of what the agent sent").
    /// `None` (the default): the forms say it.
    fn scope(&self) -> Option<String> {
        None
    }

    /// True for a pseudo-strategy whose prompts are what the recorded agent itself
    /// sent, not a policy of recap's: reports compare its token counts with the
    /// provider's recorded input tokens (replay fidelity), as for the baseline.
    fn replays_record(&self) -> bool {
        false
    }

    /// The prompt for the call after `k` completed turns of `session`: always equal to
    /// `render(&RenderRequest::for_call(session, k)?)`, except for a strategy that
    /// replays the session's record ([`Strategy::replays_record`]), which needs the
    /// session itself and cannot render a bare request.
    ///
    /// Callers that render several calls of one session (the harness, benches) keep one
    /// [`SessionState`] per (strategy instance, session) and pass it to every call, so
    /// that a strategy whose per-call cost would otherwise grow with the whole history
    /// (a plugin must serialise the request) can work incrementally. Between calls the
    /// session may only gain turns. The default ignores `state`; strategies that cache
    /// per-session work keep it through [`SessionState::reuse_or_set`].
    fn render_session(
        &self,
        session: &Session,
        k: usize,
        state: &mut SessionState,
    ) -> Result<Vec<Message>, RenderError> {
        let _ = state;
        let request = RenderRequest::for_call(session, k)?;
        self.render(&request)
    }

    /// [`Strategy::render_session`], answered as what the prompt keeps of the previous
    /// one: the caller passes `held`, the length of the prompt this `state`'s last render
    /// returned, when it still holds that prompt (`None` on the first call, after a
    /// failed render, or when it kept nothing). The answer, applied to that prompt
    /// ([`PromptDelta::apply`]), must equal what `render_session` returns; `kept` is 0
    /// when `held` is `None`, and at most `held`.
    ///
    /// Why: a chat strategy sends nearly its whole history at every call, and handing it
    /// over whole costs a copy of every message (reference counts moved, a list
    /// allocated), a comparison of each against the previous call's and a drop of the
    /// previous call's, quadratic in a session's length; a caller holding the previous
    /// prompt needs only what changed. The default renders whole (`kept` 0).
    fn render_session_delta(
        &self,
        session: &Session,
        k: usize,
        state: &mut SessionState,
        held: Option<usize>,
    ) -> Result<PromptDelta, RenderError> {
        let _ = held;
        Ok(PromptDelta::whole(self.render_session(session, k, state)?))
    }
}

/// A prompt as the first `kept` messages of the previous prompt rendered through the
/// same state, then `tail` ([`Strategy::render_session_delta`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct PromptDelta {
    pub kept: usize,
    pub tail: Vec<Message>,
}

impl PromptDelta {
    /// A prompt that keeps nothing: all of it is new.
    pub fn whole(messages: Vec<Message>) -> Self {
        PromptDelta {
            kept: 0,
            tail: messages,
        }
    }

    /// The delta, when it keeps no more than the caller holds (`held` messages); else
    /// the render error every caller reports it as (kind `delta`).
    pub fn within(self, held: Option<usize>) -> Result<Self, RenderError> {
        let held = held.unwrap_or(0);
        if self.kept > held {
            return Err(RenderError::new(
                "delta",
                format!(
                    "the render keeps {} messages of a previous prompt of {held}",
                    self.kept
                ),
            ));
        }
        Ok(self)
    }

    /// The prompt itself, given the previous one (of at least `kept` messages).
    pub fn apply(&self, previous: &[Message]) -> Vec<Message> {
        let mut out = Vec::with_capacity(self.kept + self.tail.len());
        out.extend_from_slice(&previous[..self.kept]);
        out.extend_from_slice(&self.tail);
        out
    }

    /// Turns `previous` into the prompt in place, moving rather than copying; returns the
    /// messages of `previous` after `kept`, which the prompt no longer holds there.
    pub fn apply_in_place(self, previous: &mut Vec<Message>) -> Vec<Message> {
        if self.kept == 0 {
            return std::mem::replace(previous, self.tail);
        }
        let removed = previous.split_off(self.kept);
        previous.extend(self.tail);
        removed
    }
}

/// Why `strategy` does not replay `session`, or `None` when it does: the one wording
/// of a not-applicable pair for every command that refuses one (`render`, `inspect`).
pub fn not_applicable(strategy: &dyn Strategy, session: &Session) -> Option<String> {
    if strategy.applies_to(session) {
        return None;
    }
    let forms = strategy.forms();
    Some(if !forms.contains(&session.form) {
        let forms: Vec<&str> = forms.iter().map(|f| f.as_str()).collect();
        format!(
            "strategy {} renders {} sessions only, and session {:?} is in the {} form",
            strategy.spec(),
            forms.join(" and "),
            session.id,
            session.form
        )
    } else {
        format!(
            "strategy {} replays {} only, and session {:?} is not one",
            strategy.spec(),
            strategy.scope().as_deref().unwrap_or("some sessions"),
            session.id
        )
    })
}

/// Opaque per-(strategy, session) scratch space for [`Strategy::render_session`].
///
/// A strategy stores whatever lets it render the next call cheaply (a plugin keeps its
/// open plugin-side session here). Dropping the state releases it.
#[derive(Default)]
pub struct SessionState {
    slot: Option<Box<dyn std::any::Any + Send>>,
    /// The slot shared with the other state of a pair ([`SessionState::pair`]).
    shared: Option<SharedSlot>,
}

/// One more slot that the two states of a pair share ([`SessionState::pair`]): for work
/// that is the same for both renders of a call — the bytes of a request both send — and
/// never for what a render produced, which the caller compares between the two.
#[derive(Clone)]
pub struct SharedSlot {
    id: u64,
    slot: std::sync::Arc<std::sync::Mutex<Option<Box<dyn std::any::Any + Send>>>>,
}

impl Default for SharedSlot {
    fn default() -> Self {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        SharedSlot {
            id: NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            slot: Default::default(),
        }
    }
}

impl SharedSlot {
    /// Names the pair: distinct for every pair made in this process, never 0.
    pub fn id(&self) -> u64 {
        self.id
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Box<dyn std::any::Any + Send>>> {
        self.slot
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Stores `value`, dropping whatever was there.
    pub fn put<T: std::any::Any + Send>(&self, value: T) {
        *self.lock() = Some(Box::new(value));
    }

    /// Takes the stored `T` out when `wanted` accepts it; otherwise leaves the slot as it is.
    pub fn take<T: std::any::Any + Send>(&self, wanted: impl FnOnce(&T) -> bool) -> Option<T> {
        let mut slot = self.lock();
        if !slot
            .as_ref()
            .and_then(|b| b.downcast_ref::<T>())
            .is_some_and(wanted)
        {
            return None;
        }
        slot.take().and_then(|b| b.downcast::<T>().ok()).map(|b| *b)
    }
}

impl SessionState {
    pub fn new() -> Self {
        Self::default()
    }

    /// Two states for rendering every call of a session twice, each as independent as
    /// two [`SessionState::new`] (the determinism check renders through the second so
    /// that a stateful shortcut cannot vouch for itself), sharing one more slot
    /// ([`SharedSlot`]) for what is the same for both.
    pub fn pair() -> (Self, Self) {
        let shared = SharedSlot::default();
        (
            SessionState {
                slot: None,
                shared: Some(shared.clone()),
            },
            SessionState {
                slot: None,
                shared: Some(shared),
            },
        )
    }

    /// The slot this state shares with the other of its pair, if it is one of a pair.
    pub fn shared(&self) -> Option<SharedSlot> {
        self.shared.clone()
    }

    /// The stored value of type `T`, or `None` when empty or holding another type.
    pub fn get_mut<T: std::any::Any + Send>(&mut self) -> Option<&mut T> {
        self.slot.as_mut().and_then(|b| b.downcast_mut::<T>())
    }

    /// Stores `value`, dropping whatever was there.
    pub fn set<T: std::any::Any + Send>(&mut self, value: T) -> &mut T {
        self.slot = Some(Box::new(value));
        self.get_mut::<T>()
            .expect("just stored a value of this type")
    }

    /// The stored `T` when `reusable` accepts it; otherwise `fresh()` is stored in place
    /// of whatever was there (nothing, another type, a `T` of another session) and
    /// returned. How a strategy keeps a per-session cache: reuse can only save work.
    pub fn reuse_or_set<T: std::any::Any + Send>(
        &mut self,
        reusable: impl FnOnce(&T) -> bool,
        fresh: impl FnOnce() -> T,
    ) -> &mut T {
        let keep = self
            .slot
            .as_ref()
            .and_then(|b| b.downcast_ref::<T>())
            .is_some_and(reusable);
        if !keep {
            self.slot = Some(Box::new(fresh()));
        }
        self.get_mut::<T>()
            .expect("the state holds a T: kept or just stored")
    }

    /// Drops the stored value (not the pair's shared slot).
    pub fn clear(&mut self) {
        self.slot = None;
    }
}

impl std::fmt::Debug for SessionState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionState")
            .field("occupied", &self.slot.is_some())
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use super::SessionState;

    #[test]
    fn a_pair_shares_one_slot_and_nothing_else() {
        let (mut a, mut b) = SessionState::pair();
        a.set(1u32);
        assert_eq!(b.get_mut::<u32>(), None, "each keeps its own state");
        let shared = a.shared().expect("paired");
        shared.put((3usize, vec![1u8, 2]));
        let other = b.shared().expect("paired");
        assert_eq!(other.take(|&(k, _): &(usize, Vec<u8>)| k == 4), None);
        assert_eq!(other.take::<u32>(|_| true), None, "another type");
        assert_eq!(
            other.take(|&(k, _): &(usize, Vec<u8>)| k == 3),
            Some((3, vec![1, 2]))
        );
        assert_eq!(
            shared.take::<(usize, Vec<u8>)>(|_| true),
            None,
            "taken once"
        );
        assert!(SessionState::new().shared().is_none());
    }

    #[test]
    fn reuse_or_set_keeps_what_fits_and_replaces_the_rest() {
        let mut state = SessionState::new();
        // Empty: the fresh value.
        *state.reuse_or_set(|_: &u32| true, || 1u32) += 10;
        // Accepted: the stored value, with what was done to it.
        assert_eq!(*state.reuse_or_set(|n: &u32| *n == 11, || 0u32), 11);
        // Refused: replaced.
        assert_eq!(*state.reuse_or_set(|n: &u32| *n == 99, || 2u32), 2);
        // Another type: replaced, whatever the test would say.
        assert_eq!(
            state.reuse_or_set(|_: &String| true, || "s".to_string()),
            "s"
        );
        assert_eq!(state.get_mut::<u32>(), None);
    }
}
