//! Retention (SPEC section 9): the facts recorded so far and which of them a prompt
//! still carries verbatim.
//!
//! Facts before call k: each live definition name, each print's first line (up to 120
//! characters), each failed turn's error message. Equal facts count once, empty ones not
//! at all (an empty string is trivially "in" every prompt and would inflate the share).
//! Live names only accumulate (a redefinition keeps its name live) and prints and errors
//! only accumulate, so the fact list of call k+1 extends that of call k; the harness
//! relies on this to re-scan an unchanged message for the new facts only.

use recap_core::{Message, Turn};
use std::collections::HashSet;

/// Characters of a print's first line that count as the fact (SPEC section 9).
pub const PRINT_FACT_CHARS: usize = 120;

/// The growing, de-duplicated fact list of one session.
#[derive(Debug, Default, Clone)]
pub struct Facts {
    list: Vec<String>,
    seen: HashSet<String>,
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

    fn add(&mut self, fact: &str) {
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
            self.add(&print_fact(p));
        }
        if let Some(msg) = turn.error_message() {
            self.add(msg);
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

/// A print's first line, cut to [`PRINT_FACT_CHARS`] characters.
pub fn print_fact(print: &str) -> String {
    let first = print.split(['\n', '\r']).next().unwrap_or("");
    first.chars().take(PRINT_FACT_CHARS).collect()
}

/// Which facts (by index into `facts`) appear verbatim in some message.
/// A fact must lie inside one message: a match across a message boundary does not count.
pub fn retained(facts: &[String], messages: &[Message]) -> Vec<bool> {
    facts
        .iter()
        .map(|f| messages.iter().any(|m| m.content.contains(f.as_str())))
        .collect()
}

/// What has been searched in one message: `found` holds the indices (ascending) of facts
/// found among the first `checked` facts.
#[derive(Debug, Clone, Default)]
pub struct Scanned {
    pub found: Vec<u32>,
    pub checked: usize,
}

impl Scanned {
    /// Extends a scan to all of `facts`, searching only the facts not yet checked.
    pub fn extend(mut self, content: &str, facts: &[String]) -> Scanned {
        for (i, f) in facts.iter().enumerate().skip(self.checked) {
            if content.contains(f.as_str()) {
                self.found.push(i as u32);
            }
        }
        self.checked = facts.len();
        self
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
    }

    #[test]
    fn incremental_scan_equals_full_scan() {
        let facts: Vec<String> = ["a", "bc", "zz", "c"].map(String::from).to_vec();
        let full = Scanned::default().extend("abc", &facts);
        let part = Scanned::default().extend("abc", &facts[..2]).extend("abc", &facts);
        assert_eq!(full.found, vec![0, 1, 3]);
        assert_eq!(part.found, full.found);
    }
}
