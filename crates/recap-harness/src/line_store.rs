//! The lines of the session a thread replays, each distinct line of its prompts with an
//! id, and what counting, retention and the strategies' token budgets learn of them.
//!
//! The harness's counting (each line's tokens, per tokenizer), retention (each line's
//! facts) and the strategies with token budgets (each message's tokens, at every call of
//! both renders) read the same lines again and again: a chat strategy resends the
//! history, a PTC-Lisp strategy rebuilds its one USER message at every call. The store
//! gives each distinct line ([`crate::segments`]) an id once and keeps beside it what any
//! reader learnt, so a line is tokenized once per tokenizer and searched for facts once
//! per session, whichever reader met it first.
//!
//! Two shortcuts spare the hashing of lines. A text that someone else also holds (the
//! turns' texts, which every strategy sends) is remembered by its allocation with its
//! counts and facts; the store holds a clone, so the address cannot name another text
//! while it is remembered. And within one call ([`LineStore::call`]) the walk of a text
//! (its lines' ids) is remembered by address, so the text's second reader (retention,
//! then each tokenizer) gets the ids without hashing a line.
//!
//! Each thread has one store, which holds one session at a time
//! ([`LineStore::begin_session`]): the run's counting and retention read it through
//! [`LineStore::with_thread`], and [`Tokenizer`]'s `recap_core::TokenCounter` (here),
//! which the strategies' budgets count with, finds it by the thread. A strategy is given
//! its counter for the whole run (the registry holds it), not per session, so passing
//! the store instead would put it on the strategy contract, the plugin ABI and the
//! Python bridge. What is known of a session's texts and facts ends with the session;
//! the lines and their counts stay for the thread's next session up to 4 MB
//! (sessions of one corpus share system prompts and tool descriptions: without them,
//! the imported tau2 corpus costs 9 % more instructions).
//!
//! Everything kept is a pure function of its text, so the store changes no figure, only
//! what is computed again. Its memory is bounded: past 64 MB of distinct lines
//! the lines start over before the next call (never within one, so an id names one line
//! for a whole call), past 64 MB of shared texts those start over.

use crate::segments::{ends_segment, segments};
use crate::tokenizer::Tokenizer;
use recap_core::Text;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

/// Bytes of distinct lines kept (a pathological session's; the store is a shortcut).
const LINE_BYTES: usize = 64 << 20;
/// Bytes of distinct lines a thread's store carries into its next session.
const CARRY_BYTES: usize = 4 << 20;
/// Bytes of shared texts kept (mostly the session's own, alive anyway).
const TEXT_BYTES: usize = 64 << 20;

// One bit per tokenizer in [`Line::run_counted`].
const _: () = assert!(Tokenizer::SLOTS <= u8::BITS as usize);

/// A line and what is known of it.
struct Line {
    text: Arc<str>,
    /// Per tokenizer ([`Tokenizer::slot`]): the count, 0 until counted (a line has at
    /// least one token).
    counts: [u32; Tokenizer::SLOTS],
    /// The session `run_counted` and `facts` belong to ([`LineStore::begin_session`]).
    session: u32,
    /// Bit `slot` set once the run's counting met the line in the session (its
    /// statistics tell a line tokenized from one reused, whoever counted it).
    run_counted: u8,
    /// The session's facts found in the line.
    facts: Option<Box<[u32]>>,
}

impl Line {
    /// The line's count under `tok`, tokenized at the first asking.
    #[inline]
    fn count(&mut self, tok: &Tokenizer) -> u32 {
        let cell = &mut self.counts[tok.slot()];
        if *cell == 0 {
            *cell = u32::try_from(tok.count_tokens(&self.text)).unwrap_or(u32::MAX);
        }
        *cell
    }

    /// What the line holds for session `session`, the previous session's dropped.
    #[inline]
    fn of_session(&mut self, session: u32) -> &mut Line {
        if self.session != session {
            self.session = session;
            self.run_counted = 0;
            self.facts = None;
        }
        self
    }
}

/// A shared text and what is known of it.
struct SharedText {
    /// A clone, never read: while the store holds it, no other text has its address.
    _held: Text,
    /// Per tokenizer: the count, 0 until counted.
    counts: [u32; Tokenizer::SLOTS],
    /// Per tokenizer: once the run's counting counted the text, how many line counts
    /// that read (a hit reuses them all, as the statistics report).
    run_lines: [Option<u64>; Tokenizer::SLOTS],
    facts: Option<Box<[u32]>>,
}

/// The texts walked in one call and the call before ([`CallLines::walk_text`]).
#[derive(Default)]
struct Walks {
    /// By address and length: where the text's ids are in `ids`.
    by_text: FxHashMap<(usize, usize), Range<usize>>,
    ids: Vec<u32>,
    /// This call's walks in the order they were made, and the previous call's
    /// (`previous_ids`).
    order: Vec<Range<usize>>,
    previous_order: Vec<Range<usize>>,
    previous_ids: Vec<u32>,
}

impl Walks {
    fn clear(&mut self) {
        self.by_text.clear();
        self.ids.clear();
        self.order.clear();
        self.previous_order.clear();
        self.previous_ids.clear();
    }
}

/// The distinct lines of one session (and, with their counts only, of the sessions before
/// it on the thread), each with an id, and the session's shared texts.
#[derive(Default)]
pub struct LineStore {
    ids: FxHashMap<Arc<str>, u32>,
    lines: Vec<Line>,
    line_bytes: usize,
    /// The session held, counted from 0 ([`LineStore::begin_session`]).
    session: u32,
    walks: Walks,
    texts: FxHashMap<usize, SharedText>,
    text_bytes: usize,
}

impl LineStore {
    /// Opens one call's reads. The walks of the previous call are forgotten (their texts
    /// may be gone, and their addresses reused); lines past their bound start over here,
    /// never in the middle of a call.
    ///
    /// The texts walked must outlive the returned handle (`'m`), which is what makes a
    /// text's address a safe key for the call.
    pub fn call<'m>(&mut self) -> CallLines<'_, 'm> {
        let w = &mut self.walks;
        w.by_text.clear();
        std::mem::swap(&mut w.ids, &mut w.previous_ids);
        std::mem::swap(&mut w.order, &mut w.previous_order);
        w.ids.clear();
        w.order.clear();
        if self.line_bytes > LINE_BYTES {
            self.start_over();
        }
        CallLines {
            store: self,
            texts: PhantomData,
        }
    }

    /// Forgets every line, and with them every id (the walks' too).
    fn start_over(&mut self) {
        self.ids.clear();
        self.lines.clear();
        self.line_bytes = 0;
        self.walks.clear();
    }

    /// Makes this thread's store hold a new session: the previous one's texts, facts
    /// and walks are forgotten, its lines and their counts kept up to 4 MB.
    pub fn begin_session() {
        LineStore::with_thread(|store| {
            store.texts.clear();
            store.text_bytes = 0;
            store.walks.clear();
            store.session = store.session.wrapping_add(1);
            // Past the bound, or when the sessions' numbers come round again (a line
            // marked with one would seem to be of this session).
            if store.line_bytes > CARRY_BYTES || store.session == 0 {
                store.start_over();
            }
        });
    }

    /// `f` with this thread's store; not to be called from within `f`.
    pub fn with_thread<T>(f: impl FnOnce(&mut LineStore) -> T) -> T {
        THREAD.with(|store| f(&mut store.borrow_mut()))
    }

    /// The id of `line`, given one if it is new.
    fn id(&mut self, line: &str) -> u32 {
        if let Some(&id) = self.ids.get(line) {
            return id;
        }
        let id = self.lines.len() as u32;
        let text: Arc<str> = Arc::from(line);
        self.line_bytes += line.len();
        self.ids.insert(Arc::clone(&text), id);
        self.lines.push(Line {
            text,
            counts: [0; Tokenizer::SLOTS],
            session: self.session,
            run_counted: 0,
            facts: None,
        });
        id
    }

    /// The count of line `id` under `tok`, tokenized at the first asking.
    fn count(&mut self, tok: &Tokenizer, id: u32) -> u32 {
        self.lines[id as usize].count(tok)
    }

    /// What is known of `text`, if someone else holds it and it is remembered. A text no
    /// one else holds is never found: were it remembered, the store would hold it too.
    fn shared(&mut self, text: &Text) -> Option<&mut SharedText> {
        if !text.is_shared() {
            return None;
        }
        self.texts.get_mut(&text.address())
    }

    /// Remembers `text` when someone else holds it; what is known of it to fill in.
    fn keep(&mut self, text: &Text) -> Option<&mut SharedText> {
        if !text.is_shared() {
            return None;
        }
        // Checked before the lookup, so that there is one: near the bound a text already
        // kept may go too, which costs only its results.
        if self.text_bytes + text.len() > TEXT_BYTES {
            self.texts.clear();
            self.text_bytes = 0;
        }
        let bytes = &mut self.text_bytes;
        Some(self.texts.entry(text.address()).or_insert_with(|| {
            *bytes += text.len();
            SharedText {
                _held: text.clone(),
                counts: [0; Tokenizer::SLOTS],
                run_lines: [None; Tokenizer::SLOTS],
                facts: None,
            }
        }))
    }

    /// The token count of `text` for a budget: line by line where the encoding allows it
    /// exactly ([`crate::Encoding::line_additive`]), otherwise whole.
    ///
    /// Budgets count between the run's calls (while a strategy renders), so the lines
    /// may start over here too: outside `recap run` no call ever opens.
    pub fn text_tokens(&mut self, tok: &Tokenizer, text: &str) -> u64 {
        if text.is_empty() {
            return 0;
        }
        if self.line_bytes > LINE_BYTES {
            self.start_over();
        }
        if !tok.encoding().line_additive() {
            let id = self.id(text);
            return u64::from(self.count(tok, id));
        }
        segments(text)
            .map(|line| {
                let id = self.id(line);
                u64::from(self.count(tok, id))
            })
            .sum()
    }

    /// [`LineStore::text_tokens`] of a message text, found by allocation when shared.
    pub fn shared_text_tokens(&mut self, tok: &Tokenizer, text: &Text) -> u64 {
        let slot = tok.slot();
        match self.shared(text) {
            Some(known) if known.counts[slot] != 0 => u64::from(known.counts[slot]),
            _ => {
                let n = self.text_tokens(tok, text);
                if let Some(known) = self.keep(text) {
                    known.counts[slot] = u32::try_from(n).unwrap_or(u32::MAX);
                }
                n
            }
        }
    }

    /// How many shared texts are remembered.
    #[cfg(test)]
    pub(crate) fn shared_texts(&self) -> usize {
        self.texts.len()
    }
}

thread_local! {
    /// This thread's store ([`LineStore::with_thread`]).
    static THREAD: RefCell<LineStore> = RefCell::new(LineStore::default());
}

/// Strategies with token budgets count with the run's tokenizer (SPEC 11.3), through the
/// thread's store: they count the same messages at every call of both renders.
impl recap_core::TokenCounter for Tokenizer {
    fn name(&self) -> &str {
        self.encoding().name()
    }
    fn count(&self, text: &str) -> u64 {
        budget_count(
            |store| store.text_tokens(self, text),
            || self.count_tokens(text),
        )
    }
    fn count_text(&self, text: &Text) -> u64 {
        budget_count(
            |store| store.shared_text_tokens(self, text),
            || self.count_tokens(text),
        )
    }
}

/// A budget's count through this thread's store, or `direct` when the store is in use
/// (never while a strategy renders, but a count must not panic).
fn budget_count(
    through: impl FnOnce(&mut LineStore) -> u64,
    direct: impl FnOnce() -> usize,
) -> u64 {
    THREAD.with(|store| match store.try_borrow_mut() {
        Ok(mut store) => through(&mut store),
        Err(_) => direct() as u64,
    })
}

/// One call's reads of a [`LineStore`]; the texts it walks are borrowed for `'m`.
pub struct CallLines<'s, 'm> {
    store: &'s mut LineStore,
    texts: PhantomData<&'m Text>,
}

impl<'m> CallLines<'_, 'm> {
    /// The id of `line`, given one if it is new.
    pub fn id(&mut self, line: &str) -> u32 {
        self.store.id(line)
    }

    /// The line with id `id`.
    #[inline]
    pub fn line(&self, id: u32) -> &str {
        &self.store.lines[id as usize].text
    }

    /// How many lines have ids (ids are `0..len`).
    pub fn len(&self) -> usize {
        self.store.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.store.lines.is_empty()
    }

    /// The ids of `text`'s lines in order, as positions in [`CallLines::walked_id`]: read
    /// line by line at its first walk in this call, then remembered.
    ///
    /// A strategy's prompt is mostly its previous prompt, and a rebuilt message mostly
    /// the message it replaces (a PTC-Lisp summary gains a turn at the end), so the
    /// lines of the text walked in the same place of the previous call are tried first,
    /// in order, by comparing bytes: each that `text` continues with, ending where a
    /// segment of `text` ends (`segments::ends_segment`), is a segment of `text` with a known id.
    /// From the first that is not, the rest is looked up line by line. Either way the
    /// ids are those of `text`'s own segments.
    pub fn walk_text(&mut self, text: &'m Text) -> Range<usize> {
        let key = (text.address(), text.len());
        if let Some(r) = self.store.walks.by_text.get(&key) {
            return r.clone();
        }
        let (lines, w) = (&self.store.lines, &mut self.store.walks);
        let start = w.ids.len();
        let mut at = 0;
        if let Some(before) = w.previous_order.get(w.order.len()) {
            for &id in &w.previous_ids[before.clone()] {
                let line = &*lines[id as usize].text;
                let end = at + line.len();
                if !text.as_bytes()[at..].starts_with(line.as_bytes()) || !ends_segment(text, end) {
                    break;
                }
                w.ids.push(id);
                at = end;
            }
        }
        for line in segments(&text[at..]) {
            let id = self.store.id(line);
            self.store.walks.ids.push(id);
        }
        let w = &mut self.store.walks;
        let r = start..w.ids.len();
        w.order.push(r.clone());
        w.by_text.insert(key, r.clone());
        r
    }

    /// The id at position `i` of a range [`CallLines::walk_text`] returned.
    #[inline]
    pub fn walked_id(&self, i: usize) -> u32 {
        self.store.walks.ids[i]
    }

    /// The count of line `id` under `tok` for the run's counting, and whether the run's
    /// counting met the line before.
    #[inline]
    pub fn run_count(&mut self, tok: &Tokenizer, id: u32) -> (u32, bool) {
        let line = self.store.lines[id as usize].of_session(self.store.session);
        let bit = 1 << tok.slot();
        let met = line.run_counted & bit != 0;
        line.run_counted |= bit;
        (line.count(tok), met)
    }

    /// The run's count of a shared text under `tok`, with how many line counts it read,
    /// once the run's counting counted it.
    pub fn run_text_count(&mut self, tok: &Tokenizer, text: &Text) -> Option<(u32, u64)> {
        let known = self.store.shared(text)?;
        let slot = tok.slot();
        known.run_lines[slot].map(|seen| (known.counts[slot], seen))
    }

    /// Remembers the run's count `n` of `text`, which read `seen` line counts.
    pub fn keep_run_text_count(&mut self, tok: &Tokenizer, text: &Text, n: u32, seen: u64) {
        if let Some(known) = self.store.keep(text) {
            known.counts[tok.slot()] = n;
            known.run_lines[tok.slot()] = Some(seen);
        }
    }

    /// The facts found in line `id`, once searched.
    pub fn line_facts(&self, id: u32) -> Option<&[u32]> {
        let line = &self.store.lines[id as usize];
        (line.session == self.store.session)
            .then_some(line.facts.as_deref())
            .flatten()
    }

    pub fn set_line_facts(&mut self, id: u32, found: Box<[u32]>) {
        let session = self.store.session;
        self.store.lines[id as usize].of_session(session).facts = Some(found);
    }

    /// The facts found in a shared text, once searched.
    pub fn text_facts(&mut self, text: &Text) -> Option<&[u32]> {
        self.store.shared(text)?.facts.as_deref()
    }

    pub fn keep_text_facts(&mut self, text: &Text, found: &[u32]) {
        if let Some(known) = self.store.keep(text) {
            known.facts = Some(found.into());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::{Backend, Encoding};
    use recap_core::TokenCounter;

    fn walk_ids<'m>(lines: &mut CallLines<'_, 'm>, text: &'m Text) -> Vec<u32> {
        let r = lines.walk_text(text);
        r.map(|i| lines.walked_id(i)).collect()
    }

    #[test]
    fn a_line_has_one_id_and_a_walk_is_read_once_per_call() {
        let mut store = LineStore::default();
        let a = Text::from("one\ntwo\none\n");
        let b = Text::from("two\nthree");
        let mut lines = store.call();
        let ra = lines.walk_text(&a);
        let ids: Vec<u32> = ra.clone().map(|i| lines.walked_id(i)).collect();
        // "one\n" twice, "two\n" once: segments end after each line break.
        assert_eq!(ids, [0, 1, 0]);
        assert_eq!(lines.line(1), "two\n");
        assert_eq!(
            lines.walk_text(&a),
            ra,
            "a second walk of a text is remembered"
        );
        assert_eq!(walk_ids(&mut lines, &b), [1, 2]);
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn walks_are_forgotten_between_calls_but_ids_are_kept() {
        let mut store = LineStore::default();
        let a = Text::from("x\ny");
        let first = walk_ids(&mut store.call(), &a);
        let mut lines = store.call();
        // Walks restart at position 0 in a new call: nothing of the last call is reused
        // by address, yet the lines keep their ids.
        let r = lines.walk_text(&a);
        assert_eq!(r.start, 0);
        assert_eq!(first, walk_ids(&mut lines, &a));
    }

    proptest::proptest! {
        /// A text walked as the continuation of the one walked in its place in the call
        /// before has the ids of its own segments, whatever the two share: a prefix
        /// ending inside a line, a last line the new text continues, a line break
        /// followed by a blank or `/` (no segment starts there), multi-byte characters.
        #[test]
        fn a_continued_walk_has_the_ids_of_the_texts_own_segments(
            before in proptest::collection::vec("[ab /é\n]{0,12}", 0..3),
            after in proptest::collection::vec("[ab /é\n]{0,12}", 0..3),
            shared in "[ab /é\n]{0,40}",
        ) {
            let mut store = LineStore::default();
            let texts = |tails: &[String]| -> Vec<Text> {
                tails.iter().map(|t| Text::from(format!("{shared}{t}"))).collect()
            };
            let (first, second) = (texts(&before), texts(&after));
            {
                let mut lines = store.call();
                for t in &first {
                    lines.walk_text(t);
                }
            }
            let mut lines = store.call();
            for t in &second {
                let walked: Vec<String> = walk_ids(&mut lines, t)
                    .into_iter()
                    .map(|id| lines.line(id).to_owned())
                    .collect();
                let own: Vec<&str> = segments(t).collect();
                proptest::prop_assert_eq!(walked, own);
            }
        }
    }

    #[test]
    fn a_text_walked_in_the_place_of_one_before_reads_its_lines_first() {
        let mut store = LineStore::default();
        let before = Text::from("mission\n; turn 1\nTurns left: 2");
        let after = Text::from("mission\n; turn 1\n; turn 2\nTurns left: 1");
        let first = walk_ids(&mut store.call(), &before);
        let mut lines = store.call();
        let second = walk_ids(&mut lines, &after);
        // The two shared lines keep their ids; "Turns left: 2" is not a line of the new
        // text, which has two new ones.
        assert_eq!(first, [0, 1, 2]);
        assert_eq!(second, [0, 1, 3, 4]);
        assert_eq!(lines.line(3), "; turn 2\n");
    }

    #[test]
    fn lines_past_their_bound_start_over_at_the_next_call_with_what_is_known_of_them() {
        let tok = Tokenizer::get(Encoding::O200kBase, Backend::Fast);
        let mut store = LineStore::default();
        {
            let mut lines = store.call();
            let id = lines.id("kept while the call lasts");
            lines.set_line_facts(id, Box::new([7]));
            assert!(!lines.run_count(&tok, id).1);
            assert_eq!(lines.line_facts(id), Some(&[7][..]));
        }
        store.line_bytes = LINE_BYTES + 1;
        let mut lines = store.call();
        assert!(lines.is_empty());
        let id = lines.id("kept while the call lasts");
        assert_eq!(id, 0, "ids start again");
        assert_eq!(lines.line_facts(id), None, "the facts of the old ids go");
        assert!(!lines.run_count(&tok, id).1, "and the counts");
    }

    /// A new session forgets the walks of the last: the lines it carries may start over.
    #[test]
    fn a_session_after_lines_started_over_walks_its_texts_afresh() {
        let text = Text::from("first line\nsecond line");
        LineStore::begin_session();
        let first = LineStore::with_thread(|store| walk_ids(&mut store.call(), &text));
        LineStore::with_thread(|store| store.line_bytes = CARRY_BYTES + 1);
        LineStore::begin_session();
        LineStore::with_thread(|store| {
            let mut lines = store.call();
            assert_eq!(lines.len(), 0);
            assert_eq!(walk_ids(&mut lines, &text), [0, 1]);
            assert_eq!(first.len(), 2);
        });
    }

    #[test]
    fn keeps_shared_texts_only_and_holds_them() {
        let tok = Tokenizer::get(Encoding::O200kBase, Backend::Fast);
        let mut store = LineStore::default();
        let shared = Text::from("kept");
        let other = shared.clone();
        let mut lines = store.call();
        lines.keep_text_facts(&shared, &[1]);
        assert_eq!(lines.text_facts(&shared), Some(&[1][..]));
        let copy = Text::from("kept");
        assert_eq!(
            lines.text_facts(&copy),
            None,
            "equal text, other allocation"
        );
        let alone = Text::from("alone");
        lines.keep_run_text_count(&tok, &alone, 1, 1);
        assert_eq!(lines.run_text_count(&tok, &alone), None);
        assert_eq!(store.shared_texts(), 1, "an unshared text is not kept");
        drop(other);
        assert!(shared.is_shared(), "the store holds the text");
        assert_eq!(store.call().text_facts(&shared), Some(&[1][..]));
    }

    #[test]
    fn shared_texts_past_their_bound_start_over() {
        let mut store = LineStore::default();
        let (a, b) = (Text::from("123456"), Text::from("abcdef"));
        let held = [a.clone(), b.clone()];
        store.text_bytes = TEXT_BYTES - 10;
        let mut lines = store.call();
        lines.keep_text_facts(&a, &[1]);
        lines.keep_text_facts(&b, &[2]);
        assert_eq!(lines.text_facts(&a), None);
        assert_eq!(lines.text_facts(&b), Some(&[2][..]));
        drop(held);
    }

    #[test]
    fn budget_counts_equal_direct_counts_for_every_tokenizer() {
        let texts = [
            "",
            "one line",
            "line one\nline two\n\n  indented\r\nlast",
            "line one\nline two\n\n  indented\r\nlast",
            "trailing break\n",
            "ünïcödé\nand emoji 🎉\n",
        ];
        let mut store = LineStore::default();
        for e in Encoding::ALL {
            for b in [Backend::Fast, Backend::Reference] {
                let Ok(t) = Tokenizer::try_get(e, b) else {
                    continue;
                };
                for text in texts {
                    let want = t.count_tokens(text) as u64;
                    assert_eq!(store.text_tokens(&t, text), want, "{e} {b}");
                    let shared = Text::from(text);
                    let held = shared.clone();
                    assert_eq!(store.shared_text_tokens(&t, &shared), want, "{e} {b}");
                    assert_eq!(store.shared_text_tokens(&t, &shared), want, "{e} {b}");
                    drop(held);
                }
            }
        }
    }

    /// The budgets count through the thread's store, which keeps their lines' counts for
    /// the run's counting; that counting still reports a line as tokenized at its first
    /// meeting in a session. A new session keeps the lines' counts and forgets the rest.
    #[test]
    fn the_threads_store_serves_the_budgets_and_the_run_across_sessions() {
        let tok = Tokenizer::get(Encoding::Cl100kBase, Backend::Fast);
        let (text, line) = ("a budget counts this\nand this", "a budget counts this\n");
        let want = tok.count_tokens(line) as u32;
        LineStore::begin_session();
        assert_eq!(
            TokenCounter::count(&tok, text),
            tok.count_tokens(text) as u64
        );
        LineStore::with_thread(|store| {
            let mut lines = store.call();
            let id = lines.id(line);
            assert_eq!(lines.store.lines[id as usize].counts[tok.slot()], want);
            assert_eq!(lines.run_count(&tok, id), (want, false));
            assert_eq!(lines.run_count(&tok, id), (want, true));
            lines.set_line_facts(id, Box::new([3]));
            // The store is in use: a count made now is made directly.
            assert_eq!(TokenCounter::count(&tok, "x y"), 2);
            assert!(!lines.store.ids.contains_key("x y"));
        });
        LineStore::begin_session();
        LineStore::with_thread(|store| {
            let mut lines = store.call();
            let known = lines.len();
            let id = lines.id(line);
            assert_eq!(
                lines.len(),
                known,
                "the line is carried into the next session"
            );
            assert_eq!(lines.store.lines[id as usize].counts[tok.slot()], want);
            assert_eq!(lines.line_facts(id), None);
            assert_eq!(lines.run_count(&tok, id), (want, false));
        });
    }
}
