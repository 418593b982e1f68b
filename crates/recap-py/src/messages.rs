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
    read_messages(value, true)
}

/// [`messages_from_py`] for messages counted one by one (no pairing of results).
pub fn loose_messages_from_py(value: &Bound<'_, PyAny>) -> Checked<Vec<Message>> {
    read_messages(value, false)
}

fn read_messages(value: &Bound<'_, PyAny>, paired: bool) -> Checked<Vec<Message>> {
    let items: Vec<Bound<'_, PyAny>> = if let Ok(list) = value.cast::<PyList>() {
        list.iter().collect()
    } else if let Ok(tuple) = value.cast::<PyTuple>() {
        tuple.iter().collect()
    } else {
        return Err(bad(
            "",
            format!("expected a list of messages, got {}", type_name(value)),
        ));
    };
    let mut open_calls: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let at = format!("[{i}]");
        let message = message_from_py(item, &at)?;
        if paired && message.role == Role::Tool {
            let id = message.tool_call_id.as_deref().unwrap_or_default();
            if !open_calls.remove(id) {
                return Err(bad(
                    format!("{at}.tool_call_id"),
                    format!("{id:?} answers no tool call of an earlier assistant message"),
                ));
            }
        }
        open_calls.extend(message.tool_calls.iter().map(|c| c.id.to_string()));
        out.push(message);
    }
    Ok(out)
}

fn message_from_py(item: &Bound<'_, PyAny>, at: &str) -> Checked<Message> {
    let dict = item.cast::<PyDict>().map_err(|_| {
        bad(
            at,
            format!("expected a message (a dict), got {}", type_name(item)),
        )
    })?;
    for (key, _) in dict.iter() {
        let key = key.extract::<String>().unwrap_or_else(|_| format!("{key}"));
        if !MESSAGE_KEYS.contains(&key.as_str()) {
            return Err(bad(
                format!("{at}.{key}"),
                format!("unknown key; a message has {}", MESSAGE_KEYS.join(", ")),
            ));
        }
    }
    let role_at = format!("{at}.role");
    let role = match dict.get_item("role").ok().flatten() {
        None => return Err(bad(role_at, "missing (every message needs a role)")),
        Some(r) => string(&r, &role_at)?,
    };
    let role = Role::ALL
        .into_iter()
        .find(|r| r.as_str() == role)
        .ok_or_else(|| {
            bad(
                &role_at,
                format!("unknown role {role:?}; expected system, user, assistant or tool"),
            )
        })?;
    let content = match dict.get_item("content").ok().flatten() {
        None => String::new(),
        Some(c) => content(&c, &format!("{at}.content"))?,
    };
    let mut message = Message::new(role, content);
    if let Some(calls) = dict.get_item("tool_calls").ok().flatten() {
        let calls_at = format!("{at}.tool_calls");
        if role != Role::Assistant && !calls.is_none() {
            return Err(bad(calls_at, "only an assistant message makes tool calls"));
        }
        if !calls.is_none() {
            message.tool_calls = tool_calls(&calls, &calls_at)?.into();
        }
    }
    let id_at = format!("{at}.tool_call_id");
    match (dict.get_item("tool_call_id").ok().flatten(), role) {
        (Some(id), Role::Tool) => message.tool_call_id = Some(Text::from(string(&id, &id_at)?)),
        (None, Role::Tool) => {
            return Err(bad(
                id_at,
                "missing (a tool message answers a call by its id)",
            ));
        }
        (Some(id), _) if !id.is_none() => {
            return Err(bad(id_at, "only a tool message answers a tool call"));
        }
        _ => {}
    }
    if let Some(name) = dict.get_item("name").ok().flatten()
        && !name.is_none()
    {
        message.name = Some(Text::from(string(&name, &format!("{at}.name"))?));
    }
    Ok(message)
}

fn string(v: &Bound<'_, PyAny>, at: &str) -> Checked<String> {
    v.cast::<PyString>()
        .map(|s| s.to_string())
        .map_err(|_| bad(at, format!("expected a string, got {}", type_name(v))))
}

/// A message's content: a string, `None`, or a list of `{"type": "text", "text": …}`
/// parts (joined, as providers read them).
fn content(v: &Bound<'_, PyAny>, at: &str) -> Checked<String> {
    if v.is_none() {
        return Ok(String::new());
    }
    if let Ok(s) = v.cast::<PyString>() {
        return Ok(s.to_string());
    }
    let Ok(parts) = v.cast::<PyList>() else {
        return Err(bad(
            at,
            format!(
                "expected a string, None or a list of text parts, got {}",
                type_name(v)
            ),
        ));
    };
    let mut text = String::new();
    for (j, part) in parts.iter().enumerate() {
        let part_at = format!("{at}[{j}]");
        let dict = part.cast::<PyDict>().map_err(|_| {
            bad(
                &part_at,
                format!("expected a text part (a dict), got {}", type_name(&part)),
            )
        })?;
        let kind = dict.get_item("type").ok().flatten();
        let kind = match kind {
            Some(k) => string(&k, &format!("{part_at}.type"))?,
            None => return Err(bad(format!("{part_at}.type"), "missing")),
        };
        if kind != "text" {
            return Err(bad(
                format!("{part_at}.type"),
                format!("{kind:?}: only text parts can be replayed"),
            ));
        }
        match dict.get_item("text").ok().flatten() {
            Some(t) => text.push_str(&string(&t, &format!("{part_at}.text"))?),
            None => return Err(bad(format!("{part_at}.text"), "missing")),
        }
    }
    Ok(text)
}

fn tool_calls(v: &Bound<'_, PyAny>, at: &str) -> Checked<Vec<MessageToolCall>> {
    let list = v
        .cast::<PyList>()
        .map_err(|_| bad(at, format!("expected a list, got {}", type_name(v))))?;
    let mut out = Vec::with_capacity(list.len());
    for (j, call) in list.iter().enumerate() {
        let call_at = format!("{at}[{j}]");
        let dict = call.cast::<PyDict>().map_err(|_| {
            bad(
                &call_at,
                format!("expected a tool call (a dict), got {}", type_name(&call)),
            )
        })?;
        let field = |d: &Bound<'_, PyDict>, key: &str, path: &str| -> Checked<String> {
            match d.get_item(key).ok().flatten() {
                Some(x) => string(&x, path),
                None => Err(bad(path, "missing")),
            }
        };
        let id = field(dict, "id", &format!("{call_at}.id"))?;
        if let Some(kind) = dict.get_item("type").ok().flatten() {
            let kind = string(&kind, &format!("{call_at}.type"))?;
            if kind != "function" {
                return Err(bad(
                    format!("{call_at}.type"),
                    format!("{kind:?}: expected \"function\""),
                ));
            }
        }
        let f_at = format!("{call_at}.function");
        let function = match dict.get_item("function").ok().flatten() {
            Some(f) => f,
            None => return Err(bad(f_at, "missing")),
        };
        let function = function.cast::<PyDict>().map_err(|_| {
            bad(
                &f_at,
                format!("expected a dict, got {}", type_name(&function)),
            )
        })?;
        let name = field(function, "name", &format!("{f_at}.name"))?;
        let arguments = field(function, "arguments", &format!("{f_at}.arguments"))?;
        out.push(MessageToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        });
    }
    Ok(out)
}
