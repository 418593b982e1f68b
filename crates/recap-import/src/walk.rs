//! Which files an import reads: each path as given, directories walked recursively in
//! sorted order so the output does not depend on the file system's listing order. The
//! same file named twice (directly, or through a directory and by name) is an error:
//! its sessions would be imported twice.

use crate::ImportError;
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Expands `paths` into files: a file is taken as is (whatever its name), a directory
/// contributes every file below it that `accept` takes, in sorted path order.
pub fn collect(
    paths: &[PathBuf],
    accept: impl Fn(&Path) -> bool,
    wanted: &str,
) -> Result<Vec<PathBuf>, ImportError> {
    let mut files = Vec::new();
    for path in paths {
        let meta = fs::metadata(path).map_err(|e| ImportError::Path {
            path: path.clone(),
            message: format!("cannot read: {e}"),
        })?;
        if meta.is_dir() {
            let before = files.len();
            walk_dir(path, &accept, &mut files)?;
            if files.len() == before {
                return Err(ImportError::Path {
                    path: path.clone(),
                    message: format!("no {wanted} found in this directory"),
                });
            }
        } else {
            files.push(path.clone());
        }
    }
    refuse_repeats(&files)?;
    Ok(files)
}

/// The same file twice is an error naming both paths.
fn refuse_repeats(files: &[PathBuf]) -> Result<(), ImportError> {
    let mut seen: BTreeMap<PathBuf, &PathBuf> = BTreeMap::new();
    for f in files {
        let key = fs::canonicalize(f).unwrap_or_else(|_| f.clone());
        if let Some(first) = seen.insert(key, f) {
            return Err(ImportError::Path {
                path: f.clone(),
                message: if first == f {
                    "this file is given twice; its sessions would be imported twice".into()
                } else {
                    format!(
                        "this file is also given as {}; its sessions would be imported twice",
                        first.display()
                    )
                },
            });
        }
    }
    Ok(())
}

fn walk_dir(
    dir: &Path,
    accept: &impl Fn(&Path) -> bool,
    out: &mut Vec<PathBuf>,
) -> Result<(), ImportError> {
    let read_err = |e: std::io::Error| ImportError::Path {
        path: dir.to_path_buf(),
        message: format!("cannot list directory: {e}"),
    };
    let mut entries = fs::read_dir(dir)
        .map_err(read_err)?
        .map(|e| e.map(|e| e.path()))
        .collect::<Result<Vec<_>, _>>()
        .map_err(read_err)?;
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk_dir(&path, accept, out)?;
        } else if accept(&path) {
            out.push(path);
        }
    }
    Ok(())
}

/// True when the file name ends with one of `exts` (without the dot), looking through
/// a `.gz` suffix.
pub fn has_extension(path: &Path, exts: &[&str]) -> bool {
    crate::source::data_extension(path)
        .is_some_and(|e| exts.iter().any(|x| e.eq_ignore_ascii_case(x)))
}
