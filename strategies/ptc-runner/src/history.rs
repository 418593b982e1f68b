//! The execution-history sections of the original (`Namespace.ExecutionHistory`):
//! `;; Tool calls made:` and `;; Output:`.

use crate::literals::{CALLS_HEADER, NO_CALLS, OUTPUT_HEADER, write_call_line};
use recap_core::Value;

/// One tool call as the history sees it: results are never shown.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallRef<'a> {
    pub name: &'a str,
    pub args: &'a Value,
}

/// `;; No tool calls made`, or `;; Tool calls made:` and one `;   name(args)` line for
/// each of the last `limit` calls. Args always sit in parentheses, printed with
/// `to_clojure(args, 3, 60)` whatever their shape (`ping(nil)`, `get({})`); identical
/// consecutive calls are listed one by one.
pub fn render_tool_calls(calls: &[CallRef<'_>], limit: usize) -> String {
    if calls.is_empty() {
        return NO_CALLS.to_string();
    }
    let mut out = String::from(CALLS_HEADER);
    for call in last(calls, limit) {
        write_call_line(&mut out, call.name, call.args);
    }
    out
}

/// `None` unless a println tool exists; else `;; Output:` and the last `limit` prints,
/// each verbatim on its own line(s) (a multi-line print counts once).
pub fn render_output(prints: &[&str], limit: usize, has_println: bool) -> Option<String> {
    if !has_println {
        return None;
    }
    let mut out = String::from(OUTPUT_HEADER);
    for p in last(prints, limit) {
        out.push('\n');
        out.push_str(p);
    }
    Some(out)
}

/// The last `n` items (all of them when there are fewer).
fn last<T>(items: &[T], n: usize) -> &[T] {
    &items[items.len().saturating_sub(n)..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_most_recent_calls() {
        let args = Value::Map(vec![]);
        let calls: Vec<CallRef<'_>> = ["a", "b", "c"]
            .iter()
            .map(|n| CallRef {
                name: n,
                args: &args,
            })
            .collect();
        assert_eq!(
            render_tool_calls(&calls, 2),
            ";; Tool calls made:\n;   b({})\n;   c({})"
        );
        assert_eq!(render_tool_calls(&[], 2), ";; No tool calls made");
    }

    #[test]
    fn output_needs_a_println_tool() {
        assert_eq!(render_output(&["x"], 5, false), None);
        assert_eq!(
            render_output(&["a\nb", "c"], 1, true).as_deref(),
            Some(";; Output:\nc")
        );
        assert_eq!(render_output(&[], 5, true).as_deref(), Some(";; Output:"));
    }
}
