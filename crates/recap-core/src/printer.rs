//! The one printer for samples and arguments (SPEC section 2, TRN-001) and the type
//! vocabulary (SPEC section 3).
//!
//! # Depth
//!
//! [`write_clojure`] (and its wrapper [`to_clojure`]) prints **iteratively**: nested collections are walked with an
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
use std::cmp::Ordering;
mod numbers;

#[cfg(test)]
use numbers::push_float_fmt;
pub use numbers::write_decimal;
use numbers::{push_float, push_i64, push_u64};

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
/// A thin wrapper over [`write_clojure`]; renderers that build a larger text should call
/// that instead and skip the intermediate `String`.
pub fn to_clojure(value: &Value, opts: PrintOptions) -> (String, bool) {
    let mut out = String::new();
    let truncated = write_clojure(&mut out, value, opts);
    (out, truncated)
}

/// Appends `value` printed Clojure-style (as [`to_clojure`]) to `out`; returns whether
/// anything was cut.
///
/// Allocates nothing for scalars; a collection allocates its frame stack once, and a set
/// or map one vector of references to sort. Never recurses on the call stack (see the
/// module docs) and never panics.
pub fn write_clojure(out: &mut String, value: &Value, opts: PrintOptions) -> bool {
    let mut printer = Printer {
        out,
        truncated: false,
        stack: Vec::new(),
    };
    printer.visit(value, opts);
    printer.run();
    printer.truncated
}

/// The type vocabulary of SPEC section 3 (TYP-001..012).
///
/// Maps count all their entries, hidden `_` keys included (TYP-004 "key count").
/// Special floats (`##Inf`, `##-Inf`, `##NaN`) are `float`: they are floats in this
/// value model, unlike the original where they were atoms.
///
/// A thin wrapper over [`write_type_of`].
pub fn type_of(value: &Value) -> String {
    let mut out = String::new();
    write_type_of(&mut out, value);
    out
}

/// Appends [`type_of`]`(value)` to `out` without allocating.
pub fn write_type_of(out: &mut String, value: &Value) {
    let (name, count) = match value {
        Value::List(items) => ("list[", items.len()),
        Value::Map(entries) => ("map[", entries.len()),
        Value::Set(items) => ("set[", items.len()),
        scalar => {
            out.push_str(scalar_type_name(scalar));
            return;
        }
    };
    out.push_str(name);
    push_u64(out, count as u64);
    out.push(']');
}

/// The type name of a value that is not a list, map or set.
fn scalar_type_name(value: &Value) -> &'static str {
    match value {
        Value::Str(_) => "string",
        Value::Int(_) => "integer",
        Value::Float(_) | Value::Special(_) => "float",
        Value::Bool(_) => "boolean",
        Value::Keyword(_) => "keyword",
        Value::Nil => "nil",
        Value::Fn(_) => "#fn[...]",
        Value::Tuple(_)
        | Value::Var(_)
        | Value::Builtin
        | Value::Date(_)
        | Value::List(_)
        | Value::Map(_)
        | Value::Set(_) => "unknown",
    }
}

/// What an open collection still has to print.
enum Items<'a> {
    /// List or tuple items, or set elements already in order; limited.
    Seq(std::slice::Iter<'a, Value>),
    /// Set elements, sorted and limited.
    Sorted(std::vec::IntoIter<&'a Value>),
    /// Map entries already in key order: filtered and limited on the fly.
    InOrder(std::iter::Take<std::iter::Filter<std::slice::Iter<'a, (Value, Value)>, EntryFilter>>),
    /// Map entries, sorted, filtered and limited.
    Entries(std::vec::IntoIter<&'a (Value, Value)>),
}

type EntryFilter = fn(&&(Value, Value)) -> bool;

/// How an open collection closes.
#[derive(Clone, Copy)]
enum Close {
    /// `]`, `}`, or ` ...}` for a cut map.
    Plain(&'static str),
    /// A cut list or set: ` ...] (5 items, showing first 3)` (TRN-004).
    Counted {
        bracket: &'static str,
        len: usize,
        kept: usize,
    },
}

/// One open collection on the explicit stack.
struct Frame<'a> {
    items: Items<'a>,
    /// Options for the items (for maps: for the values).
    child: PrintOptions,
    /// A map value whose key has just been printed.
    pending_value: Option<&'a Value>,
    started: bool,
    close: Close,
}

enum Step<'a> {
    Item(&'a Value, PrintOptions),
    Key(&'a Value),
    Close(Close),
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
            Items::InOrder(it) => it.next().map(|(k, v)| {
                self.pending_value = Some(v);
                Step::Key(k)
            }),
            Items::Entries(it) => it.next().map(|(k, v)| {
                self.pending_value = Some(v);
                Step::Key(k)
            }),
        };
        match step {
            Some(step) => (sep, step),
            None => (false, Step::Close(self.close)),
        }
    }
}

struct Printer<'a, 'o> {
    out: &'o mut String,
    truncated: bool,
    stack: Vec<Frame<'a>>,
}

impl<'a> Printer<'a, '_> {
    fn run(&mut self) {
        while let Some(frame) = self.stack.last_mut() {
            let (sep, step) = frame.next_step();
            if sep {
                self.out.push(' ');
            }
            match step {
                Step::Item(v, opts) => self.visit(v, opts),
                Step::Key(k) => self.visit_key(k),
                Step::Close(close) => {
                    push_close(self.out, close);
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
            Value::Str(s) => push_quoted(self.out, s),
            other => self.visit(other, PrintOptions::default()),
        }
    }

    /// Prints a scalar, or prints a collection's opening and pushes its frame.
    fn visit(&mut self, value: &'a Value, opts: PrintOptions) {
        let out = &mut *self.out;
        match value {
            Value::Nil => out.push_str("nil"),
            Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Value::Int(i) => push_i64(out, *i),
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
                self.open_seq("[", &items[..kept], opts, close);
            }
            Value::Set(items) => {
                let kept = opts.limit.map_or(items.len(), |m| m.min(items.len()));
                let close = self.seq_close("}", items.len(), kept);
                // Stable-sorting elements already in order changes nothing: skip the
                // vector of references.
                if is_sorted_by(items, |v| v) {
                    self.open_seq("#{", &items[..kept], opts, close);
                } else {
                    let mut sorted: Vec<&Value> = items.iter().collect();
                    smallest_sorted(&mut sorted, kept, key_order);
                    if sorted.iter().all(|v| is_leaf(v)) {
                        self.flat_seq("#{", sorted.into_iter(), opts, close);
                    } else {
                        self.open("#{", Items::Sorted(sorted.into_iter()), opts, close);
                    }
                }
            }
            Value::Map(entries) => {
                let show_hidden = opts.show_hidden;
                let keep = move |e: &&(Value, Value)| show_hidden || !is_hidden(&e.0);
                // One pass: how many entries show, and whether they are in key order
                // already (maps decoded from JSON objects usually are).
                let mut visible = 0;
                let mut in_order = true;
                let mut previous: Option<&Value> = None;
                for entry in entries {
                    if keep(&entry) {
                        visible += 1;
                    }
                    if in_order {
                        in_order = previous.is_none_or(|p| in_key_order(p, &entry.0));
                        previous = Some(&entry.0);
                    }
                }
                // Without hidden keys, the entries need no filtering on the way.
                let show_all = visible == entries.len();
                let kept = opts.map_entry_limit().map_or(visible, |m| m.min(visible));
                let close = if kept < visible {
                    self.truncated = true;
                    // SPEC section 2: a cut map has no count.
                    Close::Plain(" ...}")
                } else {
                    Close::Plain("}")
                };
                let child = opts.for_map_values(kept);
                let leaf_entry = |(k, v): &&(Value, Value)| is_leaf(k) && is_leaf(v);
                if in_order && show_all {
                    let shown = &entries[..kept];
                    if shown.iter().all(|e| leaf_entry(&e)) {
                        self.flat_entries(shown.iter(), child, close);
                    } else {
                        let all: EntryFilter = all_entries;
                        let items = Items::InOrder(entries.iter().filter(all).take(kept));
                        self.open("{", items, child, close);
                    }
                } else if in_order {
                    let in_order = entries.iter().filter(keep).take(kept);
                    if in_order.clone().all(|e| leaf_entry(&e)) {
                        self.flat_entries(in_order, child, close);
                    } else {
                        let keep: EntryFilter = if show_hidden {
                            |_| true
                        } else {
                            |(k, _)| !is_hidden(k)
                        };
                        let items = Items::InOrder(entries.iter().filter(keep).take(kept));
                        self.open("{", items, child, close);
                    }
                } else {
                    let mut sorted: Vec<&(Value, Value)> = entries.iter().filter(keep).collect();
                    smallest_sorted(&mut sorted, kept, |a, b| key_order(&a.0, &b.0));
                    if sorted.iter().all(leaf_entry) {
                        self.flat_entries(sorted.into_iter(), child, close);
                    } else {
                        self.open("{", Items::Entries(sorted.into_iter()), child, close);
                    }
                }
            }
        }
    }

    /// The closing of a list or set, with the TRN-004 count when cut.
    fn seq_close(&mut self, bracket: &'static str, len: usize, kept: usize) -> Close {
        if kept < len {
            self.truncated = true;
            Close::Counted { bracket, len, kept }
        } else {
            Close::Plain(bracket)
        }
    }

    /// A list, tuple or set whose shown items are `shown`.
    fn open_seq(&mut self, opening: &str, shown: &'a [Value], opts: PrintOptions, close: Close) {
        if shown.iter().all(is_leaf) {
            self.flat_seq(opening, shown.iter(), opts, close);
        } else {
            self.open(opening, Items::Seq(shown.iter()), opts, close);
        }
    }

    /// Prints a collection's opening and pushes its frame.
    fn open(&mut self, opening: &str, items: Items<'a>, child: PrintOptions, close: Close) {
        self.out.push_str(opening);
        self.stack.push(Frame {
            items,
            child,
            pending_value: None,
            started: false,
            close,
        });
    }

    /// Prints a collection of leaves whole, without a frame: printing a leaf opens
    /// nothing, so this nests no deeper than one call.
    fn flat_seq(
        &mut self,
        opening: &str,
        items: impl Iterator<Item = &'a Value>,
        opts: PrintOptions,
        close: Close,
    ) {
        self.out.push_str(opening);
        for (i, item) in items.enumerate() {
            if i > 0 {
                self.out.push(' ');
            }
            self.visit(item, opts);
        }
        push_close(self.out, close);
    }

    /// Prints a map whose shown keys and values are leaves whole, without a frame.
    fn flat_entries(
        &mut self,
        entries: impl Iterator<Item = &'a (Value, Value)>,
        child: PrintOptions,
        close: Close,
    ) {
        self.out.push('{');
        for (i, (key, value)) in entries.enumerate() {
            if i > 0 {
                self.out.push(' ');
            }
            self.visit_key(key);
            self.out.push(' ');
            self.visit(value, child);
        }
        push_close(self.out, close);
    }

    /// TRN-005: a string longer than the printable limit keeps its first `limit` chars
    /// and gets `...` inside the quotes.
    fn push_string(&mut self, s: &str, printable_limit: Option<usize>) {
        match printable_limit.and_then(|n| nth_char_start(s, n)) {
            Some(i) => {
                self.truncated = true;
                self.out.reserve(i + 5);
                self.out.push('"');
                push_escaped(self.out, &s[..i]);
                self.out.push_str("...\"");
            }
            None => push_quoted(self.out, s),
        }
    }
}

/// Sorts `items` by `order` and keeps the first `kept`, exactly as a stable sort
/// followed by `truncate(kept)` would, but in O(n) plus the sort of the kept ones: a
/// huge map or set sampled with a limit of 3 is not sorted whole.
fn smallest_sorted<T>(items: &mut Vec<&T>, kept: usize, order: impl Fn(&T, &T) -> Ordering) {
    if kept >= items.len() {
        items.sort_by(|a, b| order(a, b));
        return;
    }
    // The references point into one slice, so their addresses are the original
    // positions: breaking ties by address reproduces the stable order.
    let total = |a: &&T, b: &&T| {
        order(a, b).then_with(|| std::ptr::from_ref::<T>(*a).cmp(&std::ptr::from_ref::<T>(*b)))
    };
    if kept > 0 {
        items.select_nth_unstable_by(kept - 1, total);
    }
    items.truncate(kept);
    items.sort_unstable_by(total);
}

fn push_close(out: &mut String, close: Close) {
    match close {
        Close::Plain(text) => out.push_str(text),
        // The space before `...` is there even when nothing is kept (`[ ...] (5 items,
        // showing first 0)`), as in the original.
        Close::Counted { bracket, len, kept } => {
            out.push_str(" ...");
            out.push_str(bracket);
            out.push_str(" (");
            push_u64(out, len as u64);
            out.push_str(" items, showing first ");
            push_u64(out, kept as u64);
            out.push(')');
        }
    }
}

/// The byte index where char number `n` (0-based) starts, `None` when `s` has at most
/// `n` chars (nothing to cut). The one rule for cutting text at a char count: the
/// printer's string limit and the summary's print limit both cut here.
pub fn nth_char_start(s: &str, n: usize) -> Option<usize> {
    // At most n bytes means at most n chars.
    if s.len() <= n {
        return None;
    }
    // n ASCII bytes are n chars, so char n starts right after them.
    if s.as_bytes()[..n].is_ascii() {
        return Some(n);
    }
    // Count char starts (bytes that are not UTF-8 continuation bytes) a block at a
    // time, in byte counters the compiler vectorizes, then byte by byte in the block
    // where char n starts.
    const BLOCK: usize = 64;
    let is_start = |b: u8| (b as i8) >= -0x40;
    let bytes = s.as_bytes();
    let (mut seen, mut i) = (0usize, 0usize);
    for block in bytes.chunks_exact(BLOCK) {
        let in_block = block
            .iter()
            .fold(0u8, |acc, &b| acc + u8::from(is_start(b)));
        if seen + usize::from(in_block) > n {
            break;
        }
        seen += usize::from(in_block);
        i += BLOCK;
    }
    for (j, &b) in bytes[i..].iter().enumerate() {
        if is_start(b) {
            if seen == n {
                return Some(i + j);
            }
            seen += 1;
        }
    }
    None
}

/// A value that prints without opening a collection.
fn is_leaf(value: &Value) -> bool {
    !matches!(
        value,
        Value::List(_) | Value::Tuple(_) | Value::Set(_) | Value::Map(_)
    )
}

/// Whether `a` may come before `b` among map keys (see [`key_order`]); keyword keys,
/// the usual ones, compare directly.
fn in_key_order(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Keyword(x), Value::Keyword(y)) => x <= y,
        _ => key_order(a, b) != Ordering::Greater,
    }
}

/// An [`EntryFilter`] keeping every entry.
fn all_entries(_: &&(Value, Value)) -> bool {
    true
}

/// Whether `items` are in non-decreasing print order by `key`: then a stable sort
/// leaves them as they are.
fn is_sorted_by<T>(items: &[T], key: impl Fn(&T) -> &Value) -> bool {
    items
        .windows(2)
        .all(|w| key_order(key(&w[0]), key(&w[1])) != Ordering::Greater)
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

fn push_quoted(out: &mut String, s: &str) {
    out.reserve(s.len() + 2);
    out.push('"');
    push_escaped(out, s);
    out.push('"');
}

/// Bytes that may start an escape: `"` `\` `#` (before `{`), C0 controls and DEL, and
/// 0xC2, the lead byte of the C1 controls U+0080..U+009F. None of them is a UTF-8
/// continuation byte, so a byte scan finds exactly the chars to escape.
const MAY_ESCAPE: [bool; 256] = {
    let mut table = [false; 256];
    let mut b = 0;
    while b < 0x20 {
        table[b] = true;
        b += 1;
    }
    table[b'"' as usize] = true;
    table[b'\\' as usize] = true;
    table[b'#' as usize] = true;
    table[0x7f] = true;
    table[0xc2] = true;
    table
};

/// Escapes `"` `\` newline tab CR with a backslash, `#{` as `\#{` (as the original
/// does), and every other control character (`char::is_control`: U+0000..U+001F,
/// U+007F..U+009F) as `\uXXXX` (SPEC section 2 difference 2). Copies unescaped runs in
/// one piece.
fn push_escaped(out: &mut String, s: &str) {
    let bytes = s.as_bytes();
    let mut run_start = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if !MAY_ESCAPE[b as usize] {
            i += 1;
            continue;
        }
        // (the escape, bytes of `s` it replaces); `None` for a byte kept as is.
        let escape: Option<(&str, u32, usize)> = match b {
            b'"' => Some(("\\\"", 0, 1)),
            b'\\' => Some(("\\\\", 0, 1)),
            b'\n' => Some(("\\n", 0, 1)),
            b'\t' => Some(("\\t", 0, 1)),
            b'\r' => Some(("\\r", 0, 1)),
            b'#' => (bytes.get(i + 1) == Some(&b'{')).then_some(("\\#", 0, 1)),
            0xc2 => match bytes.get(i + 1) {
                Some(&next @ 0x80..=0x9f) => Some(("", u32::from(next), 2)),
                _ => None,
            },
            control => Some(("", u32::from(control), 1)),
        };
        match escape {
            Some((text, code, width)) => {
                out.push_str(&s[run_start..i]);
                if text.is_empty() {
                    push_unicode_escape(out, code);
                } else {
                    out.push_str(text);
                }
                i += width;
                run_start = i;
            }
            None => i += 1,
        }
    }
    out.push_str(&s[run_start..]);
}

/// `\u00XX` for a control char (all of them are below U+0100).
fn push_unicode_escape(out: &mut String, code: u32) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push_str("\\u00");
    out.push(char::from(HEX[(code >> 4 & 0xf) as usize]));
    out.push(char::from(HEX[(code & 0xf) as usize]));
}

#[cfg(test)]
mod tests;
