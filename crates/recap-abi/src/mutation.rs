//! What the mutation tests of the wire format share: a deterministic generator and one
//! random edit of a byte string, so that each test only says what it feeds and checks.

/// xorshift64: the same sequence on every run, no dependency.
pub(crate) struct Xorshift(pub(crate) u64);

impl Xorshift {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// One random edit of a non-empty `m`: a byte removed, one of `tokens` inserted, a byte
/// replaced by an ASCII one, or, with `truncate`, everything from a byte on cut off.
pub(crate) fn mutate(g: &mut Xorshift, m: &mut Vec<u8>, tokens: &[&[u8]], truncate: bool) {
    let i = (g.next() as usize) % m.len();
    let kinds = if truncate { 4 } else { 3 };
    match g.next() % kinds {
        0 => {
            m.remove(i);
        }
        1 => {
            let t = tokens[(g.next() % tokens.len() as u64) as usize];
            m.splice(i..i, t.iter().copied());
        }
        2 => m[i] = (g.next() % 128) as u8,
        _ => m.truncate(i),
    }
}

/// `base` after one to `max_edits` random edits ([`mutate`]; fewer if it empties).
pub(crate) fn mutant(
    g: &mut Xorshift,
    base: &[u8],
    tokens: &[&[u8]],
    max_edits: u64,
    truncate: bool,
) -> Vec<u8> {
    let mut m = base.to_vec();
    for _ in 0..1 + g.next() % max_edits {
        if m.is_empty() {
            break;
        }
        mutate(g, &mut m, tokens, truncate);
    }
    m
}
