//! The one wording of a JSON value's type in error messages ("expected a string, got
//! an array"), shared by the corpus decoder, the importers, the golden-case loader and
//! the plugin wire format.

use serde_json::Value as Json;

/// `null`, `a boolean`, `a number`, `a string`, `an array` or `an object`.
pub fn json_type_name(j: &Json) -> &'static str {
    match j {
        Json::Null => "null",
        Json::Bool(_) => "a boolean",
        Json::Number(_) => "a number",
        Json::String(_) => "a string",
        Json::Array(_) => "an array",
        Json::Object(_) => "an object",
    }
}
