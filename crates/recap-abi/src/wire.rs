//! The JSON wire format (documented in the README). Both sides parse leniently:
//! unknown fields are ignored, so a minor version may add fields in either direction.
//!
//! Requests are written by hand into a byte buffer rather than through a serde tree,
//! because the host builds them incrementally: the fixed part of a session once, then
//! one turn at a time.

use crate::ffi::{ABI_MAJOR, ABI_MINOR};
use crate::json;
use recap_core::{Invariant, Message, OptionInfo, Session, ToolSpec, Turn, Value};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::io::Write;

/// Error kinds the SDK produces; strategies may use any other kind for render errors.
pub const KIND_BAD_REQUEST: &str = "bad_request";
pub const KIND_INVALID_OPTIONS: &str = "invalid_options";
pub const KIND_PANIC: &str = "panic";

/// The fields of a request that stay the same for every call of one session.
#[derive(Debug, Clone, Copy)]
pub struct SessionHeader<'a> {
    /// The session id when known (empty when rendering a bare request).
    pub id: &'a str,
    pub system_prompt: &'a str,
    pub mission: &'a str,
    pub max_turns: u32,
    pub tools: &'a BTreeMap<String, ToolSpec>,
    pub data: &'a BTreeMap<String, Value>,
}

impl<'a> SessionHeader<'a> {
    pub fn of_session(session: &'a Session) -> Self {
        Self {
            id: &session.id,
            system_prompt: &session.system_prompt,
            mission: &session.mission,
            max_turns: session.max_turns,
            tools: &session.tools,
            data: &session.data,
        }
    }

    pub fn of_request(request: &recap_core::RenderRequest<'a>) -> Self {
        Self {
            id: "",
            system_prompt: request.system_prompt,
            mission: request.mission,
            max_turns: request.max_turns,
            tools: request.tools,
            data: request.data,
        }
    }
}

fn put_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Serialising strings, numbers and JSON trees into memory has no failure mode
    // (no I/O, every map key is a string).
    serde_json::to_writer(&mut *out, value).expect("serialising JSON into a Vec cannot fail");
}

fn put_raw(out: &mut Vec<u8>, bytes: &str) {
    out.extend_from_slice(bytes.as_bytes());
}

/// `{"abi":{"major":1,"minor":0},"host":{...},"options":{...}` (the object left open).
fn put_envelope(out: &mut Vec<u8>, options: &BTreeMap<String, String>) {
    // Writing to a Vec cannot fail.
    let _ = write!(
        out,
        "{{\"abi\":{{\"major\":{ABI_MAJOR},\"minor\":{ABI_MINOR}}},\"host\":{{\"name\":\"recap\",\"version\":"
    );
    put_json(out, env!("CARGO_PKG_VERSION"));
    put_raw(out, "},\"options\":");
    put_json(out, options);
}

/// `,"id":..,"system_prompt":..,"mission":..,"max_turns":..,"tools":{..},"data":{..}`.
fn put_header(out: &mut Vec<u8>, header: &SessionHeader<'_>) {
    put_raw(out, ",\"id\":");
    json::put_str(out, header.id);
    put_raw(out, ",\"system_prompt\":");
    json::put_str(out, header.system_prompt);
    put_raw(out, ",\"mission\":");
    json::put_str(out, header.mission);
    let _ = write!(out, ",\"max_turns\":{}", header.max_turns);
    put_raw(out, ",\"tools\":{");
    for (i, (name, spec)) in header.tools.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        put_json(out, name);
        let mut t = Map::new();
        if let Some(s) = &spec.signature {
            t.insert("signature".into(), Json::from(s.as_str()));
        }
        if let Some(d) = &spec.description {
            t.insert("description".into(), Json::from(d.as_str()));
        }
        out.push(b':');
        put_json(out, &t);
    }
    put_raw(out, "},\"data\":{");
    for (i, (key, value)) in header.data.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        put_json(out, key);
        out.push(b':');
        crate::encode::put_value(out, value);
    }
    out.push(b'}');
}

/// Writes a render request up to and including `"turns":[`. Append turns with
/// [`put_turn`] (comma-separated) and finish with [`REQUEST_END`].
pub fn put_render_request_head(
    out: &mut Vec<u8>,
    options: &BTreeMap<String, String>,
    header: &SessionHeader<'_>,
) {
    put_envelope(out, options);
    put_header(out, header);
    put_raw(out, ",\"turns\":[");
}

/// Closes the turns array and the request object.
pub const REQUEST_END: &[u8] = b"]}";

/// Appends one turn in the corpus encoding (SPEC section 4), without a separator.
pub fn put_turn(out: &mut Vec<u8>, turn: &Turn) {
    crate::encode::put_turn(out, turn);
}

/// A complete render request.
pub fn render_request(
    options: &BTreeMap<String, String>,
    header: &SessionHeader<'_>,
    turns: &[Turn],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(1024);
    put_render_request_head(&mut out, options, header);
    for (i, turn) in turns.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        put_turn(&mut out, turn);
    }
    out.extend_from_slice(REQUEST_END);
    out
}

/// The request for `session_open`: a render request without `turns`.
pub fn session_open_request(
    options: &BTreeMap<String, String>,
    header: &SessionHeader<'_>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    put_envelope(&mut out, options);
    put_header(&mut out, header);
    out.push(b'}');
    out
}

/// The request for `session_render`: keep the first `turns_offset` turns the session
/// holds, then append `turns`.
pub fn session_render_request(turns_offset: usize, turns: &[Turn]) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    put_session_render_request(&mut out, turns_offset, turns);
    out
}

/// Writes the request for `session_render` into `out` (cleared first), so that a
/// caller can reuse one buffer for every call.
pub fn put_session_render_request(out: &mut Vec<u8>, turns_offset: usize, turns: &[Turn]) {
    out.clear();
    out.extend_from_slice(b"{\"turns_offset\":");
    json::put_u64(out, turns_offset as u64);
    out.extend_from_slice(b",\"turns\":[");
    for (i, turn) in turns.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        put_turn(out, turn);
    }
    out.extend_from_slice(REQUEST_END);
}

/// The request for `describe`.
pub fn describe_request(options: &BTreeMap<String, String>) -> Vec<u8> {
    let mut out = Vec::with_capacity(128);
    put_envelope(&mut out, options);
    out.push(b'}');
    out
}

/// Why a request could not be read (reported as `bad_request`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestError(pub String);

fn parse_object(bytes: &[u8]) -> Result<Map<String, Json>, RequestError> {
    match serde_json::from_slice::<Json>(bytes) {
        Ok(Json::Object(obj)) => Ok(obj),
        Ok(other) => Err(RequestError(format!(
            "the request must be a JSON object, got {}",
            match other {
                Json::Array(_) => "an array",
                Json::String(_) => "a string",
                Json::Number(_) => "a number",
                Json::Bool(_) => "a boolean",
                _ => "null",
            }
        ))),
        Err(e) => Err(RequestError(format!("the request is not valid JSON: {e}"))),
    }
}

fn check_abi(obj: &Map<String, Json>) -> Result<(), RequestError> {
    let major = obj
        .get("abi")
        .and_then(|a| a.get("major"))
        .and_then(Json::as_u64);
    match major {
        Some(m) if m != u64::from(ABI_MAJOR) => Err(RequestError(format!(
            "the host speaks ABI {m}, this plugin speaks ABI {ABI_MAJOR}"
        ))),
        _ => Ok(()),
    }
}

fn options_of(obj: &Map<String, Json>) -> Result<BTreeMap<String, String>, RequestError> {
    match obj.get("options") {
        None | Some(Json::Null) => Ok(BTreeMap::new()),
        Some(Json::Object(opts)) => opts
            .iter()
            .map(|(k, v)| match v {
                Json::String(s) => Ok((k.clone(), s.clone())),
                other => Err(RequestError(format!(
                    "options.{k}: expected a string (option values are textual), got {other}"
                ))),
            })
            .collect(),
        Some(other) => Err(RequestError(format!(
            "options: expected an object of strings, got {other}"
        ))),
    }
}

/// Reads a render or `session_open` request: the options and the session (with the
/// turns it carries, possibly none).
pub fn decode_session_request(
    bytes: &[u8],
) -> Result<(BTreeMap<String, String>, Session), RequestError> {
    let mut obj = parse_object(bytes)?;
    check_abi(&obj)?;
    let options = options_of(&obj)?;
    // A request need not name its session; Session::from_json insists on an id.
    obj.entry("id").or_insert_with(|| Json::from(""));
    let session = Session::from_json(&Json::Object(obj))
        .map_err(|e| RequestError(format!("request field {e}")))?;
    Ok((options, session))
}

/// Reads a `session_render` request: `(turns_offset, turns as JSON)`.
pub fn decode_session_delta(bytes: &[u8]) -> Result<(usize, Vec<Json>), RequestError> {
    let mut obj = parse_object(bytes)?;
    let offset = match obj.get("turns_offset") {
        None | Some(Json::Null) => 0,
        Some(j) => j
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| {
                RequestError(format!(
                    "turns_offset: expected a non-negative integer, got {j}"
                ))
            })?,
    };
    let turns = match obj.remove("turns") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::Array(turns)) => turns,
        Some(other) => {
            return Err(RequestError(format!(
                "turns: expected an array, got {other}"
            )));
        }
    };
    Ok((offset, turns))
}

/// Reads a `session_render` request into `(turns_offset, turns)`; turn `i` of the
/// request is named `turns[turns_offset + i]` in errors.
pub fn decode_session_turns(bytes: &[u8]) -> Result<(usize, Vec<Turn>), RequestError> {
    if let Some(fast) = crate::decode::session_delta(bytes) {
        return Ok(fast);
    }
    // The reference decoder: slower, but with recap-core's exact errors.
    let (offset, turns) = decode_session_delta(bytes)?;
    let turns = turns
        .iter()
        .enumerate()
        .map(|(i, json)| {
            Turn::from_json(json, &format!("turns[{}]", offset + i))
                .map_err(|e| RequestError(format!("request field {e}")))
        })
        .collect::<Result<_, _>>()?;
    Ok((offset, turns))
}

/// Reads a `describe` request (an empty buffer means default options).
pub fn decode_describe_request(bytes: &[u8]) -> Result<BTreeMap<String, String>, RequestError> {
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Ok(BTreeMap::new());
    }
    let obj = parse_object(bytes)?;
    check_abi(&obj)?;
    options_of(&obj)
}

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
    let size: usize = messages.iter().map(|m| m.content.len() + 36).sum();
    let mut out = Vec::with_capacity(size + 48);
    out.extend_from_slice(b"{\"messages\":[");
    for (i, m) in messages.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(b"{\"role\":\"");
        out.extend_from_slice(m.role.as_str().as_bytes());
        out.extend_from_slice(b"\",\"content\":");
        json::put_str(&mut out, &m.content);
        out.push(b'}');
    }
    out.push(b']');
    if let Some(n) = messages_kept {
        out.extend_from_slice(b",\"messages_kept\":");
        json::put_u64(&mut out, n as u64);
    }
    out.push(b'}');
    out
}

/// A response as the host reads it: exactly one of `messages` and `error`.
#[derive(Debug, Clone, Deserialize)]
pub struct Response {
    #[serde(default)]
    pub messages: Option<Vec<Message>>,
    /// Session responses: how many leading messages of the previous response of this
    /// session come before `messages`.
    #[serde(default)]
    pub messages_kept: Option<usize>,
    #[serde(default)]
    pub error: Option<ErrorBody>,
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

fn fast_messages_response(bytes: &[u8]) -> json::Fast<Response> {
    use json::GiveUp;
    let mut r = json::Reader::new(bytes)?;
    let (mut messages, mut kept) = (None, None);
    let mut seen_kept = false;
    let mut m = r.object()?;
    while let Some(key) = r.key(&mut m)? {
        match &*key {
            "messages" if messages.is_none() => {
                let mut list = Vec::new();
                let mut a = r.array()?;
                while r.item(&mut a)? {
                    list.push(fast_message(&mut r)?);
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
        messages_kept: kept,
        error: None,
    })
}

fn fast_message(r: &mut json::Reader<'_>) -> json::Fast<Message> {
    use json::GiveUp;
    let (mut role, mut content) = (None, None);
    let mut m = r.object()?;
    while let Some(key) = r.key(&mut m)? {
        match &*key {
            "role" if role.is_none() => {
                role = Some(match &*r.str()? {
                    "system" => recap_core::Role::System,
                    "user" => recap_core::Role::User,
                    "assistant" => recap_core::Role::Assistant,
                    _ => return Err(GiveUp),
                });
            }
            "content" if content.is_none() => content = Some(r.string()?),
            "role" | "content" => return Err(GiveUp),
            _ => r.skip()?,
        }
    }
    Ok(Message::new(role.ok_or(GiveUp)?, content.ok_or(GiveUp)?))
}

/// An option a strategy accepts, in `describe`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptionWire {
    pub key: String,
    #[serde(default)]
    pub default: String,
    #[serde(default)]
    pub help: String,
}

impl From<&OptionInfo> for OptionWire {
    fn from(o: &OptionInfo) -> Self {
        Self {
            key: o.key.clone(),
            default: o.default.clone(),
            help: o.help.clone(),
        }
    }
}

impl From<&OptionWire> for OptionInfo {
    fn from(o: &OptionWire) -> Self {
        Self {
            key: o.key.clone(),
            default: o.default.clone(),
            help: o.help.clone(),
        }
    }
}

/// A declared invariant: `{"id": "limits", "tool_call_limit": 20, "println_limit": 15}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvariantWire {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub println_limit: Option<u32>,
}

impl From<&Invariant> for InvariantWire {
    fn from(inv: &Invariant) -> Self {
        let (tool_call_limit, println_limit) = match inv {
            Invariant::Limits {
                tool_call_limit,
                println_limit,
            } => (Some(*tool_call_limit), Some(*println_limit)),
            _ => (None, None),
        };
        Self {
            id: inv.id().to_string(),
            tool_call_limit,
            println_limit,
        }
    }
}

impl InvariantWire {
    /// The invariant, or `None` for an id this host does not know (a newer plugin) or
    /// `limits` without both limits.
    pub fn to_invariant(&self) -> Option<Invariant> {
        Some(match self.id.as_str() {
            "system-first" => Invariant::SystemFirst,
            "mission-verbatim" => Invariant::MissionVerbatim,
            "mission-leads-first-user" => Invariant::MissionLeadsFirstUser,
            "role-alternation" => Invariant::RoleAlternation,
            "failed-turns-verbatim" => Invariant::FailedTurnsVerbatim,
            "turns-line" => Invariant::TurnsLine,
            "deterministic" => Invariant::Deterministic,
            "append-only" => Invariant::AppendOnly,
            "limits" => Invariant::Limits {
                tool_call_limit: self.tool_call_limit?,
                println_limit: self.println_limit?,
            },
            _ => return None,
        })
    }
}

/// What `describe` returns: the options schema and, for the options given, the
/// instance's canonical spec and declared invariants.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Description {
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub spec: Option<String>,
    #[serde(default)]
    pub options: Vec<OptionWire>,
    #[serde(default)]
    pub invariants: Vec<InvariantWire>,
}

pub fn description_response(description: &Description) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    put_json(&mut out, description);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_core::session::fenced_program;
    use recap_core::{DefKind, Definition, TurnError};

    fn session() -> Session {
        let mut tools = BTreeMap::new();
        tools.insert(
            "search".to_string(),
            ToolSpec {
                signature: Some("(search q)".into()),
                description: None,
                parameters: None,
            },
        );
        let mut data = BTreeMap::new();
        data.insert("n".to_string(), Value::Keyword("k".into()));
        let turn = |number: u32, success: bool| Turn {
            number,
            program: format!("(def x{number} \"é\\n\")"),
            raw_response: fenced_program("(def x 1)"),
            success,
            error: (!success).then(|| TurnError {
                message: "boom \"quoted\"".into(),
                reason: None,
            }),
            result: Some(Value::Float(1.5)),
            prints: vec!["a\tb".into()],
            tool_calls: vec![],
            definitions: vec![Definition {
                name: "x".into(),
                kind: DefKind::Def,
                docstring: None,
                value: Some(Value::Set(vec![Value::Int(1)])),
            }],
            feedback: None,
            usage: None,
        };
        Session {
            id: "s1".into(),
            mission: "Find it".into(),
            system_prompt: "sys".into(),
            max_turns: 4,
            budget_recorded: true,
            form: recap_core::Form::Ptc,
            tools,
            data,
            meta: Map::new(),
            turns: vec![turn(1, true), turn(2, false)],
            chat_turns: Vec::new(),
        }
    }

    #[test]
    fn render_request_round_trips_through_the_sdk_decoder() {
        let s = session();
        let mut options = BTreeMap::new();
        options.insert("window".to_string(), "2".to_string());
        let bytes = render_request(&options, &SessionHeader::of_session(&s), &s.turns);
        let (opts, decoded) = decode_session_request(&bytes).unwrap();
        assert_eq!(opts, options);
        let mut expected = s.clone();
        expected.meta = Map::new();
        assert_eq!(decoded, expected);
    }

    #[test]
    fn session_delta_round_trips() {
        let s = session();
        let bytes = session_render_request(1, &s.turns[1..]);
        let (offset, turns) = decode_session_delta(&bytes).unwrap();
        assert_eq!(offset, 1);
        assert_eq!(Turn::from_json(&turns[0], "turns[1]").unwrap(), s.turns[1]);
        let open = session_open_request(&BTreeMap::new(), &SessionHeader::of_session(&s));
        let (_, header) = decode_session_request(&open).unwrap();
        assert!(header.turns.is_empty());
        assert_eq!(header.data, s.data);
        assert_eq!(header.tools, s.tools);
    }

    #[test]
    fn requests_ignore_unknown_fields_and_reject_other_majors() {
        let ok = br#"{"abi":{"major":1,"minor":7},"future":[1,2],"mission":"m","turns":[]}"#;
        assert!(decode_session_request(ok).is_ok());
        let bad = br#"{"abi":{"major":2,"minor":0},"mission":"m"}"#;
        let err = decode_session_request(bad).unwrap_err();
        assert!(err.0.contains("ABI 2"), "{err:?}");
    }

    #[test]
    fn bad_requests_name_the_field() {
        let err = decode_session_request(br#"{"mission":"m","options":{"window":3}}"#).unwrap_err();
        assert!(err.0.contains("options.window"), "{err:?}");
        let err = decode_session_request(br#"{"mission":"m","turns":[{"number":1}]}"#).unwrap_err();
        assert!(err.0.contains("turns[0].program"), "{err:?}");
        let err = decode_session_request(b"[1]").unwrap_err();
        assert!(err.0.contains("an array"), "{err:?}");
        let err = decode_session_delta(br#"{"turns_offset":-1}"#).unwrap_err();
        assert!(err.0.contains("turns_offset"), "{err:?}");
        // The fast decoder gives up; the reference one names the field, offset included.
        let err =
            decode_session_turns(br#"{"turns_offset":2,"turns":[{"number":3}]}"#).unwrap_err();
        assert!(err.0.contains("turns[2].program"), "{err:?}");
        let err = decode_session_turns(
            br#"{"turns":[{"number":1,"program":"p","success":true,"result":{"$kword":1}}]}"#,
        )
        .unwrap_err();
        assert!(err.0.contains("turns[0].result/$kword"), "{err:?}");
    }

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
    fn responses_read_the_same_through_the_fast_path_and_serde() {
        let contents = ["", "plain", "a\nb \"q\" \\ \u{1} é日本👍🏽", &"x".repeat(100)];
        for kept in [None, Some(0), Some(3)] {
            let messages: Vec<Message> = contents
                .iter()
                .enumerate()
                .map(|(i, c)| match i % 3 {
                    0 => Message::system(*c),
                    1 => Message::user(*c),
                    _ => Message::assistant(*c),
                })
                .collect();
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
            r#"{"messages":[{"role":"user","content":"a","content":"b"}]}"#,
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
    fn invariants_round_trip_and_unknown_ids_are_none() {
        for inv in [
            Invariant::SystemFirst,
            Invariant::MissionVerbatim,
            Invariant::MissionLeadsFirstUser,
            Invariant::RoleAlternation,
            Invariant::FailedTurnsVerbatim,
            Invariant::TurnsLine,
            Invariant::Deterministic,
            Invariant::AppendOnly,
            Invariant::Limits {
                tool_call_limit: 2,
                println_limit: 3,
            },
        ] {
            assert_eq!(InvariantWire::from(&inv).to_invariant(), Some(inv));
        }
        let future = InvariantWire {
            id: "no-secrets".into(),
            tool_call_limit: None,
            println_limit: None,
        };
        assert_eq!(future.to_invariant(), None);
    }
}
