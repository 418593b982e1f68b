//! How the summary writes each piece's text: the print options of tool-call arguments
//! and definition samples (TRN-002, TRN-003), the cut of long prints (TRN-011) and the
//! docstring shown for a definition (DEF-007). The section logic ([`crate::summary`])
//! and both sources of pieces ([`crate::pieces`], the session cache) write through these.

use recap_core::printer::nth_char_start;
use recap_core::{PrintOptions, Value};

/// TRN-003: how tool-call arguments are printed.
pub const ARGS_PRINT: PrintOptions = PrintOptions::TOOL_ARGS;

/// TRN-002: how samples of definitions are printed.
pub const SAMPLE_PRINT: PrintOptions = PrintOptions::SAMPLE;

/// TRN-011: each print is cut to this many characters (plus `...`).
pub const PRINT_CHAR_LIMIT: usize = 2000;

/// The most bytes a print takes in the Output section: its first [`PRINT_CHAR_LIMIT`]
/// chars (up to 4 bytes each), `...` and its line break.
pub(crate) const MAX_SHOWN_PRINT: usize = PRINT_CHAR_LIMIT * 4 + 4;

/// At most how many bytes `print` takes in the Output section.
pub(crate) fn shown_print_len(print: &str) -> usize {
    (print.len() + 1).min(MAX_SHOWN_PRINT)
}

/// The docstring shown for a definition: its own, else its closure's; one made only of
/// `;` (empty once sanitized) counts as none.
pub fn docstring(def: &recap_core::Definition) -> Option<&str> {
    let usable = |d: &&str| !d.bytes().all(|b| b == b';');
    def.docstring
        .as_deref()
        .filter(usable)
        .or_else(|| match &def.value {
            Some(Value::Fn(closure)) => closure.docstring.as_deref().filter(usable),
            _ => None,
        })
}

/// DEF-007: `;` removed; each line break (`\r\n`, `\n`, `\r`) becomes one space so the
/// summary line stays one line. Copies the runs between those bytes whole.
pub fn push_sanitized_docstring(out: &mut String, doc: &str) {
    let bytes = doc.as_bytes();
    let mut run_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let skip = match bytes[i] {
            b';' => 1,
            b'\r' if bytes.get(i + 1) == Some(&b'\n') => 2,
            b'\r' | b'\n' => 1,
            _ => {
                i += 1;
                continue;
            }
        };
        out.push_str(&doc[run_start..i]);
        if bytes[i] != b';' {
            out.push(' ');
        }
        i += skip;
        run_start = i;
    }
    out.push_str(&doc[run_start..]);
}

/// TRN-011: a print longer than [`PRINT_CHAR_LIMIT`] characters keeps its first that
/// many characters plus `...`.
pub fn push_cut_print(out: &mut String, print: &str) {
    match print_cut(print) {
        Some(cut) => {
            out.push_str(&print[..cut]);
            out.push_str("...");
        }
        None => out.push_str(print),
    }
}

/// Where TRN-011 cuts a print (a byte index), `None` when it is kept whole.
pub(crate) fn print_cut(print: &str) -> Option<usize> {
    nth_char_start(print, PRINT_CHAR_LIMIT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cut_print_matches_the_char_walk() {
        for s in [
            "x".repeat(1999),
            "x".repeat(2000),
            "x".repeat(2001),
            "😀".repeat(2001),
            format!("{}{}", "a".repeat(1990), "日".repeat(30)),
        ] {
            let mut got = String::new();
            push_cut_print(&mut got, &s);
            let expected = match s.char_indices().nth(PRINT_CHAR_LIMIT) {
                Some((i, _)) => format!("{}...", &s[..i]),
                None => s.clone(),
            };
            assert_eq!(got, expected);
        }
    }

    /// The char-by-char rule of DEF-007, written independently of the run-copying one.
    fn sanitize_by_chars(doc: &str) -> String {
        let mut out = String::new();
        let mut chars = doc.chars().peekable();
        while let Some(c) = chars.next() {
            match c {
                ';' => {}
                '\r' => {
                    if chars.peek() == Some(&'\n') {
                        chars.next();
                    }
                    out.push(' ');
                }
                '\n' => out.push(' '),
                c => out.push(c),
            }
        }
        out
    }

    #[test]
    fn sanitized_docstring_matches_the_char_rule() {
        for doc in [
            "",
            "plain",
            ";",
            ";;; doc ;;",
            "a\nb",
            "a\r\nb",
            "a\rb",
            "a\r\r\nb\n\r",
            "\r",
            "é;\n日\r\n😀;",
            "ends with cr\r",
        ] {
            let mut got = String::new();
            push_sanitized_docstring(&mut got, doc);
            assert_eq!(got, sanitize_by_chars(doc), "{doc:?}");
        }
    }
}
