//! Work on a message text remembered by its allocation, for one session (or, bounded,
//! for one thread: [`crate::token_memo`]'s budget counts).
//!
//! The strategies of a session share the turns' texts ([`recap_core::Text`]), so the
//! harness's per-text work (token counts, retention facts) is done once per text, not
//! once per strategy. A text is looked up by [`Text::address`], and the memo holds a
//! clone of it, so that address cannot be reused by another text while it is
//! remembered. Only texts someone else also holds are kept: a text made for one prompt
//! alone is not kept alive for nothing.

use recap_core::Text;
use rustc_hash::FxHashMap;

/// Bytes of texts a memo keeps before it starts over (the texts are mostly the session's
/// own, alive anyway; the bound is for sessions whose strategies make many shared ones).
const MEMO_BYTES: usize = 64 << 20;

pub struct TextMemo<V> {
    map: FxHashMap<usize, (Text, V)>,
    bytes: usize,
    /// Bytes of texts kept before the memo starts over.
    limit: usize,
}

impl<V> Default for TextMemo<V> {
    fn default() -> Self {
        TextMemo::bounded(MEMO_BYTES)
    }
}

impl<V> TextMemo<V> {
    /// A memo that keeps at most `limit` bytes of texts, cleared whole when full.
    pub fn bounded(limit: usize) -> Self {
        TextMemo {
            map: FxHashMap::default(),
            bytes: 0,
            limit,
        }
    }

    /// What was remembered for `text`. A text no one else holds is never found: were it
    /// remembered, the memo would hold it too.
    pub fn get(&self, text: &Text) -> Option<&V> {
        if !text.is_shared() {
            return None;
        }
        self.map.get(&text.address()).map(|(_, v)| v)
    }

    /// Remembers `value()` for `text` when someone else holds it (`value` is not called
    /// otherwise).
    pub fn insert_with(&mut self, text: &Text, value: impl FnOnce() -> V) {
        if !text.is_shared() {
            return;
        }
        if self.bytes + text.len() > self.limit {
            self.map.clear();
            self.bytes = 0;
        }
        self.bytes += text.len();
        self.map.insert(text.address(), (text.clone(), value()));
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.map.len()
    }

    #[cfg(test)]
    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_shared_texts_only_and_holds_them() {
        let mut memo = TextMemo::default();
        let shared = Text::from("kept");
        let other = shared.clone();
        memo.insert_with(&shared, || 1);
        assert_eq!(memo.get(&shared), Some(&1));
        assert_eq!(
            memo.get(&Text::from("kept")),
            None,
            "equal text, other allocation"
        );
        let alone = Text::from("alone");
        memo.insert_with(&alone, || unreachable!("an unshared text is not kept"));
        assert_eq!(memo.len(), 1, "an unshared text is not kept");
        drop(other);
        assert!(shared.is_shared(), "the memo holds the text");
        assert_eq!(memo.get(&shared), Some(&1));
    }

    #[test]
    fn a_full_memo_starts_over() {
        let mut memo = TextMemo::bounded(10);
        let (a, b) = (Text::from("123456"), Text::from("abcdef"));
        let held = [a.clone(), b.clone()];
        memo.insert_with(&a, || 1);
        memo.insert_with(&b, || 2);
        assert_eq!((memo.get(&a), memo.get(&b)), (None, Some(&2)));
        drop(held);
    }
}
