//! Structure-aware values (every variant, including ones JSON text rarely reaches:
//! NaN floats, integers near 2^53, duplicate and non-keyword map keys) through the
//! encoder, decoder and printer.
#![no_main]

use recap_fuzz::inputs::ArbValue;

libfuzzer_sys::fuzz_target!(|v: ArbValue| {
    recap_fuzz::checks::value(&v.build());
});
