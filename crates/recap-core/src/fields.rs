//! Field-level decoding helpers shared by the session decoders: every error names the
//! field path (`turns[2].assistant.tool_calls[0].id`) and what was expected.

use crate::json_type::json_type_name;
use serde_json::{Map, Value as Json};

/// A field that failed validation: `field` is a path such as `turns[2].error`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {message}")]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

pub(crate) fn wrong(field: &str, expected: &str, got: &Json) -> FieldError {
    FieldError::new(
        field,
        format!("expected {expected}, got {}", json_type_name(got)),
    )
}

pub(crate) fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else {
        format!("{at}.{key}")
    }
}

pub(crate) fn req<'a>(
    obj: &'a Map<String, Json>,
    key: &str,
    at: &str,
) -> Result<&'a Json, FieldError> {
    obj.get(key)
        .ok_or_else(|| FieldError::new(join(at, key), "required field is missing"))
}

pub(crate) fn as_string(j: &Json, field: &str) -> Result<String, FieldError> {
    j.as_str()
        .map(str::to_string)
        .ok_or_else(|| wrong(field, "a string", j))
}

/// A string field as a message's shared text ([`crate::Text`]), copied once.
pub(crate) fn as_text(j: &Json, field: &str) -> Result<crate::Text, FieldError> {
    j.as_str()
        .map(crate::Text::from)
        .ok_or_else(|| wrong(field, "a string", j))
}

pub(crate) fn opt_text(
    obj: &Map<String, Json>,
    key: &str,
    at: &str,
) -> Result<Option<crate::Text>, FieldError> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(j) => as_text(j, &join(at, key)).map(Some),
    }
}

pub(crate) fn opt_string(
    obj: &Map<String, Json>,
    key: &str,
    at: &str,
) -> Result<Option<String>, FieldError> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(j) => as_string(j, &join(at, key)).map(Some),
    }
}

pub(crate) fn opt_bool(
    obj: &Map<String, Json>,
    key: &str,
    at: &str,
) -> Result<Option<bool>, FieldError> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(None),
        Some(j) => j
            .as_bool()
            .map(Some)
            .ok_or_else(|| wrong(&join(at, key), "a boolean", j)),
    }
}

pub(crate) fn as_object<'a>(j: &'a Json, field: &str) -> Result<&'a Map<String, Json>, FieldError> {
    j.as_object().ok_or_else(|| wrong(field, "an object", j))
}

pub(crate) fn as_array<'a>(j: &'a Json, field: &str) -> Result<&'a [Json], FieldError> {
    j.as_array()
        .map(Vec::as_slice)
        .ok_or_else(|| wrong(field, "an array", j))
}

pub(crate) fn opt_array<'a>(
    obj: &'a Map<String, Json>,
    key: &str,
    at: &str,
) -> Result<&'a [Json], FieldError> {
    match obj.get(key) {
        None | Some(Json::Null) => Ok(&[]),
        Some(j) => as_array(j, &join(at, key)),
    }
}

/// Rejects any key of `obj` not in `known`, with a "did you mean" for a near miss, so a
/// misspelt field (`systemprompt`) is an error instead of a silently missing value.
pub(crate) fn only_known(
    obj: &Map<String, Json>,
    known: &[&str],
    at: &str,
    what: &str,
) -> Result<(), FieldError> {
    let Some(key) = obj.keys().find(|k| !known.contains(&k.as_str())) else {
        return Ok(());
    };
    let mut message = format!("unknown field in {what}");
    if let Some(near) = nearest(key, known) {
        message.push_str(&format!("; did you mean `{near}`?"));
    }
    message.push_str(&format!(" (known fields: {})", known.join(", ")));
    Err(FieldError::new(join(at, key), message))
}

/// The known name closest to `key`, when it is close enough to be a typo: letters
/// compared without case, `_` and `-`, within an edit distance of a third of the name.
pub fn nearest<'k>(key: &str, known: &[&'k str]) -> Option<&'k str> {
    let norm = |s: &str| {
        s.chars()
            .filter(|c| *c != '_' && *c != '-')
            .flat_map(char::to_lowercase)
            .collect::<String>()
    };
    let k = norm(key);
    known
        .iter()
        .map(|cand| (strsim::levenshtein(&k, &norm(cand)), *cand))
        .filter(|(d, cand)| *d <= (cand.len() / 3).max(1))
        .min_by_key(|(d, _)| *d)
        .map(|(_, cand)| cand)
}

/// A field path for a reader: `turns[2].error` is the third turn, whose `number` is 3
/// in a valid session, while the path counts from 0 as JSON tools (`jq '.turns[2]'`)
/// do: `turns[2].error (turn 3)`.
pub fn describe_field(field: &str) -> String {
    let turn = field
        .strip_prefix("turns[")
        .and_then(|rest| rest.split_once(']'))
        .and_then(|(index, _)| index.parse::<usize>().ok());
    match turn {
        Some(i) => format!("{field} (turn {})", i + 1),
        None => field.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn turn_paths_name_the_turn_number() {
        assert_eq!(describe_field("turns[2].error"), "turns[2].error (turn 3)");
        assert_eq!(describe_field("turns[0]"), "turns[0] (turn 1)");
        assert_eq!(describe_field("mission"), "mission");
        assert_eq!(describe_field("turns"), "turns");
    }

    #[test]
    fn near_misses_are_suggested_and_far_ones_are_not() {
        let known = ["system_prompt", "mission", "max_turns", "turns"];
        assert_eq!(nearest("systemprompt", &known), Some("system_prompt"));
        assert_eq!(nearest("System-Prompt", &known), Some("system_prompt"));
        assert_eq!(nearest("misison", &known), Some("mission"));
        assert_eq!(nearest("maxturn", &known), Some("max_turns"));
        assert_eq!(nearest("colour", &known), None);
    }

    #[test]
    fn unknown_keys_name_the_field_and_the_known_ones() {
        let obj: Map<String, Json> =
            serde_json::from_str(r#"{"mission": "m", "systemprompt": "x"}"#).unwrap();
        let err = only_known(&obj, &["mission", "system_prompt"], "", "a session").unwrap_err();
        assert_eq!(err.field, "systemprompt");
        assert!(
            err.message.contains("did you mean `system_prompt`?"),
            "{err}"
        );
        assert!(
            err.message.contains("known fields: mission, system_prompt"),
            "{err}"
        );
    }
}
