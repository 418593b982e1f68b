//! Runs every golden case of the kinds this crate owns from the shared file
//! `../shared/conformance/ptc_runner_cases.json` (relative to the workspace root).
//! Cases marked `"binding": false` document quirks of the original and are not held.

use recap_ptc_runner::conformance::evaluate;
use serde_json::Value as Json;

fn load() -> Option<Vec<Json>> {
    let path = recap_gen::shared::path("conformance/ptc_runner_cases.json", "golden cases")?;
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: cannot read the golden cases: {e}", path.display()));
    let json: Json = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{}: not valid JSON: {e}", path.display()));
    match json {
        Json::Array(cases) => Some(cases),
        _ => panic!("{}: expected a JSON array of cases", path.display()),
    }
}

#[test]
fn every_binding_case_of_our_kinds_passes() {
    let Some(cases) = load() else { return };
    let mut passed = 0;
    let mut skipped_non_binding = 0;
    let mut failures = Vec::new();
    let mut per_kind: std::collections::BTreeMap<String, usize> = Default::default();
    for case in &cases {
        let name = case["name"].as_str().unwrap_or("?");
        let fn_name = case["fn"].as_str().unwrap_or("?");
        let Some(result) = evaluate(fn_name, &case["input"]) else {
            continue;
        };
        if case.get("binding") == Some(&Json::Bool(false)) {
            skipped_non_binding += 1;
            continue;
        }
        match result {
            Ok(actual) if actual == case["expected"] => {
                passed += 1;
                *per_kind.entry(fn_name.to_string()).or_default() += 1;
            }
            Ok(actual) => failures.push(format!(
                "{name} ({fn_name}):\n  expected {}\n  actual   {}",
                case["expected"], actual
            )),
            Err(e) => failures.push(format!("{name} ({fn_name}): error: {e}")),
        }
    }
    eprintln!(
        "ptc golden cases: {passed} passed, {} failed, {skipped_non_binding} non-binding skipped; per kind: {per_kind:?}",
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(passed > 0, "no case of our kinds was found");
}

/// The non-binding quirk cases of our kinds, for information: which ones we happen to
/// match (none is required to).
#[test]
fn report_non_binding_cases() {
    let Some(cases) = load() else { return };
    for case in cases
        .iter()
        .filter(|c| c.get("binding") == Some(&Json::Bool(false)))
    {
        let fn_name = case["fn"].as_str().unwrap_or("?");
        if let Some(result) = evaluate(fn_name, &case["input"]) {
            let same = result.as_ref().ok() == Some(&case["expected"]);
            eprintln!(
                "non-binding {}: {}",
                case["name"].as_str().unwrap_or("?"),
                if same {
                    "matches the original"
                } else {
                    "differs (allowed)"
                }
            );
        }
    }
}
