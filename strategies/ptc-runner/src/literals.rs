//! The fixed texts of the original's USER message, written once for both renderers:
//! the reference ([`crate::suc`], [`crate::namespace`], [`crate::history`], which the
//! golden cases check) and the fast path ([`crate::RenderCache`]), which must write the
//! same bytes.

use recap_core::{PrintOptions, Value, write_clojure, write_decimal};

/// The final-turn text (2026-02-10 onwards), shown when no turns are left after this one.
pub const FINAL_WORK_TURN: &str =
    "FINAL WORK TURN - tools stripped, you must call (return result) or (fail reason) now.";

/// The turns indicator before the count.
pub const TURNS_LEFT: &str = "Turns left: ";

pub const USER_HEADER: &str = ";; === user/ (your prelude) ===";
pub const CALLS_HEADER: &str = ";; Tool calls made:";
pub const NO_CALLS: &str = ";; No tool calls made";
pub const OUTPUT_HEADER: &str = ";; Output:";

/// The error section around the program and the message.
pub const ERROR_PARTS: [&str; 3] = [
    "---\nYour previous attempt:\n```clojure\n",
    "\n```\n\nError: ",
    "\n---",
];

/// `\n;   name(args)`: a line of the tool calls section. Args always sit in
/// parentheses, printed with `to_clojure(args, 3, 60)` whatever their shape
/// (`ping(nil)`, `get({})`).
pub fn write_call_line(out: &mut String, name: &str, args: &Value) {
    out.push_str("\n;   ");
    out.push_str(name);
    out.push('(');
    write_clojure(out, args, PrintOptions::TOOL_ARGS);
    out.push(')');
}

/// The error section of a failing last turn: its program and its error message.
pub fn write_error_section(out: &mut String, program: &str, message: &str) {
    out.push_str(ERROR_PARTS[0]);
    out.push_str(program);
    out.push_str(ERROR_PARTS[1]);
    out.push_str(message);
    out.push_str(ERROR_PARTS[2]);
}

/// `Turns left: N`, or [`FINAL_WORK_TURN`] when none are left after this turn.
pub fn write_turns_indicator(out: &mut String, turns_left: u64) {
    if turns_left == 0 {
        out.push_str(FINAL_WORK_TURN);
    } else {
        out.push_str(TURNS_LEFT);
        write_decimal(out, turns_left);
    }
}
