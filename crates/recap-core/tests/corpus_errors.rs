//! Bad corpus inputs: each gives a rejection naming file, line and field, and never
//! stops the sessions after it.

use recap_core::corpus::read_all;
use recap_core::{RejectedSession, Session, Value};
use std::path::Path;

const GOOD: &str = r#"{"id":"ok","mission":"Find it","turns":[{"number":1,"program":"(def x 1)","success":true}]}"#;

fn read(text: &str) -> Vec<Result<Session, RejectedSession>> {
    read_all(Path::new("corpus.jsonl"), text.as_bytes())
        .into_iter()
        .map(|e| e.session)
        .collect()
}

/// Reads `bad` followed by a good session; returns the rejection of the first line.
fn reject(bad: &str) -> RejectedSession {
    let results = read(&format!("{bad}\n{GOOD}\n"));
    assert_eq!(results.len(), 2, "one entry per line");
    assert!(
        results[1].is_ok(),
        "the good line after a bad one is still read"
    );
    match &results[0] {
        Err(e) => {
            assert_eq!(e.file, Path::new("corpus.jsonl"));
            assert_eq!(e.line, 1);
            e.clone()
        }
        Ok(s) => panic!("expected a rejection, got session {}", s.id),
    }
}

#[test]
fn malformed_json_line() {
    let e = reject(r#"{"id":"a","mission":"m","turns":[}"#);
    assert_eq!(e.field, "json");
    assert!(e.message.starts_with("malformed JSON"), "{e}");
    assert!(
        e.to_string()
            .starts_with("corpus.jsonl:1: json: malformed JSON")
    );
}

#[test]
fn unknown_dollar_tag() {
    let e = reject(
        r#"{"id":"a","mission":"m","turns":[{"number":1,"program":"p","success":true,"result":{"$keyword":"x"}}]}"#,
    );
    assert_eq!(e.field, "turns[0].result/$keyword");
    assert!(e.message.contains("unknown tag \"$keyword\""), "{e}");
    assert_eq!(e.session_id.as_deref(), Some("a"));
}

#[test]
fn missing_mission() {
    let e = reject(r#"{"id":"a","turns":[]}"#);
    assert_eq!(e.field, "mission");
    assert!(e.message.contains("missing"), "{e}");
}

#[test]
fn empty_mission() {
    let e = reject(r#"{"id":"a","mission":"  ","turns":[]}"#);
    assert_eq!(e.field, "mission");
    assert!(e.message.contains("non-empty"), "{e}");
}

#[test]
fn turn_number_gap() {
    let e = reject(
        r#"{"id":"a","mission":"m","turns":[{"number":1,"program":"p","success":true},{"number":3,"program":"p","success":true}]}"#,
    );
    assert_eq!(e.field, "turns[1].number");
    assert!(e.message.contains("expected 2, got 3"), "{e}");
}

#[test]
fn failed_turn_without_error() {
    let e =
        reject(r#"{"id":"a","mission":"m","turns":[{"number":1,"program":"p","success":false}]}"#);
    assert_eq!(e.field, "turns[0].error");
    assert!(e.message.contains("failed turn"), "{e}");
}

#[test]
fn error_with_only_a_reason_uses_it_as_message() {
    let results = read(
        r#"{"id":"a","mission":"m","turns":[{"number":1,"program":"p","success":false,"error":{"reason":"timeout"}}]}"#,
    );
    let s = results[0].as_ref().expect("valid");
    assert_eq!(s.turns[0].error_message(), Some("timeout"));
}

#[test]
fn more_turns_than_max_turns() {
    let e = reject(
        r#"{"id":"a","mission":"m","max_turns":1,"turns":[{"number":1,"program":"p","success":true},{"number":2,"program":"p","success":true}]}"#,
    );
    assert_eq!(e.field, "turns");
    assert!(e.message.contains("max_turns is 1"), "{e}");
}

#[test]
fn bad_max_turns() {
    for bad in ["0", "-1", "2.5", "\"3\""] {
        let e = reject(&format!(
            r#"{{"id":"a","mission":"m","max_turns":{bad},"turns":[]}}"#
        ));
        assert_eq!(e.field, "max_turns", "{bad}");
    }
}

#[test]
fn wrong_types_name_the_field() {
    let cases = [
        (r#"{"id":1,"mission":"m"}"#, "id"),
        (r#"{"id":"a","mission":"m","turns":{}}"#, "turns"),
        (
            r#"{"id":"a","mission":"m","turns":[{"number":1,"program":"p","success":"yes"}]}"#,
            "turns[0].success",
        ),
        (
            r#"{"id":"a","mission":"m","turns":[{"number":1,"program":"p","success":true,"prints":[1]}]}"#,
            "turns[0].prints[0]",
        ),
        (
            r#"{"id":"a","mission":"m","turns":[{"number":1,"program":"p","success":true,"tool_calls":[{"args":{}}]}]}"#,
            "turns[0].tool_calls[0].name",
        ),
        (
            r#"{"id":"a","mission":"m","turns":[{"number":1,"program":"p","success":true,"definitions":[{"name":"x","kind":"var"}]}]}"#,
            "turns[0].definitions[0].kind",
        ),
        (r#"{"id":"a","mission":"m","tools":{"t":3}}"#, "tools.t"),
        (r#"[1,2]"#, "session"),
    ];
    for (line, field) in cases {
        assert_eq!(reject(line).field, field, "{line}");
    }
}

#[test]
fn duplicate_session_id() {
    let results = read(&format!("{GOOD}\n{GOOD}\n"));
    assert!(results[0].is_ok());
    let e = results[1].as_ref().expect_err("duplicate");
    assert_eq!((e.line, e.field.as_str()), (2, "id"));
}

#[test]
fn deeply_nested_array_is_a_clear_error_not_a_stack_overflow() {
    let depth = 200_000;
    let value = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let e = reject(&format!(
        r#"{{"id":"deep","mission":"m","turns":[{{"number":1,"program":"p","success":true,"result":{value}}}]}}"#
    ));
    assert_eq!(e.field, "json");
    assert!(
        e.message.starts_with("nested deeper than 128 levels"),
        "says what the limit is, not that JSON is malformed: {e}"
    );
}

#[test]
fn fifty_megabyte_string_is_read_intact() {
    let big = "x".repeat(50 * 1024 * 1024);
    let line = format!(
        r#"{{"id":"big","mission":"m","turns":[{{"number":1,"program":"p","success":true,"prints":["{big}"]}}]}}"#
    );
    let results = read(&line);
    let s = results[0].as_ref().expect("a 50 MB string is valid");
    assert_eq!(s.turns[0].prints[0].len(), big.len());
}

#[test]
fn bom_crlf_and_blank_lines_are_tolerated() {
    let text = format!("\u{feff}{GOOD}\r\n\r\n   \n");
    let results = read(&text);
    assert_eq!(results.len(), 1);
    assert!(results[0].is_ok());
}

#[test]
fn invalid_utf8_is_rejected_with_its_line() {
    let mut bytes = GOOD.as_bytes().to_vec();
    bytes.push(b'\n');
    bytes.extend_from_slice(b"{\"id\":\"\xff\"}\n");
    let results: Vec<_> = read_all(Path::new("c.jsonl"), bytes.as_slice())
        .into_iter()
        .map(|e| e.session)
        .collect();
    let e = results[1].as_ref().expect_err("invalid utf-8");
    assert_eq!((e.line, e.field.as_str()), (2, "line"));
    assert!(e.message.contains("invalid UTF-8"));
}

#[test]
fn defaults_and_round_trip() {
    let line = r#"{"id":"a","mission":"m","tools":{"search":{"signature":"(q :string) -> :string"}},"data":{"n":1},"meta":{"model":"x"},"turns":[{"number":1,"program":"(def x nil)","success":true,"definitions":[{"name":"x","kind":"def","value":null}],"tool_calls":[{"name":"search","args":{"q":"a"},"result":"r"}],"usage":{"input_tokens":12}}]}"#;
    let results = read(line);
    let s = results[0].as_ref().expect("valid");
    assert_eq!(s.max_turns, 5, "SS-002 default");
    assert_eq!(s.system_prompt, "");
    assert_eq!(s.turns[0].raw_response, "```clojure\n(def x nil)\n```");
    assert_eq!(
        s.turns[0].definitions[0].value,
        Some(Value::Nil),
        "a recorded nil is not the same as an unrecorded value"
    );
    let again = Session::from_json(&s.to_json()).expect("round trip");
    assert_eq!(&again, s);
}

#[test]
fn duplicate_keys_are_rejected() {
    let e = reject(r#"{"id":"a","mission":"m","mission":"n"}"#);
    assert_eq!(e.field, "json");
    assert!(e.message.contains("duplicate key \"mission\""), "{e}");
}

#[test]
fn nan_and_infinity_literals_are_rejected() {
    for lit in ["NaN", "Infinity", "-Infinity"] {
        let e = reject(&format!(
            r#"{{"id":"a","mission":"m","turns":[{{"number":1,"program":"p","success":true,"result":{lit}}}]}}"#
        ));
        assert_eq!(e.field, "json", "{lit}");
    }
}

#[test]
fn truncated_last_line_is_rejected_and_earlier_lines_kept() {
    let results = read(&format!("{GOOD}\n{{\"id\":\"b\",\"mission\":\"m\",\"tur"));
    assert!(results[0].is_ok());
    let e = results[1].as_ref().expect_err("truncated");
    assert_eq!((e.line, e.field.as_str()), (2, "json"));
    assert!(e.message.contains("EOF"), "{e}");
}

#[test]
fn empty_file_has_no_sessions() {
    assert!(read("").is_empty());
}

#[test]
fn raw_nul_byte_is_malformed_json_but_escaped_nul_is_data() {
    let e = reject("{\"id\":\"a\",\"mission\":\"m\u{0}\"}");
    assert_eq!(e.field, "json");
    let ok = read(r#"{"id":"a","mission":"m\u0000n"}"#);
    assert_eq!(ok[0].as_ref().expect("valid").mission, "m\u{0}n");
}

#[test]
fn a_json_array_over_many_lines_is_one_rejection_saying_how_to_convert_it() {
    let sessions: Vec<String> = (0..200)
        .map(|i| format!("  {{\"id\": \"s{i}\",\n   \"mission\": \"m\"}}"))
        .collect();
    let text = format!("[\n{}\n]\n", sessions.join(",\n"));
    let results = read(&text);
    assert_eq!(
        results.len(),
        1,
        "one rejection for the file, not one per line"
    );
    let e = results[0].as_ref().expect_err("an array is not JSON Lines");
    assert_eq!((e.line, e.field.as_str()), (1, "file"));
    assert!(
        e.message
            .starts_with("a JSON array spread over several lines"),
        "{e}"
    );
    assert!(e.message.contains("jq -c '.[]' corpus.jsonl"), "{e}");
    assert!(e.message.contains("recap import openai-chat"), "{e}");
}

#[test]
fn a_pretty_printed_object_is_one_rejection_saying_how_to_convert_it() {
    let results = read("\n{\n  \"id\": \"a\",\n  \"mission\": \"m\"\n}\n");
    assert_eq!(results.len(), 1);
    let e = results[0].as_ref().expect_err("not JSON Lines");
    assert_eq!((e.line, e.field.as_str()), (2, "file"));
    assert!(
        e.message
            .contains("one JSON object spread over several lines"),
        "{e}"
    );
    assert!(e.message.contains("jq -c . corpus.jsonl"), "{e}");
}

#[test]
fn a_json_array_on_one_line_is_rejected_with_the_same_advice() {
    let e = reject(r#"[{"id":"a","mission":"m"},{"id":"b","mission":"m"}]"#);
    assert_eq!(e.field, "session");
    assert!(
        e.message.starts_with("expected an object, got an array"),
        "{e}"
    );
    assert!(e.message.contains("jq -c '.[]'"), "{e}");
}

#[test]
fn a_truncated_first_line_of_a_json_lines_file_is_an_ordinary_rejection() {
    let results = read(&format!("{{\"id\":\"a\",\"mission\n{GOOD}\n"));
    assert_eq!(results.len(), 2, "the file is still read line by line");
    assert_eq!(results[0].as_ref().expect_err("truncated").field, "json");
    assert!(results[1].is_ok());
}

#[test]
fn integers_beyond_64_bits_are_rejected_not_rounded_to_floats() {
    for literal in [
        "18446744073709551616",
        "-9223372036854775809",
        "1e400000000000000000000",
    ] {
        let line = format!(
            r#"{{"id":"w","mission":"m","turns":[{{"number":1,"program":"p","success":true,"result":[1,{literal}]}}]}}"#
        );
        let e = reject(&line);
        assert_eq!(e.field, "json", "{literal}");
        if literal.contains('e') {
            // Not an integer: an out-of-range float literal, refused by the parser.
            assert!(e.message.starts_with("malformed JSON"), "{e}");
        } else {
            assert_eq!(
                e.message,
                format!(
                    "integer {literal} does not fit in 64 bits (recap would have to round it); record it as a string or a float"
                )
            );
        }
    }
}

/// (line, session id or rejected field) of what a reader keeping only the lines `keep`
/// takes reads of `text`, and the lines `keep` was asked about.
fn read_only(text: &str, keep: fn(usize) -> bool) -> (Vec<(usize, String)>, Vec<usize>) {
    let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let seen = std::sync::Arc::clone(&asked);
    let entries = recap_core::CorpusReader::new(Path::new("corpus.jsonl"), text.as_bytes())
        .only_lines(move |line, _| {
            seen.lock().unwrap().push(line);
            keep(line)
        })
        .map(|e| match e.session {
            Ok(s) => (e.line, s.id),
            Err(r) => (e.line, format!("{}: {}", r.field, r.message)),
        })
        .collect();
    let asked = asked.lock().unwrap().clone();
    (entries, asked)
}

#[test]
fn only_lines_reads_the_lines_kept_and_skips_the_others_unparsed() {
    let session = |id: &str| GOOD.replace("\"ok\"", &format!("{id:?}"));
    let text = [
        session("a"),
        "{broken".to_string(),
        String::new(),
        session("b"),
        session("a"),
    ]
    .join("\n");
    let (odd, asked) = read_only(&text, |line| line % 2 == 1);
    // Blank lines are not asked about; the broken line 2 and session b (line 4) are
    // skipped unparsed; the repeat of a at line 5 is still a repeat.
    assert_eq!(asked, [1, 2, 4, 5]);
    assert_eq!(odd.len(), 2, "{odd:?}");
    assert_eq!(odd[0], (1, "a".to_string()));
    assert!(
        odd[1].0 == 5 && odd[1].1.contains("duplicate session id \"a\""),
        "{odd:?}"
    );
    // Skipped lines are not remembered: a repeat of a line not read is a session.
    let (even, _) = read_only(&text, |line| line != 1);
    assert_eq!(even.last(), Some(&(5, "a".to_string())), "{even:?}");
}

#[test]
fn a_file_that_is_not_json_lines_ends_a_filtered_reading_reported_or_not() {
    let text = "[\n{\"id\":\"a\"},\n{\"id\":\"b\"}\n]\n";
    let (kept, asked) = read_only(text, |_| true);
    assert_eq!(asked, [1]);
    assert_eq!(kept.len(), 1);
    assert!(kept[0].1.contains("a JSON array"), "{kept:?}");
    let (skipped, asked) = read_only(text, |_| false);
    assert_eq!(asked, [1], "the file ends there either way");
    assert!(skipped.is_empty(), "{skipped:?}");
}
