//! The C layer of the ABI. `include/recap_strategy.h` declares the same layout for C.
//!
//! Evolution rules (see the README): the probe symbol and [`DescriptorHeader`] never
//! change; a minor version only appends fields to the descriptor (a host reads a field
//! only when the descriptor's `size` covers it) and adds optional JSON fields; anything
//! else is a new major with a new descriptor symbol (`recap_strategy_plugin_v2`).

use std::ffi::{CStr, c_void};

/// The ABI generation. A host loads a plugin only when the probe returns a major it
/// supports (this host: exactly this one).
pub const ABI_MAJOR: u32 = 1;
/// Additive revisions within the major; informational for the host. 1.1 added the
/// chat form (`forms` in `describe`, chat requests, tool-carrying messages, token
/// counts), all in the JSON: the C layout is 1.0's. 1.2 lets a session response refer
/// to messages of the previous response (`{"previous": [from, to]}`), which a plugin
/// uses only with a host whose `session_open` request says minor 2 or later.
pub const ABI_MINOR: u32 = 2;

/// First field of every descriptor: the bytes `RECAPSTR` read as a big-endian u64.
/// Catches a library that happens to export a symbol of the same name.
pub const MAGIC: u64 = u64::from_be_bytes(*b"RECAPSTR");

/// `uint32_t recap_strategy_abi_version(void)`: returns the ABI major. Frozen forever,
/// called before anything else is touched.
pub const PROBE_SYMBOL: &CStr = c"recap_strategy_abi_version";
/// `const RecapStrategyPluginV1 *recap_strategy_plugin_v1(void)`.
pub const DESCRIPTOR_SYMBOL: &CStr = c"recap_strategy_plugin_v1";

/// Call succeeded; the out buffer holds the response (or is empty where documented).
pub const STATUS_OK: i32 = 0;
/// The strategy refused (bad options, render error); the out buffer holds an error.
pub const STATUS_ERROR: i32 = 1;
/// The plugin caught a panic; the out buffer holds an error of kind `panic`.
pub const STATUS_PANIC: i32 = 2;
/// The request could not be understood (bad JSON, wrong fields, null pointers).
pub const STATUS_BAD_REQUEST: i32 = 3;

/// A borrowed UTF-8 string: `len` bytes at `ptr` (not NUL-terminated).
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct RecapStr {
    pub ptr: *const u8,
    pub len: usize,
}

impl RecapStr {
    /// Points at a `'static` string (usable in `static` initialisers).
    pub const fn from_static(s: &'static str) -> Self {
        Self {
            ptr: s.as_ptr(),
            len: s.len(),
        }
    }
}

/// A buffer the plugin allocated and hands to the host. The host reads `len` bytes,
/// then gives the very same triple back to the plugin's `free` exactly once. `cap` is
/// the plugin's business (a Rust plugin rebuilds its `Vec` from it; C may ignore it).
/// A null `ptr` means "no buffer".
#[repr(C)]
#[derive(Debug)]
pub struct RecapBuf {
    pub ptr: *mut u8,
    pub len: usize,
    pub cap: usize,
}

impl RecapBuf {
    pub const EMPTY: RecapBuf = RecapBuf {
        ptr: std::ptr::null_mut(),
        len: 0,
        cap: 0,
    };
}

/// `render(request, request_len, out)`: request JSON in, response JSON out (always
/// written, also on errors). Must be reentrant and callable from any thread at once.
pub type RenderFn =
    unsafe extern "C" fn(request: *const u8, request_len: usize, out: *mut RecapBuf) -> i32;
/// `free(buf)`: releases a buffer this plugin wrote to an `out` parameter.
pub type FreeFn = unsafe extern "C" fn(buf: RecapBuf);
/// `describe(request, request_len, out)`: options in, description JSON out.
pub type DescribeFn =
    unsafe extern "C" fn(request: *const u8, request_len: usize, out: *mut RecapBuf) -> i32;
/// `session_open(request, request_len, session, out)`: the request without turns (or
/// with initial turns) in; on success `*session` is an opaque handle.
pub type SessionOpenFn = unsafe extern "C" fn(
    request: *const u8,
    request_len: usize,
    session: *mut *mut c_void,
    out: *mut RecapBuf,
) -> i32;
/// `session_render(session, request, request_len, out)`: a turns delta in, a messages
/// delta out. One thread at a time per handle; different handles concurrently.
pub type SessionRenderFn = unsafe extern "C" fn(
    session: *mut c_void,
    request: *const u8,
    request_len: usize,
    out: *mut RecapBuf,
) -> i32;
/// `session_close(session)`: releases a handle from `session_open`.
pub type SessionCloseFn = unsafe extern "C" fn(session: *mut c_void);

/// The frozen prefix of every descriptor, whatever its major: what a host reads before
/// it knows how large the rest is.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
pub struct DescriptorHeader {
    pub magic: u64,
    /// `sizeof` the plugin's descriptor; minor versions grow it.
    pub size: usize,
    pub abi_major: u32,
    pub abi_minor: u32,
}

/// The v1 descriptor. Lives for the whole process (a `static` in the plugin); the
/// host never writes to it. Fields after `abi_minor` may be read only when `size`
/// covers them; every field below is part of v1.0 (1.1 added none).
#[repr(C)]
#[derive(Debug)]
pub struct PluginDescriptorV1 {
    pub magic: u64,
    pub size: usize,
    pub abi_major: u32,
    pub abi_minor: u32,
    /// The strategy name as used in spec strings: `[a-z0-9][a-z0-9_-]{0,63}`.
    pub name: RecapStr,
    /// The plugin's own version (free-form, e.g. semver), for reports.
    pub version: RecapStr,
    /// Required.
    pub render: Option<RenderFn>,
    /// Required.
    pub free: Option<FreeFn>,
    /// Optional (null: no options, universal invariants only).
    pub describe: Option<DescribeFn>,
    /// Optional, all three or none: incremental rendering of one session.
    pub session_open: Option<SessionOpenFn>,
    pub session_render: Option<SessionRenderFn>,
    pub session_close: Option<SessionCloseFn>,
}

// SAFETY: a descriptor is immutable once built (the ABI forbids writing to it), and its
// pointers refer to `'static` data and code of a library that is never unloaded, so
// sharing `&PluginDescriptorV1` between threads cannot race. Without this a plugin
// could not keep its descriptor in a `static`.
unsafe impl Sync for PluginDescriptorV1 {}

/// `size_of` the v1.0 descriptor: the minimum `size` a v1 host accepts.
pub const DESCRIPTOR_V1_SIZE: usize = std::mem::size_of::<PluginDescriptorV1>();

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn header_is_a_prefix_of_the_v1_descriptor() {
        assert_eq!(
            offset_of!(DescriptorHeader, magic),
            offset_of!(PluginDescriptorV1, magic)
        );
        assert_eq!(
            offset_of!(DescriptorHeader, size),
            offset_of!(PluginDescriptorV1, size)
        );
        assert_eq!(
            offset_of!(DescriptorHeader, abi_major),
            offset_of!(PluginDescriptorV1, abi_major)
        );
        assert_eq!(
            offset_of!(DescriptorHeader, abi_minor),
            offset_of!(PluginDescriptorV1, abi_minor)
        );
        assert!(size_of::<DescriptorHeader>() <= DESCRIPTOR_V1_SIZE);
    }

    #[test]
    fn magic_spells_recapstr() {
        assert_eq!(MAGIC, 0x5245_4341_5053_5452);
    }

    #[cfg(target_pointer_width = "64")]
    #[test]
    fn v1_layout_matches_the_c_header() {
        // The offsets the header documents for LP64 targets.
        assert_eq!(offset_of!(PluginDescriptorV1, name), 24);
        assert_eq!(offset_of!(PluginDescriptorV1, version), 40);
        assert_eq!(offset_of!(PluginDescriptorV1, render), 56);
        assert_eq!(offset_of!(PluginDescriptorV1, session_close), 96);
        assert_eq!(DESCRIPTOR_V1_SIZE, 104);
    }
}
