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
use crate::texts::{MAX_SHOWN_PRINT, shown_print_len};
use recap_core::Turn;

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
