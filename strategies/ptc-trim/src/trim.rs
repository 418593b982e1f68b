//! The trim algorithm of the original's compaction (`Compaction.Trim.run/3` at the last
//! commit that had it): when under pressure, keep the first USER message and the last
//! `2 × keep_recent_turns` messages, realigned so that the kept tail starts with USER.

use recap_core::{Message, Role};
use std::ops::Range;

/// The normalized `compaction: [strategy: :trim, …]` configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrimConfig {
    /// Turn pressure: fires when the turn being generated is greater than this.
    pub trigger_turns: Option<u64>,
    /// Token pressure: fires when the estimated tokens of all messages reach this.
    pub trigger_tokens: Option<u64>,
    pub keep_recent_turns: usize,
    pub keep_initial_user: bool,
}

impl Default for TrimConfig {
    /// `compaction: true`: `trigger: [turns: 8], keep_recent_turns: 3,
    /// keep_initial_user: true`.
    fn default() -> Self {
        Self {
            trigger_turns: Some(8),
            trigger_tokens: None,
            keep_recent_turns: 3,
            keep_initial_user: true,
        }
    }
}

/// Why the trim fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reason {
    TurnPressure,
    TokenPressure,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::TurnPressure => "turn_pressure",
            Reason::TokenPressure => "token_pressure",
        }
    }
}

/// The stats the original returned beside the messages (same shape whether or not it
/// fired).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrimStats {
    pub triggered: bool,
    pub reason: Option<Reason>,
    pub messages_before: usize,
    pub messages_after: usize,
    pub estimated_tokens_before: u64,
    pub estimated_tokens_after: u64,
    pub kept_initial_user: bool,
    pub kept_recent_turns: usize,
    pub over_budget: bool,
}

/// The original's pressure heuristic: 0 for an empty text, else `max(1, chars / 4)`.
pub fn estimate_tokens(content: &str) -> u64 {
    if content.is_empty() {
        0
    } else {
        (content.chars().count() as u64 / 4).max(1)
    }
}

/// What the trim reads of a transcript: its length, and each message's role and token
/// estimate. The strategy implements it over a session without rendering the messages
/// (and with cached counts), so that a call costs what it keeps, not the whole history.
pub trait Transcript {
    fn message_count(&self) -> usize;
    fn role(&self, i: usize) -> Role;
    /// [`estimate_tokens`] of message `i`'s content.
    fn tokens(&self, i: usize) -> u64;
    /// The estimates of messages `range` summed.
    fn tokens_in(&self, range: Range<usize>) -> u64 {
        range.map(|i| self.tokens(i)).sum()
    }
}

impl Transcript for [Message] {
    fn message_count(&self) -> usize {
        self.len()
    }

    fn role(&self, i: usize) -> Role {
        self[i].role
    }

    fn tokens(&self, i: usize) -> u64 {
        estimate_tokens(&self[i].content)
    }
}

/// Which messages a call keeps: the first one when `keep_head`, then `tail`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// Why it trimmed; `None` when every message is kept (`tail` is all of them).
    pub reason: Option<Reason>,
    pub keep_head: bool,
    pub tail: Range<usize>,
}

impl Plan {
    /// The kept indices, in order.
    pub fn kept(&self) -> impl Iterator<Item = usize> + '_ {
        self.keep_head
            .then_some(0)
            .into_iter()
            .chain(self.tail.clone())
    }

    pub fn kept_len(&self) -> usize {
        usize::from(self.keep_head) + self.tail.len()
    }
}

/// Runs the trim over the LLM-input messages (no SYSTEM message) for the call that
/// generates turn `turn` (1-based). Returns the indices of the kept messages, in order,
/// and the stats.
pub fn run(messages: &[Message], turn: u64, config: &TrimConfig) -> (Vec<usize>, TrimStats) {
    let (plan, stats) = run_on(messages, turn, config);
    (plan.kept().collect(), stats)
}

/// [`run`] over any [`Transcript`].
pub fn run_on<T: Transcript + ?Sized>(
    transcript: &T,
    turn: u64,
    config: &TrimConfig,
) -> (Plan, TrimStats) {
    let mut total = None;
    let plan = decide(transcript, turn, config, &mut total);
    let n = transcript.message_count();
    let tokens_before = *total.get_or_insert_with(|| transcript.tokens_in(0..n));
    let stats = match plan.reason {
        None => TrimStats {
            triggered: false,
            reason: None,
            messages_before: n,
            messages_after: n,
            estimated_tokens_before: tokens_before,
            estimated_tokens_after: tokens_before,
            kept_initial_user: false,
            kept_recent_turns: config.keep_recent_turns,
            over_budget: false,
        },
        Some(reason) => TrimStats {
            triggered: true,
            reason: Some(reason),
            messages_before: n,
            messages_after: plan.kept_len(),
            estimated_tokens_before: tokens_before,
            estimated_tokens_after: plan.kept().map(|i| transcript.tokens(i)).sum(),
            kept_initial_user: plan.keep_head,
            kept_recent_turns: config.keep_recent_turns,
            over_budget: config
                .trigger_tokens
                .is_some_and(|budget| plan.kept().any(|i| transcript.tokens(i) > budget)),
        },
    };
    (plan, stats)
}

/// What [`run_on`] keeps, without its stats: the transcript's total is summed only when
/// the token trigger has to be consulted, so under the turn trigger alone a call reads
/// nothing but roles.
pub fn plan<T: Transcript + ?Sized>(transcript: &T, turn: u64, config: &TrimConfig) -> Plan {
    decide(transcript, turn, config, &mut None)
}

/// The decision of [`run_on`]; leaves the total in `total` when it had to compute it.
fn decide<T: Transcript + ?Sized>(
    transcript: &T,
    turn: u64,
    config: &TrimConfig,
    total: &mut Option<u64>,
) -> Plan {
    let n = transcript.message_count();
    let untouched = Plan {
        reason: None,
        keep_head: false,
        tail: 0..n,
    };
    let reason = if config.trigger_turns.is_some_and(|t| turn > t) {
        Reason::TurnPressure
    } else if config
        .trigger_tokens
        .is_some_and(|t| *total.get_or_insert_with(|| transcript.tokens_in(0..n)) >= t)
    {
        Reason::TokenPressure
    } else {
        return untouched;
    };

    let head_is_user = n > 0 && transcript.role(0) == Role::User;
    let keep_head = config.keep_initial_user && head_is_user;
    let min_required = config.keep_recent_turns * 2 + usize::from(keep_head);
    if n <= min_required {
        return untouched;
    }
    let skip = usize::from(keep_head);
    Plan {
        reason: Some(reason),
        keep_head,
        tail: recent(transcript, config.keep_recent_turns * 2, skip),
    }
}

/// Indices of the last `want` messages not counting the first `skip`; while the slice
/// starts with an ASSISTANT message it shrinks by one from the front.
fn recent<T: Transcript + ?Sized>(transcript: &T, want: usize, skip: usize) -> Range<usize> {
    let len = transcript.message_count();
    let available = len.saturating_sub(skip);
    let mut n = want.min(available);
    while n > 0 && transcript.role(len - n) == Role::Assistant {
        n -= 1;
    }
    len - n..len
}

#[cfg(test)]
mod tests {
    use super::*;

    fn alternating(n: usize) -> Vec<Message> {
        (0..n)
            .map(|i| {
                if i % 2 == 0 {
                    Message::user(format!("u{i}"))
                } else {
                    Message::assistant(format!("a{i}"))
                }
            })
            .collect()
    }

    #[test]
    fn turn_pressure_keeps_head_and_recent_pairs() {
        let msgs = alternating(12);
        let cfg = TrimConfig {
            trigger_turns: Some(5),
            keep_recent_turns: 2,
            ..TrimConfig::default()
        };
        let (kept, stats) = run(&msgs, 6, &cfg);
        assert_eq!(kept, vec![0, 8, 9, 10, 11]);
        assert_eq!(stats.reason, Some(Reason::TurnPressure));
        assert!(stats.kept_initial_user);
        // turn == trigger does not fire
        assert!(!run(&msgs, 5, &cfg).1.triggered);
    }

    #[test]
    fn tail_realigns_to_start_with_user() {
        let msgs = alternating(7);
        let cfg = TrimConfig {
            trigger_turns: Some(1),
            keep_recent_turns: 2,
            ..TrimConfig::default()
        };
        let (kept, _) = run(&msgs, 5, &cfg);
        assert_eq!(kept, vec![0, 4, 5, 6]);
    }

    #[test]
    fn too_few_messages_is_untouched() {
        let msgs = alternating(2);
        let (kept, stats) = run(&msgs, 50, &TrimConfig::default());
        assert_eq!(kept, vec![0, 1]);
        assert!(!stats.triggered);
        assert_eq!(stats.estimated_tokens_before, 2);
    }

    #[test]
    fn token_heuristic() {
        assert_eq!(estimate_tokens(""), 0);
        assert_eq!(estimate_tokens("ab"), 1);
        assert_eq!(estimate_tokens("0123456789"), 2);
        assert_eq!(estimate_tokens("ééééé"), 1);
    }
}
