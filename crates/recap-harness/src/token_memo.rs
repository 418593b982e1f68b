//! A per-thread memo of token counts by text segment, under the counts that repeat
//! across strategies and renders.
//!
//! A chat strategy with a token budget counts every history message it sends, and the
//! harness renders every call twice (the determinism check uses a second, independent
//! state), so without a memo each message of a session is tokenized once per budgeted
//! strategy and render, and once more by the harness's own line counts
//! ([`crate::counting::SegmentCounts`]). With it, each distinct line is tokenized once
//! while it stays in the memo.
//!
//! A count is a pure function of (tokenizer, text), so the memo changes no result
//! whichever thread holds it or when it starts over; it is bounded in bytes of text and
//! cleared whole when full.

use crate::segments::segments;
use crate::text_memo::TextMemo;
use crate::tokenizer::Tokenizer;
use recap_core::Text;
use rustc_hash::FxHashMap;
use std::cell::RefCell;

/// Bytes of distinct text one thread keeps: more than the text of a typical session, so
/// that the strategies of a session (replayed one after the other) find its lines.
const MEMO_BYTES: usize = 4 << 20;

#[derive(Default)]
struct Memo {
    /// One map per tokenizer ([`Tokenizer::slot`]).
    counts: [FxHashMap<Box<str>, u32>; Tokenizer::SLOTS],
    bytes: usize,
}

thread_local! {
    static MEMO: RefCell<Memo> = RefCell::new(Memo::default());
}

/// The token count of one segment (a text counted whole), from the memo when there.
pub(crate) fn segment_tokens(tok: &Tokenizer, segment: &str) -> u32 {
    MEMO.with(|memo| {
        let mut memo = memo.borrow_mut();
        let slot = tok.slot();
        if let Some(&n) = memo.counts[slot].get(segment) {
            return n;
        }
        let n = tok.count_tokens(segment) as u32;
        if memo.bytes + segment.len() > MEMO_BYTES {
            memo.counts.iter_mut().for_each(FxHashMap::clear);
            memo.bytes = 0;
        }
        memo.bytes += segment.len();
        memo.counts[slot].insert(segment.into(), n);
        n
    })
}

/// Bytes of shared texts one thread keeps counted by allocation: a session's texts,
/// which its strategies' budgets count again at every call of both renders.
const SHARED_BYTES: usize = 8 << 20;

thread_local! {
    /// Per tokenizer ([`Tokenizer::slot`]): counts of shared texts by allocation.
    static SHARED: RefCell<[TextMemo<u64>; Tokenizer::SLOTS]> =
        RefCell::new(std::array::from_fn(|_| TextMemo::bounded(SHARED_BYTES)));
}

/// The token count of a message text ([`text_tokens`]); a text that something else also
/// holds is found by its allocation without reading it, once this thread counted it.
pub(crate) fn shared_text_tokens(tok: &Tokenizer, text: &Text) -> u64 {
    if text.is_empty() {
        return 0;
    }
    SHARED.with(|memos| {
        let memo = &mut memos.borrow_mut()[tok.slot()];
        if let Some(&n) = memo.get(text) {
            return n;
        }
        let n = text_tokens(tok, text);
        memo.insert_with(text, || n);
        n
    })
}

/// The token count of `text`, line by line where the encoding allows it exactly
/// ([`crate::Encoding::line_additive`]), otherwise whole.
pub(crate) fn text_tokens(tok: &Tokenizer, text: &str) -> u64 {
    if text.is_empty() {
        return 0;
    }
    if !tok.encoding().line_additive() {
        return u64::from(segment_tokens(tok, text));
    }
    segments(text)
        .map(|s| u64::from(segment_tokens(tok, s)))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::{Backend, Encoding};

    #[test]
    fn memo_counts_equal_direct_counts_for_every_tokenizer() {
        let texts = [
            "",
            "one line",
            "line one\nline two\n\n  indented\r\nlast",
            "line one\nline two\n\n  indented\r\nlast",
            "trailing break\n",
            "ünïcödé\nand emoji 🎉\n",
        ];
        for e in Encoding::ALL {
            for b in [Backend::Fast, Backend::Reference] {
                let Ok(t) = Tokenizer::try_get(e, b) else {
                    continue;
                };
                for text in texts {
                    assert_eq!(
                        text_tokens(&t, text),
                        t.count_tokens(text) as u64,
                        "{e} {b}"
                    );
                }
            }
        }
    }

    /// A shared text is counted once and then found by its allocation, which the memo
    /// keeps alive; the count is the text's whatever else is counted in between, and an
    /// unshared text is counted from its string.
    #[test]
    fn shared_texts_are_counted_by_allocation() {
        let o200k = Tokenizer::get(Encoding::O200kBase, Backend::Fast);
        let cl100k = Tokenizer::get(Encoding::Cl100kBase, Backend::Fast);
        let text = Text::from("a shared message text\nwith two lines, σημαντικό");
        let held = text.clone();
        let n = shared_text_tokens(&o200k, &text);
        assert_eq!(n, o200k.count_tokens(&text) as u64);
        drop(held);
        assert!(text.is_shared(), "the memo holds a clone");
        assert_eq!(
            shared_text_tokens(&cl100k, &text),
            cl100k.count_tokens(&text) as u64
        );
        let other = Text::from("another text");
        assert_eq!(
            shared_text_tokens(&o200k, &other),
            o200k.count_tokens(&other) as u64
        );
        assert_eq!(shared_text_tokens(&o200k, &text), n);
        assert!(!other.is_shared(), "an unshared text is not kept");
    }

    #[test]
    fn tokenizers_do_not_share_counts() {
        let o200k = Tokenizer::get(Encoding::O200kBase, Backend::Fast);
        let ds = Tokenizer::get(Encoding::DeepseekV3, Backend::Fast);
        let text = "a text both count, differently: σημαντικό";
        assert_eq!(
            segment_tokens(&o200k, text) as usize,
            o200k.count_tokens(text)
        );
        assert_eq!(segment_tokens(&ds, text) as usize, ds.count_tokens(text));
    }
}
