//! Finds the definitions a PTC-Lisp program makes: its `(def name ...)` and
//! `(defn name ...)` forms, in source order — at top level and inside code that runs when
//! the program runs (`let`, `do`, `when`, `doseq`, …), but not inside function bodies
//! (`fn`, `#(...)`, `defn`), which define only when called.
//!
//! Only names and literal docstrings can be recovered from source; values are computed
//! at run time and are not logged, so they stay unknown. The reader understands enough
//! Clojure syntax — strings, comments, character literals, regexes, reader macros — to
//! find form boundaries reliably; it does not evaluate anything.

use recap_core::{DefKind, Definition};

/// Why a program could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct ReadError {
    pub line: usize,
    pub message: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Form {
    List(Vec<Form>),
    Str(String),
    Symbol(String),
    /// Anything whose content does not matter here (vectors, maps, numbers, …).
    Other,
}

struct Reader {
    chars: Vec<char>,
    pos: usize,
}

const DELIMITERS: &str = "()[]{}\";,";

impl Reader {
    fn new(src: &str) -> Self {
        Self {
            chars: src.chars().collect(),
            pos: 0,
        }
    }

    fn line(&self) -> usize {
        self.chars[..self.pos.min(self.chars.len())]
            .iter()
            .filter(|c| **c == '\n')
            .count()
            + 1
    }

    fn err<T>(&self, message: impl Into<String>) -> Result<T, ReadError> {
        Err(ReadError {
            line: self.line(),
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_blank(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_whitespace() || c == ',' {
                self.pos += 1;
            } else if c == ';' {
                while let Some(c) = self.peek() {
                    if c == '\n' {
                        break;
                    }
                    self.pos += 1;
                }
            } else {
                break;
            }
        }
    }

    /// Reads the next form; `None` at the end of input or before `close`.
    fn next(&mut self, close: Option<char>) -> Result<Option<Form>, ReadError> {
        self.skip_blank();
        let Some(c) = self.peek() else {
            return match close {
                Some(c) => self.err(format!("unexpected end of program: missing `{c}`")),
                None => Ok(None),
            };
        };
        if let Some(expected) = close
            && c == expected
        {
            self.pos += 1;
            return Ok(None);
        }
        self.pos += 1;
        Ok(Some(match c {
            '(' => Form::List(self.children(')')?),
            '[' => {
                self.children(']')?;
                Form::Other
            }
            '{' => {
                self.children('}')?;
                Form::Other
            }
            ')' | ']' | '}' => return self.err(format!("unexpected `{c}`")),
            '"' => Form::Str(self.string()?),
            '\\' => {
                // A character literal: one char, then any letters (`\newline`, `\u0041`).
                if self.peek().is_none() {
                    return self.err("character literal at end of program");
                }
                self.pos += 1;
                while self.peek().is_some_and(|c| c.is_alphanumeric()) {
                    self.pos += 1;
                }
                Form::Other
            }
            '\'' | '`' | '@' => {
                self.required(close)?;
                Form::Other
            }
            '~' => {
                if self.peek() == Some('@') {
                    self.pos += 1;
                }
                self.required(close)?;
                Form::Other
            }
            '^' => {
                // Metadata applies to the form after it, which is what we return.
                self.required(close)?;
                return self.next(close);
            }
            '#' => match self.peek() {
                Some('{') => {
                    self.pos += 1;
                    self.children('}')?;
                    Form::Other
                }
                Some('(') => {
                    self.pos += 1;
                    self.children(')')?;
                    Form::Other
                }
                Some('"') => {
                    self.pos += 1;
                    self.string()?;
                    Form::Other
                }
                Some('_') => {
                    self.pos += 1;
                    self.required(close)?;
                    return self.next(close);
                }
                Some('\'') => {
                    self.pos += 1;
                    self.required(close)?;
                    Form::Other
                }
                _ => {
                    self.atom();
                    Form::Other
                }
            },
            _ => {
                self.pos -= 1;
                Form::Symbol(self.atom())
            }
        }))
    }

    fn required(&mut self, close: Option<char>) -> Result<Form, ReadError> {
        match self.next(close)? {
            Some(f) => Ok(f),
            None => self.err("a reader macro needs a form after it"),
        }
    }

    fn children(&mut self, close: char) -> Result<Vec<Form>, ReadError> {
        let mut items = Vec::new();
        while let Some(f) = self.next(Some(close))? {
            items.push(f);
        }
        Ok(items)
    }

    fn atom(&mut self) -> String {
        let start = self.pos;
        while let Some(c) = self.peek() {
            if c.is_whitespace() || DELIMITERS.contains(c) {
                break;
            }
            self.pos += 1;
        }
        self.chars[start..self.pos].iter().collect()
    }

    /// The body of a string literal after its opening quote, with escapes decoded.
    fn string(&mut self) -> Result<String, ReadError> {
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err("unterminated string");
            };
            self.pos += 1;
            match c {
                '"' => return Ok(out),
                '\\' => {
                    let Some(e) = self.peek() else {
                        return self.err("unterminated string");
                    };
                    self.pos += 1;
                    match e {
                        'n' => out.push('\n'),
                        't' => out.push('\t'),
                        'r' => out.push('\r'),
                        'b' => out.push('\u{8}'),
                        'f' => out.push('\u{c}'),
                        'u' => {
                            let hex: String = self.chars
                                [self.pos..(self.pos + 4).min(self.chars.len())]
                                .iter()
                                .collect();
                            match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                                Some(ch) if hex.len() == 4 => {
                                    out.push(ch);
                                    self.pos += 4;
                                }
                                _ => return self.err(format!("bad unicode escape \\u{hex}")),
                            }
                        }
                        other => out.push(other),
                    }
                }
                c => out.push(c),
            }
        }
    }
}

/// The definitions `program` makes when it runs, in source order.
pub fn definitions(program: &str) -> Result<Vec<Definition>, ReadError> {
    let mut reader = Reader::new(program);
    let mut defs = Vec::new();
    loop {
        // Models often end a program with one `)` too many (`... nil)`); the runner
        // evaluates such programs, so a stray closer between top-level forms is skipped.
        reader.skip_blank();
        if matches!(reader.peek(), Some(')' | ']' | '}')) {
            reader.pos += 1;
            continue;
        }
        match reader.next(None)? {
            Some(form) => collect(&form, &mut defs),
            None => break,
        }
    }
    Ok(defs)
}

/// Forms whose body runs only when the function they make is called: a `def` inside
/// one is not made by running the program.
const DEFERRED: &[&str] = &["fn", "fn*", "letfn", "defmacro", "quote"];

fn collect(form: &Form, defs: &mut Vec<Definition>) {
    let Form::List(items) = form else { return };
    let Some(Form::Symbol(head)) = items.first() else {
        for f in items {
            collect(f, defs);
        }
        return;
    };
    let kind = match head.as_str() {
        "def" | "defonce" => DefKind::Def,
        "defn" | "defn-" => DefKind::Defn,
        h if DEFERRED.contains(&h) => return,
        // `let`, `do`, `when`, `doseq`, … run their bodies now.
        _ => {
            for f in &items[1..] {
                collect(f, defs);
            }
            return;
        }
    };
    let Some(Form::Symbol(name)) = items.get(1) else {
        return;
    };
    // A string right after the name is a docstring only when something follows it;
    // `(def greeting "hi")` binds the string.
    let docstring = match (items.get(2), items.len() > 3) {
        (Some(Form::Str(doc)), true) => Some(doc.clone()),
        _ => None,
    };
    defs.push(Definition {
        name: name.clone(),
        kind,
        docstring,
        value: None,
    });
    // The value of a `def` is computed now, so definitions inside it count too.
    if kind == DefKind::Def {
        for f in &items[2..] {
            collect(f, defs);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(src: &str) -> Vec<(String, &'static str, Option<String>)> {
        definitions(src)
            .unwrap()
            .into_iter()
            .map(|d| (d.name, d.kind.as_str(), d.docstring))
            .collect()
    }

    #[test]
    fn finds_def_and_defn_with_docstrings() {
        let src = r#"
(def electronics (filter (fn [p] (= (:category p) "Electronics")) data/products))
(def inventory "Warehouse stock; refreshed hourly" (tool/get-inventory))
(defn in-stock? "True when the product has units" [name] (includes? inventory name))
(def greeting "hi")
(println "(def not-a-def 1)") ; (def commented 1)
"#;
        assert_eq!(
            names(src),
            vec![
                ("electronics".into(), "def", None),
                (
                    "inventory".into(),
                    "def",
                    Some("Warehouse stock; refreshed hourly".into())
                ),
                (
                    "in-stock?".into(),
                    "defn",
                    Some("True when the product has units".into())
                ),
                ("greeting".into(), "def", None),
            ]
        );
    }

    #[test]
    fn defs_in_code_that_runs_count_but_not_in_function_bodies() {
        let src = "(let [x 1] (def inner x))\n(do (def a 1) (defn b [] (def later 1)))\n(defn- c \"doc \\\"q\\\"\\n\" [] 3)\n(map (fn [v] (def never v)) [1])";
        assert_eq!(
            names(src),
            vec![
                ("inner".into(), "def", None),
                ("a".into(), "def", None),
                ("b".into(), "defn", None),
                ("c".into(), "defn", Some("doc \"q\"\n".into())),
            ]
        );
    }

    #[test]
    fn reader_syntax_does_not_confuse_boundaries() {
        let src = r#"(def re #"\(\d+\)") (def ch \( ) (def m ^:private {:a [1 2] :b #{3}}) #_(def dropped 1) (def f #(inc %)) (def q '(def x))"#;
        let got: Vec<_> = names(src).into_iter().map(|n| n.0).collect();
        assert_eq!(got, vec!["re", "ch", "m", "f", "q"]);
    }

    #[test]
    fn stray_closers_between_forms_are_skipped() {
        let got: Vec<_> = names("(def a 1)\n(def b 2)\nnil)")
            .into_iter()
            .map(|n| n.0)
            .collect();
        assert_eq!(got, vec!["a", "b"]);
    }

    #[test]
    fn unbalanced_programs_are_errors_with_a_line() {
        let e = definitions("(def a 1)\n(def b (inc a)").unwrap_err();
        assert_eq!(e.line, 2);
        assert!(e.message.contains("missing `)`"), "{e}");
        let e = definitions("(def a \"x)").unwrap_err();
        assert!(e.message.contains("unterminated string"), "{e}");
        let e = definitions("(def a [1 2)]").unwrap_err();
        assert!(e.message.contains("unexpected `)`"), "{e}");
    }
}
