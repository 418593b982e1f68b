//! Answers a truncated JSON document once 3 turns are completed.
use recap_reliability_fixtures::recap_abi::ffi::RecapBuf;
use recap_reliability_fixtures::{raw_plugin, render_or_fault};

/// # Safety
/// The ABI contract of `render`.
unsafe extern "C" fn render(request: *const u8, len: usize, out: *mut RecapBuf) -> i32 {
    // SAFETY: forwarded unchanged.
    unsafe {
        render_or_fault(request, len, out, || {
            br#"{"messages":[{"role":"system","content":"trunc"#.to_vec()
        })
    }
}

raw_plugin!("rt-invalid-json", render);
