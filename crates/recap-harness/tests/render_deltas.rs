//! Strategies whose replays answer with deltas (what the prompt keeps of the previous
//! one): the engine builds the prompt from the delta and reports exactly what it reports
//! for the same prompts rendered whole; a delta that keeps more than the engine holds is
//! a render error of its call, and the determinism and append-only checks still catch a
//! strategy that breaks them through deltas. The determinism check renders through a
//! second replay only where it applies: for every strategy with `--check-determinism
//! all`, by default only for those recap cannot see into (`Strategy::opaque`).

mod common;

use common::*;
use recap_core::{
    Answer, Invariant, Message, PromptDelta, RenderRequest, Replay, Session, Strategy,
};
use recap_harness::{
    Backend, DeterminismCheck, Encoding, RunConfig, StrategyEntry, Tokenizer, run_sessions,
};
use std::sync::atomic::{AtomicUsize, Ordering};

#[derive(Clone, Copy, PartialEq)]
enum Fault {
    None,
    /// Claims one message more than the engine holds.
    Overclaims,
    /// At call 1 the tail's last message differs at every render (between the two
    /// renders of the call above all).
    NondeterministicTail,
    /// Declares append-only, keeps only the opening and changes the message after it.
    RewritesHistory,
}

/// TestFull's prompts, answered as deltas against the length its replay last returned.
struct DeltaFull {
    name: &'static str,
    fault: Fault,
    /// Whether it says recap cannot see into it (as a plugin does).
    opaque: bool,
}

static RENDERS: AtomicUsize = AtomicUsize::new(0);

impl Strategy for DeltaFull {
    fn spec(&self) -> String {
        self.name.into()
    }

    fn open(&self) -> Box<dyn Replay> {
        Box::new(DeltaReplay {
            fault: self.fault,
            last: None,
        })
    }

    fn invariants(&self) -> Vec<Invariant> {
        let mut all = Invariant::UNIVERSAL.to_vec();
        all.push(Invariant::AppendOnly);
        all
    }

    fn opaque(&self) -> bool {
        self.opaque
    }
}

struct DeltaReplay {
    fault: Fault,
    /// The length of the prompt it returned last.
    last: Option<usize>,
}

impl Replay for DeltaReplay {
    fn call(&mut self, session: &Session, k: usize, held: usize) -> Answer {
        let mut full = TestFull.render(&RenderRequest::for_call(session, k)?)?;
        let last = self.last.replace(full.len());
        let kept = match last {
            Some(last) if last == held && held <= full.len() => held,
            _ => 0,
        };
        let kept = match self.fault {
            Fault::Overclaims => held + 1,
            Fault::RewritesHistory if kept > 2 => {
                full[2] = Message::assistant(format!("rewritten at call {k}"));
                2
            }
            _ => kept,
        };
        if self.fault == Fault::NondeterministicTail && k == 1 {
            let n = RENDERS.fetch_add(1, Ordering::Relaxed);
            let last = full.len() - 1;
            full[last] = Message::user(format!("render {n}"));
        }
        let tail = full.split_off(kept.min(full.len()));
        Ok(PromptDelta { kept, tail })
    }
}

/// A run of TestFull and a `DeltaFull` with every call's determinism checked.
fn run(fault: Fault, name: &'static str) -> recap_harness::report::Report {
    run_checking(fault, name, false, DeterminismCheck::All)
}

fn run_checking(
    fault: Fault,
    name: &'static str,
    opaque: bool,
    check: DeterminismCheck,
) -> recap_harness::report::Report {
    let mut cfg = RunConfig::new(
        vec![
            StrategyEntry::new(arc(TestFull)),
            StrategyEntry::new(arc(DeltaFull {
                name,
                fault,
                opaque,
            })),
        ],
        arc(TestFull),
        vec![Tokenizer::get(Encoding::O200kBase, Backend::Fast)],
    )
    .unwrap();
    cfg.check_determinism = check;
    run_sessions(&cfg, "mem", vec![session("a"), session("b")]).unwrap()
}

#[test]
fn a_delta_strategy_reports_what_the_same_prompts_whole_report() {
    let report = run(Fault::None, "delta-full");
    let (whole, delta) = (&report.runs[0], &report.runs[1]);
    assert_eq!(delta.strategy, "delta-full");
    assert_eq!(delta.sessions, 2);
    assert_eq!(delta.prompt_tokens_total, whole.prompt_tokens_total);
    assert_eq!(delta.cached_tokens, whole.cached_tokens);
    assert!(delta.cached_tokens > 0);
    assert_eq!(delta.render_errors.count, 0);
    assert_eq!(
        delta.invariant_violations.count, 0,
        "{:?}",
        delta.invariant_violations
    );
    let to_json = |r: &recap_harness::report::Run| {
        let mut v = serde_json::to_value(&r.session_details).unwrap();
        strip_render_ns(&mut v);
        v
    };
    assert_eq!(to_json(delta), to_json(whole));
}

fn strip_render_ns(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(map) => {
            map.retain(|k, _| !k.starts_with("render_ns"));
            map.values_mut().for_each(strip_render_ns);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_render_ns),
        _ => {}
    }
}

#[test]
fn a_delta_keeping_more_than_was_held_is_a_render_error_of_each_call() {
    let report = run(Fault::Overclaims, "delta-overclaims");
    let r = &report.runs[1];
    // Three calls per session, each refused; the other strategy is unaffected.
    assert_eq!(r.render_errors.count, 6);
    assert_eq!(r.render_errors.by_kind.get("delta"), Some(&6));
    let ex = &r.render_errors.examples[0];
    assert_eq!((ex.session.as_str(), ex.call), ("a", 0));
    assert_eq!(
        ex.message,
        "the render keeps 1 messages of a previous prompt of 0"
    );
    assert_eq!(report.runs[0].render_errors.count, 0);
    assert_eq!(report.runs[0].sessions, 2);
}

#[test]
fn a_tail_that_differs_between_the_two_renders_breaks_determinism_where_it_differs() {
    let report = run(Fault::NondeterministicTail, "delta-nondeterministic");
    let v = &report.runs[1].invariant_violations;
    // Call 1 of each session, and call 2, where the first render keeps call 1's message
    // and the second, out of step since, renders whole.
    assert_eq!(v.by_invariant.get("deterministic"), Some(&4), "{v:?}");
    let found = |call: usize| {
        v.examples
            .iter()
            .find(|e| e.invariant == "deterministic" && e.session == "a" && e.call == call)
            .unwrap_or_else(|| panic!("call {call}: {v:?}"))
    };
    assert_eq!(found(1).detail, "a second render differs at message 3");
    assert_eq!(found(2).detail, "a second render differs at message 3");
}

#[test]
fn a_delta_that_rewrites_the_history_breaks_append_only() {
    let report = run(Fault::RewritesHistory, "delta-rewrites");
    let v = &report.runs[1].invariant_violations;
    // Calls 2 of each session keep only the opening and change message 2.
    assert_eq!(v.by_invariant.get("append-only"), Some(&2), "{v:?}");
    let ex = v
        .examples
        .iter()
        .find(|e| e.invariant == "append-only")
        .unwrap();
    assert_eq!(ex.call, 2);
    assert_eq!(ex.detail, "message 2 differs from the previous call's");
}

#[test]
fn by_default_only_a_strategy_recap_cannot_see_into_is_rendered_twice() {
    use DeterminismCheck::{All, Opaque};
    // (whether the strategy is opaque, the run's check, whether its calls are checked):
    // a built-in's nondeterminism goes unseen by default and is caught with `all`; an
    // opaque strategy's (a plugin's) is caught either way. The baseline is a built-in.
    for (opaque, check, checked) in [
        (false, Opaque, false),
        (false, All, true),
        (true, Opaque, true),
        (true, All, true),
    ] {
        let report = run_checking(Fault::NondeterministicTail, "delta", opaque, check);
        let r = &report.runs[1];
        let case = format!("opaque {opaque}, {check:?}");
        assert_eq!(r.determinism_checked, checked, "{case}");
        assert_eq!(report.runs[0].determinism_checked, check == All, "{case}");
        let caught = r.invariant_violations.by_invariant.get("deterministic");
        assert_eq!(caught, checked.then_some(&4), "{case}");
        assert_eq!(
            r.invariant_violations.count,
            if checked { 4 } else { 0 },
            "{case}"
        );
    }
}
