//! Reading line-oriented inputs: every unreadable line becomes a problem naming the file
//! and line, and reading goes on with the next line.

use crate::problem::Problem;
use serde_json::Value as Json;
use std::path::Path;

/// One parsed line of a JSON Lines file.
pub(crate) struct JsonLine {
    pub line: usize,
    pub value: Json,
}

/// Reads a whole file as text (gunzipping `.gz` input); `None` (and a problem) when it
/// cannot be read.
pub(crate) fn read_file(path: &Path, problems: &mut Vec<Problem>) -> Option<String> {
    crate::source::read_text(path, problems)
}

/// Describes a JSON syntax error; a record that stops early says so.
pub(crate) fn json_error(e: &serde_json::Error) -> String {
    if e.is_eof() {
        format!(
            "truncated JSON record (it stops before it is complete; was the file cut off?): {e}"
        )
    } else {
        format!("malformed JSON: {e}")
    }
}

/// Parses every non-blank line of a JSON Lines text.
pub(crate) fn json_lines(path: &Path, text: &str, problems: &mut Vec<Problem>) -> Vec<JsonLine> {
    let mut out = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let raw = raw.strip_suffix('\r').unwrap_or(raw);
        if raw.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Json>(raw) {
            Ok(value) => out.push(JsonLine { line: i + 1, value }),
            Err(e) => problems.push(Problem::skipped(path, json_error(&e)).at_line(i + 1)),
        }
    }
    out
}

/// The text of a message `content`: a string, or the `text` of its text parts joined by
/// newlines (OpenAI and smolagents both use `[{type: "text", text}]`). Parts that are not
/// text are returned as their types so the caller can report them.
pub(crate) fn content_text(content: Option<&Json>) -> Result<(String, Vec<String>), String> {
    match content {
        None | Some(Json::Null) => Ok((String::new(), Vec::new())),
        Some(Json::String(s)) => Ok((s.clone(), Vec::new())),
        Some(Json::Array(parts)) => {
            let mut texts = Vec::new();
            let mut other = Vec::new();
            for part in parts {
                match part {
                    Json::String(s) => texts.push(s.as_str()),
                    Json::Object(o) => match o.get("text").and_then(Json::as_str) {
                        Some(t) => texts.push(t),
                        None => other.push(
                            o.get("type")
                                .and_then(Json::as_str)
                                .unwrap_or("untyped")
                                .to_string(),
                        ),
                    },
                    j => other.push(crate::convert::json_type(j).to_string()),
                }
            }
            Ok((texts.join("\n"), other))
        }
        Some(j) => Err(format!(
            "expected `content` to be a string or a list of parts, got {}",
            crate::convert::json_type(j)
        )),
    }
}
