//! The `ptc-trim` strategy: the original ptc_runner project's later replacement for
//! compression, a pressure-triggered rolling trim over the raw transcript
//! (`compaction: [strategy: :trim]`).
//!
//! The transcript is what `full-history` renders; when the turn being generated is
//! past `trigger_turns` (or the estimated tokens reach `trigger_tokens`) the middle is
//! dropped: the first USER message (the mission) and the last `2 × keep_recent_turns`
//! messages stay, the tail realigned to start with USER.
//!
//! Faithful consequences that break invariants other strategies keep (see
//! `docs/ptc-runner.md`): a trimmed prompt has two USER messages in a row (the mission,
//! then the first kept feedback), so role alternation does not hold once it fires; with
//! `keep_initial_user=false` the mission is dropped.

pub mod config;
pub mod trim;

use recap_core::{
    Answer, Invariant, Message, OptionInfo, PromptDelta, RenderRequest, Replay, Role, Session,
    SpecError, Strategy, StrategyInfo, StrategySpec, each_call, reference_first,
};
use std::borrow::Cow;
use std::sync::Arc;
use trim::TrimConfig;

pub const NAME: &str = "ptc-trim";

/// The strategy with its normalized configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PtcTrim {
    pub config: TrimConfig,
}

const KEYS: [&str; 4] = [
    "trigger_turns",
    "trigger_tokens",
    "keep_recent_turns",
    "keep_initial_user",
];

pub fn info() -> StrategyInfo {
    let opt = |key: &str, default: &str, help: &str| OptionInfo {
        key: key.to_string(),
        default: default.to_string(),
        help: help.to_string(),
    };
    StrategyInfo {
        name: NAME.to_string(),
        summary: "the original ptc_runner's later rolling trim (compaction :trim) over the \
                  full-history transcript; breaks role alternation once it fires"
            .to_string(),
        options: vec![
            opt(
                "trigger_turns",
                "8",
                "trim when the turn being generated is past this; giving either trigger \
                 replaces the default trigger",
            ),
            opt(
                "trigger_tokens",
                "none",
                "trim when the transcript's estimated tokens (chars/4) reach this",
            ),
            opt(
                "keep_recent_turns",
                "3",
                "turns (message pairs) kept at the end",
            ),
            opt(
                "keep_initial_user",
                "true",
                "keep the first USER message (the mission)",
            ),
        ],
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> {
    Ok(Arc::new(PtcTrim::from_spec(spec)?))
}

impl PtcTrim {
    pub fn from_spec(spec: &StrategySpec) -> Result<Self, SpecError> {
        if let Some(key) = spec.options.keys().find(|k| !KEYS.contains(&k.as_str())) {
            return Err(SpecError::UnknownOption {
                strategy: spec.name.clone(),
                key: key.clone(),
                known: KEYS.join(", "),
            });
        }
        let mut config = TrimConfig::default();
        let turns = config::spec_trigger(spec, "trigger_turns")?;
        let tokens = config::spec_trigger(spec, "trigger_tokens")?;
        // As in the original, a given trigger replaces the default one wholesale.
        if turns.is_some() || tokens.is_some() {
            config.trigger_turns = turns;
            config.trigger_tokens = tokens;
        } else if spec.options.contains_key("trigger_turns") {
            return Err(config::no_trigger_left(spec));
        }
        config.keep_recent_turns = spec.positive_int("keep_recent_turns", 3)? as usize;
        if let Some(v) = spec.options.get("keep_initial_user") {
            config.keep_initial_user = match v.as_str() {
                "true" => true,
                "false" => false,
                _ => {
                    return Err(SpecError::BadValue {
                        strategy: spec.name.clone(),
                        key: "keep_initial_user".into(),
                        value: v.clone(),
                        expected: "expected true or false".into(),
                    });
                }
            };
        }
        Ok(Self { config })
    }
}

impl Strategy for PtcTrim {
    fn spec(&self) -> String {
        let c = &self.config;
        let mut opts: Vec<String> = Vec::new();
        if c.keep_initial_user != TrimConfig::default().keep_initial_user {
            opts.push(format!("keep_initial_user={}", c.keep_initial_user));
        }
        if c.keep_recent_turns != TrimConfig::default().keep_recent_turns {
            opts.push(format!("keep_recent_turns={}", c.keep_recent_turns));
        }
        let default = TrimConfig::default();
        if (c.trigger_turns, c.trigger_tokens) != (default.trigger_turns, default.trigger_tokens) {
            if let Some(n) = c.trigger_tokens {
                opts.push(format!("trigger_tokens={n}"));
            }
            if let Some(n) = c.trigger_turns {
                opts.push(format!("trigger_turns={n}"));
            }
        }
        if opts.is_empty() {
            NAME.to_string()
        } else {
            format!("{NAME}:{}", opts.join(","))
        }
    }

    /// [`PtcTrim::render`] at every call; with a token trigger, first, and then with
    /// each message's estimate kept for the session (`TokenCache`).
    fn open(&self) -> Box<dyn Replay> {
        let strategy = *self;
        let reference = move |request: &RenderRequest<'_>| Ok(strategy.render(request));
        if self.config.trigger_tokens.is_none() {
            // Nothing is counted: the render already costs what it keeps.
            return each_call(reference);
        }
        reference_first(
            reference,
            Box::new(TokenCache {
                config: self.config,
                totals: Vec::new(),
            }),
        )
    }

    /// Kept: SYSTEM first, determinism, the turns line (the last feedback is never
    /// trimmed), and the mission only while it is kept. Role alternation, append-only and
    /// the failed-turns rule do not hold once it trims.
    fn invariants(&self) -> Vec<Invariant> {
        let mut out = vec![
            Invariant::SystemFirst,
            Invariant::Deterministic,
            Invariant::TurnsLine,
        ];
        if self.config.keep_initial_user {
            out.extend([Invariant::MissionVerbatim, Invariant::MissionLeadsFirstUser]);
        }
        out
    }
}

impl PtcTrim {
    /// The prompt and the trim's stats; the stats are `None` when compaction is off (a
    /// session with `max_turns = 1`, as in the original).
    pub fn render_with_stats(
        &self,
        request: &RenderRequest<'_>,
    ) -> (Vec<Message>, Option<trim::TrimStats>) {
        if let Some(full_history) = compaction_off(request) {
            return (full_history, None);
        }
        let (plan, stats) = trim::run_on(&Unrendered(request), turn(request), &self.config);
        (render_kept(request, &plan), Some(stats))
    }
}

/// The original turned compaction off for a single-shot session (`max_turns = 1`):
/// its prompt is the full-history transcript. `None` for any other session.
fn compaction_off(request: &RenderRequest<'_>) -> Option<Vec<Message>> {
    (request.max_turns <= 1).then(|| recap_history::render(request))
}

/// The turn the call generates, as the original numbered it.
fn turn(request: &RenderRequest<'_>) -> u64 {
    request.turns.len() as u64 + 1
}

/// The full-history transcript of a request (the LLM-input messages: the system prompt
/// excluded, as the original trimmed them), read in place: message 0 is the mission,
/// then each turn's reply and feedback.
impl PtcTrim {
    /// The prompt for a request; never fails.
    pub fn render(&self, request: &RenderRequest<'_>) -> Vec<Message> {
        if let Some(full_history) = compaction_off(request) {
            return full_history;
        }
        // Not `render_with_stats`: the stats need the whole transcript's total, which
        // only the token trigger needs for the decision.
        let plan = trim::plan(&Unrendered(request), turn(request), &self.config);
        render_kept(request, &plan)
    }
}

struct Unrendered<'r, 'a>(&'r RenderRequest<'a>);

impl trim::Transcript for Unrendered<'_, '_> {
    fn message_count(&self) -> usize {
        1 + 2 * self.0.turns.len()
    }

    fn role(&self, i: usize) -> Role {
        transcript_role(i)
    }

    fn tokens(&self, i: usize) -> u64 {
        trim::estimate_tokens(&transcript_text(self.0, i))
    }
}

fn transcript_role(i: usize) -> Role {
    if i % 2 == 1 {
        Role::Assistant
    } else {
        Role::User
    }
}

/// The content of transcript message `i` (see [`Unrendered`]), exactly as
/// `recap_history::render` writes it.
fn transcript_text<'a>(request: &RenderRequest<'a>, i: usize) -> Cow<'a, str> {
    if i == 0 {
        return Cow::Borrowed(request.mission);
    }
    let index = (i - 1) / 2;
    let turn = &request.turns[index];
    if i % 2 == 1 {
        Cow::Borrowed(turn.raw_response.as_str())
    } else {
        recap_history::feedback(turn, index + 1, request.max_turns)
    }
}

/// The prompt: the system prompt, then the transcript messages `plan` keeps, each
/// rendered only now so that a trimmed call never writes the dropped middle.
fn render_kept(request: &RenderRequest<'_>, plan: &trim::Plan) -> Vec<Message> {
    let mut out = Vec::with_capacity(1 + plan.kept_len());
    out.push(Message::system(request.system_prompt));
    out.extend(
        plan.kept()
            .map(|i| Message::new(transcript_role(i), transcript_text(request, i).into_owned())),
    );
    out
}

/// Per-session token estimates, the incremental replay of a token trigger: only that
/// trigger needs the whole transcript's total, and summing it anew each call would cost
/// the whole history per call. Each message is estimated once and kept as running
/// totals.
struct TokenCache {
    config: TrimConfig,
    /// `totals[j]`: the estimates of transcript messages `0..j` summed; starts `[0,
    /// mission]` (once a call asks) and grows by two entries (reply, feedback) per
    /// counted turn.
    totals: Vec<u64>,
}

impl Replay for TokenCache {
    fn call(&mut self, session: &Session, k: usize, _held: usize) -> Answer {
        let request = RenderRequest::for_call(session, k)?;
        if let Some(full_history) = compaction_off(&request) {
            return Ok(PromptDelta::whole(full_history));
        }
        self.extend(&request);
        let counted = Counted {
            totals: &self.totals[..2 + 2 * k],
        };
        let plan = trim::plan(&counted, turn(&request), &self.config);
        Ok(PromptDelta::whole(render_kept(&request, &plan)))
    }
}

impl TokenCache {
    fn counted(&self) -> usize {
        (self.totals.len() - 2) / 2
    }

    /// Counts the turns of `request` not counted yet.
    fn extend(&mut self, request: &RenderRequest<'_>) {
        if self.totals.is_empty() {
            self.totals = vec![0, trim::estimate_tokens(request.mission)];
        }
        let from = self.counted();
        if from >= request.turns.len() {
            return;
        }
        self.totals.reserve(2 * (request.turns.len() - from));
        for i in 2 * from + 1..1 + 2 * request.turns.len() {
            let before = self.totals.last().copied().unwrap_or(0);
            let tokens = trim::estimate_tokens(&transcript_text(request, i));
            self.totals.push(before + tokens);
        }
    }
}

/// The transcript of the first `k` turns, its estimates read from a [`TokenCache`]
/// counted that far.
struct Counted<'c> {
    totals: &'c [u64],
}

impl trim::Transcript for Counted<'_> {
    fn message_count(&self) -> usize {
        self.totals.len() - 1
    }

    fn role(&self, i: usize) -> Role {
        transcript_role(i)
    }

    fn tokens(&self, i: usize) -> u64 {
        self.totals[i + 1] - self.totals[i]
    }

    fn tokens_in(&self, range: std::ops::Range<usize>) -> u64 {
        self.totals[range.end] - self.totals[range.start]
    }
}
