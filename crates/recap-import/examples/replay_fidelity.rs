//! Where does the replay-fidelity gap of the ptc-runner corpus come from?
//!
//! `cargo run --release -p recap-import --example replay_fidelity -- <ptc-runner dir> [--csv out.csv]`
//!
//! The analysis is `recap_harness::replay_fidelity` (`crates/recap-harness`), which
//! says what each count adds; `tests/replay_fidelity.rs` checks the figures it prints
//! (see `crates/recap-import/README.md`, "Replay fidelity", and `docs/results.md`).

use std::process::ExitCode;

fn main() -> ExitCode {
    match recap_harness::replay_fidelity::run(std::env::args().skip(1)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("replay_fidelity: {e}");
            ExitCode::from(2)
        }
    }
}
