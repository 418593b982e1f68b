//! The summary of successful turns (SPEC 6.2, item 2), shared by `single-user-coalesced`,
//! `per-turn-summary` (over one turn) and `rolling-window` (over the older turns).
//!
//! Sections, in order (FMT-011), lines joined by `\n`, empty sections omitted (FMT-012):
//! tool calls, functions, definitions, output. Everything is appended to one
//! caller-owned `String`.
//!
//! The section logic is written once, in [`write_summary_with`], over a [`Pieces`]
//! source of the per-item texts (a call's arguments, a definition's line and sample, …):
//! [`Direct`] prints them on the spot (one-off renders), the session cache
//! ([`crate::SummaryCache`]) prints each once per session and copies it afterwards. Both
//! therefore render the same bytes by construction.

use crate::options::SummaryOptions;
use crate::pieces::{Direct, Pieces};
use recap_core::printer::nth_char_start;
use recap_core::{PrintOptions, Turn, Value};

/// TRN-003: how tool-call arguments are printed.
pub const ARGS_PRINT: PrintOptions = PrintOptions::TOOL_ARGS;

/// TRN-002: how samples of definitions are printed.
pub const SAMPLE_PRINT: PrintOptions = PrintOptions::SAMPLE;

/// TRN-011: each print is cut to this many characters (plus `...`).
pub const PRINT_CHAR_LIMIT: usize = 2000;

/// The summary of the successful turns among `turns` as its own string; `None` when
/// no turn succeeded.
pub fn summary(turns: &[Turn], opts: SummaryOptions) -> Option<String> {
    let mut out = String::with_capacity(summary_len_hint(turns, opts));
    write_summary(&mut out, turns, opts).then_some(out)
}

/// Appends the summary of the successful turns among `turns` to `out`. Returns `false`
/// and appends nothing when no turn succeeded (the summary is then omitted).
///
/// Samples and tool-result types are dropped when any successful turn among `turns`
/// printed (SAM-002, TC-006); per-turn callers pass one turn, so only that turn's
/// prints count.
pub fn write_summary(out: &mut String, turns: &[Turn], opts: SummaryOptions) -> bool {
    write_summary_with(out, turns, opts, &mut Direct::default())
}

/// [`write_summary`] with what it shows taken from `pieces`.
pub(crate) fn write_summary_with<'t, P: Pieces<'t>>(
    out: &mut String,
    turns: &'t [Turn],
    opts: SummaryOptions,
    pieces: &mut P,
) -> bool {
    if !pieces.any_success(turns) {
        return false;
    }
    let printed = pieces.printed(turns);
    write_tool_calls(out, turns, opts.tool_call_limit as usize, printed, pieces);

    pieces.definitions(out, turns, printed);

    if printed {
        out.push_str("\n; Output:");
        pieces.output(out, turns, opts.println_limit as usize);
    }
    true
}

/// A rough size of the summary, to pre-size the output string.
pub fn summary_len_hint(turns: &[Turn], opts: SummaryOptions) -> usize {
    let mut calls = 0usize;
    let mut defs = 0usize;
    let mut prints = 0usize;
    for t in turns.iter().filter(|t| t.success) {
        calls += t.tool_calls.len();
        defs += t.definitions.len();
        prints += t.prints.iter().map(|p| shown_print_len(p)).sum::<usize>();
    }
    let calls = calls.min(opts.tool_call_limit as usize);
    // Live definitions are at most the total; the caps keep a long session's hint from
    // over-allocating (redefinitions replace names, the Output section keeps the last
    // prints).
    let prints = prints.min(opts.println_limit as usize * MAX_SHOWN_PRINT);
    24 + calls * 72 + defs.min(256) * 128 + prints
}

/// The most bytes a print takes in the Output section: its first [`PRINT_CHAR_LIMIT`]
/// chars (up to 4 bytes each), `...` and its line break.
const MAX_SHOWN_PRINT: usize = PRINT_CHAR_LIMIT * 4 + 4;

/// At most how many bytes `print` takes in the Output section.
pub(crate) fn shown_print_len(print: &str) -> usize {
    (print.len() + 1).min(MAX_SHOWN_PRINT)
}

/// FMT-001/002/003, TC-001..008: the last `limit` calls, then consecutive identical
/// calls merged.
fn write_tool_calls<'t, P: Pieces<'t>>(
    out: &mut String,
    turns: &'t [Turn],
    limit: usize,
    printed: bool,
    pieces: &mut P,
) {
    let n = pieces.calls_window(turns, limit);
    if n == 0 {
        out.push_str("; No tool calls made");
        return;
    }
    out.push_str("; Tool calls:");
    // Runs of identical calls: each is printed once, from its first call.
    let mut head = 0;
    for i in 1..=n {
        if i < n && pieces.repeats(turns, i) {
            continue;
        }
        write_call_line(out, turns, head, i - head, printed, pieces);
        head = i;
    }
}

/// The line of the run of `count` calls starting at window position `head`.
fn write_call_line<'t, P: Pieces<'t>>(
    out: &mut String,
    turns: &'t [Turn],
    head: usize,
    count: usize,
    printed: bool,
    pieces: &mut P,
) {
    pieces.call_head(out, turns, head);
    if count > 1 {
        out.push_str(" x");
        recap_core::write_decimal(out, count as u64);
    }
    // TC-006: the result's type, only when nothing was printed (the merged run shows its
    // last call's result).
    if !printed {
        pieces.call_tail(out, turns, head + count - 1);
    }
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
