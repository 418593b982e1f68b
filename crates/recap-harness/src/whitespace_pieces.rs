//! Counting tokens with the whitespace runs cut out, for the fast backend.
//!
//! tiktoken 4.x pre-tokenizes ASCII text with a hand-written scanner but hands every
//! piece that starts on whitespace — a line break after a word, an indentation, two
//! spaces, a space before a digit — to its regex, a lazy DFA that searches forward and
//! then back: about 700 instructions a piece once warm, where the scanner's pieces cost
//! a few dozen. Tool outputs and code are full of such pieces (a line-numbered listing
//! has one per line). Here such a run is cut into its pieces by the rules below, a
//! piece of one repeated character is counted once per process ([`ws_tokens`]), and the
//! text between is counted by tiktoken in chunks that start and end on piece boundaries.
//! Finding the runs is one pass over the text, eight bytes at a time, that steps over a
//! single space before a word or punctuation (most whitespace) without looking further.
//!
//! Why the sum is exact (o200k_base and cl100k_base; BPE merges only within the pieces
//! the pre-tokenizer regex cuts): a maximal run R of ASCII whitespace (`\t \n \x0b
//! \x0c \r` and space), between ASCII characters A (or the start) and B (or the end), is
//! cut at:
//! 1. the end of A's piece. A is the last character of its piece (every piece that
//!    goes on past a character into whitespace starts on whitespace, or is the
//!    punctuation piece). A letter or digit piece ends at A; a punctuation piece
//!    (` ?[^\s\p{L}\p{N}]+[\r\n/]*`, `[\r\n]*` in cl100k) also takes R's leading line
//!    breaks. A run the punctuation piece takes whole (only line breaks; o200k's tail
//!    may go on over `/`) is left to tiktoken.
//! 2. after R's last line break: from the start left by 1, the letter and punctuation
//!    alternatives need a non-whitespace character right after their optional first
//!    one, and a line break cannot be that first one, so `\s*[\r\n]+` matches, up to
//!    the last line break (its `\s*` gives back characters until `[\r\n]+` can match).
//! 3. before R's last character when B follows: of the rest (no line break), `\s+(?!\S)`
//!    takes all but the last character when two or more are left, all of them at the
//!    end of the text. The last character then starts B's piece when B is a letter
//!    (the letter pieces' optional first character is anything but `\r`, `\n`, a letter
//!    or a digit) or when it is a space and B punctuation (` ?[^\s\p{L}\p{N}]+`);
//!    otherwise it is a piece of its own (`\s+`).
//!
//! The chunks between cuts pre-tokenize alone as they do inside the text: the patterns
//! have no look-behind, and a chunk ends where a piece ends, on a non-whitespace
//! character or a punctuation piece's line breaks, with no look-ahead pending. A
//! whitespace piece alone is one piece again (`\s*[\r\n]+` matches it whole, or
//! `\s+(?!\S)` at the end of the text). Runs next to a non-ASCII character (possibly
//! Unicode whitespace, or a piece the rules above do not cover) and the runs tiktoken's
//! scanner takes itself (one space or tab before a letter, one space before
//! punctuation) are left inside the chunks. A property test holds the sum to
//! tiktoken's own count of the whole text for both encodings, and
//! `tests/tokenizer_identity.rs` to the reference backend on every corpus prompt.

use std::sync::atomic::{AtomicU32, Ordering};

fn is_ws(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0B | 0x0C)
}

fn is_line_break(c: u8) -> bool {
    c == b'\n' || c == b'\r'
}

/// `[^\s\p{L}\p{N}]` for an ASCII character.
fn is_punct(c: u8) -> bool {
    c < 0x80 && !is_ws(c) && !c.is_ascii_alphanumeric()
}

/// The first whitespace byte at or after `from`, eight bytes at a time.
fn next_ws(b: &[u8], from: usize) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGH: u64 = ONES << 7;
    let rest = b.get(from..)?;
    let words = rest.chunks_exact(8);
    let tail = from + rest.len() - words.remainder().len();
    for (w, word) in words.enumerate() {
        let x = u64::from_le_bytes(word.try_into().expect("chunks_exact gives eight bytes"));
        // Flags every byte below 0x21 (all ASCII whitespace is), and perhaps a few
        // others above a flagged one (the subtraction's borrow): each flag is checked.
        let mut low = x.wrapping_sub(ONES * 0x21) & !x & HIGH;
        while low != 0 {
            let k = from + 8 * w + (low.trailing_zeros() / 8) as usize;
            if is_ws(b[k]) {
                return Some(k);
            }
            low &= low - 1;
        }
    }
    (tail..b.len()).find(|&k| is_ws(b[k]))
}

/// Whether whitespace character `last`, just before `next`, starts `next`'s piece.
fn leads(last: u8, next: u8) -> bool {
    next.is_ascii_alphabetic() || (last == b' ' && is_punct(next))
}

/// The token count of `text`: the chunks between the cut whitespace runs through
/// `chunk`, the whitespace pieces cut out through `ws`.
pub(crate) fn count(
    text: &str,
    mut chunk: impl FnMut(&str) -> usize,
    mut ws: impl FnMut(&str) -> usize,
) -> usize {
    let b = text.as_bytes();
    let n = b.len();
    let mut total = 0;
    // Start of the text not counted yet: always a piece boundary.
    let mut from = 0;
    let mut i = 0;
    while i < n {
        // Most whitespace is one space before a word or punctuation, which tiktoken's
        // scanner takes itself: skip it without looking at the run.
        match next_ws(b, i) {
            Some(k) => i = k,
            None => break,
        }
        if b[i] == b' ' && b.get(i + 1).is_some_and(|&c| leads(b' ', c)) {
            i += 2;
            continue;
        }
        let start = i;
        let mut end = i + 1;
        while end < n && is_ws(b[end]) {
            end += 1;
        }
        i = end;
        let prev = start.checked_sub(1).map(|p| b[p]);
        let next = b.get(end).copied();
        if prev.is_some_and(|c| c >= 0x80) || next.is_some_and(|c| c >= 0x80) {
            continue;
        }
        if end - start == 1 && !is_line_break(b[start]) && next.is_some_and(|c| leads(b[start], c))
        {
            continue;
        }
        let mut p = start;
        if prev.is_some_and(is_punct) {
            while p < end && is_line_break(b[p]) {
                p += 1;
            }
            if p == end {
                continue;
            }
        }
        if from < p {
            total += chunk(&text[from..p]);
        }
        if let Some(last) = b[p..end].iter().rposition(|&c| is_line_break(c)) {
            let cut = p + last + 1;
            total += ws(&text[p..cut]);
            p = cut;
        }
        from = match next {
            None => {
                if p < end {
                    total += ws(&text[p..end]);
                }
                end
            }
            Some(c) => {
                if end - p >= 2 {
                    total += ws(&text[p..end - 1]);
                    p = end - 1;
                }
                if p < end && !leads(b[p], c) {
                    total += ws(&text[p..end]);
                    end
                } else {
                    p
                }
            }
        };
    }
    if from < n {
        total += chunk(&text[from..]);
    }
    total
}

/// Uniform whitespace pieces (one character repeated: an indentation, blank lines) up
/// to this length have their counts kept for the process; others are counted each time.
const UNIFORM_MAX: usize = 64;
/// The characters of the uniform pieces kept.
const UNIFORM_CHARS: [u8; 3] = [b' ', b'\n', b'\t'];

type UniformCounts = [[AtomicU32; UNIFORM_MAX]; UNIFORM_CHARS.len()];

/// Counts of the uniform pieces per tokenizer slot; 0 = not counted yet (a piece has at
/// least one token). Shared by every thread: a count is a fact of the vocabulary.
static UNIFORM: [UniformCounts; crate::tokenizer::Tokenizer::SLOTS] =
    [const { [const { [const { AtomicU32::new(0) }; UNIFORM_MAX] }; UNIFORM_CHARS.len()] };
        crate::tokenizer::Tokenizer::SLOTS];

/// The token count of whitespace piece `piece` under tokenizer `slot`, counted by
/// `count` unless it is a uniform piece counted before.
pub(crate) fn ws_tokens(slot: usize, piece: &str, count: impl FnOnce(&str) -> usize) -> usize {
    let b = piece.as_bytes();
    let kept = match b {
        [first, ..] if b.len() <= UNIFORM_MAX && b.iter().all(|c| c == first) => {
            UNIFORM_CHARS.iter().position(|c| c == first)
        }
        _ => None,
    };
    let Some(char_index) = kept else {
        return count(piece);
    };
    let cell = &UNIFORM[slot][char_index][b.len() - 1];
    match cell.load(Ordering::Relaxed) {
        0 => {
            let n = count(piece);
            cell.store(u32::try_from(n).unwrap_or(0), Ordering::Relaxed);
            n
        }
        n => n as usize,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cell::RefCell;

    fn bpes() -> [(&'static str, &'static tiktoken::CoreBpe); 2] {
        ["o200k_base", "cl100k_base"].map(|name| {
            (
                name,
                tiktoken::get_encoding(name).expect("vocabulary built in"),
            )
        })
    }

    /// The pieces `count` cuts, with the chunks between them, in order.
    fn cuts(text: &str) -> Vec<(bool, String)> {
        let out = RefCell::new(Vec::new());
        count(
            text,
            |c| {
                out.borrow_mut().push((false, c.to_string()));
                0
            },
            |w| {
                out.borrow_mut().push((true, w.to_string()));
                0
            },
        );
        out.into_inner()
    }

    #[test]
    fn runs_are_cut_into_their_pieces() {
        let ws = |s: &str| (true, s.to_string());
        let chunk = |s: &str| (false, s.to_string());
        // Line break after a word, then an indentation before a word.
        assert_eq!(
            cuts("let x\n    y"),
            [chunk("let x"), ws("\n"), ws("   "), chunk(" y")]
        );
        // Punctuation takes the line breaks; the spaces before a digit stand alone.
        assert_eq!(
            cuts("a;\n\n  7"),
            [chunk("a;\n\n"), ws(" "), ws(" "), chunk("7")]
        );
        // Whitespace at the end of the text is one piece after the last line break.
        assert_eq!(cuts("end \n  "), [chunk("end"), ws(" \n"), ws("  ")]);
        // Left to tiktoken: one space before a word, line breaks a punctuation piece
        // takes whole, a run next to a non-ASCII character.
        assert_eq!(cuts("a b"), [chunk("a b")]);
        assert_eq!(cuts("x.\n\ny"), [chunk("x.\n\ny")]);
        assert_eq!(cuts("é\n  x"), [chunk("é\n  x")]);
        assert_eq!(cuts(""), []);
    }

    #[test]
    fn sums_equal_whole_counts_on_code_and_json() {
        let texts = [
            "fn main() {\n    let x = 1;\n\n    println!(\"{x}\");\n}\n",
            "{\n  \"a\": [1, 2,\n    3],\n\t\"b\": null\r\n}",
            "  leading spaces\n\n\n trailing  \t",
            "(def total 42)\n  ;; comment\n/tmp/file  /usr\n",
            "word\n\n\nword\r\n\r\nword   ,  99  x",
        ];
        for (name, bpe) in bpes() {
            for text in texts {
                let split = count(text, |c| bpe.count(c), |w| bpe.count(w));
                assert_eq!(split, bpe.count(text), "{name}: {text:?}");
            }
        }
    }

    #[test]
    fn uniform_pieces_are_counted_once_and_others_each_time() {
        for (slot, (name, bpe)) in bpes().into_iter().enumerate() {
            // deepseek_v3's slots: it is not line-additive, so nothing else cuts its text.
            let slot = crate::tokenizer::Tokenizer::SLOTS - 1 - slot;
            for piece in ["\n\n\n", "      ", "\t\t"] {
                let calls = std::cell::Cell::new(0);
                let count = |p: &str| {
                    calls.set(calls.get() + 1);
                    bpe.count(p)
                };
                let first = ws_tokens(slot, piece, count);
                let again = ws_tokens(slot, piece, count);
                assert_eq!(
                    (first, again),
                    (bpe.count(piece), bpe.count(piece)),
                    "{name}"
                );
                assert_eq!(calls.get(), 1, "{name}: {piece:?} counted once");
            }
            for piece in [" \n", "\r\n", &" ".repeat(UNIFORM_MAX + 1)] {
                let calls = std::cell::Cell::new(0);
                let count = |p: &str| {
                    calls.set(calls.get() + 1);
                    bpe.count(p)
                };
                ws_tokens(slot, piece, count);
                assert_eq!(ws_tokens(slot, piece, count), bpe.count(piece), "{name}");
                assert_eq!(calls.get(), 2, "{name}: {piece:?} counted each time");
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        #[test]
        fn next_ws_finds_the_first_whitespace_byte(
            text in proptest::collection::vec(
                prop::sample::select(vec![b' ', b'\t', b'\n', b'\r', 0x0B, 0x0C, 0x00, 0x1F,
                    0x20, 0x21, b'a', b'0', 0x7F, 0x80, 0xC3, 0xFF]),
                0..40,
            ),
            from in 0usize..45,
        ) {
            let want = (from..text.len()).find(|&k| is_ws(text[k]));
            prop_assert_eq!(next_ws(&text, from), want);
        }

        #[test]
        fn sums_equal_whole_counts(
            text in proptest::collection::vec(
                prop::sample::select(vec![
                    " ", " ", " ", "  ", "\n", "\n", "\r", "\t", "\x0b", "\x0c", "a", "Bc",
                    "zz", "s", "'", "1", "42", "7", ".", "/", ";", "{", "-", "\"", "\x00",
                    "é", "中", "\u{a0}", "\u{85}", "\u{3000}", "。", "\u{2028}",
                ]),
                0..40,
            )
        ) {
            let text: String = text.concat();
            for (name, bpe) in bpes() {
                let split = count(&text, |c| bpe.count(c), |w| bpe.count(w));
                prop_assert_eq!(split, bpe.count(&text), "{}: {:?}", name, text);
            }
        }
    }
}
