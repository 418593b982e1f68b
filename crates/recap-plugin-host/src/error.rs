//! Load-time errors: always the file, then what was wrong with it.

use crate::call::CallError;
use std::path::PathBuf;

/// A plugin library that could not be loaded, validated, self-tested or registered.
#[derive(Debug, thiserror::Error)]
#[error("plugin {}: {problem}", path.display())]
pub struct LoadError {
    pub path: PathBuf,
    pub problem: Problem,
}

impl LoadError {
    pub fn new(path: impl Into<PathBuf>, problem: Problem) -> Self {
        Self {
            path: path.into(),
            problem,
        }
    }
}

/// What was wrong with a plugin library.
#[derive(Debug, thiserror::Error)]
pub enum Problem {
    #[error("cannot read the file: {0}")]
    Io(#[source] std::io::Error),
    #[error("not a loadable shared library: {0}")]
    NotALibrary(String),
    #[error("missing symbol `{symbol}`: not a recap strategy plugin ({detail})")]
    MissingSymbol {
        symbol: &'static str,
        detail: String,
    },
    #[error(
        "wrong ABI version: the plugin speaks recap strategy ABI {plugin}, this recap supports ABI {host}"
    )]
    AbiVersion { plugin: u32, host: u32 },
    #[error("invalid descriptor: {0}")]
    Descriptor(String),
    #[error("invalid strategy name: {0}")]
    Name(String),
    #[error("duplicate strategy name {name:?}: already provided by {other}")]
    Duplicate { name: String, other: String },
    // The call errors are not `#[source]`s: their text is already in the message, and
    // anyhow's `{:#}` would print it twice.
    #[error("describe failed: {0}")]
    Describe(CallError),
    #[error("self-test failed at {step}: {error}")]
    SelfTest { step: String, error: CallError },
    /// Process isolation: the worker process could not load the library for the host.
    #[error("the plugin's worker process failed: {0}")]
    Worker(String),
    /// Process isolation: the worker's load error, worded as an in-process load's.
    #[error("{0}")]
    Reported(String),
}

/// A libloading error with its source chain: libloading 0.9's `Display` alone is
/// terse ("dlopen failed"); the `dlerror` text is in `source()`.
pub(crate) fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}
