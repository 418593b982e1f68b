//! Calling into a validated plugin: buffers are freed by the plugin exactly once,
//! nothing the plugin returns is trusted until it parsed, and no call takes longer than
//! the time limit ([`crate::time_limit`]).

use crate::time_limit::{self, TimedOut};
use recap_abi::ffi::{
    DescribeFn, FreeFn, RecapBuf, RenderFn, STATUS_OK, SessionCloseFn, SessionOpenFn,
    SessionRenderFn,
};
use recap_abi::wire::{self, Description, ErrorBody, Response};
use recap_core::{Message, RenderError, Role};
use std::ffi::c_void;
use std::fmt;
use std::ptr::NonNull;

/// The largest response a host accepts (a prompt larger than this is a bug).
pub const MAX_RESPONSE_BYTES: usize = 256 << 20;

/// What went wrong in one call into a plugin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallError {
    /// The plugin answered `{"error": ...}`; kind `panic` when it caught a panic.
    Plugin { status: i32, error: Box<ErrorBody> },
    /// The plugin's answer is not what the ABI promises.
    InvalidResponse { status: i32, reason: String },
    /// The call did not return within the time limit (or an earlier call to the same
    /// plugin did not, and the plugin is disabled).
    TimedOut(TimedOut),
}

impl CallError {
    fn invalid(status: i32, reason: impl Into<String>) -> Self {
        CallError::InvalidResponse {
            status,
            reason: reason.into(),
        }
    }

    /// The short class used as `RenderError::kind`.
    pub fn kind(&self) -> &str {
        match self {
            CallError::Plugin { error, .. } => &error.kind,
            CallError::InvalidResponse { .. } => "invalid_response",
            CallError::TimedOut(_) => "timeout",
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

/// A validated function table. Plain function pointers: `Send + Sync` and `Copy`, valid
/// forever because the library is never unloaded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Fns {
    pub render: RenderFn,
    pub free: FreeFn,
    pub describe: Option<DescribeFn>,
    pub sessions: Option<SessionFns>,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct SessionFns {
    pub open: SessionOpenFn,
    pub render: SessionRenderFn,
    pub close: SessionCloseFn,
}

/// A buffer the plugin handed out; freed through the plugin's `free` on drop (also when
/// parsing it panics in the host).
struct Returned {
    buf: RecapBuf,
    free: FreeFn,
}

impl Returned {
    fn bytes(&self) -> Result<&[u8], String> {
        if self.buf.ptr.is_null() {
            return Ok(&[]);
        }
        if self.buf.len > MAX_RESPONSE_BYTES {
            return Err(format!(
                "a response of {} bytes exceeds the {MAX_RESPONSE_BYTES}-byte limit",
                self.buf.len
            ));
        }
        // SAFETY: the plugin wrote a non-null (ptr, len) into `out`; the ABI requires
        // `len` readable bytes there until the buffer is passed to `free`, which only
        // happens when `self` drops, after this borrow ends.
        Ok(unsafe { std::slice::from_raw_parts(self.buf.ptr, self.buf.len) })
    }
}

impl Drop for Returned {
    fn drop(&mut self) {
        if self.buf.ptr.is_null() {
            return;
        }
        let buf = std::mem::replace(&mut self.buf, RecapBuf::EMPTY);
        // SAFETY: `buf` is exactly what this plugin wrote to an out parameter, passed
        // back once (it is replaced by EMPTY above); `free` is the same plugin's.
        unsafe { (self.free)(buf) };
    }
}

/// Calls `f` with a fresh out buffer and reads the status and bytes with `read`; the
/// buffer goes back to the plugin afterwards.
fn invoke<R>(
    free: FreeFn,
    f: impl FnOnce(*mut RecapBuf) -> i32,
    read: impl FnOnce(i32, &[u8]) -> Result<R, CallError>,
) -> Result<R, CallError> {
    let mut out = Returned {
        buf: RecapBuf::EMPTY,
        free,
    };
    let status = f(&mut out.buf);
    let bytes = out
        .bytes()
        .map_err(|reason| CallError::invalid(status, reason))?;
    read(status, bytes)
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
            match messages.iter().enumerate().find_map(misshapen) {
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
fn misshapen((i, m): (usize, &Message)) -> Option<String> {
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

/// Runs one call (`job`) into the plugin of `fns` within the time limit. The job owns
/// what it uses: on time-out it is abandoned still running.
fn limited<R: Send + 'static>(
    fns: &Fns,
    job: impl FnOnce() -> Result<R, CallError> + Send + 'static,
) -> Result<R, CallError> {
    // The render function's address names the plugin (one per loaded library).
    time_limit::run(fns.render as usize, job).unwrap_or_else(|t| Err(CallError::TimedOut(t)))
}

/// Full-request render: the complete messages.
pub(crate) fn render(fns: &Fns, request: &[u8]) -> Result<Vec<Message>, CallError> {
    let (fns_copy, request) = (*fns, request.to_vec());
    limited(fns, move || render_now(&fns_copy, &request))
}

fn render_now(fns: &Fns, request: &[u8]) -> Result<Vec<Message>, CallError> {
    invoke(
        fns.free,
        // SAFETY: `render` is the validated function of a live library; the request
        // slice outlives the call and `out` points at a writable RecapBuf.
        |out| unsafe { (fns.render)(request.as_ptr(), request.len(), out) },
        |status, bytes| {
            let response = parse_response(status, bytes)?;
            if response.messages_kept.is_some_and(|n| n > 0) {
                return Err(CallError::invalid(
                    status,
                    "messages_kept in a response to a full request",
                ));
            }
            Ok(response.messages.unwrap_or_default())
        },
    )
}

/// `describe` with the given request; `Ok(None)` when the plugin has no `describe`.
pub(crate) fn describe(fns: &Fns, request: &[u8]) -> Result<Option<Description>, CallError> {
    if fns.describe.is_none() {
        return Ok(None);
    }
    let (fns_copy, request) = (*fns, request.to_vec());
    limited(fns, move || describe_now(&fns_copy, &request))
}

fn describe_now(fns: &Fns, request: &[u8]) -> Result<Option<Description>, CallError> {
    let Some(describe) = fns.describe else {
        return Ok(None);
    };
    invoke(
        fns.free,
        // SAFETY: as in `render`.
        |out| unsafe { describe(request.as_ptr(), request.len(), out) },
        |status, bytes| {
            if status != STATUS_OK {
                return Err(match parse_response(status, bytes) {
                    Err(e) => e,
                    Ok(_) => CallError::invalid(status, "a non-zero status without an error"),
                });
            }
            serde_json::from_slice::<Description>(bytes)
                .map(Some)
                .map_err(|e| {
                    CallError::invalid(
                        status,
                        format!(
                            "not a description: {e}; the response starts {}",
                            excerpt(bytes)
                        ),
                    )
                })
        },
    )
}

/// An open plugin-side session, closed on drop.
pub(crate) struct SessionHandle {
    ptr: NonNull<c_void>,
    fns: SessionFns,
    free: FreeFn,
    /// The plugin ([`Fns`]) this session belongs to, for the time limit.
    plugin: Fns,
    /// A call on this session timed out and may still be running: never close it.
    abandoned: bool,
}

/// A session handle on its way to the thread that makes one call with it.
struct SendHandle(NonNull<c_void>);

// SAFETY: as for `SessionHandle`: the handle is used by one thread at a time — the
// caller waits for the call that uses it, or abandons the handle for good on time-out.
unsafe impl Send for SendHandle {}

// SAFETY: the ABI lets a session handle be used from any thread as long as one thread
// at a time does; `SessionHandle` is only used through `&mut self`, so moving it to
// another thread (the harness renders sessions on a pool) cannot overlap calls.
unsafe impl Send for SessionHandle {}

impl SessionHandle {
    pub(crate) fn open(fns: &Fns, sessions: SessionFns, request: &[u8]) -> Result<Self, CallError> {
        let (fns_copy, request) = (*fns, request.to_vec());
        // A session opened by a call that timed out is never seen (nor closed).
        limited(fns, move || Self::open_now(&fns_copy, sessions, &request))
    }

    fn open_now(fns: &Fns, sessions: SessionFns, request: &[u8]) -> Result<Self, CallError> {
        let mut handle: *mut c_void = std::ptr::null_mut();
        let handle_out: *mut *mut c_void = &mut handle;
        invoke(
            fns.free,
            // SAFETY: as in `render`; `handle_out` points at a writable pointer.
            |out| unsafe { (sessions.open)(request.as_ptr(), request.len(), handle_out, out) },
            |status, bytes| {
                if status == STATUS_OK {
                    return Ok(());
                }
                Err(match parse_response(status, bytes) {
                    Err(e) => e,
                    Ok(_) => CallError::invalid(status, "a non-zero status without an error"),
                })
            },
        )?;
        let ptr = NonNull::new(handle).ok_or_else(|| {
            CallError::invalid(STATUS_OK, "session_open succeeded but gave no handle")
        })?;
        Ok(Self {
            ptr,
            fns: sessions,
            free: fns.free,
            plugin: *fns,
            abandoned: false,
        })
    }

    /// Sends a turns delta; returns `(messages_kept, new messages)`. The request
    /// buffer travels to the thread making the call and comes back for reuse (it is
    /// left empty when the call timed out).
    pub(crate) fn render(
        &mut self,
        request: &mut Vec<u8>,
    ) -> Result<(usize, Vec<Message>), CallError> {
        let (handle, fns, free) = (SendHandle(self.ptr), self.fns, self.free);
        let buffer = std::mem::take(request);
        let result = limited(&self.plugin, move || {
            let handle = handle;
            let result = Self::render_now(handle.0, fns, free, &buffer);
            Ok((result, buffer))
        });
        match result {
            Ok((result, buffer)) => {
                *request = buffer;
                result
            }
            Err(e) => {
                if matches!(e, CallError::TimedOut(TimedOut { earlier: false, .. })) {
                    self.abandoned = true;
                }
                Err(e)
            }
        }
    }

    fn render_now(
        handle: NonNull<c_void>,
        fns: SessionFns,
        free: FreeFn,
        request: &[u8],
    ) -> Result<(usize, Vec<Message>), CallError> {
        let session = handle.as_ptr();
        invoke(
            free,
            // SAFETY: `session` is a live handle of this plugin used by this thread only
            // (the caller holds `&mut SessionHandle` and waits, or has abandoned the
            // handle); the request outlives the call; `out` is writable.
            |out| unsafe { (fns.render)(session, request.as_ptr(), request.len(), out) },
            |status, bytes| {
                let response = parse_response(status, bytes)?;
                Ok((
                    response.messages_kept.unwrap_or(0),
                    response.messages.unwrap_or_default(),
                ))
            },
        )
    }
}

impl Drop for SessionHandle {
    fn drop(&mut self) {
        if self.abandoned {
            // A timed-out call may still be using the session: leak it.
            return;
        }
        let (handle, close) = (SendHandle(self.ptr), self.fns.close);
        // Closing runs plugin code (its drop of the session) like any other call, so it
        // runs under the time limit too: a close that hangs marks the plugin hung
        // instead of hanging the caller. There is no one to report an error to here.
        let _ = time_limit::run(self.plugin.render as usize, move || {
            let handle = handle;
            // SAFETY: the handle came from this plugin's `session_open`, no call is
            // using it (the owner is being dropped and no call timed out), and it is
            // closed exactly once, here.
            unsafe { close(handle.0.as_ptr()) };
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reason(text: &str) -> String {
        match parse_response(STATUS_OK, text.as_bytes()) {
            Err(CallError::InvalidResponse { reason, .. }) => reason,
            other => panic!("{text}: {other:?}"),
        }
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
