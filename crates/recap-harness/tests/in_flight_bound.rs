//! The driver never runs far ahead of the fold: while the first session is stuck, the
//! other workers take at most `MAX_IN_FLIGHT_PER_JOB` × jobs entries from the input,
//! instead of finishing the corpus into the reorder buffer.

mod common;

use common::*;
use recap_core::{Entry, Message, RenderError, RenderRequest, Replay, Strategy, each_call};
use recap_harness::engine::{Hooks, MAX_IN_FLIGHT_PER_JOB, run_entries};
use recap_harness::{Backend, Encoding, RunConfig, StrategyEntry, Tokenizer};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const SESSIONS: usize = 200;
const JOBS: usize = 2;

/// Entries taken from the input so far.
static TAKEN: AtomicUsize = AtomicUsize::new(0);
/// `TAKEN` once the stuck session saw it stop growing.
static TAKEN_WHILE_STUCK: AtomicUsize = AtomicUsize::new(0);
static STUCK_ONCE: AtomicBool = AtomicBool::new(false);

/// Like `TestSingle`, but its first render of the session whose mission is "stuck"
/// waits until no more entries are being taken (or 20 s pass).
struct Stuck;

impl Stuck {
    pub fn render(&self, req: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        if req.mission == "stuck" && !STUCK_ONCE.swap(true, Ordering::SeqCst) {
            let deadline = Instant::now() + Duration::from_secs(20);
            let (mut last, mut quiet) = (TAKEN.load(Ordering::SeqCst), 0);
            while quiet < 20 && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(10));
                let now = TAKEN.load(Ordering::SeqCst);
                quiet = if now == last { quiet + 1 } else { 0 };
                last = now;
            }
            TAKEN_WHILE_STUCK.store(last, Ordering::SeqCst);
        }
        TestSingle.render(req)
    }
}

impl Strategy for Stuck {
    fn spec(&self) -> String {
        "test-stuck".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        each_call(|r| Stuck.render(r))
    }
}

#[test]
fn a_stuck_session_holds_back_a_bounded_number_of_others() {
    let mut sessions = vec![session("stuck")];
    sessions[0].mission = "stuck".into();
    sessions.extend((1..SESSIONS).map(|i| session(&format!("s{i}"))));
    let entries = sessions.into_iter().enumerate().map(|(i, s)| {
        TAKEN.fetch_add(1, Ordering::SeqCst);
        (
            0,
            Entry {
                line: i + 1,
                session: Ok(s),
            },
        )
    });
    let mut cfg = RunConfig::new(
        vec![StrategyEntry::new(arc(Stuck))],
        arc(TestFull),
        vec![Tokenizer::get(Encoding::O200kBase, Backend::Fast)],
    )
    .unwrap();
    cfg.jobs = JOBS;
    let report = run_entries(&cfg, vec!["mem".into()], entries, Hooks::default(), None).unwrap();

    assert!(STUCK_ONCE.load(Ordering::SeqCst), "the stuck session ran");
    let taken = TAKEN_WHILE_STUCK.load(Ordering::SeqCst);
    assert!(
        taken <= JOBS * MAX_IN_FLIGHT_PER_JOB,
        "{taken} entries taken while the first was unfolded"
    );
    // Held back, not lost: every session is in the report, in input order.
    let run = &report.runs[1];
    assert_eq!(run.sessions as usize, SESSIONS);
    let order: Vec<&str> = run
        .session_details
        .iter()
        .map(|d| d.session.as_str())
        .collect();
    assert_eq!(order[..3], ["stuck", "s1", "s2"]);
    assert_eq!(order.len(), SESSIONS);
}
