//! A worker stuck in a call that never returns is left behind
//! (`recap_core::rescue`): the run ends without it, its session is processed again by
//! a new worker, and the strategy that overran is replayed — its calls before the one
//! that overran rendered again, that one reported as the time-out — so the report reads
//! as if nothing had been given up. With one job the stuck worker is the only one.
//!
//! The strategies here stand in for the plugin host: they call the thread's rescue as
//! its watchdog does, wait until the test releases them (a call that returns too late),
//! and honour the replay as the host does.

mod common;

use common::*;
use recap_core::rescue;
use recap_core::{
    Entry, Message, RenderError, RenderRequest, Replay, Session, Strategy, each_call,
};
use recap_harness::engine::{Hooks, SessionOutcome, run_entries};
use recap_harness::{Backend, Encoding, Report, RunConfig, StrategyEntry, Tokenizer};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Stuck calls wait here until the test ends them.
struct Gate {
    open: Mutex<bool>,
    opened: Condvar,
    /// Calls that were given up and then returned.
    returned_late: AtomicUsize,
}

impl Gate {
    fn new() -> Arc<Self> {
        Arc::new(Gate {
            open: Mutex::new(false),
            opened: Condvar::new(),
            returned_late: AtomicUsize::new(0),
        })
    }

    /// What the host's watchdog and a hung plugin do together: the rescue is called
    /// (from the watching thread, in the host), the call waits, and returns too late.
    fn hang(&self) -> Result<Vec<Message>, RenderError> {
        let rescue = rescue::thread_rescue().expect("a run's worker may be given up");
        if *self.open.lock().expect("gate") {
            // Overran by a hair: given up, and back at once.
            rescue();
            rescue::note_abandoned();
            self.returned_late.fetch_add(1, Ordering::SeqCst);
            return Err(RenderError::new(
                "late",
                "returned just after it was given up",
            ));
        }
        std::thread::spawn(move || rescue());
        let mut open = self.open.lock().expect("gate");
        while !*open {
            open = self.opened.wait(open).expect("gate");
        }
        rescue::note_abandoned();
        self.returned_late.fetch_add(1, Ordering::SeqCst);
        Err(RenderError::new("late", "returned after it was given up"))
    }

    fn release(&self) {
        *self.open.lock().expect("gate") = true;
        self.opened.notify_all();
    }
}

/// Renders like `TestSingle`; in the session whose mission is `hang_in`, hangs at call
/// `hang_at` — and, with `hang_in_replay`, also at call 0 of the replay.
#[derive(Clone)]
struct Hanging {
    gate: Arc<Gate>,
    hang_in: &'static str,
    hang_at: usize,
    hang_in_replay: bool,
    hung: Arc<AtomicUsize>,
}

impl Hanging {
    pub fn render(&self, req: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        let k = req.turns.len();
        if let Some(at) = rescue::replay_overran_at() {
            if k == at {
                return Err(RenderError::new("timeout", "overran"));
            }
            if k > at {
                return Err(RenderError::new("timeout", "disabled"));
            }
            if self.hang_in_replay && req.mission == self.hang_in && k == 0 {
                self.hung.fetch_add(1, Ordering::SeqCst);
                return self.gate.hang();
            }
        } else if req.mission == self.hang_in && k == self.hang_at {
            self.hung.fetch_add(1, Ordering::SeqCst);
            return self.gate.hang();
        }
        TestSingle.render(req)
    }
}

impl Strategy for Hanging {
    fn spec(&self) -> String {
        "test-hanging".into()
    }
    fn open(&self) -> Box<dyn Replay> {
        let this = self.clone();
        each_call(move |r| this.render(r))
    }
}

fn sessions(n: usize, hang_in: &str) -> Vec<Session> {
    (0..n)
        .map(|i| {
            let mut s = session(&format!("s{i}"));
            if i == 1 {
                s.mission = hang_in.into();
            }
            s
        })
        .collect()
}

/// Runs `strategy` beside the baseline over `sessions` with `jobs` workers, keeping each
/// session's outcome; fails rather than hangs if the run does not end.
fn run(
    strategy: Arc<Hanging>,
    sessions: Vec<Session>,
    jobs: usize,
) -> (Report, Vec<SessionOutcome>) {
    run_with(vec![StrategyEntry::new(strategy)], sessions, jobs)
}

fn run_with(
    strategies: Vec<StrategyEntry>,
    sessions: Vec<Session>,
    jobs: usize,
) -> (Report, Vec<SessionOutcome>) {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut cfg = RunConfig::new(
            strategies,
            arc(TestFull),
            vec![Tokenizer::get(Encoding::O200kBase, Backend::Fast)],
        )
        .expect("config");
        cfg.jobs = jobs;
        let entries = sessions.into_iter().enumerate().map(|(i, s)| {
            (
                0,
                Entry {
                    line: i + 1,
                    session: Ok(s),
                },
            )
        });
        let mut outcomes = Vec::new();
        let mut keep = |_: usize, _: usize, _: &Session, o: &SessionOutcome| {
            outcomes.push(o.clone());
            Ok(())
        };
        let hooks = Hooks {
            session: Some(&mut keep),
            ..Hooks::default()
        };
        let report = run_entries(&cfg, vec!["mem".into()], entries, hooks, None);
        let _ = tx.send(report.map(|r| (r, outcomes)));
    });
    rx.recv_timeout(Duration::from_secs(120))
        .expect("the run ended although a worker is stuck")
        .expect("the run")
}

/// Where the report's run of strategy `name` is (also its index in each session's
/// outcomes).
fn run_index(report: &Report, name: &str) -> usize {
    report
        .runs
        .iter()
        .position(|r| r.strategy == name)
        .expect("run")
}

/// The failed calls of strategy `s` in a session: (call, message).
fn errors(o: &SessionOutcome, s: usize) -> Vec<(usize, String)> {
    o.strategies[s]
        .render_errors
        .iter()
        .map(|e| (e.call, e.error.message.clone()))
        .collect()
}

#[test]
fn the_only_worker_stuck_is_left_behind_and_its_session_replayed() {
    let gate = Gate::new();
    let strategy = Arc::new(Hanging {
        gate: Arc::clone(&gate),
        hang_in: "hang here",
        hang_at: 2,
        hang_in_replay: false,
        hung: Arc::new(AtomicUsize::new(0)),
    });
    let (report, outcomes) = run(Arc::clone(&strategy), sessions(4, "hang here"), 1);
    assert_eq!(strategy.hung.load(Ordering::SeqCst), 1);

    // Every session, in input order; the baseline complete in all of them.
    let ids: Vec<&str> = outcomes.iter().map(|o| o.id.as_str()).collect();
    assert_eq!(ids, ["s0", "s1", "s2", "s3"]);
    let hanging = run_index(&report, "test-hanging");
    let baseline = 1 - hanging;
    for o in &outcomes {
        assert!(o.strategies[baseline].complete, "{}", o.id);
    }
    // The session that hung: calls 0 and 1 rendered again, call 2 is the time-out.
    assert_eq!(errors(&outcomes[1], hanging), [(2, "overran".to_string())]);
    assert_eq!(outcomes[1].strategies[hanging].render_ns.len(), 3);
    // The others were never affected (the stand-in does not disable itself).
    for i in [0, 2, 3] {
        assert!(outcomes[i].strategies[hanging].complete, "s{i}");
    }
    assert_eq!(report.runs[hanging].render_errors.count, 1);

    gate.release();
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while gate.returned_late.load(Ordering::SeqCst) < 1 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(gate.returned_late.load(Ordering::SeqCst), 1);
}

#[test]
fn a_strategy_that_hangs_again_in_its_replay_is_not_run_in_that_session_again() {
    let gate = Gate::new();
    let strategy = Arc::new(Hanging {
        gate: Arc::clone(&gate),
        hang_in: "hang twice",
        hang_at: 1,
        hang_in_replay: true,
        hung: Arc::new(AtomicUsize::new(0)),
    });
    let (report, outcomes) = run(Arc::clone(&strategy), sessions(3, "hang twice"), 2);
    assert_eq!(
        strategy.hung.load(Ordering::SeqCst),
        2,
        "once, then once in the replay"
    );
    let hanging = run_index(&report, "test-hanging");
    // The second time the strategy is not called at all: call 0 is the time-out.
    assert_eq!(
        errors(&outcomes[1], hanging),
        [
            (0, "overran".to_string()),
            (1, "disabled".to_string()),
            (2, "disabled".to_string())
        ]
    );
    assert!(outcomes[0].strategies[hanging].complete);
    assert!(outcomes[2].strategies[hanging].complete);
    gate.release();
}

/// A call back just after it was given up: its worker goes on to the end of the session
/// (its other strategies, discarded), and the replay still starts from the call that
/// overran, not from wherever that worker had got to.
#[test]
fn a_call_back_just_after_it_was_given_up_is_replayed_from_that_call() {
    let gate = Gate::new();
    gate.release();
    let strategy = Arc::new(Hanging {
        gate: Arc::clone(&gate),
        hang_in: "back at once",
        hang_at: 1,
        hang_in_replay: false,
        hung: Arc::new(AtomicUsize::new(0)),
    });
    let strategies = vec![
        StrategyEntry::new(Arc::clone(&strategy) as Arc<dyn Strategy>),
        StrategyEntry::new(arc(TestSingle)),
    ];
    let (report, outcomes) = run_with(strategies, sessions(3, "back at once"), 1);
    assert_eq!(strategy.hung.load(Ordering::SeqCst), 1);
    assert_eq!(gate.returned_late.load(Ordering::SeqCst), 1);
    let (hanging, single) = (
        run_index(&report, "test-hanging"),
        run_index(&report, "test-single"),
    );
    assert_eq!(
        errors(&outcomes[1], hanging),
        [(1, "overran".to_string()), (2, "disabled".to_string())]
    );
    for o in &outcomes {
        assert!(o.strategies[single].complete, "{}", o.id);
    }
    assert!(outcomes[0].strategies[hanging].complete);
    assert!(outcomes[2].strategies[hanging].complete);
}
