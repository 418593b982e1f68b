//! The worker process of an isolated plugin (`recap plugin-worker [--memory-limit
//! BYTES] LIB`): loads one library, then answers the host's frames on stdin/stdout
//! until stdin ends. Everything the plugin could break stays in here: the host sees a
//! dead process, a time-out, or bytes that are not a frame.
//!
//! Before the library is loaded, the protocol moves off file descriptors 0 and 1 (to
//! descriptors closed on exec): a plugin that prints to stdout writes to stderr, and
//! one that reads stdin reads nothing, instead of corrupting the frames.

use crate::error::Problem;
use crate::inprocess::{self, Fns, Returned, SessionPtr};
use crate::isolated::{FrameKind, Hello, LibraryInfo, Op, PROTOCOL, read_request, write_response};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{BufReader, BufWriter, Write};
use std::path::Path;
use std::ptr::NonNull;

/// Serves the host until it closes stdin; the process's exit code. `library` is the
/// canonical path the host checked.
pub fn serve_worker(library: &Path, memory_limit: Option<u64>) -> u8 {
    let (input, output) = match protocol_streams() {
        Ok(streams) => streams,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "recap plugin-worker: {e}");
            return 2;
        }
    };
    let mut input = BufReader::with_capacity(1 << 16, input);
    let mut output = BufWriter::with_capacity(1 << 16, output);
    die_with_parent();
    let loaded = match memory_limit {
        Some(limit) => limit_memory(limit).map_err(Problem::Worker),
        None => Ok(()),
    }
    .and_then(|()| crate::load::open_validated(library));
    let (fns, hello) = match loaded {
        Ok(v) => {
            let info = LibraryInfo {
                name: v.name,
                version: v.version,
                abi_minor: v.abi_minor,
                describe: v.fns.describe.is_some(),
                sessions: v.fns.sessions.is_some(),
            };
            let hello = Hello {
                protocol: PROTOCOL.into(),
                library: Some(info),
                problem: None,
            };
            (Some(v.fns), hello)
        }
        Err(problem) => (
            None,
            Hello {
                protocol: PROTOCOL.into(),
                library: None,
                problem: Some(problem.to_string()),
            },
        ),
    };
    let hello = serde_json::to_vec(&hello).unwrap_or_default();
    if write_response(&mut output, FrameKind::Hello, 0, 0, &hello).is_err() {
        return 0;
    }
    let Some(fns) = fns else {
        return 0;
    };
    let mut worker = Worker {
        fns,
        sessions: BTreeMap::new(),
        next_id: 1,
    };
    let mut payload = Vec::new();
    loop {
        let (op, handle) = match read_request(&mut input, &mut payload) {
            Ok(Some(request)) => request,
            // The host closed the pipe (or is gone): nothing more to do.
            Ok(None) => return 0,
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "recap plugin-worker: bad request: {e}");
                return 2;
            }
        };
        if worker.answer(op, handle, &payload, &mut output).is_err() {
            return 0;
        }
    }
}

/// A loaded library and its open sessions, by the id the host knows them by.
struct Worker {
    fns: Fns,
    sessions: BTreeMap<u64, SessionPtr>,
    next_id: u64,
}

impl Worker {
    fn answer(
        &mut self,
        op: Op,
        handle: u64,
        request: &[u8],
        out: &mut impl Write,
    ) -> std::io::Result<()> {
        let fault = |out: &mut dyn Write, text: &str| {
            let mut w = out;
            write_response(&mut w, FrameKind::Fault, 0, 0, text.as_bytes())
        };
        match op {
            Op::Render => {
                let (status, returned) = inprocess::render(&self.fns, request);
                forward(out, status, 0, &returned)
            }
            Op::Describe => match self.fns.describe {
                Some(describe) => {
                    let (status, returned) = inprocess::describe(&self.fns, describe, request);
                    forward(out, status, 0, &returned)
                }
                None => fault(out, "the plugin has no describe"),
            },
            Op::Open => {
                let Some(sessions) = self.fns.sessions else {
                    return fault(out, "the plugin has no session functions");
                };
                let (status, ptr, returned) = inprocess::open(&self.fns, sessions, request);
                let id = match NonNull::new(ptr) {
                    Some(ptr) => {
                        let id = self.next_id;
                        self.next_id += 1;
                        self.sessions.insert(id, SessionPtr(ptr));
                        id
                    }
                    None => 0,
                };
                forward(out, status, id, &returned)
            }
            Op::SessionRender => {
                let (Some(sessions), Some(ptr)) = (self.fns.sessions, self.sessions.get(&handle))
                else {
                    return fault(out, &format!("no open session {handle}"));
                };
                // SAFETY: `ptr` came from this plugin's `session_open` and is not closed
                // (closing removes it from the map); this single thread makes every call.
                let (status, returned) =
                    unsafe { inprocess::session_render(&self.fns, sessions, *ptr, request) };
                forward(out, status, 0, &returned)
            }
            Op::Close => {
                let (Some(sessions), Some(ptr)) =
                    (self.fns.sessions, self.sessions.remove(&handle))
                else {
                    return fault(out, &format!("no open session {handle}"));
                };
                // SAFETY: as for `SessionRender`; removed from the map, so closed once.
                unsafe { inprocess::close(sessions, ptr) };
                write_response(out, FrameKind::Answer, 0, 0, &[])
            }
        }
    }
}

/// Sends the plugin's answer as it is, or its length when it is over the cap.
fn forward(
    out: &mut impl Write,
    status: i32,
    value: u64,
    returned: &Returned,
) -> std::io::Result<()> {
    match returned.bytes() {
        Ok(bytes) => write_response(out, FrameKind::Answer, status, value, bytes),
        Err(len) => write_response(out, FrameKind::Oversize, status, len as u64, &[]),
    }
}

/// The protocol's input and output, moved off descriptors 0 and 1; those then read
/// `/dev/null` and write to stderr.
#[cfg(unix)]
fn protocol_streams() -> std::io::Result<(File, File)> {
    use std::os::fd::{AsRawFd, FromRawFd};
    let moved = |fd: libc::c_int| -> std::io::Result<File> {
        // SAFETY: fcntl(F_DUPFD_CLOEXEC) only duplicates a descriptor this process has
        // open (0 and 1 are the pipes the host set up).
        let new = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 3) };
        if new < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `new` is a fresh descriptor owned by nothing else.
        Ok(unsafe { File::from_raw_fd(new) })
    };
    let input = moved(0)?;
    let output = moved(1)?;
    let null = File::open("/dev/null")?;
    for (from, to) in [(null.as_raw_fd(), 0), (2, 1)] {
        // SAFETY: dup2 on descriptors this process has open; 0 and 1 now belong to
        // nothing else in this process (the protocol uses the copies above).
        if unsafe { libc::dup2(from, to) } < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    Ok((input, output))
}

#[cfg(not(unix))]
fn protocol_streams() -> std::io::Result<(File, File)> {
    Err(std::io::Error::new(
        std::io::ErrorKind::Unsupported,
        "process isolation needs a Unix system",
    ))
}

/// Limits the address space (`RLIMIT_AS`): an allocation past it fails in the plugin
/// (a Rust plugin then aborts) instead of exhausting the machine.
#[cfg(unix)]
fn limit_memory(bytes: u64) -> Result<(), String> {
    let limit = libc::rlimit {
        rlim_cur: bytes as libc::rlim_t,
        rlim_max: bytes as libc::rlim_t,
    };
    // SAFETY: setrlimit reads the struct passed by reference and changes only this
    // process's limit.
    if unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) } != 0 {
        return Err(format!(
            "cannot set the memory limit: {}",
            std::io::Error::last_os_error()
        ));
    }
    Ok(())
}

#[cfg(not(unix))]
fn limit_memory(_bytes: u64) -> Result<(), String> {
    Err("a memory limit needs a Unix system".into())
}

/// Ends the worker when recap is gone, even while the plugin is stuck in a call (an
/// idle worker ends anyway: its stdin closes). `PR_SET_PDEATHSIG` would not do: it
/// follows the thread that started the worker, and recap's threads come and go.
#[cfg(unix)]
fn die_with_parent() {
    let parent = std::os::unix::process::parent_id();
    let _ = std::thread::Builder::new()
        .name("recap-plugin-worker-parent".into())
        .spawn(move || {
            loop {
                std::thread::sleep(std::time::Duration::from_millis(500));
                if std::os::unix::process::parent_id() != parent {
                    // SAFETY: _exit ends the process at once; unlike `exit` it runs no
                    // handler that could wait for a lock the stuck plugin holds.
                    unsafe { libc::_exit(0) };
                }
            }
        });
}

#[cfg(not(unix))]
fn die_with_parent() {}
