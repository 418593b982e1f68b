//! The trim algorithm of the original's compaction (`Compaction.Trim.run/3` at the last
//! commit that had it): when under pressure, keep the first USER message and the last
//! `2 × keep_recent_turns` messages, realigned so that the kept tail starts with USER.

use recap_core::{Message, Role};

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

fn total_tokens<'a>(messages: impl IntoIterator<Item = &'a Message>) -> u64 {
    messages
        .into_iter()
        .map(|m| estimate_tokens(&m.content))
        .sum()
}

/// Runs the trim over the LLM-input messages (no SYSTEM message) for the call that
/// generates turn `turn` (1-based). Returns the indices of the kept messages, in order,
/// and the stats.
pub fn run(messages: &[Message], turn: u64, config: &TrimConfig) -> (Vec<usize>, TrimStats) {
    let tokens_before = total_tokens(messages);
    let untouched = |tokens| {
        (
            (0..messages.len()).collect::<Vec<_>>(),
            TrimStats {
                triggered: false,
                reason: None,
                messages_before: messages.len(),
                messages_after: messages.len(),
                estimated_tokens_before: tokens,
                estimated_tokens_after: tokens,
                kept_initial_user: false,
                kept_recent_turns: config.keep_recent_turns,
                over_budget: false,
            },
        )
    };
    let reason = if config.trigger_turns.is_some_and(|n| turn > n) {
        Reason::TurnPressure
    } else if config.trigger_tokens.is_some_and(|n| tokens_before >= n) {
        Reason::TokenPressure
    } else {
        return untouched(tokens_before);
    };

    let head_is_user = messages.first().is_some_and(|m| m.role == Role::User);
    let keep_head = config.keep_initial_user && head_is_user;
    let min_required = config.keep_recent_turns * 2 + usize::from(keep_head);
    if messages.len() <= min_required {
        return untouched(tokens_before);
    }

    let skip = usize::from(keep_head);
    let tail = recent(messages, config.keep_recent_turns * 2, skip);
    let mut kept: Vec<usize> = Vec::with_capacity(tail.len() + 1);
    if keep_head {
        kept.push(0);
    }
    kept.extend(tail);
    let tokens_after = total_tokens(kept.iter().map(|&i| &messages[i]));
    let over_budget = config.trigger_tokens.is_some_and(|budget| {
        kept.iter()
            .any(|&i| estimate_tokens(&messages[i].content) > budget)
    });
    let stats = TrimStats {
        triggered: true,
        reason: Some(reason),
        messages_before: messages.len(),
        messages_after: kept.len(),
        estimated_tokens_before: tokens_before,
        estimated_tokens_after: tokens_after,
        kept_initial_user: keep_head,
        kept_recent_turns: config.keep_recent_turns,
        over_budget,
    };
    (kept, stats)
}

/// Indices of the last `want` messages not counting the first `skip`; while the slice
/// starts with an ASSISTANT message it shrinks by one from the front.
fn recent(messages: &[Message], want: usize, skip: usize) -> std::ops::Range<usize> {
    let available = messages.len().saturating_sub(skip);
    let mut n = want.min(available);
    while n > 0 && messages[messages.len() - n].role == Role::Assistant {
        n -= 1;
    }
    messages.len() - n..messages.len()
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
