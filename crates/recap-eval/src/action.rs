//! Next-action agreement: does the model, shown a strategy's prompt, do what the
//! recorded agent did next?
//!
//! - Chat form: the action is the response's tool calls, in order; two actions agree
//!   when they have as many calls and each pair has the same tool name (exactly) and the
//!   same arguments compared as parsed JSON (key order and spacing do not matter; text
//!   that is not JSON is compared trimmed). A response without tool calls (a fenced-command
//!   agent, a plain reply) acts through its text: the last fenced block when it has one,
//!   else the whole text, compared with white space collapsed.
//! - PTC form: the action is the program — the first fenced block of the reply, or the
//!   whole reply — compared after [`normalize_program`].

use recap_core::ChatTurn;
use recap_llm::response::Reply;
use serde_json::Value as Json;

/// What an agent did in one response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Tool calls: (name, arguments text).
    Calls(Vec<(String, String)>),
    /// A text action, already normalised.
    Text(String),
}

impl Action {
    /// The recorded action of a chat turn.
    pub fn of_chat_turn(turn: &ChatTurn) -> Action {
        if turn.assistant.tool_calls.is_empty() {
            Action::Text(text_action(turn.assistant.content.as_deref().unwrap_or("")))
        } else {
            Action::Calls(
                turn.assistant
                    .tool_calls
                    .iter()
                    .map(|c| (c.name.to_string(), c.arguments.to_string()))
                    .collect(),
            )
        }
    }

    /// The model's action, for a chat-form session.
    pub fn of_chat_reply(reply: &Reply) -> Action {
        if reply.tool_calls.is_empty() {
            Action::Text(text_action(reply.content.as_deref().unwrap_or("")))
        } else {
            Action::Calls(
                reply
                    .tool_calls
                    .iter()
                    .map(|c| (c.name.to_string(), c.arguments.to_string()))
                    .collect(),
            )
        }
    }

    /// The recorded action of a PTC turn (its program).
    pub fn of_program(program: &str) -> Action {
        Action::Text(normalize_program(program))
    }

    /// The model's action, for a PTC-form session.
    pub fn of_ptc_reply(reply: &Reply) -> Action {
        let content = reply.content.as_deref().unwrap_or("");
        let program = fenced_blocks(content).next().unwrap_or(content);
        Action::Text(normalize_program(program))
    }

    /// Whether two actions agree (see the module's rules).
    pub fn agrees_with(&self, other: &Action) -> bool {
        match (self, other) {
            (Action::Calls(a), Action::Calls(b)) => {
                a.len() == b.len()
                    && a.iter()
                        .zip(b)
                        .all(|((n1, a1), (n2, a2))| n1 == n2 && same_arguments(a1, a2))
            }
            (Action::Text(a), Action::Text(b)) => a == b,
            _ => false,
        }
    }

    /// Whether the first tool called is the same (a weaker agreement, reported beside).
    pub fn same_first_tool(&self, other: &Action) -> bool {
        match (self, other) {
            (Action::Calls(a), Action::Calls(b)) => {
                a.first().map(|c| &c.0) == b.first().map(|c| &c.0)
            }
            (Action::Text(_), Action::Text(_)) => true,
            _ => false,
        }
    }
}

/// Arguments compared as JSON values; either side not JSON: as trimmed text.
pub fn same_arguments(a: &str, b: &str) -> bool {
    match (
        serde_json::from_str::<Json>(a),
        serde_json::from_str::<Json>(b),
    ) {
        (Ok(x), Ok(y)) => x == y,
        _ => a.trim() == b.trim(),
    }
}

/// The text action of a response: its last fenced block (a fenced-command agent's
/// command), else its whole text; white space collapsed.
fn text_action(content: &str) -> String {
    let action = fenced_blocks(content).last().unwrap_or(content);
    action.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The bodies of the ```` ``` ```` fenced blocks of a text, in order (info string
/// dropped; a fence left open runs to the end).
pub fn fenced_blocks(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        let open = rest.find("```")?;
        let after = &rest[open + 3..];
        let body_start = after.find('\n').map_or(after.len(), |i| i + 1);
        let body = &after[body_start..];
        match body.find("```") {
            Some(close) => {
                rest = &body[close + 3..];
                Some(&body[..close])
            }
            None => {
                rest = "";
                Some(body)
            }
        }
    })
}

/// A PTC-Lisp program with white space made irrelevant: runs of white space and commas
/// (white space to Clojure) outside string literals become one space, dropped next to
/// brackets and at the ends; string literals are kept as written.
pub fn normalize_program(program: &str) -> String {
    let mut out = String::with_capacity(program.len());
    let mut pending_space = false;
    let mut chars = program.chars();
    let opens = |c: char| matches!(c, '(' | '[' | '{');
    let closes = |c: char| matches!(c, ')' | ']' | '}');
    while let Some(c) = chars.next() {
        if c.is_whitespace() || c == ',' {
            pending_space = true;
            continue;
        }
        if pending_space && !out.is_empty() && !closes(c) && !out.ends_with(opens) {
            out.push(' ');
        }
        pending_space = false;
        out.push(c);
        if c == '"' {
            while let Some(s) = chars.next() {
                out.push(s);
                if s == '\\' {
                    if let Some(escaped) = chars.next() {
                        out.push(escaped);
                    }
                } else if s == '"' {
                    break;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_llm::response::ReplyCall;

    fn calls(list: &[(&str, &str)]) -> Action {
        Action::Calls(
            list.iter()
                .map(|(n, a)| (n.to_string(), a.to_string()))
                .collect(),
        )
    }

    #[test]
    fn calls_agree_by_name_and_parsed_arguments() {
        let a = calls(&[("read", r#"{"path": "a", "n": [1, 2]}"#)]);
        assert!(a.agrees_with(&calls(&[("read", r#"{"n":[1,2],"path":"a"}"#)])));
        assert!(!a.agrees_with(&calls(&[("read", r#"{"path": "b", "n": [1, 2]}"#)])));
        assert!(!a.agrees_with(&calls(&[("Read", r#"{"path": "a", "n": [1, 2]}"#)])));
        assert!(!a.agrees_with(&calls(&[])));
        assert!(a.same_first_tool(&calls(&[("read", "{}")])));
        // Not JSON on either side: compared as trimmed text.
        assert!(calls(&[("f", "{oops ")]).agrees_with(&calls(&[("f", " {oops")])));
        assert!(!a.agrees_with(&Action::Text(String::new())));
    }

    #[test]
    fn text_actions_compare_their_last_fenced_command() {
        let recorded = text_action("I'll look.\n```\nls  -la\n```\n");
        let reply = Reply {
            content: Some("Let me list:\n```bash\nls -la\n```".into()),
            tool_calls: vec![],
        };
        assert!(Action::Text(recorded).agrees_with(&Action::of_chat_reply(&reply)));
        let with_call = Reply {
            content: None,
            tool_calls: vec![ReplyCall {
                name: "f".into(),
                arguments: "{}".into(),
            }],
        };
        assert_eq!(Action::of_chat_reply(&with_call), calls(&[("f", "{}")]));
    }

    #[test]
    fn programs_are_compared_whitespace_insensitively() {
        let recorded = Action::of_program("(def x\n  (tool/get {:id 1,  :q \"a  b\"}))");
        let reply = Reply {
            content: Some("```clojure\n( def x (tool/get { :id 1 :q \"a  b\" } ) )\n```".into()),
            tool_calls: vec![],
        };
        assert_eq!(
            normalize_program("(def x\n  (tool/get {:id 1,  :q \"a  b\"}))"),
            "(def x (tool/get {:id 1 :q \"a  b\"}))"
        );
        assert!(recorded.agrees_with(&Action::of_ptc_reply(&reply)));
        // White space inside a string literal matters.
        assert!(
            !recorded.agrees_with(&Action::of_program("(def x (tool/get {:id 1 :q \"a b\"}))"))
        );
        assert_eq!(
            normalize_program(r#"(println "x\"  y")"#),
            r#"(println "x\"  y")"#
        );
    }

    #[test]
    fn fences_are_found_with_or_without_an_info_string() {
        let blocks: Vec<&str> = fenced_blocks("a\n```clojure\n(x)\n```\nb\n```\n(y)").collect();
        assert_eq!(blocks, ["(x)\n", "(y)"]);
    }
}
