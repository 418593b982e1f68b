//! Responses: `{"messages": [...]}` (with `messages_kept` in a session) or
//! `{"error": {...}}`. Since ABI 1.1 a message may carry `tool_calls` (ASSISTANT),
//! `tool_call_id` and `name` (TOOL), and `content` may be `null` (an ASSISTANT message
//! that only calls tools, as provider APIs write it), read as empty text. Since ABI 1.2
//! an item of a session response's `messages` may instead be `{"previous": [from, to]}`:
//! the messages `from..to` of the session's previous response, unchanged (a strategy
//! that drops or rewrites an early message, such as a sliding window, then sends only
//! what is new; plugins may use it when the host's `session_open` request says minor
//! 2 or later).

use super::put_json;
use crate::json;
use recap_core::{Message, MessageToolCall, Role, Text};
use serde::{Deserialize, Deserializer, Serialize};

/// `{"error": {...}}`: what a failed call returns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ErrorBody {
    pub kind: String,
    pub message: String,
    /// For `invalid_options`: the option at fault and its value, when known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub key: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
}

impl ErrorBody {
    pub fn new(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            kind: kind.into(),
            message: message.into(),
            key: None,
            value: None,
        }
    }
}

#[derive(Serialize)]
struct ErrorEnvelope<'a> {
    error: &'a ErrorBody,
}

pub fn error_response(error: &ErrorBody) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + error.message.len());
    put_json(&mut out, &ErrorEnvelope { error });
    out
}

/// `{"messages":[...]}`, or in a session `{"messages":[new...],"messages_kept":n}`.
pub fn messages_response(messages: &[Message], messages_kept: Option<usize>) -> Vec<u8> {
    response(messages.iter().map(Item::New), messages_kept)
}

/// An item of a session response's `messages` (see the module's documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Item<'a> {
    New(&'a Message),
    /// The messages `from..to` of the session's previous response (ABI 1.2).
    Previous {
        from: usize,
        to: usize,
    },
}

/// A session response whose `messages` mix new messages and references to the
/// previous response's (ABI 1.2).
pub fn items_response(items: &[Item<'_>], messages_kept: Option<usize>) -> Vec<u8> {
    response(items.iter().copied(), messages_kept)
}

/// Both responses, written from their items without collecting them first.
fn response<'a>(
    items: impl Iterator<Item = Item<'a>> + Clone,
    messages_kept: Option<usize>,
) -> Vec<u8> {
    let size: usize = items
        .clone()
        .map(|i| match i {
            Item::New(m) => m.content.len() + 36,
            Item::Previous { .. } => 32,
        })
        .sum();
    let mut out = Vec::with_capacity(size + 48);
    out.extend_from_slice(b"{\"messages\":[");
    for (i, item) in items.enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match item {
            Item::New(m) => put_message(&mut out, m),
            Item::Previous { from, to } => {
                out.extend_from_slice(b"{\"previous\":[");
                json::put_u64(&mut out, from as u64);
                out.push(b',');
                json::put_u64(&mut out, to as u64);
                out.extend_from_slice(b"]}");
            }
        }
    }
    out.push(b']');
    if let Some(n) = messages_kept {
        out.extend_from_slice(b",\"messages_kept\":");
        json::put_u64(&mut out, n as u64);
    }
    out.push(b'}');
    out
}

/// One message; the ABI 1.1 fields only when set, so that a text message is written
/// exactly as ABI 1.0 wrote it.
fn put_message(out: &mut Vec<u8>, m: &Message) {
    out.extend_from_slice(b"{\"role\":\"");
    out.extend_from_slice(m.role.as_str().as_bytes());
    out.extend_from_slice(b"\",\"content\":");
    json::put_str(out, &m.content);
    if !m.tool_calls.is_empty() {
        out.extend_from_slice(b",\"tool_calls\":[");
        for (i, c) in m.tool_calls.iter().enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(b"{\"id\":");
            json::put_str(out, &c.id);
            out.extend_from_slice(b",\"name\":");
            json::put_str(out, &c.name);
            out.extend_from_slice(b",\"arguments\":");
            json::put_str(out, &c.arguments);
            out.push(b'}');
        }
        out.push(b']');
    }
    if let Some(id) = &m.tool_call_id {
        out.extend_from_slice(b",\"tool_call_id\":");
        json::put_str(out, id);
    }
    if let Some(name) = &m.name {
        out.extend_from_slice(b",\"name\":");
        json::put_str(out, name);
    }
    out.push(b'}');
}

/// A response as the host reads it: exactly one of `messages` and `error`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(try_from = "WireResponse")]
pub struct Response {
    /// The new messages (references to the previous response's are in `reused`).
    pub messages: Option<Vec<Message>>,
    /// Where `messages` held references to the previous response's messages (ABI 1.2),
    /// in order.
    pub reused: Vec<Reuse>,
    /// Session responses: how many leading messages of the previous response of this
    /// session come before `messages`.
    pub messages_kept: Option<usize>,
    pub error: Option<ErrorBody>,
}

/// `{"previous": [from, to]}` in a response's `messages`, after `at` new messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reuse {
    /// How many new messages come before it in `messages`.
    pub at: usize,
    /// The previous response's messages `from..to`.
    pub from: usize,
    pub to: usize,
}

impl Response {
    /// The index in the response's `messages` array of new message `i`.
    pub fn item_index(&self, i: usize) -> usize {
        i + self.reused.iter().take_while(|r| r.at <= i).count()
    }
}

#[derive(Deserialize)]
struct WireResponse {
    #[serde(default)]
    messages: Option<Vec<WireItem>>,
    #[serde(default)]
    messages_kept: Option<usize>,
    #[serde(default)]
    error: Option<ErrorBody>,
}

/// A message as a plugin may write it (lenient: `content` may be null, the list of tool
/// calls null or absent), or a reference to earlier messages.
#[derive(Deserialize)]
struct WireItem {
    #[serde(default)]
    role: Option<Role>,
    /// `Some(None)` for `null`: present but empty.
    #[serde(default, deserialize_with = "present")]
    content: Option<Option<Text>>,
    #[serde(default)]
    tool_calls: Option<Vec<MessageToolCall>>,
    #[serde(default)]
    tool_call_id: Option<Text>,
    #[serde(default)]
    name: Option<Text>,
    #[serde(default)]
    previous: Option<(usize, usize)>,
}

fn present<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Option<Text>>, D::Error> {
    Option::<Text>::deserialize(d).map(Some)
}

impl TryFrom<WireResponse> for Response {
    type Error = String;

    fn try_from(w: WireResponse) -> Result<Self, String> {
        let mut reused = Vec::new();
        let messages = match w.messages {
            None => None,
            Some(items) => {
                let mut messages = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    if let Some((from, to)) = item.previous {
                        if item.role.is_some()
                            || item.content.is_some()
                            || item.tool_calls.is_some()
                            || item.tool_call_id.is_some()
                            || item.name.is_some()
                        {
                            return Err(format!(
                                "messages[{i}]: `previous` stands alone, without the fields of a message"
                            ));
                        }
                        if from > to {
                            return Err(format!(
                                "messages[{i}].previous: [{from}, {to}] is not a range (from > to)"
                            ));
                        }
                        reused.push(Reuse {
                            at: messages.len(),
                            from,
                            to,
                        });
                        continue;
                    }
                    let role = item
                        .role
                        .ok_or_else(|| format!("messages[{i}]: missing field `role`"))?;
                    let content = item
                        .content
                        .ok_or_else(|| format!("messages[{i}]: missing field `content`"))?;
                    messages.push(Message {
                        role,
                        content: content.unwrap_or_default(),
                        tool_calls: item.tool_calls.unwrap_or_default().into(),
                        tool_call_id: item.tool_call_id,
                        name: item.name,
                    });
                }
                Some(messages)
            }
        };
        Ok(Response {
            messages,
            reused,
            messages_kept: w.messages_kept,
            error: w.error,
        })
    }
}

impl Response {
    /// Reads a response: a fast path for the usual `{"messages": [...],
    /// "messages_kept": n}`, serde_json for everything else (errors included), with
    /// the same result either way.
    pub fn from_slice(bytes: &[u8]) -> Result<Response, serde_json::Error> {
        match fast_messages_response(bytes) {
            Ok(response) => Ok(response),
            Err(json::GiveUp) => serde_json::from_slice(bytes),
        }
    }
}

pub(crate) fn fast_messages_response(bytes: &[u8]) -> json::Fast<Response> {
    use json::GiveUp;
    let mut r = json::Reader::new(bytes)?;
    let (mut messages, mut kept, mut reused) = (None, None, Vec::new());
    let mut seen_kept = false;
    let mut m = r.object()?;
    while let Some(key) = r.key(&mut m)? {
        match &*key {
            "messages" if messages.is_none() => {
                let mut list = Vec::new();
                let mut a = r.array()?;
                while r.item(&mut a)? {
                    match fast_item(&mut r)? {
                        FastItem::New(message) => list.push(message),
                        FastItem::Previous(from, to) => reused.push(Reuse {
                            at: list.len(),
                            from,
                            to,
                        }),
                    }
                }
                messages = Some(list);
            }
            "messages_kept" if !seen_kept => {
                seen_kept = true;
                if !r.null()? {
                    kept = Some(usize::try_from(r.u64()?).map_err(|_| GiveUp)?);
                }
            }
            // Errors, repeated keys: the reference parser.
            "messages" | "messages_kept" | "error" => return Err(GiveUp),
            _ => r.skip()?,
        }
    }
    r.end()?;
    Ok(Response {
        messages: Some(messages.ok_or(GiveUp)?),
        reused,
        messages_kept: kept,
        error: None,
    })
}

enum FastItem {
    New(Message),
    Previous(usize, usize),
}

fn fast_item(r: &mut json::Reader<'_>) -> json::Fast<FastItem> {
    use json::GiveUp;
    let (mut role, mut content, mut tool_calls, mut tool_call_id, mut name) =
        (None, None, None, None, None);
    let mut previous = None;
    let mut m = r.object()?;
    while let Some(key) = r.key(&mut m)? {
        match &*key {
            "previous" if previous.is_none() => {
                let mut a = r.array()?;
                let mut range = [0usize; 2];
                for end in &mut range {
                    if !r.item(&mut a)? {
                        return Err(GiveUp);
                    }
                    *end = usize::try_from(r.u64()?).map_err(|_| GiveUp)?;
                }
                if r.item(&mut a)? || range[0] > range[1] {
                    return Err(GiveUp);
                }
                previous = Some((range[0], range[1]));
            }
            "role" if role.is_none() => {
                role = Some(match &*r.str()? {
                    "system" => Role::System,
                    "user" => Role::User,
                    "assistant" => Role::Assistant,
                    "tool" => Role::Tool,
                    _ => return Err(GiveUp),
                });
            }
            "content" if content.is_none() => content = Some(r.opt_text()?),
            "tool_calls" if tool_calls.is_none() => {
                let mut calls = Vec::new();
                if !r.null()? {
                    let mut a = r.array()?;
                    while r.item(&mut a)? {
                        calls.push(fast_tool_call(r)?);
                    }
                }
                tool_calls = Some(calls);
            }
            "tool_call_id" if tool_call_id.is_none() => tool_call_id = Some(r.opt_text()?),
            "name" if name.is_none() => name = Some(r.opt_text()?),
            "role" | "content" | "tool_calls" | "tool_call_id" | "name" | "previous" => {
                return Err(GiveUp);
            }
            _ => r.skip()?,
        }
    }
    if let Some((from, to)) = previous {
        // A reference with message fields beside it: serde's error says why.
        if role.is_some()
            || content.is_some()
            || tool_calls.is_some()
            || tool_call_id.is_some()
            || name.is_some()
        {
            return Err(GiveUp);
        }
        return Ok(FastItem::Previous(from, to));
    }
    Ok(FastItem::New(Message {
        role: role.ok_or(GiveUp)?,
        content: content.ok_or(GiveUp)?.unwrap_or_default(),
        tool_calls: tool_calls.unwrap_or_default().into(),
        tool_call_id: tool_call_id.flatten(),
        name: name.flatten(),
    }))
}

fn fast_tool_call(r: &mut json::Reader<'_>) -> json::Fast<MessageToolCall> {
    use json::GiveUp;
    let (mut id, mut name, mut arguments) = (None, None, None);
    let mut m = r.object()?;
    while let Some(key) = r.key(&mut m)? {
        match &*key {
            "id" if id.is_none() => id = Some(r.text()?),
            "name" if name.is_none() => name = Some(r.text()?),
            "arguments" if arguments.is_none() => arguments = Some(r.text()?),
            "id" | "name" | "arguments" => return Err(GiveUp),
            _ => r.skip()?,
        }
    }
    Ok(MessageToolCall {
        id: id.ok_or(GiveUp)?,
        name: name.ok_or(GiveUp)?,
        arguments: arguments.ok_or(GiveUp)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn responses_parse_leniently() {
        let r: Response = serde_json::from_slice(
            br#"{"messages":[{"role":"system","content":"s","extra":1}],"new_field":true}"#,
        )
        .unwrap();
        assert_eq!(r.messages.unwrap(), vec![Message::system("s")]);
        let bytes = messages_response(&[Message::user("u\u{0}")], Some(3));
        let r: Response = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(r.messages_kept, Some(3));
        assert_eq!(r.messages.unwrap()[0].content, "u\u{0}");
        let bytes = error_response(&ErrorBody::new("panic", "oh"));
        let r: Response = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(r.error.unwrap().kind, "panic");
    }

    #[test]
    fn text_messages_are_written_as_abi_1_0_wrote_them() {
        let bytes = messages_response(&[Message::system("s"), Message::user("u")], None);
        assert_eq!(
            String::from_utf8(bytes).unwrap(),
            r#"{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}"#
        );
    }

    fn tool_exchange() -> Vec<Message> {
        let call = |id: &str| MessageToolCall {
            id: id.into(),
            name: "read_file".into(),
            arguments: r#"{"path": "a \"b\".rs"}"#.into(),
        };
        vec![
            Message::system("s"),
            Message::user("m"),
            Message::assistant_with_calls("", vec![call("c1"), call("c2")]),
            Message::tool("c1", Some("read_file".into()), "fn main() {}\n"),
            Message::tool("c2", None, ""),
            Message::assistant("done"),
        ]
    }

    #[test]
    fn tool_carrying_messages_round_trip() {
        let messages = tool_exchange();
        let bytes = messages_response(&messages, Some(1));
        let fast = fast_messages_response(&bytes).expect("the SDK's responses are fast");
        assert_eq!(fast.messages.as_deref(), Some(messages.as_slice()));
        let serde: Response = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(serde.messages, fast.messages);
    }

    #[test]
    fn provider_shaped_messages_are_read_too() {
        // What a plugin copying a chat turn's parts writes: `content: null`, and the
        // observation's own fields, which are ignored.
        let text = r#"{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","name":"f","arguments":"{}"}],"reasoning":"r"},
            {"role":"tool","tool_call_id":"c1","name":"f","content":"ok","is_error":true},
            {"role":"user","content":"out","environment":true,"tool_calls":null}]}"#;
        let want = vec![
            Message::assistant_with_calls(
                "",
                vec![MessageToolCall {
                    id: "c1".into(),
                    name: "f".into(),
                    arguments: "{}".into(),
                }],
            ),
            Message::tool("c1", Some("f".into()), "ok"),
            Message::user("out"),
        ];
        let fast = fast_messages_response(text.as_bytes()).expect("fast");
        assert_eq!(fast.messages.as_deref(), Some(want.as_slice()));
        let serde: Response = serde_json::from_str(text).unwrap();
        assert_eq!(serde.messages.as_deref(), Some(want.as_slice()));
    }

    #[test]
    fn mutated_chat_responses_read_as_serde_reads_them() {
        let base = messages_response(&tool_exchange(), Some(2));
        let mut g = crate::mutation::Xorshift(0x2545_F491_4F6C_DD1D);
        let tokens: [&[u8]; 8] = [b"\"", b"null", b"{", b"}", b",", b"[]", b"\"tool\"", b"1"];
        let (mut same_ok, mut both_err) = (0, 0);
        for _ in 0..3000 {
            let m = crate::mutation::mutant(&mut g, &base, &tokens, 2, false);
            let serde = serde_json::from_slice::<Response>(&m);
            let ours = Response::from_slice(&m);
            match (serde, ours) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a.messages, b.messages, "{}", String::from_utf8_lossy(&m));
                    assert_eq!(a.messages_kept, b.messages_kept);
                    same_ok += 1;
                }
                (Err(_), Err(_)) => both_err += 1,
                (a, b) => panic!("{}: serde {a:?}, ours {b:?}", String::from_utf8_lossy(&m)),
            }
        }
        assert!(
            same_ok > 300 && both_err > 300,
            "{same_ok} read, {both_err} refused"
        );
    }

    #[test]
    fn responses_read_the_same_through_the_fast_path_and_serde() {
        let contents = ["", "plain", "a\nb \"q\" \\ \u{1} é日本👍🏽", &"x".repeat(100)];
        for kept in [None, Some(0), Some(3)] {
            let mut messages: Vec<Message> = contents
                .iter()
                .enumerate()
                .map(|(i, c)| match i % 3 {
                    0 => Message::system(*c),
                    1 => Message::user(*c),
                    _ => Message::assistant(*c),
                })
                .collect();
            messages.extend(tool_exchange());
            let bytes = messages_response(&messages, kept);
            let serde: Response = serde_json::from_slice(&bytes).unwrap();
            let fast = fast_messages_response(&bytes).expect("the SDK's responses are fast");
            assert_eq!(fast.messages.as_deref(), Some(messages.as_slice()));
            assert_eq!(fast.messages_kept, kept);
            assert_eq!(serde.messages, fast.messages);
        }
        // Whatever the fast path takes, it reads as serde does; the rest goes to serde.
        for text in [
            r#"{"messages":[]}"#,
            r#" { "new" : [1, {"a": null}], "messages" : [ {"content":"c","x":1,"role":"user"} ] , "messages_kept" : null } "#,
            r#"{"messages":[{"role":"user","content":"\u00e9\ud83d\ude00"}],"messages_kept":2}"#,
            r#"{"messages":[{"role":"robot","content":"c"}]}"#,
            r#"{"messages":[{"role":"user"}]}"#,
            r#"{"messages":[{"role":"user","content":null}]}"#,
            r#"{"messages":[{"role":"user","content":"a","content":"b"}]}"#,
            r#"{"messages":[{"role":"tool","content":"a","tool_call_id":null,"name":null}]}"#,
            r#"{"messages":[{"role":"tool","content":"a","tool_call_id":"x","tool_call_id":"y"}]}"#,
            r#"{"messages":[{"role":"assistant","content":"a","tool_calls":[{"id":"x","name":"n"}]}]}"#,
            r#"{"messages":[{"role":"assistant","content":"a","tool_calls":[{"id":"x","name":"n","arguments":1}]}]}"#,
            r#"{"messages":[{"role":"assistant","content":"a","tool_calls":{}}]}"#,
            r#"{"messages":[],"messages_kept":-1}"#,
            r#"{"messages":[],"messages_kept":1.0}"#,
            r#"{"messages":null}"#,
            r#"{"error":{"kind":"panic","message":"m"}}"#,
            r#"{"messages":[],"error":{"kind":"k","message":"m"}}"#,
            r#"{"messages":[]} trailing"#,
            r#"{"messages":[{"role":"user","content":"\ud800"}]}"#,
        ] {
            let serde = serde_json::from_slice::<Response>(text.as_bytes());
            let ours = Response::from_slice(text.as_bytes());
            match (&serde, &ours) {
                (Ok(a), Ok(b)) => {
                    assert_eq!(a.messages, b.messages, "{text}");
                    assert_eq!(a.messages_kept, b.messages_kept, "{text}");
                    assert_eq!(a.error, b.error, "{text}");
                }
                (Err(_), Err(_)) => {}
                _ => panic!("{text}: serde {serde:?}, ours {ours:?}"),
            }
        }
    }

    #[test]
    fn references_to_previous_messages_read_the_same_both_ways() {
        let messages = tool_exchange();
        let items = [
            Item::Previous { from: 0, to: 2 },
            Item::New(&messages[2]),
            Item::New(&messages[3]),
            Item::Previous { from: 4, to: 4 },
            Item::New(&messages[4]),
            Item::Previous { from: 1, to: 3 },
        ];
        let bytes = items_response(&items, Some(1));
        let fast = fast_messages_response(&bytes).expect("the SDK's responses are fast");
        let serde: Response = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(fast, serde);
        assert_eq!(fast.messages.as_deref(), Some(&messages[2..5]));
        assert_eq!(
            fast.reused,
            vec![
                Reuse {
                    at: 0,
                    from: 0,
                    to: 2
                },
                Reuse {
                    at: 2,
                    from: 4,
                    to: 4
                },
                Reuse {
                    at: 3,
                    from: 1,
                    to: 3
                },
            ]
        );
        // New message i sits at item_index(i) of the array.
        assert_eq!(
            (0..3).map(|i| fast.item_index(i)).collect::<Vec<_>>(),
            vec![1, 2, 4]
        );
        for (text, error) in [
            (r#"{"messages":[{"previous":[2,1]}]}"#, "not a range"),
            (
                r#"{"messages":[{"previous":[0,1],"role":"user"}]}"#,
                "stands alone",
            ),
            (r#"{"messages":[{"content":"c"}]}"#, "missing field `role`"),
            (
                r#"{"messages":[{"role":"user"}]}"#,
                "missing field `content`",
            ),
        ] {
            assert!(fast_messages_response(text.as_bytes()).is_err(), "{text}");
            let e = Response::from_slice(text.as_bytes())
                .unwrap_err()
                .to_string();
            assert!(e.contains(error), "{text}: {e}");
        }
        for text in [
            r#"{"messages":[{"previous":[0]}]}"#,
            r#"{"messages":[{"previous":[0,1,2]}]}"#,
            r#"{"messages":[{"previous":[-1,1]}]}"#,
            r#"{"messages":[{"previous":null}]}"#,
        ] {
            assert!(Response::from_slice(text.as_bytes()).is_err(), "{text}");
        }
    }
}
