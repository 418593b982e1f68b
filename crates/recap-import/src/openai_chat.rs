//! Generic OpenAI chat-completions transcripts → sessions.
//!
//! A file holds conversations: a JSON array of them, JSON Lines (one per line), or a
//! single one. A conversation is a bare message list, or an object with the list under
//! `messages` (else in the one field holding a list of `{role, …}` objects); its other
//! fields go to `meta`. The exact mapping is in the crate README.

use crate::Import;
use crate::convert::{Keys, json_type, value_from_json};
use crate::problem::Problem;
use crate::text::{content_text, json_error, read_file};
use crate::walk::has_extension;
use recap_core::{Session, ToolCall, Turn, Value};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::path::Path;

/// Where a conversation is in its file.
#[derive(Debug, Clone, Copy)]
struct Loc {
    line: usize,
    /// 1-based index in a JSON array; `None` for JSON Lines.
    record: Option<usize>,
}

impl Loc {
    fn problem(self, p: Problem) -> Problem {
        let p = p.at_line(self.line);
        match self.record {
            Some(r) => p.at_record(r),
            None => p,
        }
    }

    /// The per-file number used in default session ids.
    fn number(self) -> usize {
        self.record.unwrap_or(self.line)
    }
}

/// Imports every conversation of one file.
pub fn import_file(file: &Path) -> Import {
    let mut out = Import::default();
    let Some(text) = read_file(file, &mut out.problems) else {
        return out;
    };
    let stem = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    for (loc, value) in records(file, &text, &mut out.problems) {
        if let Some(s) = import_conversation(file, &stem, loc, &value, &mut out.problems) {
            out.sessions.push(s);
        }
    }
    crate::problem::sort_from(&mut out.problems, 0);
    out
}

fn line_of(text: &str, byte: usize) -> usize {
    text.as_bytes()[..byte.min(text.len())]
        .iter()
        .filter(|b| **b == b'\n')
        .count()
        + 1
}

/// The conversations of a file, in order; unreadable parts become problems.
fn records(file: &Path, text: &str, problems: &mut Vec<Problem>) -> Vec<(Loc, Json)> {
    let start = text.len() - text.trim_start().len();
    if has_extension(file, &["jsonl", "ndjson"]) {
        return json_lines(file, text, problems);
    }
    match text[start..].chars().next() {
        None => {
            problems.push(Problem::skipped(file, "empty file: no conversations"));
            Vec::new()
        }
        Some('[') => match array_elements(text, start) {
            Ok(items) => expand_bare_list(items, line_of(text, start)),
            Err(ArrayError {
                items,
                at,
                message,
                trailing,
            }) => {
                // `[...]\n[...]` is JSON Lines of bare message lists.
                if trailing {
                    return json_lines(file, text, problems);
                }
                let record = items.len() + 1;
                problems.push(
                    Problem::skipped(
                        file,
                        format!("{message}; the conversations before it are imported"),
                    )
                    .at_line(line_of(text, at))
                    .at_record(record),
                );
                expand_bare_list(items, line_of(text, start))
            }
        },
        Some(_) => {
            let mut stream = serde_json::Deserializer::from_str(&text[start..]).into_iter::<Json>();
            match stream.next() {
                Some(Ok(v)) if text[start + stream.byte_offset()..].trim().is_empty() => vec![(
                    Loc {
                        line: line_of(text, start),
                        record: Some(1),
                    },
                    v,
                )],
                // More than one value: JSON Lines under another extension.
                Some(Ok(_)) => json_lines(file, text, problems),
                Some(Err(e)) => {
                    problems.push(Problem::skipped(file, json_error(&e)).at_line(e.line()));
                    Vec::new()
                }
                None => Vec::new(),
            }
        }
    }
}

/// A top-level array whose items are all messages is one bare conversation.
fn expand_bare_list(items: Vec<(Loc, Json)>, line: usize) -> Vec<(Loc, Json)> {
    let all_messages = !items.is_empty()
        && items
            .iter()
            .all(|(_, v)| v.get("role").is_some_and(Json::is_string));
    if all_messages {
        let loc = Loc {
            line,
            record: Some(1),
        };
        vec![(
            loc,
            Json::Array(items.into_iter().map(|(_, v)| v).collect()),
        )]
    } else {
        items
    }
}

/// Why a JSON array could not be read to its end, and what was read before.
struct ArrayError {
    items: Vec<(Loc, Json)>,
    /// Byte offset of the problem.
    at: usize,
    message: String,
    /// The array was complete but more text follows it.
    trailing: bool,
}

/// Parses `[a, b, …]` element by element so that a cut-off file still yields the
/// elements before the cut.
fn array_elements(text: &str, open: usize) -> Result<Vec<(Loc, Json)>, ArrayError> {
    let mut items = Vec::new();
    let mut pos = open + 1;
    let skip_ws = |pos: &mut usize| {
        while text[*pos..].starts_with(|c: char| c.is_whitespace()) {
            *pos += text[*pos..].chars().next().map_or(1, char::len_utf8);
        }
    };
    let fail = |items, at, message: String, trailing| {
        Err(ArrayError {
            items,
            at,
            message,
            trailing,
        })
    };
    loop {
        skip_ws(&mut pos);
        if text[pos..].starts_with(']') && items.is_empty() {
            pos += 1;
            break;
        }
        let mut stream = serde_json::Deserializer::from_str(&text[pos..]).into_iter::<Json>();
        match stream.next() {
            Some(Ok(v)) => {
                items.push((
                    Loc {
                        line: line_of(text, pos),
                        record: Some(items.len() + 1),
                    },
                    v,
                ));
                pos += stream.byte_offset();
            }
            Some(Err(e)) => return fail(items, pos, json_error(&e), false),
            None => {
                return fail(
                    items,
                    pos,
                    "truncated JSON array (the file looks cut off)".into(),
                    false,
                );
            }
        }
        skip_ws(&mut pos);
        match text[pos..].chars().next() {
            Some(',') => pos += 1,
            Some(']') => {
                pos += 1;
                break;
            }
            Some(c) => {
                return fail(
                    items,
                    pos,
                    format!("malformed JSON array: expected `,` or `]`, got {c:?}"),
                    false,
                );
            }
            None => {
                return fail(
                    items,
                    pos,
                    "truncated JSON array (the file looks cut off): missing `]`".into(),
                    false,
                );
            }
        }
    }
    if !text[pos..].trim().is_empty() {
        return fail(
            items,
            pos,
            "malformed JSON: text after the closing `]`".into(),
            true,
        );
    }
    Ok(items)
}

fn json_lines(file: &Path, text: &str, problems: &mut Vec<Problem>) -> Vec<(Loc, Json)> {
    crate::text::json_lines(file, text, problems)
        .into_iter()
        .map(|l| {
            (
                Loc {
                    line: l.line,
                    record: None,
                },
                l.value,
            )
        })
        .collect()
}

/// The message list of a conversation, its other fields, and its own id.
fn unwrap_conversation(value: &Json) -> Result<(&[Json], Map<String, Json>), String> {
    let is_messages = |v: &Json| {
        v.as_array().is_some_and(|items| {
            !items.is_empty()
                && items
                    .iter()
                    .all(|m| m.get("role").is_some_and(Json::is_string))
        })
    };
    match value {
        Json::Array(items) => Ok((items, Map::new())),
        Json::Object(obj) => {
            let key = match obj.get("messages") {
                Some(Json::Array(_)) => "messages".to_string(),
                Some(other) => {
                    return Err(format!(
                        "`messages` must be a list of messages, got {}",
                        json_type(other)
                    ));
                }
                None => {
                    let found: Vec<&String> = obj
                        .iter()
                        .filter(|(_, v)| is_messages(v))
                        .map(|(k, _)| k)
                        .collect();
                    match found.as_slice() {
                        [one] => (*one).clone(),
                        [] => {
                            return Err(
                                "no message list: expected `messages`, or one field holding a list of {role, content} objects"
                                    .into(),
                            );
                        }
                        many => {
                            let names: Vec<&str> = many.iter().map(|s| s.as_str()).collect();
                            return Err(format!(
                                "several fields hold message lists ({}); expected exactly one, or `messages`",
                                names.join(", ")
                            ));
                        }
                    }
                }
            };
            let messages = obj[&key].as_array().map(Vec::as_slice).unwrap_or(&[]);
            let meta = obj
                .iter()
                .filter(|(k, _)| **k != key)
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            Ok((messages, meta))
        }
        other => Err(format!(
            "expected a conversation (a message list or an object holding one), got {}",
            json_type(other)
        )),
    }
}

/// A turn under construction.
struct Draft {
    content: String,
    /// (call id, name, arguments as recorded)
    calls: Vec<(Option<String>, String, Json)>,
    results: Vec<Option<Value>>,
    feedback: Vec<String>,
    usage: Option<Map<String, Json>>,
}

fn import_conversation(
    file: &Path,
    stem: &str,
    loc: Loc,
    value: &Json,
    problems: &mut Vec<Problem>,
) -> Option<Session> {
    let (messages, meta_fields) = match unwrap_conversation(value) {
        Ok(x) => x,
        Err(msg) => {
            problems.push(loc.problem(Problem::skipped(file, msg)));
            return None;
        }
    };
    let id = match meta_fields.get("id") {
        Some(Json::String(s)) if !s.is_empty() => s.clone(),
        Some(Json::Number(n)) => n.to_string(),
        _ => format!("{stem}:{}", loc.number()),
    };
    let lossy = |msg: String| loc.problem(Problem::lossy(file, msg)).in_session(&id);

    let mut system: Vec<String> = Vec::new();
    let mut mission: Vec<String> = Vec::new();
    let mut drafts: Vec<Draft> = Vec::new();
    // call id → (turn, call index), for matching tool results.
    let mut open_calls: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for (i, m) in messages.iter().enumerate() {
        let at = |msg: String| lossy(format!("messages[{i}]: {msg}"));
        let Some(obj) = m.as_object() else {
            problems.push(at(format!(
                "expected a message object, got {}; not imported",
                json_type(m)
            )));
            continue;
        };
        let Some(role) = obj.get("role").and_then(Json::as_str) else {
            problems.push(at("message without a string `role`; not imported".into()));
            continue;
        };
        let text = match content_text(obj.get("content")) {
            Ok((text, others)) => {
                if !others.is_empty() {
                    problems.push(at(format!(
                        "non-text content parts not imported: {}",
                        others.join(", ")
                    )));
                }
                text
            }
            Err(e) => {
                problems.push(at(format!("{e}; message not imported")));
                continue;
            }
        };
        match role {
            "system" | "developer" if drafts.is_empty() => system.push(text),
            "user" if drafts.is_empty() => mission.push(text),
            "assistant" => {
                if mission.is_empty() {
                    problems.push(at(
                        "assistant message before the first user message (the mission); not imported".into(),
                    ));
                    continue;
                }
                let mut calls = Vec::new();
                if let Some(list) = obj.get("tool_calls").filter(|v| !v.is_null()) {
                    match list.as_array() {
                        Some(list) => {
                            for (j, c) in list.iter().enumerate() {
                                let f = c.get("function");
                                match f.and_then(|f| f.get("name")).and_then(Json::as_str) {
                                    Some(name) => calls.push((
                                        c.get("id").and_then(Json::as_str).map(str::to_string),
                                        name.to_string(),
                                        f.and_then(|f| f.get("arguments")).cloned().unwrap_or(Json::Null),
                                    )),
                                    None => problems.push(at(format!(
                                        "tool_calls[{j}] has no string `function.name`; call not imported"
                                    ))),
                                }
                            }
                        }
                        None => problems.push(at(format!(
                            "`tool_calls` must be a list, got {}; calls not imported",
                            json_type(list)
                        ))),
                    }
                }
                // The legacy single `function_call` field.
                if let Some(fc) = obj.get("function_call").filter(|v| !v.is_null()) {
                    match fc.get("name").and_then(Json::as_str) {
                        Some(name) => calls.push((
                            None,
                            name.to_string(),
                            fc.get("arguments").cloned().unwrap_or(Json::Null),
                        )),
                        None => problems.push(at("`function_call` has no string `name`; not imported".into())),
                    }
                }
                let turn = drafts.len();
                for (j, (cid, _, _)) in calls.iter().enumerate() {
                    if let Some(cid) = cid {
                        open_calls.insert(cid.clone(), (turn, j));
                    }
                }
                drafts.push(Draft {
                    results: vec![None; calls.len()],
                    content: text,
                    calls,
                    feedback: Vec::new(),
                    usage: obj.get("usage").and_then(Json::as_object).cloned(),
                });
            }
            "tool" | "function" | "user" | "system" | "developer" => {
                let Some(last) = drafts.len().checked_sub(1) else {
                    problems.push(at(format!("{role} message before the first assistant message; not imported")));
                    continue;
                };
                if role == "tool" || role == "function" {
                    let target = if role == "tool" {
                        match obj.get("tool_call_id").and_then(Json::as_str) {
                            Some(cid) => {
                                let t = open_calls.remove(cid);
                                if t.is_none() {
                                    problems.push(at(format!(
                                        "tool result for unknown call id {cid:?}; kept as feedback only"
                                    )));
                                }
                                t
                            }
                            None => {
                                problems.push(at(
                                    "tool message without a string `tool_call_id`; kept as feedback only".into(),
                                ));
                                None
                            }
                        }
                    } else {
                        // Legacy function results match the last call of that name.
                        let name = obj.get("name").and_then(Json::as_str);
                        let found = drafts[last]
                            .calls
                            .iter()
                            .enumerate()
                            .rev()
                            .find(|(j, c)| Some(c.1.as_str()) == name && drafts[last].results[*j].is_none())
                            .map(|(j, _)| (last, j));
                        if found.is_none() {
                            problems.push(at("function result matches no call of the turn; kept as feedback only".into()));
                        }
                        found
                    };
                    if let Some((t, j)) = target {
                        drafts[t].results[j] = Some(Value::Str(text.clone()));
                    }
                }
                drafts[last].feedback.push(text);
            }
            other => problems.push(at(format!(
                "unknown role {other:?} (expected system, developer, user, assistant, tool or function); not imported"
            ))),
        }
    }
    let mission = mission.join("\n\n");
    if mission.trim().is_empty() {
        problems.push(loc.problem(Problem::skipped(
            file,
            "no user message with text: no mission",
        )));
        return None;
    }

    let mut turns = Vec::with_capacity(drafts.len());
    for (k, d) in drafts.into_iter().enumerate() {
        let number = k as u32 + 1;
        let rendered: Vec<String> = d
            .calls
            .iter()
            .map(|(_, name, args)| match args {
                Json::String(s) => format!("{name}({s})"),
                other => format!("{name}({other})"),
            })
            .collect();
        let program = if rendered.is_empty() {
            d.content.clone()
        } else {
            rendered.join("\n")
        };
        let raw_response = match (d.content.trim().is_empty(), rendered.is_empty()) {
            (_, true) => d.content.clone(),
            (true, false) => program.clone(),
            (false, false) => format!("{}\n\n{program}", d.content),
        };
        let mut tool_calls = Vec::with_capacity(d.calls.len());
        for ((cid, name, args), result) in d.calls.into_iter().zip(d.results) {
            let args = match &args {
                Json::String(s) if s.trim().is_empty() => Value::Nil,
                Json::String(s) => match serde_json::from_str::<Json>(s) {
                    Ok(j) => value_from_json(&j, Keys::Keyword),
                    Err(_) => {
                        problems.push(
                            lossy(format!(
                                "arguments of call {name:?} are not JSON; kept as a string"
                            ))
                            .in_turn(number),
                        );
                        Value::Str(s.clone())
                    }
                },
                other => value_from_json(other, Keys::Keyword),
            };
            if result.is_none() {
                problems.push(
                    lossy(format!(
                        "no tool result for call {name:?}{}",
                        cid.map(|c| format!(" (id {c:?})")).unwrap_or_default()
                    ))
                    .in_turn(number),
                );
            }
            tool_calls.push(ToolCall { name, args, result });
        }
        turns.push(Turn {
            number,
            program,
            raw_response,
            success: true,
            error: None,
            result: None,
            prints: Vec::new(),
            tool_calls,
            definitions: Vec::new(),
            feedback: (!d.feedback.is_empty()).then(|| d.feedback.join("\n\n")),
            usage: d.usage,
        });
    }

    let mut meta = meta_fields;
    if meta.contains_key("import") {
        problems.push(lossy(
            "the conversation's own `import` field is replaced by recap's import record".into(),
        ));
    }
    meta.insert(
        "import".into(),
        crate::import_meta("openai-chat", file, Some(loc.line), loc.record),
    );
    Some(Session {
        id,
        mission,
        system_prompt: system.join("\n\n"),
        max_turns: turns.len().max(1) as u32,
        budget_recorded: true,
        form: recap_core::Form::Ptc,
        tools: BTreeMap::new(),
        data: BTreeMap::new(),
        meta,
        turns,
        chat_turns: Vec::new(),
    })
}
