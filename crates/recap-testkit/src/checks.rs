//! The properties the fuzz targets check, shared with the main test suite.
//!
//! The fuzz crate's targets call these, and `tests/reliability_fuzz_regressions.rs`
//! replays every saved crash input (`tests/fuzz-regressions/<target>/`) through them, so
//! `cargo test` runs exactly the code that found it.
//!
//! Each check panics (with a message saying which property broke) on a bug; it returns
//! normally on any input recap handles correctly, including inputs it rejects.

use recap_core::corpus::CorpusReader;
use recap_core::printer::{PrintOptions, to_clojure, type_of};
use recap_core::session::Session;
use recap_core::strict_json;
use recap_core::value::Value;
use serde_json::Value as Json;
use std::collections::BTreeSet;
use std::io::BufReader;
use std::path::Path;

/// Arbitrary bytes as a corpus file.
///
/// - one entry per non-blank line, numbered like the file, never a panic;
/// - the result does not depend on how the input is buffered;
/// - a rejection names the file, its line, a field and a message;
/// - accepted sessions have unique ids and survive encode → decode (as a value and as
///   JSON text).
pub fn corpus_bytes(data: &[u8]) {
    let path = Path::new("fuzz.jsonl");
    let whole: Vec<_> = CorpusReader::new(path, BufReader::new(data)).collect();
    let byte_by_byte: Vec<_> = CorpusReader::new(path, BufReader::with_capacity(1, data)).collect();
    assert_eq!(
        whole.len(),
        byte_by_byte.len(),
        "buffering changed the entries"
    );
    for (a, b) in whole.iter().zip(&byte_by_byte) {
        assert_eq!(a.line, b.line, "buffering changed a line number");
        assert_eq!(a.session, b.session, "buffering changed line {}", a.line);
    }

    let non_blank = data
        .split(|b| *b == b'\n')
        .filter(|line| !line.iter().all(u8::is_ascii_whitespace))
        .count();
    assert_eq!(whole.len(), non_blank, "one entry per non-blank line");

    let mut last_line = 0;
    let mut ids = BTreeSet::new();
    for entry in &whole {
        assert!(entry.line > last_line, "line numbers increase");
        last_line = entry.line;
        match &entry.session {
            Ok(session) => {
                assert!(
                    ids.insert(session.id.clone()),
                    "duplicate id {:?} accepted",
                    session.id
                );
                session_round_trip(session);
            }
            Err(rejected) => {
                assert_eq!(rejected.file, path);
                assert_eq!(rejected.line, entry.line, "a rejection names its own line");
                assert!(!rejected.field.is_empty(), "a rejection names a field");
                assert!(!rejected.message.is_empty(), "a rejection says why");
            }
        }
    }
}

/// A valid session encodes to JSON that decodes to the same session: the encoding is a
/// fixed point after one round (maps are unordered, so the JSON is compared, not the
/// `Value`s), and also through JSON text and the strict parser the corpus reader uses.
pub fn session_round_trip(session: &Session) {
    let json = session.to_json();
    let again = Session::from_json(&json)
        .unwrap_or_else(|e| panic!("the encoding of a valid session is rejected: {e}"));
    assert_eq!(
        again.to_json(),
        json,
        "session encoding is not a fixed point"
    );

    let text = serde_json::to_string(&json).expect("a session encodes to JSON text");
    let parsed = strict_json::from_str(&text)
        .unwrap_or_else(|e| panic!("recap cannot re-read the JSON text it writes: {e}"));
    let from_text = Session::from_json(&parsed)
        .unwrap_or_else(|e| panic!("a session written as text is rejected: {e}"));
    assert_eq!(
        from_text.to_json(),
        json,
        "session changed through JSON text"
    );
}

/// Arbitrary bytes as one JSON value: the strict parser agrees with serde_json except
/// for duplicate keys, and every decodable value passes [`value`].
pub fn value_bytes(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let strict = strict_json::from_str(text);
    let loose = serde_json::from_str::<Json>(text);
    match (&strict, &loose) {
        (Ok(s), Ok(l)) => assert_eq!(s, l, "strict and serde_json parse differently"),
        (Ok(_), Err(e)) => panic!("strict parser accepts what serde_json rejects: {e}"),
        (Err(e), Ok(_)) => assert!(
            e.to_string().contains("duplicate key"),
            "strict parser rejects valid JSON for another reason than a duplicate key: {e}"
        ),
        (Err(_), Err(_)) => {}
    }
    let Ok(json) = loose else {
        return;
    };
    match Value::from_json(&json) {
        Ok(v) => value(&v),
        Err(e) => assert!(!e.message.is_empty(), "a value error says why"),
    }
}

/// The printer limits tried on every value: unlimited, the two the strategies use
/// (TRN-002, TRN-003), and the degenerate ones.
pub const PRINT_LIMITS: [(Option<usize>, Option<usize>); 7] = [
    (None, None),
    (Some(3), Some(80)),
    (Some(3), Some(60)),
    (Some(0), Some(0)),
    (Some(1), None),
    (None, Some(1)),
    (Some(usize::MAX), Some(usize::MAX)),
];

/// Any value: encodes to JSON that decodes again (a fixed point after one round),
/// prints under every limit deterministically, never reports a cut when unlimited, and
/// prints the same as its decoded encoding.
pub fn value(v: &Value) {
    let _ = type_of(v);
    let json = v.to_json();
    let decoded = Value::from_json(&json)
        .unwrap_or_else(|e| panic!("the encoding of a value does not decode: {e}"));
    assert_eq!(
        decoded.to_json(),
        json,
        "value encoding is not a fixed point"
    );

    for (limit, printable_limit) in PRINT_LIMITS {
        for show_hidden in [false, true] {
            let opts = PrintOptions {
                limit,
                printable_limit,
                show_hidden,
            };
            let first = to_clojure(v, opts);
            assert_eq!(first, to_clojure(v, opts), "printing is not deterministic");
            if limit.is_none() && printable_limit.is_none() {
                assert!(!first.1, "nothing can be cut without limits");
            }
            assert_eq!(
                first.0,
                to_clojure(&decoded, opts).0,
                "a value and its decoded encoding print differently ({opts:?})"
            );
        }
    }
}
