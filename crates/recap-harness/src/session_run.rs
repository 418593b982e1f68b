//! One session under every strategy: each call rendered and checked, its tokens counted
//! and its retention measured, with the work one call can lend the next.

use crate::calls::{calls, recorded_input};
use crate::config::RunConfig;
use crate::counting::{
    CallDiff, CallTokens, Prev, RoleTokens, SegmentCounts, TokenMemory, count_call,
};
use crate::line_store::{CallLines, LineStore};
use crate::outcome::{CallError, CallRecord, SessionOutcome, StratOutcome, TokOutcome};
use crate::prompt_dump::{DumpedCall, dump_line};
use crate::retention::{RetentionScans, SessionRetention};
use recap_core::invariants::{CheckContext, PrintLines, Sightings, Violation};
use recap_core::{
    Invariant, Message, PromptDelta, RenderError, RenderRequest, Replay, Session, Strategy,
};
use std::borrow::Cow;
use std::cell::OnceCell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// Processes one session under every strategy and tokenizer.
pub fn process_session(cfg: &RunConfig, corpus: &str, session: &Session) -> SessionOutcome {
    SessionRunner::new(cfg).process(corpus, session)
}

/// A strategy of a session replayed again because the thread rendering it was given up
/// ([`recap_core::rescue`]): the call of it that overran.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Overran {
    pub strategy: usize,
    pub overran_at: usize,
}

thread_local! {
    /// Where this thread notes the render it is in (a driver worker's, read when the
    /// worker is given up).
    static PROGRESS: OnceCell<Arc<AtomicU64>> = const { OnceCell::new() };
}

/// Makes this thread note in `slot` which strategy and call it renders ([`progress`]).
pub(crate) fn note_progress_in(slot: Arc<AtomicU64>) {
    PROGRESS.with(|p| {
        let _ = p.set(slot);
    });
}

fn note_progress(s: usize, k: usize) {
    // A worker given up goes on to the end of its session (its result is discarded):
    // the slot keeps the call that overran for the replay.
    if recap_core::rescue::is_abandoned() {
        return;
    }
    PROGRESS.with(|p| {
        if let Some(slot) = p.get() {
            let k = u32::try_from(k).unwrap_or(u32::MAX);
            slot.store(((s as u64) << 32) | u64::from(k), Ordering::Release);
        }
    });
}

/// (strategy, call) as noted in a progress slot: the call after a strategy's last one
/// while it closes its sessions.
pub(crate) fn progress(slot: &AtomicU64) -> (usize, usize) {
    let v = slot.load(Ordering::Acquire);
    ((v >> 32) as usize, (v & u64::from(u32::MAX)) as usize)
}

/// A run's configuration with what every session needs computed once.
pub(crate) struct SessionRunner<'a> {
    cfg: Cow<'a, RunConfig>,
    /// The invariants each strategy declares.
    declared: Vec<Vec<Invariant>>,
    /// Per tokenizer.
    roles: Vec<RoleTokens>,
    /// The strategies whose prompts are the recorded agent's own (fidelity is measured).
    replays_record: Vec<bool>,
    /// The strategies whose calls are rendered twice, for determinism.
    checked: Vec<bool>,
}

/// What the strategies of one session share besides the thread's [`LineStore`] (its
/// lines and what is known of them): its retention and, per tokenizer, the statistics
/// of its line counts.
struct Shared {
    retention: SessionRetention,
    counts: Vec<SegmentCounts>,
    /// The session's print line counts, once a strategy whose summaries have limits
    /// asks for them.
    print_lines: OnceCell<PrintLines>,
}

impl<'a> SessionRunner<'a> {
    pub(crate) fn new(cfg: &'a RunConfig) -> Self {
        Self::of(Cow::Borrowed(cfg))
    }

    /// A runner that owns its configuration, for threads that may outlive the caller's.
    pub(crate) fn owning(cfg: RunConfig) -> SessionRunner<'static> {
        SessionRunner::of(Cow::Owned(cfg))
    }

    fn of(cfg: Cow<'a, RunConfig>) -> Self {
        SessionRunner {
            declared: cfg
                .strategies
                .iter()
                .map(|s| s.strategy.invariants())
                .collect(),
            roles: cfg.tokenizers.iter().map(RoleTokens::new).collect(),
            replays_record: cfg
                .strategies
                .iter()
                .map(|s| s.strategy.replays_record())
                .collect(),
            checked: cfg
                .strategies
                .iter()
                .map(|s| cfg.check_determinism.covers(s.strategy.as_ref()))
                .collect(),
            cfg,
        }
    }

    pub(crate) fn process(&self, corpus: &str, session: &Session) -> SessionOutcome {
        self.process_replaying(corpus, session, &[])
    }

    /// [`SessionRunner::process`], with the strategies in `overran` rendered as a replay
    /// of the calls they made before one overran.
    pub(crate) fn process_replaying(
        &self,
        corpus: &str,
        session: &Session,
        overran: &[Overran],
    ) -> SessionOutcome {
        LineStore::begin_session();
        let mut shared = Shared {
            retention: SessionRetention::new(session),
            counts: self.cfg.tokenizers.iter().map(SegmentCounts::new).collect(),
            print_lines: OnceCell::new(),
        };
        let strategies = (0..self.cfg.strategies.len())
            .map(|s| {
                if !self.cfg.strategies[s].strategy.applies_to(session) {
                    return StratOutcome::not_applicable(self.cfg.tokenizers.len());
                }
                // Line counts are shared, so each strategy is credited with what it added.
                let before: Vec<(u64, u64)> = shared
                    .counts
                    .iter()
                    .map(|c| (c.segments_tokenized, c.segments_reused))
                    .collect();
                let replay = overran.iter().find(|r| r.strategy == s);
                let mut o = match replay {
                    Some(r) => recap_core::rescue::with_replay(r.overran_at, || {
                        self.process_strategy(s, corpus, session, &mut shared)
                    }),
                    None => self.process_strategy(s, corpus, session, &mut shared),
                };
                for ((to, c), (t0, r0)) in o.toks.iter_mut().zip(&shared.counts).zip(before) {
                    to.segments_tokenized = c.segments_tokenized - t0;
                    to.segments_reused = c.segments_reused - r0;
                }
                o
            })
            .collect();
        SessionOutcome {
            id: session.id.clone(),
            form: session.form,
            recorded: crate::calls::recorded_usage(session),
            calls: calls(session).len(),
            strategies,
        }
    }

    fn process_strategy(
        &self,
        s: usize,
        corpus: &str,
        session: &Session,
        shared: &mut Shared,
    ) -> StratOutcome {
        let mut outcome = None;
        self.cfg.strategies[s]
            .strategy
            .around_session(&mut || outcome = Some(self.pass(s, corpus, session, shared)));
        outcome.unwrap_or_else(|| self.pass(s, corpus, session, shared))
    }

    fn pass(&self, s: usize, corpus: &str, session: &Session, shared: &mut Shared) -> StratOutcome {
        let mut pass = StrategyPass::new(self, s, session);
        let calls = calls(session);
        let end = calls.end;
        for k in calls {
            note_progress(s, k);
            let before = self.cfg.call_records.then(|| CallStart::of(&pass.out));
            let Some(call) = pass.render_checked(session, k, &shared.print_lines) else {
                if let Some(before) = before {
                    pass.out.calls.push(before.record(k, &pass.out, None));
                }
                continue;
            };
            let messages = &call.messages;
            let prev = call.previous();
            let diff = CallDiff::new(prev, messages, call.kept);
            // One read of the session's lines for retention and counting together; it
            // borrows the call's messages, so it ends before they become `prev`.
            let prompt_tokens = LineStore::with_thread(|store| {
                let mut lines = store.call();
                pass.retention(k, messages, &diff, &shared.retention, &mut lines);
                pass.count_tokens(
                    session,
                    k,
                    messages,
                    prev,
                    &diff,
                    &mut shared.counts,
                    &mut lines,
                )
            });
            if self.cfg.dump_prompts {
                pass.dump(corpus, session, k, messages, &prompt_tokens);
            }
            if let Some(before) = before {
                let record = before.record(k, &pass.out, Some(prompt_tokens));
                pass.out.calls.push(record);
            }
            pass.prev = Some(call.messages);
        }
        // Dropping the pass's replays closes the strategy's sessions (a plugin's, say).
        note_progress(s, end);
        pass.finish()
    }
}

/// A strategy's running totals as a call starts: what the call added is read off as
/// the difference when it ends, so the per-call record needs no path of its own.
struct CallStart {
    render_ns: usize,
    errors: usize,
    violations: usize,
    facts: u64,
    retained: u64,
    cached: Vec<u64>,
}

impl CallStart {
    fn of(out: &StratOutcome) -> Self {
        CallStart {
            render_ns: out.render_ns.len(),
            errors: out.render_errors.len(),
            violations: out.violations.len(),
            facts: out.facts,
            retained: out.retained,
            cached: out.toks.iter().map(|t| t.cached).collect(),
        }
    }

    /// Call `k`'s record; `prompt_tokens` per tokenizer when it rendered.
    fn record(self, k: usize, out: &StratOutcome, prompt_tokens: Option<Vec<u64>>) -> CallRecord {
        let rendered = prompt_tokens.is_some();
        CallRecord {
            call: k,
            cached_tokens: if rendered {
                out.toks
                    .iter()
                    .zip(&self.cached)
                    .map(|(t, before)| t.cached - before)
                    .collect()
            } else {
                Vec::new()
            },
            prompt_tokens: prompt_tokens.unwrap_or_default(),
            facts: out.facts - self.facts,
            retained: out.retained - self.retained,
            violations: (out.violations.len() - self.violations) as u64,
            render_error: out.render_errors[self.errors..]
                .first()
                .map(|e| e.error.kind.clone()),
            render_ns: out.render_ns.get(self.render_ns).copied(),
        }
    }
}

/// A call's prompt, built in place of the previous call's: its first `kept` messages
/// were moved over from it, and `removed` holds the previous prompt's messages after
/// them.
struct RenderedCall {
    messages: Vec<Message>,
    kept: usize,
    removed: Vec<Message>,
    /// Whether there was a previous prompt (the first call, and a call after a failed
    /// one, have none).
    had_previous: bool,
}

impl RenderedCall {
    /// The previous call's prompt, as it is held now.
    fn previous(&self) -> Option<Prev<'_>> {
        self.had_previous.then(|| Prev {
            head: &self.messages[..self.kept],
            tail: &self.removed,
        })
    }
}

/// One strategy's pass over the calls of a session, and what it carries from one call
/// to the next.
struct StrategyPass<'r> {
    runner: &'r SessionRunner<'r>,
    /// The strategy's index in the run.
    s: usize,
    out: StratOutcome,
    /// The previous call's prompt, when it rendered.
    prev: Option<Vec<Message>>,
    scans: RetentionScans,
    /// Per tokenizer: the previous call's counts.
    mems: Vec<TokenMemory>,
    /// Per tokenizer: each message's content tokens in the current call.
    counts: Vec<Vec<u32>>,
    /// The strategy's replay of the session.
    replay: Box<dyn Replay>,
    /// For the determinism check: a second, independent replay of the session, every
    /// call rendered through it too, so that a stateful shortcut cannot vouch for
    /// itself.
    second: Option<Box<dyn Replay>>,
    /// Whether the second replay's last render equalled the first's, so that it too
    /// rendered the prompt held in `prev` (and may answer relative to it).
    second_in_step: bool,
    /// Where the checks last found the session's verbatim texts in this strategy's
    /// prompts.
    sightings: Sightings,
}

impl<'r> StrategyPass<'r> {
    fn new(runner: &'r SessionRunner<'r>, s: usize, session: &Session) -> Self {
        let ntok = runner.cfg.tokenizers.len();
        let strategy = runner.cfg.strategies[s].strategy.as_ref();
        let (replay, second) = if runner.checked[s] {
            let [first, second] = strategy.open_pair();
            (first, Some(second))
        } else {
            (strategy.open(), None)
        };
        StrategyPass {
            runner,
            s,
            out: StratOutcome {
                applicable: true,
                complete: true,
                render_ns: Vec::with_capacity(calls(session).len()),
                toks: vec![TokOutcome::default(); ntok],
                ..StratOutcome::default()
            },
            prev: None,
            scans: RetentionScans::default(),
            mems: vec![TokenMemory::default(); ntok],
            counts: vec![Vec::new(); ntok],
            replay,
            second,
            second_in_step: false,
            sightings: Sightings::new(),
        }
    }

    fn strategy(&self) -> &'r dyn Strategy {
        self.runner.cfg.strategies[self.s].strategy.as_ref()
    }

    /// Renders call `k` (timed) and checks the render; `None` when it has no prompt.
    fn render_checked(
        &mut self,
        session: &Session,
        k: usize,
        print_lines: &OnceCell<PrintLines>,
    ) -> Option<RenderedCall> {
        // A call past the session's budget has no prompt: report it, never render it.
        if let Err(e) = RenderRequest::for_call(session, k) {
            self.out.complete = false;
            self.out.render_errors.push(CallError {
                call: k,
                error: RenderError::new("request", e.to_string()),
            });
            return None;
        }
        let held = self.prev.as_ref().map_or(0, Vec::len);
        let start = Instant::now();
        let rendered = render_guarded(&mut self.replay, session, k, held);
        self.out.render_ns.push(start.elapsed().as_nanos() as u64);
        match rendered {
            Ok(delta) => Some(self.check(session, k, held, delta, print_lines)),
            Err(error) => {
                if error.kind == PANIC {
                    // A replay that panicked may be half-updated: a new one, from scratch.
                    self.replay = self.strategy().open();
                }
                self.out.complete = false;
                self.out.render_errors.push(CallError { call: k, error });
                // The next call has nothing to share a prefix or counts with.
                self.prev = None;
                self.second_in_step = false;
                self.scans.forget();
                self.mems
                    .iter_mut()
                    .for_each(|m| *m = TokenMemory::default());
                None
            }
        }
    }

    /// The declared invariants, with a second render for determinism when the strategy
    /// is checked; builds the call's prompt from `delta` in place of the previous one
    /// (`held` messages long).
    fn check(
        &mut self,
        session: &Session,
        k: usize,
        held: usize,
        delta: PromptDelta,
        print_lines: &OnceCell<PrintLines>,
    ) -> RenderedCall {
        let previous: &[Message] = self.prev.as_deref().unwrap_or_default();
        let second = self.second.as_mut().map(|replay| {
            let second_held = if self.second_in_step { held } else { 0 };
            render_guarded(replay, session, k, second_held)
        });
        // The two renders compared where they may differ, neither built whole; one that
        // differs is built whole for the rule to say where.
        let same = second
            .as_ref()
            .is_some_and(|r| r.as_ref().is_ok_and(|d| same_prompt(previous, &delta, d)));
        let second_whole = match &second {
            Some(Ok(d)) if !same => Some(d.apply(previous)),
            _ => None,
        };
        self.second_in_step = same;
        if matches!(&second, Some(Err(e)) if e.kind == PANIC) {
            self.second = Some(self.strategy().open());
        }

        let kept = delta.kept;
        let had_previous = self.prev.is_some();
        let mut messages = self.prev.take().unwrap_or_default();
        let removed = delta.apply_in_place(&mut messages);
        let call = RenderedCall {
            messages,
            kept,
            removed,
            had_previous,
        };
        let declared = &self.runner.declared[self.s];
        // The previous prompt whole, which only the append-only rule reads, so only for
        // the strategies that declare it: free unless the call kept some of it and
        // dropped or replaced the rest (a masking strategy does so at most calls, and
        // building it whole there would copy what the delta spared).
        let previous = call
            .previous()
            .filter(|_| declared.contains(&Invariant::AppendOnly));
        let previous_whole = previous
            .filter(|p| p.as_slice().is_none())
            .map(|p| p.iter().cloned().collect::<Vec<_>>());
        let previous = previous_whole
            .as_deref()
            .or_else(|| previous.and_then(|p| p.as_slice()));

        let print_lines = declared
            .iter()
            .any(|d| matches!(d, Invariant::Limits { .. }))
            .then(|| print_lines.get_or_init(|| PrintLines::of(session)));
        let ctx = CheckContext {
            session,
            k,
            messages: &call.messages,
            previous,
            second_render: if same {
                Some(&call.messages)
            } else {
                second_whole.as_deref()
            },
            print_lines,
            sightings: Some(&self.sightings),
        };
        self.out
            .violations
            .extend((self.runner.cfg.checker)(declared, &ctx));
        if let Some(Err(e)) = &second {
            self.out.violations.push(Violation {
                call: k,
                invariant: Invariant::Deterministic.id(),
                detail: format!("the first render succeeded, the second failed: {e}"),
            });
        }
        // Checked: the second render (and the previous prompt, when built whole) are
        // freed as this returns, before the prompt is tokenized, so they are not held at
        // the peak of a call with a huge print (tokenizing needs many times the text's
        // size).
        call
    }

    fn retention<'m>(
        &mut self,
        k: usize,
        messages: &'m [Message],
        diff: &CallDiff,
        retention: &SessionRetention,
        lines: &mut CallLines<'_, 'm>,
    ) {
        let call = self.scans.mark(retention, k, messages, &diff.reuse, lines);
        self.out.facts += call.facts;
        self.out.retained += call.retained;
    }

    /// Counts call `k` under every tokenizer; returns its prompt tokens per tokenizer.
    #[allow(clippy::too_many_arguments)]
    fn count_tokens<'m>(
        &mut self,
        session: &Session,
        k: usize,
        messages: &'m [Message],
        prev: Option<Prev<'_>>,
        diff: &CallDiff,
        counts: &mut [SegmentCounts],
        lines: &mut CallLines<'_, 'm>,
    ) -> Vec<u64> {
        let cfg = &*self.runner.cfg;
        let recorded = if self.s == cfg.baseline || self.runner.replays_record[self.s] {
            recorded_input(session, k).filter(|&r| r > 0)
        } else {
            None
        };
        let mut prompt_tokens = Vec::with_capacity(cfg.tokenizers.len());
        for (t, tok) in cfg.tokenizers.iter().enumerate() {
            let CallTokens { prompt, cached } = count_call(
                tok,
                &self.runner.roles[t],
                prev,
                messages,
                diff,
                &mut self.mems[t],
                &mut counts[t],
                lines,
                &mut self.counts[t],
            );
            let o = &mut self.out.toks[t];
            o.per_call.push(prompt);
            o.cached += cached;
            if let Some(recorded) = recorded {
                o.fidelity.push(prompt as f64 / recorded as f64);
            }
            prompt_tokens.push(prompt);
        }
        prompt_tokens
    }

    fn dump(
        &mut self,
        corpus: &str,
        session: &Session,
        k: usize,
        messages: &[Message],
        prompt_tokens: &[u64],
    ) {
        let at = DumpedCall {
            corpus,
            session: &session.id,
            call: k,
            strategy: &self.runner.cfg.strategies[self.s].name,
        };
        let line = dump_line(&self.runner.cfg, at, messages, &self.counts, prompt_tokens);
        self.out.dumps.push(line);
    }

    fn finish(self) -> StratOutcome {
        let mut out = self.out;
        for (o, m) in out.toks.iter_mut().zip(&self.mems) {
            o.tokenized = m.tokenized;
            o.reused = m.reused;
        }
        if !out.complete {
            // Totals over part of a session would compare unequal things; the errors say why.
            for o in &mut out.toks {
                o.per_call.clear();
                o.cached = 0;
                o.fidelity.clear();
            }
            out.facts = 0;
            out.retained = 0;
        }
        out
    }
}

/// Whether two renders of a call, each relative to the `previous` prompt, are the same
/// prompt: compared only after the messages both kept.
fn same_prompt(previous: &[Message], a: &PromptDelta, b: &PromptDelta) -> bool {
    if a.kept + a.tail.len() != b.kept + b.tail.len() {
        return false;
    }
    // After the shorter kept run, the one that kept less has its tail where the other
    // still has previous messages, then the other's tail.
    let (less, more) = if a.kept <= b.kept { (a, b) } else { (b, a) };
    let gap = more.kept - less.kept;
    less.tail[..gap] == previous[less.kept..more.kept] && less.tail[gap..] == more.tail[..]
}

/// The kind of the render error a panic in a replay is reported as.
const PANIC: &str = "panic";

/// Renders call `k` through `replay`, relative to the prompt of `held` messages the
/// caller holds from its last render; a panic or a delta keeping more than was held is
/// a render error of the call.
fn render_guarded(
    replay: &mut Box<dyn Replay>,
    session: &Session,
    k: usize,
    held: usize,
) -> Result<PromptDelta, RenderError> {
    // A strategy (a plugin, say) that panics must not take the run down: the panic is
    // reported as a render error of that call.
    let rendered = catch_unwind(AssertUnwindSafe(|| replay.call(session, k, held)));
    match rendered {
        Ok(r) => r.and_then(|delta| delta.within(held)),
        Err(payload) => {
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "non-string panic payload".to_string());
            Err(RenderError::new(PANIC, msg))
        }
    }
}
