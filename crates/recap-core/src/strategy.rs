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

/// A message-history compression strategy (SPEC 5): what it is, and how it replays a
/// session.
///
/// A strategy describes itself ([`Strategy::spec`], [`Strategy::forms`],
/// [`Strategy::invariants`], …) and [opens](Strategy::open) a [`Replay`] for each session
/// replayed through it, which answers that session's calls in order. Everything a
/// strategy carries from one call of a session to the next (texts printed once, a
/// history extended turn by turn, a plugin's open session) lives in its replay and dies
/// with it.
///
/// Implementations must be deterministic (the same session and call give byte-identical
/// prompts) and thread-safe: the harness replays sessions in parallel, each replay on
/// one thread. A strategy whose prompt is a pure function of its request needs no replay
/// type of its own: [`each_call`] is one; [`reference_first`] pairs a straightforward
/// render with an incremental replay. Rendering one call in isolation is [`render_call`].
pub trait Strategy: Send + Sync {
    /// The canonical spec string of this instance, options included
    /// (`rolling-window:window=2`), used as its name in reports.
    fn spec(&self) -> String;

    /// A replay of one session through this strategy: its calls are asked in order
    /// ([`Replay::call`]).
    fn open(&self) -> Box<dyn Replay>;

    /// Two independent replays of one session, for the determinism check (SPEC 7.6),
    /// which renders every call through both and compares the prompts. A strategy may
    /// let the two share what is the same for both — a plugin, the turns its SDK holds
    /// and the bytes of a request — never what a render produced. The default: two
    /// [`Strategy::open`]s.
    fn open_pair(&self) -> [Box<dyn Replay>; 2] {
        [self.open(), self.open()]
    }

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

    /// True for a strategy whose code recap cannot see into (a plugin; a strategy
    /// written in Python): `recap run` renders each of its calls twice, through two
    /// replays, and compares them (SPEC 7.6). A built-in's determinism is proven by its
    /// property tests, and checked in a run on request (`--check-determinism all`).
    fn opaque(&self) -> bool {
        false
    }

    /// Runs `pass` — the harness's replay of one session through this strategy, its
    /// calls with their checks, on the thread that renders them — within whatever the
    /// strategy's calls should share for the length of a session rather than take at
    /// every call (a strategy written in Python: the interpreter's lock). The default
    /// runs it as it is.
    fn around_session(&self, pass: &mut dyn FnMut()) {
        pass()
    }
}

/// A replay's answer to one call: the prompt as what it keeps of the previous one and
/// what is new, or why the call could not be rendered.
pub type Answer = Result<PromptDelta, RenderError>;

/// One session replayed through a strategy ([`Strategy::open`]).
pub trait Replay {
    /// The prompt for the call after `k` completed turns of `session`, as what it keeps
    /// of the prompt this replay returned last, then what is new ([`PromptDelta`]).
    ///
    /// The caller's side: every call passes the same session, whose turns may only grow
    /// between calls (recap passes the whole recorded session, a plugin's SDK the turns
    /// the host has sent so far), and `k` grows from one call to the next (calls may be
    /// skipped). `held` is how many messages of this replay's last prompt the caller
    /// still holds: all of them, or 0 (on the first call, or after a failed one).
    ///
    /// The replay's side: `kept` is at most `held`, and the prompt the answer stands for
    /// ([`PromptDelta::apply`]) is the one a fresh replay gives for call `k`
    /// ([`render_call`]), byte for byte: what a replay keeps between calls may save
    /// work, never change a prompt. A strategy renders only the first `k` turns; what
    /// comes after them is the recorded future (only a strategy that
    /// [replays the record](Strategy::replays_record) reads it).
    fn call(&mut self, session: &Session, k: usize, held: usize) -> Answer;
}

/// Call `k` of `session` rendered in isolation: a fresh replay asked for that one call.
/// What `recap render` shows, and the reference every replay's incremental path is
/// tested against.
pub fn render_call(
    strategy: &dyn Strategy,
    session: &Session,
    k: usize,
) -> Result<Vec<Message>, RenderError> {
    RenderRequest::for_call(session, k)?;
    let delta = strategy.open().call(session, k, 0)?.within(0)?;
    Ok(delta.tail)
}

/// The replay of a strategy whose every prompt is a pure function of its request: each
/// call rendered whole by `render`.
pub fn each_call<F>(render: F) -> Box<dyn Replay>
where
    F: FnMut(&RenderRequest<'_>) -> Result<Vec<Message>, RenderError> + 'static,
{
    Box::new(EachCall(render))
}

struct EachCall<F>(F);

impl<F> Replay for EachCall<F>
where
    F: FnMut(&RenderRequest<'_>) -> Result<Vec<Message>, RenderError>,
{
    fn call(&mut self, session: &Session, k: usize, _held: usize) -> Answer {
        let request = RenderRequest::for_call(session, k)?;
        (self.0)(&request).map(PromptDelta::whole)
    }
}

/// The replay of a strategy that has both a straightforward render (`reference`, a pure
/// function of the request) and a faster incremental path (`incremental`, a replay
/// whose per-session caches make later calls cheap): a fresh replay answers its first
/// call from the reference, every later call from the incremental path. So
/// [`render_call`] is the straightforward prompt, and each call the incremental path
/// answers in a walk over a session is held to it by the tests that compare the two.
pub fn reference_first<F>(reference: F, incremental: Box<dyn Replay>) -> Box<dyn Replay>
where
    F: FnMut(&RenderRequest<'_>) -> Result<Vec<Message>, RenderError> + 'static,
{
    Box::new(ReferenceFirst {
        reference: Some(reference),
        incremental,
    })
}

struct ReferenceFirst<F> {
    /// Until the first call.
    reference: Option<F>,
    incremental: Box<dyn Replay>,
}

impl<F> Replay for ReferenceFirst<F>
where
    F: FnMut(&RenderRequest<'_>) -> Result<Vec<Message>, RenderError>,
{
    fn call(&mut self, session: &Session, k: usize, held: usize) -> Answer {
        match self.reference.take() {
            Some(mut reference) => {
                let request = RenderRequest::for_call(session, k)?;
                reference(&request).map(PromptDelta::whole)
            }
            // The incremental path answers relative to its own last prompt, of which it
            // has none at its first call: it keeps nothing then.
            None => self.incremental.call(session, k, held),
        }
    }
}

/// A prompt as the first `kept` messages of the previous prompt the same replay
/// returned, then `tail` ([`Replay::call`]).
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
    pub fn within(self, held: usize) -> Result<Self, RenderError> {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn session(turns: usize) -> Session {
        let turns: Vec<serde_json::Value> = (1..=turns)
            .map(|n| serde_json::json!({"number": n, "program": format!("(p {n})"), "success": true}))
            .collect();
        Session::from_json(&serde_json::json!({
            "id": "s", "mission": "m", "system_prompt": "sys", "max_turns": 4, "turns": turns
        }))
        .expect("valid session")
    }

    /// The mission, then one USER message per completed turn.
    struct Counting;

    impl Strategy for Counting {
        fn spec(&self) -> String {
            "counting".into()
        }
        fn open(&self) -> Box<dyn Replay> {
            each_call(|r| {
                let mut out = vec![Message::system(r.system_prompt), Message::user(r.mission)];
                out.extend(r.turns.iter().map(|t| Message::user(t.program.as_str())));
                Ok(out)
            })
        }
    }

    /// Claims to keep two messages of whatever it was asked before.
    struct Keeper;

    impl Strategy for Keeper {
        fn spec(&self) -> String {
            "keeper".into()
        }
        fn open(&self) -> Box<dyn Replay> {
            struct Keeps;
            impl Replay for Keeps {
                fn call(&mut self, _: &Session, _: usize, _: usize) -> Answer {
                    Ok(PromptDelta {
                        kept: 2,
                        tail: Vec::new(),
                    })
                }
            }
            Box::new(Keeps)
        }
    }

    #[test]
    fn each_call_renders_every_call_whole_from_its_request() {
        let s = session(3);
        let mut replay = Counting.open();
        for k in 0..=3 {
            let delta = replay.call(&s, k, 2 + k).expect("renders");
            assert_eq!(delta.kept, 0);
            assert_eq!(delta.tail.len(), 2 + k, "call {k}");
            assert_eq!(render_call(&Counting, &s, k).expect("renders"), delta.tail);
        }
    }

    #[test]
    fn a_call_the_session_cannot_have_is_a_bad_request() {
        let s = session(3);
        let past_turns = render_call(&Counting, &s, 5).expect_err("only 3 turns recorded");
        assert_eq!(past_turns.kind, "bad_request");
        let mut budget = session(4);
        budget.max_turns = 4;
        let e = render_call(&Counting, &budget, 4).expect_err("past the budget");
        assert!(e.message.contains("max_turns is 4"), "{e}");
        let e = Counting
            .open()
            .call(&s, 4, 0)
            .expect_err("the replay checks too");
        assert_eq!(e.kind, "bad_request");
    }

    #[test]
    fn a_replay_keeping_more_than_the_caller_holds_is_a_delta_error() {
        let s = session(1);
        let e = render_call(&Keeper, &s, 1).expect_err("nothing is held");
        assert_eq!(e.kind, "delta");
        assert!(
            e.message
                .contains("keeps 2 messages of a previous prompt of 0"),
            "{e}"
        );
        let kept = PromptDelta {
            kept: 2,
            tail: vec![Message::user("new")],
        };
        let previous = [Message::user("a"), Message::user("b"), Message::user("c")];
        let kept = kept.within(3).expect("holds three");
        assert_eq!(
            kept.apply(&previous),
            [Message::user("a"), Message::user("b"), Message::user("new")]
        );
        let mut in_place = previous.to_vec();
        let removed = kept.apply_in_place(&mut in_place);
        assert_eq!(removed, [Message::user("c")]);
        assert_eq!(in_place.len(), 3);
    }

    #[test]
    fn a_reference_first_replay_answers_its_first_call_from_the_reference() {
        let s = session(3);
        let reference =
            |r: &RenderRequest<'_>| Ok(vec![Message::user(format!("reference {}", r.turns.len()))]);
        let incremental =
            || each_call(|r| Ok(vec![Message::user(format!("cached {}", r.turns.len()))]));
        let mut replay = reference_first(reference, incremental());
        let first = replay.call(&s, 1, 0).expect("renders");
        assert_eq!(first.tail, [Message::user("reference 1")]);
        let second = replay.call(&s, 3, 1).expect("renders");
        assert_eq!(second.tail, [Message::user("cached 3")]);
    }
}
