//! docs/requirements.md maps every ID of the requirements table to tests that exist (or
//! to a reason it does not apply), so the table cannot silently rot.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every `.rs` file under the workspace's crates, strategies and tests.
fn sources(dir: &Path, out: &mut String) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let name = entry.file_name();
        if path.is_dir() && !name.to_string_lossy().starts_with("target") {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push_str(&std::fs::read_to_string(&path).unwrap_or_default());
        }
    }
}

fn requirement_ids(table: &str) -> Vec<String> {
    const PREFIXES: [&str; 14] = [
        "PRE", "API", "NS", "FMT", "TYP", "TRN", "SAM", "DEF", "TC", "MSG", "CMP", "ERR", "SS",
        "DBG",
    ];
    let mut ids: Vec<String> = table
        .lines()
        .filter_map(|l| l.strip_prefix("| ")?.split(' ').next())
        .filter(|id| {
            id.split_once('-').is_some_and(|(p, n)| {
                PREFIXES.contains(&p) && n.len() == 3 && n.bytes().all(|b| b.is_ascii_digit())
            })
        })
        .map(str::to_string)
        .collect();
    ids.sort();
    ids.dedup();
    ids
}

#[test]
fn every_requirement_id_is_mapped_to_existing_tests_or_a_reason() {
    let Some(seed) =
        recap_gen::shared::path("seeds/000_ef699da9ffa81e97.txt", "requirements table")
    else {
        return;
    };
    let table =
        std::fs::read_to_string(&seed).unwrap_or_else(|e| panic!("{}: {e}", seed.display()));
    let ids = requirement_ids(&table);
    assert_eq!(ids.len(), 95, "the requirements table changed");
    let doc = std::fs::read_to_string(root().join("docs/requirements.md")).unwrap();
    let mut code = String::new();
    for dir in ["crates", "strategies", "tests"] {
        sources(&root().join(dir), &mut code);
    }
    for id in &ids {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| {id} |")))
            .unwrap_or_else(|| panic!("docs/requirements.md has no row for {id}"));
        // The last cell: tests, or the reason (the requirement text may hold backticks).
        let cell = row
            .trim_end_matches(" |")
            .rsplit(" | ")
            .next()
            .unwrap_or_default();
        let tests: Vec<&str> = cell
            .split('`')
            .skip(1)
            .step_by(2)
            .filter(|s| {
                s.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                    && s.contains('_')
            })
            .collect();
        if tests.is_empty() {
            assert!(cell.starts_with("n/a:"), "{id}: neither tests nor a reason");
            continue;
        }
        let prefix = format!("{}_", id.to_lowercase().replace('-', "_"));
        assert!(
            tests.iter().any(|t| t.starts_with(&prefix)) || id.starts_with("DBG"),
            "{id}: no test named {prefix}*"
        );
        for t in tests {
            assert!(
                code.contains(&format!("fn {t}(")),
                "{id}: test {t} does not exist"
            );
        }
    }
}
