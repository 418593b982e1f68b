//! `recap plugin-worker LIB`: the worker process of a plugin run with
//! `--plugin-isolation process`. Not for people: recap starts it and speaks to it in
//! frames on its stdin and stdout (see `recap_plugin_host::serve_worker`).

use anyhow::Result;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// The plugin library.
    #[arg(value_name = "LIB")]
    library: PathBuf,
    /// The worker's address-space limit, in bytes.
    #[arg(long, value_name = "BYTES")]
    memory_limit: Option<u64>,
}

pub fn run(args: Args) -> Result<ExitCode> {
    Ok(ExitCode::from(recap_plugin_host::serve_worker(
        &args.library,
        args.memory_limit,
    )))
}
