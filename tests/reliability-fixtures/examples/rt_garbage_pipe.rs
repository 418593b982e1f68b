//! Writes garbage into every pipe the process has open beyond stdin, stdout and stderr
//! once 3 turns are completed, then renders normally: under `--plugin-isolation
//! process` that corrupts the worker's protocol pipe (never load it in-process).
use std::io::Write;
use std::os::fd::FromRawFd;

recap_reliability_fixtures::faulty_strategy!(RtGarbagePipe, "rt-garbage-pipe", || {
    let Ok(fds) = std::fs::read_dir("/proc/self/fd") else {
        return;
    };
    for entry in fds.flatten() {
        let Some(fd) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let is_pipe = std::fs::read_link(entry.path())
            .is_ok_and(|target| target.to_string_lossy().starts_with("pipe:"));
        if fd > 2 && is_pipe {
            // SAFETY: borrowed for one write and never closed (ManuallyDrop).
            let mut file = std::mem::ManuallyDrop::new(unsafe { std::fs::File::from_raw_fd(fd) });
            let _ = file.write_all(b"garbage from a plugin, not a frame\n");
        }
    }
});
