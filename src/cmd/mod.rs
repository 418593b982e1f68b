//! One module per subcommand. Each exposes `Args` (clap) and
//! `run(Args) -> anyhow::Result<ExitCode>`: `Ok` with exit 1 for "ran, found problems",
//! `Err` (exit 2) for "could not run".

pub mod conformance;
pub mod import;
pub mod inspect;
pub mod plugins;
pub mod render;
pub mod run;
pub mod strategies;
pub mod validate;
