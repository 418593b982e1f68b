//! The properties the `plugin_wire` fuzz target checks, shared with the main test suite
//! (`tests/reliability_fuzz_regressions.rs`): the host's parser of plugin answers and the SDK's parsers of host requests take any
//! bytes without panicking, and what they accept is what the ABI promises.

use recap_abi::ffi::STATUS_OK;
use recap_abi::wire;
use recap_plugin_host::{CallError, parse_response};

/// The first byte picks the status a plugin returned; the rest is its answer, and also
/// a request as a plugin would receive it.
pub fn wire_bytes(data: &[u8]) {
    let Some((&selector, bytes)) = data.split_first() else {
        return;
    };
    let status = match selector % 6 {
        0 | 1 => STATUS_OK,
        2 => 1,
        3 => 2,
        4 => 3,
        _ => i32::from(selector) - 200,
    };
    match parse_response(status, bytes) {
        Ok(response) => {
            assert_eq!(status, STATUS_OK, "messages accepted with status {status}");
            assert!(response.messages.is_some(), "accepted without messages");
            assert!(response.error.is_none(), "accepted with an error");
        }
        Err(e) => {
            assert!(!e.to_string().is_empty(), "a call error says why");
            assert!(!e.kind().is_empty(), "a call error has a kind");
            if let CallError::InvalidResponse { status: s, .. }
            | CallError::Plugin { status: s, .. } = &e
            {
                assert_eq!(*s, status, "the error keeps the status");
            }
        }
    }

    // The plugin side (SDK): whatever a host sends, an answer or a clear error.
    if let Ok((_, session)) = wire::decode_session_request(bytes) {
        let again = recap_core::Session::from_json(&session.to_json());
        assert!(
            again.is_ok(),
            "a decoded request session does not re-validate: {again:?}"
        );
    }
    if let Ok((offset, turns)) = wire::decode_session_delta(bytes) {
        let _ = (offset, turns.len());
    }
    let _ = wire::decode_describe_request(bytes);
    let _ = serde_json::from_slice::<wire::Description>(bytes);
}
