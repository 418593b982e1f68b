//! Aborts the process once 3 turns are completed (only survivable with
//! `--plugin-isolation process`).
recap_reliability_fixtures::faulty_strategy!(RtAbort, "rt-abort", || std::process::abort());
