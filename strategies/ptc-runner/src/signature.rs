//! The original's signature syntax: `(a :string, b :int) -> [:string]`, the shorthand
//! `{value :float}` (an output type with no parameters), optional types `:string?`, list
//! types `[:t]` and map types `{field :t, …}`.
//!
//! Only the seven type keywords the original accepted in its compression era parse
//! (`string int float bool keyword map any`); anything else (`:nil`, `:integer`) makes
//! the whole signature invalid, which the tool section renders as `() -> any`.

/// A parsed type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Type {
    String,
    Int,
    Float,
    Bool,
    Keyword,
    Map,
    Any,
    Optional(Box<Type>),
    List(Box<Type>),
    /// `{name :t, …}` with fields in written order.
    Fields(Vec<(String, Type)>),
}

/// A parsed signature: parameters in written order and the output type.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Signature {
    pub params: Vec<(String, Type)>,
    pub output: Type,
}

/// How field and parameter names are written when a type is rendered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyStyle {
    /// As written in the signature.
    AsWritten,
    /// `snake_case` → `kebab-case`, a leading `_` kept (the original's `to_lisp_key`).
    Lisp,
}

impl Signature {
    /// Parses the full form `(params) -> type` or the shorthand `type`; surrounding
    /// whitespace is allowed. `None` when the text is not a valid signature.
    pub fn parse(text: &str) -> Option<Signature> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        p.ws();
        let sig = if p.peek() == Some(b'(') {
            p.i += 1;
            p.ws();
            let mut params = Vec::new();
            if p.peek() != Some(b')') {
                params = p.named_list()?;
                p.ws();
            }
            p.expect(b')')?;
            p.ws();
            p.expect(b'-')?;
            p.expect(b'>')?;
            p.ws();
            let output = p.ty()?;
            Signature { params, output }
        } else {
            Signature {
                params: Vec::new(),
                output: p.ty()?,
            }
        };
        p.ws();
        (p.i == p.s.len()).then_some(sig)
    }

    /// Parses a tool's signature the way the tool section does: an arrow-only form
    /// `-> :t` is read as `() -> :t`.
    pub fn parse_tool(text: &str) -> Option<Signature> {
        let trimmed = text.trim();
        if trimmed.starts_with("->") {
            Signature::parse(&format!("(){trimmed}"))
        } else {
            Signature::parse(text)
        }
    }
}

/// `q1_total` → `q1-total`; a leading `_` (hidden names) stays.
pub fn to_lisp_key(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    push_lisp_key(&mut out, name);
    out
}

/// Appends [`to_lisp_key`]`(name)` to `out`: every `_` but a leading one becomes `-`.
pub(crate) fn push_lisp_key(out: &mut String, name: &str) {
    out.extend(
        name.char_indices()
            .map(|(i, c)| if c == '_' && i > 0 { '-' } else { c }),
    );
}

impl Type {
    /// The type in signature syntax: `:string`, `:int?`, `[:string]`, `{a :int, b :map}`.
    pub fn render(&self, style: KeyStyle) -> String {
        let mut out = String::new();
        self.write(&mut out, style);
        out
    }

    /// Appends [`Type::render`]`(style)` to `out`.
    pub(crate) fn write(&self, out: &mut String, style: KeyStyle) {
        match self {
            Type::String => out.push_str(":string"),
            Type::Int => out.push_str(":int"),
            Type::Float => out.push_str(":float"),
            Type::Bool => out.push_str(":bool"),
            Type::Keyword => out.push_str(":keyword"),
            Type::Map => out.push_str(":map"),
            Type::Any => out.push_str(":any"),
            Type::Optional(inner) => {
                inner.write(out, style);
                out.push('?');
            }
            Type::List(inner) => {
                out.push('[');
                inner.write(out, style);
                out.push(']');
            }
            Type::Fields(fields) => {
                out.push('{');
                for (i, (name, ty)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(&styled(name, style));
                    out.push(' ');
                    ty.write(out, style);
                }
                out.push('}');
            }
        }
    }

    /// The example value of the Expected Output section (`42`, `"result"`, `{:a 42}`).
    pub fn example(&self, style: KeyStyle) -> String {
        match self {
            Type::Int => "42".into(),
            Type::Float => "3.14".into(),
            Type::String => "\"result\"".into(),
            Type::Bool => "true".into(),
            Type::Keyword => ":ok".into(),
            Type::Any => "...".into(),
            Type::Map => "{}".into(),
            Type::Optional(inner) => inner.example(style),
            Type::List(_) => "[]".into(),
            Type::Fields(fields) => {
                let inner: Vec<String> = fields
                    .iter()
                    .map(|(name, ty)| format!(":{} {}", styled(name, style), ty.example(style)))
                    .collect();
                format!("{{{}}}", inner.join(", "))
            }
        }
    }
}

fn styled(name: &str, style: KeyStyle) -> String {
    match style {
        KeyStyle::AsWritten => name.to_string(),
        KeyStyle::Lisp => to_lisp_key(name),
    }
}

/// A hand-written recursive-descent parser over bytes: the grammar is ASCII-only, so
/// any non-ASCII byte simply fails to match.
struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

/// Types nest at most this deep; deeper input is rejected instead of risking the stack.
const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.i += 1;
        }
    }

    fn expect(&mut self, c: u8) -> Option<()> {
        (self.peek() == Some(c)).then(|| self.i += 1)
    }

    fn ident(&mut self) -> Option<String> {
        let start = self.i;
        match self.peek() {
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => self.i += 1,
            _ => return None,
        }
        while matches!(self.peek(), Some(c) if c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
        {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()
            .map(str::to_string)
    }

    /// `name :t, name :t, …` (at least one), as used by parameters and map fields.
    fn named_list(&mut self) -> Option<Vec<(String, Type)>> {
        self.named_list_at(0)
    }

    fn named_list_at(&mut self, depth: usize) -> Option<Vec<(String, Type)>> {
        let mut out = Vec::new();
        loop {
            let name = self.ident()?;
            self.ws();
            let ty = self.ty_at(depth)?;
            out.push((name, ty));
            let save = self.i;
            self.ws();
            if self.peek() == Some(b',') {
                self.i += 1;
                self.ws();
            } else {
                self.i = save;
                return Some(out);
            }
        }
    }

    fn ty(&mut self) -> Option<Type> {
        self.ty_at(0)
    }

    fn ty_at(&mut self, depth: usize) -> Option<Type> {
        if depth > MAX_DEPTH {
            return None;
        }
        match self.peek()? {
            b'{' => {
                self.i += 1;
                self.ws();
                let fields = if self.peek() == Some(b'}') {
                    Vec::new()
                } else {
                    let f = self.named_list_at(depth + 1)?;
                    self.ws();
                    f
                };
                self.expect(b'}')?;
                Some(Type::Fields(fields))
            }
            b'[' => {
                self.i += 1;
                self.ws();
                let inner = self.ty_at(depth + 1)?;
                self.ws();
                self.expect(b']')?;
                Some(Type::List(Box::new(inner)))
            }
            b':' => {
                self.i += 1;
                // The original tries the keywords in this order and takes the first
                // prefix that matches, so `:integer` reads `:int` and then fails.
                const KEYWORDS: [(&str, Type); 7] = [
                    ("string", Type::String),
                    ("int", Type::Int),
                    ("float", Type::Float),
                    ("bool", Type::Bool),
                    ("keyword", Type::Keyword),
                    ("map", Type::Map),
                    ("any", Type::Any),
                ];
                let rest = &self.s[self.i..];
                let (word, ty) = KEYWORDS
                    .iter()
                    .find(|(w, _)| rest.starts_with(w.as_bytes()))?;
                self.i += word.len();
                let ty = ty.clone();
                if self.peek() == Some(b'?') {
                    self.i += 1;
                    Some(Type::Optional(Box::new(ty)))
                } else {
                    Some(ty)
                }
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(sig: &str) -> Option<String> {
        Signature::parse(sig).map(|s| {
            let params: Vec<String> = s
                .params
                .iter()
                .map(|(n, t)| format!("{n} {}", t.render(KeyStyle::AsWritten)))
                .collect();
            format!(
                "({}) -> {}",
                params.join(", "),
                s.output.render(KeyStyle::AsWritten)
            )
        })
    }

    #[test]
    fn parses_full_and_shorthand_forms() {
        assert_eq!(
            plain("(a :string, b :int) -> [:string]").as_deref(),
            Some("(a :string, b :int) -> [:string]")
        );
        assert_eq!(
            plain("{value :float}").as_deref(),
            Some("() -> {value :float}")
        );
        assert_eq!(
            plain("  ( ) -> {score :float , tags [:keyword?]}  ").as_deref(),
            Some("() -> {score :float, tags [:keyword?]}")
        );
        assert_eq!(plain("() -> {}").as_deref(), Some("() -> {}"));
    }

    #[test]
    fn rejects_unknown_types_and_garbage() {
        for bad in [
            "(msg :string) -> :nil",
            "(x :integer) -> :int",
            "-> :map",
            "((( not a signature",
            "(a :int,) -> :int",
            "(a :int) -> :int extra",
            "",
            "[:int",
            "(1a :int) -> :int",
        ] {
            assert_eq!(Signature::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn tool_form_accepts_arrow_only() {
        let s = Signature::parse_tool("  -> :map").unwrap();
        assert!(s.params.is_empty());
        assert_eq!(s.output, Type::Map);
    }

    #[test]
    fn lisp_keys_keep_a_leading_underscore() {
        assert_eq!(to_lisp_key("q1_total"), "q1-total");
        assert_eq!(to_lisp_key("_email_ids"), "_email-ids");
        assert_eq!(to_lisp_key("name"), "name");
        let t = Signature::parse("{first_name :string}").unwrap().output;
        assert_eq!(t.render(KeyStyle::Lisp), "{first-name :string}");
        assert_eq!(t.example(KeyStyle::Lisp), "{:first-name \"result\"}");
    }

    #[test]
    fn lisp_keys_are_appended_keeping_what_is_there() {
        for (name, lisp) in [
            ("", ""),
            ("_", "_"),
            ("__x", "_-x"),
            ("_a_b", "_a-b"),
            ("a_b_", "a-b-"),
            ("plain", "plain"),
            ("é_x_", "é-x-"),
            ("q1_total", "q1-total"),
        ] {
            let mut out = String::from(">");
            push_lisp_key(&mut out, name);
            assert_eq!(out, format!(">{lisp}"), "{name:?}");
            assert_eq!(to_lisp_key(name), lisp, "{name:?}");
        }
    }

    #[test]
    fn deep_nesting_is_rejected_not_a_stack_overflow() {
        let deep = format!("{}:int{}", "[".repeat(10_000), "]".repeat(10_000));
        assert_eq!(Signature::parse(&deep), None);
    }
}
