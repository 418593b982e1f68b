//! Retention facts of the chat form (SPEC 11.5): what a chat turn records that a prompt
//! should still carry — each observation's first non-blank line, each string literal of
//! at least 8 characters inside a tool call's arguments (as written there, escapes kept),
//! and each error observation's first line; lines and literals cut to 120 characters.

use recap_core::ChatTurn;

/// Characters a fact keeps at most (SPEC 9, 11.5).
pub const FACT_CHARS: usize = 120;
/// Characters a string literal of the arguments needs to count as a fact.
pub const MIN_LITERAL_CHARS: usize = 8;

/// The facts one chat turn records, in order (duplicates and empty ones included: the
/// fact list de-duplicates).
pub fn chat_turn_facts(turn: &ChatTurn) -> Vec<String> {
    let mut out = Vec::new();
    for call in &turn.assistant.tool_calls {
        out.extend(
            string_literals(&call.arguments)
                .filter(|l| l.chars().count() >= MIN_LITERAL_CHARS)
                .map(cut),
        );
    }
    for o in &turn.observations {
        out.push(cut(first_non_blank_line(o.content())));
        if o.is_error() {
            out.push(cut(first_line(o.content())));
        }
    }
    out
}

fn cut(s: &str) -> String {
    s.chars().take(FACT_CHARS).collect()
}

fn lines(text: &str) -> impl Iterator<Item = &str> {
    text.split(['\n', '\r'])
}

fn first_line(text: &str) -> &str {
    lines(text).next().unwrap_or("")
}

/// The first line with anything but white space on it, as written (not trimmed).
fn first_non_blank_line(text: &str) -> &str {
    lines(text).find(|l| !l.trim().is_empty()).unwrap_or("")
}

/// The contents of every double-quoted string literal in `text`, as written between
/// the quotes (escapes kept). Works on malformed JSON too: a literal left open at the end
/// is not a literal.
pub fn string_literals(text: &str) -> impl Iterator<Item = &str> {
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            if bytes[i] != b'"' {
                i += 1;
                continue;
            }
            let start = i + 1;
            let mut j = start;
            while j < bytes.len() && bytes[j] != b'"' {
                j += if bytes[j] == b'\\' { 2 } else { 1 };
            }
            if j >= bytes.len() {
                i = bytes.len();
                return None;
            }
            i = j + 1;
            // Quotes are ASCII, so both ends are char boundaries.
            return Some(&text[start..j]);
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_core::Observation;
    use recap_gen::chat::ChatSessionBuilder;

    #[test]
    fn literals_keep_escapes_and_skip_unterminated_ones() {
        let found: Vec<&str> =
            string_literals(r#"{"path": "src/a \"b\".rs", "n": 3, "q": "open"#).collect();
        assert_eq!(found, ["path", r#"src/a \"b\".rs"#, "n", "q"]);
        assert_eq!(string_literals("no quotes").count(), 0);
        assert_eq!(
            string_literals(r#""ü日本語""#).collect::<Vec<_>>(),
            ["ü日本語"]
        );
    }

    #[test]
    fn a_turn_records_results_replies_errors_and_long_argument_literals() {
        let s = ChatSessionBuilder::new("m")
            .turn(
                "",
                &[(
                    "c1",
                    "read_file",
                    r#"{"path": "/repo/src/main.rs", "n": "short"}"#,
                )],
                vec![Observation::Tool {
                    tool_call_id: "c1".into(),
                    name: None,
                    content: "\n  \nfn main() {}\nmore".into(),
                    is_error: false,
                }],
            )
            .turn(
                "",
                &[("c2", "run", "{}")],
                vec![Observation::Tool {
                    tool_call_id: "c2".into(),
                    name: None,
                    content: "Error: no such file\ndetails".into(),
                    is_error: true,
                }],
            )
            .text_turn("ask", &["Yes, book the 9am flight"])
            .build();
        let facts: Vec<String> = s.chat_turns.iter().flat_map(chat_turn_facts).collect();
        assert_eq!(
            facts,
            [
                "/repo/src/main.rs",
                "fn main() {}",
                "Error: no such file",
                "Error: no such file",
                "Yes, book the 9am flight"
            ]
        );
    }

    #[test]
    fn long_lines_are_cut_to_120_characters() {
        let long = "é".repeat(300);
        let s = ChatSessionBuilder::new("m").text_turn("", &[&long]).build();
        let facts = chat_turn_facts(&s.chat_turns[0]);
        assert_eq!(facts[0].chars().count(), FACT_CHARS);
    }
}
