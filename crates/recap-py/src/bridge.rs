//! Strategies written in Python inside the harness: a Python object with `name`,
//! `forms` and `render(session, k)` (and optionally `open(session)` returning an object
//! with `next(k)`) run as a [`Strategy`] of recap's contract, beside built-ins and
//! plugins.
//!
//! Recap cannot see into Python code, so such a strategy is opaque (SPEC 7.6: every
//! call rendered through two replays and compared). A worker holds the GIL for a
//! session's pass of the strategy (`Strategy::around_session`), its checks included,
//! and Python hands it to another worker that asks at its own switch interval. Taken
//! at every call instead, it passes between two workers thousands of times a second,
//! each trade a sleep and a wake-up that slows the other worker's Rust renders by a
//! quarter (docs/python.md). The Rust strategies never take it and go on meanwhile.
//! Each answer is read only where it differs from the replay's last one
//! ([`prompt_from_py`]). A call runs under the run's one
//! time limit (`recap_plugin_host::ForeignLimit`). Whatever goes wrong in a call — an
//! exception, a value that is not a list of messages, a malformed message — is a render
//! error of that call; a `KeyboardInterrupt` (or any other `BaseException` that is not
//! an `Exception`) stops the run instead ([`Interrupt`]).

use crate::messages::prompt_from_py;
use crate::session::PySession;
use pyo3::prelude::*;
use pyo3::types::PyString;
use recap_core::{Form, PromptDelta, RenderError, Replay, Session, Strategy};
use recap_plugin_host::{ForeignCalls, ForeignLimit, TimedOut};
use std::cell::RefCell;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

/// A run's stop: set by Ctrl-C or by a Python strategy that raised a `KeyboardInterrupt`
/// (kept, to be raised by `run` once the sessions in flight are done).
#[derive(Debug, Default)]
pub struct Interrupt {
    stopped: AtomicBool,
    raised: Mutex<Option<PyErr>>,
}

impl Interrupt {
    pub fn is_set(&self) -> bool {
        self.stopped.load(Ordering::Relaxed)
    }

    /// Stops the run; the first error given is the one `run` raises.
    pub fn stop(&self, error: Option<PyErr>) {
        self.stopped.store(true, Ordering::Relaxed);
        let mut raised = self.raised.lock().unwrap_or_else(PoisonError::into_inner);
        if raised.is_none() {
            *raised = error;
        }
    }

    /// What stopped the run, if it was an exception.
    pub fn take(&self) -> Option<PyErr> {
        self.raised
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// How often a run looks for Ctrl-C (KeyboardInterrupt) between sessions.
const SIGNAL_CHECK: Duration = Duration::from_millis(100);

/// Ctrl-C seen from the engine's progress callback: Python's signal handlers run only
/// when something asks, and asking takes the GIL, so at most every [`SIGNAL_CHECK`].
pub struct SignalWatch {
    checked: Instant,
}

impl Default for SignalWatch {
    fn default() -> Self {
        SignalWatch {
            checked: Instant::now(),
        }
    }
}

impl SignalWatch {
    /// Stops `interrupt` with the `KeyboardInterrupt` (or other exception) a signal
    /// handler raised, if it is time to look and the run is not stopped already.
    pub fn check(&mut self, interrupt: &Interrupt) {
        if self.checked.elapsed() >= SIGNAL_CHECK && !interrupt.is_set() {
            self.checked = Instant::now();
            if let Err(e) = Python::attach(|py| py.check_signals()) {
                interrupt.stop(Some(e));
            }
        }
    }
}

/// A strategy object, as the harness runs it.
pub struct PyStrategy {
    shared: Arc<Shared>,
    forms: Vec<Form>,
    limit: ForeignLimit,
}

/// What every replay of one strategy reads.
struct Shared {
    object: Py<PyAny>,
    name: String,
    has_open: bool,
    interrupt: Arc<Interrupt>,
}

fn strategy_error(py: Python<'_>, message: String) -> PyErr {
    crate::errors::error(py, "StrategyError", (message,))
}

impl PyStrategy {
    /// Reads `object`'s `name`, `forms` and whether it has `open` (the Python layer has
    /// checked it is a strategy; anything still wrong is a `StrategyError`).
    pub fn new(object: &Bound<'_, PyAny>, interrupt: Arc<Interrupt>) -> PyResult<Self> {
        let py = object.py();
        let name: String = object
            .getattr("name")
            .and_then(|n| n.extract())
            .map_err(|e| strategy_error(py, format!("a strategy's `name`: {e}")))?;
        let forms: Vec<String> = object
            .getattr("forms")
            .and_then(|f| f.try_iter()?.map(|x| x?.extract()).collect())
            .map_err(|e| strategy_error(py, format!("{name}: `forms`: {e}")))?;
        let forms = forms
            .iter()
            .map(|f| match f.as_str() {
                "ptc" => Ok(Form::Ptc),
                "chat" => Ok(Form::Chat),
                other => Err(strategy_error(
                    py,
                    format!("{name}: `forms` has {other:?}; the forms are \"ptc\" and \"chat\""),
                )),
            })
            .collect::<PyResult<Vec<Form>>>()?;
        let has_open = !object.getattr_opt("open")?.is_none_or(|o| o.is_none());
        Ok(PyStrategy {
            shared: Arc::new(Shared {
                object: object.clone().unbind(),
                name,
                has_open,
                interrupt,
            }),
            forms,
            limit: ForeignLimit::new(),
        })
    }

    fn replay(&self, session: SessionSlot) -> Box<dyn Replay> {
        Box::new(PyReplay {
            calls: self.limit.calls(),
            state: ReplayState {
                shared: Arc::clone(&self.shared),
                session,
                replay: None,
                last: Vec::new(),
            },
        })
    }
}

impl Strategy for PyStrategy {
    fn spec(&self) -> String {
        self.shared.name.clone()
    }

    fn open(&self) -> Box<dyn Replay> {
        self.replay(SessionSlot::default())
    }

    /// The two replays of the determinism check share the session object given to
    /// Python (one copy of the recorded session), never a Python replay or a prompt.
    fn open_pair(&self) -> [Box<dyn Replay>; 2] {
        let slot = SessionSlot::default();
        [self.replay(Rc::clone(&slot)), self.replay(slot)]
    }

    fn forms(&self) -> Vec<Form> {
        self.forms.clone()
    }

    fn opaque(&self) -> bool {
        true
    }

    /// The session's calls and their checks with the GIL held: see the module's notes.
    fn around_session(&self, pass: &mut dyn FnMut()) {
        Python::attach(|_| pass())
    }
}

/// The session object a replay gives Python, made at its first call (and again should
/// the session passed grow), shared by the two replays of a pair.
type SessionSlot = Rc<RefCell<Option<(Py<PySession>, usize)>>>;

/// One session replayed through a Python strategy.
struct PyReplay {
    calls: ForeignCalls,
    state: ReplayState,
}

/// What a replay's calls read and keep, beside their time limit.
struct ReplayState {
    shared: Arc<Shared>,
    session: SessionSlot,
    /// What `open(session)` returned, for strategies with `open`.
    replay: Option<Py<PyAny>>,
    /// The prompt this replay's last call returned, read: the next answer is read
    /// against it ([`prompt_from_py`]). Empty after a call that failed.
    last: Vec<recap_core::Message>,
}

impl Replay for PyReplay {
    fn call(&mut self, session: &Session, k: usize, held: usize) -> recap_core::Answer {
        if self.state.shared.interrupt.is_set() {
            return Err(RenderError::new("interrupted", "the run was interrupted"));
        }
        let state = &mut self.state;
        let answer = self.calls.call(k, || {
            Python::attach(|py| state.render(py, session, k, held))
        });
        match answer {
            Ok(answer) => answer,
            Err(TimedOut { limit, earlier }) => Err(RenderError::new(
                "timeout",
                if earlier {
                    format!(
                        "the strategy is disabled: an earlier call did not return within the {limit:?} time limit"
                    )
                } else {
                    format!(
                        "the call did not return within the {limit:?} time limit (plugin_timeout); \
                         it was abandoned and the strategy is disabled for the rest of the run"
                    )
                },
            )),
        }
    }
}

impl ReplayState {
    /// The Python prompt of call `k`, read into recap's messages: as a change to the
    /// previous prompt when the harness holds it (`held` messages long), whole when not.
    fn render(
        &mut self,
        py: Python<'_>,
        session: &Session,
        k: usize,
        held: usize,
    ) -> Result<PromptDelta, RenderError> {
        let answered = self.answer(py, session, k);
        let last = std::mem::take(&mut self.last);
        let (same, read) = prompt_from_py(&answered?, &last).map_err(|bad| {
            let at = if bad.path.is_empty() {
                String::new()
            } else {
                format!("{}: ", bad.path)
            };
            RenderError::new("invalid_response", format!("{at}{}", bad.message))
        })?;
        let held_last = held == last.len();
        self.last = last;
        self.last.truncate(same);
        self.last.extend(read.iter().cloned());
        Ok(if held_last {
            PromptDelta {
                kept: same,
                tail: read,
            }
        } else {
            PromptDelta::whole(self.last.clone())
        })
    }

    /// What the strategy's Python code returns for call `k`.
    fn answer<'py>(
        &mut self,
        py: Python<'py>,
        session: &Session,
        k: usize,
    ) -> Result<Bound<'py, PyAny>, RenderError> {
        let session = self
            .session_object(py, session)
            .map_err(|e| self.raised(py, e))?;
        let object = self.shared.object.bind(py);
        let value = if self.shared.has_open {
            let replay = match &self.replay {
                Some(r) => r.bind(py).clone(),
                None => {
                    let r = object
                        .call_method1("open", (session,))
                        .map_err(|e| self.raised(py, e))?;
                    self.replay = Some(r.clone().unbind());
                    r
                }
            };
            replay.call_method1("next", (k,))
        } else {
            object.call_method1("render", (session, k))
        };
        value.map_err(|e| self.raised(py, e))
    }

    /// The read-only session object for `session`.
    fn session_object<'py>(
        &self,
        py: Python<'py>,
        session: &Session,
    ) -> PyResult<Bound<'py, PySession>> {
        let mut slot = self.session.borrow_mut();
        let turns = session.turn_count();
        if let Some((object, held)) = slot.as_ref()
            && *held == turns
        {
            return Ok(object.bind(py).clone());
        }
        let object = Bound::new(
            py,
            PySession {
                session: Arc::new(session.clone()),
            },
        )?;
        *slot = Some((object.clone().unbind(), turns));
        Ok(object)
    }

    /// The render error of an exception raised in Python: its last line. A
    /// `BaseException` that is not an `Exception` (`KeyboardInterrupt`, `SystemExit`)
    /// stops the run and is raised by `run` when it ends.
    fn raised(&self, py: Python<'_>, error: PyErr) -> RenderError {
        let line = last_line(py, &error);
        if !error.is_instance_of::<pyo3::exceptions::PyException>(py) {
            self.shared.interrupt.stop(Some(error));
            return RenderError::new("interrupted", line);
        }
        RenderError::new("exception", line)
    }
}

/// The last line of `traceback.format_exception_only(error)`: `KeyError: 'x'`.
fn last_line(py: Python<'_>, error: &PyErr) -> String {
    let value = error.value(py);
    let formatted = py
        .import("traceback")
        .and_then(|t| t.call_method1("format_exception_only", (value.get_type(), value)))
        .and_then(|lines| lines.get_item(-1))
        .and_then(|line| line.cast_into::<PyString>().map_err(PyErr::from))
        .map(|line| line.to_string().trim().to_string());
    formatted.unwrap_or_else(|_| {
        value
            .get_type()
            .name()
            .map_or_else(|_| "an exception".to_string(), |n| n.to_string())
    })
}
