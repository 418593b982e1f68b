//! The project's shared data beside the workspace (`../shared`: golden cases, real
//! corpora, design documents), for tests and benchmarks.
//!
//! On a developer's machine without it, whatever needs it is skipped with a notice that
//! shows in `cargo test`'s output; under `CI=true` a missing file fails instead, so
//! that CI never passes without having run it.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// `../shared` of this workspace.
pub fn root() -> PathBuf {
    // crates/recap-gen → the workspace → its parent, without `..` in printed paths.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(3)
        .map_or_else(|| manifest.join("../../../shared"), |p| p.join("shared"))
}

/// Whether missing shared data must fail (`CI=true`) instead of being skipped.
pub fn required() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true")
}

/// `../shared/<rel>` when it exists. Otherwise panics under `CI=true`, or prints
/// `SKIPPED: <what>: … is missing` and returns `None`.
pub fn path(rel: &str, what: &str) -> Option<PathBuf> {
    let path = root().join(rel);
    if path.exists() {
        return Some(path);
    }
    if required() {
        panic!(
            "{} is missing ({what}); CI=true requires it",
            path.display()
        );
    }
    skipped(&format!(
        "{what}: {} is missing (set CI=true to make this a failure)",
        path.display()
    ));
    None
}

/// Prints `SKIPPED: <reason>` where `cargo test` shows it. libtest captures what
/// `eprintln!` prints in a test that passes; writes to the stderr handle go through.
pub fn skipped(reason: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED: {reason}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_golden_cases_beside_the_workspace() {
        // The workspace is the checkout holding this crate; shared/ is its sibling.
        let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        assert!(workspace.join("Cargo.toml").is_file());
        let canonical = |p: &Path| p.canonicalize().ok();
        if root().exists() {
            assert_eq!(canonical(&root()), canonical(&workspace.join("../shared")));
        }
        assert!(
            !root().to_string_lossy().contains(".."),
            "{}",
            root().display()
        );
        if let Some(golden) = path("conformance/ptc_runner_cases.json", "golden cases") {
            assert!(golden.is_file());
        }
    }

    #[test]
    fn a_missing_file_is_skipped_or_required() {
        let rel = "no-such-dir/never-there.json";
        let what = "this notice's own test (nothing real is skipped)";
        if required() {
            let caught = std::panic::catch_unwind(|| path(rel, what));
            assert!(caught.is_err(), "CI=true must fail on missing shared data");
        } else {
            assert_eq!(path(rel, what), None);
        }
    }
}
