//! Prints 64 KiB to stdout and stderr on every call once 3 turns are completed, and
//! renders correctly: output a plugin writes must not disturb a worker's protocol.
recap_reliability_fixtures::faulty_strategy!(RtPrints, "rt-prints", || {
    let line = "a plugin that talks on stdout\n".repeat(2200);
    print!("{line}");
    eprint!("{line}");
});
