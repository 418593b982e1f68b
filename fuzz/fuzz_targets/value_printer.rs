//! Arbitrary JSON-ish bytes through the strict parser, `Value::from_json`, the encoder
//! and `to_clojure` under several limits.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    recap_fuzz::checks::value_bytes(data);
});
