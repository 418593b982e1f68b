//! Numbers as the printer writes them: integers two digits at a time, floats rounded
//! to 10 decimals, without the formatting machinery (printed on every call).

use std::fmt::Write as _;

/// Appends `n` in decimal, without the formatting machinery (for renderers that print
/// counts on every call: `x3`, `Turns left: 12`).
pub fn write_decimal(out: &mut String, n: u64) {
    push_u64(out, n);
}

/// "00" to "99", for printing two digits at a time.
const DIGIT_PAIRS: [u8; 200] = {
    let mut table = [0u8; 200];
    let mut i = 0;
    while i < 100 {
        table[2 * i] = b'0' + (i / 10) as u8;
        table[2 * i + 1] = b'0' + (i % 10) as u8;
        i += 1;
    }
    table
};

/// Decimal digits without the formatting machinery, two at a time.
pub(super) fn push_u64(out: &mut String, mut n: u64) {
    // Counts and turns left are mostly one or two digits.
    if n < 10 {
        out.push(char::from(b'0' + n as u8));
        return;
    }
    if n < 100 {
        let pair = n as usize * 2;
        out.push(char::from(DIGIT_PAIRS[pair]));
        out.push(char::from(DIGIT_PAIRS[pair + 1]));
        return;
    }
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    while n >= 100 {
        let pair = (n % 100) as usize * 2;
        n /= 100;
        i -= 2;
        buf[i] = DIGIT_PAIRS[pair];
        buf[i + 1] = DIGIT_PAIRS[pair + 1];
    }
    if n >= 10 {
        let pair = n as usize * 2;
        i -= 2;
        buf[i] = DIGIT_PAIRS[pair];
        buf[i + 1] = DIGIT_PAIRS[pair + 1];
    } else {
        i -= 1;
        buf[i] = b'0' + n as u8;
    }
    // Only ASCII digits were written.
    if let Ok(digits) = std::str::from_utf8(&buf[i..]) {
        out.push_str(digits);
    }
}

pub(super) fn push_i64(out: &mut String, i: i64) {
    if i < 0 {
        out.push('-');
    }
    push_u64(out, i.unsigned_abs());
}

/// Fixed-point, rounded to 10 decimals (Rust's exact decimal expansion, ties to even),
/// trailing zeros removed but at least one digit after the point. Non-finite floats
/// built in code print like the special floats.
pub(super) fn push_float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("##NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "##Inf" } else { "##-Inf" });
    } else if let Some(scaled) = scaled_by_1e10(f) {
        if f.is_sign_negative() {
            out.push('-');
        }
        push_u64(out, (scaled / 10_000_000_000) as u64);
        out.push('.');
        push_fraction(out, (scaled % 10_000_000_000) as u64);
    } else {
        push_float_fmt(out, f);
    }
}

/// `|f| × 10¹⁰` rounded to an integer, ties to even, computed exactly in integers
/// from `f`'s bits (what `format!("{f:.10}")` prints, without its machinery); `None`
/// for magnitudes of 2⁶³ and more, left to the formatter.
fn scaled_by_1e10(f: f64) -> Option<u128> {
    const SCALE: u128 = 10_000_000_000;
    let bits = f.to_bits();
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let fraction = u128::from(bits & ((1u64 << 52) - 1));
    // |f| = mantissa × 2^exponent, exactly.
    let (mantissa, exponent) = if biased == 0 {
        (fraction, -1074)
    } else {
        (fraction | (1 << 52), biased - 1075)
    };
    // mantissa < 2^53 and SCALE < 2^34: the product fits easily.
    let scaled = mantissa * SCALE;
    if exponent >= 0 {
        // |f| < 2^63 keeps the result below 2^(63 + 34).
        return (exponent <= 10).then(|| scaled << exponent);
    }
    let shift = exponent.unsigned_abs();
    if shift >= 100 {
        // scaled < 2^87, so |f| × 10¹⁰ < 2^-13: rounds to 0.
        return Some(0);
    }
    let quotient = scaled >> shift;
    let remainder = scaled & ((1u128 << shift) - 1);
    let half = 1u128 << (shift - 1);
    let round_up = remainder > half || (remainder == half && quotient & 1 == 1);
    Some(quotient + u128::from(round_up))
}

/// The 10 decimals of `fraction` (< 10¹⁰) without trailing zeros; `0` when all are.
fn push_fraction(out: &mut String, mut fraction: u64) {
    if fraction == 0 {
        out.push('0');
        return;
    }
    let mut digits = 10;
    while fraction.is_multiple_of(10) {
        fraction /= 10;
        digits -= 1;
    }
    let mut buf = [b'0'; 10];
    for slot in buf[..digits].iter_mut().rev() {
        *slot = b'0' + (fraction % 10) as u8;
        fraction /= 10;
    }
    if let Ok(digits) = std::str::from_utf8(&buf[..digits]) {
        out.push_str(digits);
    }
}

/// [`push_float`] through the standard formatter (large magnitudes), also the
/// reference the fast path is tested against.
pub(super) fn push_float_fmt(out: &mut String, f: f64) {
    let start = out.len();
    let _ = write!(out, "{f:.10}");
    let trimmed = out[start..].trim_end_matches('0').len();
    out.truncate(start + trimmed);
    if out.ends_with('.') {
        out.push('0');
    }
}
