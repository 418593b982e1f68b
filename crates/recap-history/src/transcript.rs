//! full-history's messages of one session, each rendered once and kept across its calls.
//!
//! A call's full-history prompt is the opening and the messages of the turns completed
//! so far, and every turn renders the same at every later call (its feedback's turns
//! line depends only on its own position). So the incremental path renders each turn's
//! messages once per session and hands out clones, which share their text
//! ([`recap_core::Text`]) instead of copying it: rendering every turn at every call
//! would be quadratic in the session's length.

use crate::{opening, push_pairs};
use recap_core::{Answer, Form, Message, PromptDelta, RenderRequest, Replay, Session};

#[derive(Debug, Clone, Copy)]
struct LastPrompt {
    from: usize,
    to: usize,
    len: usize,
}

/// The opening and the messages of a session's first turns, extended as calls advance:
/// full-history's replay, and what `rolling-window` and `recorded` keep turns from.
#[derive(Debug, Default)]
pub struct Transcript {
    opening: Vec<Message>,
    messages: Vec<Message>,
    /// `turn_ends[i]`: the number of messages once turn `i + 1` is complete.
    turn_ends: Vec<usize>,
    /// The last prompt [`Transcript::answer`] handed out: the opening and turns
    /// `from + 1 ..= to`, of `len` messages.
    last_prompt: Option<LastPrompt>,
}

impl Transcript {
    pub fn new() -> Self {
        Self::default()
    }

    /// Extended to the request's completed turns (a request of the same session as
    /// every earlier one, with no fewer turns).
    pub fn advanced(&mut self, request: &RenderRequest<'_>) -> &mut Self {
        if self.opening.is_empty() {
            self.opening = opening(request);
        }
        self.advance(request);
        self
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
    pub fn answer(&mut self, from: usize, to: usize, held: usize) -> PromptDelta {
        let last = self.last_prompt.filter(|last| held == last.len && held > 0);
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

/// full-history's replay: the turns completed since the previous call, after all of
/// that call's prompt (the prompt only grows).
impl Replay for Transcript {
    fn call(&mut self, session: &Session, k: usize, held: usize) -> Answer {
        let request = RenderRequest::for_call(session, k)?;
        Ok(self.advanced(&request).answer(0, request.completed(), held))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_gen::builder::{SessionBuilder, TurnBuilder};
    use recap_gen::chat::ChatSessionBuilder;

    /// Every call through one replay, as the harness asks them, each applied to the
    /// prompt before it.
    fn replayed(s: &Session) -> Vec<Vec<Message>> {
        let mut replay = Transcript::new();
        let mut prompt: Vec<Message> = Vec::new();
        (0..=s.turn_count())
            .map(|k| {
                let delta = replay.call(s, k, prompt.len()).unwrap();
                prompt = delta.apply(&prompt);
                prompt.clone()
            })
            .collect()
    }

    fn check_every_call(s: &Session) {
        for (k, prompt) in replayed(s).into_iter().enumerate() {
            let request = RenderRequest::for_call(s, k).unwrap();
            assert_eq!(prompt, crate::render(&request), "call {k}");
        }
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
    fn a_call_keeps_the_whole_previous_prompt_when_the_caller_holds_it() {
        let s = ChatSessionBuilder::new("m")
            .text_turn("first", &["obs"])
            .text_turn("second", &["obs2"])
            .build();
        let mut replay = Transcript::new();
        let zero = replay.call(&s, 0, 0).unwrap();
        assert_eq!((zero.kept, zero.tail.len()), (0, 2));
        let one = replay.call(&s, 1, 2).unwrap();
        assert_eq!((one.kept, one.tail.len()), (2, 2));
        // The caller dropped the prompt (a failed call): all of it again.
        let two = replay.call(&s, 2, 0).unwrap();
        assert_eq!((two.kept, two.tail.len()), (0, 6));
    }

    #[test]
    fn kept_messages_are_shared_between_calls_not_copied() {
        let s = ChatSessionBuilder::new("m")
            .text_turn("first", &["obs"])
            .text_turn("second", &["obs2"])
            .build();
        let mut replay = Transcript::new();
        let one = replay.call(&s, 1, 0).unwrap().tail;
        let two = replay.call(&s, 2, 0).unwrap().tail;
        for (a, b) in one.iter().zip(&two) {
            assert!(recap_core::Text::ptr_eq(&a.content, &b.content));
        }
    }
}
