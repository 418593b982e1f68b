//! Answers 257 MiB once 3 turns are completed: more than the host's response cap
//! (256 MiB). The buffer is zeroed memory the host never needs to read, so the fixture
//! costs address space, not RAM.
use recap_reliability_fixtures::recap_abi::ffi::RecapBuf;
use recap_reliability_fixtures::{raw_plugin, render_or_fault};

/// # Safety
/// The ABI contract of `render`.
unsafe extern "C" fn render(request: *const u8, len: usize, out: *mut RecapBuf) -> i32 {
    // SAFETY: forwarded unchanged.
    unsafe { render_or_fault(request, len, out, || vec![0u8; 257 << 20]) }
}

raw_plugin!("rt-gigantic", render);
