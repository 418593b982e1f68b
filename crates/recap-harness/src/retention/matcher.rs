//! Finding a session's facts in a prompt's messages: Aho-Corasick over the facts, with
//! the facts found in each line kept for the rest of the session.

use super::facts::Facts;

/// Facts per automaton. Building an Aho-Corasick automaton grows faster than linearly
/// with the pattern count (measured with aho-corasick 1.1: 10k short facts 0.4 s, 40k
/// facts 6 s in one automaton), so a session's facts are split into chunks of this size:
/// 40k facts then build and scan in ~0.2 s. Each chunk costs one pass over a message.
const FACTS_PER_AUTOMATON: usize = 1024;

/// Bytes of a fact the automaton holds: a longer fact is found by its first bytes and
/// then compared whole. Facts run to 120 characters (whole first lines of outputs), and
/// building the automaton grows with the bytes it holds: with 16-byte prefixes the chat
/// run takes 4.4 % fewer instructions, the PTC-Lisp one 0.7 % (8 bytes: −5.5 %, but
/// +2.3 % for PTC-Lisp, whose short prefixes match often).
const PREFIX_BYTES: usize = 16;

/// More facts than this sharing their prefix (timestamped lines, say) are held whole:
/// each match of a shared prefix would otherwise be compared with every fact behind it,
/// quadratic in a long session of such lines, where the automaton stays linear.
const MAX_SHARING_A_PREFIX: u32 = 4;

/// A fact's first [`PREFIX_BYTES`] bytes (all of a shorter one).
fn prefix(fact: &str) -> &[u8] {
    &fact.as_bytes()[..fact.len().min(PREFIX_BYTES)]
}

/// The bytes of `fact` the automaton holds, given how many facts share its prefix.
fn pattern<'f>(fact: &'f str, sharing: &rustc_hash::FxHashMap<&[u8], u32>) -> &'f [u8] {
    let prefix = prefix(fact);
    if sharing.get(prefix).copied().unwrap_or(0) > MAX_SHARING_A_PREFIX {
        fact.as_bytes()
    } else {
        prefix
    }
}

/// Finds every fact of a session in a text (Aho-Corasick over the facts, in chunks).
///
/// The whole session's fact list is known before the first call, and the facts of call
/// k are a prefix of it; so one scan of a message yields its facts for every call, and a
/// message that reappears unchanged in a later call is never scanned again.
pub struct FactMatcher {
    /// One automaton per chunk of [`FACTS_PER_AUTOMATON`] facts; `None` when building
    /// failed (past internal size limits), and that chunk is searched fact by fact.
    chunks: Vec<Option<aho_corasick::AhoCorasick>>,
    n: usize,
    /// Facts containing a line break: the only ones that can span two segments.
    multiline: Vec<usize>,
}

/// Bytes of distinct lines a [`FactLines`] keeps before it starts over.
const LINES_BYTES: usize = 64 << 20;

/// The facts found in each line (segment, [`crate::segments`]) seen so far in one
/// session, whichever strategy rendered it: a changed message is searched only in its
/// new lines.
#[derive(Default)]
pub struct FactLines {
    found: rustc_hash::FxHashMap<Box<str>, Box<[u32]>>,
    bytes: usize,
}

impl FactMatcher {
    pub fn new(facts: &Facts) -> FactMatcher {
        let mut sharing: rustc_hash::FxHashMap<&[u8], u32> = Default::default();
        for fact in facts.list() {
            *sharing.entry(prefix(fact)).or_default() += 1;
        }
        let chunks = facts
            .list()
            .chunks(FACTS_PER_AUTOMATON)
            .map(|chunk| {
                // The automaton serves one session only, so building it costs more
                // than scanning with it: an NFA builds ~10× faster than a DFA, and a
                // noncontiguous one with dense transitions at the root only skips the
                // conversion to a contiguous one and most of the dense tables, for slower
                // scans. Measured (`scripts/bench-instructions.sh --engine`-style
                // callgrind over 120-session generated corpora): the whole run 2.7 %
                // (chat) and 1.5 % (PTC-Lisp) fewer instructions than the contiguous NFA
                // with the default dense depth, CPU time the same or less.
                aho_corasick::AhoCorasick::builder()
                    .kind(Some(aho_corasick::AhoCorasickKind::NoncontiguousNFA))
                    .dense_depth(1)
                    .build(chunk.iter().map(|f| pattern(f, &sharing)))
                    .ok()
            })
            .collect();
        FactMatcher {
            chunks,
            n: facts.len(),
            multiline: (0..facts.len())
                .filter(|&i| facts.list()[i].contains('\n'))
                .collect(),
        }
    }

    /// Indices (ascending, unique) of the facts found in `content`, searching only the
    /// lines of `content` not in `lines` yet. Same result as [`FactMatcher::scan`]: a
    /// fact without a line break lies within one line, and the (rare) facts with one
    /// are searched in the whole content.
    pub fn scan_lines(&self, content: &str, facts: &Facts, lines: &mut FactLines) -> Vec<u32> {
        if self.n == 0 {
            return Vec::new();
        }
        // Found indices are gathered and sorted rather than marked in an n-long table:
        // a table per line made a session with n distinct prints cost O(n²) (100,000
        // prints: 11 s, 86 % of it walking the tables).
        let mut found: Vec<u32> = Vec::new();
        for seg in crate::segments::segments(content) {
            let in_seg = match lines.found.get(seg) {
                Some(f) => f,
                None => {
                    if lines.bytes + seg.len() > LINES_BYTES {
                        lines.found.clear();
                        lines.bytes = 0;
                    }
                    lines.bytes += seg.len();
                    let f = self.scan(seg, facts).into_boxed_slice();
                    lines.found.entry(seg.into()).or_insert(f)
                }
            };
            found.extend_from_slice(in_seg);
        }
        found.sort_unstable();
        found.dedup();
        let before = found.len();
        for &i in &self.multiline {
            let fact = i as u32;
            if found[..before].binary_search(&fact).is_err()
                && content.contains(facts.list()[i].as_str())
            {
                found.push(fact);
            }
        }
        if found.len() > before {
            found.sort_unstable();
        }
        found
    }

    /// Indices (ascending, unique) of the facts found in `content`.
    pub fn scan(&self, content: &str, facts: &Facts) -> Vec<u32> {
        if self.n == 0 {
            return Vec::new();
        }
        // Gathered and sorted, not marked in an n-long table: this runs once per
        // distinct line, and a table each time made it O(lines × facts).
        let mut found: Vec<u32> = Vec::new();
        for (c, ac) in self.chunks.iter().enumerate() {
            let base = c * FACTS_PER_AUTOMATON;
            match ac {
                Some(ac) => {
                    let list = facts.list();
                    found.extend(ac.find_overlapping_iter(content).filter_map(|m| {
                        let i = base + m.pattern().as_usize();
                        let fact = list[i].as_bytes();
                        // A prefix matched: the rest of a longer fact must follow it.
                        (m.len() == fact.len() || content.as_bytes()[m.start()..].starts_with(fact))
                            .then_some(i as u32)
                    }));
                }
                None => {
                    let end = (base + FACTS_PER_AUTOMATON).min(self.n);
                    found.extend(
                        facts.list()[base..end]
                            .iter()
                            .enumerate()
                            .filter(|(_, f)| content.contains(f.as_str()))
                            .map(|(i, _)| (base + i) as u32),
                    );
                }
            }
        }
        found.sort_unstable();
        found.dedup();
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, searched fact by fact: which facts appear in some message.
    fn naive(facts: &Facts, messages: &[&str]) -> Vec<u32> {
        (0..facts.len() as u32)
            .filter(|&i| {
                messages
                    .iter()
                    .any(|m| m.contains(&facts.list()[i as usize]))
            })
            .collect()
    }

    #[test]
    fn matcher_finds_overlapping_and_nested_facts() {
        let mut facts = Facts::new();
        for f in ["abc", "bc", "zz", "c", "abc"] {
            facts.add(f);
        }
        assert_eq!(facts.list(), ["abc", "bc", "zz", "c"]);
        let m = FactMatcher::new(&facts);
        assert_eq!(m.scan("xabcx", &facts), vec![0, 1, 3]);
        assert_eq!(m.scan("", &facts), Vec::<u32>::new());
        assert_eq!(naive(&facts, &["xabcx"]), [0, 1, 3]);
    }

    #[test]
    fn line_scan_equals_whole_scan_multiline_facts_included() {
        let mut facts = Facts::new();
        for f in ["a\nb", "b", "x\n", "zz", "line two"] {
            facts.add(f);
        }
        let m = FactMatcher::new(&facts);
        let mut lines = FactLines::default();
        for text in [
            "a\nb and line two",
            "x\nzz\nq",
            "no",
            "a\nbx\n",
            "line\ntwo",
        ] {
            assert_eq!(
                m.scan_lines(text, &facts, &mut lines),
                m.scan(text, &facts),
                "{text:?}"
            );
            assert_eq!(m.scan(text, &facts), naive(&facts, &[text]), "{text:?}");
        }
    }

    #[test]
    fn matcher_spans_several_automata() {
        let mut facts = Facts::new();
        let n = FACTS_PER_AUTOMATON * 2 + 7;
        for i in 0..n {
            facts.add(&format!("<fact {i}>"));
        }
        let m = FactMatcher::new(&facts);
        let text = format!("<fact 3> <fact {}> <fact {}>", FACTS_PER_AUTOMATON, n - 1);
        let found = m.scan(&text, &facts);
        assert_eq!(found, vec![3, FACTS_PER_AUTOMATON as u32, (n - 1) as u32]);
        assert_eq!(naive(&facts, &[&text]), found);
    }

    /// Many distinct prints, each a prefix of others (`p1` in `p10`…): every one is found
    /// in the prompt that prints them all, the right ones in a part of it, and the
    /// line-cached scan agrees with the whole scan and the naive search. (Retention over
    /// such sessions was once quadratic in the number of prints; see RELIABILITY.md.)
    #[test]
    fn five_thousand_distinct_prints_are_all_found() {
        let n = 5_000;
        let turn = recap_core::Turn {
            number: 1,
            program: "(doseq …)".into(),
            raw_response: String::new(),
            success: true,
            error: None,
            result: None,
            prints: (0..n).map(|i| format!("p{i}")).collect(),
            tool_calls: Vec::new(),
            definitions: Vec::new(),
            feedback: None,
            usage: None,
        };
        let facts = Facts::from_turns(std::slice::from_ref(&turn));
        assert_eq!(facts.len(), n);
        let m = FactMatcher::new(&facts);
        let mut lines = FactLines::default();
        let all = turn.prints.join("\n");
        let found = m.scan_lines(&all, &facts, &mut lines);
        assert_eq!(found, (0..n as u32).collect::<Vec<_>>());
        // Lines p100..p199 carry p1, p10..p19 and p100..p199 as substrings.
        let part = turn.prints[100..200].join("\n");
        let found = m.scan_lines(&part, &facts, &mut lines);
        assert_eq!(found, m.scan(&part, &facts));
        assert_eq!(found, naive(&facts, &[&part]));
        assert_eq!(found.len(), 1 + 10 + 100);
    }

    /// Facts longer than the automaton's prefix, facts sharing a prefix with a few others
    /// (found by prefix, then compared) and with many others (held whole): each is found
    /// exactly where it occurs whole, and not where only its prefix does.
    #[test]
    fn long_facts_and_shared_prefixes_are_found_whole() {
        let stamp = "[2026-11-26 10:00:"; // 18 bytes: longer than the prefix
        let mut facts = Facts::new();
        for i in 0..12 {
            facts.add(&format!("{stamp}{i:02}] step {i} done"));
        }
        facts.add("a fact much longer than sixteen bytes");
        facts.add("a fact much longer than sixteen bytes, and more");
        facts.add("short");
        let shared = &facts.list()[0][..PREFIX_BYTES];
        let sharing = facts
            .list()
            .iter()
            .filter(|f| f.as_bytes().starts_with(shared.as_bytes()))
            .count();
        assert!(
            sharing as u32 > MAX_SHARING_A_PREFIX,
            "the stamps share a prefix"
        );
        let m = FactMatcher::new(&facts);
        let texts = [
            format!("{stamp}03] step 3 done\n{stamp}07] step 7 don"),
            format!("x{stamp}11] step 11 done, a fact much longer than sixteen bytes"),
            "a fact much longer than sixteen bytes, and more short".to_string(),
            "a fact much longer than sixteen byte".to_string(),
            String::new(),
        ];
        for text in &texts {
            assert_eq!(m.scan(text, &facts), naive(&facts, &[text]), "{text:?}");
        }
        assert_eq!(m.scan(&texts[0], &facts), [3]);
        assert_eq!(m.scan(&texts[2], &facts), [12, 13, 14]);
    }

    proptest::proptest! {
        /// The matcher finds what a search fact by fact finds, over facts and texts from
        /// a small alphabet (so that prefixes, overlaps and repeats are common) and facts
        /// on both sides of the prefix length.
        #[test]
        fn scan_is_the_naive_search(
            fact_list in proptest::collection::vec("[ab\n]{1,3}|[ab]{14,24}", 1..30),
            texts in proptest::collection::vec("[abc\n]{0,80}", 1..4),
        ) {
            let mut facts = Facts::new();
            for f in &fact_list {
                facts.add(f);
            }
            let m = FactMatcher::new(&facts);
            let mut lines = FactLines::default();
            for text in &texts {
                let want = naive(&facts, &[text]);
                proptest::prop_assert_eq!(m.scan(text, &facts), want.clone());
                proptest::prop_assert_eq!(m.scan_lines(text, &facts, &mut lines), want);
            }
        }
    }
}
