//! The plugin side: implement [`Plugin`] for a [`Strategy`] and call
//! [`export_strategy!`](crate::export_strategy) once in a `cdylib` crate.
//!
//! Every entry point runs its body inside `catch_unwind` and turns a panic into an
//! error response of kind `panic`: a panic must never unwind into the host (that
//! aborts the process). The generic entry points are instantiated in the plugin crate,
//! so they are compiled by the plugin's compiler; only the C layer is shared.
//!
//! The strategy's [`Strategy::forms`] are declared through `describe`; a request in
//! another form is refused (`unsupported_form`; a host never sends one). A strategy
//! that keeps a token budget reads the host's counts through
//! [`Plugin::render_with_tokens`].

use crate::ffi::{
    ABI_MAJOR, ABI_MINOR, DESCRIPTOR_V1_SIZE, MAGIC, PluginDescriptorV1, RecapBuf, RecapStr,
    STATUS_BAD_REQUEST, STATUS_ERROR, STATUS_OK, STATUS_PANIC,
};
use crate::last_read::LastRead;
use crate::tokens::TokenCounts;
use crate::wire::{self, Description, ErrorBody, InvariantWire, OptionWire};
use recap_core::{
    Form, Message, OptionInfo, PromptDelta, RenderError, RenderRequest, Replay, Session, SpecError,
    Strategy, StrategySpec, render_call,
};
use std::collections::BTreeMap;
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};

mod held;
use held::{Held, Turns};

/// A strategy that can be exported as a plugin.
pub trait Plugin: Strategy + Sized + 'static {
    /// The name in spec strings: `[a-z0-9][a-z0-9_-]{0,63}` (checked at compile time).
    const NAME: &'static str;
    /// The plugin's own version, for reports.
    const VERSION: &'static str;
    /// One line for `recap strategies`.
    const SUMMARY: &'static str = "";

    /// Every option key the strategy accepts, with its default. Keys not listed are
    /// rejected before [`Plugin::from_spec`] is called.
    fn options() -> Vec<OptionInfo> {
        Vec::new()
    }

    /// Builds an instance from `name:key=value,...`; must succeed with no options.
    fn from_spec(spec: &StrategySpec) -> Result<Self, SpecError>;

    /// Whether the strategy reads the host's token counts: then every call is rendered
    /// with [`Plugin::render_with_tokens`] instead of the strategy's replay.
    const USES_TOKEN_COUNTS: bool = false;

    /// Call `k` of `session` rendered with the per-message token counts the host sends
    /// with chat requests (counted with the run's tokenizer; `None` when the run has
    /// none, and always for PTC-Lisp requests). `tokens.turns` has one list per turn of
    /// the session. Called only when [`Plugin::USES_TOKEN_COUNTS`] is set; the default
    /// ignores the counts ([`render_call`]).
    fn render_with_tokens(
        &self,
        session: &Session,
        k: usize,
        tokens: Option<&TokenCounts>,
    ) -> Result<Vec<Message>, RenderError> {
        let _ = tokens;
        render_call(self, session, k)
    }
}

/// `[a-z0-9][a-z0-9_-]{0,63}`: what a plugin's strategy name must look like. Names end
/// up in spec strings, where `:`, `,` and `=` are syntax.
pub const fn is_valid_name(name: &str) -> bool {
    let b = name.as_bytes();
    if b.is_empty() || b.len() > 64 {
        return false;
    }
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let ok =
            c.is_ascii_lowercase() || c.is_ascii_digit() || (i > 0 && (c == b'-' || c == b'_'));
        if !ok {
            return false;
        }
        i += 1;
    }
    true
}

/// The descriptor for `T`; `export_strategy!` puts it in a `static`.
pub const fn descriptor<T: Plugin>() -> PluginDescriptorV1 {
    PluginDescriptorV1 {
        magic: MAGIC,
        size: DESCRIPTOR_V1_SIZE,
        abi_major: ABI_MAJOR,
        abi_minor: ABI_MINOR,
        name: RecapStr::from_static(T::NAME),
        version: RecapStr::from_static(T::VERSION),
        render: Some(render::<T>),
        free: Some(free_buffer),
        describe: Some(describe::<T>),
        session_open: Some(session_open::<T>),
        session_render: Some(session_render::<T>),
        session_close: Some(session_close::<T>),
    }
}

/// Exports a [`Plugin`] type through the C ABI: defines the probe
/// `recap_strategy_abi_version` and the descriptor entry `recap_strategy_plugin_v1`.
/// Use it once per `cdylib` crate.
///
/// ```ignore
/// recap_abi::export_strategy!(MyStrategy);
/// ```
#[macro_export]
macro_rules! export_strategy {
    ($ty:ty) => {
        #[cfg(not(panic = "unwind"))]
        compile_error!(
            "recap strategy plugins need panic = \"unwind\": the SDK turns panics into error responses"
        );

        const _: () = assert!(
            $crate::sdk::is_valid_name(<$ty as $crate::Plugin>::NAME),
            "Plugin::NAME must match [a-z0-9][a-z0-9_-]{{0,63}}"
        );

        /// The frozen ABI probe: the ABI major this plugin speaks.
        // SAFETY: the name is reserved for this ABI; a library exports it once (this
        // macro is used once per cdylib), with the frozen signature `uint32_t (void)`.
        #[unsafe(no_mangle)]
        pub extern "C" fn recap_strategy_abi_version() -> u32 {
            $crate::ABI_MAJOR
        }

        /// The v1 descriptor, valid for the life of the process.
        // SAFETY: as above; the signature is the one ABI 1 fixes.
        #[unsafe(no_mangle)]
        pub extern "C" fn recap_strategy_plugin_v1() -> *const $crate::PluginDescriptorV1 {
            static DESCRIPTOR: $crate::PluginDescriptorV1 = $crate::sdk::descriptor::<$ty>();
            &DESCRIPTOR
        }
    };
}

/// Why an entry point failed: its status and the error it reports.
#[derive(Debug)]
struct Failure {
    status: i32,
    error: ErrorBody,
}

impl Failure {
    fn bad_request(message: impl Into<String>) -> Self {
        Self {
            status: STATUS_BAD_REQUEST,
            error: ErrorBody::new(wire::KIND_BAD_REQUEST, message),
        }
    }
}

impl From<wire::RequestError> for Failure {
    fn from(e: wire::RequestError) -> Self {
        Self::bad_request(e.0)
    }
}

impl From<SpecError> for Failure {
    fn from(e: SpecError) -> Self {
        // For a bad value the message is only what was expected, so that a host can
        // rebuild its own "option key=value: expected ..." error without repeating it.
        let error = match &e {
            SpecError::BadValue {
                key,
                value,
                expected,
                ..
            } => ErrorBody {
                kind: wire::KIND_INVALID_OPTIONS.to_string(),
                message: expected.clone(),
                key: Some(key.clone()),
                value: Some(value.clone()),
            },
            SpecError::UnknownOption { key, .. } => ErrorBody {
                kind: wire::KIND_INVALID_OPTIONS.to_string(),
                message: e.to_string(),
                key: Some(key.clone()),
                value: None,
            },
            other => ErrorBody::new(wire::KIND_INVALID_OPTIONS, other.to_string()),
        };
        Self {
            status: STATUS_ERROR,
            error,
        }
    }
}

impl From<recap_core::RenderError> for Failure {
    fn from(e: recap_core::RenderError) -> Self {
        Self {
            status: STATUS_ERROR,
            error: ErrorBody::new(e.kind, e.message),
        }
    }
}

fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    let message = if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_string()
    };
    // Dropping the payload runs arbitrary Drop code, which could panic again outside
    // any catch_unwind; leaking one small box per caught panic is the safe choice.
    std::mem::forget(payload);
    message
}

thread_local! {
    /// Set while [`guarded`] runs a body: a panic then becomes an error response.
    static GUARDING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    /// Where the last panic under [`guarded`] happened.
    static PANICKED_AT: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// A plugin's panics are reported through the host (once per call in its report), so
/// the plugin's own runtime must not also print each one on the host's stderr: the
/// panic hook stays quiet under [`guarded`] and keeps the location for the error
/// message; other panics go to the hook that was there before.
fn install_quiet_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if GUARDING.with(std::cell::Cell::get) {
                let at = info.location().map(|l| l.to_string());
                PANICKED_AT.with(|p| *p.borrow_mut() = at);
            } else {
                previous(info);
            }
        }));
    });
}

/// Runs `body`, catching panics; returns the status and the bytes to hand out.
fn guarded(body: impl FnOnce() -> Result<Vec<u8>, Failure>) -> (i32, Vec<u8>) {
    install_quiet_panic_hook();
    let was_guarding = GUARDING.with(|g| g.replace(true));
    let caught = catch_unwind(AssertUnwindSafe(body));
    GUARDING.with(|g| g.set(was_guarding));
    let failure = match caught {
        Ok(Ok(bytes)) => return (STATUS_OK, bytes),
        Ok(Err(failure)) => failure,
        Err(payload) => {
            let at = PANICKED_AT
                .with(|p| p.borrow_mut().take())
                .map(|l| format!(" at {l}"))
                .unwrap_or_default();
            Failure {
                status: STATUS_PANIC,
                error: ErrorBody::new(
                    wire::KIND_PANIC,
                    format!("the strategy panicked{at}: {}", panic_message(payload)),
                ),
            }
        }
    };
    (failure.status, wire::error_response(&failure.error))
}

/// Borrows the request bytes.
///
/// # Safety
/// `ptr` must be null (then `len` must be 0) or point to `len` readable bytes that stay
/// valid and unmodified for `'a`.
unsafe fn request_bytes<'a>(ptr: *const u8, len: usize) -> Option<&'a [u8]> {
    if ptr.is_null() {
        return (len == 0).then_some(&[][..]);
    }
    // SAFETY: non-null, and the caller guarantees `len` readable bytes for 'a (the ABI
    // contract: the host owns the request and keeps it alive for the call).
    Some(unsafe { std::slice::from_raw_parts(ptr, len) })
}

/// Hands `bytes` to the host through `out`.
///
/// # Safety
/// `out` must be valid for a write of one `RecapBuf`.
unsafe fn hand_out(out: *mut RecapBuf, bytes: Vec<u8>) {
    let mut bytes = std::mem::ManuallyDrop::new(bytes);
    let buf = RecapBuf {
        ptr: bytes.as_mut_ptr(),
        len: bytes.len(),
        cap: bytes.capacity(),
    };
    // SAFETY: the caller guarantees `out` is writable; `write` does not read or drop
    // whatever garbage the host left there.
    unsafe { out.write(buf) };
}

/// The shared shape of every entry point with a request and an out buffer.
///
/// # Safety
/// `request`/`len` as for [`request_bytes`]; `out` null or writable.
unsafe fn entry(
    request: *const u8,
    len: usize,
    out: *mut RecapBuf,
    body: impl FnOnce(&[u8]) -> Result<Vec<u8>, Failure>,
) -> i32 {
    if out.is_null() {
        return STATUS_BAD_REQUEST;
    }
    // SAFETY: forwarded from this function's contract.
    let input = unsafe { request_bytes(request, len) };
    let (status, bytes) = match input {
        Some(input) => guarded(|| body(input)),
        None => guarded(|| {
            Err(Failure::bad_request(
                "null request pointer with a non-zero length",
            ))
        }),
    };
    // SAFETY: `out` is non-null and, by contract, writable.
    unsafe { hand_out(out, bytes) };
    status
}

fn build<T: Plugin>(options: BTreeMap<String, String>) -> Result<T, Failure> {
    let known = T::options();
    for key in options.keys() {
        if !known.iter().any(|o| &o.key == key) {
            let known = if known.is_empty() {
                "none".to_string()
            } else {
                known
                    .iter()
                    .map(|o| o.key.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            return Err(SpecError::UnknownOption {
                strategy: T::NAME.to_string(),
                key: key.clone(),
                known,
            }
            .into());
        }
    }
    let spec = StrategySpec {
        name: T::NAME.to_string(),
        options,
    };
    Ok(T::from_spec(&spec)?)
}

/// Refuses a session in a form the strategy does not declare (a host never sends one;
/// the check keeps a strategy from rendering what it was not written for).
fn check_form<T: Plugin>(strategy: &T, form: Form) -> Result<(), Failure> {
    if strategy.forms().contains(&form) {
        return Ok(());
    }
    Err(Failure {
        status: STATUS_ERROR,
        error: ErrorBody::new(
            wire::KIND_UNSUPPORTED_FORM,
            format!("{} does not render {form}-form sessions", T::NAME),
        ),
    })
}

/// The call after every turn of `session`.
fn render_all_turns<T: Plugin>(
    strategy: &T,
    session: &Session,
    tokens: Option<&TokenCounts>,
) -> Result<Vec<Message>, Failure> {
    let k = session.turn_count();
    RenderRequest::for_call(session, k).map_err(|e| Failure::bad_request(e.to_string()))?;
    if T::USES_TOKEN_COUNTS {
        return Ok(strategy.render_with_tokens(session, k, tokens)?);
    }
    Ok(render_call(strategy, session, k)?)
}

/// `render` for `T`: builds the strategy from the request's options and renders.
///
/// # Safety
/// The ABI contract of [`crate::ffi::RenderFn`].
pub unsafe extern "C" fn render<T: Plugin>(
    request: *const u8,
    request_len: usize,
    out: *mut RecapBuf,
) -> i32 {
    // SAFETY: forwarded from the ABI contract of `render`.
    unsafe {
        entry(request, request_len, out, |bytes| {
            let request = wire::decode_request(bytes)?;
            let strategy = build::<T>(request.options)?;
            check_form(&strategy, request.session.form)?;
            let messages =
                render_all_turns(&strategy, &request.session, request.token_counts.as_ref())?;
            Ok(wire::messages_response(&messages, None))
        })
    }
}

/// `describe` for `T`: the options schema and the instance's spec and invariants.
///
/// # Safety
/// The ABI contract of [`crate::ffi::DescribeFn`].
pub unsafe extern "C" fn describe<T: Plugin>(
    request: *const u8,
    request_len: usize,
    out: *mut RecapBuf,
) -> i32 {
    // SAFETY: forwarded from the ABI contract of `describe`.
    unsafe {
        entry(request, request_len, out, |bytes| {
            let options = wire::decode_describe_request(bytes)?;
            let strategy = build::<T>(options)?;
            let description = Description {
                name: T::NAME.to_string(),
                version: T::VERSION.to_string(),
                summary: T::SUMMARY.to_string(),
                spec: Some(strategy.spec()),
                options: T::options().iter().map(OptionWire::from).collect(),
                invariants: strategy
                    .invariants()
                    .iter()
                    .map(InvariantWire::from)
                    .collect(),
                forms: Some(
                    strategy
                        .forms()
                        .iter()
                        .map(|f| f.as_str().to_string())
                        .collect(),
                ),
            };
            Ok(wire::description_response(&description))
        })
    }
}

/// `free` for every SDK plugin: rebuilds and drops the `Vec` behind a buffer.
///
/// # Safety
/// `buf` must be null or a triple this plugin wrote to an `out` parameter, not yet freed.
pub unsafe extern "C" fn free_buffer(buf: RecapBuf) {
    if buf.ptr.is_null() {
        return;
    }
    // SAFETY: by contract `buf` is exactly the (ptr, len, cap) of a Vec<u8> that
    // `hand_out` leaked in this library, so this allocator owns it; freed once.
    drop(unsafe { Vec::from_raw_parts(buf.ptr, buf.len, buf.cap) });
}

/// The plugin side of one open session.
struct SdkSession<T> {
    strategy: T,
    form: Form,
    /// The turns held and the host's token counts of them (chat sessions, when sent):
    /// this session's own, or a pair's.
    held: Held,
    /// The strategy's replay of this session (its own, never a pair's).
    replay: Box<dyn Replay>,
    /// The messages of the previous response, for `messages_kept` and references.
    previous: Vec<Message>,
    /// Whether `previous` is what the strategy's state rendered last (not after a
    /// failed render), so the strategy may answer relative to it.
    previous_rendered: bool,
    /// The host reads `{"previous": [from, to]}` items (ABI 1.2).
    host_reads_references: bool,
    /// Set while a call is running; a call that did not finish (panic) leaves the
    /// session in an unknown state, and later calls refuse to use it.
    poisoned: bool,
}

thread_local! {
    /// The last `session_open` request this thread read.
    static LAST_OPEN: std::cell::RefCell<LastRead<wire::Request>> =
        const { std::cell::RefCell::new(LastRead::new()) };
}

/// [`wire::decode_request`] of a `session_open` request, read once for the two
/// plugin-side sessions of recap's determinism check, which are opened one after the
/// other with the same bytes (their calls share one copy of the turns, `held`).
fn decode_open_once(bytes: &[u8]) -> Result<wire::Request, wire::RequestError> {
    LAST_OPEN.with(|last| last.borrow_mut().read(0, bytes, wire::decode_request))
}

/// The session a `session_open` request describes.
fn open_session<T: Plugin>(bytes: &[u8]) -> Result<SdkSession<T>, Failure> {
    let request = decode_open_once(bytes)?;
    let strategy = build::<T>(request.options)?;
    let parsed = request.session;
    check_form(&strategy, parsed.form)?;
    let form = parsed.form;
    let turns = Turns {
        session: parsed,
        tokens: request.token_counts,
    };
    Ok(SdkSession {
        replay: strategy.open(),
        strategy,
        form,
        held: Held::open(turns, request.pair, bytes),
        previous: Vec::new(),
        previous_rendered: false,
        host_reads_references: request.host_abi_minor >= 2,
        poisoned: false,
    })
}

/// `session_open` for `T`.
///
/// # Safety
/// The ABI contract of [`crate::ffi::SessionOpenFn`].
pub unsafe extern "C" fn session_open<T: Plugin>(
    request: *const u8,
    request_len: usize,
    session: *mut *mut c_void,
    out: *mut RecapBuf,
) -> i32 {
    if session.is_null() {
        return STATUS_BAD_REQUEST;
    }
    let mut handle: *mut c_void = std::ptr::null_mut();
    // SAFETY: forwarded from the ABI contract of `session_open`.
    let status = unsafe {
        entry(request, request_len, out, |bytes| {
            let state = Box::new(open_session::<T>(bytes)?);
            handle = Box::into_raw(state).cast::<c_void>();
            Ok(Vec::new())
        })
    };
    // SAFETY: `session` is non-null and, by contract, writable.
    unsafe { session.write(handle) };
    status
}

/// `session_render` for `T`: applies the turns delta, renders, answers with the
/// messages after the longest prefix shared with the previous response.
///
/// # Safety
/// The ABI contract of [`crate::ffi::SessionRenderFn`].
pub unsafe extern "C" fn session_render<T: Plugin>(
    session: *mut c_void,
    request: *const u8,
    request_len: usize,
    out: *mut RecapBuf,
) -> i32 {
    // SAFETY: forwarded from the ABI contract of `session_render`.
    unsafe {
        entry(request, request_len, out, |bytes| {
            if session.is_null() {
                return Err(Failure::bad_request("null session handle"));
            }
            // SAFETY: a non-null handle came from `session_open::<T>` of this library
            // and is used by one thread at a time until `session_close` (ABI contract).
            let state = &mut *session.cast::<SdkSession<T>>();
            if state.poisoned {
                return Err(Failure::bad_request(
                    "this session failed in an earlier call; open a new one",
                ));
            }
            // Cleared only when the step returns: a panic leaves it set.
            state.poisoned = true;
            let response = session_step(state, bytes);
            state.poisoned = false;
            response
        })
    }
}

/// Checks that the turns of a delta continue the session's numbering from `offset`.
fn check_numbers(offset: usize, numbers: impl Iterator<Item = u32>) -> Result<(), Failure> {
    for (i, number) in numbers.enumerate() {
        let index = offset + i;
        if number as usize != index + 1 {
            return Err(Failure::bad_request(format!(
                "request field turns[{index}].number: expected {}, got {number}",
                index + 1,
            )));
        }
    }
    Ok(())
}

/// An answer as [`encode_once`] remembers it.
enum OwnedItem {
    New(Message),
    Previous { from: usize, to: usize },
}

impl OwnedItem {
    fn is(&self, item: &wire::Item<'_>) -> bool {
        match (self, item) {
            (OwnedItem::New(a), wire::Item::New(b)) => a == *b,
            (OwnedItem::Previous { from, to }, wire::Item::Previous { from: f, to: t }) => {
                from == f && to == t
            }
            _ => false,
        }
    }
}

/// An answer written: its `messages_kept`, its items and its bytes.
type WrittenAnswer = (usize, Vec<OwnedItem>, Vec<u8>);

thread_local! {
    /// The last session answer this thread wrote.
    static LAST_ANSWER: std::cell::RefCell<Option<WrittenAnswer>> =
        const { std::cell::RefCell::new(None) };
}

/// [`wire::items_response`], written once for two sessions: the two plugin-side sessions
/// of recap's determinism check answer the same call one after the other on the same
/// thread, and a deterministic strategy answers both alike (their messages mostly the
/// same texts, taken from the turns the two sessions share, so comparing them is cheap).
fn encode_once(items: &[wire::Item<'_>], kept: usize) -> Vec<u8> {
    let remembered = LAST_ANSWER.with(|last| {
        let mut last = last.borrow_mut();
        match last.take() {
            Some((k, owned, bytes))
                if k == kept
                    && owned.len() == items.len()
                    && owned.iter().zip(items).all(|(o, i)| o.is(i)) =>
            {
                Some(bytes)
            }
            _ => None,
        }
    });
    if let Some(bytes) = remembered {
        return bytes;
    }
    let bytes = wire::items_response(items, Some(kept));
    if bytes.len() <= crate::last_read::REMEMBERED_BYTES {
        let owned = items
            .iter()
            .map(|i| match i {
                wire::Item::New(m) => OwnedItem::New((*m).clone()),
                wire::Item::Previous { from, to } => OwnedItem::Previous {
                    from: *from,
                    to: *to,
                },
            })
            .collect();
        LAST_ANSWER.with(|last| *last.borrow_mut() = Some((kept, owned, bytes.clone())));
    }
    bytes
}

fn session_step<T: Plugin>(state: &mut SdkSession<T>, bytes: &[u8]) -> Result<Vec<u8>, Failure> {
    let SdkSession {
        strategy,
        form,
        held,
        replay,
        previous,
        previous_rendered,
        host_reads_references,
        ..
    } = state;
    held.step(bytes, *form, |turns, went_back| {
        if went_back {
            // The host went back: a replay's turns only grow, so a new one.
            *replay = strategy.open();
        }
        let session = &turns.session;
        let k = session.turn_count();
        RenderRequest::for_call(session, k).map_err(|e| Failure::bad_request(e.to_string()))?;
        let delta = if T::USES_TOKEN_COUNTS {
            PromptDelta::whole(strategy.render_with_tokens(session, k, turns.tokens.as_ref())?)
        } else {
            // The strategy's replay (equal to a call rendered alone by the trait's
            // contract, held to it by recap's parity tests for the built-ins), answered
            // as what it keeps of the previous response: the kept messages are not
            // copied again.
            let held = if *previous_rendered {
                previous.len()
            } else {
                0
            };
            *previous_rendered = false;
            replay.call(session, k, held)?.within(held)?
        };
        // The longest prefix shared with the previous response: what the strategy kept,
        // and any of its new messages equal to the previous ones after that.
        let kept = delta.kept
            + delta
                .tail
                .iter()
                .zip(&previous[delta.kept..])
                .take_while(|(a, b)| a == b)
                .count();
        let new = &delta.tail[kept - delta.kept..];
        let response = if *host_reads_references {
            encode_once(&reuse_previous(new, previous), kept)
        } else {
            wire::messages_response(new, Some(kept))
        };
        previous.truncate(delta.kept);
        previous.extend(delta.tail);
        *previous_rendered = !T::USES_TOKEN_COUNTS;
        Ok(response)
    })
}

/// `messages` as items of a response: runs of messages equal to consecutive messages of
/// `previous` become references, the rest is sent. A strategy that drops or rewrites an
/// early message (a sliding window, masked or cleared results) then sends only what is
/// new instead of everything after the change. Runs are found by continuing the last one
/// and otherwise by a search that compares lengths before contents; after
/// `SEARCHES` searches that found nothing, only runs are continued, so a call stays
/// linear in the prompt whatever the strategy does.
fn reuse_previous<'a>(messages: &'a [Message], previous: &[Message]) -> Vec<wire::Item<'a>> {
    const SEARCHES: usize = 32;
    let mut items = Vec::with_capacity(messages.len());
    // The run being extended: previous[from..to].
    let mut run: Option<(usize, usize)> = None;
    let mut misses = 0;
    for m in messages {
        let next = match run {
            Some((_, to)) if previous.get(to) == Some(m) => Some(to),
            _ if misses < SEARCHES => {
                let found = previous
                    .iter()
                    .position(|p| p.content.len() == m.content.len() && p == m);
                misses += usize::from(found.is_none());
                found
            }
            _ => None,
        };
        match (next, &mut run) {
            (Some(j), Some((_, to))) if j == *to => *to += 1,
            (Some(j), _) => {
                if let Some((from, to)) = run.take() {
                    items.push(wire::Item::Previous { from, to });
                }
                run = Some((j, j + 1));
            }
            (None, _) => {
                if let Some((from, to)) = run.take() {
                    items.push(wire::Item::Previous { from, to });
                }
                items.push(wire::Item::New(m));
            }
        }
    }
    if let Some((from, to)) = run {
        items.push(wire::Item::Previous { from, to });
    }
    items
}

/// `session_close` for `T`.
///
/// # Safety
/// The ABI contract of [`crate::ffi::SessionCloseFn`].
pub unsafe extern "C" fn session_close<T: Plugin>(session: *mut c_void) {
    if session.is_null() {
        return;
    }
    // SAFETY: a non-null handle came from `session_open::<T>` and is closed once.
    let state = unsafe { Box::from_raw(session.cast::<SdkSession<T>>()) };
    // A strategy's Drop may panic; it must not unwind into the host.
    if let Err(payload) = catch_unwind(AssertUnwindSafe(move || drop(state))) {
        std::mem::forget(payload);
    }
}

#[cfg(test)]
mod tests;
