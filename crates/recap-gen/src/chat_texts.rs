//! The texts of generated observations and replies: outputs of a few lines or of
//! hundreds (numbered like a file view), with `\n`, `\r\n` or lone `\r` breaks and
//! trailing breaks, empty outputs, unicode, redrawn progress lines, and the JSON records
//! customer-service tools return.

use crate::chat_pools::{OUTPUT_LINES, SERVICE_TOOLS, ToolDef};
use crate::values::{TRICKY_STRINGS, WORDS};
use proptest::collection::vec;
use proptest::prelude::*;
use serde_json::json;
use std::fmt::Write as _;
use std::ops::RangeInclusive;

pub(crate) fn pick(pool: &'static [&'static str]) -> BoxedStrategy<String> {
    prop::sample::select(pool).prop_map(str::to_string).boxed()
}

/// A short free text: words, tricky strings, or random characters.
pub(crate) fn short_text() -> BoxedStrategy<String> {
    prop_oneof![
        4 => vec(prop::sample::select(WORDS), 1..8).prop_map(|w| w.join(" ")),
        1 => pick(TRICKY_STRINGS),
        1 => "[a-zA-Z0-9 ,.:;!?é日\\-]{0,40}",
    ]
    .boxed()
}

fn line_break() -> BoxedStrategy<&'static str> {
    prop_oneof![8 => Just("\n"), 2 => Just("\r\n"), 1 => Just("\r")].boxed()
}

/// Lines joined by one kind of break, with 0–2 trailing breaks.
fn lines(count: RangeInclusive<usize>, numbered: bool) -> BoxedStrategy<String> {
    (
        vec(prop::sample::select(OUTPUT_LINES), count),
        line_break(),
        prop_oneof![3 => Just(0usize), 3 => Just(1usize), 1 => Just(2usize)],
        1u32..400,
    )
        .prop_map(move |(ls, sep, trailing, first)| {
            let mut out = String::new();
            for (i, l) in ls.iter().enumerate() {
                if i > 0 {
                    out.push_str(sep);
                }
                if numbered {
                    let _ = write!(out, "{:>6}\t{l}", first + i as u32);
                } else {
                    out.push_str(l);
                }
            }
            for _ in 0..trailing {
                out.push_str(sep);
            }
            out
        })
        .boxed()
}

/// Progress output that redraws one line with lone carriage returns.
fn progress() -> BoxedStrategy<String> {
    (1usize..6, prop::bool::ANY)
        .prop_map(|(steps, newline)| {
            let mut out = String::new();
            for i in 0..=steps {
                let _ = write!(out, "Downloading {}%\r", i * 100 / steps);
            }
            out.push_str("done");
            if newline {
                out.push('\n');
            }
            out
        })
        .boxed()
}

/// What a tool or command prints: mostly a few lines, sometimes a long listing, an
/// empty output, unicode or a redrawn progress line.
pub(crate) fn output_text() -> BoxedStrategy<String> {
    prop_oneof![
        3 => lines(1..=3, false),
        4 => lines(2..=25, false),
        2 => lines(5..=40, true),
        1 => lines(60..=220, true),
        1 => Just(String::new()),
        1 => short_text(),
        1 => progress(),
    ]
    .boxed()
}

/// A customer-service tool's JSON answer, as text.
fn record_text() -> BoxedStrategy<String> {
    (
        "[A-Z0-9]{6}",
        prop::sample::select(&["economy", "business", "basic_economy"][..]),
        prop::sample::select(&["New York", "Seattle", "São Paulo", "Zürich"][..]),
        0u32..2000,
        prop::bool::ANY,
    )
        .prop_map(|(id, cabin, city, price, pretty)| {
            let v = json!({
                "reservation_id": id,
                "cabin": cabin,
                "origin": city,
                "flights": [{"flight_number": "HAT170", "date": "2024-05-21", "price": price}],
                "status": "confirmed"
            });
            if pretty {
                serde_json::to_string_pretty(&v).unwrap_or_default()
            } else {
                v.to_string()
            }
        })
        .boxed()
}

pub(crate) fn output_for(tool: &ToolDef) -> BoxedStrategy<String> {
    if SERVICE_TOOLS.iter().any(|t| t.name == tool.name) {
        prop_oneof![4 => record_text(), 1 => short_text(), 1 => output_text()].boxed()
    } else {
        output_text()
    }
}
