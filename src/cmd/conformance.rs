//! `recap conformance <cases.json>`: runs golden cases (the format of
//! `../shared/conformance/ptc_runner_cases.json`), prints each failure with expected vs
//! actual, and ends with `N passed, M failed, K skipped`; exit 1 if any failed.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Golden cases: a JSON array of {name, fn, input, expected, binding?}.
    cases: PathBuf,
    /// Also print a line for every passed and skipped case.
    #[arg(long, short)]
    verbose: bool,
}

pub fn run(args: Args) -> Result<ExitCode> {
    let cases = recap_conformance::load(&args.cases).context("cannot load golden cases")?;
    let report = recap_conformance::run(&cases);
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    for result in &report.results {
        let failed = matches!(result.outcome, recap_conformance::Outcome::Failed(_));
        if failed || args.verbose {
            writeln!(out, "{result}")?;
        }
    }
    writeln!(out, "{}", report.summary_line())?;
    Ok(if report.failed() > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
