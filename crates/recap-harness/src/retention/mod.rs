//! Retention (SPEC section 9): the facts recorded so far and which of them a prompt
//! still carries verbatim. `recap run` and `recap inspect` both measure it here.
//!
//! Facts before call k: each live definition name, each print's first line (up to 120
//! characters), each failed turn's error message; in the chat form the facts of
//! [`chat_facts`] (SPEC 11.5), found in message contents and tool-call arguments. Equal facts count once, empty ones not
//! at all (an empty string is trivially "in" every prompt and would inflate the share).
//! Live names only accumulate (a redefinition keeps its name live) and prints and errors
//! only accumulate, so the fact list of call k+1 extends that of call k; a message's
//! scan therefore serves every call, and a message sent again unchanged is not scanned
//! again. A fact must lie inside one message: a match across a message boundary does not
//! count.

pub mod chat_facts;
mod facts;
mod matcher;

pub use facts::{Facts, PRINT_FACT_CHARS, print_fact};
pub use matcher::FactMatcher;

use crate::calls::calls;
use crate::line_store::{CallLines, LineStore};
use recap_core::{Form, Message, Session, Text};

/// One session's facts and what finding them costs once: the matcher. The facts found in
/// each line and in each shared text are kept in the session's [`LineStore`] (shared by
/// every strategy of the session, since they render many of the same lines and texts).
pub struct SessionRetention {
    facts: Facts,
    /// Facts recorded before call k: `facts.list()[..before_call[k]]`.
    before_call: Vec<usize>,
    matcher: FactMatcher,
    /// The lines [`SessionRetention::marks`] reads (`recap inspect` marks every call),
    /// apart from the run's store, which [`RetentionScans::mark`]'s caller passes.
    own: LineStore,
}

impl SessionRetention {
    pub fn new(session: &Session) -> Self {
        let mut facts = Facts::new();
        let mut before_call = Vec::with_capacity(calls(session).len());
        for k in calls(session) {
            before_call.push(facts.len());
            match session.form {
                Form::Ptc => facts.add_turn(&session.turns[k]),
                Form::Chat => facts.add_chat_turn(&session.chat_turns[k]),
            }
        }
        SessionRetention {
            matcher: FactMatcher::new(&facts),
            facts,
            before_call,
            own: LineStore::default(),
        }
    }

    /// The facts recorded before call `k`.
    pub fn facts_before(&self, k: usize) -> &[String] {
        &self.facts.list()[..self.before_call[k]]
    }

    /// Which of the facts recorded before call `k` the prompt `messages` keeps, in the
    /// order of [`SessionRetention::facts_before`].
    pub fn marks(&mut self, k: usize, messages: &[Message]) -> Vec<bool> {
        let mut own = std::mem::take(&mut self.own);
        let mut scans = RetentionScans::default();
        scans.mark(
            self,
            k,
            messages,
            &vec![None; messages.len()],
            &mut own.call(),
        );
        self.own = own;
        scans.present[..self.before_call[k]]
            .iter()
            .map(|&c| c > 0)
            .collect()
    }

    /// Indices of the session's facts (any call's) found in `content`.
    fn scan<'m>(&self, content: &'m Text, lines: &mut CallLines<'_, 'm>) -> Vec<u32> {
        if let Some(found) = lines.text_facts(content) {
            return found.to_vec();
        }
        let found = self.matcher.scan_lines(content, &self.facts, lines);
        lines.keep_text_facts(content, &found);
        found
    }

    /// Indices of the facts found in a message: in its content or in one of its tool
    /// calls' arguments (a fact must lie inside one of these texts), ascending.
    fn scan_message<'m>(&self, m: &'m Message, lines: &mut CallLines<'_, 'm>) -> Vec<u32> {
        let mut found = self.scan(&m.content, lines);
        if !m.tool_calls.is_empty() {
            for call in &m.tool_calls {
                found.extend(self.scan(&call.arguments, lines));
            }
            found.sort_unstable();
            found.dedup();
        }
        found
    }
}

/// The retention of one call: facts recorded before it, and how many the prompt kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CallRetention {
    pub facts: u64,
    pub retained: u64,
}

/// One strategy's retention over the calls of a session: the facts found in each
/// message of its previous call, so a message it sends again is not scanned again, and
/// how many of its messages hold each fact, so a call costs only the messages that
/// entered or left the prompt (a chat strategy sends nearly the whole history at every
/// call: counting every message's facts again made retention quadratic in a session's
/// length).
#[derive(Debug, Default)]
pub struct RetentionScans {
    prev: Vec<Vec<u32>>,
    /// For each of the session's facts, how many messages of the previous call's
    /// prompt hold it.
    present: Vec<u32>,
    /// Facts recorded before the previous call (the facts that count).
    counted: usize,
    /// How many of those the previous call's prompt holds.
    retained: u64,
}

impl RetentionScans {
    /// Marks the facts recorded before call `k` that `messages` carry verbatim.
    /// `reuse[i]`, when set, is the index of a message of the previous call marked here
    /// with the same content as `messages[i]`. `lines` are the session's lines, as
    /// [`SessionRetention`]'s per-line results were found with.
    pub fn mark<'m>(
        &mut self,
        retention: &SessionRetention,
        k: usize,
        messages: &'m [Message],
        reuse: &[Option<usize>],
        lines: &mut CallLines<'_, 'm>,
    ) -> CallRetention {
        let n_facts = retention.before_call[k];
        if self.present.len() < retention.facts.len() {
            self.present.resize(retention.facts.len(), 0);
        }
        // The facts recorded since the previous call (or, going back, no longer
        // recorded) that its prompt already holds.
        let held = |range: &[u32]| range.iter().filter(|&&c| c > 0).count() as u64;
        if n_facts >= self.counted {
            self.retained += held(&self.present[self.counted..n_facts]);
        } else {
            self.retained -= held(&self.present[n_facts..self.counted]);
        }
        self.counted = n_facts;
        // Messages that stayed where they were keep their scans in place (a chat
        // strategy's prompt is mostly the previous one and a few messages more), so a
        // call costs what changed.
        let same = reuse
            .iter()
            .take(self.prev.len())
            .enumerate()
            .take_while(|&(i, r)| *r == Some(i))
            .count();
        let mut rest = self.prev.split_off(same);
        // A previous scan is moved to the message that reuses it (its facts were held
        // and still are); a second message reusing the same one copies it from the
        // first and adds its facts again, as does a new message.
        let mut moved_to: Vec<Option<usize>> = vec![None; rest.len()];
        self.prev.reserve(messages.len() - same);
        for (i, (m, r)) in messages.iter().zip(reuse).enumerate().skip(same) {
            let found = match *r {
                // Kept in place by an earlier message, which holds it still.
                Some(j) if j < same => {
                    let found = self.prev[j].clone();
                    self.add(&found);
                    found
                }
                Some(j) => match moved_to[j - same] {
                    Some(first) => {
                        let found = self.prev[first].clone();
                        self.add(&found);
                        found
                    }
                    None => {
                        moved_to[j - same] = Some(i);
                        std::mem::take(&mut rest[j - same])
                    }
                },
                None => {
                    let found = retention.scan_message(m, lines);
                    self.add(&found);
                    found
                }
            };
            self.prev.push(found);
        }
        // The previous messages no message reuses left the prompt.
        for (old, moved) in rest.iter().zip(&moved_to) {
            if moved.is_none() {
                self.remove(old);
            }
        }
        CallRetention {
            facts: n_facts as u64,
            retained: self.retained,
        }
    }

    /// A message holding `found` entered the prompt.
    fn add(&mut self, found: &[u32]) {
        for &f in found {
            let c = &mut self.present[f as usize];
            if *c == 0 && (f as usize) < self.counted {
                self.retained += 1;
            }
            *c += 1;
        }
    }

    /// A message holding `found` left the prompt.
    fn remove(&mut self, found: &[u32]) {
        for &f in found {
            let c = &mut self.present[f as usize];
            *c -= 1;
            if *c == 0 && (f as usize) < self.counted {
                self.retained -= 1;
            }
        }
    }

    /// The previous call did not render: there is nothing to reuse from.
    pub fn forget(&mut self) {
        self.prev.clear();
        self.present.fill(0);
        self.retained = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session() -> Session {
        let json = serde_json::json!({
            "id": "s",
            "mission": "m",
            "system_prompt": "sys",
            "max_turns": 5,
            "turns": [
                {"number": 1, "program": "(def a 1)", "success": true,
                 "prints": ["alpha\nnot a fact"],
                 "definitions": [{"name": "total-a", "kind": "def"}]},
                {"number": 2, "program": "(x)", "success": false,
                 "prints": ["beta"],
                 "error": {"message": "boom: gamma"}},
                {"number": 3, "program": "(y)", "success": true, "prints": ["alpha"]}
            ]
        });
        Session::from_json(&json).expect("valid test session")
    }

    #[test]
    fn facts_before_each_call_extend_those_of_the_last() {
        let r = SessionRetention::new(&session());
        assert!(r.facts_before(0).is_empty());
        assert_eq!(r.facts_before(1), ["total-a", "alpha"]);
        assert_eq!(
            r.facts_before(2),
            ["total-a", "alpha", "beta", "boom: gamma"]
        );
    }

    /// Texts shared between prompts (a session's turns, as every strategy renders them)
    /// are scanned once and found to hold what an unshared copy holds.
    #[test]
    fn shared_texts_are_scanned_once_with_the_same_result() {
        let mut r = SessionRetention::new(&session());
        let shared = Text::from("alpha and boom: gamma, total-a");
        let held = shared.clone();
        let copy = Text::from(shared.as_str());
        let mut store = LineStore::default();
        let fresh = r.scan(&copy, &mut store.call());
        assert_eq!(fresh, [0, 1, 3]);
        assert_eq!(store.shared_texts(), 0, "an unshared text is not kept");
        assert_eq!(r.scan(&shared, &mut store.call()), fresh);
        assert_eq!(r.scan(&shared, &mut store.call()), fresh);
        assert_eq!(store.shared_texts(), 1);
        drop(held);
        let m = Message::user(shared);
        assert_eq!(
            r.marks(2, std::slice::from_ref(&m)),
            [true, true, false, true]
        );
    }

    /// A message reused from the previous call keeps its scan, and the marks equal a
    /// fresh scan: facts of later calls found in it are not counted early.
    #[test]
    fn reused_scans_mark_what_a_fresh_scan_marks() {
        let mut r = SessionRetention::new(&session());
        let mut scans = RetentionScans::default();
        let mut store = LineStore::default();
        let first = [Message::user("alpha beta total-a")];
        let call = scans.mark(&r, 1, &first, &[None], &mut store.call());
        assert_eq!(
            call,
            CallRetention {
                facts: 2,
                retained: 2
            }
        );
        let second = [
            Message::user("boom: gamma"),
            Message::user("alpha beta total-a"),
        ];
        let call = scans.mark(&r, 2, &second, &[None, Some(0)], &mut store.call());
        assert_eq!(
            call,
            CallRetention {
                facts: 4,
                retained: 4
            }
        );
        assert_eq!(r.marks(2, &second), [true; 4]);
        assert_eq!(
            r.marks(
                2,
                &[
                    Message::user("total-a"),
                    Message::user("gam"),
                    Message::user("ma")
                ]
            ),
            [true, false, false, false],
            "a fact split over two messages is not kept"
        );
    }

    proptest::proptest! {
        /// Counting only the messages that enter and leave the prompt gives, at every
        /// call, what marking the whole prompt afresh gives: whatever messages repeat,
        /// are reused (once or twice), dropped, or come back, in whichever call order,
        /// and after a failed call.
        #[test]
        fn incremental_counts_equal_fresh_marks(
            calls in proptest::collection::vec(
                (
                    0usize..3,
                    proptest::collection::vec((0usize..6, proptest::bool::ANY), 0..6),
                    proptest::bool::weighted(0.1),
                ),
                1..12,
            )
        ) {
            const TEXTS: [&str; 6] =
                ["alpha", "beta total-a", "boom: gamma", "nothing", "alpha beta", "total-a"];
            let mut r = SessionRetention::new(&session());
            let mut scans = RetentionScans::default();
            let mut store = LineStore::default();
            let mut prev: Vec<&str> = Vec::new();
            for (k, picks, failed) in calls {
                if failed {
                    scans.forget();
                    prev.clear();
                    continue;
                }
                let texts: Vec<&str> = picks.iter().map(|&(t, _)| TEXTS[t]).collect();
                let reuse: Vec<Option<usize>> = picks
                    .iter()
                    .map(|&(t, reuse)| {
                        prev.iter().position(|p| *p == TEXTS[t]).filter(|_| reuse)
                    })
                    .collect();
                let messages: Vec<Message> = texts.iter().map(|t| Message::user(*t)).collect();
                let call = scans.mark(&r, k, &messages, &reuse, &mut store.call());
                let fresh = r.marks(k, &messages);
                proptest::prop_assert_eq!(call.facts, fresh.len() as u64);
                proptest::prop_assert_eq!(
                    call.retained,
                    fresh.iter().filter(|m| **m).count() as u64
                );
                prev = texts;
            }
        }
    }
}
