//! docs/requirements.md maps every ID of the requirements table to tests (`crate · file ·
//! `fn``, each a `#[test]` in that file) or to a reason it does not apply, so the table
//! cannot silently rot.

use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The directory of the workspace member named `krate` (its `Cargo.toml` says
/// `name = "<krate>"`), searched in crates/ and strategies/.
fn crate_dir(krate: &str) -> Option<PathBuf> {
    let declares = format!("name = \"{krate}\"");
    ["crates", "strategies"]
        .iter()
        .filter_map(|d| std::fs::read_dir(root().join(d)).ok())
        .flat_map(|entries| entries.flatten().map(|e| e.path()))
        .find(|dir| {
            std::fs::read_to_string(dir.join("Cargo.toml"))
                .is_ok_and(|toml| toml.lines().any(|l| l.trim() == declares))
        })
}

/// Whether `source` defines `fn name(` as a test: `#[test]` among the attributes
/// directly above it (other attributes and comments may sit between).
fn defines_test(source: &str, name: &str) -> bool {
    let lines: Vec<&str> = source.lines().collect();
    let signature = format!("fn {name}(");
    lines.iter().enumerate().any(|(i, line)| {
        let line = line.trim_start();
        (line.starts_with(&signature) || line.starts_with(&format!("pub {signature}")))
            && lines[..i]
                .iter()
                .rev()
                .map(|l| l.trim())
                .take_while(|l| l.starts_with("#[") || l.starts_with("//"))
                .any(|l| l == "#[test]")
    })
}

/// A test named in the table: `crate · file · `fn``.
struct NamedTest<'a> {
    krate: &'a str,
    file: &'a str,
    name: &'a str,
}

/// The tests of a row's last cell (entries separated by `<br>`); an entry that names a
/// test in another shape is an error.
fn named_tests<'a>(id: &str, cell: &'a str) -> Vec<NamedTest<'a>> {
    if cell.starts_with("n/a:") {
        return Vec::new();
    }
    cell.split("<br>")
        .map(|entry| {
            let parts: Vec<&str> = entry.split(" · ").map(str::trim).collect();
            let [krate, file, name] = parts[..] else {
                panic!("{id}: {entry:?} is not `crate · file · `test``");
            };
            let name = name
                .strip_prefix('`')
                .and_then(|n| n.strip_suffix('`'))
                .unwrap_or_else(|| panic!("{id}: the test name in {entry:?} is not in backticks"));
            NamedTest { krate, file, name }
        })
        .collect()
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
        let tests = named_tests(id, cell);
        if tests.is_empty() {
            assert!(cell.starts_with("n/a:"), "{id}: neither tests nor a reason");
            continue;
        }
        let prefix = format!("{}_", id.to_lowercase().replace('-', "_"));
        assert!(
            tests.iter().any(|t| t.name.starts_with(&prefix)) || id.starts_with("DBG"),
            "{id}: no test named {prefix}*"
        );
        for t in tests {
            let dir = crate_dir(t.krate)
                .unwrap_or_else(|| panic!("{id}: no workspace crate named {}", t.krate));
            let path = dir.join(t.file);
            let source = std::fs::read_to_string(&path)
                .unwrap_or_else(|e| panic!("{id}: {}: {e}", path.display()));
            assert!(
                defines_test(&source, t.name),
                "{id}: {} has no #[test] fn {}",
                path.display(),
                t.name
            );
        }
    }
}

#[test]
fn a_named_test_must_be_a_test_in_the_named_file() {
    let source = "#[test]\nfn a_1() {}\n\n#[test]\n#[should_panic]\nfn b_2() {}\nfn c_3() {}\n\
                  // fn d_4() {}\n";
    assert!(defines_test(source, "a_1") && defines_test(source, "b_2"));
    assert!(!defines_test(source, "c_3"), "a helper is not a test");
    assert!(!defines_test(source, "d_4"), "a comment is not a test");
    assert!(!defines_test(source, "e_5"));
    let entries = named_tests(
        "X-1",
        "recap-core · src/a.rs · `a_1`<br>recap-core · b.rs · `b_2`",
    );
    assert_eq!(entries.len(), 2);
    assert_eq!(
        (entries[1].krate, entries[1].file, entries[1].name),
        ("recap-core", "b.rs", "b_2")
    );
    assert!(named_tests("X-1", "n/a: a reason with `code`").is_empty());
    assert!(
        crate_dir("recap-single-user-coalesced")
            .is_some_and(|d| d.ends_with("strategies/single-user-coalesced"))
    );
    assert!(crate_dir("no-such-crate").is_none());
}
