//! Prompt tokens and cache reuse of one call, reusing the previous call's work.
//!
//! Prompt tokens (SPEC section 9) = 3 + Σ (3 + tokens(role) + tokens(content)): each
//! message is `<|start|>role<|message|>content<|end|>` and the reply is primed with 3
//! tokens. Message contents are tokenized on their own, so a message whose content
//! equals a message of the previous call has the same count and is not tokenized again;
//! a changed message is counted line by line ([`crate::segments`]), and only the lines
//! not yet counted in the session (by any strategy, or by a strategy's token budget) are
//! tokenized. The lines are those of the session's [`LineStore`](crate::line_store::LineStore),
//! which retention reads too: a message text retention walked in this call is not looked
//! up again.
//!
//! Cache reuse: the tokens of a call that lie in the longest common prefix with the
//! previous call's prompt. Whole equal messages (role and content) count entirely; the
//! first differing message contributes the common prefix of the two messages' token
//! sequences: `<|start|>` always, then — when the roles agree — the role, `<|message|>`
//! and the common prefix of the content token ids. The 3 reply-priming tokens come after
//! the last message and are never counted as cached.

mod diff;

pub use diff::{CallDiff, Prev};

use crate::line_store::CallLines;
use crate::segments::segments;
use crate::tokenizer::{MESSAGE_OVERHEAD, PROMPT_OVERHEAD, Tokenizer};
use recap_core::{Message, Role, Text};

/// Per-session, per-strategy, per-tokenizer memory of the previous call.
#[derive(Debug, Default, Clone)]
pub struct TokenMemory {
    /// Content token counts of the previous call's messages.
    counts: Vec<u32>,
    /// Messages counted anew vs reused from the previous call, for tests and the
    /// efficiency report.
    pub tokenized: u64,
    pub reused: u64,
}

/// The run's counting of one session's lines under one tokenizer: the counts live in the
/// session's [`crate::line_store::LineStore`], shared by every strategy of the session
/// (they render many of the same lines); here are the statistics of what was tokenized
/// and what reused.
pub struct SegmentCounts {
    /// Split into lines (exact for this encoding) or count contents whole.
    split: bool,
    pub segments_tokenized: u64,
    pub segments_reused: u64,
}

impl SegmentCounts {
    pub fn new(tok: &Tokenizer) -> Self {
        SegmentCounts {
            split: tok.encoding().line_additive(),
            segments_tokenized: 0,
            segments_reused: 0,
        }
    }

    /// The count of the line with id `id`.
    #[inline]
    fn line(&mut self, tok: &Tokenizer, lines: &mut CallLines<'_, '_>, id: u32) -> u32 {
        let (n, met) = lines.run_count(tok, id);
        if met {
            self.segments_reused += 1;
        } else {
            self.segments_tokenized += 1;
        }
        n
    }

    fn segment(&mut self, tok: &Tokenizer, lines: &mut CallLines<'_, '_>, seg: &str) -> u32 {
        let id = lines.id(seg);
        self.line(tok, lines, id)
    }

    /// [`SegmentCounts::count`] of a message's text, remembered for a shared text; its
    /// lines are read once per call for every tokenizer and retention together
    /// ([`CallLines::walk_text`]).
    pub fn count_text<'m>(
        &mut self,
        tok: &Tokenizer,
        text: &'m Text,
        lines: &mut CallLines<'_, 'm>,
    ) -> u32 {
        if let Some((n, seen)) = lines.run_text_count(tok, text) {
            self.segments_reused += seen;
            return n;
        }
        let before = self.segments_tokenized + self.segments_reused;
        let n = if self.split {
            let walk = lines.walk_text(text);
            walk.map(|i| {
                let id = lines.walked_id(i);
                self.line(tok, lines, id)
            })
            .sum()
        } else {
            self.count(tok, lines, text)
        };
        let seen = self.segments_tokenized + self.segments_reused - before;
        lines.keep_run_text_count(tok, text, n, seen);
        n
    }

    /// The content token count of `text`.
    pub fn count(&mut self, tok: &Tokenizer, lines: &mut CallLines<'_, '_>, text: &str) -> u32 {
        if !self.split {
            return if text.is_empty() {
                0
            } else {
                self.segment(tok, lines, text)
            };
        }
        segments(text)
            .map(|seg| self.segment(tok, lines, seg))
            .sum()
    }

    /// Length of the common prefix of the token ids of `a` and `b` (contents tokenized
    /// on their own), `b` a message text of this call. Equal leading lines count whole
    /// from the cache, read by id from `b`'s walk ([`CallLines::walk_text`], most often
    /// retention's or the count's); only the first differing lines (and, rarely, those
    /// after them) are encoded.
    pub fn common_prefix<'m>(
        &mut self,
        tok: &Tokenizer,
        lines: &mut CallLines<'_, 'm>,
        a: &str,
        b: &'m Text,
    ) -> u64 {
        if !self.split {
            return stream_prefix(tok, [a].into_iter(), [&**b].into_iter());
        }
        let walk = lines.walk_text(b);
        let mut sa = segments(a);
        let mut common = 0u64;
        for i in walk.clone() {
            let id = lines.walked_id(i);
            let y = lines.line(id);
            match sa.next() {
                Some(x) if x == y => common += u64::from(self.line(tok, lines, id)),
                // Lines that differ in their first byte differ in their first token
                // (a token is a byte string, and distinct strings have distinct ids):
                // nothing more is common, and nothing needs encoding.
                Some(x) if x.as_bytes().first() != y.as_bytes().first() => return common,
                // From the first differing line on, compare the id streams token by
                // token (the ids of a text are the concatenation of its segments' ids).
                x => {
                    let rest = (i..walk.end).map(|j| lines.line(lines.walked_id(j)));
                    return common + stream_prefix(tok, x.into_iter().chain(sa), rest);
                }
            }
        }
        // Every line of `b` is a line of `a`: nothing after them is common.
        common
    }
}

/// Common prefix length of the concatenated ids of two sequences of texts, encoding
/// texts only as far as needed.
fn stream_prefix<'a>(
    tok: &Tokenizer,
    a: impl Iterator<Item = &'a str>,
    b: impl Iterator<Item = &'a str>,
) -> u64 {
    let mut ta = a.flat_map(|s| tok.encode(s));
    let mut tb = b.flat_map(|s| tok.encode(s));
    let mut common = 0;
    loop {
        match (ta.next(), tb.next()) {
            (Some(x), Some(y)) if x == y => common += 1,
            _ => return common,
        }
    }
}

/// Tokens of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CallTokens {
    pub prompt: u64,
    pub cached: u64,
}

/// Tokens of each role name (they are tiny and fixed).
#[derive(Debug, Clone, Copy)]
pub struct RoleTokens([u32; 4]);

impl RoleTokens {
    pub fn new(tok: &Tokenizer) -> Self {
        let n = |r: Role| tok.count_tokens(r.as_str()) as u32;
        RoleTokens([
            n(Role::System),
            n(Role::User),
            n(Role::Assistant),
            n(Role::Tool),
        ])
    }

    pub fn get(&self, role: Role) -> u32 {
        match role {
            Role::System => self.0[0],
            Role::User => self.0[1],
            Role::Assistant => self.0[2],
            Role::Tool => self.0[3],
        }
    }
}

/// A message's tokens in a prompt, given its body's ([`body_tokens`]): `<|start|>role
/// <|message|>` and `<|end|>` around the body. With [`PROMPT_OVERHEAD`] once per prompt,
/// the whole formula of prompt tokens: every count of the harness goes through here.
pub fn message_tokens(roles: &RoleTokens, m: &Message, body_tokens: u32) -> u64 {
    MESSAGE_OVERHEAD as u64 + u64::from(roles.get(m.role)) + u64::from(body_tokens)
}

/// Tokens a tool call adds besides its name and arguments (SPEC 11.2).
pub const TOOL_CALL_OVERHEAD: u32 = 3;

/// A message's body tokens: its content, and for each tool call `3 + tokens(name) +
/// tokens(arguments)` (SPEC 11.2; ids are not counted). `count` counts one text.
pub fn body_tokens<'m>(m: &'m Message, mut count: impl FnMut(&'m Text) -> u32) -> u32 {
    let mut n = count(&m.content);
    for call in &m.tool_calls {
        n += TOOL_CALL_OVERHEAD + count(&call.name) + count(&call.arguments);
    }
    n
}

/// Counts one call's tokens. `prev` must be the messages `mem` was last updated with.
/// `counts_out` receives each message's content token count.
#[allow(clippy::too_many_arguments)]
pub fn count_call<'m>(
    tok: &Tokenizer,
    roles: &RoleTokens,
    prev: Option<Prev<'_>>,
    cur: &'m [Message],
    diff: &CallDiff,
    mem: &mut TokenMemory,
    cache: &mut SegmentCounts,
    lines: &mut CallLines<'_, 'm>,
    counts_out: &mut Vec<u32>,
) -> CallTokens {
    counts_out.clear();
    for (i, m) in cur.iter().enumerate() {
        let n = if let Some(j) = diff.reuse[i] {
            mem.reused += 1;
            mem.counts[j]
        } else {
            mem.tokenized += 1;
            body_tokens(m, |text| cache.count_text(tok, text, lines))
        };
        counts_out.push(n);
    }

    let mut prompt = PROMPT_OVERHEAD as u64;
    let mut cached = 0u64;
    for (i, (m, &n)) in cur.iter().zip(counts_out.iter()).enumerate() {
        let whole = message_tokens(roles, m, n);
        prompt += whole;
        if prev.is_some() && i < diff.first_diff {
            cached += whole;
        }
    }

    if diff.partial
        && let Some(prev) = prev
    {
        let d = diff.first_diff;
        let (a, b) = (&prev[d], &cur[d]);
        // `<|start|>` is shared whatever follows.
        cached += 1;
        if a.role == b.role {
            // The role, `<|message|>`, then the common content prefix.
            cached += roles.get(a.role) as u64
                + 1
                + cache.common_prefix(tok, lines, &a.content, &b.content);
            if a.content == b.content {
                cached += common_calls_prefix(tok, cache, lines, a, b);
            }
        }
    }
    mem.counts.clear();
    mem.counts.extend_from_slice(counts_out);
    CallTokens { prompt, cached }
}

/// The common prefix of two messages' tool calls, when their contents are equal: the
/// calls are sent after the content in order, each as a 3-token frame around its name
/// and arguments. Equal calls count whole; the first differing one shares its opening
/// frame token, the common prefix of the names and, when the names agree, a separator
/// and the common prefix of the arguments.
fn common_calls_prefix<'m>(
    tok: &Tokenizer,
    cache: &mut SegmentCounts,
    lines: &mut CallLines<'_, 'm>,
    a: &Message,
    b: &'m Message,
) -> u64 {
    let mut cached = 0u64;
    for (x, y) in a.tool_calls.iter().zip(&b.tool_calls) {
        if x.name == y.name && x.arguments == y.arguments {
            cached += u64::from(
                TOOL_CALL_OVERHEAD
                    + cache.count(tok, lines, &x.name)
                    + cache.count(tok, lines, &x.arguments),
            );
            continue;
        }
        cached += 1 + cache.common_prefix(tok, lines, &x.name, &y.name);
        if x.name == y.name {
            cached += 1 + cache.common_prefix(tok, lines, &x.arguments, &y.arguments);
        }
        break;
    }
    cached
}

/// Prompt tokens of a whole prompt, tokenizing every message (no reuse): for benches
/// and tests.
pub fn prompt_tokens(tok: &Tokenizer, messages: &[Message]) -> u64 {
    let roles = RoleTokens::new(tok);
    PROMPT_OVERHEAD as u64
        + messages
            .iter()
            .map(|m| message_tokens(&roles, m, content_tokens(tok, m)))
            .sum::<u64>()
}

/// A message's body tokens (content and tool calls), each text tokenized whole.
pub fn content_tokens(tok: &Tokenizer, m: &Message) -> u32 {
    body_tokens(m, |text| tok.count_tokens(text) as u32)
}

#[cfg(test)]
mod tests;
