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
use crate::summary::{
    ARGS_PRINT, SAMPLE_PRINT, docstring, push_cut_print, push_sanitized_docstring,
};
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

    /// Folds the memory over the successful turns among `turns` (DEF-001/002/009);
    /// returns how many definitions are live. The `def*` methods then take a position
    /// among them, oldest first.
    fn fold(&mut self, turns: &'t [Turn]) -> usize;

    /// Whether live definition `i` is a function, and whether its value has a sample.
    fn def_kind(&self, turns: &'t [Turn], i: usize) -> DefKind;

    /// The line of live definition `i` (see [`write_def_line`]), followed by its sample
    /// when `with_sample` (see [`write_sample`]).
    fn def_line(&mut self, out: &mut String, turns: &'t [Turn], i: usize, with_sample: bool);

    /// FMT-014: the last `limit` prints of the successful turns among `turns`, each on
    /// its own line (a line break, then the print cut as [`push_cut_print`] does).
    fn output(&mut self, out: &mut String, turns: &'t [Turn], limit: usize);
}

/// How a definition shows in the summary.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct DefKind {
    /// `; Function:` (else `; Defined:`).
    pub function: bool,
    /// Its value has a sample (SAM-001): shown when nothing was printed.
    pub has_sample: bool,
}

impl DefKind {
    pub fn of(def: &Definition) -> Self {
        Self {
            function: def.is_function(),
            has_sample: def.value.as_ref().is_some_and(has_sample),
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

    fn fold(&mut self, turns: &'t [Turn]) -> usize {
        self.live.clear();
        for turn in turns.iter().filter(|t| t.success) {
            for def in &turn.definitions {
                fold_one(&mut self.live, &def.name, def, |d| d.name.as_str());
            }
        }
        self.live.len()
    }

    fn def_kind(&self, _turns: &'t [Turn], i: usize) -> DefKind {
        DefKind::of(self.live[i])
    }

    fn def_line(&mut self, out: &mut String, _turns: &'t [Turn], i: usize, with_sample: bool) {
        write_def_line(out, self.live[i]);
        if with_sample {
            write_sample(out, self.live[i]);
        }
    }

    fn output(&mut self, out: &mut String, turns: &'t [Turn], limit: usize) {
        last_n(&mut self.prints, turns, limit, |t| &t.prints, String::as_str);
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

/// Applies one definition, named `name`, to the live list: a redefinition replaces the
/// entry and moves the name to the end (SPEC section 4). `name_of` reads an entry's
/// name.
pub(crate) fn fold_one<'t, E>(
    live: &mut Vec<E>,
    name: &str,
    entry: E,
    name_of: impl Fn(&E) -> &'t str,
) {
    if let Some(pos) = live.iter().position(|e| name_of(e) == name) {
        live.remove(pos);
    }
    live.push(entry);
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
