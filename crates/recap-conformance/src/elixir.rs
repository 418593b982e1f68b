//! Elixir's `to_string/1` and `inspect/1` for the values a failed turn's `result` can
//! hold in the golden cases: the original turned a non-map, non-string error term into
//! text with `inspect`, and interpolated `message`/`reason` with `to_string`.

use recap_core::{SpecialFloat, Value};

/// `to_string/1` (string interpolation): strings raw, nil empty, atoms without `:`.
pub fn to_string(v: &Value) -> String {
    match v {
        Value::Str(s) => s.clone(),
        Value::Nil => String::new(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => float(*f),
        Value::Keyword(k) => k.clone(),
        Value::Special(s) => special_atom(*s).to_string(),
        other => inspect(other),
    }
}

/// `inspect/1` for the common shapes; maps with only keyword keys use `%{a: 1}`.
pub fn inspect(v: &Value) -> String {
    match v {
        Value::Nil => "nil".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(f) => float(*f),
        Value::Str(s) => quote(s),
        Value::Keyword(k) => format!(":{k}"),
        Value::Special(s) => format!(":{}", special_atom(*s)),
        Value::List(items) => format!("[{}]", join(items)),
        Value::Tuple(items) => format!("{{{}}}", join(items)),
        Value::Set(items) => format!("MapSet.new([{}])", join(items)),
        Value::Map(entries) => {
            let mut sorted: Vec<&(Value, Value)> = entries.iter().collect();
            sorted.sort_by(|a, b| recap_core::value::key_order(&a.0, &b.0));
            let keyword_keys = sorted.iter().all(|(k, _)| matches!(k, Value::Keyword(_)));
            let parts: Vec<String> = sorted
                .iter()
                .map(|(k, v)| match k {
                    Value::Keyword(name) if keyword_keys => format!("{name}: {}", inspect(v)),
                    _ => format!("{} => {}", inspect(k), inspect(v)),
                })
                .collect();
            format!("%{{{}}}", parts.join(", "))
        }
        Value::Date(d) => format!("~D[{d}]"),
        Value::Var(name) => format!("#'{name}"),
        Value::Fn(_) => "#Function<closure>".into(),
        Value::Builtin => "#<builtin>".into(),
    }
}

fn join(items: &[Value]) -> String {
    items.iter().map(inspect).collect::<Vec<_>>().join(", ")
}

fn special_atom(s: SpecialFloat) -> &'static str {
    match s {
        SpecialFloat::Infinity => "infinity",
        SpecialFloat::NegativeInfinity => "negative_infinity",
        SpecialFloat::NaN => "nan",
    }
}

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The shortest round-trip digits, written in whichever of the decimal (`100.0`) and
/// scientific (`1.0e20`) forms is shorter, decimal on a tie.
fn float(f: f64) -> String {
    if !f.is_finite() {
        return format!("{f}");
    }
    let sci = format!("{f:e}"); // e.g. "1.2345e3", "-5e-7"
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let scientific = if mantissa.contains('.') {
        format!("{mantissa}e{exp}")
    } else {
        format!("{mantissa}.0e{exp}")
    };
    let mut decimal = format!("{f}");
    if !decimal.contains('.') {
        decimal.push_str(".0");
    }
    if scientific.len() < decimal.len() {
        scientific
    } else {
        decimal
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inspects_like_elixir() {
        assert_eq!(inspect(&Value::Int(42)), "42");
        assert_eq!(inspect(&Value::Float(1e20)), "1.0e20");
        assert_eq!(inspect(&Value::Float(100.0)), "100.0");
        assert_eq!(inspect(&Value::Float(0.5)), "0.5");
        assert_eq!(inspect(&Value::Str("a\"b".into())), "\"a\\\"b\"");
        let m = Value::Map(vec![
            (Value::Keyword("b".into()), Value::Int(2)),
            (Value::Keyword("a".into()), Value::Keyword("x".into())),
        ]);
        assert_eq!(inspect(&m), "%{a: :x, b: 2}");
        assert_eq!(
            inspect(&Value::List(vec![Value::Int(1), Value::Nil])),
            "[1, nil]"
        );
        assert_eq!(to_string(&Value::Keyword("timeout".into())), "timeout");
        assert_eq!(to_string(&Value::Nil), "");
    }
}
