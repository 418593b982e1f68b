//! Prompt tokens and cache reuse of one call, reusing the previous call's work.
//!
//! Prompt tokens (SPEC section 9) = 3 + Σ (3 + tokens(role) + tokens(content)): each
//! message is `<|start|>role<|message|>content<|end|>` and the reply is primed with 3
//! tokens. Message contents are tokenized on their own, so a message whose content
//! equals a message of the previous call has the same count and is not tokenized again.
//!
//! Cache reuse: the tokens of a call that lie in the longest common prefix with the
//! previous call's prompt. Whole equal messages (role and content) count entirely; the
//! first differing message contributes the common prefix of the two messages' token
//! sequences: `<|start|>` always, then — when the roles agree — the role, `<|message|>`
//! and the common prefix of the content token ids. The 3 reply-priming tokens come after
//! the last message and are never counted as cached.

use crate::tokenizer::{MESSAGE_OVERHEAD, PROMPT_OVERHEAD, Tokenizer};
use recap_core::{Message, Role};
use std::collections::HashMap;

/// How a call's messages relate to the previous call's; the same for every tokenizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallDiff {
    /// For each message, the index of a message of the previous call with equal content.
    pub reuse: Vec<Option<usize>>,
    /// The first index where the two prompts differ (role or content); equals the shorter
    /// length when one prompt is a prefix of the other. 0 for the first call.
    pub first_diff: usize,
    /// Whether a previous call exists and has a message at `first_diff` (so that message
    /// and the current one at `first_diff` share a partial prefix).
    pub partial: bool,
}

impl CallDiff {
    pub fn new(prev: Option<&[Message]>, cur: &[Message]) -> CallDiff {
        let Some(prev) = prev else {
            return CallDiff {
                reuse: vec![None; cur.len()],
                first_diff: 0,
                partial: false,
            };
        };
        let first_diff = prev
            .iter()
            .zip(cur)
            .position(|(a, b)| a != b)
            .unwrap_or(prev.len().min(cur.len()));
        // Same position is the common case (append-only strategies); a content index
        // only pays off when messages move (windows), so it is built lazily.
        let mut by_content: Option<HashMap<&str, usize>> = None;
        let reuse = cur
            .iter()
            .enumerate()
            .map(|(i, m)| {
                if prev.get(i).is_some_and(|p| p.content == m.content) {
                    return Some(i);
                }
                let index = by_content.get_or_insert_with(|| {
                    let mut map = HashMap::with_capacity(prev.len());
                    for (j, p) in prev.iter().enumerate() {
                        map.entry(p.content.as_str()).or_insert(j);
                    }
                    map
                });
                index.get(m.content.as_str()).copied()
            })
            .collect();
        CallDiff {
            reuse,
            first_diff,
            partial: first_diff < prev.len() && first_diff < cur.len(),
        }
    }
}

/// Per-session, per-strategy, per-tokenizer memory of the previous call.
#[derive(Debug, Default, Clone)]
pub struct TokenMemory {
    /// Content token counts of the previous call's messages.
    counts: Vec<u32>,
    /// Token ids of one message of the previous call (index, ids), kept when it was the
    /// differing message: with single-user strategies the next call differs at the same
    /// index, so its ids are the "previous" side of the next partial prefix.
    ids: Option<(usize, Vec<u32>)>,
    /// How many contents were actually tokenized (the rest were reused), for tests and
    /// the efficiency report.
    pub tokenized: u64,
    pub reused: u64,
}

/// Tokens of one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CallTokens {
    pub prompt: u64,
    pub cached: u64,
}

/// Tokens of each role name (they are tiny and fixed).
#[derive(Debug, Clone, Copy)]
pub struct RoleTokens([u32; 3]);

impl RoleTokens {
    pub fn new(tok: &Tokenizer) -> Self {
        let n = |r: Role| tok.count_tokens(r.as_str()) as u32;
        RoleTokens([n(Role::System), n(Role::User), n(Role::Assistant)])
    }

    pub fn get(&self, role: Role) -> u32 {
        match role {
            Role::System => self.0[0],
            Role::User => self.0[1],
            Role::Assistant => self.0[2],
        }
    }
}

fn common_prefix(a: &[u32], b: &[u32]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}

/// Counts one call's tokens. `prev` must be the messages `mem` was last updated with.
/// `counts_out` receives each message's content token count.
pub fn count_call(
    tok: &Tokenizer,
    roles: &RoleTokens,
    prev: Option<&[Message]>,
    cur: &[Message],
    diff: &CallDiff,
    mem: &mut TokenMemory,
    counts_out: &mut Vec<u32>,
) -> CallTokens {
    counts_out.clear();
    let mut cur_ids: Option<Vec<u32>> = None;
    for (i, m) in cur.iter().enumerate() {
        let n = if let Some(j) = diff.reuse[i] {
            mem.reused += 1;
            mem.counts[j]
        } else {
            mem.tokenized += 1;
            if diff.partial && i == diff.first_diff {
                // Its ids are needed for the partial prefix: encode once, count from it.
                let ids = tok.encode(&m.content);
                let n = ids.len() as u32;
                cur_ids = Some(ids);
                n
            } else {
                tok.count_tokens(&m.content) as u32
            }
        };
        counts_out.push(n);
    }

    let mut prompt = PROMPT_OVERHEAD as u64;
    let mut cached = 0u64;
    for (i, (m, &n)) in cur.iter().zip(counts_out.iter()).enumerate() {
        let whole = (MESSAGE_OVERHEAD as u32 + roles.get(m.role) + n) as u64;
        prompt += whole;
        if prev.is_some() && i < diff.first_diff {
            cached += whole;
        }
    }

    // Only the current call's ids can serve the next call, so anything older goes.
    let kept = mem.ids.take();
    if diff.partial
        && let Some(prev) = prev
    {
        let d = diff.first_diff;
        let (a, b) = (&prev[d], &cur[d]);
        // `<|start|>` is shared whatever follows.
        cached += 1;
        if a.role == b.role {
            let prev_ids = match kept {
                Some((i, ids)) if i == d => ids,
                _ => tok.encode(&a.content),
            };
            let ids = cur_ids.take().unwrap_or_else(|| tok.encode(&b.content));
            // The role, `<|message|>`, then the common content prefix.
            cached += roles.get(a.role) as u64 + 1 + common_prefix(&prev_ids, &ids) as u64;
            cur_ids = Some(ids);
        }
    }
    mem.ids = cur_ids.map(|ids| (diff.first_diff, ids));
    mem.counts.clear();
    mem.counts.extend_from_slice(counts_out);
    CallTokens { prompt, cached }
}

/// Prompt tokens of a whole prompt, tokenizing every message (no reuse): the
/// definition, for tests and `recap inspect`.
pub fn prompt_tokens(tok: &Tokenizer, messages: &[Message]) -> u64 {
    PROMPT_OVERHEAD as u64
        + messages
            .iter()
            .map(|m| {
                (MESSAGE_OVERHEAD
                    + tok.count_tokens(m.role.as_str())
                    + tok.count_tokens(&m.content)) as u64
            })
            .sum::<u64>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tokenizer::{Backend, Encoding};

    fn tok() -> Tokenizer {
        Tokenizer::get(Encoding::O200kBase, Backend::Reference)
    }

    #[test]
    fn diff_of_append_only_prompts() {
        let a = vec![Message::system("s"), Message::user("m")];
        let mut b = a.clone();
        b.push(Message::assistant("x"));
        b.push(Message::user("m"));
        let d = CallDiff::new(Some(&a), &b);
        assert_eq!(d.first_diff, 2);
        assert!(!d.partial);
        // The last USER equals message 1 of the previous call by content.
        assert_eq!(d.reuse, vec![Some(0), Some(1), None, Some(1)]);
    }

    #[test]
    fn the_ids_kept_for_the_next_call_belong_to_the_current_message() {
        let t = tok();
        let roles = RoleTokens::new(&t);
        let calls = [
            vec![Message::system("s"), Message::user("alpha beta")],
            vec![Message::system("s"), Message::user("alpha beta gamma")],
            vec![Message::system("s"), Message::user("alpha delta")],
        ];
        let mut mem = TokenMemory::default();
        let mut counts = Vec::new();
        let mut prev: Option<&[Message]> = None;
        for cur in &calls {
            let diff = CallDiff::new(prev, cur);
            let got = count_call(&t, &roles, prev, cur, &diff, &mut mem, &mut counts);
            assert_eq!(got.prompt, prompt_tokens(&t, cur));
            if let Some(p) = prev {
                let ids_a = t.encode(&p[1].content);
                let ids_b = t.encode(&cur[1].content);
                // SYSTEM whole, then <|start|> user <|message|> and the common prefix.
                let expect = prompt_tokens(&t, &p[..1]) - 3
                    + 2
                    + roles.get(Role::User) as u64
                    + common_prefix(&ids_a, &ids_b) as u64;
                assert_eq!(got.cached, expect);
            }
            prev = Some(cur);
        }
    }
}
