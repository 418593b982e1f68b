//! Allocates and fills 4 GiB once 3 turns are completed: with `--plugin-memory-limit`
//! the allocation fails and the process aborts. Never load it without a limit.
recap_reliability_fixtures::faulty_strategy!(RtOom, "rt-oom", || {
    let big = vec![1u8; 4 << 30];
    std::hint::black_box(&big);
});
