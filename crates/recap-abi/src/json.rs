//! Fast JSON primitives for the per-call path: string escaping and integers for the
//! writers, and a small validating reader for the decoders of session deltas (plugin
//! side) and message responses (host side).
//!
//! The writers produce exactly serde_json's bytes (same escapes, same digits), so a
//! request or response does not depend on which writer made it.
//!
//! The reader is a fast path only. It accepts a strict subset of what serde_json
//! accepts and reports everything else — anything it is not sure about — as
//! [`GiveUp`], after which callers decode through serde_json instead and get the
//! reference result or the reference error. It never accepts a document serde_json
//! would reject.

use std::borrow::Cow;

/// "Not on the fast path": decode with serde_json instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GiveUp;

pub type Fast<T> = Result<T, GiveUp>;

const ONES: u64 = 0x0101_0101_0101_0101;
const HIGH: u64 = 0x8080_8080_8080_8080;

/// High bit set in each byte of `w` that is `"`, `\` or a control character (< 0x20).
/// Borrows only propagate upwards from a byte that is itself flagged, so the lowest
/// flagged byte is always a real one.
#[inline]
fn special_mask(w: u64) -> u64 {
    let zero = |v: u64| v.wrapping_sub(ONES) & !v & HIGH;
    let quote = zero(w ^ (ONES * u64::from(b'"')));
    let backslash = zero(w ^ (ONES * u64::from(b'\\')));
    let control = w.wrapping_sub(ONES * 0x20) & !w & HIGH;
    quote | backslash | control
}

#[inline]
fn is_special(c: u8) -> bool {
    c == b'"' || c == b'\\' || c < 0x20
}

/// The index of the first `"`, `\` or control character in `b` at or after `from`, or
/// `b.len()`. Eight bytes at a time: strings are most of every request and response.
#[inline]
pub fn find_special(b: &[u8], from: usize) -> usize {
    let mut i = from;
    let Some(rest) = b.get(from..) else {
        return b.len();
    };
    let mut chunks = rest.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        let mask = special_mask(u64::from_le_bytes(word));
        if mask != 0 {
            return i + (mask.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    for &c in chunks.remainder() {
        if is_special(c) {
            return i;
        }
        i += 1;
    }
    i
}

const HEX: &[u8; 16] = b"0123456789abcdef";

/// Appends `s` as a JSON string, escaped exactly as serde_json escapes it.
pub fn put_str(out: &mut Vec<u8>, s: &str) {
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    let mut start = 0;
    loop {
        let i = find_special(b, start);
        out.extend_from_slice(&b[start..i]);
        let Some(&c) = b.get(i) else { break };
        match c {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 0xf)],
            ]),
        }
        start = i + 1;
    }
    out.push(b'"');
}

/// Appends the decimal digits of `n`.
pub fn put_u64(out: &mut Vec<u8>, mut n: u64) {
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&buf[i..]);
}

pub fn put_i64(out: &mut Vec<u8>, n: i64) {
    if n < 0 {
        out.push(b'-');
    }
    put_u64(out, n.unsigned_abs());
}

/// Nesting deeper than this gives up (serde_json's own limit is 128; the reference
/// decoder then reports the error, and the fast path never recurses unboundedly).
const MAX_DEPTH: u32 = 100;

/// A number as written, and whether it is a plain integer of at most 18 digits (which
/// fits an i64 and reads the same through any parser).
pub struct NumberToken<'a> {
    pub text: &'a str,
    pub small_int: bool,
}

impl NumberToken<'_> {
    /// The value of a `small_int`, or `None` (`-0` is a float for serde_json).
    pub fn small_value(&self) -> Option<i64> {
        if !self.small_int {
            return None;
        }
        let (negative, digits) = match self.text.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, self.text),
        };
        let n = digits
            .bytes()
            .fold(0i64, |n, c| n * 10 + i64::from(c - b'0'));
        match (negative, n) {
            (true, 0) => None,
            (true, n) => Some(-n),
            (false, n) => Some(n),
        }
    }

    /// The number as serde_json reads it.
    pub fn to_number(&self) -> Fast<serde_json::Number> {
        serde_json::from_str(self.text).map_err(|_| GiveUp)
    }
}

/// A validating pull reader over one JSON document.
pub struct Reader<'a> {
    text: &'a str,
    b: &'a [u8],
    pos: usize,
    depth: u32,
}

impl<'a> Reader<'a> {
    /// Gives up on input that is not UTF-8 (checked once for the whole document, so
    /// string slices need no further checks).
    pub fn new(bytes: &'a [u8]) -> Fast<Self> {
        let text = std::str::from_utf8(bytes).map_err(|_| GiveUp)?;
        Ok(Self {
            text,
            b: bytes,
            pos: 0,
            depth: 0,
        })
    }

    #[inline]
    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.pos) {
            if matches!(c, b' ' | b'\n' | b'\r' | b'\t') {
                self.pos += 1;
            } else {
                break;
            }
        }
    }

    /// The next significant byte, not consumed.
    #[inline]
    pub fn peek(&mut self) -> Option<u8> {
        self.ws();
        self.b.get(self.pos).copied()
    }

    #[inline]
    fn expect(&mut self, c: u8) -> Fast<()> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    /// Nothing but whitespace is left.
    pub fn end(&mut self) -> Fast<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(GiveUp),
        }
    }

    /// The byte offset reached.
    pub fn position(&self) -> usize {
        self.pos
    }

    /// The document text between two offsets.
    pub fn slice(&self, from: usize, to: usize) -> &'a str {
        &self.text[from..to]
    }

    /// Moves back to an earlier offset (at a value boundary).
    pub fn rewind(&mut self, to: usize) {
        self.pos = to;
    }

    fn enter(&mut self) -> Fast<()> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(GiveUp);
        }
        Ok(())
    }

    /// Consumes `null` if it is next.
    #[inline]
    pub fn null(&mut self) -> Fast<bool> {
        if self.peek() == Some(b'n') {
            self.literal(b"null")?;
            return Ok(true);
        }
        Ok(false)
    }

    fn literal(&mut self, word: &[u8]) -> Fast<()> {
        if self.b.get(self.pos..self.pos + word.len()) == Some(word) {
            self.pos += word.len();
            Ok(())
        } else {
            Err(GiveUp)
        }
    }

    pub fn bool(&mut self) -> Fast<bool> {
        match self.peek() {
            Some(b't') => self.literal(b"true").map(|()| true),
            Some(b'f') => self.literal(b"false").map(|()| false),
            _ => Err(GiveUp),
        }
    }

    /// A string, borrowed from the document when it has no escapes.
    pub fn str(&mut self) -> Fast<Cow<'a, str>> {
        self.expect(b'"')?;
        let start = self.pos;
        let i = find_special(self.b, start);
        match self.b.get(i) {
            Some(b'"') => {
                self.pos = i + 1;
                Ok(Cow::Borrowed(&self.text[start..i]))
            }
            Some(b'\\') => {
                let mut s = String::with_capacity(i - start + 16);
                s.push_str(&self.text[start..i]);
                self.pos = i;
                self.rest_of_escaped(&mut s)?;
                Ok(Cow::Owned(s))
            }
            // A raw control character (invalid JSON) or the end of the input.
            _ => Err(GiveUp),
        }
    }

    pub fn string(&mut self) -> Fast<String> {
        self.str().map(Cow::into_owned)
    }

    /// `null` or a string.
    pub fn opt_string(&mut self) -> Fast<Option<String>> {
        if self.null()? {
            return Ok(None);
        }
        self.string().map(Some)
    }

    /// A string as a message's shared [`recap_core::Text`]: copied once, from the input.
    pub fn text(&mut self) -> Fast<recap_core::Text> {
        self.str().map(recap_core::Text::from)
    }

    /// `null` or a string, as [`Self::text`].
    pub fn opt_text(&mut self) -> Fast<Option<recap_core::Text>> {
        if self.null()? {
            return Ok(None);
        }
        self.text().map(Some)
    }

    /// From an escape (`self.pos` at a `\`) to past the closing quote.
    fn rest_of_escaped(&mut self, s: &mut String) -> Fast<()> {
        loop {
            match self.b.get(self.pos) {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => {
                    self.pos += 1;
                    self.escape(s)?;
                }
                _ => return Err(GiveUp),
            }
            let start = self.pos;
            let i = find_special(self.b, start);
            s.push_str(&self.text[start..i]);
            self.pos = i;
        }
    }

    fn escape(&mut self, s: &mut String) -> Fast<()> {
        let c = *self.b.get(self.pos).ok_or(GiveUp)?;
        self.pos += 1;
        let ch = match c {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = self.hex4()?;
                match hi {
                    0xD800..=0xDBFF => {
                        // Only a well-formed surrogate pair makes a character;
                        // serde_json rejects a lone surrogate when reading a string.
                        self.literal(b"\\u")?;
                        let lo = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return Err(GiveUp);
                        }
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                            .ok_or(GiveUp)?
                    }
                    0xDC00..=0xDFFF => return Err(GiveUp),
                    _ => char::from_u32(hi).ok_or(GiveUp)?,
                }
            }
            _ => return Err(GiveUp),
        };
        s.push(ch);
        Ok(())
    }

    fn hex4(&mut self) -> Fast<u32> {
        let digits = self.b.get(self.pos..self.pos + 4).ok_or(GiveUp)?;
        let mut n = 0;
        for &d in digits {
            let v = match d {
                b'0'..=b'9' => d - b'0',
                b'a'..=b'f' => d - b'a' + 10,
                b'A'..=b'F' => d - b'A' + 10,
                _ => return Err(GiveUp),
            };
            n = n * 16 + u32::from(v);
        }
        self.pos += 4;
        Ok(n)
    }

    /// A number, checked against JSON's grammar.
    pub fn number(&mut self) -> Fast<NumberToken<'a>> {
        self.ws();
        let b = self.b;
        let start = self.pos;
        let mut i = start;
        let digits = |mut i: usize| {
            while matches!(b.get(i), Some(b'0'..=b'9')) {
                i += 1;
            }
            i
        };
        if b.get(i) == Some(&b'-') {
            i += 1;
        }
        let int_start = i;
        match b.get(i) {
            Some(b'0') => i += 1,
            Some(b'1'..=b'9') => i = digits(i + 1),
            _ => return Err(GiveUp),
        }
        let mut small_int = i - int_start <= 18;
        if b.get(i) == Some(&b'.') {
            small_int = false;
            let d = i + 1;
            i = digits(d);
            if i == d {
                return Err(GiveUp);
            }
        }
        if matches!(b.get(i), Some(b'e' | b'E')) {
            small_int = false;
            i += 1;
            if matches!(b.get(i), Some(b'+' | b'-')) {
                i += 1;
            }
            let d = i;
            i = digits(d);
            if i == d {
                return Err(GiveUp);
            }
        }
        self.pos = i;
        Ok(NumberToken {
            text: &self.text[start..i],
            small_int,
        })
    }

    /// A non-negative integer that fits a u64.
    pub fn u64(&mut self) -> Fast<u64> {
        let token = self.number()?;
        match token.small_value() {
            Some(n) => u64::try_from(n).map_err(|_| GiveUp),
            None => token.to_number()?.as_u64().ok_or(GiveUp),
        }
    }

    /// Enters an object: `{`. Follow with [`Reader::key`] until it returns `None`.
    pub fn object(&mut self) -> Fast<Members> {
        self.expect(b'{')?;
        self.enter()?;
        Ok(Members { first: true })
    }

    /// The next key of the object (the reader is then at its value), or `None` past
    /// the closing `}`.
    pub fn key(&mut self, members: &mut Members) -> Fast<Option<Cow<'a, str>>> {
        match self.peek() {
            Some(b'}') => {
                self.pos += 1;
                self.depth -= 1;
                return Ok(None);
            }
            Some(b',') if !members.first => self.pos += 1,
            Some(b'"') if members.first => {}
            _ => return Err(GiveUp),
        }
        members.first = false;
        let key = self.str()?;
        self.expect(b':')?;
        Ok(Some(key))
    }

    /// Enters an array: `[`. Follow with [`Reader::item`] until it returns `false`.
    pub fn array(&mut self) -> Fast<Members> {
        self.expect(b'[')?;
        self.enter()?;
        Ok(Members { first: true })
    }

    /// Whether another item follows (the reader is then at it).
    pub fn item(&mut self, members: &mut Members) -> Fast<bool> {
        match self.peek() {
            Some(b']') => {
                self.pos += 1;
                self.depth -= 1;
                return Ok(false);
            }
            Some(b',') if !members.first => self.pos += 1,
            Some(_) if members.first => {}
            _ => return Err(GiveUp),
        }
        members.first = false;
        Ok(true)
    }

    /// Skips one value, validating it as serde_json would when reading it into a tree.
    pub fn skip(&mut self) -> Fast<()> {
        match self.peek().ok_or(GiveUp)? {
            b'"' => {
                self.str()?;
            }
            b'{' => {
                let mut m = self.object()?;
                while self.key(&mut m)?.is_some() {
                    self.skip()?;
                }
            }
            b'[' => {
                let mut m = self.array()?;
                while self.item(&mut m)? {
                    self.skip()?;
                }
            }
            b't' | b'f' => {
                self.bool()?;
            }
            b'n' => {
                self.null()?;
            }
            _ => {
                let token = self.number()?;
                if !token.small_int {
                    // Out-of-range numbers are errors in a tree.
                    token.to_number()?;
                }
            }
        }
        Ok(())
    }
}

/// Where a reader is inside one object or array.
pub struct Members {
    first: bool,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped_exactly_as_serde_json_does() {
        let mut samples: Vec<String> = vec![
            String::new(),
            "plain ascii text that is longer than eight bytes".into(),
            "quote \" backslash \\ slash / tab \t nl \n cr \r".into(),
            "é日本語👍🏽 \u{7f} \u{0}\u{1}\u{8}\u{c}\u{1f}".into(),
        ];
        for c in 0u8..0x80 {
            samples.push(format!(
                "{}{}abcdefgh",
                "x".repeat(usize::from(c % 9)),
                c as char
            ));
        }
        for s in samples {
            let mut ours = Vec::new();
            put_str(&mut ours, &s);
            assert_eq!(
                String::from_utf8(ours).unwrap(),
                serde_json::to_string(&s).unwrap(),
                "{s:?}"
            );
        }
    }

    #[test]
    fn integers_are_written_as_serde_json_does() {
        for n in [0, 1, -1, 9, 10, -10, 1234567, i64::MAX, i64::MIN] {
            let mut out = Vec::new();
            put_i64(&mut out, n);
            assert_eq!(String::from_utf8(out).unwrap(), n.to_string());
        }
        let mut out = Vec::new();
        put_u64(&mut out, u64::MAX);
        assert_eq!(String::from_utf8(out).unwrap(), u64::MAX.to_string());
    }

    #[test]
    fn find_special_finds_the_first_one() {
        let text = b"0123456789abcdef\"\\";
        for from in 0..text.len() {
            assert_eq!(find_special(text, from), 16.max(from));
        }
        for i in 0..20 {
            let mut t = vec![b'a'; 20];
            t[i] = 0x1f;
            t[19] = b'"';
            assert_eq!(find_special(&t, 0), i);
        }
        // Bytes ≥ 0x80 (UTF-8) are never special.
        assert_eq!(find_special("ééééé日本".as_bytes(), 0), "ééééé日本".len());
    }

    fn read_str(json: &str) -> Fast<String> {
        let mut r = Reader::new(json.as_bytes())?;
        let s = r.string()?;
        r.end()?;
        Ok(s)
    }

    #[test]
    fn strings_read_as_serde_json_reads_them_or_give_up() {
        for json in [
            r#""""#,
            r#""abc""#,
            r#""a\"b\\c\/d\b\f\n\r\t""#,
            r#""\u0000\u001f\u00e9\u65e5\uD83D\uDE00 tail""#,
            r#""long text without escapes, longer than a word""#,
            "\"é日本語 👍🏽\"",
        ] {
            let want: String = serde_json::from_str(json).unwrap();
            assert_eq!(read_str(json), Ok(want), "{json}");
        }
        for bad in [
            r#""abc"#,
            "\"a\u{1}b\"",
            r#""\x""#,
            r#""\uD800""#,
            r#""\uDC00x""#,
            r#""\uD800\u0041""#,
            r#""\u12G4""#,
            r#""ab" x"#,
        ] {
            assert_eq!(read_str(bad), Err(GiveUp), "{bad}");
            assert!(serde_json::from_str::<String>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn numbers_follow_the_grammar() {
        for (json, small) in [
            ("0", Some(0)),
            ("-7", Some(-7)),
            ("123456789012345678", Some(123456789012345678)),
            ("1234567890123456789", None),
            ("-0", None),
            ("1.5", None),
            ("2e3", None),
        ] {
            let mut r = Reader::new(json.as_bytes()).unwrap();
            let token = r.number().unwrap();
            assert_eq!(token.small_value(), small, "{json}");
            assert_eq!(
                token.to_number().unwrap(),
                serde_json::from_str::<serde_json::Number>(json).unwrap()
            );
        }
        for bad in ["-", "01", "1.", "1e", ".5", "1e+", "+1"] {
            let mut r = Reader::new(bad.as_bytes()).unwrap();
            let ok = r.number().is_ok() && r.end().is_ok();
            assert!(!ok, "{bad}");
        }
    }

    #[test]
    fn skip_validates_like_a_tree_read() {
        for good in [
            r#"{"a":[1,2.5,-3e2,"x",null,true,false,{}],"b":{"c":[]}}"#,
            " [ ] ",
            r#"{"a":1,"a":2}"#,
        ] {
            let mut r = Reader::new(good.as_bytes()).unwrap();
            assert_eq!(r.skip().and_then(|()| r.end()), Ok(()), "{good}");
            assert!(serde_json::from_str::<serde_json::Value>(good).is_ok());
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for bad in [
            r#"{"a":1,}"#,
            "[1,]",
            "[1 2]",
            r#"{"a" 1}"#,
            r#"{1:2}"#,
            "tru",
            "nul",
            "1e400",
            deep.as_str(),
        ] {
            let mut r = Reader::new(bad.as_bytes()).unwrap();
            assert_eq!(r.skip().and_then(|()| r.end()), Err(GiveUp), "{bad}");
        }
    }
}
