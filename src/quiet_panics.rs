//! The process's panic hook.
//!
//! The harness catches a strategy that panics and reports it as a render error of that
//! call (kind `panic`): in the report, and once per strategy on stderr. Rust's default
//! hook would also print every such panic the moment it happens (with a backtrace under
//! `RUST_BACKTRACE=1`): hundreds of lines for one faulty strategy. Strategies render on
//! the harness's worker threads, so a panic there is kept quiet and remembered instead;
//! should one escape the harness (a bug in recap), the main thread's panic prints what
//! was remembered before its own message.
//!
//! Plugins panic inside their own copy of Rust's runtime, with its own hook: the plugin
//! SDK keeps the panics it catches quiet there.

use std::panic::PanicHookInfo;
use std::sync::Mutex;

/// The harness names its worker threads `recap-worker-N`.
const WORKER_PREFIX: &str = "recap-worker-";

/// The last panic on a worker thread, as the default hook would have printed it.
static LAST_WORKER_PANIC: Mutex<Option<String>> = Mutex::new(None);

fn on_worker_thread() -> bool {
    std::thread::current()
        .name()
        .is_some_and(|n| n.starts_with(WORKER_PREFIX))
}

/// `println!` / `eprintln!` panic when the reader of the pipe has gone (`recap … |
/// head -1`); the reader wants no more, so the process ends quietly.
fn is_closed_pipe(info: &PanicHookInfo<'_>) -> bool {
    let message = info
        .payload()
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| info.payload().downcast_ref::<&str>().copied())
        .unwrap_or_default();
    message.starts_with("failed printing to std") && message.contains("Broken pipe")
}

pub fn install() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if is_closed_pipe(info) {
            std::process::exit(0);
        }
        if on_worker_thread() {
            let backtrace = std::backtrace::Backtrace::capture();
            let text = match backtrace.status() {
                std::backtrace::BacktraceStatus::Captured => format!("{info}\n{backtrace}"),
                _ => info.to_string(),
            };
            if let Ok(mut last) = LAST_WORKER_PANIC.lock() {
                *last = Some(text);
            }
            return;
        }
        if let Some(worker) = take_last_worker_panic() {
            crate::say!("a worker thread {worker}");
        }
        default(info);
    }));
}

/// The remembered worker panic, if any (and forgets it).
pub fn take_last_worker_panic() -> Option<String> {
    LAST_WORKER_PANIC.lock().ok().and_then(|mut p| p.take())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_on_a_worker_thread_is_remembered_not_printed() {
        install();
        let caught = std::thread::Builder::new()
            .name(format!("{WORKER_PREFIX}test"))
            .spawn(|| std::panic::catch_unwind(|| panic!("a strategy broke")).is_err())
            .expect("spawn")
            .join()
            .expect("the panic was caught on the thread");
        assert!(caught);
        let remembered = take_last_worker_panic().expect("remembered");
        assert!(remembered.contains("a strategy broke"), "{remembered}");
        assert!(remembered.contains("quiet_panics.rs"), "{remembered}");
    }
}
