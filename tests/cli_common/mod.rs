//! The binary run from the repository root's tests (`cli_run.rs`, `cli_shards.rs`,
//! `cli_experiment.rs`).

use recap_testkit::cli::{Run, run};
use recap_testkit::recap_command;
use std::path::{Path, PathBuf};

/// The repository root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `recap ARGS` run in `dir`.
pub fn recap(dir: &Path, args: &[&str]) -> Run {
    run(recap_command!().current_dir(dir).args(args))
}

/// The path of the bench-data corpus `name`.
pub fn bench(name: &str) -> String {
    root().join("bench-data").join(name).display().to_string()
}
