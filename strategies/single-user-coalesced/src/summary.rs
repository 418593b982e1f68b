//! The summary of successful turns (SPEC 6.2, item 2), shared by `single-user-coalesced`,
//! `per-turn-summary` (over one turn) and `rolling-window` (over the older turns).
//!
//! Sections, in order (FMT-011), lines joined by `\n`, empty sections omitted (FMT-012):
//! tool calls, functions, definitions, output. Everything is appended to one
//! caller-owned `String` so a render allocates little beyond the printer's strings.

use crate::options::SummaryOptions;
use crate::same::same_value;
use recap_core::memory::fold;
use recap_core::{Definition, PrintOptions, ToolCall, Turn, Value, to_clojure, type_of};
use std::fmt::Write as _;

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
    if !turns.iter().any(|t| t.success) {
        return false;
    }
    let printed = turns.iter().any(|t| t.success && !t.prints.is_empty());
    write_tool_calls(out, turns, opts.tool_call_limit as usize, printed);

    // DEF-001/002/008/009: the memory folded over the successful turns, in order of
    // (latest) definition.
    let memory = fold(turns);
    for def in memory.iter().filter(|d| d.is_function()) {
        out.push_str("\n; Function: ");
        out.push_str(&def.name);
        write_docstring(out, def);
    }
    for def in memory.iter().filter(|d| !d.is_function()) {
        write_defined(out, def, printed);
    }

    if printed {
        write_output(out, turns, opts.println_limit as usize);
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
        prints += t
            .prints
            .iter()
            .map(|p| p.len().min(PRINT_CHAR_LIMIT * 4) + 1)
            .sum::<usize>();
    }
    let calls = calls.min(opts.tool_call_limit as usize);
    24 + calls * 72 + defs * 128 + prints.min(opts.println_limit as usize * 256)
}

fn successful_calls(turns: &[Turn]) -> impl Iterator<Item = &ToolCall> {
    turns
        .iter()
        .filter(|t| t.success)
        .flat_map(|t| t.tool_calls.iter())
}

/// FMT-001/002/003, TC-001..008: the last `limit` calls, then consecutive identical
/// calls merged.
fn write_tool_calls(out: &mut String, turns: &[Turn], limit: usize, printed: bool) {
    let total = successful_calls(turns).count();
    if total == 0 {
        out.push_str("; No tool calls made");
        return;
    }
    out.push_str("; Tool calls:");
    // (first call of the run, run length, last call of the run)
    let mut run: Option<(&ToolCall, usize, &ToolCall)> = None;
    for call in successful_calls(turns).skip(total.saturating_sub(limit)) {
        run = match run {
            Some((first, n, _))
                if first.name == call.name && same_value(&first.args, &call.args) =>
            {
                Some((first, n + 1, call))
            }
            Some((first, n, last)) => {
                write_call_line(out, first, n, last, printed);
                Some((call, 1, call))
            }
            None => Some((call, 1, call)),
        };
    }
    if let Some((first, n, last)) = run {
        write_call_line(out, first, n, last, printed);
    }
}

fn write_call_line(
    out: &mut String,
    first: &ToolCall,
    count: usize,
    last: &ToolCall,
    printed: bool,
) {
    out.push_str("\n;   ");
    out.push_str(&first.name);
    out.push('(');
    write_args(out, &first.args);
    out.push(')');
    if count > 1 {
        let _ = write!(out, " x{count}");
    }
    // TC-006: the result's type, only when nothing was printed (the merged run shows its
    // last call's result).
    if !printed && let Some(result) = &last.result {
        out.push_str(" -> ");
        out.push_str(&type_of(result));
    }
}

/// FMT-002/TRN-003: `to_clojure(args, 3, 60)`; a positional argument list loses its
/// outer brackets unless the list itself was cut; nil or empty arguments print nothing.
fn write_args(out: &mut String, args: &Value) {
    match args {
        Value::Nil => {}
        Value::List(items) => {
            if items.is_empty() {
                return;
            }
            let (text, _) = to_clojure(args, ARGS_PRINT);
            let cut = ARGS_PRINT.limit.is_some_and(|l| items.len() > l);
            match text.strip_prefix('[').and_then(|t| t.strip_suffix(']')) {
                Some(inner) if !cut => out.push_str(inner),
                _ => out.push_str(&text),
            }
        }
        _ => {
            let (text, _) = to_clojure(args, ARGS_PRINT);
            // A map whose keys are all hidden (`_token`) prints `{}`: no visible args.
            if !matches!(text.as_str(), "{}" | "#{}" | "[]") {
                out.push_str(&text);
            }
        }
    }
}

/// FMT-006/007/008, SAM-001/002, DEF-003/004.
fn write_defined(out: &mut String, def: &Definition, printed: bool) {
    out.push_str("\n; Defined: ");
    out.push_str(&def.name);
    write_docstring(out, def);
    out.push_str(" = ");
    match &def.value {
        Some(v) => out.push_str(&type_of(v)),
        None => out.push_str("unknown"),
    }
    if printed {
        return;
    }
    if let Some(v) = &def.value
        && has_sample(v)
    {
        out.push_str(", sample: ");
        out.push_str(&to_clojure(v, SAMPLE_PRINT).0);
    }
}

/// No sample for nil or an empty collection: the type already says everything. An
/// empty string keeps its sample `""`.
fn has_sample(v: &Value) -> bool {
    match v {
        Value::Nil => false,
        Value::List(items) | Value::Set(items) => !items.is_empty(),
        Value::Map(entries) => !entries.is_empty(),
        _ => true,
    }
}

/// The docstring shown for a definition: its own, else its closure's; one made only of
/// `;` (empty once sanitized) counts as none.
pub fn docstring(def: &Definition) -> Option<&str> {
    let usable = |d: &&str| !d.chars().all(|c| c == ';');
    def.docstring
        .as_deref()
        .filter(usable)
        .or_else(|| match &def.value {
            Some(Value::Fn(closure)) => closure.docstring.as_deref().filter(usable),
            _ => None,
        })
}

fn write_docstring(out: &mut String, def: &Definition) {
    if let Some(doc) = docstring(def) {
        out.push_str(" - \"");
        push_sanitized_docstring(out, doc);
        out.push('"');
    }
}

/// DEF-007: `;` removed; each line break (`\r\n`, `\n`, `\r`) becomes one space so the
/// summary line stays one line.
pub fn push_sanitized_docstring(out: &mut String, doc: &str) {
    if !doc.contains([';', '\n', '\r']) {
        out.push_str(doc);
        return;
    }
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
}

/// FMT-009/010/014, TRN-006..011: the last `limit` prints, each verbatim but cut.
fn write_output(out: &mut String, turns: &[Turn], limit: usize) {
    let prints = || {
        turns
            .iter()
            .filter(|t| t.success)
            .flat_map(|t| t.prints.iter())
    };
    let total = prints().count();
    out.push_str("\n; Output:");
    for p in prints().skip(total.saturating_sub(limit)) {
        out.push('\n');
        push_cut_print(out, p);
    }
}

/// TRN-011: a print longer than [`PRINT_CHAR_LIMIT`] characters keeps its first that
/// many characters plus `...`.
pub fn push_cut_print(out: &mut String, print: &str) {
    // A string of at most N bytes has at most N chars: skip the char walk.
    if print.len() <= PRINT_CHAR_LIMIT {
        out.push_str(print);
        return;
    }
    match print.char_indices().nth(PRINT_CHAR_LIMIT) {
        Some((cut, _)) => {
            out.push_str(&print[..cut]);
            out.push_str("...");
        }
        None => out.push_str(print),
    }
}
