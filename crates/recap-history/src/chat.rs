//! The chat-form *history* that the chat strategies cut, mask and clear: every turn
//! message (each ASSISTANT response and each observation) in order, with what each one
//! costs in tokens, built once per session and extended as calls advance; and the
//! replay of a strategy that plans its prompts from it ([`Planner`], [`planned`]).

use recap_core::tokens::message_tokens;
use recap_core::{
    Answer, ChatTurn, Message, Observation, PromptDelta, RenderRequest, Replay, Session,
    TokenCounter,
};

/// The history messages of a session's first `k` chat turns, kept across its calls.
#[derive(Debug, Default)]
pub struct History {
    messages: Vec<Message>,
    /// Per message: environment output (a TOOL result or a USER observation marked
    /// `environment`), which masking strategies may replace.
    environment: Vec<bool>,
    /// Per message: whether the history may be cut there (a suffix start there, or a
    /// head ending just before it) without separating a tool result from its call —
    /// true at each response, and at an observation after which its turn holds no more
    /// TOOL results.
    safe_cut: Vec<bool>,
    /// `turn_ends[i]`: the number of history messages once turn `i + 1` is complete.
    turn_ends: Vec<usize>,
    /// Token counts of the messages (SPEC 11.2 per message), [`UNCOUNTED`] until a
    /// strategy with a budget asks for them.
    tokens: Vec<u64>,
    /// How many leading messages are counted (the rest may be counted out of order).
    counted: usize,
    /// Token counts of the opening SYSTEM and USER(mission) messages, once asked for:
    /// the same at every call of a session.
    opening: Option<[u64; 2]>,
    /// The opening messages themselves, rendered once: every call shares their text.
    opening_messages: Option<[Message; 2]>,
    /// The plan of the last prompt rendered from this history ([`History::answer`]).
    last_plan: Option<Plan>,
}

/// Where a message of a chat strategy's prompt comes from. A strategy that renders
/// from the [`History`] describes its prompt as a [`Plan`] of sources: two calls'
/// prompts then agree exactly as far as their plans do, which is found by comparing
/// indices rather than messages, and only the messages after that are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    /// The SYSTEM message of the opening.
    System,
    /// The USER(mission) message of the opening.
    Mission,
    /// History message `i`, verbatim.
    Kept(usize),
    /// History message `i` as the strategy changes it; `variant` tells apart the ways a
    /// strategy changes one message, and must give the same message at every call of a
    /// session.
    Changed(usize, u32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Part {
    One(Source),
    /// History messages `start..end`, verbatim.
    Run(usize, usize),
}

/// A chat prompt as the [`Source`] of each message, in order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    parts: Vec<Part>,
    len: usize,
}

impl Plan {
    pub fn new() -> Self {
        Plan::default()
    }

    /// The opening `[SYSTEM, USER(mission)]`.
    pub fn opening() -> Self {
        let mut plan = Plan::new();
        plan.push(Source::System);
        plan.push(Source::Mission);
        plan
    }

    pub fn push(&mut self, source: Source) {
        match (self.parts.last_mut(), source) {
            (Some(Part::Run(_, end)), Source::Kept(i)) if *end == i => *end += 1,
            _ => self.parts.push(match source {
                Source::Kept(i) => Part::Run(i, i + 1),
                other => Part::One(other),
            }),
        }
        self.len += 1;
    }

    /// History messages `range`, verbatim.
    pub fn push_run(&mut self, range: std::ops::Range<usize>) {
        if range.is_empty() {
            return;
        }
        self.len += range.len();
        match self.parts.last_mut() {
            Some(Part::Run(_, end)) if *end == range.start => *end = range.end,
            _ => self.parts.push(Part::Run(range.start, range.end)),
        }
    }

    /// Messages in the prompt.
    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How many leading messages the two prompts share: compared run by run.
    pub fn common_prefix(&self, other: &Plan) -> usize {
        let (mut a, mut b) = (self.parts.iter().copied(), other.parts.iter().copied());
        let (mut x, mut y) = (a.next(), b.next());
        let mut shared = 0;
        loop {
            match (x, y) {
                (Some(Part::One(s)), Some(Part::One(t))) if s == t => {
                    shared += 1;
                    (x, y) = (a.next(), b.next());
                }
                (Some(Part::Run(s, e)), Some(Part::Run(t, f))) if s == t => {
                    let n = (e - s).min(f - t);
                    shared += n;
                    // The longer run goes on after the shorter one.
                    x = if s + n < e {
                        Some(Part::Run(s + n, e))
                    } else {
                        a.next()
                    };
                    y = if t + n < f {
                        Some(Part::Run(t + n, f))
                    } else {
                        b.next()
                    };
                }
                // A run never holds a kept message that is also a `One`: `push` turns
                // `Kept` into runs, so anything else differs here.
                _ => return shared,
            }
        }
    }

    /// The prompt's messages from the `from`-th on; `changed` builds a
    /// [`Source::Changed`] message.
    pub fn messages_from(
        &self,
        from: usize,
        msgs: &[Message],
        opening: &[Message; 2],
        mut changed: impl FnMut(usize, &Message, u32) -> Message,
    ) -> Vec<Message> {
        let mut out = Vec::with_capacity(self.len.saturating_sub(from));
        let mut at = 0;
        for part in &self.parts {
            match *part {
                Part::Run(start, end) => {
                    let skip = from.saturating_sub(at).min(end - start);
                    out.extend_from_slice(&msgs[start + skip..end]);
                    at += end - start;
                }
                Part::One(source) => {
                    if at >= from {
                        out.push(match source {
                            Source::System => opening[0].clone(),
                            Source::Mission => opening[1].clone(),
                            Source::Kept(i) => msgs[i].clone(),
                            Source::Changed(i, variant) => changed(i, &msgs[i], variant),
                        });
                    }
                    at += 1;
                }
            }
        }
        out
    }
}

/// A chat strategy that describes each prompt as a [`Plan`] over the session's
/// [`History`]: its replay ([`planned`]) extends the history call by call and builds
/// only the messages after those the previous prompt's plan shares.
pub trait Planner: 'static {
    /// The prompt of `request`'s call, planned over `history` (extended to its turns).
    /// May keep per-session work of its own (`&mut self`): a planner is one replay's.
    fn plan(&mut self, request: &RenderRequest<'_>, history: &mut History) -> Plan;

    /// History message `i`, `message`, as the strategy changes it (a
    /// [`Source::Changed`] of `variant`). The default is for plans without changes.
    fn changed(&self, i: usize, message: &Message, variant: u32) -> Message {
        let _ = (i, variant);
        message.clone()
    }
}

/// The replay of `planner`'s strategy.
pub fn planned(planner: impl Planner) -> Box<dyn Replay> {
    Box::new(Planned {
        planner,
        history: History::default(),
    })
}

struct Planned<P> {
    planner: P,
    history: History,
}

impl<P: Planner> Replay for Planned<P> {
    fn call(&mut self, session: &Session, k: usize, held: usize) -> Answer {
        let request = RenderRequest::for_call(session, k)?;
        self.history.advance(&request);
        let plan = self.planner.plan(&request, &mut self.history);
        let planner = &self.planner;
        Ok(self
            .history
            .answer(plan, held, &request, |i, m, v| planner.changed(i, m, v)))
    }
}

/// A message not counted yet (no message counts `u64::MAX` tokens).
const UNCOUNTED: u64 = u64::MAX;

impl History {
    /// The history after the request's completed turns, built at once.
    pub fn of_request(request: &RenderRequest<'_>) -> Self {
        let mut h = History::default();
        h.extend(request.chat_turns);
        h
    }

    /// Extends the history to the request's completed turns (those of the session it
    /// holds the first turns of).
    pub fn advance(&mut self, request: &RenderRequest<'_>) {
        let done = self.turn_ends.len();
        self.extend(&request.chat_turns[done.min(request.chat_turns.len())..]);
    }

    fn extend(&mut self, turns: &[ChatTurn]) {
        for turn in turns {
            self.messages.extend(turn.messages());
            self.environment.push(false);
            self.environment
                .extend(turn.observations.iter().map(|o| o.is_environment()));
            let last_tool = turn
                .observations
                .iter()
                .rposition(|o| matches!(o, Observation::Tool { .. }));
            self.safe_cut.push(true);
            self.safe_cut.extend(
                (0..turn.observations.len()).map(|j| last_tool.is_none_or(|last| j > last)),
            );
            self.turn_ends.push(self.messages.len());
        }
        self.tokens.resize(self.messages.len(), UNCOUNTED);
    }

    pub fn messages(&self) -> &[Message] {
        &self.messages
    }

    /// `[SYSTEM, USER(mission)]` ([`crate::opening`]), rendered once per session.
    pub fn opening(&mut self, request: &RenderRequest<'_>) -> &[Message; 2] {
        self.opening_messages
            .get_or_insert_with(|| crate::opening_pair(request))
    }

    /// The messages of `plan` from the `from`-th on.
    pub fn build(
        &mut self,
        plan: &Plan,
        from: usize,
        request: &RenderRequest<'_>,
        changed: impl FnMut(usize, &Message, u32) -> Message,
    ) -> Vec<Message> {
        let History {
            messages,
            opening_messages,
            ..
        } = self;
        let opening = opening_messages.get_or_insert_with(|| crate::opening_pair(request));
        plan.messages_from(from, messages, opening, changed)
    }

    /// The prompt of `plan` as what it keeps of the last prompt rendered from this
    /// history, when the caller holds that one (`held`, its length); remembers `plan`
    /// as the last.
    pub fn answer(
        &mut self,
        plan: Plan,
        held: usize,
        request: &RenderRequest<'_>,
        changed: impl FnMut(usize, &Message, u32) -> Message,
    ) -> PromptDelta {
        let kept = match &self.last_plan {
            Some(last) if held > 0 && last.len() == held => plan.common_prefix(last),
            _ => 0,
        };
        let tail = self.build(&plan, kept, request, changed);
        self.last_plan = Some(plan);
        PromptDelta { kept, tail }
    }

    /// Whether history message `i` is environment output.
    pub fn is_environment(&self, i: usize) -> bool {
        self.environment[i]
    }

    /// Completed turns this history holds.
    pub fn turns(&self) -> usize {
        self.turn_ends.len()
    }

    /// The index of the first history message of turn `i` (0-based).
    pub fn turn_start(&self, i: usize) -> usize {
        if i == 0 { 0 } else { self.turn_ends[i - 1] }
    }

    /// Per-message token counts, each message counted once per session.
    pub fn tokens(&mut self, counter: &dyn TokenCounter) -> &[u64] {
        for i in self.counted..self.messages.len() {
            self.message_tokens(counter, i);
        }
        self.counted = self.messages.len();
        &self.tokens
    }

    /// The token count of history message `i`, counted once per session: for
    /// strategies that need only some messages' counts (a suffix within a budget).
    pub fn message_tokens(&mut self, counter: &dyn TokenCounter, i: usize) -> u64 {
        if self.tokens[i] == UNCOUNTED {
            self.tokens[i] = message_tokens(counter, &self.messages[i]);
        }
        self.tokens[i]
    }

    /// The token counts of the prompt's opening `[SYSTEM, USER(mission)]` (what
    /// [`crate::opening`] renders), counted once per session.
    pub fn opening_tokens(
        &mut self,
        counter: &dyn TokenCounter,
        request: &RenderRequest<'_>,
    ) -> [u64; 2] {
        *self.opening.get_or_insert_with(|| {
            [
                message_tokens(counter, &Message::system(request.system_prompt)),
                message_tokens(counter, &Message::user(request.mission)),
            ]
        })
    }
}

impl History {
    /// The first index at or after `start` (and at most `end`, a turn boundary) where
    /// the history can be cut without orphaning a tool result: the start of a suffix
    /// that holds no result whose call lies before it, or the end of a head that leaves
    /// no result of its calls behind.
    pub fn next_safe_cut(&self, start: usize, end: usize) -> usize {
        (start..end).find(|&i| self.safe_cut[i]).unwrap_or(end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_gen::chat::ChatSessionBuilder;

    #[test]
    fn cached_history_equals_a_fresh_one_at_every_call() {
        let s = ChatSessionBuilder::new("m")
            .tool_turn("a", &[("c1", "f", "{}")], &["r1"])
            .text_turn("thinking", &["user says"])
            .tool_turn("", &[("c2", "g", "{}"), ("c3", "g", "{}")], &["r2", "r3"])
            .build();
        let mut cached = History::default();
        for k in [0, 1, 3] {
            let request = RenderRequest::for_call(&s, k).unwrap();
            let fresh = History::of_request(&request);
            cached.advance(&request);
            assert_eq!(cached.messages(), fresh.messages(), "call {k}");
            assert_eq!(cached.turns(), k);
        }
    }

    #[test]
    fn safe_cuts_never_separate_a_result_from_its_call() {
        // Turn 1: call c1, c2; observations tool c1, user "hey", tool c2, user "bye".
        let s = ChatSessionBuilder::new("m")
            .turn(
                "a",
                &[("c1", "f", "{}"), ("c2", "f", "{}")],
                vec![
                    Observation::Tool {
                        tool_call_id: "c1".into(),
                        name: None,
                        content: "r1".into(),
                        is_error: false,
                    },
                    Observation::User {
                        content: "hey".into(),
                        environment: false,
                    },
                    Observation::Tool {
                        tool_call_id: "c2".into(),
                        name: None,
                        content: "r2".into(),
                        is_error: false,
                    },
                    Observation::User {
                        content: "bye".into(),
                        environment: false,
                    },
                ],
            )
            .text_turn("b", &["u"])
            .build();
        let request = RenderRequest::for_call(&s, 2).unwrap();
        let h = History::of_request(&request);
        let end = h.messages().len();
        assert_eq!(h.next_safe_cut(0, end), 0);
        // Inside turn 1 the first safe cut is after its last result.
        for start in 1..=4 {
            assert_eq!(h.next_safe_cut(start, end), 4, "start {start}");
        }
        assert_eq!(h.next_safe_cut(5, end), 5);
        assert_eq!(h.next_safe_cut(1, 3), 3, "never past the end given");
    }
}
