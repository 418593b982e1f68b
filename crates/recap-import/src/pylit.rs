//! Reads Python literal syntax (`repr` of dicts, lists, tuples, strings, numbers,
//! `None`/`True`/`False`) into JSON. smolagents logs its tool calls as the `repr` of a
//! list of dicts, so this is how the exact executed code is recovered.

use serde_json::{Map, Number, Value as Json};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("at character {offset}: {message}")]
pub struct LiteralError {
    pub offset: usize,
    pub message: String,
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
}

/// Parses one Python literal that makes up the whole of `src` (surrounding whitespace
/// allowed). Tuples and sets become arrays; dict keys that are not strings are written
/// as their literal text.
pub fn parse(src: &str) -> Result<Json, LiteralError> {
    let mut p = Parser {
        chars: src.chars().collect(),
        pos: 0,
    };
    let v = p.value()?;
    p.skip_ws();
    if p.pos != p.chars.len() {
        return p.err("unexpected text after the literal");
    }
    Ok(v)
}

impl Parser {
    fn err<T>(&self, message: impl Into<String>) -> Result<T, LiteralError> {
        Err(LiteralError {
            offset: self.pos,
            message: message.into(),
        })
    }

    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn value(&mut self) -> Result<Json, LiteralError> {
        self.skip_ws();
        match self.peek() {
            None => self.err("unexpected end of input"),
            Some('{') => {
                self.pos += 1;
                self.dict_or_set()
            }
            Some('[') => {
                self.pos += 1;
                Ok(Json::Array(self.items(']')?))
            }
            Some('(') => {
                self.pos += 1;
                Ok(Json::Array(self.items(')')?))
            }
            Some(c) if c == '\'' || c == '"' => self.string_run(),
            Some(c)
                if (c == 'r' || c == 'u' || c == 'R' || c == 'U')
                    && matches!(self.chars.get(self.pos + 1), Some('\'' | '"')) =>
            {
                self.string_run()
            }
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' || c == '.' => self.number(),
            Some(_) => {
                let start = self.pos;
                while self.peek().is_some_and(|c| c.is_alphanumeric() || c == '_') {
                    self.pos += 1;
                }
                let word: String = self.chars[start..self.pos].iter().collect();
                match word.as_str() {
                    "None" => Ok(Json::Null),
                    "True" => Ok(Json::Bool(true)),
                    "False" => Ok(Json::Bool(false)),
                    "" => {
                        self.pos = start;
                        self.err(format!("unexpected character {:?}", self.chars[start]))
                    }
                    w => {
                        self.pos = start;
                        self.err(format!("{w:?} is not a literal"))
                    }
                }
            }
        }
    }

    /// Items up to `close`, comma separated, trailing comma allowed.
    fn items(&mut self, close: char) -> Result<Vec<Json>, LiteralError> {
        let mut out = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some(close) {
                self.pos += 1;
                return Ok(out);
            }
            out.push(self.value()?);
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some(c) if c == close => {}
                Some(c) => return self.err(format!("expected `,` or `{close}`, got {c:?}")),
                None => return self.err(format!("unexpected end of input: missing `{close}`")),
            }
        }
    }

    fn dict_or_set(&mut self) -> Result<Json, LiteralError> {
        let mut map = Map::new();
        let mut set = Vec::new();
        loop {
            self.skip_ws();
            if self.peek() == Some('}') {
                self.pos += 1;
                return Ok(if set.is_empty() {
                    Json::Object(map)
                } else {
                    Json::Array(set)
                });
            }
            let key = self.value()?;
            self.skip_ws();
            if self.peek() == Some(':') && set.is_empty() {
                self.pos += 1;
                let value = self.value()?;
                let key = match key {
                    Json::String(s) => s,
                    other => other.to_string(),
                };
                map.insert(key, value);
            } else if map.is_empty() {
                set.push(key);
            } else {
                return self.err("expected `:` in a dict");
            }
            self.skip_ws();
            match self.peek() {
                Some(',') => self.pos += 1,
                Some('}') => {}
                Some(c) => return self.err(format!("expected `,` or `}}`, got {c:?}")),
                None => return self.err("unexpected end of input: missing `}`"),
            }
        }
    }

    fn number(&mut self) -> Result<Json, LiteralError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '.' | '_'))
        {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos]
            .iter()
            .filter(|c| **c != '_')
            .collect();
        if let Ok(i) = text.parse::<i64>() {
            return Ok(Json::Number(i.into()));
        }
        match text.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(n) => Ok(Json::Number(n)),
            None => {
                self.pos = start;
                self.err(format!("bad number {text:?}"))
            }
        }
    }

    /// Adjacent string literals concatenate, as in Python.
    fn string_run(&mut self) -> Result<Json, LiteralError> {
        let mut out = self.string()?;
        loop {
            let save = self.pos;
            self.skip_ws();
            match self.peek() {
                Some('\'' | '"') => out.push_str(&self.string()?),
                _ => {
                    self.pos = save;
                    return Ok(Json::String(out));
                }
            }
        }
    }

    fn string(&mut self) -> Result<String, LiteralError> {
        let mut raw = false;
        while let Some(c @ ('r' | 'R' | 'u' | 'U')) = self.peek() {
            raw |= c == 'r' || c == 'R';
            self.pos += 1;
        }
        let Some(quote) = self.peek() else {
            return self.err("expected a string");
        };
        let triple = self.chars.get(self.pos + 1) == Some(&quote)
            && self.chars.get(self.pos + 2) == Some(&quote);
        self.pos += if triple { 3 } else { 1 };
        let mut out = String::new();
        loop {
            let Some(c) = self.peek() else {
                return self.err("unterminated string");
            };
            if c == quote
                && (!triple
                    || (self.chars.get(self.pos + 1) == Some(&quote)
                        && self.chars.get(self.pos + 2) == Some(&quote)))
            {
                self.pos += if triple { 3 } else { 1 };
                return Ok(out);
            }
            self.pos += 1;
            if c != '\\' {
                out.push(c);
                continue;
            }
            let Some(e) = self.peek() else {
                return self.err("unterminated string");
            };
            self.pos += 1;
            if raw {
                out.push('\\');
                out.push(e);
                continue;
            }
            match e {
                '\n' => {}
                '\\' | '\'' | '"' => out.push(e),
                'n' => out.push('\n'),
                't' => out.push('\t'),
                'r' => out.push('\r'),
                'a' => out.push('\u{7}'),
                'b' => out.push('\u{8}'),
                'f' => out.push('\u{c}'),
                'v' => out.push('\u{b}'),
                'x' => out.push(self.hex(2)?),
                'u' => out.push(self.hex(4)?),
                'U' => out.push(self.hex(8)?),
                '0'..='7' => {
                    let mut n = e.to_digit(8).unwrap_or(0);
                    for _ in 0..2 {
                        match self.peek().and_then(|c| c.to_digit(8)) {
                            Some(d) => {
                                n = n * 8 + d;
                                self.pos += 1;
                            }
                            None => break,
                        }
                    }
                    match char::from_u32(n) {
                        Some(ch) => out.push(ch),
                        None => return self.err("bad octal escape"),
                    }
                }
                other => {
                    // Python keeps unknown escapes verbatim.
                    out.push('\\');
                    out.push(other);
                }
            }
        }
    }

    fn hex(&mut self, n: usize) -> Result<char, LiteralError> {
        let digits: String = self.chars[self.pos..(self.pos + n).min(self.chars.len())]
            .iter()
            .collect();
        match u32::from_str_radix(&digits, 16)
            .ok()
            .and_then(char::from_u32)
        {
            Some(c) if digits.len() == n => {
                self.pos += n;
                Ok(c)
            }
            _ => self.err(format!("bad escape digits {digits:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn smolagents_tool_call_repr() {
        let src = r#"[{'id': 'call_1', 'type': 'function', 'function': {'name': 'python_interpreter', 'arguments': 'x = "a\'b"\nprint(x)\t# \\n'}}]"#;
        let v = parse(src).unwrap();
        assert_eq!(
            v,
            json!([{"id": "call_1", "type": "function", "function": {"name": "python_interpreter", "arguments": "x = \"a'b\"\nprint(x)\t# \\n"}}])
        );
    }

    #[test]
    fn scalars_tuples_sets_and_escapes() {
        assert_eq!(
            parse("(1, -2.5, None, True, False, {1, 2}, {})").unwrap(),
            json!([1, -2.5, null, true, false, [1, 2], {}])
        );
        assert_eq!(
            parse(r#""\x41\u00e9\U0001F600\101" 'b'"#).unwrap(),
            json!("Aé😀Ab")
        );
        assert_eq!(parse(r"r'\d+'").unwrap(), json!(r"\d+"));
        assert_eq!(parse("'''a'b'''").unwrap(), json!("a'b"));
        assert_eq!(parse("{1: 'x'}").unwrap(), json!({"1": "x"}));
    }

    #[test]
    fn errors_name_the_offset() {
        let e = parse("[{'a': 1}").unwrap_err();
        assert!(e.message.contains("missing `]`"), "{e}");
        let e = parse("{'a': foo}").unwrap_err();
        assert_eq!(e.offset, 6);
        assert!(parse("'abc").unwrap_err().message.contains("unterminated"));
    }
}
