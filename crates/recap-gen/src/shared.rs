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

/// Prints `SKIPPED: <reason>` where `cargo test` shows it, and appends the reason to
/// [`skip_log`], so that a summary can list every skip at the end of a long test run
/// (`.ci/run` does). libtest captures what `eprintln!` prints in a test that passes;
/// writes to the stderr handle go through.
pub fn skipped(reason: &str) {
    let _ = writeln!(std::io::stderr(), "SKIPPED: {reason}");
    let log = skip_log();
    if let Some(dir) = log.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    // One short write in append mode: lines of concurrent tests do not interleave.
    if let Ok(mut file) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
    {
        let _ = file.write_all(format!("{reason}\n").as_bytes());
    }
}

/// Where [`skipped`] records each skip: `$RECAP_SKIP_LOG`, else
/// `target/recap-skipped.log` in this workspace.
pub fn skip_log() -> PathBuf {
    match std::env::var_os("RECAP_SKIP_LOG") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_MANIFEST_DIR"))
            .ancestors()
            .nth(2)
            .map_or_else(|| PathBuf::from("target"), |w| w.join("target"))
            .join("recap-skipped.log"),
    }
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

    const MISSING: &str = "no-such-dir/never-there.json";
    const WHAT: &str = "this notice's own test (nothing real is skipped)";

    /// Runs [`skip_a_missing_file`] in a child process whose skips go to a log of its
    /// own, so that this test neither sets the variable for the tests beside it nor
    /// writes into the real log: returns whether it passed and what it logged.
    fn skip_in_a_child() -> (bool, String) {
        let dir = std::env::temp_dir().join(format!("recap-skip-log-{}", std::process::id()));
        let log = dir.join("sub/skipped.log");
        let status = std::process::Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--exact",
                "shared::tests::skip_a_missing_file",
                "--include-ignored",
            ])
            .env("RECAP_SKIP_LOG", &log)
            .output()
            .expect("run the test binary")
            .status;
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        (status.success(), text)
    }

    #[test]
    fn a_missing_file_is_skipped_and_logged_or_required() {
        let (passed, logged) = skip_in_a_child();
        if required() {
            assert!(!passed, "CI=true must fail on missing shared data");
            assert_eq!(logged, "");
        } else {
            assert!(passed);
            assert_eq!(
                logged,
                format!(
                    "{WHAT}: {} is missing (set CI=true to make this a failure)\n",
                    root().join(MISSING).display()
                )
            );
        }
    }

    /// Run by `a_missing_file_is_skipped_and_logged_or_required` in a child process.
    #[test]
    #[ignore = "run through a_missing_file_is_skipped_and_logged_or_required"]
    fn skip_a_missing_file() {
        if std::env::var_os("RECAP_SKIP_LOG").is_some() {
            assert_eq!(path(MISSING, WHAT), None);
        }
    }
}
