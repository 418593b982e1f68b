//! One module per subcommand. Each exposes `Args` (clap) and
//! `run(Args) -> anyhow::Result<ExitCode>`: `Ok` with exit 1 for "ran, found problems",
//! `Err` (exit 2) for "could not run".

pub mod config;
pub mod conformance;
pub mod diff;
pub mod eval;
pub mod import;
pub mod init;
pub mod inspect;
pub mod merge;
pub mod plugin_worker;
pub mod plugins;
pub mod problems;
pub mod provenance;
pub mod render;
pub mod run;
pub mod shard;
pub mod strategies;
pub mod validate;

/// Writes one line to stderr. Unlike `eprintln!`, a closed stderr (`recap … 2>&1 | head
/// -1`) is not a panic: there is nobody left to tell.
pub fn say(line: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}

/// `eprintln!` that survives a closed stderr (see [`say`]).
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::cmd::say(format_args!($($arg)*))
    };
}

/// Whether an error is a write to a pipe whose reader has gone (`recap … | head`): the
/// reader asked for no more, so recap stops quietly, as other Unix tools do.
pub fn is_closed_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .map(std::io::Error::kind)
            .or_else(|| {
                cause
                    .downcast_ref::<serde_json::Error>()
                    .and_then(serde_json::Error::io_error_kind)
            })
            == Some(std::io::ErrorKind::BrokenPipe)
    })
}
