//! Process isolation: the plugin runs in worker processes (`recap plugin-worker LIB`),
//! spoken to in the plugin's own JSON through length-prefixed frames on pipes
//! ([`frame`]). The host never loads the library itself, so nothing the plugin does —
//! abort, a segfault, `exit`, running out of memory, hanging — can take recap down.
//!
//! A session holds one worker from open to close; one-off calls (`describe`, full
//! renders) borrow an idle one. A worker that dies, writes garbage or overruns the time
//! limit (the watchdog kills it) fails that call with an error saying so; the session's
//! later calls are not sent (see `crate::strategy`), and the next session starts a new
//! worker. After [`IsolationConfig::restart_limit`] failures the plugin is disabled.

mod frame;
mod process;

use crate::call::{CallError, Then, WorkerEvent, WorkerFailure};
use crate::error::Problem;
pub(crate) use frame::Op;
use frame::{Kind, Response};
use process::Failure;
pub(crate) use process::WorkerProcess;
pub(crate) use process::{Hello, LibraryInfo, PROTOCOL};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, PoisonError};

pub(crate) use frame::{Kind as FrameKind, read_request, write_response};

/// How many worker failures a plugin survives by default.
pub const DEFAULT_RESTART_LIMIT: u32 = 8;

/// How isolated plugins are run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IsolationConfig {
    /// The executable that serves as the worker: run as `WORKER plugin-worker
    /// [--memory-limit BYTES] LIB`. `recap` itself (`std::env::current_exe()`).
    pub worker: PathBuf,
    /// The address-space limit of each worker (`RLIMIT_AS`), in bytes.
    pub memory_limit: Option<u64>,
    /// How many times a plugin's worker may fail (die, write garbage, overrun) and be
    /// replaced; at the next failure the plugin is disabled.
    pub restart_limit: u32,
}

impl IsolationConfig {
    pub fn new(worker: impl Into<PathBuf>) -> Self {
        Self {
            worker: worker.into(),
            memory_limit: None,
            restart_limit: DEFAULT_RESTART_LIMIT,
        }
    }
}

/// An isolated plugin: its library, its idle workers, its failures so far.
pub(crate) struct Isolated {
    library: PathBuf,
    config: IsolationConfig,
    idle: Mutex<Vec<WorkerProcess>>,
    failures: AtomicU32,
    pub(crate) info: LibraryInfo,
}

impl Isolated {
    /// Starts a first worker on `library` (canonical path) and reads what it loaded.
    pub(crate) fn start(library: &Path, config: &IsolationConfig) -> Result<Self, Problem> {
        let (worker, hello) = WorkerProcess::spawn(&config.worker, library, config.memory_limit)
            .map_err(Problem::Worker)?;
        let info = match (hello.library, hello.problem) {
            (_, Some(problem)) => return Err(Problem::Reported(problem)),
            (Some(info), None) => info,
            (None, None) => {
                return Err(Problem::Worker(
                    "the worker reported neither a library nor a problem".into(),
                ));
            }
        };
        Ok(Self {
            library: library.to_path_buf(),
            config: config.clone(),
            idle: Mutex::new(vec![worker]),
            failures: AtomicU32::new(0),
            info,
        })
    }

    fn failure(&self, event: WorkerEvent) -> CallError {
        let deaths = self.failures.fetch_add(1, Ordering::AcqRel) + 1;
        let limit = self.config.restart_limit;
        CallError::Worker(Box::new(WorkerFailure {
            event,
            at: None,
            then: if deaths > limit {
                Then::Disable { deaths, limit }
            } else {
                Then::Restart
            },
        }))
    }

    /// An idle worker, or a new one.
    pub(crate) fn checkout(&self) -> Result<WorkerProcess, CallError> {
        let deaths = self.failures.load(Ordering::Acquire);
        let limit = self.config.restart_limit;
        if deaths > limit {
            return Err(CallError::Worker(Box::new(WorkerFailure {
                event: WorkerEvent::Disabled { deaths, limit },
                at: None,
                then: Then::Nothing,
            })));
        }
        let idle = self
            .idle
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop();
        if let Some(worker) = idle {
            return Ok(worker);
        }
        match WorkerProcess::spawn(&self.config.worker, &self.library, self.config.memory_limit) {
            Ok((worker, hello)) if hello.library.as_ref() == Some(&self.info) => Ok(worker),
            Ok(_) => Err(self.failure(WorkerEvent::Unavailable {
                detail: "the new worker loaded the library differently than the first".into(),
            })),
            Err(detail) => Err(self.failure(WorkerEvent::Unavailable { detail })),
        }
    }

    /// Returns a worker that is still good to the pool.
    pub(crate) fn give_back(&self, worker: WorkerProcess) {
        if !worker.spent {
            self.idle
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .push(worker);
        }
    }

    /// One call on `worker`; on failure the worker is dead (drop it) and the failure is
    /// counted. The reply's bytes go to `read`.
    pub(crate) fn call<R>(
        &self,
        worker: &mut WorkerProcess,
        op: Op,
        handle: u64,
        payload: &[u8],
        read: impl FnOnce(&Response) -> Result<R, CallError>,
    ) -> Result<Result<R, CallError>, WorkerDown> {
        match worker.call(op, handle, payload) {
            Ok(response) => {
                let result = answer(&response, read);
                worker.recycle(response.payload);
                Ok(result)
            }
            Err(failure) => Err(WorkerDown(self.failure(match failure {
                Failure::TimedOut => WorkerEvent::TimedOut {
                    limit: crate::time_limit::limit_for_message(),
                },
                Failure::Died { how, stderr } => WorkerEvent::Died {
                    how,
                    stderr,
                    memory_limit: self.config.memory_limit,
                },
                Failure::Garbage(detail) => WorkerEvent::Garbage { detail },
            }))),
        }
    }

    /// A call that needs no session: on a borrowed worker, returned afterwards.
    pub(crate) fn one_shot<R>(
        &self,
        op: Op,
        payload: &[u8],
        read: impl FnOnce(i32, &[u8]) -> Result<R, CallError>,
    ) -> Result<R, CallError> {
        let mut worker = self.checkout()?;
        match self.call(&mut worker, op, 0, payload, |r| plugin_answer(r, read)) {
            Ok(result) => {
                self.give_back(worker);
                result
            }
            Err(WorkerDown(e)) => Err(e),
        }
    }
}

/// The worker failed during a call: it is dead, and the error says how.
pub(crate) struct WorkerDown(pub CallError);

/// The reply to a request, whatever its kind.
fn answer<R>(
    response: &Response,
    read: impl FnOnce(&Response) -> Result<R, CallError>,
) -> Result<R, CallError> {
    match response.kind {
        Kind::Fault => Err(CallError::invalid(
            0,
            format!(
                "the worker refused the request: {}",
                String::from_utf8_lossy(&response.payload)
            ),
        )),
        _ => read(response),
    }
}

/// The plugin's status and answer bytes, or the cap's error.
pub(crate) fn plugin_answer<R>(
    response: &Response,
    read: impl FnOnce(i32, &[u8]) -> Result<R, CallError>,
) -> Result<R, CallError> {
    match response.kind {
        Kind::Oversize => Err(CallError::TooLarge {
            status: response.status,
            len: usize::try_from(response.value).unwrap_or(usize::MAX),
        }),
        _ => read(response.status, &response.payload),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn a_worker_that_is_not_one_is_refused_with_what_it_is() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let fake = dir.path().join("fake-worker");
        std::fs::write(
            &fake,
            "#!/bin/sh\necho 'I am not a recap plugin worker, only a script'\nsleep 1\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
        let config = IsolationConfig::new(&fake);
        let problem = Isolated::start(Path::new("/nonexistent/libx.so"), &config)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            problem.contains("did not answer as a recap plugin worker"),
            "{problem}"
        );

        std::fs::write(&fake, "#!/bin/sh\nexit 3\n").unwrap();
        let problem = Isolated::start(Path::new("/nonexistent/libx.so"), &config)
            .err()
            .expect("refused")
            .to_string();
        assert!(problem.contains("exited with status 3"), "{problem}");

        let config = IsolationConfig::new(dir.path().join("missing"));
        let problem = Isolated::start(Path::new("/nonexistent/libx.so"), &config)
            .err()
            .expect("refused")
            .to_string();
        assert!(problem.contains("cannot start the worker"), "{problem}");
    }
}
