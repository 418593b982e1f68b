//! `Strategy::around_session`: the harness runs each session's pass of a strategy —
//! every call with its checks — inside the strategy's hook, once per session it
//! applies to, on the thread that renders the calls; a hook that never runs the pass
//! still gets the session replayed.

mod common;

use common::*;
use recap_core::{RenderError, Replay, Strategy, each_call};
use recap_harness::{Backend, Encoding, RunConfig, StrategyEntry, Tokenizer, run_sessions};
use std::cell::Cell;
use std::sync::atomic::{AtomicUsize, Ordering};

thread_local! {
    /// Whether this thread is inside a `Hooked` strategy's hook.
    static INSIDE: Cell<bool> = const { Cell::new(false) };
}

/// TestFull, whose every render fails outside its hook.
struct Hooked {
    name: &'static str,
    /// Whether the hook runs the pass (a hook that forgets to is still replayed).
    runs_pass: bool,
    hooks: AtomicUsize,
}

impl Strategy for Hooked {
    fn spec(&self) -> String {
        self.name.into()
    }

    fn open(&self) -> Box<dyn Replay> {
        let strict = self.runs_pass;
        each_call(move |r| {
            if strict && !INSIDE.with(Cell::get) {
                return Err(RenderError::new("outside", "rendered outside the hook"));
            }
            TestFull.render(r)
        })
    }

    fn around_session(&self, pass: &mut dyn FnMut()) {
        self.hooks.fetch_add(1, Ordering::Relaxed);
        if self.runs_pass {
            INSIDE.with(|i| i.set(true));
            pass();
            INSIDE.with(|i| i.set(false));
        }
    }
}

fn run(runs_pass: bool) -> (recap_harness::report::Report, usize) {
    let hooked = std::sync::Arc::new(Hooked {
        name: "hooked",
        runs_pass,
        hooks: AtomicUsize::new(0),
    });
    let cfg = RunConfig::new(
        vec![
            StrategyEntry::new(arc(TestFull)),
            StrategyEntry::new(hooked.clone()),
        ],
        arc(TestFull),
        vec![Tokenizer::get(Encoding::O200kBase, Backend::Fast)],
    )
    .unwrap();
    let sessions = vec![session("a"), session("b"), session("c")];
    let report = run_sessions(&cfg, "mem", sessions).unwrap();
    (report, hooked.hooks.load(Ordering::Relaxed))
}

#[test]
fn every_call_of_a_session_is_rendered_inside_the_hook_called_once_per_session() {
    let (report, hooks) = run(true);
    assert_eq!(hooks, 3);
    let (plain, hooked) = (&report.runs[0], &report.runs[1]);
    assert_eq!(hooked.strategy, "hooked");
    assert_eq!(hooked.render_errors.count, 0, "{:?}", hooked.render_errors);
    assert_eq!(hooked.sessions, 3);
    assert_eq!(hooked.prompt_tokens_total, plain.prompt_tokens_total);
}

#[test]
fn a_hook_that_does_not_run_the_pass_still_has_its_sessions_replayed() {
    let (report, hooks) = run(false);
    assert_eq!(hooks, 3);
    let (plain, hooked) = (&report.runs[0], &report.runs[1]);
    assert_eq!(hooked.sessions, 3);
    assert_eq!(hooked.render_errors.count, 0);
    assert_eq!(hooked.prompt_tokens_total, plain.prompt_tokens_total);
}
