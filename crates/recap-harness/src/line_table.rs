//! The distinct lines of one session's prompts, read once per call by counting and
//! retention together.
//!
//! Counting (each line's tokens) and retention (each line's facts) both read a call's
//! changed messages line by line ([`crate::segments`]), and the PTC-Lisp strategies
//! rebuild their one USER message at every call, so the same lines are looked up again
//! and again. Each reader kept its own map from line to result, so every line of every
//! changed message was hashed and compared twice per call (and once more per extra
//! tokenizer). The table gives each distinct line of the session an id; a call's walk of
//! a message text ([`CallLines::walk_text`]) is remembered until the call ends, so the
//! second reader of the same text gets its ids without hashing a line. What each reader
//! learns of a line is kept beside the table, indexed by id: each tokenizer's counts in
//! [`crate::counting::SegmentCounts`], the facts in
//! [`crate::retention::SessionRetention`].

use recap_core::Text;
use rustc_hash::FxHashMap;
use std::marker::PhantomData;
use std::ops::Range;
use std::sync::Arc;

/// Bytes of distinct lines a table keeps: past it, it starts over at the next call
/// (bounds memory on pathological sessions; the table is only a shortcut).
const TABLE_BYTES: usize = 64 << 20;

/// One session's distinct lines, each with an id.
#[derive(Default)]
pub struct LineTable {
    ids: FxHashMap<Arc<str>, u32>,
    lines: Vec<Arc<str>>,
    bytes: usize,
    /// How many times the table started over: ids from an earlier epoch name other lines.
    epoch: u64,
    /// The texts walked in this call, by address and length, and where their ids are
    /// in `walked_ids`.
    walked: FxHashMap<(usize, usize), Range<usize>>,
    walked_ids: Vec<u32>,
    /// This call's walks in the order they were made, and the previous call's
    /// (`previous_ids`): the n-th text walked in a call is read first as a continuation
    /// of the n-th of the call before ([`CallLines::walk_text`]).
    walk_order: Vec<Range<usize>>,
    previous_order: Vec<Range<usize>>,
    previous_ids: Vec<u32>,
}

impl LineTable {
    /// Opens one call's reads. The walks of the previous call are forgotten (their texts
    /// may be gone, and their addresses reused); a table past its bound starts over here,
    /// never in the middle of a call, so an id stays valid for a whole call.
    ///
    /// The texts walked must outlive the returned handle (`'m`), which is what makes a
    /// text's address a safe key for the call.
    pub fn call<'m>(&mut self) -> CallLines<'_, 'm> {
        self.walked.clear();
        std::mem::swap(&mut self.walked_ids, &mut self.previous_ids);
        std::mem::swap(&mut self.walk_order, &mut self.previous_order);
        self.walked_ids.clear();
        self.walk_order.clear();
        if self.bytes > TABLE_BYTES {
            self.ids.clear();
            self.lines.clear();
            self.bytes = 0;
            self.epoch += 1;
            self.previous_ids.clear();
            self.previous_order.clear();
        }
        CallLines {
            table: self,
            texts: PhantomData,
        }
    }
}

/// One call's reads of a [`LineTable`]; the texts it walks are borrowed for `'m`.
pub struct CallLines<'t, 'm> {
    table: &'t mut LineTable,
    texts: PhantomData<&'m Text>,
}

impl<'m> CallLines<'_, 'm> {
    /// The id of `line`, given one if it is new.
    pub fn id(&mut self, line: &str) -> u32 {
        let t = &mut *self.table;
        if let Some(&id) = t.ids.get(line) {
            return id;
        }
        let id = t.lines.len() as u32;
        let line: Arc<str> = Arc::from(line);
        t.bytes += line.len();
        t.ids.insert(Arc::clone(&line), id);
        t.lines.push(line);
        id
    }

    /// The line with id `id`.
    pub fn line(&self, id: u32) -> &str {
        &self.table.lines[id as usize]
    }

    /// How many lines have ids (ids are `0..len`).
    pub fn len(&self) -> usize {
        self.table.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.table.lines.is_empty()
    }

    /// Changes whenever the table starts over, and with it every id.
    pub fn epoch(&self) -> u64 {
        self.table.epoch
    }

    /// The ids of `text`'s lines in order, as positions in [`CallLines::walked_id`]: read
    /// line by line at its first walk in this call, then remembered.
    ///
    /// A strategy's prompt is mostly its previous prompt, and a rebuilt message mostly
    /// the message it replaces (a PTC-Lisp summary gains a turn at the end), so the
    /// lines of the text walked in the same place of the previous call are tried first,
    /// in order, by comparing bytes: each that `text` continues with, ending where a
    /// segment of `text` ends (`segments::ends_segment`), is a segment of
    /// `text` with a known id. From the first that is not, the rest is looked up line by
    /// line. Either way the ids are those of `text`'s own segments.
    pub fn walk_text(&mut self, text: &'m Text) -> Range<usize> {
        let key = (text.address(), text.len());
        if let Some(r) = self.table.walked.get(&key) {
            return r.clone();
        }
        let t = &mut *self.table;
        let start = t.walked_ids.len();
        let mut at = 0;
        if let Some(before) = t.previous_order.get(t.walk_order.len()) {
            for &id in &t.previous_ids[before.clone()] {
                let line = &*t.lines[id as usize];
                let end = at + line.len();
                if !text.as_bytes()[at..].starts_with(line.as_bytes())
                    || !crate::segments::ends_segment(text, end)
                {
                    break;
                }
                t.walked_ids.push(id);
                at = end;
            }
        }
        for seg in crate::segments::segments(&text[at..]) {
            let id = self.id(seg);
            self.table.walked_ids.push(id);
        }
        let t = &mut *self.table;
        let r = start..t.walked_ids.len();
        t.walk_order.push(r.clone());
        t.walked.insert(key, r.clone());
        r
    }

    /// The id at position `i` of a range [`CallLines::walk_text`] returned.
    pub fn walked_id(&self, i: usize) -> u32 {
        self.table.walked_ids[i]
    }
}

/// Per-line results of one reader, indexed by id and dropped when the table starts over.
#[derive(Debug, Default)]
pub struct PerLine<V> {
    values: Vec<Option<V>>,
    epoch: u64,
}

impl<V> PerLine<V> {
    /// The value of line `id`, if this reader has one (in the table's current epoch).
    pub fn get(&mut self, lines: &CallLines<'_, '_>, id: u32) -> Option<&V> {
        self.sync(lines);
        self.values.get(id as usize).and_then(Option::as_ref)
    }

    pub fn set(&mut self, lines: &CallLines<'_, '_>, id: u32, value: V) {
        self.sync(lines);
        let i = id as usize;
        if self.values.len() <= i {
            self.values.resize_with(lines.len().max(i + 1), || None);
        }
        self.values[i] = Some(value);
    }

    fn sync(&mut self, lines: &CallLines<'_, '_>) {
        if self.epoch != lines.epoch() {
            self.values.clear();
            self.epoch = lines.epoch();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_has_one_id_and_a_walk_is_read_once_per_call() {
        let mut table = LineTable::default();
        let a = Text::from("one\ntwo\none\n");
        let b = Text::from("two\nthree");
        let mut lines = table.call();
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
        let rb = lines.walk_text(&b);
        let ids: Vec<u32> = rb.map(|i| lines.walked_id(i)).collect();
        assert_eq!(ids, [1, 2]);
        assert_eq!(lines.len(), 3);
    }

    #[test]
    fn walks_are_forgotten_between_calls_but_ids_are_kept() {
        let mut table = LineTable::default();
        let a = Text::from("x\ny");
        let first: Vec<u32> = {
            let mut lines = table.call();
            let r = lines.walk_text(&a);
            r.map(|i| lines.walked_id(i)).collect()
        };
        let mut lines = table.call();
        // Walks restart at position 0 in a new call: nothing of the last call is reused
        // by address, yet the lines keep their ids.
        let r = lines.walk_text(&a);
        assert_eq!(r.start, 0);
        let again: Vec<u32> = r.map(|i| lines.walked_id(i)).collect();
        assert_eq!(first, again);
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
            let mut table = LineTable::default();
            let texts = |tails: &[String]| -> Vec<Text> {
                tails.iter().map(|t| Text::from(format!("{shared}{t}"))).collect()
            };
            let (first, second) = (texts(&before), texts(&after));
            {
                let mut lines = table.call();
                for t in &first {
                    lines.walk_text(t);
                }
            }
            let mut lines = table.call();
            for t in &second {
                let r = lines.walk_text(t);
                let walked: Vec<String> =
                    r.map(|i| lines.line(lines.walked_id(i)).to_owned()).collect();
                let own: Vec<&str> = crate::segments::segments(t).collect();
                proptest::prop_assert_eq!(walked, own);
            }
        }
    }

    #[test]
    fn a_text_walked_in_the_place_of_one_before_reads_its_lines_first() {
        let mut table = LineTable::default();
        let before = Text::from("mission\n; turn 1\nTurns left: 2");
        let after = Text::from("mission\n; turn 1\n; turn 2\nTurns left: 1");
        let first: Vec<u32> = {
            let mut lines = table.call();
            let r = lines.walk_text(&before);
            r.map(|i| lines.walked_id(i)).collect()
        };
        let mut lines = table.call();
        let r = lines.walk_text(&after);
        let second: Vec<u32> = r.map(|i| lines.walked_id(i)).collect();
        // The two shared lines keep their ids; "Turns left: 2" is not a line of the new
        // text, which has two new ones.
        assert_eq!(first, [0, 1, 2]);
        assert_eq!(second, [0, 1, 3, 4]);
        assert_eq!(lines.line(3), "; turn 2\n");
    }

    #[test]
    fn a_table_past_its_bound_starts_over_at_the_next_call_and_readers_follow() {
        let mut table = LineTable::default();
        let mut counts: PerLine<u32> = PerLine::default();
        {
            let mut lines = table.call();
            let id = lines.id("kept while the call lasts");
            counts.set(&lines, id, 7);
            assert_eq!(counts.get(&lines, id), Some(&7));
        }
        table.bytes = TABLE_BYTES + 1;
        let mut lines = table.call();
        assert!(lines.is_empty());
        let id = lines.id("another line");
        assert_eq!(id, 0, "ids start again");
        assert_eq!(
            counts.get(&lines, id),
            None,
            "a reader's values of the old ids go"
        );
    }
}
