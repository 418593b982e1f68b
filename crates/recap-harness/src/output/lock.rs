//! The OS file lock that reserves a report directory for one run.

use super::{LOCK_FILE, OutputError, io_err};
use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// An exclusive lock on a report directory, held by this process until dropped.
pub(super) struct DirLock {
    path: PathBuf,
    _file: File,
}

impl DirLock {
    pub(super) fn acquire(dir: &Path) -> Result<DirLock, OutputError> {
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
