//! Writing a report directory (`--out DIR`) safely.
//!
//! Everything recap needs while it writes lives inside `DIR`, never beside it, so a
//! `DIR` whose parent is not writable (a mounted volume, say) works:
//!
//! - `DIR/.recap.lock` is locked (an OS file lock) before the run starts: a second run
//!   into the same `DIR` is refused at once instead of after computing everything. The
//!   lock file is removed when the run ends, and the lock dies with the process.
//! - `DIR/.recap-staging-XXXXXX/` receives the report while it is written. Only the lock
//!   holder writes in `DIR`, so a staging directory found there was left by a killed run
//!   and is removed.
//!
//! A `DIR` holding anything but these is refused — a previous report is never
//! overwritten silently — unless `force` is set. On commit each file moves into `DIR`
//! by rename (atomic per file) with `report.json` last, so a `report.json` in `DIR`
//! means the report beside it is complete; with `force`, files of an older report that
//! the new one does not produce are removed, and any other file in `DIR` is left alone.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

/// The lock file inside a report directory.
pub const LOCK_FILE: &str = ".recap.lock";
/// The name prefix of staging directories inside a report directory.
pub const STAGING_PREFIX: &str = ".recap-staging-";
/// Moved into place last: its presence marks a complete report.
const LAST_FILE: &str = "report.json";

#[derive(Debug, thiserror::Error)]
pub enum OutputError {
    #[error(
        "{} already holds files (a previous report?); refusing to overwrite it — pass --force to replace recap's files there, or choose another --out",
        .0.display()
    )]
    NotEmpty(PathBuf),
    #[error("{} exists and is not a directory", .0.display())]
    NotADirectory(PathBuf),
    #[error(
        "another recap run{} is writing a report into {}; wait for it to finish or choose another --out",
        .holder.map(|pid| format!(" (process {pid})")).unwrap_or_default(),
        .dir.display()
    )]
    Busy { dir: PathBuf, holder: Option<u32> },
    #[error("cannot write {}", path.display())]
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

/// One row per session × strategy × tokenizer.
pub const SESSIONS_CSV: &str = "sessions.csv";
/// One row per call × strategy × tokenizer, streamed while the run goes.
pub const CALLS_CSV: &str = "calls.csv";
/// The self-contained HTML report.
pub const REPORT_HTML: &str = "report.html";

/// Names recap writes into a report directory; only these are replaced or removed.
pub fn is_recap_file(name: &str) -> bool {
    matches!(
        name,
        "report.json"
            | "report.csv"
            | "report.md"
            | "report.txt"
            | SESSIONS_CSV
            | CALLS_CSV
            | REPORT_HTML
    ) || ((name.starts_with("tokens_per_call_") || name.starts_with("retention_vs_tokens_"))
        && name.ends_with(".svg"))
}

/// recap's own bookkeeping inside a report directory: not part of any report.
fn is_housekeeping(name: &str) -> bool {
    name == LOCK_FILE || name.starts_with(STAGING_PREFIX)
}

/// The prompt dumps' sub-directory.
pub const PROMPTS_DIR: &str = "prompts";

/// An exclusive lock on a report directory, held by this process until dropped.
struct DirLock {
    path: PathBuf,
    _file: File,
}

impl DirLock {
    fn acquire(dir: &Path) -> Result<DirLock, OutputError> {
        let path = dir.join(LOCK_FILE);
        loop {
            let mut file = OpenOptions::new()
                .create(true)
                .truncate(false)
                .read(true)
                .write(true)
                .open(&path)
                .map_err(io_err(&path))?;
            match file.try_lock() {
                Ok(()) => {}
                Err(fs::TryLockError::WouldBlock) => {
                    return Err(OutputError::Busy {
                        dir: dir.to_path_buf(),
                        holder: holder_pid(&mut file),
                    });
                }
                Err(fs::TryLockError::Error(e)) => return Err(io_err(&path)(e)),
            }
            // The previous holder removes the file before it lets go, so the lock just
            // taken may be on a file no longer at `path`: only the file there counts.
            if !is_file_at(&file, &path) {
                continue;
            }
            // Who holds it, for the message a second run prints.
            file.set_len(0).map_err(io_err(&path))?;
            writeln!(file, "{}", std::process::id()).map_err(io_err(&path))?;
            return Ok(DirLock { path, _file: file });
        }
    }
}

impl Drop for DirLock {
    fn drop(&mut self) {
        // Removed while still held; the lock itself goes when the file closes.
        let _ = fs::remove_file(&self.path);
    }
}

fn holder_pid(file: &mut File) -> Option<u32> {
    let mut text = String::new();
    file.read_to_string(&mut text).ok()?;
    text.trim().parse().ok()
}

#[cfg(unix)]
fn is_file_at(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn is_file_at(_file: &File, path: &Path) -> bool {
    // Windows cannot remove an open file, so the file locked is the one at the path.
    path.exists()
}

/// A report directory being written.
pub struct OutputDir {
    target: PathBuf,
    staging: Option<tempfile::TempDir>,
    lock: Option<DirLock>,
    force: bool,
    /// `target` did not exist: it is removed again if no report reaches it.
    created: bool,
    /// Staging directories of interrupted runs removed on the way in.
    cleaned: Vec<PathBuf>,
}

/// Whether `dir` holds anything besides recap's bookkeeping.
fn holds_files(dir: &Path) -> Result<bool, OutputError> {
    for entry in fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        if !is_housekeeping(&entry.file_name().to_string_lossy()) {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Removes the staging directories of interrupted runs (only call with the lock held).
fn remove_stale_staging(dir: &Path) -> Result<Vec<PathBuf>, OutputError> {
    let mut removed = Vec::new();
    for entry in fs::read_dir(dir).map_err(io_err(dir))? {
        let entry = entry.map_err(io_err(dir))?;
        if entry
            .file_name()
            .to_string_lossy()
            .starts_with(STAGING_PREFIX)
        {
            let path = entry.path();
            fs::remove_dir_all(&path).map_err(io_err(&path))?;
            removed.push(path);
        }
    }
    removed.sort();
    Ok(removed)
}

impl OutputDir {
    /// Creates `target` if needed, locks it, removes what killed runs left there,
    /// checks that it holds no report (unless `force`), and creates the staging
    /// directory inside it.
    pub fn create(target: &Path, force: bool) -> Result<OutputDir, OutputError> {
        let created = match fs::metadata(target) {
            Ok(m) if !m.is_dir() => return Err(OutputError::NotADirectory(target.into())),
            Ok(_) => false,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                fs::create_dir_all(target).map_err(io_err(target))?;
                true
            }
            Err(e) => return Err(io_err(target)(e)),
        };
        // From here on, dropping `out` undoes what was done (see `Drop`).
        let mut out = OutputDir {
            target: target.to_path_buf(),
            staging: None,
            lock: None,
            force,
            created,
            cleaned: Vec::new(),
        };
        out.lock = Some(DirLock::acquire(target)?);
        out.cleaned = remove_stale_staging(target)?;
        if !force && holds_files(target)? {
            return Err(OutputError::NotEmpty(target.into()));
        }
        out.staging = Some(
            tempfile::Builder::new()
                .prefix(STAGING_PREFIX)
                .tempdir_in(target)
                .map_err(io_err(target))?,
        );
        Ok(out)
    }

    /// The staging directories of interrupted runs that [`OutputDir::create`] removed.
    pub fn cleaned_up(&self) -> &[PathBuf] {
        &self.cleaned
    }

    fn staging_path(&self) -> &Path {
        // Set by `create` before an `OutputDir` is handed out; taken only by `Drop`.
        self.staging
            .as_ref()
            .map_or(self.target.as_path(), tempfile::TempDir::path)
    }

    /// Where a file being produced lives until [`OutputDir::commit`].
    pub fn staged(&self, relative: &str) -> PathBuf {
        self.staging_path().join(relative)
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

    /// A buffered writer of a staged file that is filled while the run goes (per-call
    /// rows, say); the caller flushes it before [`OutputDir::commit`].
    pub fn stream(&self, name: &str) -> Result<io::BufWriter<File>, OutputError> {
        let path = self.staged(name);
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir).map_err(io_err(dir))?;
        }
        let f = File::create(&path).map_err(io_err(&path))?;
        Ok(io::BufWriter::with_capacity(1 << 16, f))
    }

    /// Moves the staged report into place and returns the target directory.
    pub fn commit(mut self) -> Result<PathBuf, OutputError> {
        let target = self.target.clone();
        // Checked again: something other than recap may have written there meanwhile.
        if !self.force && holds_files(&target)? {
            return Err(OutputError::NotEmpty(target));
        }
        let staging = self.staging_path().to_path_buf();
        replace_files(&staging, &target, true)?;
        // The report is there: keep the directory whatever happens next.
        self.created = false;
        Ok(target)
        // Dropping `self` removes the (now empty) staging directory and the lock file.
    }
}

impl Drop for OutputDir {
    fn drop(&mut self) {
        drop(self.staging.take());
        drop(self.lock.take());
        if self.created {
            // No report reached the directory this run created; `remove_dir` only
            // succeeds if nothing else did either.
            let _ = fs::remove_dir(&self.target);
        }
    }
}

/// Moves recap's files from `from` into `into` (one rename each, `report.json` last at
/// the top) and removes recap's files in `into` that `from` does not have.
fn replace_files(from: &Path, into: &Path, top: bool) -> Result<(), OutputError> {
    fs::create_dir_all(into).map_err(io_err(into))?;
    let mut produced = Vec::new();
    for entry in fs::read_dir(from).map_err(io_err(from))? {
        let entry = entry.map_err(io_err(from))?;
        produced.push(entry.file_name().to_string_lossy().into_owned());
    }
    produced.sort_by_key(|name| (top && name == LAST_FILE, name.clone()));
    for name in &produced {
        let src = from.join(name);
        let dst = into.join(name);
        if src.is_dir() {
            replace_files(&src, &dst, false)?;
        } else {
            fs::rename(&src, &dst).map_err(io_err(&dst))?;
        }
    }
    for entry in fs::read_dir(into).map_err(io_err(into))? {
        let entry = entry.map_err(io_err(into))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if produced.contains(&name) || is_housekeeping(&name) {
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

    fn names(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn fresh_target_gets_the_report_and_nothing_is_left_beside_or_inside() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        let o = OutputDir::create(&target, false).unwrap();
        o.write("report.json", b"{}").unwrap();
        o.write("report.csv", b"a\n").unwrap();
        o.write("prompts/a.jsonl", b"x\n").unwrap();
        assert!(
            !target.join("report.json").exists(),
            "nothing visible before commit"
        );
        o.commit().unwrap();
        assert_eq!(fs::read(target.join("report.json")).unwrap(), b"{}");
        assert!(target.join("prompts/a.jsonl").exists());
        assert_eq!(names(tmp.path()), ["out"], "nothing beside the target");
        assert_eq!(
            names(&target),
            ["prompts", "report.csv", "report.json"],
            "no staging directory or lock file left inside"
        );
    }

    #[test]
    fn staging_lives_inside_the_target() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        let o = OutputDir::create(&target, false).unwrap();
        let staged = o.staged("report.json");
        assert!(staged.starts_with(&target), "{}", staged.display());
        assert_eq!(names(tmp.path()), ["out"]);
    }

    #[test]
    fn a_second_writer_is_refused_while_the_first_holds_the_directory() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        let first = OutputDir::create(&target, false).unwrap();
        let e = OutputDir::create(&target, true).err().unwrap();
        assert!(
            matches!(e, OutputError::Busy { holder: Some(pid), .. } if pid == std::process::id()),
            "{e}"
        );
        assert!(e.to_string().contains("another recap run"), "{e}");
        first.commit().unwrap();
        assert!(OutputDir::create(&target, true).is_ok());
    }

    #[test]
    fn an_abandoned_run_leaves_nothing_behind() {
        let tmp = tempfile::tempdir().unwrap();
        let created = tmp.path().join("new");
        drop(OutputDir::create(&created, false).unwrap());
        assert!(
            !created.exists(),
            "a directory created for nothing is removed"
        );
        let existing = tmp.path().join("existing");
        fs::create_dir(&existing).unwrap();
        drop(OutputDir::create(&existing, false).unwrap());
        assert!(existing.is_dir(), "a directory the user made stays");
        assert!(names(&existing).is_empty());
    }

    #[test]
    fn leftovers_of_a_killed_run_are_not_a_report_and_are_removed() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        let stale = target.join(format!("{STAGING_PREFIX}killed"));
        fs::create_dir_all(stale.join(PROMPTS_DIR)).unwrap();
        fs::write(stale.join("report.json"), "{\"half").unwrap();
        fs::write(target.join(LOCK_FILE), "12345\n").unwrap();
        let o = OutputDir::create(&target, false).unwrap();
        assert_eq!(o.cleaned_up(), std::slice::from_ref(&stale));
        assert!(!stale.exists());
        o.write("report.json", b"{}").unwrap();
        o.commit().unwrap();
        assert_eq!(names(&target), ["report.json"]);
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
        assert_eq!(names(&target), ["report.json"], "no lock file left");
    }

    #[test]
    fn force_replaces_recap_files_and_keeps_others() {
        let tmp = tempfile::tempdir().unwrap();
        let target = tmp.path().join("out");
        fs::create_dir_all(target.join("prompts")).unwrap();
        fs::write(target.join("report.json"), "old").unwrap();
        fs::write(target.join("tokens_per_call_cl100k_base.svg"), "old").unwrap();
        fs::write(target.join("prompts/x.jsonl"), "old").unwrap();
        for stale in [SESSIONS_CSV, CALLS_CSV, REPORT_HTML] {
            fs::write(target.join(stale), "old").unwrap();
        }
        fs::write(target.join("notes.txt"), "mine").unwrap();
        let o = OutputDir::create(&target, true).unwrap();
        o.write("report.json", b"new").unwrap();
        let mut calls = o.stream(CALLS_CSV).unwrap();
        calls.write_all(b"new\n").unwrap();
        calls.flush().unwrap();
        drop(calls);
        o.commit().unwrap();
        assert_eq!(
            fs::read_to_string(target.join("report.json")).unwrap(),
            "new"
        );
        assert_eq!(fs::read_to_string(target.join(CALLS_CSV)).unwrap(), "new\n");
        assert!(!target.join("tokens_per_call_cl100k_base.svg").exists());
        assert!(!target.join("prompts").exists());
        assert_eq!(
            fs::read_to_string(target.join("notes.txt")).unwrap(),
            "mine"
        );
        assert_eq!(names(&target), [CALLS_CSV, "notes.txt", "report.json"]);
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

    #[test]
    fn an_io_error_names_the_path_once() {
        let e = OutputError::Io {
            path: PathBuf::from("/x/report.json"),
            source: io::Error::from(io::ErrorKind::PermissionDenied),
        };
        assert_eq!(e.to_string(), "cannot write /x/report.json");
    }
}
