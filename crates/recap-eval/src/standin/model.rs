//! The stand-in model's rules: answers computed from the request alone, so a test knows
//! what every strategy's prompt must yield.
//!
//! - a probe (the last message starts with the probe header): the text from the last
//!   occurrence of the cue in the earlier messages to the end of its line, or `UNKNOWN`;
//! - a judge request (starts with `You are grading`): `CORRECT` when the given answer
//!   contains the expected one, else `INCORRECT`;
//! - a summary request (a message with `<EVENT` blocks): the previous summary's lines
//!   (between `<PREVIOUS SUMMARY>` tags) followed by the first non-blank line of each
//!   event;
//! - anything else asks for the next action: the last ASSISTANT message again (its tool
//!   calls, or its text).

use crate::probes::{CUE_PREFIX, PROBE_HEADER};
use serde_json::{Value as Json, json};

/// Which rule answered (the server counts requests per kind).
pub fn kind(request: &Json) -> &'static str {
    let last = last_content(request);
    if last.starts_with(PROBE_HEADER) {
        "probe"
    } else if last.starts_with("You are grading") {
        "judge"
    } else if messages(request).iter().any(|m| text(m).contains("<EVENT")) {
        "summary"
    } else {
        "next-action"
    }
}

/// The completion body for a request.
pub fn respond(request: &Json) -> Json {
    let message = match kind(request) {
        "summary" => text_message(&summary(request)),
        "probe" => text_message(&probe_answer(request)),
        "judge" => text_message(judge(&last_content(request))),
        _ => next_action(request),
    };
    let prompt = request.to_string().len() as u64 / 4;
    let completion = message.to_string().len() as u64 / 4 + 1;
    json!({
        "id": "standin",
        "object": "chat.completion",
        "model": request.get("model").cloned().unwrap_or(Json::Null),
        "choices": [{"index": 0, "message": message, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                  "total_tokens": prompt + completion}
    })
}

fn messages(request: &Json) -> &[Json] {
    request
        .get("messages")
        .and_then(Json::as_array)
        .map_or(&[], Vec::as_slice)
}

fn text(message: &Json) -> &str {
    message.get("content").and_then(Json::as_str).unwrap_or("")
}

fn last_content(request: &Json) -> String {
    messages(request).last().map(text).unwrap_or("").to_string()
}

fn text_message(content: &str) -> Json {
    json!({"role": "assistant", "content": content})
}

fn first_non_blank(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

fn summary(request: &Json) -> String {
    let all: String = messages(request)
        .iter()
        .map(text)
        .collect::<Vec<_>>()
        .join("\n");
    let mut lines: Vec<String> = Vec::new();
    if let Some(prev) = all
        .split_once("<PREVIOUS SUMMARY>")
        .and_then(|(_, rest)| rest.split_once("</PREVIOUS SUMMARY>"))
        .map(|(p, _)| p)
    {
        lines.extend(
            prev.lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && *l != "No events summarized.")
                .map(str::to_string),
        );
    }
    for block in all.split("<EVENT").skip(1) {
        let body = block.split_once('>').map_or("", |(_, b)| b);
        let body = body.split("</EVENT>").next().unwrap_or("");
        let line = first_non_blank(body);
        if !line.is_empty() {
            lines.push(line.to_string());
        }
    }
    lines.join("\n")
}

fn probe_answer(request: &Json) -> String {
    let msgs = messages(request);
    let Some((question, earlier)) = msgs.split_last() else {
        return "UNKNOWN".into();
    };
    let q = text(question);
    let Some(cue) = q.rsplit_once(CUE_PREFIX).map(|(_, c)| c) else {
        return "UNKNOWN".into();
    };
    if cue.is_empty() {
        return "UNKNOWN".into();
    }
    let mut found = None;
    for m in earlier {
        let mut texts = vec![text(m).to_string()];
        if let Some(calls) = m.get("tool_calls").and_then(Json::as_array) {
            for c in calls {
                if let Some(a) = c.pointer("/function/arguments").and_then(Json::as_str) {
                    texts.push(a.to_string());
                }
            }
        }
        for t in texts {
            if let Some(at) = t.rfind(cue) {
                let line: String = t[at..]
                    .split(['\n', '\r'])
                    .next()
                    .unwrap_or("")
                    .chars()
                    .take(160)
                    .collect();
                found = Some(line);
            }
        }
    }
    found.unwrap_or_else(|| "UNKNOWN".into())
}

fn judge(prompt: &str) -> &'static str {
    let field = |name: &str| {
        prompt
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .unwrap_or("")
            .trim()
            .to_lowercase()
    };
    let expected = field("Expected answer:");
    let given = field("Given answer:");
    if !expected.is_empty() && given.contains(&expected) {
        "CORRECT"
    } else {
        "INCORRECT"
    }
}

fn next_action(request: &Json) -> Json {
    let last = messages(request)
        .iter()
        .rev()
        .find(|m| m.get("role").and_then(Json::as_str) == Some("assistant"));
    let Some(last) = last else {
        return text_message("I will start.");
    };
    match last.get("tool_calls").and_then(Json::as_array) {
        Some(calls) if !calls.is_empty() => {
            let calls: Vec<Json> = calls
                .iter()
                .enumerate()
                .map(|(i, c)| {
                    json!({"id": format!("standin_{i}"), "type": "function",
                           "function": c.get("function").cloned().unwrap_or(Json::Null)})
                })
                .collect();
            json!({"role": "assistant", "content": null, "tool_calls": calls})
        }
        _ => text_message(text(last)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(messages: Json) -> Json {
        json!({"model": "m", "messages": messages})
    }

    #[test]
    fn next_action_repeats_the_last_call() {
        let r = req(json!([
            {"role": "user", "content": "go"},
            {"role": "assistant", "content": null, "tool_calls": [
                {"id": "a", "type": "function", "function": {"name": "f", "arguments": "{\"x\":1}"}}]},
            {"role": "tool", "tool_call_id": "a", "content": "ok"}
        ]));
        let out = respond(&r);
        assert_eq!(
            out.pointer("/choices/0/message/tool_calls/0/function/name"),
            Some(&json!("f"))
        );
        assert_eq!(kind(&r), "next-action");
    }

    #[test]
    fn probes_find_the_cue_or_say_unknown() {
        let q = format!("{PROBE_HEADER}: where?\n{CUE_PREFIX}fn ma");
        let r = req(json!([
            {"role": "tool", "tool_call_id": "a", "content": "x\nfn main() {}\ny"},
            {"role": "user", "content": q}
        ]));
        assert_eq!(probe_answer(&r), "fn main() {}");
        let r = req(json!([{"role": "user", "content": q}]));
        assert_eq!(probe_answer(&r), "UNKNOWN");
    }

    #[test]
    fn summaries_carry_the_previous_one_and_each_event_first_line() {
        let r = req(json!([{"role": "user", "content":
            "<PREVIOUS SUMMARY>\nold fact\n</PREVIOUS SUMMARY>\n<EVENT role=tool>\n\nnew fact\nmore\n</EVENT>"}]));
        assert_eq!(kind(&r), "summary");
        assert_eq!(summary(&r), "old fact\nnew fact");
    }

    #[test]
    fn the_judge_accepts_answers_holding_the_expected_text() {
        assert_eq!(
            judge("You are grading\nExpected answer: Abc\nGiven answer: it is abc."),
            "CORRECT"
        );
        assert_eq!(
            judge("You are grading\nExpected answer: abc\nGiven answer: UNKNOWN"),
            "INCORRECT"
        );
    }
}
