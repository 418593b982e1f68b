//! The one printer for samples and arguments (SPEC section 2, TRN-001) and the type
//! vocabulary (SPEC section 3).

use crate::value::Value;

/// Options of [`to_clojure`]: `limit` caps collection items, `printable_limit` caps
/// string lengths (in chars) and the width given to map values.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PrintOptions {
    pub limit: Option<usize>,
    pub printable_limit: Option<usize>,
}

/// Prints `value` Clojure-style; the flag says whether anything was cut.
pub fn to_clojure(value: &Value, opts: PrintOptions) -> (String, bool) {
    let _ = (value, opts);
    todo!("printer: being implemented")
}

/// The type vocabulary of SPEC section 3 (TYP-001..012).
pub fn type_of(value: &Value) -> String {
    let _ = value;
    todo!("type_of: being implemented")
}
