//! Where the summary gets what it shows, and [`Direct`], the source that computes
//! everything on the spot. The session cache ([`crate::SummaryCache`]) is the other
//! source.
//!
//! The summary's section logic ([`crate::summary`]) asks a source for the successful
//! calls, live definitions and prints it shows, by position in the current "window",
//! and for their texts. Every text method must append exactly what the `write_*`
//! functions of this module append; a source only decides when they run and whether
//! their output is kept for later calls.

use crate::same::same_value;
use crate::texts::{ARGS_PRINT, SAMPLE_PRINT, docstring, push_cut_print, push_sanitized_docstring};
use recap_core::memory::fold_into;
use recap_core::{Definition, ToolCall, Turn, Value, write_clojure, write_type_of};

pub(crate) trait Pieces<'t> {
    /// Whether any turn among `turns` succeeded (else there is no summary).
    fn any_success(&mut self, turns: &'t [Turn]) -> bool;

    /// Whether any successful turn among `turns` printed (SAM-002, TC-006).
    fn printed(&mut self, turns: &'t [Turn]) -> bool;

    /// Selects the last `limit` tool calls of the successful turns among `turns`;
    /// returns how many there are. The `call*` methods and [`Pieces::repeats`] then
    /// take a position among them, oldest first.
    fn calls_window(&mut self, turns: &'t [Turn], limit: usize) -> usize;

    /// TC-008: whether call `i` (≥ 1) repeats call `i - 1` of the window.
    fn repeats(&mut self, turns: &'t [Turn], i: usize) -> bool;

    /// The line of a run that starts with call `i`, up to the count; see
    /// [`write_call_head`].
    fn call_head(&mut self, out: &mut String, turns: &'t [Turn], i: usize);

    /// The result type shown after a run that ends with call `i`; see
    /// [`write_call_tail`].
    fn call_tail(&mut self, out: &mut String, turns: &'t [Turn], i: usize);

    /// DEF-001..009, FMT-004..008: the memory folded over the successful turns among
    /// `turns`, one line per live definition in order of (latest) definition,
    /// functions first; each other definition with its sample unless `printed`. See
    /// [`write_def_entry`].
    fn definitions(&mut self, out: &mut String, turns: &'t [Turn], printed: bool);

    /// FMT-014: the last `limit` prints of the successful turns among `turns`, each on
    /// its own line (a line break, then the print cut as [`push_cut_print`] does).
    fn output(&mut self, out: &mut String, turns: &'t [Turn], limit: usize);
}

/// How a definition shows in the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DefKind {
    /// `; Function:` (else `; Defined:`).
    pub function: bool,
    /// It is not a function and its value has a sample (SAM-001): shown when nothing
    /// was printed.
    pub has_sample: bool,
}

impl DefKind {
    pub fn of(def: &Definition) -> Self {
        let function = def.is_function();
        Self {
            function,
            has_sample: !function && def.value.as_ref().is_some_and(has_sample),
        }
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

/// Computes every piece when asked and keeps only the current windows and memory.
#[derive(Default)]
pub(crate) struct Direct<'t> {
    calls: Vec<&'t ToolCall>,
    live: Vec<&'t Definition>,
    prints: Vec<&'t str>,
}

impl<'t> Pieces<'t> for Direct<'t> {
    fn any_success(&mut self, turns: &'t [Turn]) -> bool {
        turns.iter().any(|t| t.success)
    }

    fn printed(&mut self, turns: &'t [Turn]) -> bool {
        turns.iter().any(|t| t.success && !t.prints.is_empty())
    }

    fn calls_window(&mut self, turns: &'t [Turn], limit: usize) -> usize {
        last_n(&mut self.calls, turns, limit, |t| &t.tool_calls, |c| c);
        self.calls.len()
    }

    fn repeats(&mut self, _turns: &'t [Turn], i: usize) -> bool {
        same_call(self.calls[i], self.calls[i - 1])
    }

    fn call_head(&mut self, out: &mut String, _turns: &'t [Turn], i: usize) {
        write_call_head(out, self.calls[i]);
    }

    fn call_tail(&mut self, out: &mut String, _turns: &'t [Turn], i: usize) {
        write_call_tail(out, self.calls[i]);
    }

    fn definitions(&mut self, out: &mut String, turns: &'t [Turn], printed: bool) {
        fold_into(&mut self.live, turns);
        for function in [true, false] {
            for def in &self.live {
                let kind = DefKind::of(def);
                if kind.function == function {
                    write_def_entry(out, def, kind, printed);
                }
            }
        }
    }

    fn output(&mut self, out: &mut String, turns: &'t [Turn], limit: usize) {
        last_n(
            &mut self.prints,
            turns,
            limit,
            |t| &t.prints,
            String::as_str,
        );
        for print in &self.prints {
            out.push('\n');
            push_cut_print(out, print);
        }
    }
}

/// Fills `picked` with the last `n` items of `field` over the successful turns, oldest
/// first. Walks back from the newest turn, so the cost is O(n + turns), not O(all
/// items).
fn last_n<'t, T: 't, U>(
    picked: &mut Vec<U>,
    turns: &'t [Turn],
    n: usize,
    field: fn(&'t Turn) -> &'t [T],
    map: fn(&'t T) -> U,
) {
    picked.clear();
    'turns: for turn in turns.iter().rev().filter(|t| t.success) {
        for item in field(turn).iter().rev() {
            if picked.len() == n {
                break 'turns;
            }
            picked.push(map(item));
        }
    }
    picked.reverse();
}

/// A live definition's line, with its sample when it has one and nothing was printed
/// (SAM-001/002).
pub(crate) fn write_def_entry(out: &mut String, def: &Definition, kind: DefKind, printed: bool) {
    write_def_line(out, def);
    if !printed && kind.has_sample {
        write_sample(out, def);
    }
}

/// TC-008: same tool and the same arguments as the language sees them.
pub(crate) fn same_call(a: &ToolCall, b: &ToolCall) -> bool {
    a.name == b.name && same_value(&a.args, &b.args)
}

/// FMT-001/002: a tool call's line up to the run count: `\n;   name(args)`.
pub(crate) fn write_call_head(out: &mut String, call: &ToolCall) {
    out.push_str("\n;   ");
    out.push_str(&call.name);
    out.push('(');
    write_args(out, &call.args);
    out.push(')');
}

/// TC-006: ` -> type` of a call's result (nothing without a result); shown after a
/// run, for its last call, only when nothing was printed.
pub(crate) fn write_call_tail(out: &mut String, call: &ToolCall) {
    if let Some(result) = &call.result {
        out.push_str(" -> ");
        write_type_of(out, result);
    }
}

/// FMT-002/TRN-003: `to_clojure(args, 3, 60)`; a positional argument list loses its
/// outer brackets unless the list itself was cut; nil or empty arguments print nothing.
pub(crate) fn write_args(out: &mut String, args: &Value) {
    match args {
        Value::Nil => {}
        Value::List(items) => {
            let cut = ARGS_PRINT.limit.is_some_and(|l| items.len() > l);
            if cut {
                write_clojure(out, args, ARGS_PRINT);
                return;
            }
            // An uncut list prints as `[` items `]`, each item with the list's own
            // options: print the items alone.
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_clojure(out, item, ARGS_PRINT);
            }
        }
        _ => {
            let start = out.len();
            write_clojure(out, args, ARGS_PRINT);
            // A map whose keys are all hidden (`_token`) prints `{}`: no visible args.
            if matches!(&out[start..], "{}" | "#{}" | "[]") {
                out.truncate(start);
            }
        }
    }
}

/// FMT-004/006/007/008, DEF-003/004/007: `; Function: name - "doc"` or
/// `; Defined: name - "doc" = type`, on a new line.
pub(crate) fn write_def_line(out: &mut String, def: &Definition) {
    let function = def.is_function();
    out.push_str(if function {
        "\n; Function: "
    } else {
        "\n; Defined: "
    });
    out.push_str(&def.name);
    if let Some(doc) = docstring(def) {
        out.push_str(" - \"");
        push_sanitized_docstring(out, doc);
        out.push('"');
    }
    if !function {
        out.push_str(" = ");
        match &def.value {
            Some(v) => write_type_of(out, v),
            None => out.push_str("unknown"),
        }
    }
}

/// SAM-001/TRN-002: `, sample: ` and the sample of a definition's value (for a
/// definition whose [`DefKind`] has a sample).
pub(crate) fn write_sample(out: &mut String, def: &Definition) {
    if let Some(v) = &def.value {
        out.push_str(", sample: ");
        write_clojure(out, v, SAMPLE_PRINT);
    }
}
