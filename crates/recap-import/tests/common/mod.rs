//! Helpers shared by the importer tests.
#![allow(dead_code)]

use recap_core::Session;
use recap_core::corpus::read_all;
use recap_import::{Import, Kind, Problem, Severity};
use std::path::{Path, PathBuf};

/// `tests/fixtures/<rel>` of this crate.
pub fn fixture(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(rel)
}

/// `../shared/<rel>` relative to the workspace root, or `None` (with a visible message)
/// when it is missing; under CI=true a missing corpus fails the test instead.
pub fn shared(rel: &str) -> Option<PathBuf> {
    recap_gen::shared::path(rel, "real-corpus import test")
}

pub fn import(kind: Kind, paths: &[PathBuf]) -> Import {
    recap_import::import(kind, paths).expect("inputs are readable")
}

/// The corpus bytes of an import.
pub fn jsonl(import: &Import) -> Vec<u8> {
    let mut out = Vec::new();
    import.write_jsonl(&mut out).expect("writing to memory");
    out
}

/// Reads written corpus bytes back with recap's own corpus reader: every line must be a
/// valid session, and re-encoding it must give the same line.
pub fn read_back(bytes: &[u8]) -> Vec<Session> {
    let text = std::str::from_utf8(bytes).expect("corpus is UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    let entries = read_all(Path::new("import.jsonl"), bytes);
    assert_eq!(entries.len(), lines.len());
    entries
        .into_iter()
        .zip(lines)
        .map(|(e, line)| {
            let s = e
                .session
                .unwrap_or_else(|r| panic!("written session does not validate: {r}"));
            assert_eq!(
                serde_json::to_string(&s.to_json()).unwrap(),
                line,
                "session {} round-trips",
                s.id
            );
            s
        })
        .collect()
}

/// The problems whose message contains `text`.
pub fn problems_with<'a>(import: &'a Import, text: &str) -> Vec<&'a Problem> {
    import
        .problems
        .iter()
        .filter(|p| p.message.contains(text))
        .collect()
}

/// Exactly one problem contains `text`; returns it.
pub fn one_problem<'a>(import: &'a Import, text: &str, severity: Severity) -> &'a Problem {
    let found = problems_with(import, text);
    assert_eq!(
        found.len(),
        1,
        "expected one problem containing {text:?}, got: {:#?}",
        import
            .problems
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
    );
    assert_eq!(found[0].severity, severity, "{}", found[0]);
    found[0]
}
