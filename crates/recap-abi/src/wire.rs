//! The JSON wire format (documented in the README). Both sides parse leniently:
//! unknown fields are ignored, so a minor version may add fields in either direction.
//!
//! Requests are written by hand into a byte buffer rather than through a serde tree,
//! because the host builds them incrementally: the fixed part of a session once, then
//! one turn at a time. This module holds the requests; `wire/messages.rs` the responses
//! and `wire/describe.rs` the description.
//!
//! ABI 1.1 added the chat form (SPEC 11): a chat request says `"form": "chat"`, carries
//! chat turns, may have `"max_turns": null`, and may carry the host's per-message token
//! counts (`token_counts`, see [`TokenCounts`]). PTC-Lisp requests are written exactly as
//! in ABI 1.0 (apart from `abi.minor`), so a 1.0 plugin reads them as it always did.

mod describe;
mod messages;

pub use describe::{Description, InvariantWire, OptionWire, description_response, form_named};
pub use messages::{
    ErrorBody, Item, Response, Reuse, error_response, items_response, messages_response,
};

use crate::ffi::{ABI_MAJOR, ABI_MINOR};
use crate::json;
use crate::lenient;
use crate::tokens::TokenCounts;
use recap_core::{ChatTurn, Form, Session, ToolSpec, Turn, Value};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value as Json};
use std::collections::BTreeMap;
use std::io::Write;

/// Error kinds the SDK produces; strategies may use any other kind for render errors.
pub const KIND_BAD_REQUEST: &str = "bad_request";
pub const KIND_INVALID_OPTIONS: &str = "invalid_options";
pub const KIND_PANIC: &str = "panic";
/// A request in a form the strategy does not declare (hosts never send one).
pub const KIND_UNSUPPORTED_FORM: &str = "unsupported_form";

/// The fields of a request that stay the same for every call of one session.
#[derive(Debug, Clone, Copy)]
pub struct SessionHeader<'a> {
    /// The session id when known (empty when rendering a bare request).
    pub id: &'a str,
    pub system_prompt: &'a str,
    pub mission: &'a str,
    pub form: Form,
    /// The turn budget; `None` (written `null`) when a chat session recorded none.
    pub max_turns: Option<u32>,
    pub tools: &'a BTreeMap<String, ToolSpec>,
    pub data: &'a BTreeMap<String, Value>,
}

impl<'a> SessionHeader<'a> {
    pub fn of_session(session: &'a Session) -> Self {
        Self {
            id: &session.id,
            system_prompt: &session.system_prompt,
            mission: &session.mission,
            form: session.form,
            max_turns: session.budget(),
            tools: &session.tools,
            data: &session.data,
        }
    }

    pub fn of_request(request: &recap_core::RenderRequest<'a>) -> Self {
        // A request has no `budget_recorded`: a chat session without a budget has
        // `u32::MAX` there (see `Session::max_turns`).
        let unrecorded = request.form == Form::Chat && request.max_turns == u32::MAX;
        Self {
            id: "",
            system_prompt: request.system_prompt,
            mission: request.mission,
            form: request.form,
            max_turns: (!unrecorded).then_some(request.max_turns),
            tools: request.tools,
            data: request.data,
        }
    }
}

pub(crate) fn put_json<T: Serialize + ?Sized>(out: &mut Vec<u8>, value: &T) {
    // Serialising strings, numbers and JSON trees into memory has no failure mode
    // (no I/O, every map key is a string).
    serde_json::to_writer(&mut *out, value).expect("serialising JSON into a Vec cannot fail");
}

fn put_raw(out: &mut Vec<u8>, bytes: &str) {
    out.extend_from_slice(bytes.as_bytes());
}

/// `{"abi":{"major":1,"minor":1},"host":{...},"options":{...}` (the object left open).
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

/// `,"id":..,"system_prompt":..,"mission":..[,"form":"chat"],"max_turns":..,"tools":{..},"data":{..}`.
/// The form is written for chat only: absent means PTC-Lisp, which keeps PTC-Lisp
/// requests byte-identical to ABI 1.0's.
fn put_header(out: &mut Vec<u8>, header: &SessionHeader<'_>) {
    put_raw(out, ",\"id\":");
    json::put_str(out, header.id);
    put_raw(out, ",\"system_prompt\":");
    json::put_str(out, header.system_prompt);
    put_raw(out, ",\"mission\":");
    json::put_str(out, header.mission);
    if header.form != Form::Ptc {
        put_raw(out, ",\"form\":");
        json::put_str(out, header.form.as_str());
    }
    match header.max_turns {
        Some(n) => {
            let _ = write!(out, ",\"max_turns\":{n}");
        }
        None => put_raw(out, ",\"max_turns\":null"),
    }
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
        if let Some(p) = &spec.parameters {
            t.insert("parameters".into(), p.clone());
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

/// `[[n, ...], ...]`: the counts of some turns' messages.
fn put_count_lists(out: &mut Vec<u8>, turns: &[Vec<u64>]) {
    out.push(b'[');
    for (i, counts) in turns.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.push(b'[');
        for (j, n) in counts.iter().enumerate() {
            if j > 0 {
                out.push(b',');
            }
            json::put_u64(out, *n);
        }
        out.push(b']');
    }
    out.push(b']');
}

/// `,"token_counts":{"tokenizer":..,"system":..,"mission":..,"turns":[...]}` with the
/// counts of `turns` (those the request carries).
fn put_token_counts(out: &mut Vec<u8>, counts: &TokenCounts, turns: &[Vec<u64>]) {
    put_raw(out, ",\"token_counts\":{\"tokenizer\":");
    json::put_str(out, &counts.tokenizer);
    put_raw(out, ",\"system\":");
    json::put_u64(out, counts.system);
    put_raw(out, ",\"mission\":");
    json::put_u64(out, counts.mission);
    put_raw(out, ",\"turns\":");
    put_count_lists(out, turns);
    out.push(b'}');
}

/// Writes a render request up to and including `"turns":[`. Append turns with
/// [`put_turn`] or [`put_chat_turn`] (comma-separated) and finish with
/// [`REQUEST_END`], or [`put_request_end`] to add token counts.
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

/// Closes the turns array, adds the token counts of the turns sent (when the host has
/// a tokenizer) and closes the request object.
pub fn put_request_end(out: &mut Vec<u8>, counts: Option<(&TokenCounts, &[Vec<u64>])>) {
    out.push(b']');
    if let Some((counts, turns)) = counts {
        put_token_counts(out, counts, turns);
    }
    out.push(b'}');
}

/// Appends one turn in the corpus encoding (SPEC section 4), without a separator.
pub fn put_turn(out: &mut Vec<u8>, turn: &Turn) {
    crate::encode::put_turn(out, turn);
}

/// Appends one chat turn in the corpus encoding (SPEC 11.1), without a separator.
pub fn put_chat_turn(out: &mut Vec<u8>, turn: &ChatTurn) {
    crate::encode::put_chat_turn(out, turn);
}

/// Appends `items` separated by commas (no brackets), each written by `put`.
fn put_comma_separated<T>(out: &mut Vec<u8>, items: &[T], put: fn(&mut Vec<u8>, &T)) {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        put(out, item);
    }
}

/// A complete render request of a PTC-Lisp session.
pub fn render_request(
    options: &BTreeMap<String, String>,
    header: &SessionHeader<'_>,
    turns: &[Turn],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(1024);
    put_render_request_head(&mut out, options, header);
    put_comma_separated(&mut out, turns, put_turn);
    out.extend_from_slice(REQUEST_END);
    out
}

/// A complete render request of a chat session (`header.form` must be chat), with the
/// token counts of its turns when the host has a tokenizer (`counts.turns` covers at
/// least `turns`).
pub fn chat_render_request(
    options: &BTreeMap<String, String>,
    header: &SessionHeader<'_>,
    turns: &[ChatTurn],
    counts: Option<&TokenCounts>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(1024);
    put_render_request_head(&mut out, options, header);
    put_comma_separated(&mut out, turns, put_chat_turn);
    let counted = counts.map(|c| (c, &c.turns[..turns.len().min(c.turns.len())]));
    put_request_end(&mut out, counted);
    out
}

/// The request for `session_open`: a render request without `turns` (and, in a chat
/// session, the counts of SYSTEM and USER(mission) alone).
///
/// `pair`: the id this session shares with the other session of a pair, whose calls
/// bring the same turns (recap's determinism check renders every call through two
/// sessions): a plugin may hold their turns once. A hint that changes no answer.
pub fn session_open_request(
    options: &BTreeMap<String, String>,
    header: &SessionHeader<'_>,
    counts: Option<&TokenCounts>,
    pair: Option<u64>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(512);
    put_envelope(&mut out, options);
    put_header(&mut out, header);
    if let Some(counts) = counts {
        put_token_counts(&mut out, counts, &[]);
    }
    if let Some(pair) = pair {
        out.extend_from_slice(b",\"pair\":");
        json::put_u64(&mut out, pair);
    }
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
    put_comma_separated(out, turns, put_turn);
    out.extend_from_slice(REQUEST_END);
}

/// As [`put_session_render_request`] for a chat session, with the token counts of the
/// turns sent (`counts[i]` for `turns[i]`) when the host has a tokenizer.
pub fn put_chat_session_render_request(
    out: &mut Vec<u8>,
    turns_offset: usize,
    turns: &[ChatTurn],
    counts: Option<&[Vec<u64>]>,
) {
    out.clear();
    out.extend_from_slice(b"{\"turns_offset\":");
    json::put_u64(out, turns_offset as u64);
    out.extend_from_slice(b",\"turns\":[");
    put_comma_separated(out, turns, put_chat_turn);
    out.push(b']');
    if let Some(counts) = counts {
        out.extend_from_slice(b",\"token_counts\":{\"turns\":");
        put_count_lists(out, counts);
        out.push(b'}');
    }
    out.push(b'}');
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

/// The declared form: `None` when absent (older hosts; the turns decide).
fn form_of(obj: &Map<String, Json>) -> Result<Option<Form>, RequestError> {
    match obj.get("form") {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(name)) => form_named(name).map(Some).ok_or_else(|| {
            RequestError(format!(
                "form: unknown form {name:?}; this plugin knows {}",
                Form::ALL.map(Form::as_str).join(" and ")
            ))
        }),
        Some(other) => Err(RequestError(format!(
            "form: expected a string, got {other}"
        ))),
    }
}

/// `token_counts` as sent: the opening counts in a render or `session_open` request,
/// only `turns` in a `session_render` request.
#[derive(Debug, Deserialize)]
struct CountsWire {
    #[serde(default)]
    tokenizer: Option<String>,
    #[serde(default)]
    system: Option<u64>,
    #[serde(default)]
    mission: Option<u64>,
    #[serde(default)]
    turns: Option<Vec<Vec<u64>>>,
}

fn counts_wire(obj: &mut Map<String, Json>) -> Result<Option<CountsWire>, RequestError> {
    match obj.remove("token_counts") {
        None | Some(Json::Null) => Ok(None),
        Some(j) => serde_json::from_value(j)
            .map(Some)
            .map_err(|e| RequestError(format!("token_counts: {e}"))),
    }
}

/// Checks that `counts[i]` has one count per message of `turns[i]`.
fn check_counts(
    counts: &[Vec<u64>],
    turns: &[ChatTurn],
    offset: usize,
) -> Result<(), RequestError> {
    if counts.len() != turns.len() {
        return Err(RequestError(format!(
            "token_counts.turns: {} entries for {} turns",
            counts.len(),
            turns.len()
        )));
    }
    for (i, (c, t)) in counts.iter().zip(turns).enumerate() {
        if c.len() != t.message_count() {
            return Err(RequestError(format!(
                "token_counts.turns[{}]: {} counts for a turn of {} messages",
                offset + i,
                c.len(),
                t.message_count()
            )));
        }
    }
    Ok(())
}

/// A render or `session_open` request, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    pub options: BTreeMap<String, String>,
    /// The session with the turns the request carries (none for `session_open`).
    pub session: Session,
    /// The host's token counts (chat requests from a host with a tokenizer), one list
    /// per turn of `session`.
    pub token_counts: Option<TokenCounts>,
    /// The ABI minor the host speaks (`abi.minor`; 0 when absent): what the plugin's
    /// responses may use.
    pub host_abi_minor: u64,
    /// `session_open`'s `pair`: the id of the pair of sessions this one belongs to.
    pub pair: Option<u64>,
}

/// Reads a render or `session_open` request: the options, the session (with the turns
/// it carries, possibly none) and the token counts.
pub fn decode_request(bytes: &[u8]) -> Result<Request, RequestError> {
    let mut obj = parse_object(bytes)?;
    check_abi(&obj)?;
    let host_abi_minor = obj
        .get("abi")
        .and_then(|a| a.get("minor"))
        .and_then(Json::as_u64)
        .unwrap_or(0);
    let options = options_of(&obj)?;
    let declared = form_of(&obj)?;
    let counts = counts_wire(&mut obj)?;
    let pair = match obj.remove("pair") {
        None | Some(Json::Null) => None,
        Some(p) => Some(
            p.as_u64()
                .ok_or_else(|| RequestError(format!("pair: expected a whole number, got {p}")))?,
        ),
    };
    let budget_absent = matches!(obj.get("max_turns"), None | Some(Json::Null));
    lenient::session(&mut obj);
    // A request need not name its session; Session::from_json insists on an id.
    obj.entry("id").or_insert_with(|| Json::from(""));
    let mut session = Session::from_json(&Json::Object(obj))
        .map_err(|e| RequestError(format!("request field {e}")))?;
    match declared {
        Some(form) if session.turn_count() > 0 && session.form != form => {
            return Err(RequestError(format!(
                "form: the request says {form} but its turns are in the {} form",
                session.form
            )));
        }
        // Without turns the form cannot be seen in them: the declaration decides, and
        // an absent budget means none was recorded.
        Some(Form::Chat) if session.form != Form::Chat => {
            session.form = Form::Chat;
            if budget_absent {
                session.max_turns = u32::MAX;
                session.budget_recorded = false;
            }
        }
        _ => {}
    }
    let token_counts = match counts {
        // Counts describe chat messages; a PTC-Lisp request has none to describe.
        Some(_) if session.form != Form::Chat => None,
        None => None,
        Some(c) => {
            let (Some(tokenizer), Some(system), Some(mission)) = (c.tokenizer, c.system, c.mission)
            else {
                return Err(RequestError(
                    "token_counts: expected tokenizer, system and mission".into(),
                ));
            };
            let turns = c.turns.unwrap_or_default();
            check_counts(&turns, &session.chat_turns, 0)?;
            Some(TokenCounts {
                tokenizer,
                system,
                mission,
                turns,
            })
        }
    };
    Ok(Request {
        options,
        session,
        token_counts,
        host_abi_minor,
        pair,
    })
}

/// Reads a render or `session_open` request: the options and the session (with the
/// turns it carries, possibly none).
pub fn decode_session_request(
    bytes: &[u8],
) -> Result<(BTreeMap<String, String>, Session), RequestError> {
    decode_request(bytes).map(|r| (r.options, r.session))
}

/// Reads a `session_render` request: `(turns_offset, turns as JSON)`.
pub fn decode_session_delta(bytes: &[u8]) -> Result<(usize, Vec<Json>), RequestError> {
    let mut obj = parse_object(bytes)?;
    delta_parts(&mut obj)
}

fn delta_parts(obj: &mut Map<String, Json>) -> Result<(usize, Vec<Json>), RequestError> {
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

/// Reads a `session_render` request of a PTC-Lisp session into `(turns_offset,
/// turns)`; turn `i` of the request is named `turns[turns_offset + i]` in errors.
pub fn decode_session_turns(bytes: &[u8]) -> Result<(usize, Vec<Turn>), RequestError> {
    if let Some(fast) = crate::decode::session_delta(bytes) {
        return Ok(fast);
    }
    // The reference decoder: slower, but with recap-core's exact errors.
    let (offset, turns) = decode_session_delta(bytes)?;
    let turns = turns
        .into_iter()
        .enumerate()
        .map(|(i, json)| ptc_turn(json, offset + i))
        .collect::<Result<_, _>>()?;
    Ok((offset, turns))
}

/// One PTC-Lisp turn of a request, its unknown fields ignored.
pub(crate) fn ptc_turn(mut json: Json, index: usize) -> Result<Turn, RequestError> {
    lenient::turn(&mut json);
    Turn::from_json(&json, &format!("turns[{index}]"))
        .map_err(|e| RequestError(format!("request field {e}")))
}

/// The turns of a `session_render` request, in the session's form.
#[derive(Debug, Clone, PartialEq)]
pub enum DeltaTurns {
    Ptc(Vec<Turn>),
    Chat(Vec<ChatTurn>),
}

/// A `session_render` request, read.
#[derive(Debug, Clone, PartialEq)]
pub struct Delta {
    /// Keep this many of the turns the session holds …
    pub turns_offset: usize,
    /// … then append these.
    pub turns: DeltaTurns,
    /// The token counts of the appended turns, one list per turn (chat sessions of a
    /// host with a tokenizer).
    pub token_counts: Option<Vec<Vec<u64>>>,
}

/// Reads a `session_render` request of a session in `form`.
pub fn decode_delta(bytes: &[u8], form: Form) -> Result<Delta, RequestError> {
    if form == Form::Ptc {
        let (turns_offset, turns) = decode_session_turns(bytes)?;
        return Ok(Delta {
            turns_offset,
            turns: DeltaTurns::Ptc(turns),
            token_counts: None,
        });
    }
    match crate::decode_chat::chat_session_delta(bytes) {
        Some((turns_offset, turns, token_counts)) => Ok(Delta {
            turns_offset,
            turns: DeltaTurns::Chat(turns),
            token_counts,
        }),
        None => chat_delta_tree(bytes),
    }
}

/// The reference decoder of a chat-form `session_render` request, through a
/// `serde_json::Value` tree: slower than the fast path, but with recap-core's exact
/// errors.
pub(crate) fn chat_delta_tree(bytes: &[u8]) -> Result<Delta, RequestError> {
    let mut obj = parse_object(bytes)?;
    let counts = counts_wire(&mut obj)?;
    let (offset, turns) = delta_parts(&mut obj)?;
    let turns = turns
        .into_iter()
        .enumerate()
        .map(|(i, mut json)| {
            lenient::turn(&mut json);
            ChatTurn::from_json(&json, &format!("turns[{}]", offset + i))
                .map_err(|e| RequestError(format!("request field {e}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    let token_counts = match counts.and_then(|c| c.turns) {
        None => None,
        Some(c) => {
            check_counts(&c, &turns, offset)?;
            Some(c)
        }
    };
    Ok(Delta {
        turns_offset: offset,
        turns: DeltaTurns::Chat(turns),
        token_counts,
    })
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

#[cfg(test)]
mod tests;
