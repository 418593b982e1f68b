//! The namespace sections of the original (`Namespace.Tool`, `.Data`, `.User` and the
//! coordinator): `;; === tools ===`, `;; === data/ ===`, `;; === user/ (your prelude) ===`.

use crate::signature::{KeyStyle, Signature, Type, to_lisp_key};
use recap_core::{PrintOptions, ToolSpec, Value, to_clojure, type_of};
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
    if tools.is_empty() {
        return ";; No tools available".to_string();
    }
    let parsed: Vec<(&str, &ToolSpec, Signature)> = tools
        .iter()
        .map(|(name, spec)| (name.as_str(), spec, tool_signature(spec)))
        .collect();
    let mut lines = vec![";; === tools ===".to_string()];
    for (name, spec, sig) in &parsed {
        let params: Vec<String> = sig
            .params
            .iter()
            .map(|(p, t)| format!("{} {}", to_lisp_key(p), bare(t)))
            .collect();
        let mut line = format!(
            "tool/{name}({}) -> {}",
            params.join(", "),
            bare(&sig.output)
        );
        if let Some(desc) = spec.description.as_deref().filter(|d| !d.is_empty()) {
            line.push_str("  ; ");
            line.push_str(desc);
        }
        lines.push(line);
    }
    let example = parsed
        .iter()
        .find(|(_, _, sig)| !sig.params.is_empty())
        .map(|(name, _, sig)| {
            let args: Vec<String> = sig
                .params
                .iter()
                .map(|(p, _)| format!(":{} ...", to_lisp_key(p)))
                .collect();
            format!(";; Example: (tool/{name} {{{}}})", args.join(" "))
        })
        .unwrap_or_else(|| ";; Call with named args: (tool/name {:key value})".to_string());
    lines.push(example);
    lines.join("\n")
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

/// A type without its colons, field names in lisp style: `[{user-id int}]`.
fn bare(t: &Type) -> String {
    t.render(KeyStyle::Lisp).replace(':', "")
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
    let mut lines = vec![";; === user/ (your prelude) ===".to_string()];
    lines.extend(functions.into_iter().map(function_line));
    lines.extend(
        values
            .into_iter()
            .map(|e| value_line(e, has_println, samples)),
    );
    Some(lines.join("\n"))
}

fn informative(value: Option<&Value>) -> bool {
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
fn function_line(entry: &MemoryEntry<'_>) -> String {
    let closure = match entry.value {
        Some(Value::Fn(c)) => Some(c),
        _ => None,
    };
    let params = match closure {
        Some(c) => {
            let mut names: Vec<String> = c
                .params
                .iter()
                .map(|p| p.as_deref().unwrap_or("_").to_string())
                .collect();
            if let Some(rest) = &c.rest {
                names.push(format!("& {rest}"));
            }
            names.join(" ")
        }
        // A `defn` whose closure was not recorded: its parameters are unknown.
        None => "...".to_string(),
    };
    let base = format!("({} [{params}])", entry.name);
    let return_type = closure
        .and_then(|c| c.return_type.as_deref())
        .map(|t| format!(" -> {t}"))
        .unwrap_or_default();
    let doc = entry
        .docstring
        .or_else(|| closure.and_then(|c| c.docstring.as_deref()))
        .filter(|d| !d.is_empty());
    match doc {
        Some(doc) => format!("{}; \"{doc}\"{return_type}", pad(&base)),
        None => format!("{base}{return_type}"),
    }
}

/// `name<pad>; = type`, then `, [Hidden]` for `_` names, else `, sample: S` unless a
/// println tool exists. An unrecorded value is `unknown` and has no sample.
fn value_line(entry: &MemoryEntry<'_>, has_println: bool, samples: SampleLimits) -> String {
    let type_label = entry.value.map_or_else(|| "unknown".to_string(), type_of);
    let mut line = format!("{}; = {type_label}", pad(entry.name));
    if entry.name.starts_with('_') {
        line.push_str(", [Hidden]");
    } else if !has_println && let Some(value) = entry.value {
        line.push_str(", sample: ");
        line.push_str(&samples.sample(value));
    }
    line
}

/// Pads with spaces to [`NAME_WIDTH`] chars; never cuts.
fn pad(name: &str) -> String {
    let len = name.chars().count();
    let mut out = String::with_capacity(name.len() + NAME_WIDTH.saturating_sub(len));
    out.push_str(name);
    out.extend(std::iter::repeat_n(' ', NAME_WIDTH.saturating_sub(len)));
    out
}
