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
//! * [`full_history`]: the `full-history` baseline's own helpers, for a plugin that
//!   sends some turns as the baseline does (the same reply/feedback pairs, the same
//!   generated feedback and turns line, byte for byte).
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

/// The `full-history` strategy's helpers: [`full_history::feedback`] (a turn's recorded
/// feedback, or the text full-history generates: the prints, `Error: {message}`, the
/// turns line, joined by blank lines), [`full_history::push_pairs`] (turns as ASSISTANT
/// reply + USER feedback messages), [`full_history::opening`] (`[SYSTEM, USER(mission)]`),
/// [`full_history::push_chat_turns`] (chat turns as sent), [`full_history::push_turns_line`]
/// and [`full_history::render`] (the whole baseline prompt).
pub use recap_full_history as full_history;

pub use ffi::{
    ABI_MAJOR, ABI_MINOR, DESCRIPTOR_SYMBOL, MAGIC, PROBE_SYMBOL, PluginDescriptorV1, RecapBuf,
    RecapStr,
};
pub use sdk::Plugin;
pub use tokens::TokenCounts;

#[cfg(test)]
mod tests {
    use recap_core::{Message, RenderRequest, Session};

    #[test]
    fn full_histories_helpers_render_what_full_history_renders() {
        let session: Session = recap_gen::generate_corpus(3, 1, 4..=4).remove(0);
        let request = RenderRequest::for_call(&session, 3).expect("a call");
        let mut messages: Vec<Message> = super::full_history::opening(&request);
        super::full_history::push_pairs(&mut messages, &session.turns[..3], 0, session.max_turns);
        assert_eq!(messages, super::full_history::render(&request));
        assert_eq!(messages.len(), 2 + 2 * 3);
    }
}
