//! The namespace sections of the original (`Namespace.Tool`, `.Data`, `.User` and the
//! coordinator): `;; === tools ===`, `;; === data/ ===`, `;; === user/ (your prelude) ===`.

use crate::literals::USER_HEADER;
use crate::signature::{KeyStyle, Signature, Type, push_lisp_key};
use recap_core::{
    PrintOptions, ToolSpec, Value, to_clojure, type_of, write_clojure, write_type_of,
};
use std::collections::BTreeMap;

/// Names are padded to this many chars before the `;` column; longer names are not
/// cut, so they run straight into the `;`.
const NAME_WIDTH: usize = 30;

/// The limits for `data/` and `user/` samples (`sample_limit`, `sample_printable_limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SampleLimits {
    pub limit: usize,
    pub printable_limit: usize,
}

impl Default for SampleLimits {
    fn default() -> Self {
        Self {
            limit: 3,
            printable_limit: 80,
        }
    }
}

impl SampleLimits {
    fn sample(self, value: &Value) -> String {
        to_clojure(
            value,
            PrintOptions::new(Some(self.limit), Some(self.printable_limit)),
        )
        .0
    }
}

/// One live definition as the `user/` section sees it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MemoryEntry<'a> {
    pub name: &'a str,
    /// `None` when the value was not recorded.
    pub value: Option<&'a Value>,
    /// Functions are listed before values and rendered as `(name [params])`.
    pub function: bool,
    pub docstring: Option<&'a str>,
}

/// Everything the coordinator renders.
#[derive(Debug, Clone, Copy)]
pub struct Namespaces<'a> {
    pub tools: &'a BTreeMap<String, ToolSpec>,
    pub data: &'a BTreeMap<String, Value>,
    pub memory: &'a [MemoryEntry<'a>],
    pub has_println: bool,
    pub samples: SampleLimits,
}

/// The three sections joined by a blank line; the tools section is always present
/// (`;; No tools available` when there are none), the others only when non-empty.
pub fn render(ns: &Namespaces<'_>) -> String {
    let mut out = render_tools(ns.tools);
    for section in [
        render_data(ns.data, &DataOptions::new(ns.samples)),
        render_user(ns.memory, ns.has_println, ns.samples),
    ]
    .into_iter()
    .flatten()
    {
        out.push_str("\n\n");
        out.push_str(&section);
    }
    out
}

/// Whether a tool named `println` exists: the original's switch for the Output section
/// and for dropping `user/` samples (not whether anything was printed).
pub fn has_println_tool(tools: &BTreeMap<String, ToolSpec>) -> bool {
    tools.contains_key("println")
}

// ---------------------------------------------------------------------------- tools

/// `;; === tools ===`, one `tool/name(p type, …) -> ret  ; description` line per tool
/// in name order, then a usage example built from the first tool that has parameters.
pub fn render_tools(tools: &BTreeMap<String, ToolSpec>) -> String {
    let mut out = String::new();
    write_tools(&mut out, tools);
    out
}

/// Appends [`render_tools`]`(tools)` to `out`, with no per-line strings (the strategy
/// prints this section once per session).
pub(crate) fn write_tools(out: &mut String, tools: &BTreeMap<String, ToolSpec>) {
    if tools.is_empty() {
        out.push_str(";; No tools available");
        return;
    }
    out.push_str(";; === tools ===");
    // Types are printed here first, then copied without their colons.
    let mut scratch = String::new();
    let mut example: Option<(&str, Signature)> = None;
    for (name, spec) in tools {
        let sig = tool_signature(spec);
        out.push_str("\ntool/");
        out.push_str(name);
        out.push('(');
        for (i, (param, t)) in sig.params.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            push_lisp_key(out, param);
            out.push(' ');
            push_bare(out, t, &mut scratch);
        }
        out.push_str(") -> ");
        push_bare(out, &sig.output, &mut scratch);
        if let Some(desc) = spec.description.as_deref().filter(|d| !d.is_empty()) {
            out.push_str("  ; ");
            out.push_str(desc);
        }
        if example.is_none() && !sig.params.is_empty() {
            example = Some((name, sig));
        }
    }
    match example {
        Some((name, sig)) => {
            out.push_str("\n;; Example: (tool/");
            out.push_str(name);
            out.push_str(" {");
            for (i, (param, _)) in sig.params.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push(':');
                push_lisp_key(out, param);
                out.push_str(" ...");
            }
            out.push_str("})");
        }
        None => out.push_str("\n;; Call with named args: (tool/name {:key value})"),
    }
}

/// Appends `t` without its colons, field names in lisp style (`[{user-id int}]`),
/// printing the type into `scratch` first.
fn push_bare(out: &mut String, t: &Type, scratch: &mut String) {
    scratch.clear();
    t.write(scratch, KeyStyle::Lisp);
    for piece in scratch.split(':') {
        out.push_str(piece);
    }
}

/// A missing or invalid signature renders as `() -> any`.
fn tool_signature(spec: &ToolSpec) -> Signature {
    spec.signature
        .as_deref()
        .and_then(Signature::parse_tool)
        .unwrap_or(Signature {
            params: Vec::new(),
            output: Type::Any,
        })
}

// ----------------------------------------------------------------------------- data

/// Options of the `data/` section.
#[derive(Debug, Clone, Default)]
pub struct DataOptions {
    pub samples: SampleLimits,
    /// ` -- description` appended to the entry of that name.
    pub field_descriptions: BTreeMap<String, String>,
    /// A signature whose parameter types replace the runtime types.
    pub context_signature: Option<Signature>,
}

impl DataOptions {
    pub fn new(samples: SampleLimits) -> Self {
        Self {
            samples,
            ..Self::default()
        }
    }
}

/// `;; === data/ ===` then `data/name<pad>; type, sample: S` per entry in name order;
/// `None` when there is no data. `_`-prefixed entries show `[Hidden] [Firewalled]`.
pub fn render_data(data: &BTreeMap<String, Value>, opts: &DataOptions) -> Option<String> {
    if data.is_empty() {
        return None;
    }
    let mut lines = vec![";; === data/ ===".to_string()];
    for (name, value) in data {
        let declared = opts
            .context_signature
            .as_ref()
            .and_then(|s| s.params.iter().find(|(p, _)| p == name))
            .map(|(_, t)| t.render(KeyStyle::AsWritten).replace(':', ""));
        let type_label = declared.unwrap_or_else(|| type_of(value));
        let sample = if name.starts_with('_') {
            "[Hidden] [Firewalled]".to_string()
        } else {
            format!("sample: {}", opts.samples.sample(value))
        };
        let mut line = format!("{}; {type_label}, {sample}", pad(&format!("data/{name}")));
        if let Some(desc) = opts.field_descriptions.get(name) {
            line.push_str(" -- ");
            line.push_str(desc);
        }
        lines.push(line);
    }
    Some(lines.join("\n"))
}

// ----------------------------------------------------------------------------- user

/// `;; === user/ (your prelude) ===`, functions then values, each group in name order;
/// `None` when nothing informative is defined. Values that are nil, `[]` or `{}` are
/// left out. With `has_println` values show no sample.
pub fn render_user(
    memory: &[MemoryEntry<'_>],
    has_println: bool,
    samples: SampleLimits,
) -> Option<String> {
    let mut functions: Vec<&MemoryEntry<'_>> = Vec::new();
    let mut values: Vec<&MemoryEntry<'_>> = Vec::new();
    for entry in memory.iter().filter(|e| informative(e.value)) {
        if entry.function {
            functions.push(entry);
        } else {
            values.push(entry);
        }
    }
    if functions.is_empty() && values.is_empty() {
        return None;
    }
    functions.sort_by(|a, b| a.name.cmp(b.name));
    values.sort_by(|a, b| a.name.cmp(b.name));
    let mut lines = vec![USER_HEADER.to_string()];
    lines.extend(functions.into_iter().map(function_line));
    lines.extend(
        values
            .into_iter()
            .map(|e| value_line(e, has_println, samples)),
    );
    Some(lines.join("\n"))
}

pub(crate) fn informative(value: Option<&Value>) -> bool {
    match value {
        Some(Value::Nil) => false,
        Some(Value::List(items)) => !items.is_empty(),
        Some(Value::Map(entries)) => !entries.is_empty(),
        _ => true,
    }
}

/// `(name [params])`, then `; "doc"` in the padded column and ` -> type` when the
/// closure recorded the type of its last result. Docstrings are inserted verbatim, as
/// the original did (no `;` removal, no quote escaping).
pub(crate) fn function_line(entry: &MemoryEntry<'_>) -> String {
    let mut line = String::new();
    write_function_line(&mut line, entry);
    line
}

/// Appends [`function_line`]`(entry)` to `out`, with no intermediate strings (the
/// per-session cache prints every definition's line this way).
pub(crate) fn write_function_line(out: &mut String, entry: &MemoryEntry<'_>) {
    let closure = match entry.value {
        Some(Value::Fn(c)) => Some(c),
        _ => None,
    };
    let start = out.len();
    out.push('(');
    out.push_str(entry.name);
    out.push_str(" [");
    match closure {
        Some(c) => {
            let names = c.params.iter().map(|p| p.as_deref().unwrap_or("_"));
            for (i, name) in names.enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(name);
            }
            if let Some(rest) = &c.rest {
                if !c.params.is_empty() {
                    out.push(' ');
                }
                out.push_str("& ");
                out.push_str(rest);
            }
        }
        // A `defn` whose closure was not recorded: its parameters are unknown.
        None => out.push_str("..."),
    }
    out.push_str("])");
    let doc = entry
        .docstring
        .or_else(|| closure.and_then(|c| c.docstring.as_deref()))
        .filter(|d| !d.is_empty());
    if let Some(doc) = doc {
        pad_from(out, start);
        out.push_str("; \"");
        out.push_str(doc);
        out.push('"');
    }
    if let Some(t) = closure.and_then(|c| c.return_type.as_deref()) {
        out.push_str(" -> ");
        out.push_str(t);
    }
}

/// `name<pad>; = type`, then `, [Hidden]` for `_` names, else `, sample: S` unless a
/// println tool exists. An unrecorded value is `unknown` and has no sample.
pub(crate) fn value_line(
    entry: &MemoryEntry<'_>,
    has_println: bool,
    samples: SampleLimits,
) -> String {
    let mut line = String::new();
    write_value_line(&mut line, entry, has_println, samples);
    line
}

/// Appends [`value_line`]`(entry, …)` to `out`, with no intermediate strings.
pub(crate) fn write_value_line(
    out: &mut String,
    entry: &MemoryEntry<'_>,
    has_println: bool,
    samples: SampleLimits,
) {
    let start = out.len();
    out.push_str(entry.name);
    pad_from(out, start);
    out.push_str("; = ");
    match entry.value {
        Some(value) => write_type_of(out, value),
        None => out.push_str("unknown"),
    }
    if entry.name.starts_with('_') {
        out.push_str(", [Hidden]");
    } else if !has_println && let Some(value) = entry.value {
        out.push_str(", sample: ");
        write_clojure(
            out,
            value,
            PrintOptions::new(Some(samples.limit), Some(samples.printable_limit)),
        );
    }
}

/// Pads what was appended to `out` since `start` with spaces to [`NAME_WIDTH`] chars;
/// never cuts.
fn pad_from(out: &mut String, start: usize) {
    const SPACES: &str = "                              ";
    const _: () = assert!(SPACES.len() == NAME_WIDTH);
    let len = out[start..].chars().count();
    out.push_str(&SPACES[..NAME_WIDTH.saturating_sub(len)]);
}

/// Pads with spaces to [`NAME_WIDTH`] chars; never cuts.
fn pad(name: &str) -> String {
    let mut out = name.to_string();
    pad_from(&mut out, 0);
    out
}
