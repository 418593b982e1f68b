//! Builds plugin libraries for the tests and benches with a nested `cargo build`, once
//! per test binary, and finds them through cargo's JSON messages (never by guessing
//! paths in target/). `cargo test` does not build cdylibs of other packages, and by the
//! time tests run cargo has released its build lock, so the nested build cannot
//! deadlock.

use std::collections::BTreeMap;
use std::env::consts::DLL_EXTENSION;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// recap's workspace root (this crate is `crates/recap-testkit` in it).
pub fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn fixtures_manifest() -> PathBuf {
    workspace_root().join("crates/recap-plugin-host/tests/fixtures/Cargo.toml")
}

/// The target directory the running test or bench binary was built in, so that the
/// nested build reuses what cargo already compiled: such binaries sit in
/// `<target>/<profile>/deps/`. Anywhere else, a directory of its own under the system's
/// temporary directory (slower, never wrong: the libraries are found from cargo's
/// messages, not from this path).
fn target_dir() -> PathBuf {
    let exe = std::env::current_exe().ok();
    let deps = exe.as_deref().and_then(Path::parent);
    match deps {
        Some(deps) if deps.file_name().is_some_and(|n| n == "deps") => deps
            .parent()
            .and_then(Path::parent)
            .map_or_else(|| deps.to_path_buf(), Path::to_path_buf),
        _ => std::env::temp_dir().join("recap-testkit-target"),
    }
}

/// `cargo build <args>`; returns each shared library built, by target name.
pub fn build_cdylibs(args: &[&str]) -> BTreeMap<String, PathBuf> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let output = Command::new(&cargo)
        .arg("build")
        .args(args)
        .arg("--message-format=json-render-diagnostics")
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {cargo:?}: {e}"));
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "cargo build {args:?} failed:\n{}\n{stdout}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut libs = BTreeMap::new();
    for line in stdout.lines() {
        let Ok(msg) = serde_json::from_str::<serde_json::Value>(line) else {
            continue;
        };
        if msg["reason"] != "compiler-artifact" {
            continue;
        }
        let name = msg["target"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        for file in msg["filenames"].as_array().into_iter().flatten() {
            let path = PathBuf::from(file.as_str().unwrap_or_default());
            if path.extension().is_some_and(|e| e == DLL_EXTENSION) {
                libs.insert(name.clone(), path);
            }
        }
    }
    libs
}

fn lookup(libs: &BTreeMap<String, PathBuf>, name: &str) -> PathBuf {
    libs.get(name)
        .unwrap_or_else(|| panic!("cargo built no library {name}; built: {libs:?}"))
        .clone()
}

/// `cargo build --manifest-path <manifest> <args>`; see [`build_cdylibs`].
fn build_in(manifest: &Path, args: &[&str]) -> BTreeMap<String, PathBuf> {
    let manifest = manifest.to_str().expect("UTF-8 path");
    build_cdylibs(&[&["--manifest-path", manifest], args].concat())
}

/// The sample plugins of `strategies/`, built from recap's workspace.
pub fn sample(name: &str) -> PathBuf {
    static LIBS: OnceLock<BTreeMap<String, PathBuf>> = OnceLock::new();
    let libs = LIBS.get_or_init(|| {
        let args = [
            "--lib",
            "-p",
            "recap-ptc-output-masking",
            "-p",
            "recap-aggressive",
        ];
        build_in(&workspace_root().join("Cargo.toml"), &args)
    });
    lookup(libs, name)
}

/// A fixture plugin of `tests/fixtures/failures/examples`.
pub fn fixture(name: &str) -> PathBuf {
    static LIBS: OnceLock<BTreeMap<String, PathBuf>> = OnceLock::new();
    let libs = LIBS.get_or_init(|| {
        build_in(
            &fixtures_manifest(),
            &["-p", "recap-plugin-fixtures", "--examples"],
        )
    });
    lookup(libs, name)
}

/// A faulty plugin of `tests/reliability-fixtures/examples` (the `recap` binary's
/// reliability tests).
pub fn reliability_fixture(name: &str) -> PathBuf {
    static LIBS: OnceLock<BTreeMap<String, PathBuf>> = OnceLock::new();
    let libs = LIBS.get_or_init(|| {
        let manifest = workspace_root().join("tests/reliability-fixtures/Cargo.toml");
        build_in(&manifest, &["--examples"])
    });
    lookup(libs, name)
}

/// A built-in wrapped as a plugin (`tests/fixtures/wrapped/examples`), or `None` when
/// no wrapper exists for that name.
pub fn wrapped_builtin(name: &str) -> Option<PathBuf> {
    static LIBS: OnceLock<BTreeMap<String, PathBuf>> = OnceLock::new();
    let libs = LIBS.get_or_init(|| {
        build_in(
            &fixtures_manifest(),
            &["-p", "recap-plugin-wrapped-builtins", "--examples"],
        )
    });
    libs.get(&format!("wrap_{}", name.replace('-', "_")))
        .cloned()
}
