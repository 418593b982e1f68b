//! One worker process, from the host's side: started, spoken to one frame at a time
//! under the time limit, and on failure described (how it died, what it last wrote on
//! stderr) and reaped.

use super::frame::{self, Kind, Op, ReadError, Response};
use crate::watchdog::Watch;
use serde::{Deserialize, Serialize};
use std::io::{BufReader, BufWriter, Read};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// The `protocol` of a worker's `Hello`.
pub(crate) const PROTOCOL: &str = "recap-plugin-worker/1";

/// The worker's first frame: the library it loaded, or why it could not.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Hello {
    pub protocol: String,
    #[serde(default)]
    pub library: Option<LibraryInfo>,
    /// The load error, as the host would have written it in-process.
    #[serde(default)]
    pub problem: Option<String>,
}

/// What the worker found in the library: the descriptor's identity and functions.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
pub(crate) struct LibraryInfo {
    pub name: String,
    pub version: String,
    pub abi_minor: u32,
    pub describe: bool,
    pub sessions: bool,
}

/// Why a call into a worker failed.
#[derive(Debug)]
pub(crate) enum Failure {
    /// The watchdog killed it: the call overran.
    TimedOut,
    /// It died (or closed its output) during the call.
    Died { how: String, stderr: String },
    /// It wrote something that is not a frame; it was killed.
    Garbage(String),
}

/// How much of a worker's stderr is kept for error messages.
const STDERR_KEPT: usize = 4096;

/// The end of what a worker wrote on stderr.
#[derive(Default)]
struct Tail(Vec<u8>);

impl Tail {
    fn push(&mut self, bytes: &[u8]) {
        self.0.extend_from_slice(bytes);
        if self.0.len() > STDERR_KEPT {
            let cut = self.0.len() - STDERR_KEPT;
            self.0.drain(..cut);
        }
    }

    /// The last line that says something (not empty, not part of a backtrace), at most
    /// 300 characters.
    fn last_line(&self) -> String {
        let text = String::from_utf8_lossy(&self.0);
        let noise = |l: &str| {
            let l = l.trim();
            l.is_empty()
                || l.starts_with("note: ")
                || l.starts_with("stack backtrace:")
                || l.starts_with("at ")
                || l.split_once(": ")
                    .is_some_and(|(n, _)| n.parse::<u32>().is_ok())
        };
        let line = text.lines().rev().find(|l| !noise(l)).unwrap_or("").trim();
        match line.char_indices().nth(300) {
            Some((cut, _)) => format!("{}…", &line[..cut]),
            None => line.to_string(),
        }
    }
}

/// A running worker process.
pub(crate) struct WorkerProcess {
    child: Child,
    /// Buffered so that a request's header and bytes leave in one write.
    input: BufWriter<ChildStdin>,
    output: BufReader<ChildStdout>,
    stderr: Arc<Mutex<Tail>>,
    watch: Arc<Watch>,
    /// Set by the watchdog once it has sent the kill, so that the process is reaped
    /// (and its pid freed) only after that.
    kill_sent: Arc<AtomicBool>,
    /// The response payload buffer, reused.
    buffer: Vec<u8>,
    /// Killed by the watchdog after it answered: usable no more.
    pub(crate) spent: bool,
}

impl WorkerProcess {
    /// Starts `worker plugin-worker [--memory-limit BYTES] LIBRARY` and reads its
    /// `Hello` (within the time limit: loading runs the library's initialisers).
    pub(crate) fn spawn(
        worker: &Path,
        library: &Path,
        memory_limit: Option<u64>,
    ) -> Result<(Self, Hello), String> {
        let mut command = Command::new(worker);
        command.arg("plugin-worker");
        if let Some(limit) = memory_limit {
            command.arg("--memory-limit").arg(limit.to_string());
            // The worker's allocator (mimalloc, src/main.rs) counts against the limit
            // (`RLIMIT_AS`) every address range it reserves. recap is built to reserve
            // 16 MiB at a time (.cargo/config.toml), but a build whose CFLAGS replaced
            // that keeps mimalloc's 1 GiB, past a smaller limit before the library is
            // even loaded; the variable holds the reservations small in either build.
            command.env("MIMALLOC_ARENA_RESERVE", "4MiB");
        }
        command
            .arg(library)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command
            .spawn()
            .map_err(|e| format!("cannot start the worker {}: {e}", worker.display()))?;
        let (Some(input), Some(output), Some(mut stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("the worker's pipes could not be set up".into());
        };
        let tail = Arc::new(Mutex::new(Tail::default()));
        let kept = Arc::clone(&tail);
        // Drains stderr so that a chatty plugin never blocks on it; ends with the
        // process.
        let _ = std::thread::Builder::new()
            .name("recap-plugin-worker-stderr".into())
            .spawn(move || {
                let mut chunk = [0u8; 4096];
                while let Ok(n @ 1..) = stderr.read(&mut chunk) {
                    kept.lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .push(&chunk[..n]);
                }
            });
        let pid = child.id();
        let kill_sent = Arc::new(AtomicBool::new(false));
        let sent = Arc::clone(&kill_sent);
        let watch = Watch::new(move || {
            kill(pid);
            sent.store(true, Ordering::Release);
        });
        let mut process = Self {
            child,
            input: BufWriter::with_capacity(1 << 16, input),
            output: BufReader::with_capacity(1 << 16, output),
            stderr: tail,
            watch,
            kill_sent,
            buffer: Vec::new(),
            spent: false,
        };
        process.watch.arm();
        let read = frame::read_response(&mut process.output, Vec::new());
        let overran = process.watch.disarm();
        let hello = match read {
            Ok(r) if r.kind == Kind::Hello => serde_json::from_slice::<Hello>(&r.payload)
                .ok()
                .filter(|h| h.protocol == PROTOCOL),
            _ if overran => {
                process.reap_after_kill();
                return Err(
                    "it did not finish loading the library within the time limit \
                            (--plugin-timeout); it was killed"
                        .into(),
                );
            }
            Err(ReadError::Closed) => {
                let (how, stderr) = process.death();
                let said = if stderr.is_empty() {
                    String::new()
                } else {
                    format!("; it last wrote on stderr: {stderr:?}")
                };
                return Err(format!("it died while loading the library: {how}{said}"));
            }
            _ => None,
        };
        match hello {
            Some(hello) => Ok((process, hello)),
            None => {
                process.stop();
                Err(format!(
                    "{} did not answer as a recap plugin worker ({PROTOCOL})",
                    worker.display()
                ))
            }
        }
    }

    /// One request and its response, under the time limit.
    pub(crate) fn call(
        &mut self,
        op: Op,
        handle: u64,
        payload: &[u8],
    ) -> Result<Response, Failure> {
        self.watch.arm();
        let read = match frame::write_request(&mut self.input, op, handle, payload) {
            Ok(()) => frame::read_response(&mut self.output, std::mem::take(&mut self.buffer)),
            Err(_) => Err(ReadError::Closed),
        };
        let overran = self.watch.disarm();
        match read {
            Ok(response) if response.kind != Kind::Hello => {
                if overran {
                    // It answered as the watchdog killed it: the answer stands, the
                    // worker is gone.
                    self.spent = true;
                }
                Ok(response)
            }
            Ok(_) => {
                self.stop();
                Err(Failure::Garbage("a second Hello frame".into()))
            }
            Err(_) if overran => {
                self.reap_after_kill();
                Err(Failure::TimedOut)
            }
            Err(ReadError::Closed) => {
                let (how, stderr) = self.death();
                Err(Failure::Died { how, stderr })
            }
            Err(ReadError::Garbage(detail)) => {
                self.stop();
                Err(Failure::Garbage(detail))
            }
        }
    }

    /// Gives the reply's buffer back for the next call.
    pub(crate) fn recycle(&mut self, buffer: Vec<u8>) {
        self.buffer = buffer;
    }

    /// The worker's pipe ended: waits (briefly) for it to exit and says how it ended.
    fn death(&mut self) -> (String, String) {
        let deadline = Instant::now() + Duration::from_secs(2);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < deadline => {
                    std::thread::sleep(Duration::from_millis(2));
                }
                _ => break None,
            }
        };
        let how = match status {
            Some(status) => describe_exit(status),
            None => {
                let _ = self.child.kill();
                let _ = self.child.wait();
                "it closed its output and was killed".to_string()
            }
        };
        // The stderr reader gets what the process wrote before it died.
        std::thread::sleep(Duration::from_millis(5));
        let stderr = self
            .stderr
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .last_line();
        (how, stderr)
    }

    /// The watchdog is killing the process: reap it once the kill is sent (reaping
    /// earlier would free its pid for another process).
    fn reap_after_kill(&mut self) {
        let deadline = Instant::now() + Duration::from_secs(5);
        while !self.kill_sent.load(Ordering::Acquire) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Kills and reaps the process.
    pub(crate) fn stop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for WorkerProcess {
    fn drop(&mut self) {
        // An idle worker: its stdin closing would end it too, but not one stuck in a
        // plugin's close.
        self.stop();
    }
}

/// `exited with status N`, `killed by signal 6 (SIGABRT)`.
pub(crate) fn describe_exit(status: ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            let name = match signal {
                4 => " (SIGILL)",
                5 => " (SIGTRAP)",
                6 => " (SIGABRT: the plugin aborted, or an allocation failed)",
                7 => " (SIGBUS)",
                8 => " (SIGFPE)",
                9 => " (SIGKILL: the system's out-of-memory killer, or another process)",
                11 => " (SIGSEGV: an invalid memory access)",
                15 => " (SIGTERM)",
                _ => "",
            };
            return format!("killed by signal {signal}{name}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with status {code}"),
        None => format!("ended: {status}"),
    }
}

#[cfg(unix)]
fn kill(pid: u32) {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return;
    };
    // SAFETY: kill(2) has no memory effects; `pid` is a child of this process that has
    // not been reaped (the owner reaps it only after this returns, see
    // `reap_after_kill`), so it names that child and no other process.
    unsafe { libc::kill(pid, libc::SIGKILL) };
}

#[cfg(not(unix))]
fn kill(_pid: u32) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_stderr_line_is_kept() {
        let mut tail = Tail::default();
        tail.push(b"first\nmemory allocation of 1073741824 bytes failed\n\n");
        assert_eq!(
            tail.last_line(),
            "memory allocation of 1073741824 bytes failed"
        );
        tail.push(b"stack backtrace:\n   0: std::alloc::rust_oom\n             at /rustc/x\nnote: Some details are omitted\n");
        assert_eq!(
            tail.last_line(),
            "memory allocation of 1073741824 bytes failed"
        );
        tail.push(&vec![b'x'; 10_000]);
        assert_eq!(tail.0.len(), STDERR_KEPT);
        assert!(tail.last_line().ends_with('…'));
    }
}
