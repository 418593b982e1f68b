//! Calls into a plugin library loaded in this process: the validated function table,
//! and one call each, whose answer buffer goes back to the plugin's own `free` exactly
//! once. Used by the host for in-process plugins and by the worker process
//! ([`crate::worker`]) for isolated ones.

use crate::call::{CallError, MAX_RESPONSE_BYTES};
use recap_abi::ffi::{
    DescribeFn, FreeFn, RecapBuf, RenderFn, SessionCloseFn, SessionOpenFn, SessionRenderFn,
};
use std::ffi::c_void;
use std::ptr::NonNull;

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

/// A plugin-side session handle.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SessionPtr(pub NonNull<c_void>);

// SAFETY: the ABI lets a session handle be used from any thread as long as one thread
// at a time does. The host keeps each handle with one owner (a lane's queue, or the
// worker's single thread), which makes its calls one after another.
unsafe impl Send for SessionPtr {}

/// A buffer the plugin handed out; freed through the plugin's `free` on drop (also when
/// reading it panics in the host).
pub(crate) struct Returned {
    buf: RecapBuf,
    free: FreeFn,
}

impl Returned {
    fn new(free: FreeFn) -> Self {
        Self {
            buf: RecapBuf::EMPTY,
            free,
        }
    }

    /// The answer's bytes, or its length when it exceeds [`MAX_RESPONSE_BYTES`] (then
    /// never read).
    pub(crate) fn bytes(&self) -> Result<&[u8], usize> {
        if self.buf.ptr.is_null() {
            return Ok(&[]);
        }
        if self.buf.len > MAX_RESPONSE_BYTES {
            return Err(self.buf.len);
        }
        // SAFETY: the plugin wrote a non-null (ptr, len) into `out`; the ABI requires
        // `len` readable bytes there until the buffer is passed to `free`, which only
        // happens when `self` drops, after this borrow ends.
        Ok(unsafe { std::slice::from_raw_parts(self.buf.ptr, self.buf.len) })
    }

    /// Reads the answer of a call that returned `status` with `read`.
    pub(crate) fn read<R>(
        &self,
        status: i32,
        read: impl FnOnce(i32, &[u8]) -> Result<R, CallError>,
    ) -> Result<R, CallError> {
        match self.bytes() {
            Ok(bytes) => read(status, bytes),
            Err(len) => Err(CallError::TooLarge { status, len }),
        }
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

/// `render` with a full request.
pub(crate) fn render(fns: &Fns, request: &[u8]) -> (i32, Returned) {
    let mut out = Returned::new(fns.free);
    // SAFETY: `render` is the validated function of a live library; the request slice
    // outlives the call and `out.buf` is a writable RecapBuf.
    let status = unsafe { (fns.render)(request.as_ptr(), request.len(), &mut out.buf) };
    (status, out)
}

/// `describe`, which the caller has checked exists.
pub(crate) fn describe(fns: &Fns, describe: DescribeFn, request: &[u8]) -> (i32, Returned) {
    let mut out = Returned::new(fns.free);
    // SAFETY: as in `render`; `describe` is the same library's.
    let status = unsafe { describe(request.as_ptr(), request.len(), &mut out.buf) };
    (status, out)
}

/// `session_open`: the status, the handle it wrote (null if none) and its answer.
pub(crate) fn open(
    fns: &Fns,
    sessions: SessionFns,
    request: &[u8],
) -> (i32, *mut c_void, Returned) {
    let mut out = Returned::new(fns.free);
    let mut handle: *mut c_void = std::ptr::null_mut();
    // SAFETY: as in `render`; `handle` is a writable pointer.
    let status =
        unsafe { (sessions.open)(request.as_ptr(), request.len(), &mut handle, &mut out.buf) };
    (status, handle, out)
}

/// `session_render` on `session`.
///
/// # Safety
/// `session` must be a live handle of this plugin's `session_open`, not closed, and
/// used by no other call at the same time.
pub(crate) unsafe fn session_render(
    fns: &Fns,
    sessions: SessionFns,
    session: SessionPtr,
    request: &[u8],
) -> (i32, Returned) {
    let mut out = Returned::new(fns.free);
    // SAFETY: the caller guarantees the handle; the request outlives the call; `out`
    // is writable.
    let status = unsafe {
        (sessions.render)(
            session.0.as_ptr(),
            request.as_ptr(),
            request.len(),
            &mut out.buf,
        )
    };
    (status, out)
}

/// `session_close`.
///
/// # Safety
/// As for [`session_render`]; the handle is not used again.
pub(crate) unsafe fn close(sessions: SessionFns, session: SessionPtr) {
    // SAFETY: the caller guarantees a live, idle handle, closed exactly once.
    unsafe { (sessions.close)(session.0.as_ptr()) };
}
