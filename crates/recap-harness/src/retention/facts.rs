//! The facts a session records, in order of first appearance.

use super::chat_facts::chat_turn_facts;
use recap_core::{ChatTurn, Turn};

/// Characters of a print's first line that count as the fact (SPEC section 9).
pub const PRINT_FACT_CHARS: usize = 120;

/// The growing, de-duplicated fact list of one session.
#[derive(Debug, Default, Clone)]
pub struct Facts {
    list: Vec<String>,
    seen: rustc_hash::FxHashSet<String>,
}

impl Facts {
    pub fn new() -> Self {
        Self::default()
    }

    /// All facts in order of first appearance.
    pub fn list(&self) -> &[String] {
        &self.list
    }

    pub fn len(&self) -> usize {
        self.list.len()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    pub(super) fn add(&mut self, fact: &str) {
        if !fact.is_empty() && !self.seen.contains(fact) {
            self.seen.insert(fact.to_string());
            self.list.push(fact.to_string());
        }
    }

    /// Adds what one completed turn records. Definitions count only for successful turns
    /// (a failed turn defines nothing, SPEC section 4).
    pub fn add_turn(&mut self, turn: &Turn) {
        if turn.success {
            for d in &turn.definitions {
                self.add(&d.name);
            }
        }
        for p in &turn.prints {
            self.add(print_fact(p));
        }
        if let Some(msg) = turn.error_message() {
            self.add(msg);
        }
    }

    /// Adds what one completed chat turn records (SPEC 11.5).
    pub fn add_chat_turn(&mut self, turn: &ChatTurn) {
        for fact in chat_turn_facts(turn) {
            self.add(&fact);
        }
    }

    /// The facts recorded by `turns`, in order.
    pub fn from_turns(turns: &[Turn]) -> Self {
        let mut f = Facts::new();
        for t in turns {
            f.add_turn(t);
        }
        f
    }
}

/// A print's first line, cut to [`PRINT_FACT_CHARS`] characters: the first
/// characters, cut at the first line break among them (a long print is read no
/// further than its fact).
pub fn print_fact(print: &str) -> &str {
    let head = match print.char_indices().nth(PRINT_FACT_CHARS) {
        Some((end, _)) => &print[..end],
        None => print,
    };
    match memchr::memchr2(b'\n', b'\r', head.as_bytes()) {
        Some(cut) => &head[..cut],
        None => head,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn print_fact_takes_first_line_in_chars() {
        assert_eq!(print_fact("a\nb"), "a");
        assert_eq!(print_fact("x\r\ny"), "x");
        let long: String = "é".repeat(130);
        assert_eq!(print_fact(&long).chars().count(), 120);
        assert_eq!(print_fact("ab\r"), "ab");
        assert_eq!(print_fact(""), "");
        let late_break = format!("{}\nrest", "x".repeat(130));
        assert_eq!(print_fact(&late_break), "x".repeat(120));
        let early_break = format!("{}\n{}", "é".repeat(50), "y".repeat(200));
        assert_eq!(print_fact(&early_break), "é".repeat(50));
    }

    #[test]
    fn equal_facts_count_once_and_empty_ones_not_at_all() {
        let mut facts = Facts::new();
        for f in ["abc", "", "bc", "abc"] {
            facts.add(f);
        }
        assert_eq!(facts.list(), ["abc", "bc"]);
    }
}
