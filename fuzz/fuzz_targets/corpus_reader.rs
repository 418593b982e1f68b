//! Arbitrary bytes as a corpus file through the streaming reader and validator.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    recap_fuzz::checks::corpus_bytes(data);
});
