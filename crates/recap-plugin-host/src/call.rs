//! What a plugin answers, and what can go wrong in a call: nothing the plugin returns
//! is trusted until it parsed. The same readers serve in-process calls and calls into
//! a worker process, so both report the same errors.

use crate::time_limit::{self, TimedOut};
use recap_abi::ffi::STATUS_OK;
use recap_abi::wire::{self, Description, ErrorBody, Response, Reuse};
use recap_core::{Message, RenderError, Role};
use std::fmt;
use std::time::Duration;

/// The largest response a host accepts (a prompt larger than this is a bug).
pub const MAX_RESPONSE_BYTES: usize = 256 << 20;

/// `" in session S at call K"`, or nothing.
fn located(at: &Option<(String, usize)>) -> String {
    match at {
        Some((session, call)) => format!(" in session {session:?} at call {call}"),
        None => String::new(),
    }
}

impl fmt::Display for WorkerFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = located(&self.at);
        match &self.event {
            WorkerEvent::Died {
                how,
                stderr,
                memory_limit,
            } => {
                write!(f, "the worker process died{at}: {how}")?;
                if let Some(limit) = memory_limit {
                    write!(f, " (its memory limit is {})", show_bytes(*limit))?;
                }
                if !stderr.is_empty() {
                    write!(f, "; it last wrote on stderr: {stderr:?}")?;
                }
            }
            WorkerEvent::Garbage { detail } => write!(
                f,
                "the worker process wrote bytes that are not a frame of the worker protocol{at} \
                 ({detail}); it was stopped"
            )?,
            WorkerEvent::TimedOut { limit } => write!(
                f,
                "the call did not return within the {limit:?} time limit (--plugin-timeout, \
                 or ${}){at}; the worker process was killed",
                time_limit::TIME_LIMIT_ENV
            )?,
            WorkerEvent::EarlierInSession { call } => write!(
                f,
                "not sent{at}: the worker process failed at call {call} of this session, and \
                 the rest of a session is not sent to a new worker"
            )?,
            WorkerEvent::Disabled { deaths, limit } => write!(
                f,
                "the plugin is disabled{at}: its worker processes failed {deaths} time{}, and \
                 the restart limit is {limit}",
                if *deaths == 1 { "" } else { "s" }
            )?,
            WorkerEvent::Unavailable { detail } => {
                write!(f, "no worker process could be started{at}: {detail}")?
            }
        }
        match self.then {
            Then::Restart => write!(f, "; the next session gets a new worker"),
            Then::Disable { deaths, limit } => write!(
                f,
                "; that is {deaths} failure{}, past the restart limit of {limit}: the plugin \
                 is disabled for the rest of this process",
                if deaths == 1 { "" } else { "s" }
            ),
            Then::Nothing => Ok(()),
        }
    }
}

/// What went wrong in one call into a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The plugin answered `{"error": ...}`; kind `panic` when it caught a panic.
    Plugin { status: i32, error: Box<ErrorBody> },
    /// The plugin's answer is not what the ABI promises.
    InvalidResponse { status: i32, reason: String },
    /// The answer is larger than [`MAX_RESPONSE_BYTES`]: refused unread.
    TooLarge { status: i32, len: usize },
    /// The call did not return within the time limit (or an earlier call to the same
    /// plugin did not, and the plugin is disabled).
    TimedOut(TimedOut),
    /// The worker process of an isolated plugin died, misbehaved or overran.
    Worker(Box<WorkerFailure>),
}

/// What happened to an isolated plugin's worker process, where, and what comes next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorkerFailure {
    pub event: WorkerEvent,
    /// The session and call it happened in, when a session made the call.
    pub at: Option<(String, usize)>,
    pub then: Then,
}

/// What a worker process did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum WorkerEvent {
    /// It died during the call: how (`killed by signal 6 (SIGABRT)`, `exited with
    /// status 0`), the end of what it wrote on stderr, and its memory limit.
    Died {
        how: String,
        stderr: String,
        memory_limit: Option<u64>,
    },
    /// It wrote bytes that are not a frame of the worker protocol; it was stopped.
    Garbage { detail: String },
    /// The call did not return within the limit; the worker was killed.
    TimedOut { limit: Duration },
    /// The session's worker died at an earlier call; the rest of the session is not
    /// sent to the plugin.
    EarlierInSession { call: usize },
    /// Workers died as many times as the restart limit allows: the plugin is disabled.
    Disabled { deaths: u32, limit: u32 },
    /// No worker process could be started.
    Unavailable { detail: String },
}

/// What becomes of the plugin after a worker failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Then {
    /// The next session gets a new worker.
    Restart,
    /// That was the last restart the limit allows: the plugin is disabled.
    Disable { deaths: u32, limit: u32 },
    /// Nothing new (the failure only repeats an earlier one).
    Nothing,
}

impl CallError {
    pub(crate) fn invalid(status: i32, reason: impl Into<String>) -> Self {
        CallError::InvalidResponse {
            status,
            reason: reason.into(),
        }
    }

    /// The short class used as `RenderError::kind`.
    pub fn kind(&self) -> &str {
        match self {
            CallError::Plugin { error, .. } => &error.kind,
            CallError::InvalidResponse { .. } | CallError::TooLarge { .. } => "invalid_response",
            CallError::TimedOut(_) => "timeout",
            CallError::Worker(w) => match w.event {
                WorkerEvent::TimedOut { .. } => "timeout",
                _ => "crash",
            },
        }
    }

    pub fn into_render_error(self, plugin: &str) -> RenderError {
        RenderError::new(self.kind().to_string(), format!("plugin {plugin}: {self}"))
    }
}

impl fmt::Display for CallError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CallError::Plugin { error, .. } if error.kind == wire::KIND_PANIC => {
                write!(f, "the plugin panicked: {}", error.message)
            }
            CallError::Plugin { status, error } => write!(
                f,
                "the plugin returned an error response (status {status}, kind {:?}): {}",
                error.kind, error.message
            ),
            CallError::InvalidResponse { status, reason } => {
                write!(
                    f,
                    "invalid JSON back from the plugin (status {status}): {reason}"
                )
            }
            CallError::TooLarge { status, len } => write!(
                f,
                "the plugin answered (status {status}) a response of {len} bytes, which \
                 exceeds the {MAX_RESPONSE_BYTES}-byte limit (256 MiB); it was not read"
            ),
            CallError::Worker(w) => w.fmt(f),
            CallError::TimedOut(TimedOut {
                limit,
                earlier: false,
            }) => write!(
                f,
                "the call did not return within the {limit:?} time limit (--plugin-timeout, \
                 or ${}); it was abandoned and the plugin is disabled for the rest of this \
                 process",
                time_limit::TIME_LIMIT_ENV
            ),
            CallError::TimedOut(TimedOut {
                limit,
                earlier: true,
            }) => write!(
                f,
                "the plugin is disabled: an earlier call did not return within the {limit:?} time limit"
            ),
        }
    }
}

fn excerpt(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(&bytes[..bytes.len().min(80)]);
    format!("{text:?}{}", if bytes.len() > 80 { "…" } else { "" })
}

/// Parses the bytes a plugin answered with `status`; an error response becomes
/// `CallError::Plugin`. Public so that the fuzz target and tests can reach the one
/// parser every plugin answer goes through.
pub fn parse_response(status: i32, bytes: &[u8]) -> Result<Response, CallError> {
    let response = Response::from_slice(bytes).map_err(|e| {
        CallError::invalid(
            status,
            format!("{e}; the response starts {}", excerpt(bytes)),
        )
    })?;
    match (&response.messages, &response.error, status) {
        (_, Some(error), _) => Err(CallError::Plugin {
            status,
            error: Box::new(error.clone()),
        }),
        (Some(messages), None, STATUS_OK) => {
            match messages
                .iter()
                .enumerate()
                .find_map(|(i, m)| misshapen(response.item_index(i), m))
            {
                Some(reason) => Err(CallError::invalid(status, reason)),
                None => Ok(response),
            }
        }
        (Some(_), None, _) => Err(CallError::invalid(
            status,
            "a non-zero status with messages instead of an error",
        )),
        (None, None, _) => Err(CallError::invalid(
            status,
            format!("neither \"messages\" nor \"error\" in {}", excerpt(bytes)),
        )),
    }
}

/// What is wrong with message `i`, when it carries a field its role cannot have: tool
/// calls belong to ASSISTANT messages, a call id (and a tool name) to TOOL messages,
/// which need the id (provider APIs refuse a result that names no call).
fn misshapen(i: usize, m: &Message) -> Option<String> {
    let role = m.role;
    let problem = if !m.tool_calls.is_empty() && role != Role::Assistant {
        "tool_calls on a message that is not an assistant message"
    } else if role == Role::Tool && m.tool_call_id.is_none() {
        "a tool message without tool_call_id"
    } else if role != Role::Tool && m.tool_call_id.is_some() {
        "tool_call_id on a message that is not a tool message"
    } else if role != Role::Tool && m.name.is_some() {
        "name on a message that is not a tool message"
    } else {
        return None;
    };
    Some(format!("messages[{i}] ({role}): {problem}"))
}

/// Reads the answer to a full render request.
pub(crate) fn read_render(status: i32, bytes: &[u8]) -> Result<Vec<Message>, CallError> {
    let response = parse_response(status, bytes)?;
    if response.messages_kept.is_some_and(|n| n > 0) {
        return Err(CallError::invalid(
            status,
            "messages_kept in a response to a full request",
        ));
    }
    if !response.reused.is_empty() {
        return Err(CallError::invalid(
            status,
            "a {\"previous\": [from, to]} item in a response to a full request (there is no previous response)",
        ));
    }
    Ok(response.messages.unwrap_or_default())
}

/// An error response to a call whose success carries no messages (`describe`,
/// `session_open`).
fn refusal(status: i32, bytes: &[u8]) -> CallError {
    match parse_response(status, bytes) {
        Err(e) => e,
        Ok(_) => CallError::invalid(status, "a non-zero status without an error"),
    }
}

/// Reads the answer to `describe`.
pub(crate) fn read_describe(status: i32, bytes: &[u8]) -> Result<Description, CallError> {
    if status != STATUS_OK {
        return Err(refusal(status, bytes));
    }
    serde_json::from_slice::<Description>(bytes).map_err(|e| {
        CallError::invalid(
            status,
            format!(
                "not a description: {e}; the response starts {}",
                excerpt(bytes)
            ),
        )
    })
}

/// Reads the answer to `session_open` (the handle is checked by the caller).
pub(crate) fn read_open(status: i32, bytes: &[u8]) -> Result<(), CallError> {
    if status == STATUS_OK {
        Ok(())
    } else {
        Err(refusal(status, bytes))
    }
}

/// `session_open` succeeded without writing a handle.
pub(crate) fn no_handle() -> CallError {
    CallError::invalid(STATUS_OK, "session_open succeeded but gave no handle")
}

/// Reads the answer to `session_render`: `(messages_kept, new messages)`.
pub(crate) fn read_session_render(
    status: i32,
    bytes: &[u8],
) -> Result<(usize, Vec<Message>, Vec<Reuse>), CallError> {
    let response = parse_response(status, bytes)?;
    Ok((
        response.messages_kept.unwrap_or(0),
        response.messages.unwrap_or_default(),
        response.reused,
    ))
}

type SessionAnswer = (usize, Vec<Message>, Vec<Reuse>);

thread_local! {
    /// The last session answer this thread read.
    static LAST_ANSWER: std::cell::RefCell<recap_abi::last_read::LastRead<SessionAnswer>> =
        const { std::cell::RefCell::new(recap_abi::last_read::LastRead::new()) };
}

/// [`read_session_render`], read once for two sessions. recap renders every call twice,
/// through two independent plugin-side sessions (its determinism check), and a
/// deterministic plugin answers both with the same bytes, one after the other on the
/// same thread: the second answer is a copy of the first's (its texts shared, which
/// also makes the check's comparison of the two prompts a comparison of pointers). A
/// read is a function of the status and the bytes alone, so this changes no answer.
pub(crate) fn read_session_render_once(
    status: i32,
    bytes: &[u8],
) -> Result<SessionAnswer, CallError> {
    // The status is part of what is read (a tag); as u32 so that no two statuses meet.
    let tag = u64::from(status as u32);
    LAST_ANSWER.with(|last| {
        last.borrow_mut()
            .read(tag, bytes, |b| read_session_render(status, b))
    })
}

/// `512 MiB`, `1.5 GiB`, `700 KiB`, `12 bytes`.
pub(crate) fn show_bytes(n: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if n >= size {
            let value = n as f64 / size as f64;
            return if n.is_multiple_of(size) {
                format!("{} {unit}", n / size)
            } else {
                format!("{value:.1} {unit}")
            };
        }
    }
    format!("{n} bytes")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The second of two equal answers in a row is the first's, read once: equal to a
    /// read of its own, its texts shared with the first's.
    #[test]
    fn byte_sizes_read_well() {
        assert_eq!(show_bytes(256 << 20), "256 MiB");
        assert_eq!(show_bytes(3 << 29), "1.5 GiB");
        assert_eq!(show_bytes(12), "12 bytes");
    }

    #[test]
    fn an_answer_read_twice_in_a_row_is_read_once_and_alike() {
        let text = br#"{"messages":[{"role":"user","content":"hello"},{"previous":[0,1]}],"messages_kept":2}"#;
        let reference = read_session_render(STATUS_OK, text).expect("an answer");
        let a = read_session_render_once(STATUS_OK, text).expect("an answer");
        let b = read_session_render_once(STATUS_OK, text).expect("an answer");
        assert_eq!(a, reference);
        assert_eq!(b, reference);
        assert!(recap_core::Text::ptr_eq(&a.1[0].content, &b.1[0].content));
        let other = br#"{"messages":[{"role":"user","content":"hello"}],"messages_kept":0}"#;
        assert_eq!(
            read_session_render_once(STATUS_OK, other).ok(),
            read_session_render(STATUS_OK, other).ok()
        );
        assert!(read_session_render_once(STATUS_OK, b"{").is_err());
        assert!(read_session_render_once(STATUS_OK, b"{").is_err());
    }

    fn reason(text: &str) -> String {
        match parse_response(STATUS_OK, text.as_bytes()) {
            Err(CallError::InvalidResponse { reason, .. }) => reason,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn references_to_earlier_messages_belong_to_sessions_only() {
        let text = br#"{"messages":[{"role":"system","content":"s"},{"previous":[0,1]}]}"#;
        match read_render(STATUS_OK, text) {
            Err(CallError::InvalidResponse { reason, .. }) => {
                assert!(
                    reason.contains("in a response to a full request"),
                    "{reason}"
                );
            }
            other => panic!("{other:?}"),
        }
        let (kept, new, reused) = read_session_render(STATUS_OK, text).expect("a session answer");
        assert_eq!((kept, new.len()), (0, 1));
        assert_eq!(
            reused,
            vec![Reuse {
                at: 1,
                from: 0,
                to: 1
            }]
        );
        // A misshapen message is named by its place in the array, references counted.
        let text =
            r#"{"messages":[{"previous":[0,2]},{"role":"user","content":"u","tool_call_id":"c"}]}"#;
        assert!(
            reason(text).starts_with("messages[1] (user)"),
            "{}",
            reason(text)
        );
    }

    #[test]
    fn tool_fields_only_on_the_roles_that_have_them() {
        let ok = r#"{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","name":"f","arguments":"{}"}]},
            {"role":"tool","tool_call_id":"c","name":"f","content":"r"}]}"#;
        let messages = parse_response(STATUS_OK, ok.as_bytes())
            .unwrap()
            .messages
            .unwrap();
        assert_eq!(messages[1], Message::tool("c", Some("f".into()), "r"));
        for (text, want) in [
            (
                r#"{"messages":[{"role":"tool","content":"r"}]}"#,
                "messages[0] (tool): a tool message without tool_call_id",
            ),
            (
                r#"{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u","tool_calls":[{"id":"c","name":"f","arguments":""}]}]}"#,
                "messages[1] (user): tool_calls on a message that is not an assistant message",
            ),
            (
                r#"{"messages":[{"role":"assistant","content":"a","tool_call_id":"c"}]}"#,
                "messages[0] (assistant): tool_call_id on a message that is not a tool message",
            ),
            (
                r#"{"messages":[{"role":"user","content":"u","name":"bob"}]}"#,
                "messages[0] (user): name on a message that is not a tool message",
            ),
        ] {
            assert_eq!(reason(text), want, "{text}");
        }
    }
}
