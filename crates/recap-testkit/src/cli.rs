//! Running the built `recap` binary from the root package's integration tests.
//!
//! Only those tests know where cargo put the binary (`CARGO_BIN_EXE_recap` is set when
//! they are compiled), so [`recap!`](crate::recap) and
//! [`recap_command!`](crate::recap_command) expand to code that reads it there.

use serde_json::Value as Json;
use std::process::Command;

/// How a run of `recap` ended and what it printed.
#[derive(Debug)]
pub struct Run {
    /// The exit code; -1 when a signal ended the process.
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Run {
    /// stdout as JSON (a `--format json` report); panics with the exit code and stderr
    /// when it is not.
    pub fn json(&self) -> Json {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| {
            panic!(
                "stdout is not JSON ({e}); exit {}\nstderr: {}",
                self.code, self.stderr
            )
        })
    }
}

/// Runs `cmd` to its end and keeps what it printed (as UTF-8, lossily).
pub fn run(cmd: &mut Command) -> Run {
    let out = cmd.output().expect("run recap");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// `bin ARGS`, run to its end.
pub fn run_args(bin: &str, args: &[&str]) -> Run {
    run(Command::new(bin).args(args))
}

/// `recap ARGS` (a `&[&str]`), run to its end, as a [`Run`](crate::cli::Run).
#[macro_export]
macro_rules! recap {
    ($args:expr) => {
        $crate::cli::run_args(env!("CARGO_BIN_EXE_recap"), $args)
    };
}

/// A [`Command`](std::process::Command) of the `recap` binary, for tests that set more
/// than its arguments (a working directory, piped output, a kill).
#[macro_export]
macro_rules! recap_command {
    () => {
        ::std::process::Command::new(env!("CARGO_BIN_EXE_recap"))
    };
}

/// The arguments of `recap render CORPUS --session SESSION --strategy STRATEGY EXTRA…`.
pub fn render_args<'a>(
    corpus: &'a str,
    session: &'a str,
    strategy: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![
        "render",
        corpus,
        "--session",
        session,
        "--strategy",
        strategy,
    ];
    args.extend_from_slice(extra);
    args
}
