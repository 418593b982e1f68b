//! Writes to an unmapped address once 3 turns are completed: a segmentation fault
//! (only survivable with `--plugin-isolation process`).
recap_reliability_fixtures::faulty_strategy!(RtSegfault, "rt-segfault", || {
    // An aligned, non-null address in the never-mapped first page.
    let unmapped = std::ptr::with_exposed_provenance_mut::<u32>(16);
    // SAFETY: none — crashing is this fixture's purpose.
    unsafe { unmapped.write_volatile(1) };
});
