//! Value equality as the agent's language sees it, for merging identical tool calls
//! (TC-008): maps and sets are unordered (SPEC section 1: maps keep no insertion
//! order), and a NaN argument equals itself so that repeated identical calls merge.

use recap_core::Value;

pub fn same_value(a: &Value, b: &Value) -> bool {
    match (a, b) {
        // The common leaves first, compared directly.
        (Value::Str(x), Value::Str(y)) | (Value::Keyword(x), Value::Keyword(y)) => x == y,
        (Value::Int(x), Value::Int(y)) => x == y,
        (Value::Float(x), Value::Float(y)) => x == y || (x.is_nan() && y.is_nan()),
        (Value::List(x), Value::List(y)) | (Value::Tuple(x), Value::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_value(p, q))
        }
        // Repeated calls usually carry their sets and maps in the same order: compare
        // in order first (linear), then without order.
        (Value::Set(x), Value::Set(y)) => {
            x.len() == y.len()
                && (x.iter().zip(y).all(|(p, q)| same_value(p, q))
                    || x.iter().all(|p| y.iter().any(|q| same_value(p, q))))
        }
        (Value::Map(x), Value::Map(y)) => {
            let same_entry = |(k, v): &(Value, Value), (k2, v2): &(Value, Value)| {
                same_value(k, k2) && same_value(v, v2)
            };
            x.len() == y.len()
                && (x.iter().zip(y).all(|(p, q)| same_entry(p, q))
                    || x.iter().all(|p| y.iter().any(|q| same_entry(p, q))))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kw(s: &str) -> Value {
        Value::Keyword(s.into())
    }

    #[test]
    fn maps_compare_without_order() {
        let a = Value::Map(vec![(kw("a"), Value::Int(1)), (kw("b"), Value::Int(2))]);
        let b = Value::Map(vec![(kw("b"), Value::Int(2)), (kw("a"), Value::Int(1))]);
        assert!(same_value(&a, &b));
        let c = Value::Map(vec![(kw("b"), Value::Int(3)), (kw("a"), Value::Int(1))]);
        assert!(!same_value(&a, &c));
    }

    #[test]
    fn identical_values_are_the_same_value() {
        let a = Value::Map(vec![
            (
                kw("a"),
                Value::List(vec![Value::Float(0.0), Value::Str("x".into())]),
            ),
            (kw("b"), Value::Float(f64::NAN)),
        ]);
        assert!(a.is_identical(&a.clone()));
        assert!(same_value(&a, &a.clone()));
        // Same value, different text: not identical.
        let (zero, minus_zero) = (Value::Float(0.0), Value::Float(-0.0));
        assert!(same_value(&zero, &minus_zero));
        assert!(!zero.is_identical(&minus_zero));
        let b = Value::Map(vec![
            (kw("b"), Value::Float(f64::NAN)),
            (kw("a"), Value::Nil),
        ]);
        assert!(!a.is_identical(&b));
    }

    #[test]
    fn lists_compare_in_order_and_nan_equals_itself() {
        let a = Value::List(vec![Value::Int(1), Value::Float(f64::NAN)]);
        assert!(same_value(&a, &a.clone()));
        let b = Value::List(vec![Value::Float(f64::NAN), Value::Int(1)]);
        assert!(!same_value(&a, &b));
        assert!(!same_value(&Value::Int(1), &Value::Float(1.0)));
    }
}
