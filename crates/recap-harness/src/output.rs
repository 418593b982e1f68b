//! Writing a report directory (`--out DIR`) safely.
//!
//! Everything is first written into a hidden staging directory beside `DIR`. When `DIR`
//! does not exist (or is empty) the staging directory is renamed to `DIR` in one step, so
//! a reader never sees half a report. A non-empty `DIR` is refused — a previous report
//! is never overwritten silently — unless `force` is set; then each file moves into
//! `DIR` by rename (atomic per file), files of an older report that the new one does
//! not produce are removed, and any other file in `DIR` is left alone.

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error(
        "{} already holds files (a previous report?); refusing to overwrite it — pass --force to replace recap's files there, or choose another --out",
        .0.display()
    )]
    NotEmpty(PathBuf),
    #[error("{} exists and is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn io_err(path: &Path) -> impl Fn(io::Error) -> OutputError + '_ {
    move |source| OutputError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// Names recap writes into a report directory; only these are replaced or removed.
pub fn is_recap_file(name: &str) -> bool {
    matches!(
        name,
        "report.json" | "report.csv" | "report.md" | "report.txt"
    ) || ((name.starts_with("tokens_per_call_") || name.starts_with("retention_vs_tokens_"))
        && name.ends_with(".svg"))
}

/// The prompt dumps' sub-directory.
pub const PROMPTS_DIR: &str = "prompts";

/// A report directory being written.
pub struct OutputDir {
    target: PathBuf,
    staging: tempfile::TempDir,
    force: bool,
}

fn is_empty_dir(path: &Path) -> Result<bool, OutputError> {
    Ok(fs::read_dir(path).map_err(io_err(path))?.next().is_none())
}

impl OutputDir {
    /// Checks the target and creates the staging directory beside it.
    pub fn create(target: &Path, force: bool) -> Result<OutputDir, OutputError> {
        match fs::metadata(target) {
            Ok(m) if !m.is_dir() => return Err(OutputError::NotADirectory(target.into())),
            Ok(_) if !force && !is_empty_dir(target)? => {
                return Err(OutputError::NotEmpty(target.into()));
            }
            _ => {}
        }
        let parent = match target.parent() {
            Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
            _ => PathBuf::from("."),
        };
        fs::create_dir_all(&parent).map_err(io_err(&parent))?;
        let staging = tempfile::Builder::new()
            .prefix(".recap-report-")
            .tempdir_in(&parent)
            .map_err(io_err(&parent))?;
        Ok(OutputDir {
            target: target.to_path_buf(),
            staging,
            force,
        })
    }

    /// Where a file being produced lives until [`OutputDir::commit`].
    pub fn staged(&self, relative: &str) -> PathBuf {
        self.staging.path().join(relative)
    }

    pub fn write(&self, name: &str, contents: &[u8]) -> Result<(), OutputError> {
        self.write_with(name, |w| w.write_all(contents))
    }

    /// Writes a staged file through a buffered writer (large reports are streamed, never
    /// held in memory whole).
    pub fn write_with(
        &self,
        name: &str,
        fill: impl FnOnce(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), OutputError> {
        let path = self.staged(name);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        let f = fs::File::create(&path).map_err(io_err(&path))?;
        let mut w = io::BufWriter::with_capacity(1 << 16, f);
        fill(&mut w).map_err(io_err(&path))?;
        let f = w.into_inner().map_err(|e| io_err(&path)(e.into_error()))?;
        f.sync_all().map_err(io_err(&path))
    }

    /// Moves the staged report into place and returns the target directory.
    pub fn commit(self) -> Result<PathBuf, OutputError> {
        let target = self.target.clone();
        let fresh = match fs::metadata(&target) {
            Err(_) => true,
            Ok(_) => is_empty_dir(&target)?,
        };
        if fresh {
            if target.exists() {
                fs::remove_dir(&target).map_err(io_err(&target))?;
            }
            let staging = self.staging.keep();
            fs::rename(&staging, &target).map_err(io_err(&target))?;
            return Ok(target);
        }
        // Checked again: the directory may have filled up while we ran.
        if !self.force {
            return Err(OutputError::NotEmpty(target));
        }
        let staging = self.staging.path().to_path_buf();
        replace_files(&staging, &target, true)?;
        Ok(target)
        // `self.staging` drops here and removes what is left of the staging directory.
    }
}

/// Moves recap's files from `from` into `into` (one rename each) and removes recap's
/// files in `into` that `from` does not have.
fn replace_files(from: &Path, into: &Path, top: bool) -> Result<(), OutputError> {
    fs::create_dir_all(into).map_err(io_err(into))?;
    let mut produced = Vec::new();
    for entry in fs::read_dir(from).map_err(io_err(from))? {
        let entry = entry.map_err(io_err(from))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let src = entry.path();
        let dst = into.join(&name);
        if src.is_dir() {
            replace_files(&src, &dst, false)?;
        } else {
            fs::rename(&src, &dst).map_err(io_err(&dst))?;
        }
        produced.push(name);
    }
    for entry in fs::read_dir(into).map_err(io_err(into))? {
        let entry = entry.map_err(io_err(into))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if produced.contains(&name) {
            continue;
        }
        let path = entry.path();
        let ours = if top {
            is_recap_file(&name)
        } else {
            name.ends_with(".jsonl")
        };
        if top && name == PROMPTS_DIR && path.is_dir() {
            // A stale dump from an older report: drop its files, keep anything else.
            for e in fs::read_dir(&path).map_err(io_err(&path))? {
                let p = e.map_err(io_err(&path))?.path();
                if p.extension().is_some_and(|x| x == "jsonl") {
                    fs::remove_file(&p).map_err(io_err(&p))?;
                }
            }
            let _ = fs::remove_dir(&path); // only succeeds when now empty
        } else if ours && path.is_file() {
            fs::remove_file(&path).map_err(io_err(&path))?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_target_appears_whole() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        let o = OutputDir::create(&target, false).unwrap();
        o.write("report.json", b"{}").unwrap();
        o.write("prompts/a.jsonl", b"x\n").unwrap();
        assert!(!target.exists(), "nothing visible before commit");
        o.commit().unwrap();
        assert_eq!(fs::read(target.join("report.json")).unwrap(), b"{}");
        assert!(target.join("prompts/a.jsonl").exists());
        // No staging directory left behind.
        let left: Vec<_> = fs::read_dir(tmp.path()).unwrap().collect();
        assert_eq!(left.len(), 1);
    }

    #[test]
    fn previous_report_is_refused_without_force() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        fs::create_dir(&target).unwrap();
        fs::write(target.join("report.json"), "old").unwrap();
        let e = OutputDir::create(&target, false).err().unwrap().to_string();
        assert!(
            e.contains("refusing to overwrite") && e.contains("--force"),
            "{e}"
        );
        assert_eq!(
            fs::read_to_string(target.join("report.json")).unwrap(),
            "old"
        );
    }

    #[test]
    fn force_replaces_recap_files_and_keeps_others() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        fs::create_dir_all(target.join("prompts")).unwrap();
        fs::write(target.join("report.json"), "old").unwrap();
        fs::write(target.join("tokens_per_call_cl100k_base.svg"), "old").unwrap();
        fs::write(target.join("prompts/x.jsonl"), "old").unwrap();
        fs::write(target.join("notes.txt"), "mine").unwrap();
        let o = OutputDir::create(&target, true).unwrap();
        o.write("report.json", b"new").unwrap();
        o.commit().unwrap();
        assert_eq!(
            fs::read_to_string(target.join("report.json")).unwrap(),
            "new"
        );
        assert!(!target.join("tokens_per_call_cl100k_base.svg").exists());
        assert!(!target.join("prompts").exists());
        assert_eq!(
            fs::read_to_string(target.join("notes.txt")).unwrap(),
            "mine"
        );
    }

    #[test]
    fn a_file_target_is_an_error() {
        let tmp = tempfile::tempdir().unwrap();
        let f = tmp.path().join("f");
        fs::write(&f, "").unwrap();
        assert!(matches!(
            OutputDir::create(&f, true),
            Err(OutputError::NotADirectory(_))
        ));
    }
}
