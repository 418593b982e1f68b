//! Arbitrary bytes as a plugin's answer (the host's response parser, with each status)
//! and as a host's request (the SDK's request decoders).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    recap_fuzz::plugin_checks::wire_bytes(data);
});
