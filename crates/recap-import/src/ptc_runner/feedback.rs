//! Reading a turn's outcome from the runner's feedback text: the feedback itself (what
//! the next request appended), the status it implies, the error it reports, the printed
//! lines; and the count of definitions a run holds.

use super::assistant_text;
use super::records::CallDraft;
use recap_core::{Definition, TurnError};
use serde_json::{Map, Value as Json};
use std::collections::BTreeSet;

/// The feedback for the turn of `request`: the messages `next` appends after the
/// assistant message, joined by a blank line. Reports a history that does not line up.
pub(super) fn feedback_in(
    request: &Map<String, Json>,
    next: &Map<String, Json>,
    raw_response: &str,
    report: &mut dyn FnMut(String),
) -> Option<String> {
    let empty = Vec::new();
    let before = request
        .get("messages")
        .and_then(Json::as_array)
        .unwrap_or(&empty);
    let after = match next.get("messages").and_then(Json::as_array) {
        Some(m) => m,
        None => {
            report("the next llm-request has no `messages`; feedback unknown".into());
            return None;
        }
    };
    if after.len() < before.len() + 2 || after[..before.len()] != before[..] {
        report(
            "the next request's history does not extend this request's history by an assistant message and feedback".into(),
        );
    }
    let assistant = after.get(before.len())?;
    if assistant.get("role").and_then(Json::as_str) != Some("assistant") {
        report(
            "the next request does not show this turn's assistant message; feedback unknown".into(),
        );
        return None;
    }
    let shown = assistant_text(
        assistant.get("content").and_then(Json::as_str),
        assistant
            .get("tool_calls")
            .and_then(Json::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[]),
    );
    if shown != raw_response {
        report(
            "the next request shows a different assistant message than this turn's reply".into(),
        );
    }
    let parts: Vec<&str> = after[before.len() + 1..]
        .iter()
        .filter_map(|m| m.get("content").and_then(Json::as_str))
        .collect();
    if parts.is_empty() {
        report("the next request adds no feedback message after the assistant message".into());
        return None;
    }
    Some(parts.join("\n\n"))
}

pub(super) const SUCCESS_LEAD: &str = "The correlated PTC-Lisp program succeeded";
pub(super) const EVAL_ERROR_LEAD: &str = "The PTC-Lisp evaluation did not return successfully";
pub(super) const CAPABILITY_LEAD: &str = "The capability call failed";
pub(super) const CONTRACT_LEAD: &str = "The returned value did not satisfy";

/// The evaluation status a feedback text implies (used when no trace is available).
pub(super) fn infer_status(feedback: Option<&str>, program: &str, is_last: bool) -> Option<String> {
    let status = match feedback {
        Some(f) if f.starts_with(SUCCESS_LEAD) => "continued",
        Some(f) if f.starts_with(EVAL_ERROR_LEAD) => "evaluation_error",
        Some(f) if f.starts_with(CAPABILITY_LEAD) => "failed",
        Some(f) if f.starts_with(CONTRACT_LEAD) => "returned",
        None if is_last && program.contains("(return") => "returned",
        _ => return None,
    };
    Some(status.to_string())
}

/// `(message, reason)` from an error feedback: the interpreter's own `message=` when
/// present, else the feedback without its closing instruction; the reason is the
/// `error_code=:x` or `reason=:x` keyword.
pub(super) fn error_from_feedback(feedback: &str) -> (String, Option<String>) {
    let body = match feedback.find(" Send one corrected") {
        Some(i) => &feedback[..i],
        None => feedback,
    }
    .trim();
    let keyword = |key: &str| {
        body.find(key).map(|i| {
            body[i + key.len()..]
                .chars()
                .take_while(|c| !matches!(c, ';' | ' ' | '\n') && *c != '.')
                .collect::<String>()
        })
    };
    let reason = keyword("error_code=:").or_else(|| keyword("reason=:"));
    let message = match body.find("; message=") {
        // The runner writes `message=<text>. Send one…`: drop exactly that period.
        Some(i) => {
            let m = &body[i + "; message=".len()..];
            m.strip_suffix('.').unwrap_or(m).to_string()
        }
        None => body.to_string(),
    };
    (message, reason)
}

/// The error of a failed turn with no feedback: its failed capability call, if any.
pub(super) fn failed_call_error(calls: &[&CallDraft]) -> Option<TurnError> {
    let (name, result) = calls.iter().find_map(|c| {
        let r = c.result?;
        (r.get("status").and_then(Json::as_str) == Some("error")).then_some((c.name, r))
    })?;
    let field = |k: &str| {
        result.get(k).map(|v| {
            v.as_str()
                .map(str::to_string)
                .unwrap_or_else(|| v.to_string())
        })
    };
    let details: Vec<String> = ["kind", "reason", "details"]
        .iter()
        .filter_map(|k| field(k).map(|v| format!("{k}={v}")))
        .collect();
    Some(TurnError {
        message: format!("capability {name} failed: {}", details.join("; ")),
        reason: field("reason"),
    })
}

pub(super) const OUTPUT_OPEN: &str = "<untrusted_ptc_output source=\"evaluation\">";
pub(super) const OUTPUT_CLOSE: &str = "</untrusted_ptc_output>";
pub(super) const OUTPUT_CLOSE_ESCAPED: &str = "</untrusted_ptc_output (escaped)>";
pub(super) const TRUNCATION_MARKER: &str = "\n... (observation truncated)";

/// The println lines of a success feedback (the runner joins all printed text with
/// newlines, so one entry per line), and whether the observation was cut.
pub(super) fn success_prints(feedback: &str) -> (Vec<String>, bool) {
    let Some(start) = feedback.find(OUTPUT_OPEN) else {
        return (Vec::new(), false);
    };
    let inner = &feedback[start + OUTPUT_OPEN.len()..];
    let inner = match inner.rfind(OUTPUT_CLOSE) {
        Some(end) => &inner[..end],
        None => inner,
    };
    let (inner, truncated) = match inner.strip_suffix(TRUNCATION_MARKER) {
        Some(s) => (s, true),
        None => (inner, false),
    };
    let prints = match inner.find("\nprintln:\n") {
        Some(i) => inner[i + "\nprintln:\n".len()..]
            .replace(OUTPUT_CLOSE_ESCAPED, OUTPUT_CLOSE)
            .split('\n')
            .map(str::to_string)
            .collect(),
        None => Vec::new(),
    };
    (prints, truncated)
}

/// Provider token counts under recap's names (`input` → `input_tokens`, …); other
/// fields are kept as recorded.
pub(super) fn usage(tokens: &Map<String, Json>) -> Map<String, Json> {
    tokens
        .iter()
        .map(|(k, v)| {
            let name = match k.as_str() {
                "input" => "input_tokens",
                "output" => "output_tokens",
                "cache_read" => "cache_read_tokens",
                "cache_creation" => "cache_creation_tokens",
                other => other,
            };
            (name.to_string(), v.clone())
        })
        .collect()
}

/// The names a run holds, to compare with the trace's `defined_count`.
#[derive(Default)]
pub(super) struct DefCount {
    names: BTreeSet<String>,
    /// Definitions the trace reports beyond what the parsed programs explain.
    offset: i64,
}

impl DefCount {
    pub fn apply(&mut self, defs: &[Definition]) {
        for d in defs {
            self.names.insert(d.name.clone());
        }
    }

    pub fn len(&self) -> usize {
        (self.names.len() as i64 + self.offset).max(0) as usize
    }

    /// After a reported mismatch, compare later turns relative to the trace's count so
    /// one unexplained definition is reported once, not on every later turn.
    pub fn resync(&mut self, expected: u64) {
        self.offset = expected as i64 - self.names.len() as i64;
    }
}
