//! The one printer for samples and arguments (SPEC section 2, TRN-001) and the type
//! vocabulary (SPEC section 3).
//!
//! # Depth
//!
//! [`to_clojure`] prints **iteratively**: nested collections are walked with an
//! explicit stack on the heap (one small frame per open collection), never by
//! recursion, so any value that fits in memory prints completely and correctly — a
//! 200,000-deep nested list prints as 200,000 `[` followed by 200,000 `]`. There is no
//! depth cap and no depth marker: values decoded from JSON are at most 128 deep
//! (serde_json's limit) and values built in code are printed in full.
//!
//! # Lengths
//!
//! All lengths (`printable_limit`, the string cut) count Unicode scalar values
//! (`char`s), SPEC section 2 difference 1. Cutting a string looks at no more than
//! `printable_limit + 1` chars, and escaping is a single pass, so a 50 MB string prints
//! in linear time.

use crate::value::{SpecialFloat, Value, key_order};
use std::borrow::Cow;
use std::fmt::Write as _;

/// Options of [`to_clojure`]: `limit` caps collection items, `printable_limit` caps
/// string lengths (in chars) and the width given to map values.
///
/// `Default` is "no limits, hide `_` keys", the original's defaults. Build options with
/// [`PrintOptions::new`] or `..Default::default()` so that added fields do not break
/// callers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrintOptions {
    /// At most this many items of a list, tuple or set, and entries of a map.
    pub limit: Option<usize>,
    /// Strings longer than this many chars are cut; maps divide it among their values.
    pub printable_limit: Option<usize>,
    /// Print map entries whose key (keyword or string) begins with `_`. The original's
    /// option `filter_hidden` is the negation; `false` (hide them) is the default.
    pub show_hidden: bool,
}

impl PrintOptions {
    /// TRN-002: options for the samples of definitions.
    pub const SAMPLE: PrintOptions = PrintOptions::new(Some(3), Some(80));
    /// TRN-003: options for tool-call arguments.
    pub const TOOL_ARGS: PrintOptions = PrintOptions::new(Some(3), Some(60));

    /// Options with the given limits that hide `_` keys.
    pub const fn new(limit: Option<usize>, printable_limit: Option<usize>) -> Self {
        PrintOptions {
            limit,
            printable_limit,
            show_hidden: false,
        }
    }

    /// The options a map passes to each of its `n` kept values (SPEC section 2): the
    /// printable limit is split as `max((P - 10n) / n, 10)`; everything else is kept.
    fn for_map_values(self, n: usize) -> Self {
        match self.printable_limit {
            Some(p) if n > 0 => PrintOptions {
                printable_limit: Some((p.saturating_sub(10 * n) / n).max(10)),
                ..self
            },
            _ => self,
        }
    }

    /// How many entries of a map are kept: `limit`, further capped by
    /// `max(printable_limit / 30, 1)` when a printable limit is set.
    fn map_entry_limit(self) -> Option<usize> {
        match (self.limit, self.printable_limit) {
            (limit, None) => limit,
            (None, Some(p)) => Some((p / 30).max(1)),
            (Some(l), Some(p)) => Some(l.min((p / 30).max(1))),
        }
    }
}

/// Prints `value` Clojure-style; the flag says whether anything was cut (a collection
/// shortened by the limit or a string shortened by the printable limit, anywhere in the
/// value). Hiding `_` keys is not a cut.
///
/// Never recurses on the call stack (see the module docs) and never panics.
pub fn to_clojure(value: &Value, opts: PrintOptions) -> (String, bool) {
    let mut printer = Printer::default();
    printer.visit(value, opts);
    printer.run();
    (printer.out, printer.truncated)
}

/// The type vocabulary of SPEC section 3 (TYP-001..012).
///
/// Maps count all their entries, hidden `_` keys included (TYP-004 "key count").
/// Special floats (`##Inf`, `##-Inf`, `##NaN`) are `float`: they are floats in this
/// value model, unlike the original where they were atoms.
pub fn type_of(value: &Value) -> String {
    match value {
        Value::List(items) => format!("list[{}]", items.len()),
        Value::Map(entries) => format!("map[{}]", entries.len()),
        Value::Set(items) => format!("set[{}]", items.len()),
        Value::Str(_) => "string".into(),
        Value::Int(_) => "integer".into(),
        Value::Float(_) | Value::Special(_) => "float".into(),
        Value::Bool(_) => "boolean".into(),
        Value::Keyword(_) => "keyword".into(),
        Value::Nil => "nil".into(),
        Value::Fn(_) => "#fn[...]".into(),
        Value::Tuple(_) | Value::Var(_) | Value::Builtin | Value::Date(_) => "unknown".into(),
    }
}

/// What an open collection still has to print.
enum Items<'a> {
    /// List or tuple items, already limited.
    Seq(std::iter::Take<std::slice::Iter<'a, Value>>),
    /// Set elements, sorted and limited.
    Sorted(std::vec::IntoIter<&'a Value>),
    /// Map entries, sorted, filtered and limited.
    Entries(std::vec::IntoIter<(&'a Value, &'a Value)>),
}

/// One open collection on the explicit stack.
struct Frame<'a> {
    items: Items<'a>,
    /// Options for the items (for maps: for the values).
    child: PrintOptions,
    /// A map value whose key has just been printed.
    pending_value: Option<&'a Value>,
    started: bool,
    close: Cow<'static, str>,
}

enum Step<'a> {
    Item(&'a Value, PrintOptions),
    Key(&'a Value),
    Close(Cow<'static, str>),
}

impl<'a> Frame<'a> {
    fn next_step(&mut self) -> (bool, Step<'a>) {
        if let Some(v) = self.pending_value.take() {
            return (true, Step::Item(v, self.child));
        }
        let sep = self.started;
        self.started = true;
        let step = match &mut self.items {
            Items::Seq(it) => it.next().map(|v| Step::Item(v, self.child)),
            Items::Sorted(it) => it.next().map(|v| Step::Item(v, self.child)),
            Items::Entries(it) => it.next().map(|(k, v)| {
                self.pending_value = Some(v);
                Step::Key(k)
            }),
        };
        match step {
            Some(step) => (sep, step),
            None => (false, Step::Close(std::mem::take(&mut self.close))),
        }
    }
}

#[derive(Default)]
struct Printer<'a> {
    out: String,
    truncated: bool,
    stack: Vec<Frame<'a>>,
}

impl<'a> Printer<'a> {
    fn run(&mut self) {
        while let Some(frame) = self.stack.last_mut() {
            let (sep, step) = frame.next_step();
            if sep {
                self.out.push(' ');
            }
            match step {
                Step::Item(v, opts) => self.visit(v, opts),
                Step::Key(k) => self.visit_key(k),
                Step::Close(text) => {
                    self.out.push_str(&text);
                    self.stack.pop();
                }
            }
        }
    }

    /// Map keys are printed whole: keywords and strings never cut, other keys with
    /// default options (as the original does).
    fn visit_key(&mut self, key: &'a Value) {
        match key {
            Value::Keyword(k) => {
                self.out.push(':');
                self.out.push_str(k);
            }
            Value::Str(s) => push_quoted(&mut self.out, s),
            other => self.visit(other, PrintOptions::default()),
        }
    }

    /// Prints a scalar, or prints a collection's opening and pushes its frame.
    fn visit(&mut self, value: &'a Value, opts: PrintOptions) {
        let out = &mut self.out;
        match value {
            Value::Nil => out.push_str("nil"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => {
                let _ = write!(out, "{i}");
            }
            Value::Float(f) => push_float(out, *f),
            Value::Special(s) => out.push_str(special_text(*s)),
            Value::Keyword(k) => {
                out.push(':');
                out.push_str(k);
            }
            Value::Str(s) => self.push_string(s, opts.printable_limit),
            Value::Date(d) => push_quoted(out, d),
            Value::Var(name) => {
                out.push_str("#'");
                out.push_str(name);
            }
            Value::Builtin => out.push_str("#<builtin>"),
            Value::Fn(c) => {
                out.push_str("#fn[");
                let names = c
                    .params
                    .iter()
                    .map(|p| p.as_deref().unwrap_or("_"))
                    .chain(c.rest.as_deref().into_iter().flat_map(|r| ["&", r]));
                for (i, name) in names.enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    out.push_str(name);
                }
                out.push(']');
            }
            Value::List(items) | Value::Tuple(items) => {
                let kept = opts.limit.map_or(items.len(), |m| m.min(items.len()));
                let close = self.seq_close("]", items.len(), kept);
                self.open("[", Items::Seq(items.iter().take(kept)), opts, close);
            }
            Value::Set(items) => {
                let mut sorted: Vec<&Value> = items.iter().collect();
                sorted.sort_by(|a, b| key_order(a, b));
                let kept = opts.limit.map_or(sorted.len(), |m| m.min(sorted.len()));
                sorted.truncate(kept);
                let close = self.seq_close("}", items.len(), kept);
                self.open("#{", Items::Sorted(sorted.into_iter()), opts, close);
            }
            Value::Map(entries) => {
                let mut visible: Vec<(&Value, &Value)> = entries
                    .iter()
                    .filter(|(k, _)| opts.show_hidden || !is_hidden(k))
                    .map(|(k, v)| (k, v))
                    .collect();
                visible.sort_by(|a, b| key_order(a.0, b.0));
                let kept = opts
                    .map_entry_limit()
                    .map_or(visible.len(), |m| m.min(visible.len()));
                let close = if kept < visible.len() {
                    self.truncated = true;
                    // SPEC section 2: a cut map has no count.
                    Cow::Borrowed(" ...}")
                } else {
                    Cow::Borrowed("}")
                };
                visible.truncate(kept);
                let child = opts.for_map_values(kept);
                self.open("{", Items::Entries(visible.into_iter()), child, close);
            }
        }
    }

    /// The closing text of a list or set, with the TRN-004 count when cut. The space
    /// before `...` is there even when nothing is kept (`[ ...] (5 items, showing
    /// first 0)`), as in the original.
    fn seq_close(&mut self, bracket: &'static str, len: usize, kept: usize) -> Cow<'static, str> {
        if kept < len {
            self.truncated = true;
            Cow::Owned(format!(" ...{bracket} ({len} items, showing first {kept})"))
        } else {
            Cow::Borrowed(bracket)
        }
    }

    fn open(
        &mut self,
        opening: &str,
        items: Items<'a>,
        child: PrintOptions,
        close: Cow<'static, str>,
    ) {
        self.out.push_str(opening);
        self.stack.push(Frame {
            items,
            child,
            pending_value: None,
            started: false,
            close,
        });
    }

    /// TRN-005: a string longer than the printable limit keeps its first `limit` chars
    /// and gets `...` inside the quotes.
    fn push_string(&mut self, s: &str, printable_limit: Option<usize>) {
        let cut_at = printable_limit.and_then(|n| s.char_indices().nth(n).map(|(i, _)| i));
        match cut_at {
            Some(i) => {
                self.truncated = true;
                self.out.reserve(i + 5);
                self.out.push('"');
                push_escaped(&mut self.out, &s[..i]);
                self.out.push_str("...\"");
            }
            None => push_quoted(&mut self.out, s),
        }
    }
}

/// Keys (keyword or string) beginning with `_` are hidden unless `show_hidden`.
fn is_hidden(key: &Value) -> bool {
    matches!(key, Value::Keyword(k) | Value::Str(k) if k.starts_with('_'))
}

fn special_text(s: SpecialFloat) -> &'static str {
    match s {
        SpecialFloat::Infinity => "##Inf",
        SpecialFloat::NegativeInfinity => "##-Inf",
        SpecialFloat::NaN => "##NaN",
    }
}

/// Fixed-point, rounded to 10 decimals (Rust's exact decimal expansion, ties to even),
/// trailing zeros removed but at least one digit after the point. Non-finite floats
/// built in code print like the special floats.
fn push_float(out: &mut String, f: f64) {
    if f.is_nan() {
        out.push_str("##NaN");
    } else if f.is_infinite() {
        out.push_str(if f > 0.0 { "##Inf" } else { "##-Inf" });
    } else {
        let start = out.len();
        let _ = write!(out, "{f:.10}");
        let trimmed = out[start..].trim_end_matches('0').len();
        out.truncate(start + trimmed);
        if out.ends_with('.') {
            out.push('0');
        }
    }
}

fn push_quoted(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    push_escaped(out, s);
    out.push('"');
}

/// Escapes `"` `\` newline tab CR with a backslash, `#{` as `\#{` (as the original
/// does), and every other control character as `\uXXXX` (SPEC section 2 difference 2).
/// Copies unescaped runs in one piece.
fn push_escaped(out: &mut String, s: &str) {
    let mut run_start = 0;
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let escape: Option<Cow<'static, str>> = match c {
            '"' => Some(Cow::Borrowed("\\\"")),
            '\\' => Some(Cow::Borrowed("\\\\")),
            '\n' => Some(Cow::Borrowed("\\n")),
            '\t' => Some(Cow::Borrowed("\\t")),
            '\r' => Some(Cow::Borrowed("\\r")),
            '#' if matches!(chars.peek(), Some((_, '{'))) => Some(Cow::Borrowed("\\#")),
            c if c.is_control() => Some(Cow::Owned(format!("\\u{:04x}", u32::from(c)))),
            _ => None,
        };
        if let Some(escape) = escape {
            out.push_str(&s[run_start..i]);
            out.push_str(&escape);
            run_start = i + c.len_utf8();
        }
    }
    out.push_str(&s[run_start..]);
}

#[cfg(test)]
mod tests;
