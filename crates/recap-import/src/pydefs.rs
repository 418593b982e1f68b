//! Finds the names a Python code action binds at top level — `name = ...` (also
//! chained, annotated and tuple targets), `def`, `async def` and `class` — in source
//! order, with a function's docstring when its body starts with a string literal.
//!
//! Names bound by `import`, `for`, `with` or inside blocks are not reported: the scan is
//! lexical (strings, comments, brackets and line continuations are understood), it does
//! not execute anything, and values are never known.

use crate::pylit;
use recap_core::{DefKind, Definition};

/// One logical line: indentation of its first physical line, its text with comments
/// removed, and the same text with string contents masked so that `=`, `:` and brackets
/// inside strings are invisible.
struct Logical {
    indent: usize,
    text: String,
    masked: String,
}

const KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

fn logical_lines(src: &str) -> Vec<Logical> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        // Indentation of this logical line.
        let mut indent = 0;
        while i < chars.len() && (chars[i] == ' ' || chars[i] == '\t') {
            indent += 1;
            i += 1;
        }
        let mut text = String::new();
        let mut masked = String::new();
        let mut depth = 0usize;
        while i < chars.len() {
            let c = chars[i];
            match c {
                '#' => {
                    while i < chars.len() && chars[i] != '\n' {
                        i += 1;
                    }
                }
                '\\' if chars.get(i + 1) == Some(&'\n') => i += 2,
                '\n' if depth == 0 => {
                    i += 1;
                    break;
                }
                '\'' | '"' => {
                    let end = string_end(&chars, i);
                    text.extend(&chars[i..end]);
                    masked.push(c);
                    masked.extend(std::iter::repeat_n('_', end - i - 1));
                    i = end;
                }
                _ => {
                    match c {
                        '(' | '[' | '{' => depth += 1,
                        ')' | ']' | '}' => depth = depth.saturating_sub(1),
                        _ => {}
                    }
                    text.push(c);
                    masked.push(if c == '\n' { ' ' } else { c });
                    i += 1;
                }
            }
        }
        if !masked.trim().is_empty() {
            out.push(Logical {
                indent,
                text,
                masked,
            });
        }
    }
    out
}

/// Index just past the string literal starting at `start` (unterminated: end of input).
fn string_end(chars: &[char], start: usize) -> usize {
    let q = chars[start];
    let triple = chars.get(start + 1) == Some(&q) && chars.get(start + 2) == Some(&q);
    let mut i = start + if triple { 3 } else { 1 };
    while i < chars.len() {
        match chars[i] {
            '\\' => i += 2,
            c if c == q => {
                if !triple {
                    return i + 1;
                }
                if chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q) {
                    return i + 3;
                }
                i += 1;
            }
            '\n' if !triple => return i,
            _ => i += 1,
        }
    }
    chars.len()
}

fn is_identifier(s: &str) -> bool {
    let mut cs = s.chars();
    cs.next().is_some_and(|c| c.is_alphabetic() || c == '_')
        && cs.all(|c| c.is_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&s)
}

/// The names bound by top-level assignment targets of one statement, left to right.
fn assigned_names(masked: &str) -> Vec<String> {
    let chars: Vec<char> = masked.chars().collect();
    let mut depth = 0usize;
    let mut cuts = Vec::new();
    for (i, &c) in chars.iter().enumerate() {
        match c {
            '(' | '[' | '{' => depth += 1,
            ')' | ']' | '}' => depth = depth.saturating_sub(1),
            '=' if depth == 0 => {
                let prev = if i > 0 { chars[i - 1] } else { ' ' };
                let next = chars.get(i + 1).copied().unwrap_or(' ');
                if next != '=' && !"=!<>:+-*/%&|^@".contains(prev) {
                    cuts.push(i);
                }
            }
            _ => {}
        }
    }
    let mut names = Vec::new();
    let mut start = 0;
    for cut in cuts {
        let target: String = chars[start..cut].iter().collect();
        start = cut + 1;
        // `x: int = 1` annotates; the name is before the colon.
        let target = target.split(':').next().unwrap_or("").trim();
        let target = target
            .strip_prefix('(')
            .and_then(|t| t.strip_suffix(')'))
            .or_else(|| target.strip_prefix('[').and_then(|t| t.strip_suffix(']')))
            .unwrap_or(target);
        for part in target.split(',') {
            let part = part.trim().trim_start_matches('*');
            if is_identifier(part) {
                names.push(part.to_string());
            }
        }
    }
    names
}

/// `inspect.cleandoc`: strip, and remove the common indentation of the lines after the
/// first.
fn clean_docstring(doc: &str) -> String {
    let lines: Vec<&str> = doc.trim().lines().collect();
    let indent = lines
        .iter()
        .skip(1)
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    let mut out: Vec<String> = Vec::with_capacity(lines.len());
    for (i, l) in lines.iter().enumerate() {
        if i == 0 {
            out.push(l.to_string());
        } else {
            out.push(l.get(indent..).unwrap_or(l.trim_start()).to_string());
        }
    }
    out.join("\n")
}

/// The top-level definitions of a Python program, in source order.
pub fn top_level_definitions(code: &str) -> Vec<Definition> {
    let lines = logical_lines(code);
    let mut defs = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if line.indent != 0 {
            continue;
        }
        let masked = line.masked.trim();
        let def_head = masked
            .strip_prefix("async def ")
            .or_else(|| masked.strip_prefix("def "));
        if let Some(rest) = def_head {
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if is_identifier(&name) {
                let docstring = lines
                    .get(i + 1)
                    .filter(|next| next.indent > 0)
                    .and_then(|next| pylit::parse(next.text.trim()).ok())
                    .and_then(|j| j.as_str().map(clean_docstring))
                    .filter(|d| !d.is_empty());
                defs.push(Definition {
                    name,
                    kind: DefKind::Defn,
                    docstring,
                    value: None,
                });
            }
            continue;
        }
        if let Some(rest) = masked.strip_prefix("class ") {
            let name: String = rest
                .trim_start()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if is_identifier(&name) {
                defs.push(Definition {
                    name,
                    kind: DefKind::Def,
                    docstring: None,
                    value: None,
                });
            }
            continue;
        }
        let first_word: String = masked
            .chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect();
        if KEYWORDS.contains(&first_word.as_str()) {
            continue;
        }
        for name in assigned_names(masked) {
            defs.push(Definition {
                name,
                kind: DefKind::Def,
                docstring: None,
                value: None,
            });
        }
    }
    defs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(code: &str) -> Vec<(String, &'static str, Option<String>)> {
        top_level_definitions(code)
            .into_iter()
            .map(|d| (d.name, d.kind.as_str(), d.docstring))
            .collect()
    }

    #[test]
    fn assignments_defs_and_classes_in_order() {
        let code = r#"import math
from x import y
x = 1
a, (b) = 2, 3
c = d = f(k=1, s="=")
e: int = 4
n += 1
if x == 1:
    inner = 2
def prime_factors(n):
    """Returns a dictionary
    of prime factors."""
    return {}
async def fetch(url): return url
class Thing:
    pass
g = lambda v=1: v
lst[0] = 5
obj.attr = 6
s = """multi
z = 7
"""
t = (1,
     2)  # w = 8
"#;
        assert_eq!(
            names(code),
            vec![
                ("x".into(), "def", None),
                ("a".into(), "def", None),
                ("c".into(), "def", None),
                ("d".into(), "def", None),
                ("e".into(), "def", None),
                (
                    "prime_factors".into(),
                    "defn",
                    Some("Returns a dictionary\nof prime factors.".into())
                ),
                ("fetch".into(), "defn", None),
                ("Thing".into(), "def", None),
                ("g".into(), "def", None),
                ("s".into(), "def", None),
                ("t".into(), "def", None),
            ]
        );
    }

    #[test]
    fn unterminated_strings_do_not_panic() {
        assert_eq!(
            names("x = 'abc\ny = 2"),
            vec![("x".into(), "def", None), ("y".into(), "def", None)]
        );
        assert_eq!(names("x = '''abc"), vec![("x".into(), "def", None)]);
    }
}
