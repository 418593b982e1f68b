//! The original `SingleUserCoalesced.to_messages/3`: `[SYSTEM, USER]` where the USER
//! message coalesces the mission, the namespaces, the expected output, the execution
//! history, the last error (only while the last turn is failing) and the turns
//! indicator; plus the stats object the original returned beside the messages.

use crate::history::{self, CallRef};
use crate::literals::{write_error_section, write_turns_indicator};
use crate::namespace::{self, MemoryEntry, Namespaces, SampleLimits};
use crate::signature::{KeyStyle, Signature, Type, to_lisp_key};
use recap_core::{Message, ToolSpec, Value};
use serde_json::{Value as Json, json};
use std::borrow::Cow;
use std::collections::BTreeMap;

/// The original's name for this renderer, reported in the stats.
pub const ORIGINAL_NAME: &str = "single-user-coalesced";

pub use crate::literals::FINAL_WORK_TURN;

/// One completed turn as the renderer sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnView<'a> {
    pub success: bool,
    /// `None` renders as `(unknown program)`.
    pub program: Option<&'a str>,
    /// The error text of a failed turn (ignored for successful ones).
    pub error: Cow<'a, str>,
    pub prints: Vec<&'a str>,
    pub tool_calls: Vec<CallRef<'a>>,
}

/// The numeric options (the original's `println_limit`, `tool_call_limit`,
/// `sample_limit`, `sample_printable_limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    pub println_limit: usize,
    pub tool_call_limit: usize,
    pub samples: SampleLimits,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            println_limit: 15,
            tool_call_limit: 20,
            samples: SampleLimits::default(),
        }
    }
}

/// Everything besides the turns: the original's `memory` and `opts`.
#[derive(Debug, Clone, Copy)]
pub struct Context<'a> {
    pub system_prompt: &'a str,
    /// The mission; an empty one is left out.
    pub prompt: &'a str,
    pub tools: &'a BTreeMap<String, ToolSpec>,
    pub data: &'a BTreeMap<String, Value>,
    pub memory: &'a [MemoryEntry<'a>],
    /// Turns left *after* the one being generated; 0 shows [`FINAL_WORK_TURN`].
    pub turns_left: u32,
    /// The agent's output signature, for the `# Expected Output` section.
    pub signature: Option<&'a str>,
    pub field_descriptions: Option<&'a BTreeMap<String, String>>,
    pub limits: Limits,
}

/// The stats object returned beside the messages. Totals count successful turns only;
/// `printlns_shown` counts prints even when no Output section is rendered, as the
/// original did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stats {
    pub turns_compressed: usize,
    pub tool_calls_total: usize,
    pub tool_calls_shown: usize,
    pub printlns_total: usize,
    pub printlns_shown: usize,
    pub error_turns_collapsed: usize,
}

impl Stats {
    pub fn to_json(&self) -> Json {
        json!({
            "enabled": true,
            "strategy": ORIGINAL_NAME,
            "turns_compressed": self.turns_compressed,
            "tool_calls_total": self.tool_calls_total,
            "tool_calls_shown": self.tool_calls_shown,
            "tool_calls_dropped": self.tool_calls_total - self.tool_calls_shown,
            "printlns_total": self.printlns_total,
            "printlns_shown": self.printlns_shown,
            "printlns_dropped": self.printlns_total - self.printlns_shown,
            "error_turns_collapsed": self.error_turns_collapsed,
        })
    }
}

/// Renders `[SYSTEM, USER]` and the stats.
pub fn to_messages(turns: &[TurnView<'_>], ctx: &Context<'_>) -> (Vec<Message>, Stats) {
    let (content, stats) = user_content(turns, ctx);
    (
        vec![Message::system(ctx.system_prompt), Message::user(content)],
        stats,
    )
}

fn user_content(turns: &[TurnView<'_>], ctx: &Context<'_>) -> (String, Stats) {
    // Failed turns contribute neither tool calls nor prints.
    let successful = turns.iter().filter(|t| t.success);
    let calls: Vec<CallRef<'_>> = successful
        .clone()
        .flat_map(|t| t.tool_calls.iter().copied())
        .collect();
    let prints: Vec<&str> = successful.flat_map(|t| t.prints.iter().copied()).collect();
    let has_println = namespace::has_println_tool(ctx.tools);
    let limits = ctx.limits;

    let sections = [
        Some(ctx.prompt.to_string()),
        Some(namespace::render(&Namespaces {
            tools: ctx.tools,
            data: ctx.data,
            memory: ctx.memory,
            has_println,
            samples: limits.samples,
        })),
        ctx.signature
            .and_then(|s| expected_output(s, ctx.field_descriptions)),
        Some(history::render_tool_calls(&calls, limits.tool_call_limit)),
        history::render_output(&prints, limits.println_limit, has_println),
        error_section(turns),
        Some(turns_indicator(ctx.turns_left)),
    ];
    let content = sections
        .into_iter()
        .flatten()
        .filter(|s| !s.is_empty())
        .collect::<Vec<_>>()
        .join("\n\n");

    let failures = turns.iter().filter(|t| !t.success).count();
    let last_failed = turns.last().is_some_and(|t| !t.success);
    let stats = Stats {
        turns_compressed: turns.len(),
        tool_calls_total: calls.len(),
        tool_calls_shown: calls.len().min(limits.tool_call_limit),
        printlns_total: prints.len(),
        printlns_shown: prints.len().min(limits.println_limit),
        error_turns_collapsed: if last_failed { failures - 1 } else { failures },
    };
    (content, stats)
}

/// Only the last turn's error, and only while it is failing; earlier errors collapse.
fn error_section(turns: &[TurnView<'_>]) -> Option<String> {
    let last = turns.last().filter(|t| !t.success)?;
    let mut out = String::new();
    write_error_section(
        &mut out,
        last.program.unwrap_or("(unknown program)"),
        &last.error,
    );
    Some(out)
}

/// `Turns left: N`, or the final-work-turn text when none are left.
pub fn turns_indicator(turns_left: u32) -> String {
    let mut out = String::new();
    write_turns_indicator(&mut out, u64::from(turns_left));
    out
}

/// The `# Expected Output` section for a valid output signature; `None` for an invalid
/// one. Field names are written in lisp style, as the original's prompts did.
pub fn expected_output(
    signature: &str,
    field_descriptions: Option<&BTreeMap<String, String>>,
) -> Option<String> {
    let output = Signature::parse(signature)?.output;
    let mut descs = String::new();
    if let (Type::Fields(fields), Some(fds)) = (&output, field_descriptions) {
        let lines: Vec<String> = fields
            .iter()
            .filter_map(|(name, _)| {
                fds.get(name)
                    .map(|d| format!("  - `{}`: {d}", to_lisp_key(name)))
            })
            .collect();
        if !lines.is_empty() {
            descs = format!("\n\nField descriptions:\n{}", lines.join("\n"));
        }
    }
    Some(format!(
        "# Expected Output\n\nYour final answer must match this format: `{}`{descs}\n\nCall `(return {})` when complete.",
        output.render(KeyStyle::Lisp),
        output.example(KeyStyle::Lisp)
    ))
}
