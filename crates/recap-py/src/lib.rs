//! The `recap_replay._native` extension module: recap's engine for the `recap_replay`
//! Python package (python/). The Python layer shapes arguments and results; everything
//! measured is measured here, by the same code as `recap run`.

mod arrow;
mod bridge;
mod errors;
mod messages;
mod report;
mod run;
mod session;
mod shard;

use crate::errors::recap_error;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use recap_core::RenderRequest;
use recap_harness::{Backend, Encoding, Tokenizer};
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// The prompt `strategy` (a spec string) renders for the call after `k` turns of
/// session `session_id`, as the JSON text `recap render --format json` prints.
#[pyfunction]
#[pyo3(signature = (corpus, session_id, k, strategy, tokenizer, plugins))]
fn render(
    py: Python<'_>,
    corpus: PathBuf,
    session_id: &str,
    k: usize,
    strategy: &str,
    tokenizer: &str,
    plugins: Vec<PathBuf>,
) -> PyResult<String> {
    let (mut registry, _) = run::registry(py, &plugins)?;
    let encoding: Encoding = tokenizer
        .parse()
        .map_err(|e| recap_error(py, format!("tokenizer {tokenizer:?}: {e}")))?;
    registry.set_counter(Arc::new(Tokenizer::get(encoding, Backend::Fast)));
    let strategy = registry
        .build(strategy)
        .map_err(|e| recap_error(py, format!("strategy {strategy:?}: {e}")))?;
    let session = session::find_session(py, &corpus, session_id)?;
    if let Some(why) = recap_core::strategy::not_applicable(strategy.as_ref(), &session) {
        return Err(recap_error(py, why.to_string()));
    }
    RenderRequest::for_call(&session, k)
        .map_err(|e| recap_error(py, format!("session {session_id:?}, k = {k}: {e}")))?;
    let messages = recap_core::render_call(strategy.as_ref(), &session, k).map_err(|e| {
        crate::errors::error(
            py,
            "RenderError",
            (
                e.to_string(),
                strategy.spec(),
                session_id.to_string(),
                k,
                "",
            ),
        )
    })?;
    Ok(session::messages_json(&messages))
}

/// The session `session_id` of `corpus`.
#[pyfunction]
fn find_session(py: Python<'_>, corpus: PathBuf, session_id: &str) -> PyResult<session::PySession> {
    Ok(session::PySession {
        session: Arc::new(session::find_session(py, &corpus, session_id)?),
    })
}

/// Checks a prompt returned by a Python strategy and returns it as recap sends it
/// (the JSON text of its OpenAI-shape messages); a problem raises `ValueError(path,
/// message)`.
#[pyfunction]
fn check_prompt(value: &Bound<'_, PyAny>) -> PyResult<String> {
    match messages::messages_from_py(value) {
        Ok(m) => Ok(session::messages_json(&m)),
        Err(bad) => Err(pyo3::exceptions::PyValueError::new_err((
            bad.path,
            bad.message,
        ))),
    }
}

/// Each message's tokens by recap's prompt formula (SPEC 11.2) with `tokenizer`:
/// `3 + tokens(role) + tokens(content) + Σ_calls (3 + tokens(name) + tokens(arguments))`;
/// a prompt's total is 3 plus their sum. The messages are checked one by one (a tool
/// result need not follow its call here).
#[pyfunction]
fn message_tokens(
    py: Python<'_>,
    messages: &Bound<'_, PyAny>,
    tokenizer: &str,
) -> PyResult<Vec<u64>> {
    let messages = messages::loose_messages_from_py(messages)
        .map_err(|bad| pyo3::exceptions::PyValueError::new_err((bad.path, bad.message)))?;
    let encoding: Encoding = tokenizer
        .parse()
        .map_err(|e| recap_error(py, format!("tokenizer {tokenizer:?}: {e}")))?;
    let counter = Tokenizer::get(encoding, Backend::Fast);
    Ok(py.detach(|| {
        messages
            .iter()
            .map(|m| recap_core::tokens::message_tokens(&counter, m))
            .collect()
    }))
}

/// Every registered strategy (built-ins and `plugins`): name, origin, summary, forms
/// and options with defaults.
#[pyfunction]
#[pyo3(signature = (plugins))]
fn strategies<'py>(py: Python<'py>, plugins: Vec<PathBuf>) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let (mut registry, _) = run::registry(py, &plugins)?;
    // Building a default instance tells its forms; budgets need a tokenizer to build.
    registry.set_counter(Arc::new(Tokenizer::get(Encoding::O200kBase, Backend::Fast)));
    let mut out = Vec::new();
    for info in registry.infos() {
        let d = PyDict::new(py);
        d.set_item("name", &info.name)?;
        d.set_item("origin", &info.origin)?;
        d.set_item("summary", &info.summary)?;
        let forms: Vec<&str> = registry
            .build(&info.name)
            .map(|s| s.forms().iter().map(|f| f.as_str()).collect())
            .unwrap_or_default();
        d.set_item("forms", forms)?;
        let options = PyDict::new(py);
        for o in &info.options {
            options.set_item(&o.key, (&o.default, &o.help))?;
        }
        d.set_item("options", options)?;
        out.push(d);
    }
    Ok(out)
}

/// Imports agent logs into a corpus written atomically to `output`; returns the
/// summary (counts and every problem).
#[pyfunction]
#[pyo3(signature = (kind, paths, output, force))]
fn import_logs<'py>(
    py: Python<'py>,
    kind: &str,
    paths: Vec<PathBuf>,
    output: PathBuf,
    force: bool,
) -> PyResult<Bound<'py, PyDict>> {
    let parsed: recap_import::Kind = kind.parse().map_err(|e: String| recap_error(py, e))?;
    if !force && std::fs::symlink_metadata(&output).is_ok() {
        return Err(recap_error(
            py,
            format!(
                "{} already exists; refusing to replace it (force=True overwrites it)",
                output.display()
            ),
        ));
    }
    let options = recap_import::Options::default();
    let import = py
        .detach(|| recap_import::import_with(parsed, &paths, &options))
        .map_err(|e| recap_error(py, e.to_string()))?;
    if import.sessions.is_empty() {
        return Err(recap_error(
            py,
            format!(
                "the {kind} importer found no session in {} file{}, so nothing was written",
                import.files,
                if import.files == 1 { "" } else { "s" }
            ),
        ));
    }
    let dir = match output.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let write = || -> std::io::Result<()> {
        let mut tmp = tempfile::NamedTempFile::new_in(&dir)?;
        {
            let mut w = std::io::BufWriter::new(tmp.as_file_mut());
            import.write_jsonl(&mut w)?;
            w.flush()?;
        }
        tmp.persist(&output).map_err(|e| e.error)?;
        Ok(())
    };
    write().map_err(|e| recap_error(py, format!("writing {}: {e}", output.display())))?;
    let d = PyDict::new(py);
    d.set_item("sessions", import.sessions.len())?;
    d.set_item("turns", import.turns())?;
    d.set_item("failed_turns", import.failed_turns())?;
    d.set_item("tool_calls", import.tool_calls())?;
    d.set_item("files", import.files)?;
    let problems: Vec<String> = import.problems.iter().map(|p| p.to_string()).collect();
    d.set_item("problems", problems)?;
    Ok(d)
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("GIT_COMMIT", env!("RECAP_GIT_COMMIT"))?;
    m.add_function(wrap_pyfunction!(run::run, m)?)?;
    m.add_function(wrap_pyfunction!(shard::run_shard, m)?)?;
    m.add_function(wrap_pyfunction!(shard::merge_parts, m)?)?;
    m.add_function(wrap_pyfunction!(render, m)?)?;
    m.add_function(wrap_pyfunction!(find_session, m)?)?;
    m.add_function(wrap_pyfunction!(check_prompt, m)?)?;
    m.add_function(wrap_pyfunction!(strategies, m)?)?;
    m.add_function(wrap_pyfunction!(message_tokens, m)?)?;
    m.add_function(wrap_pyfunction!(import_logs, m)?)?;
    m.add_class::<session::PySession>()?;
    m.add_class::<session::SessionReader>()?;
    m.add_class::<report::PyReport>()?;
    m.add_class::<arrow::ArrowTable>()?;
    Ok(())
}
