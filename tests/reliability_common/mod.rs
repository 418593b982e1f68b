//! Inputs shared by the reliability tests (`reliability_corpus.rs`,
//! `reliability_run.rs`).

#![allow(dead_code)]

/// A session whose turn 1 recorded `value` (raw JSON text) as its result.
pub fn session_with_result(value: &str) -> String {
    format!(
        r#"{{"id":"r","mission":"m","turns":[{{"number":1,"program":"p","success":true,"result":{value}}}]}}"#
    )
}

/// Every kind of hostile line in one corpus, between good sessions, after a BOM, with
/// mixed CRLF/LF endings and a truncated last line: the bytes, the number of good
/// sessions, and for each bad line its line number and the field its rejection names.
pub fn hostile_mix() -> (Vec<u8>, usize, Vec<(usize, &'static str)>) {
    let mut lines: Vec<Vec<u8>> = Vec::new();
    let mut rejected = Vec::new();
    let mut good = 0;
    let mut push_good = |lines: &mut Vec<Vec<u8>>, id: &str| {
        lines.push(
            format!(r#"{{"id":"{id}","mission":"Find it","turns":[{{"number":1,"program":"(def x 1)","success":true,"definitions":[{{"name":"x","kind":"def","value":1}}]}}]}}"#)
                .into_bytes(),
        );
        good += 1;
    };
    let bad: Vec<(Vec<u8>, &'static str)> = vec![
        (b"{\"id\":\"u\",\"mission\":\"caf\xe9\"}".to_vec(), "line"),
        (b"{\"id\":\"n\",\"mission\":\"a\0b\"}".to_vec(), "json"),
        (session_with_result("NaN").into_bytes(), "json"),
        (br#"{"id":"k","id":"k2","mission":"m"}"#.to_vec(), "json"),
        (
            session_with_result(&format!("{}{}", "[".repeat(5000), "]".repeat(5000))).into_bytes(),
            "json",
        ),
        (
            br#"{"id":"g","mission":"m","turns":[{"number":2,"program":"p","success":true}]}"#
                .to_vec(),
            "turns[0].number",
        ),
        (
            br#"{"id":"good-0","mission":"duplicate id"}"#.to_vec(),
            "id",
        ),
    ];
    push_good(&mut lines, "good-0");
    for (i, (line, field)) in bad.into_iter().enumerate() {
        lines.push(line);
        rejected.push((lines.len(), field));
        push_good(&mut lines, &format!("good-{}", i + 1));
    }
    lines.push(br#"{"id":"t","mission":"m","tu"#.to_vec());
    rejected.push((lines.len(), "json"));
    let mut bytes = b"\xef\xbb\xbf".to_vec();
    for (i, line) in lines.iter().enumerate() {
        bytes.extend_from_slice(line);
        if i + 1 < lines.len() {
            bytes.extend_from_slice(if i % 2 == 0 { b"\r\n" } else { b"\n" });
        }
    }
    (bytes, good, rejected)
}

/// A session line (newline included) whose one print is `mb` megabytes of `x`.
pub fn big_line(mb: usize) -> Vec<u8> {
    let mut line = br#"{"id":"huge","mission":"m","turns":[{"number":1,"program":"p","success":true,"prints":[""#.to_vec();
    line.resize(line.len() + mb * 1024 * 1024, b'x');
    line.extend_from_slice(b"\"]}]}\n");
    line
}
