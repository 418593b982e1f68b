//! The summarizer's prompt: one USER message built from a template with three
//! placeholders — `{mission}`, `{previous_summary}` (or [`NO_SUMMARY`] at the first cut)
//! and `{events}` (the messages being forgotten, one `<EVENT …>` block each). The layout
//! follows OpenHands' `LLMSummarizingCondenser` (a previous-summary block, the events,
//! sections to keep); the wording is recap's. `template=PATH` replaces it with a file's
//! text, which must hold `{events}`.

use recap_core::{Message, Role};

pub const DEFAULT_TEMPLATE: &str = "You are maintaining a running summary of an AI agent's work on a task, so that the agent can go on after the older part of its conversation is removed.

TASK:
{mission}

<PREVIOUS SUMMARY>
{previous_summary}
</PREVIOUS SUMMARY>

These events are being removed from the conversation now:
{events}

Write the updated summary: the previous summary merged with what these events add. Use these headings:
USER_CONTEXT: what the user asked for and every constraint they stated
COMPLETED: the steps done and what they found (file paths, names, values, error messages)
PENDING: what remains to be done
CURRENT_STATE: where the work stands now
Copy exact strings (paths, identifiers, numbers, error messages) exactly. Write only the summary.";

/// `{previous_summary}` at the first cut.
pub const NO_SUMMARY: &str = "No events summarized.";

/// The first line of the USER message that carries the summary in the prompt (after
/// LangChain's `SummarizationMiddleware`).
pub const SUMMARY_PREFIX: &str = "Here is a summary of the conversation to date:\n\n";

/// Fills `template`.
pub fn fill(template: &str, mission: &str, previous: Option<&str>, events: &str) -> String {
    // Placeholders are replaced in one pass, so text inside the mission or the events
    // that looks like a placeholder is left alone.
    let mut out = String::with_capacity(template.len() + mission.len() + events.len());
    let mut rest = template;
    while let Some(at) = rest.find('{') {
        out.push_str(&rest[..at]);
        let tail = &rest[at..];
        let (value, len) = if tail.starts_with("{mission}") {
            (mission, "{mission}".len())
        } else if tail.starts_with("{previous_summary}") {
            (previous.unwrap_or(NO_SUMMARY), "{previous_summary}".len())
        } else if tail.starts_with("{events}") {
            (events, "{events}".len())
        } else {
            ("{", 1)
        };
        out.push_str(value);
        rest = &tail[len..];
    }
    out.push_str(rest);
    out
}

/// The `<EVENT …>` blocks of the messages being forgotten; each content cut in the
/// middle past `max_chars` characters (as OpenHands does at 10,000).
pub fn events(messages: &[Message], max_chars: usize) -> String {
    let mut out = String::new();
    for m in messages {
        out.push_str("<EVENT role=");
        out.push_str(m.role.as_str());
        if m.role == Role::Tool
            && let Some(name) = &m.name
        {
            out.push_str(" name=");
            out.push_str(name);
        }
        out.push_str(">\n");
        let mut body = m.content.to_string();
        for c in &m.tool_calls {
            if !body.is_empty() {
                body.push('\n');
            }
            body.push_str(&format!("[tool call {}({})]", c.name, c.arguments));
        }
        out.push_str(&middle_cut(&body, max_chars));
        out.push_str("\n</EVENT>\n");
    }
    out
}

fn middle_cut(text: &str, max_chars: usize) -> String {
    let n = text.chars().count();
    if n <= max_chars {
        return text.to_string();
    }
    let head: String = text.chars().take(max_chars / 2).collect();
    let tail: String = text.chars().skip(n - max_chars / 2).collect();
    format!(
        "{head}\n[... {} characters omitted ...]\n{tail}",
        n - 2 * (max_chars / 2)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_core::MessageToolCall;

    #[test]
    fn placeholders_are_filled_once_and_text_that_looks_like_one_is_kept() {
        let t = "{mission}|{previous_summary}|{events}|{other}";
        assert_eq!(
            fill(t, "do {events}", None, "E"),
            format!("do {{events}}|{NO_SUMMARY}|E|{{other}}")
        );
        assert_eq!(fill(t, "m", Some("S"), "E"), "m|S|E|{other}");
    }

    #[test]
    fn events_show_calls_and_cut_long_contents_in_the_middle() {
        let call = MessageToolCall {
            id: "1".into(),
            name: "read".into(),
            arguments: "{\"p\":\"a\"}".into(),
        };
        let e = events(
            &[
                Message::assistant_with_calls("", vec![call]),
                Message::tool("1", Some("read".into()), "x".repeat(60)),
            ],
            30,
        );
        assert!(
            e.starts_with("<EVENT role=assistant>\n[tool call read({\"p\":\"a\"})]\n</EVENT>\n"),
            "{e}"
        );
        let x15 = "x".repeat(15);
        let cut =
            format!("<EVENT role=tool name=read>\n{x15}\n[... 30 characters omitted ...]\n{x15}\n");
        assert!(e.contains(&cut), "{e}");
    }
}
