//! Finding a session's facts in a prompt's messages: Aho-Corasick over the facts (a
//! double-array automaton, `daachorse`), with the facts found in each line kept for the
//! rest of the session.
//!
//! daachorse rather than aho-corasick's noncontiguous NFA: its transitions are array
//! lookups, so an overlapping scan costs fewer instructions per byte, and building it
//! grows about linearly. With the prefixes below, `recap run`'s whole engine takes 6–10 %
//! fewer instructions on generated and imported corpora than with the NFA.

use super::facts::Facts;
use crate::line_store::CallLines;
use recap_core::Text;

/// Facts per automaton: a bound on one automaton's size (daachorse holds at most 2^24
/// patterns), far above what a session records. Chunks once had to be small: building
/// one aho-corasick 1.1 automaton grew faster than linearly with the patterns (40,000
/// facts: 11.7 s), so 1,024 facts made a chunk and a session of n facts scanned each line
/// n/1,024 times (1,000,000 distinct prints: 149 s). A double-array automaton builds in
/// about linear time: the same session takes 4.6 s with chunks of 65,536 (4.7 s with one
/// automaton, and 20 % more memory).
const FACTS_PER_AUTOMATON: usize = 1 << 16;

/// Bytes of a fact the automaton holds: a longer fact is found by its first bytes and
/// then compared whole. Facts run to 120 characters (whole first lines of outputs), and
/// building the automaton grows with the bytes it holds, so a fact is held by the
/// shortest of these prefixes that few facts share (see [`MAX_SHARING_A_PREFIX`]), else
/// whole.
const PREFIX_BYTES: [usize; 3] = [8, 16, 32];

/// More facts than this sharing a prefix (timestamped lines, say) are held by a longer
/// one, or whole: each match of a shared prefix would otherwise be compared with every
/// fact behind it, quadratic in a long session of such lines, where the automaton stays
/// linear.
const MAX_SHARING_A_PREFIX: u32 = 4;

/// A fact's first `len` bytes (all of a shorter one).
fn prefix(fact: &str, len: usize) -> &[u8] {
    &fact.as_bytes()[..fact.len().min(len)]
}

/// How many facts share each prefix, for each length in [`PREFIX_BYTES`].
type Sharing<'f> = [rustc_hash::FxHashMap<&'f [u8], u32>; PREFIX_BYTES.len()];

/// The bytes of `fact` the automaton holds, given how many facts share its prefixes.
fn pattern<'f>(fact: &'f str, sharing: &Sharing<'_>) -> &'f [u8] {
    for (len, shared) in PREFIX_BYTES.iter().zip(sharing) {
        let prefix = prefix(fact, *len);
        if prefix.len() == fact.len()
            || shared.get(prefix).copied().unwrap_or(0) <= MAX_SHARING_A_PREFIX
        {
            return prefix;
        }
    }
    fact.as_bytes()
}

/// Finds every fact of a session in a text (Aho-Corasick over the facts, in chunks).
///
/// The whole session's fact list is known before the first call, and the facts of call
/// k are a prefix of it; so one scan of a message yields its facts for every call, and a
/// message that reappears unchanged in a later call is never scanned again.
pub struct FactMatcher {
    /// One automaton per chunk of `per_automaton` facts; `None` when building
    /// failed (past internal size limits), and that chunk is searched fact by fact.
    chunks: Vec<Option<Chunk>>,
    per_automaton: usize,
    n: usize,
    /// Facts containing a line break: the only ones that can span two segments.
    multiline: Vec<usize>,
}

/// One automaton over a chunk of facts' patterns. Patterns are distinct in the
/// automaton, but two facts may share one (a prefix): a pattern's value is the first
/// fact (its position in the chunk) holding it, and `next` links each fact to the next
/// one holding the same pattern.
struct Chunk {
    automaton: daachorse::DoubleArrayAhoCorasick<u32>,
    next: Vec<u32>,
}

/// The end of a [`Chunk::next`] chain.
const LAST: u32 = u32::MAX;

impl Chunk {
    fn new<'p>(patterns: impl ExactSizeIterator<Item = &'p [u8]>) -> Option<Chunk> {
        let mut next = vec![LAST; patterns.len()];
        // Each distinct pattern with the first and the last fact holding it so far.
        let mut ends: rustc_hash::FxHashMap<&[u8], (u32, u32)> = Default::default();
        let mut distinct: Vec<&[u8]> = Vec::new();
        for (i, p) in patterns.enumerate() {
            let i = i as u32;
            match ends.get_mut(p) {
                Some((_, last)) => {
                    next[*last as usize] = i;
                    *last = i;
                }
                None => {
                    ends.insert(p, (i, i));
                    distinct.push(p);
                }
            }
        }
        let automaton = daachorse::DoubleArrayAhoCorasickBuilder::new()
            .use_prefilter(false)
            .build_with_values(distinct.iter().map(|p| (p, ends[p].0)))
            .ok()?;
        Some(Chunk { automaton, next })
    }

    /// The facts holding the pattern whose value is `first`.
    fn group(&self, first: u32) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(Some(first), |&i| {
            Some(self.next[i as usize]).filter(|&n| n != LAST)
        })
    }
}

impl FactMatcher {
    pub fn new(facts: &Facts) -> FactMatcher {
        Self::chunked(facts, FACTS_PER_AUTOMATON)
    }

    /// With `per_automaton` facts in each automaton (small in tests, to cover several).
    fn chunked(facts: &Facts, per_automaton: usize) -> FactMatcher {
        let mut sharing: Sharing = Default::default();
        for (len, shared) in PREFIX_BYTES.iter().zip(&mut sharing) {
            for fact in facts.list() {
                *shared.entry(prefix(fact, *len)).or_default() += 1;
            }
        }
        let chunks = facts
            .list()
            .chunks(per_automaton)
            .map(|chunk| Chunk::new(chunk.iter().map(|f| pattern(f, &sharing))))
            .collect();
        FactMatcher {
            chunks,
            per_automaton,
            n: facts.len(),
            multiline: (0..facts.len())
                .filter(|&i| facts.list()[i].contains('\n'))
                .collect(),
        }
    }

    /// Indices (ascending, unique) of the facts found in `content`, searching only the
    /// lines of `content` not searched yet in the session (whichever strategy rendered
    /// them: the facts found in each line are kept in the session's
    /// [`LineStore`](crate::line_store::LineStore)). Same result as [`FactMatcher::scan`]:
    /// a fact without a line break lies within one line, and the (rare) facts with one
    /// are searched in the whole content.
    pub fn scan_lines<'m>(
        &self,
        content: &'m Text,
        facts: &Facts,
        lines: &mut CallLines<'_, 'm>,
    ) -> Vec<u32> {
        if self.n == 0 {
            return Vec::new();
        }
        // Found indices are gathered and sorted rather than marked in an n-long table:
        // a table per line made a session with n distinct prints cost O(n²) (100,000
        // prints: 11 s, 86 % of it walking the tables).
        let mut found: Vec<u32> = Vec::new();
        for i in lines.walk_text(content) {
            let id = lines.walked_id(i);
            match lines.line_facts(id) {
                Some(f) => found.extend_from_slice(f),
                None => {
                    let f = self.scan(lines.line(id), facts).into_boxed_slice();
                    found.extend_from_slice(&f);
                    lines.set_line_facts(id, f);
                }
            }
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
            let base = c * self.per_automaton;
            match ac {
                Some(ac) => {
                    let list = facts.list();
                    let bytes = content.as_bytes();
                    for m in ac.automaton.find_overlapping_iter(bytes) {
                        for p in ac.group(m.value()) {
                            let i = base + p as usize;
                            let fact = list[i].as_bytes();
                            // A prefix matched: the rest of a longer fact must follow it.
                            if m.end() - m.start() == fact.len()
                                || bytes[m.start()..].starts_with(fact)
                            {
                                found.push(i as u32);
                            }
                        }
                    }
                }
                None => {
                    let end = (base + self.per_automaton).min(self.n);
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
    use crate::line_store::LineStore;

    /// A session's lines and the facts found in them; each text is scanned in a call of
    /// its own.
    #[derive(Default)]
    struct Lines(LineStore);

    impl Lines {
        fn scan(&mut self, m: &FactMatcher, text: &str, facts: &Facts) -> Vec<u32> {
            let text = Text::from(text);
            m.scan_lines(&text, facts, &mut self.0.call())
        }
    }

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
        let mut lines = Lines::default();
        for text in [
            "a\nb and line two",
            "x\nzz\nq",
            "no",
            "a\nbx\n",
            "line\ntwo",
        ] {
            assert_eq!(
                lines.scan(&m, text, &facts),
                m.scan(text, &facts),
                "{text:?}"
            );
            assert_eq!(m.scan(text, &facts), naive(&facts, &[text]), "{text:?}");
        }
    }

    #[test]
    fn matcher_spans_several_automata() {
        let mut facts = Facts::new();
        let per = 64;
        let n = per * 2 + 7;
        for i in 0..n {
            facts.add(&format!("<fact {i}>"));
        }
        let m = FactMatcher::chunked(&facts, per);
        assert_eq!(m.chunks.len(), 3);
        let text = format!("<fact 3> <fact {per}> <fact {}>", n - 1);
        let found = m.scan(&text, &facts);
        assert_eq!(found, vec![3, per as u32, (n - 1) as u32]);
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
        let mut lines = Lines::default();
        let all = turn.prints.join("\n");
        let found = lines.scan(&m, &all, &facts);
        assert_eq!(found, (0..n as u32).collect::<Vec<_>>());
        // Lines p100..p199 carry p1, p10..p19 and p100..p199 as substrings.
        let part = turn.prints[100..200].join("\n");
        let found = lines.scan(&m, &part, &facts);
        assert_eq!(found, m.scan(&part, &facts));
        assert_eq!(found, naive(&facts, &[&part]));
        assert_eq!(found.len(), 1 + 10 + 100);
    }

    /// Facts longer than the automaton's prefixes, facts sharing a prefix with a few
    /// others (found by prefix, then compared), with many others at one length (held by
    /// a longer prefix) and at every length (held whole): each is found exactly where it
    /// occurs whole, and not where only its prefix does.
    #[test]
    fn long_facts_and_shared_prefixes_are_found_whole() {
        let stamp = "[2026-11-26 10:00:"; // 18 bytes: longer than two of the prefixes
        let long_stamp = "[2026-11-26 10:00:00.000000 +0000 UTC] "; // 39: longer than all
        let mut facts = Facts::new();
        for i in 0..12 {
            facts.add(&format!("{stamp}{i:02}] step {i} done"));
        }
        facts.add("a fact much longer than sixteen bytes");
        facts.add("a fact much longer than sixteen bytes, and more");
        facts.add("short");
        for i in 0..6 {
            facts.add(&format!("{long_stamp}worker {i} up"));
        }
        let sharing = |len: usize, fact: &str| {
            let p = prefix(fact, len);
            facts
                .list()
                .iter()
                .filter(|f| f.as_bytes().starts_with(p))
                .count() as u32
        };
        let first = &facts.list()[0];
        assert!(sharing(PREFIX_BYTES[1], first) > MAX_SHARING_A_PREFIX);
        assert!(sharing(PREFIX_BYTES[2], first) <= MAX_SHARING_A_PREFIX);
        let last = &facts.list()[facts.len() - 1];
        assert!(sharing(PREFIX_BYTES[2], last) > MAX_SHARING_A_PREFIX);
        let m = FactMatcher::new(&facts);
        let texts = [
            format!("{stamp}03] step 3 done\n{stamp}07] step 7 don"),
            format!("x{stamp}11] step 11 done, a fact much longer than sixteen bytes"),
            "a fact much longer than sixteen bytes, and more short".to_string(),
            "a fact much longer than sixteen byte".to_string(),
            format!("{long_stamp}worker 2 up; {long_stamp}worker 4 u; {long_stamp}worker 5"),
            String::new(),
        ];
        for text in &texts {
            assert_eq!(m.scan(text, &facts), naive(&facts, &[text]), "{text:?}");
        }
        assert_eq!(m.scan(&texts[0], &facts), [3]);
        assert_eq!(m.scan(&texts[2], &facts), [12, 13, 14]);
        assert_eq!(m.scan(&texts[4], &facts), [17]);
    }

    proptest::proptest! {
        /// The matcher finds what a search fact by fact finds, over facts and texts from
        /// a small alphabet (so that prefixes, overlaps and repeats are common) and facts
        /// on both sides of the prefix length.
        #[test]
        fn scan_is_the_naive_search(
            fact_list in proptest::collection::vec("[ab\n]{1,3}|[ab]{6,40}", 1..30),
            texts in proptest::collection::vec("[abc\n]{0,120}", 1..4),
        ) {
            let mut facts = Facts::new();
            for f in &fact_list {
                facts.add(f);
            }
            let m = FactMatcher::new(&facts);
            let mut lines = Lines::default();
            for text in &texts {
                let want = naive(&facts, &[text]);
                proptest::prop_assert_eq!(m.scan(text, &facts), want.clone());
                proptest::prop_assert_eq!(lines.scan(&m, text, &facts), want);
            }
        }
    }
}
