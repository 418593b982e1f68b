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

mod lock;

use lock::DirLock;
use std::fs::{self, File};
use std::io::{self, Write};
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
/// A shard's part (`crate::part`): its header, written last.
pub const PART_FILE: &str = "part.json";
/// A shard's part: one record per corpus entry of the shard.
pub const OUTCOMES_FILE: &str = "outcomes.jsonl";
/// A shard's part: the texts of its lowest-retention calls, one per line (read only for
/// the calls the merged report shows).
pub const LOWEST_FILE: &str = "lowest.jsonl";

/// Names recap writes into a report directory; only these are replaced or removed.
pub fn is_recap_file(name: &str) -> bool {
    matches!(
        name,
        "report.json"
            | PART_FILE
            | OUTCOMES_FILE
            | LOWEST_FILE
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

    /// A new report directory under `parent` (created if needed), named `run-0001`,
    /// `run-0002`, … after the highest number there, so an experiment's runs sort in
    /// the order they were made and none replaces another. The name is taken by
    /// creating the directory, so two runs started together get two names. Like
    /// [`OutputDir::create`], it is removed again if no report reaches it.
    pub fn create_next_run(parent: &Path) -> Result<OutputDir, OutputError> {
        match fs::metadata(parent) {
            Ok(m) if !m.is_dir() => return Err(OutputError::NotADirectory(parent.into())),
            _ => fs::create_dir_all(parent).map_err(io_err(parent))?,
        }
        let mut next = 1 + highest_run(parent)?;
        loop {
            let dir = parent.join(run_dir_name(next));
            match fs::create_dir(&dir) {
                Ok(()) => {
                    let mut out = OutputDir::create(&dir, false)?;
                    out.created = true;
                    return Ok(out);
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => next += 1,
                Err(e) => return Err(io_err(&dir)(e)),
            }
        }
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

/// `run-0007`: four digits, so that names sort as numbers up to 9,999 runs.
pub fn run_dir_name(n: u32) -> String {
    format!("run-{n:04}")
}

/// The highest `run-N` directory in `parent`, 0 when there is none.
fn highest_run(parent: &Path) -> Result<u32, OutputError> {
    let mut highest = 0;
    for entry in fs::read_dir(parent).map_err(io_err(parent))? {
        let name = entry.map_err(io_err(parent))?.file_name();
        if let Some(n) = name
            .to_str()
            .and_then(|n| n.strip_prefix("run-"))
            .and_then(|n| n.parse::<u32>().ok())
        {
            highest = highest.max(n);
        }
    }
    Ok(highest)
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
    // A shard's part.json, likewise, marks a complete part.
    produced.sort_by_key(|name| {
        (
            top && (name == LAST_FILE || name == PART_FILE),
            name.clone(),
        )
    });
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
mod tests;
