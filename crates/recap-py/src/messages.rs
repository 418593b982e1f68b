//! A prompt returned by a Python strategy, read into recap's messages: every problem is
//! an error naming the path of the bad field (`[3].tool_calls[0].function.name`).

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString, PyTuple};
use recap_core::{Message, MessageToolCall, Role, Text};
use std::collections::BTreeSet;

/// What is wrong with a returned prompt, and where.
#[derive(Debug)]
pub struct BadField {
    /// The path into the returned value (`""`: the value itself).
    pub path: String,
    pub message: String,
}

type Checked<T> = Result<T, BadField>;

fn bad(path: impl Into<String>, message: impl Into<String>) -> BadField {
    BadField {
        path: path.into(),
        message: message.into(),
    }
}

/// The Python type name of `v`, for messages.
fn type_name(v: &Bound<'_, PyAny>) -> String {
    v.get_type()
        .name()
        .map(|n| n.to_string())
        .unwrap_or_else(|_| "?".into())
}

const MESSAGE_KEYS: [&str; 5] = ["role", "content", "tool_calls", "tool_call_id", "name"];

/// Reads a prompt: a list (or tuple) of OpenAI-shape message dicts. Tool results must
/// answer a call of an earlier assistant message that no earlier result answered.
pub fn messages_from_py(value: &Bound<'_, PyAny>) -> Checked<Vec<Message>> {
    prompt_from_py(value, &[]).map(|(_, read)| read)
}

/// [`messages_from_py`] for a prompt that may begin as `last` (the previous prompt the
/// same replay returned): the leading messages that read as `last`'s do are taken from
/// it unread. Returns how many were, and the messages after them, read. A strategy
/// that keeps a history returns most of its previous prompt again at every call, so
/// reading only what changed keeps a call's work proportional to the change, as a
/// built-in's is (and the run's allocations with it).
pub fn prompt_from_py(
    value: &Bound<'_, PyAny>,
    last: &[Message],
) -> Checked<(usize, Vec<Message>)> {
    let items = items(value)?;
    let same = items
        .iter()
        .zip(last)
        .take_while(|(item, m)| reads_as(item, m))
        .count();
    let mut open_calls: BTreeSet<Text> = BTreeSet::new();
    for m in &last[..same] {
        note_calls(&mut open_calls, m);
    }
    let mut read = Vec::with_capacity(items.len() - same);
    for (i, item) in items.iter().enumerate().skip(same) {
        let message = message_from_py(item, i)?;
        if message.role == Role::Tool {
            let id = message.tool_call_id.as_deref().unwrap_or_default();
            if !open_calls.remove(id) {
                return Err(bad(
                    format!("[{i}].tool_call_id"),
                    format!("{id:?} answers no tool call of an earlier assistant message"),
                ));
            }
        }
        note_calls(&mut open_calls, &message);
        read.push(message);
    }
    Ok((same, read))
}

/// [`messages_from_py`] for messages counted one by one (no pairing of results).
pub fn loose_messages_from_py(value: &Bound<'_, PyAny>) -> Checked<Vec<Message>> {
    items(value)?
        .iter()
        .enumerate()
        .map(|(i, item)| message_from_py(item, i))
        .collect()
}

/// The calls a message leaves open for later results: a result closes one, an
/// assistant message opens its own.
fn note_calls(open_calls: &mut BTreeSet<Text>, m: &Message) {
    if m.role == Role::Tool {
        open_calls.remove(m.tool_call_id.as_deref().unwrap_or_default());
    }
    open_calls.extend(m.tool_calls.iter().map(|c| c.id.clone()));
}

fn items<'py>(value: &Bound<'py, PyAny>) -> Checked<Vec<Bound<'py, PyAny>>> {
    if let Ok(list) = value.cast::<PyList>() {
        Ok(list.iter().collect())
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        Ok(tuple.iter().collect())
    } else {
        Err(bad(
            "",
            format!("expected a list of messages, got {}", type_name(value)),
        ))
    }
}

/// Whether `item` would be read as exactly `m`, without an error: every field the same
/// in value and in kind. Anything unusual answers `false`, and the item is read (and
/// its problem named) as any other.
fn reads_as(item: &Bound<'_, PyAny>, m: &Message) -> bool {
    let Ok(dict) = item.cast::<PyDict>() else {
        return false;
    };
    let mut seen = [false; MESSAGE_KEYS.len()];
    for (key, value) in dict.iter() {
        let Ok(key) = key.cast_into::<PyString>() else {
            return false;
        };
        let Ok(key) = key.to_str() else {
            return false;
        };
        let Some(at) = MESSAGE_KEYS.iter().position(|known| *known == key) else {
            return false;
        };
        seen[at] = true;
        let same = match key {
            "role" => str_is(&value, m.role.as_str()),
            "content" if value.is_none() => m.content.is_empty(),
            "content" => str_is(&value, &m.content),
            "tool_calls" if value.is_none() => m.tool_calls.is_empty(),
            "tool_calls" => m.role == Role::Assistant && calls_are(&value, &m.tool_calls),
            "tool_call_id" => match &m.tool_call_id {
                Some(id) => str_is(&value, id),
                None => value.is_none(),
            },
            "name" => match &m.name {
                Some(name) => str_is(&value, name),
                None => value.is_none(),
            },
            _ => false,
        };
        if !same {
            return false;
        }
    }
    let [role, content, calls, call_id, name] = seen;
    role && (content || m.content.is_empty())
        && (calls || m.tool_calls.is_empty())
        && (call_id || m.tool_call_id.is_none())
        && (name || m.name.is_none())
}

/// The value of `key` in `d`, if it has one.
fn item<'py>(d: &Bound<'py, PyDict>, key: &str) -> Option<Bound<'py, PyAny>> {
    d.get_item(key).ok().flatten()
}

/// Exactly a `str` (a subclass may print as something else) with `text`'s characters.
fn str_is(v: &Bound<'_, PyAny>, text: &str) -> bool {
    v.cast_exact::<PyString>()
        .is_ok_and(|s| s.to_str().is_ok_and(|s| s == text))
}

fn calls_are(v: &Bound<'_, PyAny>, calls: &[MessageToolCall]) -> bool {
    let Ok(list) = v.cast::<PyList>() else {
        return false;
    };
    list.len() == calls.len()
        && list.iter().zip(calls).all(|(call, c)| {
            let Ok(call) = call.cast_into::<PyDict>() else {
                return false;
            };
            let function = item(&call, "function");
            let function = function.as_ref().and_then(|f| f.cast::<PyDict>().ok());
            item(&call, "id").is_some_and(|id| str_is(&id, &c.id))
                && item(&call, "type").is_none_or(|t| str_is(&t, "function"))
                && function.is_some_and(|f| {
                    item(f, "name").is_some_and(|n| str_is(&n, &c.name))
                        && item(f, "arguments").is_some_and(|a| str_is(&a, &c.arguments))
                })
        })
}

/// Reads `value`, item `i` of a prompt. Paths are spelled out only for an error: a prompt's
/// messages are read at every call.
fn message_from_py(value: &Bound<'_, PyAny>, i: usize) -> Checked<Message> {
    let at = |field: &str| format!("[{i}]{field}");
    let dict = value.cast::<PyDict>().map_err(|_| {
        bad(
            at(""),
            format!("expected a message (a dict), got {}", type_name(value)),
        )
    })?;
    for (key, _) in dict.iter() {
        let known = key
            .cast::<PyString>()
            .ok()
            .and_then(|k| k.to_str().ok())
            .is_some_and(|k| MESSAGE_KEYS.contains(&k));
        if !known {
            return Err(bad(
                at(&format!(".{key}")),
                format!("unknown key; a message has {}", MESSAGE_KEYS.join(", ")),
            ));
        }
    }
    let role = match item(dict, "role") {
        None => return Err(bad(at(".role"), "missing (every message needs a role)")),
        Some(r) => string(&r, || at(".role"))?,
    };
    let role = Role::ALL
        .into_iter()
        .find(|r| r.as_str() == role)
        .ok_or_else(|| {
            bad(
                at(".role"),
                format!("unknown role {role:?}; expected system, user, assistant or tool"),
            )
        })?;
    let content = match item(dict, "content") {
        None => String::new(),
        Some(c) => content(&c, || at(".content"))?,
    };
    let mut message = Message::new(role, content);
    if let Some(calls) = item(dict, "tool_calls")
        && !calls.is_none()
    {
        if role != Role::Assistant {
            return Err(bad(
                at(".tool_calls"),
                "only an assistant message makes tool calls",
            ));
        }
        message.tool_calls = tool_calls(&calls, || at(".tool_calls"))?.into();
    }
    match (item(dict, "tool_call_id"), role) {
        (Some(id), Role::Tool) => {
            message.tool_call_id = Some(Text::from(string(&id, || at(".tool_call_id"))?));
        }
        (None, Role::Tool) => {
            return Err(bad(
                at(".tool_call_id"),
                "missing (a tool message answers a call by its id)",
            ));
        }
        (Some(id), _) if !id.is_none() => {
            return Err(bad(
                at(".tool_call_id"),
                "only a tool message answers a tool call",
            ));
        }
        _ => {}
    }
    if let Some(name) = item(dict, "name")
        && !name.is_none()
    {
        message.name = Some(Text::from(string(&name, || at(".name"))?));
    }
    Ok(message)
}

fn string(v: &Bound<'_, PyAny>, at: impl Fn() -> String) -> Checked<String> {
    v.cast::<PyString>()
        .map(|s| s.to_string())
        .map_err(|_| bad(at(), format!("expected a string, got {}", type_name(v))))
}

/// A message's content: a string, `None`, or a list of `{"type": "text", "text": …}`
/// parts (joined, as providers read them).
fn content(v: &Bound<'_, PyAny>, at: impl Fn() -> String) -> Checked<String> {
    if v.is_none() {
        return Ok(String::new());
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_string());
    }
    let Ok(parts) = v.cast::<PyList>() else {
        return Err(bad(
            at(),
            format!(
                "expected a string, None or a list of text parts, got {}",
                type_name(v)
            ),
        ));
    };
    let mut text = String::new();
    for (j, part) in parts.iter().enumerate() {
        let part_at = |field: &str| format!("{}[{j}]{field}", at());
        let dict = part.cast::<PyDict>().map_err(|_| {
            bad(
                part_at(""),
                format!("expected a text part (a dict), got {}", type_name(&part)),
            )
        })?;
        let kind = match item(dict, "type") {
            Some(k) => string(&k, || part_at(".type"))?,
            None => return Err(bad(part_at(".type"), "missing")),
        };
        if kind != "text" {
            return Err(bad(
                part_at(".type"),
                format!("{kind:?}: only text parts can be replayed"),
            ));
        }
        match item(dict, "text") {
            Some(t) => text.push_str(&string(&t, || part_at(".text"))?),
            None => return Err(bad(part_at(".text"), "missing")),
        }
    }
    Ok(text)
}

fn tool_calls(v: &Bound<'_, PyAny>, at: impl Fn() -> String) -> Checked<Vec<MessageToolCall>> {
    let list = v
        .cast::<PyList>()
        .map_err(|_| bad(at(), format!("expected a list, got {}", type_name(v))))?;
    let mut out = Vec::with_capacity(list.len());
    for (j, call) in list.iter().enumerate() {
        let call_at = |field: &str| format!("{}[{j}]{field}", at());
        let dict = call.cast::<PyDict>().map_err(|_| {
            bad(
                call_at(""),
                format!("expected a tool call (a dict), got {}", type_name(&call)),
            )
        })?;
        let field =
            |d: &Bound<'_, PyDict>, key: &str, path: &dyn Fn() -> String| -> Checked<String> {
                match item(d, key) {
                    Some(x) => string(&x, path),
                    None => Err(bad(path(), "missing")),
                }
            };
        let id = field(dict, "id", &|| call_at(".id"))?;
        if let Some(kind) = item(dict, "type") {
            let kind = string(&kind, || call_at(".type"))?;
            if kind != "function" {
                return Err(bad(
                    call_at(".type"),
                    format!("{kind:?}: expected \"function\""),
                ));
            }
        }
        let function = match item(dict, "function") {
            Some(f) => f,
            None => return Err(bad(call_at(".function"), "missing")),
        };
        let function = function.cast::<PyDict>().map_err(|_| {
            bad(
                call_at(".function"),
                format!("expected a dict, got {}", type_name(&function)),
            )
        })?;
        let name = field(function, "name", &|| call_at(".function.name"))?;
        let arguments = field(function, "arguments", &|| call_at(".function.arguments"))?;
        out.push(MessageToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        });
    }
    Ok(out)
}
