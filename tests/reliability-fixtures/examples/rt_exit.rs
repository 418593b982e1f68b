//! Exits the process with status 0 in the middle of a call once 3 turns are completed
//! (only survivable with `--plugin-isolation process`).
recap_reliability_fixtures::faulty_strategy!(RtExit, "rt-exit", || std::process::exit(0));
