//! Sessions as Python sees them: read-only, and lazy — a turn's messages are converted
//! when asked for, never the whole session per call.

use crate::errors::{corpus_error, recap_error};
use pyo3::exceptions::{PyIndexError, PyStopIteration};
use pyo3::prelude::*;
use pyo3::types::PyList;
use recap_core::corpus::{Lookup, RejectedSession};
use recap_core::{CorpusReader, Form, Message, Session};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

/// `json.loads(text)`: the one way Rust values become Python ones here, so every
/// message reaches Python exactly as `recap render --format json` prints it.
pub fn json_to_py<'py>(py: Python<'py>, text: &str) -> PyResult<Bound<'py, PyAny>> {
    py.import("json")?.call_method1("loads", (text,))
}

/// Messages in the OpenAI chat-completions shape, as JSON text.
pub fn messages_json(messages: &[Message]) -> String {
    let wire: Vec<_> = messages.iter().map(Message::openai).collect();
    // Strings and options only: always serialises.
    serde_json::to_string(&wire).unwrap_or_default()
}

/// A validated recorded session (read-only).
#[pyclass(module = "recap_replay._native", name = "Session", frozen)]
pub struct PySession {
    pub session: Arc<Session>,
}

impl PySession {
    /// The messages turn `i` (0-based) adds to the full history.
    fn turn_messages(&self, i: usize) -> Vec<Message> {
        let s = &self.session;
        let mut out = Vec::new();
        match s.form {
            Form::Ptc => recap_history::push_pairs(
                &mut out,
                std::slice::from_ref(&s.turns[i]),
                i,
                s.max_turns,
            ),
            Form::Chat => out.extend(s.chat_turns[i].messages()),
        }
        out
    }

    fn opening_messages(&self) -> [Message; 2] {
        [
            Message::system(self.session.system_prompt.as_str()),
            Message::user(self.session.mission.as_str()),
        ]
    }

    fn index(&self, i: isize) -> PyResult<usize> {
        let n = self.session.turn_count() as isize;
        let at = if i < 0 { i + n } else { i };
        if (0..n).contains(&at) {
            Ok(at as usize)
        } else {
            Err(PyIndexError::new_err(format!(
                "turn index {i} out of range: session {:?} has {n} turns",
                self.session.id
            )))
        }
    }
}

#[pymethods]
impl PySession {
    #[getter]
    fn id(&self) -> &str {
        &self.session.id
    }
    #[getter]
    fn mission(&self) -> &str {
        &self.session.mission
    }
    #[getter]
    fn system_prompt(&self) -> &str {
        &self.session.system_prompt
    }
    /// The turn budget, `None` when the log recorded none.
    #[getter]
    fn max_turns(&self) -> Option<u32> {
        self.session.budget()
    }
    /// `"ptc"` or `"chat"`.
    #[getter]
    fn form(&self) -> &'static str {
        self.session.form.as_str()
    }
    /// The session's `meta` object (a new dict at each access).
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = serde_json::to_string(&self.session.meta).unwrap_or_else(|_| "{}".into());
        json_to_py(py, &text)
    }
    fn __len__(&self) -> usize {
        self.session.turn_count()
    }
    /// The calls `run` replays, one per recorded turn: call `k` (in `range(calls)`)
    /// is the request after `k` turns, the one that produced turn `k + 1`.
    #[getter]
    fn calls(&self) -> usize {
        recap_harness::calls::calls(&self.session).len()
    }
    fn __repr__(&self) -> String {
        format!(
            "<Session {:?}: {} form, {} turns>",
            self.session.id,
            self.session.form.as_str(),
            self.session.turn_count()
        )
    }
    /// `[system, user(mission)]`: how every full-history prompt starts.
    fn opening<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        json_to_py(py, &messages_json(&self.opening_messages()))
    }
    /// The messages turn `i` adds to the history (0-based; negative counts from the
    /// end): the response and what followed it, as full-history sends them.
    fn turn<'py>(&self, py: Python<'py>, i: isize) -> PyResult<Bound<'py, PyAny>> {
        let i = self.index(i)?;
        json_to_py(py, &messages_json(&self.turn_messages(i)))
    }
    /// Whether turn `i` succeeded.
    fn turn_succeeded(&self, i: isize) -> PyResult<bool> {
        let i = self.index(i)?;
        Ok(match self.session.form {
            Form::Ptc => self.session.turns[i].success,
            Form::Chat => self.session.chat_turns[i].success,
        })
    }
    /// The full-history prompt of the call after the first `k` turns (the opening, then
    /// every turn's messages).
    fn messages<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyAny>> {
        let n = self.session.turn_count();
        if k > n {
            return Err(PyIndexError::new_err(format!(
                "k = {k}: session {:?} has {n} turns",
                self.session.id
            )));
        }
        let mut all: Vec<Message> = self.opening_messages().into();
        for i in 0..k {
            all.extend(self.turn_messages(i));
        }
        json_to_py(py, &messages_json(&all))
    }
}

/// Sessions of one corpus file, one per `next()`. A rejected line raises `CorpusError`
/// (file, line, field), or with `skip_invalid` is kept in `rejected`; either way the
/// next `next()` goes on after it.
#[pyclass(module = "recap_replay._native", name = "SessionReader")]
pub struct SessionReader {
    reader: Mutex<CorpusReader<Box<dyn std::io::BufRead + Send>>>,
    skip_invalid: bool,
    rejected: Vec<RejectedSession>,
}

#[pymethods]
impl SessionReader {
    #[new]
    #[pyo3(signature = (path, skip_invalid = false))]
    fn new(py: Python<'_>, path: PathBuf, skip_invalid: bool) -> PyResult<Self> {
        let file = recap_core::corpus::open_file(&path).map_err(|r| corpus_error(py, &r))?;
        let buffered: Box<dyn std::io::BufRead + Send> =
            Box::new(std::io::BufReader::with_capacity(1 << 16, file));
        Ok(SessionReader {
            reader: Mutex::new(CorpusReader::new(&path, buffered)),
            skip_invalid,
            rejected: Vec::new(),
        })
    }

    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__(&mut self, py: Python<'_>) -> PyResult<PySession> {
        loop {
            let entry = self
                .reader
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .next();
            match entry {
                None => return Err(PyStopIteration::new_err(())),
                Some(e) => match e.session {
                    Ok(session) => {
                        return Ok(PySession {
                            session: Arc::new(session),
                        });
                    }
                    Err(r) if self.skip_invalid => self.rejected.push(r),
                    Err(r) => return Err(corpus_error(py, &r)),
                },
            }
        }
    }

    /// The lines skipped so far (with `skip_invalid`), as `CorpusError`s.
    #[getter]
    fn rejected<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let errors: Vec<Bound<'py, PyAny>> = self
            .rejected
            .iter()
            .map(|r| corpus_error(py, r).into_value(py).into_bound(py).into_any())
            .collect();
        PyList::new(py, errors)
    }
}

/// The session `id` of `corpus`; a clear error naming what the corpus holds when it is
/// not there, or the reason when its line was rejected.
pub fn find_session(py: Python<'_>, corpus: &std::path::Path, id: &str) -> PyResult<Session> {
    let reader = CorpusReader::open(corpus).map_err(|r| corpus_error(py, &r))?;
    let (ids, total) = match recap_core::corpus::find_session(reader, id) {
        Lookup::Found(session) => return Ok(session),
        Lookup::Invalid(r) => return Err(corpus_error(py, &r)),
        Lookup::Missing { ids, total } => (ids, total),
    };
    let more = if total > ids.len() as u64 {
        format!(", … ({total} in all)")
    } else {
        String::new()
    };
    Err(recap_error(
        py,
        format!(
            "{}: no session {id:?}; available: {}{more}",
            corpus.display(),
            if ids.is_empty() {
                "none".to_string()
            } else {
                ids.join(", ")
            }
        ),
    ))
}
