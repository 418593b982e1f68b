//! full-history's messages of one session, each rendered once and kept across its calls.
//!
//! A call's full-history prompt is the opening and the messages of the turns completed
//! so far, and every turn renders the same at every later call (its feedback's turns
//! line depends only on its own position). So the incremental path renders each turn's
//! messages once per session and hands out clones, which share their text
//! ([`recap_core::Text`]) instead of copying it; before, every call rendered every turn
//! again, quadratic in the session's length.

use crate::{opening, push_pairs};
use recap_core::{
    Form, Message, PromptDelta, RenderError, RenderRequest, Session, SessionIdentity, SessionState,
};

#[derive(Debug, Clone, Copy)]
struct LastPrompt {
    from: usize,
    to: usize,
    len: usize,
}

/// The opening and the messages of a session's first turns, extended as calls advance.
#[derive(Debug)]
pub struct Transcript {
    identity: SessionIdentity,
    opening: Vec<Message>,
    messages: Vec<Message>,
    /// `turn_ends[i]`: the number of messages once turn `i + 1` is complete.
    turn_ends: Vec<usize>,
    /// The last prompt [`Transcript::answer`] handed out: the opening and turns
    /// `from + 1 ..= to`, of `len` messages.
    last_prompt: Option<LastPrompt>,
}

impl Transcript {
    /// The session's transcript from `state`, extended to its first `k` turns; a state
    /// holding another session's (or anything else) starts over.
    pub fn for_session<'s>(
        state: &'s mut SessionState,
        request: &RenderRequest<'_>,
        session: &Session,
    ) -> &'s mut Self {
        let t = state.reuse_or_set(
            |t: &Transcript| t.identity.matches(session),
            || Transcript {
                identity: SessionIdentity::of(session),
                opening: opening(request),
                messages: Vec::new(),
                turn_ends: Vec::new(),
                last_prompt: None,
            },
        );
        t.advance(request);
        t
    }

    fn advance(&mut self, request: &RenderRequest<'_>) {
        let done = self.turn_ends.len();
        match request.form {
            Form::Ptc => {
                for (i, turn) in request.turns.iter().enumerate().skip(done) {
                    push_pairs(
                        &mut self.messages,
                        std::slice::from_ref(turn),
                        i,
                        request.max_turns,
                    );
                    self.turn_ends.push(self.messages.len());
                }
            }
            Form::Chat => {
                for turn in request.chat_turns.iter().skip(done) {
                    self.messages.extend(turn.messages());
                    self.turn_ends.push(self.messages.len());
                }
            }
        }
    }

    /// `[SYSTEM, USER(mission)]`.
    pub fn opening(&self) -> &[Message] {
        &self.opening
    }

    /// The messages of turns `from + 1 ..= to` (1-based; `to` at most the turns this
    /// transcript was extended to).
    pub fn turns(&self, from: usize, to: usize) -> &[Message] {
        let start = if from == 0 {
            0
        } else {
            self.turn_ends[from - 1]
        };
        let end = if to == 0 { 0 } else { self.turn_ends[to - 1] };
        &self.messages[start..end]
    }

    /// The prompt of the opening and turns `from + 1 ..= to`, as what it keeps of the
    /// last prompt answered here when the caller holds that one (`held`, its length):
    /// all of it when only later turns were added, the opening when the turns moved.
    pub fn answer(&mut self, from: usize, to: usize, held: Option<usize>) -> PromptDelta {
        let last = self.last_prompt.filter(|last| held == Some(last.len));
        let kept = match last {
            Some(last) if last.from == from && last.to <= to => last.len,
            Some(_) => self.opening.len(),
            None => 0,
        };
        let turns_kept = kept.saturating_sub(self.opening.len());
        let mut tail = Vec::with_capacity(self.opening.len() + self.turns(from, to).len() - kept);
        tail.extend_from_slice(&self.opening[kept.min(self.opening.len())..]);
        tail.extend_from_slice(&self.turns(from, to)[turns_kept..]);
        self.last_prompt = Some(LastPrompt {
            from,
            to,
            len: self.opening.len() + self.turns(from, to).len(),
        });
        PromptDelta { kept, tail }
    }

    /// The full-history prompt of the call after the first `k` turns.
    pub fn prompt(&self, k: usize) -> Vec<Message> {
        let turns = self.turns(0, k);
        let mut out = Vec::with_capacity(self.opening.len() + turns.len());
        out.extend_from_slice(&self.opening);
        out.extend_from_slice(turns);
        out
    }
}

/// full-history's `render_session`: the call's prompt from the session's transcript.
pub fn render_session(
    session: &Session,
    k: usize,
    state: &mut SessionState,
) -> Result<Vec<Message>, RenderError> {
    render_session_delta(session, k, state, None).map(|d| d.tail)
}

/// full-history's `render_session_delta`: the turns completed since the previous call
/// rendered through `state`, after all of that call's prompt (the prompt only grows).
pub fn render_session_delta(
    session: &Session,
    k: usize,
    state: &mut SessionState,
    held: Option<usize>,
) -> Result<PromptDelta, RenderError> {
    let request = RenderRequest::for_call(session, k)?;
    let t = Transcript::for_session(state, &request, session);
    Ok(t.answer(0, request.completed(), held))
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_gen::builder::{SessionBuilder, TurnBuilder};
    use recap_gen::chat::ChatSessionBuilder;

    fn check_every_call(s: &Session) {
        let mut state = SessionState::new();
        for k in 0..=s.turn_count() {
            let request = RenderRequest::for_call(s, k).unwrap();
            assert_eq!(
                render_session(s, k, &mut state).unwrap(),
                crate::render(&request),
                "call {k}"
            );
        }
        // Back to an earlier call: a prefix of what is kept, still the fresh render.
        let request = RenderRequest::for_call(s, 1).unwrap();
        assert_eq!(
            render_session(s, 1, &mut state).unwrap(),
            crate::render(&request)
        );
    }

    #[test]
    fn equals_the_stateless_render_at_every_call_of_both_forms() {
        let ptc = SessionBuilder::new("m")
            .system("sys")
            .max_turns(6)
            .turn(TurnBuilder::ok("(+ 1 2)").prints(["3"]))
            .turn(TurnBuilder::failed("(fail)", "boom"))
            .turn(TurnBuilder::ok("(return 1)").feedback("recorded"))
            .build();
        check_every_call(&ptc);
        let chat = ChatSessionBuilder::new("m")
            .tool_turn("a", &[("c1", "f", "{}")], &["r1"])
            .text_turn("thinking", &["user says"])
            .tool_turn("", &[("c2", "g", "{}"), ("c3", "g", "{}")], &["r2", "r3"])
            .build();
        check_every_call(&chat);
    }

    #[test]
    fn a_state_of_another_session_starts_over() {
        let a = ChatSessionBuilder::new("a").text_turn("x", &["y"]).build();
        let b = ChatSessionBuilder::new("b").text_turn("z", &["w"]).build();
        let mut state = SessionState::new();
        render_session(&a, 1, &mut state).unwrap();
        let request = RenderRequest::for_call(&b, 1).unwrap();
        assert_eq!(
            render_session(&b, 1, &mut state).unwrap(),
            crate::render(&request)
        );
    }

    #[test]
    fn kept_messages_are_shared_between_calls_not_copied() {
        let s = ChatSessionBuilder::new("m")
            .text_turn("first", &["obs"])
            .text_turn("second", &["obs2"])
            .build();
        let mut state = SessionState::new();
        let one = render_session(&s, 1, &mut state).unwrap();
        let two = render_session(&s, 2, &mut state).unwrap();
        for (a, b) in one.iter().zip(&two) {
            assert!(recap_core::Text::ptr_eq(&a.content, &b.content));
        }
    }
}
