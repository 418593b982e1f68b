//! Which files an import reads: each path as given, directories walked recursively in
//! sorted order so the output does not depend on the file system's listing order.

use crate::ImportError;
use std::fs;
use std::path::{Path, PathBuf};

/// Expands `paths` into files: a file is taken as is (whatever its name), a directory
/// contributes every file below it that `accept` takes, in sorted path order.
pub fn collect(
    paths: &[PathBuf],
    accept: fn(&Path) -> bool,
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
            walk_dir(path, accept, &mut files)?;
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
    Ok(files)
}

fn walk_dir(
    dir: &Path,
    accept: fn(&Path) -> bool,
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

/// True when the file name ends with one of `exts` (without the dot).
pub fn has_extension(path: &Path, exts: &[&str]) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| exts.iter().any(|x| e.eq_ignore_ascii_case(x)))
}
