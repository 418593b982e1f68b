//! recap's Python exceptions live in `recap_replay.errors` (pure Python, so they can be
//! subclassed, pickled and documented like any other); Rust builds them from there.

use pyo3::prelude::*;

/// An instance of `recap_replay.errors.<class>` called with `args`, as a `PyErr`.
pub fn error<'py, A>(py: Python<'py>, class: &str, args: A) -> PyErr
where
    A: pyo3::call::PyCallArgs<'py>,
{
    let made = py
        .import("recap_replay.errors")
        .and_then(|m| m.getattr(class))
        .and_then(|c| c.call1(args));
    match made {
        Ok(e) => PyErr::from_value(e),
        Err(e) => e,
    }
}

/// A `recap_replay.errors.RecapError` with `message`.
pub fn recap_error(py: Python<'_>, message: impl Into<String>) -> PyErr {
    error(py, "RecapError", (message.into(),))
}

/// A corpus line (or file) that did not validate: `CorpusError(message, file, line,
/// field, session)`.
pub fn corpus_error(py: Python<'_>, r: &recap_core::corpus::RejectedSession) -> PyErr {
    error(
        py,
        "CorpusError",
        (
            r.to_string(),
            r.file.display().to_string(),
            r.line,
            r.field.clone(),
            r.session_id.clone(),
        ),
    )
}
