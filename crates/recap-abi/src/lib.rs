//! recap's stable strategy-plugin ABI.
//!
//! A plugin is a shared library (`cdylib`, or C) that exports two `extern "C"`
//! functions: the frozen probe [`PROBE_SYMBOL`] returning the ABI major, and
//! [`DESCRIPTOR_SYMBOL`] returning a pointer to a `'static` [`PluginDescriptorV1`].
//! Only `#[repr(C)]` structs, integers, pointers, `extern "C"` function pointers and
//! UTF-8 JSON byte buffers cross the boundary, so plugins may be built by any Rust
//! compiler (or a C compiler) for the host's target. Everything rich — the render
//! request, the messages, errors, the description — is JSON ([`wire`]).
//!
//! * [`ffi`]: the C layer (mirrored by `include/recap_strategy.h`).
//! * [`wire`]: the JSON envelopes, shared by the SDK and the host.
//! * [`tokens`]: the per-message token counts a host sends with chat requests.
//! * [`sdk`] and [`export_strategy!`]: turn a [`recap_core::Strategy`] into a plugin.
//! * [`json`]: the fast JSON writer and reader both sides use on the per-call path.
//!
//! The host (loading, validation, registration) lives in `recap-plugin-host`, so that
//! plugins do not link libloading. The wire format and the author guide are in this
//! crate's README.

#![deny(improper_ctypes_definitions, improper_ctypes)]

mod decode;
mod decode_chat;
mod encode;
pub mod ffi;
pub mod json;
pub mod last_read;
mod lenient;
#[cfg(test)]
mod mutation;
pub mod sdk;
pub mod tokens;
pub mod wire;

pub use ffi::{
    ABI_MAJOR, ABI_MINOR, DESCRIPTOR_SYMBOL, MAGIC, PROBE_SYMBOL, PluginDescriptorV1, RecapBuf,
    RecapStr,
};
pub use sdk::Plugin;
pub use tokens::TokenCounts;
