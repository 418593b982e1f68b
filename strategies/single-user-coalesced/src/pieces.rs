//! The per-item texts of the summary, and [`Direct`], the source that prints them on the
//! spot. The session cache ([`crate::SummaryCache`]) is the other source.

use crate::same::same_value;
use crate::summary::{ARGS_PRINT, SAMPLE_PRINT, docstring, push_cut_print, push_sanitized_docstring};
use recap_core::{Definition, ToolCall, Turn, Value, write_clojure, write_type_of};

/// A tool call with its position: turn index in the session, index in the turn.
#[derive(Clone, Copy)]
pub(crate) struct CallAt<'t> {
    pub turn: usize,
    pub index: usize,
    pub call: &'t ToolCall,
}

/// A definition with its position: turn index in the session, index in the turn.
#[derive(Clone, Copy)]
pub(crate) struct DefAt<'t> {
    pub turn: usize,
    pub index: usize,
    pub def: &'t Definition,
}

/// Where the summary gets its per-item texts. Every method must append exactly what the
/// `write_*` functions of this module append; a source only decides when they run.
pub(crate) trait Pieces<'t> {
    /// FMT-002: the arguments of a call (without the parentheses); see [`write_args`].
    fn args(&mut self, out: &mut String, call: &CallAt<'t>);

    /// TC-008: whether `call` repeats `previous`, the successful call right before it.
    fn same_as_previous(&mut self, call: &CallAt<'t>, previous: &CallAt<'t>) -> bool;

    /// Folds the memory over the successful turns among `turns` (DEF-001/002/009);
    /// returns how many definitions are live.
    fn fold(&mut self, turns: &'t [Turn]) -> usize;

    /// The `i`-th live definition of the last [`Pieces::fold`], oldest first.
    fn live_at(&self, turns: &'t [Turn], i: usize) -> DefAt<'t>;

    /// The `; Function:` or `; Defined:` line of a definition, without its sample; see
    /// [`write_def_line`].
    fn def_line(&mut self, out: &mut String, def: &DefAt<'t>);

    /// The sample of a definition with a value (after `, sample: `).
    fn sample(&mut self, out: &mut String, def: &DefAt<'t>);

    /// One print, cut (TRN-011).
    fn print(&mut self, out: &mut String, turn: usize, index: usize, print: &str);
}

/// Prints every piece when asked; keeps only the folded memory.
#[derive(Default)]
pub(crate) struct Direct<'t> {
    live: Vec<DefAt<'t>>,
}

impl<'t> Pieces<'t> for Direct<'t> {
    fn args(&mut self, out: &mut String, call: &CallAt<'t>) {
        write_args(out, &call.call.args);
    }

    fn same_as_previous(&mut self, call: &CallAt<'t>, previous: &CallAt<'t>) -> bool {
        same_call(call.call, previous.call)
    }

    fn fold(&mut self, turns: &'t [Turn]) -> usize {
        self.live.clear();
        for (t, turn) in turns.iter().enumerate() {
            fold_turn(&mut self.live, t, turn, |at| at.def.name.as_str(), |at| at);
        }
        self.live.len()
    }

    fn live_at(&self, _turns: &'t [Turn], i: usize) -> DefAt<'t> {
        self.live[i]
    }

    fn def_line(&mut self, out: &mut String, def: &DefAt<'t>) {
        write_def_line(out, def.def);
    }

    fn sample(&mut self, out: &mut String, def: &DefAt<'t>) {
        write_sample(out, def.def);
    }

    fn print(&mut self, out: &mut String, _turn: usize, _index: usize, print: &str) {
        push_cut_print(out, print);
    }
}

/// Applies the definitions of `turn` (turn index `t`) to the live list: a redefinition
/// replaces the entry and moves the name to the end (SPEC section 4). Failed turns
/// define nothing. `name_of` reads the name of the definition an entry stands for.
pub(crate) fn fold_turn<'t, E>(
    live: &mut Vec<E>,
    t: usize,
    turn: &'t Turn,
    name_of: impl Fn(&E) -> &'t str,
    entry: impl Fn(DefAt<'t>) -> E,
) {
    if !turn.success {
        return;
    }
    for (index, def) in turn.definitions.iter().enumerate() {
        if let Some(pos) = live.iter().position(|e| name_of(e) == def.name) {
            live.remove(pos);
        }
        live.push(entry(DefAt {
            turn: t,
            index,
            def,
        }));
    }
}

/// TC-008: same tool and the same arguments as the language sees them.
pub(crate) fn same_call(a: &ToolCall, b: &ToolCall) -> bool {
    a.name == b.name && same_value(&a.args, &b.args)
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

/// SAM-001/TRN-002: the sample of a definition's value (nothing when it has none).
pub(crate) fn write_sample(out: &mut String, def: &Definition) {
    if let Some(v) = &def.value {
        write_clojure(out, v, SAMPLE_PRINT);
    }
}
