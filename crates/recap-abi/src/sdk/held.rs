//! The turns a plugin-side session holds, held once for the two sessions of a pair.
//!
//! `recap run` renders every call twice, through two plugin-side sessions (its
//! determinism check), and sends both the same turns. Opened with the same `pair` id and
//! the same request, the two sessions keep one copy of the turns: the first to receive a
//! delta applies it, and the other, receiving the same bytes from the same point, takes
//! the result without decoding or copying it. Each session keeps its own strategy
//! instance and state, so the check still compares two independent renders; what they
//! share is read-only to a strategy (`&Session`). Anything else — a session going back,
//! the two drifting apart, other open requests, a pair whose other session never opens
//! — leaves a session with its own copy of the turns it has taken, and it goes on alone
//! as an unpaired session does.

use super::{Failure, check_numbers};
use crate::tokens::TokenCounts;
use crate::wire::{self, DeltaTurns};
use recap_core::{Form, Session};
use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

/// What a session renders from: its turns and the host's token counts of them.
pub(super) struct Turns {
    pub(super) session: Session,
    pub(super) tokens: Option<TokenCounts>,
}

impl Turns {
    /// Keeps the first `turns_offset` turns and appends the delta's; true when the
    /// session went back (the strategy's state was built from turns that are gone).
    /// Checks the delta before it changes anything, so a refused delta leaves the turns
    /// as they were.
    fn apply(&mut self, delta: wire::Delta) -> Result<bool, Failure> {
        let offset = delta.turns_offset;
        let held = self.session.turn_count();
        if offset > held {
            return Err(Failure::bad_request(format!(
                "turns_offset {offset} is past the {held} turns this session holds"
            )));
        }
        match delta.turns {
            DeltaTurns::Ptc(turns) => {
                check_numbers(offset, turns.iter().map(|t| t.number))?;
                self.session.turns.truncate(offset);
                self.session.turns.extend(turns);
            }
            DeltaTurns::Chat(turns) => {
                check_numbers(offset, turns.iter().map(|t| t.number))?;
                self.session.chat_turns.truncate(offset);
                self.session.chat_turns.extend(turns);
            }
        }
        match (&mut self.tokens, delta.token_counts) {
            (Some(tokens), Some(counts)) if tokens.turns.len() >= offset => {
                tokens.turns.truncate(offset);
                tokens.turns.extend(counts);
            }
            // Counts for only part of the session count nothing: drop them all.
            (tokens, _) => *tokens = None,
        }
        Ok(offset < held)
    }

    /// A copy holding the first `n` turns (the turns after them are not copied).
    fn first(&mut self, n: usize) -> Turns {
        let turns = std::mem::take(&mut self.session.turns);
        let chat_turns = std::mem::take(&mut self.session.chat_turns);
        let mut session = self.session.clone();
        session.turns = turns[..n.min(turns.len())].to_vec();
        session.chat_turns = chat_turns[..n.min(chat_turns.len())].to_vec();
        self.session.turns = turns;
        self.session.chat_turns = chat_turns;
        let tokens = self.tokens.clone().map(|mut t| {
            t.turns.truncate(n);
            t
        });
        Turns { session, tokens }
    }
}

/// The turns of a pair, and the delta that brought them where they are.
struct Shared {
    turns: Turns,
    /// The bytes of the last delta applied, and the turn count it applied to.
    last: Vec<u8>,
    last_from: usize,
}

/// One copy of the turns for the two sessions of a pair.
pub(super) struct Pair {
    id: u64,
    /// The `session_open` request the first session was opened with.
    open: Vec<u8>,
    shared: Mutex<Shared>,
}

/// Pairs whose second session has not opened yet, by id.
static WAITING: Mutex<BTreeMap<u64, Weak<Pair>>> = Mutex::new(BTreeMap::new());

/// The shared turns change only in [`Turns::apply`], which checks before it changes and
/// calls no strategy code, so a panic under the lock (in a strategy's render) leaves
/// them whole: the other session may go on with them.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Where a session's turns are.
pub(super) enum Held {
    Own(Box<Turns>),
    /// In a pair's copy, of which this session has taken the first `taken` turns.
    Paired {
        pair: Arc<Pair>,
        taken: usize,
    },
}

impl Held {
    /// The turns of a session opened with request `open`, as one of pair `pair`.
    pub(super) fn open(turns: Turns, pair: Option<u64>, open: &[u8]) -> Held {
        let Some(id) = pair else {
            return Held::Own(Box::new(turns));
        };
        let taken = turns.session.turn_count();
        let mut waiting = lock(&WAITING);
        if let Some(pair) = waiting.remove(&id).and_then(|w| w.upgrade()) {
            // The second session of the pair: it shares the turns only when it was
            // opened as the first was (the same session, options and counts).
            return if pair.open == open {
                Held::Paired { pair, taken }
            } else {
                Held::Own(Box::new(turns))
            };
        }
        let pair = Arc::new(Pair {
            id,
            open: open.to_vec(),
            shared: Mutex::new(Shared {
                turns,
                last: Vec::new(),
                last_from: 0,
            }),
        });
        waiting.insert(id, Arc::downgrade(&pair));
        Held::Paired { pair, taken }
    }

    /// Applies the `session_render` delta `bytes` and renders: `render` gets the turns
    /// after it and whether the session went back.
    pub(super) fn step<R>(
        &mut self,
        bytes: &[u8],
        form: Form,
        render: impl FnOnce(&Turns, bool) -> Result<R, Failure>,
    ) -> Result<R, Failure> {
        if let Held::Paired { pair, taken } = self {
            let mut shared = lock(&pair.shared);
            let count = shared.turns.session.turn_count();
            if *taken == shared.last_from && !shared.last.is_empty() && shared.last == bytes {
                // The other session applied this delta from where this one is.
                *taken = count;
                return render(&shared.turns, false);
            }
            if *taken == count {
                let delta = wire::decode_delta(bytes, form)?;
                if delta.turns_offset == count {
                    shared.turns.apply(delta)?;
                    shared.last.clear();
                    shared.last.extend_from_slice(bytes);
                    shared.last_from = count;
                    *taken = shared.turns.session.turn_count();
                    return render(&shared.turns, false);
                }
                // Going back (or past the end, which `apply` refuses): alone from here.
                let mut own = shared.turns.first(*taken);
                drop(shared);
                let back = own.apply(delta)?;
                *self = Held::Own(Box::new(own));
                let Held::Own(own) = self else {
                    unreachable!("just set")
                };
                return render(own, back);
            }
            // The other session went elsewhere: alone from here.
            let own = shared.turns.first(*taken);
            drop(shared);
            *self = Held::Own(Box::new(own));
        }
        let Held::Own(turns) = self else {
            unreachable!("a paired session has returned above or become its own")
        };
        let back = turns.apply(wire::decode_delta(bytes, form)?)?;
        render(turns, back)
    }
}

impl Drop for Held {
    /// A pair whose second session never opened is no longer waited for.
    fn drop(&mut self) {
        if let Held::Paired { pair, .. } = self {
            let mut waiting = lock(&WAITING);
            if waiting
                .get(&pair.id)
                .is_some_and(|w| std::ptr::eq(w.as_ptr(), Arc::as_ptr(pair)))
            {
                waiting.remove(&pair.id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::SessionHeader;
    use std::sync::atomic::{AtomicU64, Ordering};

    /// A generated PTC-Lisp session of 6 turns.
    fn recorded() -> Session {
        recap_gen::generate_corpus(5, 1, 6..=6).remove(0)
    }

    /// Distinct pair ids for tests running side by side (they share `WAITING`).
    fn pair_id() -> u64 {
        static NEXT: AtomicU64 = AtomicU64::new(1 << 40);
        NEXT.fetch_add(1, Ordering::Relaxed)
    }

    /// Two sessions opened as a pair, with the default options.
    fn pair(s: &Session) -> (Held, Held) {
        let id = pair_id();
        (
            open(s, Some(id), &BTreeMap::new()),
            open(s, Some(id), &BTreeMap::new()),
        )
    }

    fn open(s: &Session, pair: Option<u64>, options: &BTreeMap<String, String>) -> Held {
        let bytes = wire::session_open_request(options, &SessionHeader::of_session(s), None, pair);
        let mut header = s.clone();
        header.turns.clear();
        let turns = Turns {
            session: header,
            tokens: None,
        };
        Held::open(turns, pair, &bytes)
    }

    /// The request for the turns `from..to`, after the first `offset`.
    fn delta(s: &Session, offset: usize, from: usize, to: usize) -> Vec<u8> {
        let mut bytes = Vec::new();
        wire::put_session_render_request(&mut bytes, offset, &s.turns[from..to]);
        bytes
    }

    /// What a step renders from: the turns, where they are, whether it went back.
    fn step(held: &mut Held, bytes: &[u8]) -> Result<(Session, usize, bool), Failure> {
        held.step(bytes, Form::Ptc, |turns, back| {
            Ok((turns.session.clone(), turns as *const Turns as usize, back))
        })
    }

    fn with_turns(s: &Session, n: usize) -> Session {
        let mut t = s.clone();
        t.turns.truncate(n);
        t
    }

    fn shares(a: &Held, b: &Held) -> bool {
        matches!((a, b), (Held::Paired { pair: x, .. }, Held::Paired { pair: y, .. }) if Arc::ptr_eq(x, y))
    }

    #[test]
    fn two_sessions_in_step_render_from_one_copy_of_the_turns() {
        let s = recorded();
        let (mut a, mut b) = pair(&s);
        assert!(shares(&a, &b));
        for k in 0..=s.turns.len() {
            let from = k.saturating_sub(1);
            let bytes = delta(&s, from, from, k);
            let (seen_a, at_a, back_a) = step(&mut a, &bytes).expect("a");
            let (seen_b, at_b, back_b) = step(&mut b, &bytes).expect("b");
            assert_eq!(seen_a, with_turns(&s, k), "call {k}");
            assert_eq!(seen_b, seen_a, "call {k}");
            assert_eq!(at_a, at_b, "call {k}: one copy");
            assert!(!back_a && !back_b);
        }
        assert!(shares(&a, &b));
    }

    #[test]
    fn a_session_going_back_takes_its_own_copy_and_the_other_goes_on() {
        let s = recorded();
        let (mut a, mut b) = pair(&s);
        for k in 1..=4 {
            let bytes = delta(&s, k - 1, k - 1, k);
            step(&mut a, &bytes).expect("a");
            step(&mut b, &bytes).expect("b");
        }
        let (seen, _, back) = step(&mut b, &delta(&s, 2, 2, 3)).expect("b goes back");
        assert_eq!(seen, with_turns(&s, 3));
        assert!(back, "the strategy's state must start over");
        assert!(matches!(b, Held::Own(_)));
        let (seen, _, back) = step(&mut a, &delta(&s, 4, 4, 5)).expect("a goes on");
        assert_eq!(seen, with_turns(&s, 5));
        assert!(!back);
        let (seen, _, _) = step(&mut b, &delta(&s, 3, 3, 4)).expect("b goes on alone");
        assert_eq!(seen, with_turns(&s, 4));
    }

    #[test]
    fn a_session_left_behind_keeps_the_turns_it_took() {
        let s = recorded();
        let (mut a, mut b) = pair(&s);
        step(&mut a, &delta(&s, 0, 0, 1)).expect("a");
        step(&mut b, &delta(&s, 0, 0, 1)).expect("b");
        for k in 2..=4 {
            step(&mut a, &delta(&s, k - 1, k - 1, k)).expect("a");
        }
        // b is three deltas behind: the pair's copy holds turns it has not taken.
        let (seen, at_b, _) = step(&mut b, &delta(&s, 1, 1, 2)).expect("b");
        assert_eq!(seen, with_turns(&s, 2));
        assert!(matches!(b, Held::Own(_)));
        let (seen, at_a, _) = step(&mut a, &delta(&s, 4, 4, 6)).expect("a");
        assert_eq!(seen, s);
        assert_ne!(at_a, at_b);
    }

    #[test]
    fn a_refused_delta_changes_nothing_either_session_sees() {
        let s = recorded();
        let (mut a, mut b) = pair(&s);
        step(&mut a, &delta(&s, 0, 0, 1)).expect("a");
        // Turn 3 does not follow turn 1; an offset past the turns held.
        assert!(step(&mut a, &delta(&s, 1, 2, 3)).is_err());
        assert!(step(&mut a, &delta(&s, 5, 1, 2)).is_err());
        let (seen, _, _) = step(&mut b, &delta(&s, 0, 0, 1)).expect("b takes a's first delta");
        assert_eq!(seen, with_turns(&s, 1));
        assert!(shares(&a, &b));
        let (seen, _, _) = step(&mut a, &delta(&s, 1, 1, 2)).expect("a");
        assert_eq!(seen, with_turns(&s, 2));
    }

    #[test]
    fn sessions_opened_otherwise_or_unpaired_hold_their_own_turns() {
        let s = recorded();
        let id = pair_id();
        let a = open(&s, Some(id), &BTreeMap::new());
        let options = BTreeMap::from([("window".to_string(), "2".to_string())]);
        let b = open(&s, Some(id), &options);
        assert!(matches!(a, Held::Paired { .. }));
        assert!(matches!(b, Held::Own(_)), "another open request");
        assert!(matches!(open(&s, None, &BTreeMap::new()), Held::Own(_)));
    }

    #[test]
    fn a_pair_is_no_longer_waited_for_once_its_first_session_closes() {
        let s = recorded();
        let id = pair_id();
        let a = open(&s, Some(id), &BTreeMap::new());
        assert!(lock(&WAITING).contains_key(&id));
        drop(a);
        assert!(!lock(&WAITING).contains_key(&id));
        let mut b = open(&s, Some(id), &BTreeMap::new());
        let (seen, _, _) = step(&mut b, &delta(&s, 0, 0, 2)).expect("b alone");
        assert_eq!(seen, with_turns(&s, 2));
        let c = open(&s, Some(id), &BTreeMap::new());
        assert!(shares(&b, &c), "b waits for a second session");
        assert!(!lock(&WAITING).contains_key(&id), "a pair has two sessions");
    }
}
