//! The project's shared data beside the workspace (`../shared`: golden cases, real
//! corpora, design documents), for tests and benchmarks.
//!
//! On a machine without it, whatever needs it is skipped with a notice that shows in
//! `cargo test`'s output, and is logged; `cargo test --workspace` ends its test binaries
//! with one line counting them (`crates/skip-summary`). With `RECAP_REQUIRE_SHARED=1`
//! (`.ci/run` sets it) a missing file fails instead, so that the project's own CI never
//! passes without having run it — while a fork's CI, which has no `../shared`, skips.

use std::io::Write as _;
use std::path::{Path, PathBuf};

/// The variable that turns skips into failures.
pub const REQUIRE_VAR: &str = "RECAP_REQUIRE_SHARED";

/// `../shared` of this workspace.
pub fn root() -> PathBuf {
    // crates/recap-gen → the workspace → its parent, without `..` in printed paths.
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest
        .ancestors()
        .nth(3)
        .map_or_else(|| manifest.join("../../../shared"), |p| p.join("shared"))
}

/// Whether missing shared data (or a C compiler, or a browser) must fail instead of
/// being skipped: `RECAP_REQUIRE_SHARED=1`.
pub fn required() -> bool {
    std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1" || v == "true")
}

/// `../shared/<rel>` when it exists. Otherwise panics under `RECAP_REQUIRE_SHARED=1`,
/// or prints `SKIPPED: <what>: … is missing` and returns `None`.
pub fn path(rel: &str, what: &str) -> Option<PathBuf> {
    let path = root().join(rel);
    if path.exists() {
        return Some(path);
    }
    if required() {
        panic!(
            "{} is missing ({what}); {REQUIRE_VAR}=1 requires it",
            path.display()
        );
    }
    skipped(&format!(
        "{what}: {} is missing (set {REQUIRE_VAR}=1 to make this a failure)",
        path.display()
    ));
    None
}

/// The process that started this test binary (cargo, for `cargo test`): skips of one
/// test run share it, which tells them from those of earlier runs in the log.
fn run_id() -> u32 {
    #[cfg(unix)]
    {
        std::os::unix::process::parent_id()
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// Prints `SKIPPED: <reason>` where `cargo test` shows it, and appends it to
/// [`skip_log`] as `<run id>\t<reason>`, so that a summary can count every skip of a
/// run at its end. libtest captures what `eprintln!` prints in a test that passes;
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
        let _ = file.write_all(format!("{}\t{reason}\n", run_id()).as_bytes());
    }
}

/// The skips of this test run in [`skip_log`] (their reasons, in order).
pub fn skipped_in_this_run() -> Vec<String> {
    let id = run_id().to_string();
    std::fs::read_to_string(skip_log())
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(run, _)| *run == id)
        .map(|(_, reason)| reason.to_string())
        .collect()
}

/// The one line that sums up `skipped` skips of a run, logged in `log`.
pub fn summary(skipped: usize, log: &Path) -> String {
    match skipped {
        0 => "recap: no test skipped".to_string(),
        n => format!(
            "recap: {n} {} skipped (../shared, a C compiler or a browser is missing; each with its reason in {}); {REQUIRE_VAR}=1 makes skips failures",
            if n == 1 {
                "test or benchmark"
            } else {
                "tests or benchmarks"
            },
            log.display()
        ),
    }
}

/// Where [`skipped`] records each skip: `$RECAP_SKIP_LOG`, else `recap-skipped.log` in
/// the target directory this test binary was built into (`$CARGO_TARGET_DIR` when set,
/// wherever it is).
pub fn skip_log() -> PathBuf {
    if let Some(path) = std::env::var_os("RECAP_SKIP_LOG") {
        return PathBuf::from(path);
    }
    target_dir().join("recap-skipped.log")
}

/// The target directory: `$CARGO_TARGET_DIR`, else the ancestor of the running binary
/// that cargo marked as one (`CACHEDIR.TAG`), else this workspace's `target/`.
fn target_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let exe = std::env::current_exe().ok();
    exe.as_deref()
        .and_then(|e| e.ancestors().find(|d| d.join("CACHEDIR.TAG").is_file()))
        .map(Path::to_path_buf)
        .unwrap_or_else(|| {
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .ancestors()
                .nth(2)
                .map_or_else(|| PathBuf::from("target"), |w| w.join("target"))
        })
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
    /// own, with `env` set, so that this test neither sets variables for the tests
    /// beside it nor writes into the real log: returns whether it passed, what it
    /// logged, and this process's id (the child's run id).
    fn skip_in_a_child(env: &[(&str, &str)]) -> (bool, String, u32) {
        static CHILDREN: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = CHILDREN.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("recap-skip-log-{}-{n}", std::process::id()));
        let log = dir.join("sub/skipped.log");
        let mut child = std::process::Command::new(std::env::current_exe().expect("test binary"));
        child
            .args([
                "--exact",
                "shared::tests::skip_a_missing_file",
                "--include-ignored",
            ])
            .env("RECAP_SKIP_LOG", &log)
            .env_remove(REQUIRE_VAR);
        for (k, v) in env {
            child.env(k, v);
        }
        let status = child.output().expect("run the test binary").status;
        let text = std::fs::read_to_string(&log).unwrap_or_default();
        let _ = std::fs::remove_dir_all(&dir);
        (status.success(), text, std::process::id())
    }

    #[test]
    fn a_missing_file_is_skipped_and_logged_unless_required() {
        // A hosted CI's CI=true alone does not make a fork without ../shared fail.
        let (passed, logged, parent) = skip_in_a_child(&[("CI", "true")]);
        assert!(passed);
        assert_eq!(
            logged,
            format!(
                "{parent}\t{WHAT}: {} is missing (set RECAP_REQUIRE_SHARED=1 to make this a failure)\n",
                root().join(MISSING).display()
            )
        );
        let (passed, logged, _) = skip_in_a_child(&[(REQUIRE_VAR, "1")]);
        assert!(
            !passed,
            "RECAP_REQUIRE_SHARED=1 must fail on missing shared data"
        );
        assert_eq!(logged, "");
    }

    #[test]
    fn the_summary_is_one_line_with_the_count_and_the_log() {
        let log = Path::new("/t/recap-skipped.log");
        assert_eq!(summary(0, log), "recap: no test skipped");
        let one = summary(1, log);
        assert!(
            one.starts_with("recap: 1 test or benchmark skipped ("),
            "{one}"
        );
        let many = summary(25, log);
        assert!(
            many.starts_with("recap: 25 tests or benchmarks skipped"),
            "{many}"
        );
        assert!(many.contains("/t/recap-skipped.log") && many.contains("RECAP_REQUIRE_SHARED=1"));
        assert!(!many.contains('\n'));
    }

    #[test]
    fn the_skip_log_is_in_the_target_directory_of_the_running_binary() {
        if std::env::var_os("RECAP_SKIP_LOG").is_some() {
            return;
        }
        let log = skip_log();
        let target = log.parent().expect("a directory");
        let exe = std::env::current_exe().expect("test binary");
        if target.is_absolute() {
            assert!(
                exe.starts_with(target),
                "{} is not under {}",
                exe.display(),
                target.display()
            );
        }
        assert!(
            std::env::var_os("CARGO_TARGET_DIR").is_some() || target.join("CACHEDIR.TAG").is_file(),
            "{}",
            target.display()
        );
    }

    /// Run by `a_missing_file_is_skipped_and_logged_unless_required` in a child process.
    #[test]
    #[ignore = "run through a_missing_file_is_skipped_and_logged_unless_required"]
    fn skip_a_missing_file() {
        if std::env::var_os("RECAP_SKIP_LOG").is_some() {
            assert_eq!(path(MISSING, WHAT), None);
        }
    }
}
