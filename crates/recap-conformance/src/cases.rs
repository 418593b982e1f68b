//! Reading a cases file: a JSON array of `{name, fn, input, expected, binding?, ..}`.

use recap_core::json_type::json_type_name;
use serde_json::Value as Json;
use std::path::{Path, PathBuf};

/// One golden case. Fields other than these (`source`, `note`, `expected_v2_*`) are
/// ignored.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Position in the file's array, from 0.
    pub index: usize,
    pub name: String,
    /// The function under test (`format.to_clojure`, `type_of`, `ns.user`, ...).
    pub fn_name: String,
    pub input: Json,
    /// May be JSON `null` (some functions return nothing).
    pub expected: Json,
    /// `false` when the case documents behaviour that does not bind recap.
    pub binding: bool,
    /// The case's own explanation (`note`), when it has one.
    pub note: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    // The OS error is part of this message and not a `source`: a chain printer
    // (anyhow's `{:#}`) would otherwise say it twice.
    #[error("{}: cannot read: {error}", path.display())]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    #[error("{origin}:{line}:{column}: not valid JSON: {message}")]
    Json {
        origin: String,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{origin}: expected a JSON array of cases, found {found}")]
    NotArray { origin: String, found: &'static str },
    #[error("{origin}: case {index}{}: {field}: {message}", name.as_ref().map(|n| format!(" ({n})")).unwrap_or_default())]
    BadCase {
        origin: String,
        index: usize,
        name: Option<String>,
        field: &'static str,
        message: String,
    },
}

/// Reads and parses a cases file; errors name the file (and line/column or case).
pub fn load(path: &Path) -> Result<Vec<Case>, LoadError> {
    let text = std::fs::read_to_string(path).map_err(|error| LoadError::Io {
        path: path.to_path_buf(),
        error,
    })?;
    parse_cases(&text, &path.display().to_string())
}

/// Parses the text of a cases file; `origin` names it in errors.
pub fn parse_cases(text: &str, origin: &str) -> Result<Vec<Case>, LoadError> {
    let json: Json = serde_json::from_str(text).map_err(|e| LoadError::Json {
        origin: origin.to_string(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let Json::Array(items) = json else {
        return Err(LoadError::NotArray {
            origin: origin.to_string(),
            found: json_type_name(&json),
        });
    };
    items
        .into_iter()
        .enumerate()
        .map(|(index, item)| parse_case(index, item, origin))
        .collect()
}

fn parse_case(index: usize, item: Json, origin: &str) -> Result<Case, LoadError> {
    let bad = |name: Option<&str>, field: &'static str, message: String| LoadError::BadCase {
        origin: origin.to_string(),
        index,
        name: name.map(str::to_string),
        field,
        message,
    };
    let Json::Object(mut obj) = item else {
        return Err(bad(
            None,
            "case",
            format!("expected an object, found {}", json_type_name(&item)),
        ));
    };
    let name = match obj.remove("name") {
        Some(Json::String(s)) => s,
        Some(other) => {
            return Err(bad(
                None,
                "name",
                format!("expected a string, found {}", json_type_name(&other)),
            ));
        }
        None => return Err(bad(None, "name", "required field is missing".into())),
    };
    let named = Some(name.as_str());
    let fn_name = match obj.remove("fn") {
        Some(Json::String(s)) => s,
        Some(other) => {
            return Err(bad(
                named,
                "fn",
                format!("expected a string, found {}", json_type_name(&other)),
            ));
        }
        None => return Err(bad(named, "fn", "required field is missing".into())),
    };
    let input = obj
        .remove("input")
        .ok_or_else(|| bad(named, "input", "required field is missing".into()))?;
    let expected = obj
        .remove("expected")
        .ok_or_else(|| bad(named, "expected", "required field is missing".into()))?;
    let binding = match obj.remove("binding") {
        None | Some(Json::Null) => true,
        Some(Json::Bool(b)) => b,
        Some(other) => {
            return Err(bad(
                named,
                "binding",
                format!("expected true or false, found {}", json_type_name(&other)),
            ));
        }
    };
    let note = obj.get("note").and_then(Json::as_str).map(str::to_string);
    Ok(Case {
        index,
        name,
        fn_name,
        input,
        expected,
        binding,
        note,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cases_and_defaults_binding_to_true() {
        let cases = parse_cases(
            r#"[{"name":"a","fn":"type_of","input":{"value":1},"expected":"integer","note":"x"},
                {"name":"b","fn":"ns.user","input":{},"expected":null,"binding":false}]"#,
            "t.json",
        )
        .unwrap();
        assert_eq!(cases.len(), 2);
        assert!(cases[0].binding);
        assert_eq!(cases[0].fn_name, "type_of");
        assert!(!cases[1].binding);
        assert_eq!(cases[1].expected, Json::Null);
        assert_eq!(cases[1].index, 1);
    }

    #[test]
    fn invalid_json_names_file_line_and_column() {
        let err = parse_cases("[\n{\"name\": }", "t.json").unwrap_err();
        let msg = err.to_string();
        assert!(msg.starts_with("t.json:2:"), "{msg}");
        assert!(msg.contains("not valid JSON"), "{msg}");
    }

    #[test]
    fn top_level_must_be_an_array() {
        let err = parse_cases("{}", "t.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.json: expected a JSON array of cases, found an object"
        );
    }

    #[test]
    fn missing_or_mistyped_fields_name_the_case_and_field() {
        let err = parse_cases(r#"[{"name":"a","fn":"type_of","input":{}}]"#, "t.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.json: case 0 (a): expected: required field is missing"
        );
        let err = parse_cases(r#"[{"fn":"type_of"}]"#, "t.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.json: case 0: name: required field is missing"
        );
        let err =
            parse_cases(r#"[{"name":"a","fn":1,"input":{},"expected":1}]"#, "t.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.json: case 0 (a): fn: expected a string, found a number"
        );
        let err = parse_cases(
            r#"[{"name":"a","fn":"f","input":{},"expected":1,"binding":"no"}]"#,
            "t.json",
        )
        .unwrap_err();
        assert!(err.to_string().contains("binding: expected true or false"));
        let err = parse_cases("[3]", "t.json").unwrap_err();
        assert_eq!(
            err.to_string(),
            "t.json: case 0: case: expected an object, found a number"
        );
    }

    #[test]
    fn missing_file_names_the_path() {
        let err = load(Path::new("/nonexistent/cases.json")).unwrap_err();
        assert!(
            err.to_string()
                .starts_with("/nonexistent/cases.json: cannot read:"),
            "{err}"
        );
    }
}
