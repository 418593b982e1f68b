//! Answers JSON whose message content is not UTF-8 once 3 turns are completed.
use recap_reliability_fixtures::recap_abi::ffi::RecapBuf;
use recap_reliability_fixtures::{raw_plugin, render_or_fault};

/// # Safety
/// The ABI contract of `render`.
unsafe extern "C" fn render(request: *const u8, len: usize, out: *mut RecapBuf) -> i32 {
    // SAFETY: forwarded unchanged.
    unsafe {
        render_or_fault(request, len, out, || {
            b"{\"messages\":[{\"role\":\"system\",\"content\":\"caf\xe9 \xff\xfe\"}]}".to_vec()
        })
    }
}

raw_plugin!("rt-invalid-utf8", render);
