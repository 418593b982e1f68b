//! Shared pieces of the run-time fault fixtures in `examples/`: a small correct
//! strategy ([`Echo`]) that each fixture behaves like until [`FAULT_FROM_TURNS`]
//! completed turns, and a raw render wrapper for faults the SDK would not let through.

pub use recap_abi;
pub use recap_core;

use recap_abi::PluginDescriptorV1;
use recap_abi::ffi::{RecapBuf, STATUS_OK};
use recap_core::{
    Message, RenderError, RenderRequest, Replay, SpecError, Strategy, StrategySpec, each_call,
};

/// Faults start at this many completed turns: the host's self-test renders at most 2.
pub const FAULT_FROM_TURNS: usize = 3;

/// SYSTEM, USER(mission), then per turn ASSISTANT(program) and USER(turns left).
#[derive(Debug, Default)]
pub struct Echo;

impl Echo {
    pub fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        let mut out = vec![
            Message::system(request.system_prompt),
            Message::user(request.mission),
        ];
        for turn in request.turns {
            out.push(Message::assistant(turn.program.as_str()));
            out.push(Message::user(format!("{} print(s)", turn.prints.len())));
        }
        Ok(out)
    }
}

impl Strategy for Echo {
    fn spec(&self) -> String {
        "echo".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| Echo.render(r))
    }
}

impl recap_abi::Plugin for Echo {
    const NAME: &'static str = "echo";
    const VERSION: &'static str = "0.0.1";
    fn from_spec(_: &StrategySpec) -> Result<Self, SpecError> {
        Ok(Echo)
    }
}

/// `Echo`'s descriptor without the session functions and `describe`, so the host sends
/// every call through `render` (which the raw fixtures replace).
pub const fn raw_descriptor(
    name: &'static str,
    render: recap_abi::ffi::RenderFn,
) -> PluginDescriptorV1 {
    PluginDescriptorV1 {
        name: recap_abi::RecapStr::from_static(name),
        render: Some(render),
        describe: None,
        session_open: None,
        session_render: None,
        session_close: None,
        ..recap_abi::sdk::descriptor::<Echo>()
    }
}

/// Exports a raw descriptor (probe + descriptor entry).
#[macro_export]
macro_rules! raw_plugin {
    ($name:literal, $render:path) => {
        #[unsafe(no_mangle)]
        pub extern "C" fn recap_strategy_abi_version() -> u32 {
            $crate::recap_abi::ABI_MAJOR
        }

        #[unsafe(no_mangle)]
        pub extern "C" fn recap_strategy_plugin_v1() -> *const $crate::recap_abi::PluginDescriptorV1
        {
            static DESCRIPTOR: $crate::recap_abi::PluginDescriptorV1 =
                $crate::raw_descriptor($name, $render);
            &DESCRIPTOR
        }
    };
}

/// How many turns a render request carries (0 when it cannot be read).
pub fn turns_in(request: &[u8]) -> usize {
    serde_json::from_slice::<serde_json::Value>(request)
        .ok()
        .and_then(|v| v.get("turns").and_then(|t| t.as_array()).map(Vec::len))
        .unwrap_or(0)
}

/// Renders like `Echo` through the SDK when the request has fewer than
/// [`FAULT_FROM_TURNS`] turns; otherwise hands out `fault()`'s bytes as the answer.
///
/// # Safety
/// The ABI contract of `render`: `request` points at `request_len` readable bytes and
/// `out` is writable.
pub unsafe fn render_or_fault(
    request: *const u8,
    request_len: usize,
    out: *mut RecapBuf,
    fault: impl FnOnce() -> Vec<u8>,
) -> i32 {
    // SAFETY: the caller guarantees `request_len` readable bytes at `request`.
    let bytes = unsafe { std::slice::from_raw_parts(request, request_len) };
    if turns_in(bytes) < FAULT_FROM_TURNS {
        let render = recap_abi::sdk::descriptor::<Echo>()
            .render
            .expect("the SDK descriptor has a render function");
        // SAFETY: forwarded unchanged from our own caller.
        return unsafe { render(request, request_len, out) };
    }
    // Allocated as a Vec<u8> the way the SDK does, so that the SDK's `free_buffer`
    // (this descriptor's `free`) releases it.
    let mut answer = std::mem::ManuallyDrop::new(fault());
    // SAFETY: the caller guarantees `out` is writable.
    unsafe {
        out.write(RecapBuf {
            ptr: answer.as_mut_ptr(),
            len: answer.len(),
            cap: answer.capacity(),
        })
    };
    STATUS_OK
}

/// `faulty_strategy!(Type, "name", || fault)`: a plugin that renders like [`Echo`]
/// until [`FAULT_FROM_TURNS`] completed turns and from then on runs `fault` first
/// (which need not return).
#[macro_export]
macro_rules! faulty_strategy {
    ($ty:ident, $name:literal, $fault:expr) => {
        pub struct $ty;

        impl $crate::recap_core::Strategy for $ty {
            fn spec(&self) -> String {
                $name.into()
            }
            fn open(&self) -> Box<dyn $crate::recap_core::Replay> {
                $crate::recap_core::each_call(|request| {
                    if request.turns.len() >= $crate::FAULT_FROM_TURNS {
                        let fault: fn() = $fault;
                        fault();
                    }
                    $crate::Echo.render(request)
                })
            }
        }

        impl $crate::recap_abi::Plugin for $ty {
            const NAME: &'static str = $name;
            const VERSION: &'static str = "0.0.1";
            fn from_spec(
                _: &$crate::recap_core::StrategySpec,
            ) -> Result<Self, $crate::recap_core::SpecError> {
                Ok($ty)
            }
        }

        $crate::recap_abi::export_strategy!($ty);
    };
}
