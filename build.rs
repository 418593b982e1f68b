//! Captures the git commit recap is built from, for the provenance of every report
//! (`RECAP_GIT_COMMIT`). Never fails the build: outside a git checkout, or without git,
//! the commit is `unknown`. A packager may set RECAP_GIT_COMMIT themselves.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_string())
}

/// Asks cargo to run this again when the checked-out commit moves. Only files that
/// exist are named: a missing one would make cargo rerun the script on every build.
fn watch(path: &Path) {
    if path.exists() {
        println!("cargo:rerun-if-changed={}", path.display());
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=RECAP_GIT_COMMIT");
    let commit = match std::env::var("RECAP_GIT_COMMIT") {
        Ok(given) if !given.trim().is_empty() => given.trim().to_string(),
        _ => {
            if let Some(dir) = git(&["rev-parse", "--git-dir"]).map(PathBuf::from) {
                watch(&dir.join("HEAD"));
                if let Some(reference) = git(&["symbolic-ref", "-q", "HEAD"]) {
                    let common = git(&["rev-parse", "--git-common-dir"])
                        .map(PathBuf::from)
                        .unwrap_or_else(|| dir.clone());
                    watch(&common.join(reference));
                    watch(&common.join("packed-refs"));
                }
            }
            git(&["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".to_string())
        }
    };
    println!("cargo:rustc-env=RECAP_GIT_COMMIT={commit}");
}
