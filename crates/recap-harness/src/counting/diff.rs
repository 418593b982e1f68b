//! How a call's prompt relates to the previous call's: the common prefix, and which
//! messages came back unchanged (so their counts and retention scans are reused).

use recap_core::Message;
use rustc_hash::FxHashMap;

/// The previous call's prompt, as the caller holds it once the current prompt has
/// taken over its first messages: `head` (now the current prompt's first messages) then
/// `tail` (the ones the current prompt no longer holds there). A whole prompt is a
/// `head` without `tail`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Prev<'a> {
    pub head: &'a [Message],
    pub tail: &'a [Message],
}

impl<'a> From<&'a [Message]> for Prev<'a> {
    fn from(head: &'a [Message]) -> Self {
        Prev { head, tail: &[] }
    }
}

impl<'a> From<&'a Vec<Message>> for Prev<'a> {
    fn from(head: &'a Vec<Message>) -> Self {
        Prev { head, tail: &[] }
    }
}

impl<'a> Prev<'a> {
    pub fn len(&self) -> usize {
        self.head.len() + self.tail.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn get(&self, i: usize) -> Option<&'a Message> {
        match self.head.get(i) {
            Some(m) => Some(m),
            None => self.tail.get(i - self.head.len()),
        }
    }

    pub fn iter(&self) -> impl Iterator<Item = &'a Message> + 'a {
        self.head.iter().chain(self.tail)
    }

    /// The prompt as one slice, when it is one already (no tail, or no head).
    pub fn as_slice(&self) -> Option<&'a [Message]> {
        match (self.head.is_empty(), self.tail.is_empty()) {
            (_, true) => Some(self.head),
            (true, false) => Some(self.tail),
            (false, false) => None,
        }
    }
}

impl std::ops::Index<usize> for Prev<'_> {
    type Output = Message;

    fn index(&self, i: usize) -> &Message {
        self.get(i).unwrap_or_else(|| {
            panic!(
                "message {i} of a previous prompt of {} messages",
                self.len()
            )
        })
    }
}

/// How a call's messages relate to the previous call's; the same for every tokenizer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallDiff {
    /// For each message, the index of a message of the previous call with equal content
    /// and tool calls: the one at the same position, else the first with equal content
    /// (when its tool calls are equal too).
    pub reuse: Vec<Option<usize>>,
    /// The first index where the two prompts differ (role or content); equals the shorter
    /// length when one prompt is a prefix of the other. 0 for the first call.
    pub first_diff: usize,
    /// Whether a previous call exists and has a message at `first_diff` (so that message
    /// and the current one at `first_diff` share a partial prefix).
    pub partial: bool,
}

impl CallDiff {
    /// `kept`: how many leading messages `cur` is known to share with `prev` (the same
    /// messages, moved over), so they are not compared; 0 when nothing is known.
    pub fn new(prev: Option<Prev<'_>>, cur: &[Message], kept: usize) -> CallDiff {
        let Some(prev) = prev else {
            return CallDiff {
                reuse: vec![None; cur.len()],
                first_diff: 0,
                partial: false,
            };
        };
        let kept = kept.min(prev.len()).min(cur.len());
        let first_diff = kept
            + prev
                .iter()
                .skip(kept)
                .zip(&cur[kept..])
                .position(|(a, b)| a != b)
                .unwrap_or(prev.len().min(cur.len()) - kept);
        // Same position is the common case (append-only strategies); otherwise the
        // first equal content is searched for.
        let mut by_content = FirstContent::new(prev);
        let reuse = cur
            .iter()
            .enumerate()
            .map(|(i, m)| {
                // Counts and scans cover the content and the tool calls, so both
                // must match (roles do not enter either).
                let same = |p: &Message| p.content == m.content && p.tool_calls == m.tool_calls;
                // Before the first difference the messages are equal whole (compared
                // once, above).
                if i < first_diff || prev.get(i).is_some_and(same) {
                    return Some(i);
                }
                by_content.find(&m.content).filter(|&j| same(&prev[j]))
            })
            .collect();
        CallDiff {
            reuse,
            first_diff,
            partial: first_diff < prev.len() && first_diff < cur.len(),
        }
    }
}

/// Finds the first message of a prompt with a given content. The few searches of a
/// call whose messages stay in place scan the prompt's lengths (cheap, no hashing);
/// once a call has searched as much as an index costs (a moved window searches for
/// every message), an index is built for the rest.
struct FirstContent<'p> {
    prompt: Prev<'p>,
    /// Messages compared by length so far, while there is no index.
    scanned: usize,
    index: Option<ContentIndex>,
}

impl<'p> FirstContent<'p> {
    fn new(prompt: Prev<'p>) -> Self {
        FirstContent {
            prompt,
            scanned: 0,
            index: None,
        }
    }

    fn find(&mut self, content: &str) -> Option<usize> {
        if self.index.is_none() && self.scanned > 4 * self.prompt.len() {
            self.index = Some(ContentIndex::new(self.prompt));
        }
        if let Some(index) = &self.index {
            return index.first(self.prompt, content);
        }
        self.scanned += self.prompt.len();
        self.prompt
            .iter()
            .position(|p| p.content.len() == content.len() && p.content == content)
    }
}

/// The first message of a prompt with a given content, found without hashing whole
/// contents (prompts are re-indexed at every call that moves messages): messages are
/// grouped by a key of their length and boundary bytes, each group in prompt order, and
/// a group's members are compared until one is equal.
struct ContentIndex {
    /// Key → (first, last) member of its group.
    groups: FxHashMap<Key, (usize, usize)>,
    /// The next member of each message's group (`usize::MAX` after the last).
    next: Vec<usize>,
}

type Key = (usize, u64, u64);

fn key(text: &str) -> Key {
    let bytes = text.as_bytes();
    let word = |b: &[u8]| b.iter().fold(0u64, |w, &x| (w << 8) | u64::from(x));
    let head = word(&bytes[..bytes.len().min(8)]);
    let tail = word(&bytes[bytes.len().saturating_sub(8)..]);
    (bytes.len(), head, tail)
}

impl ContentIndex {
    fn new(prompt: Prev<'_>) -> Self {
        let mut groups: FxHashMap<Key, (usize, usize)> = FxHashMap::default();
        let mut next = vec![usize::MAX; prompt.len()];
        for (j, m) in prompt.iter().enumerate() {
            groups
                .entry(key(&m.content))
                .and_modify(|(_, last)| {
                    next[*last] = j;
                    *last = j;
                })
                .or_insert((j, j));
        }
        ContentIndex { groups, next }
    }

    /// The index of the first message of `prompt` (the one indexed) whose content is
    /// `content`.
    fn first(&self, prompt: Prev<'_>, content: &str) -> Option<usize> {
        let mut j = self.groups.get(&key(content))?.0;
        while j != usize::MAX {
            if prompt[j].content == content {
                return Some(j);
            }
            j = self.next[j];
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_equal_content_is_reused_only_with_equal_tool_calls() {
        let call = |id: &str| recap_core::MessageToolCall {
            id: id.into(),
            name: "f".into(),
            arguments: "{}".into(),
        };
        // Equal length and first and last 8 bytes: one group, told apart by content.
        let prev = vec![
            Message::user("abcdefgh-X-12345678"),
            Message::assistant_with_calls("", vec![call("1")]),
            Message::assistant_with_calls("", vec![call("2")]),
            Message::user("abcdefgh-Y-12345678"),
        ];
        // A moved window: nothing at its old position.
        let cur = vec![
            Message::user("abcdefgh-Y-12345678"),
            Message::assistant_with_calls("", vec![call("2")]),
            Message::assistant_with_calls("", vec![call("1")]),
            Message::user("new"),
            Message::user("abcdefgh-Z-12345678"),
        ];
        let d = CallDiff::new(Some((&prev).into()), &cur, 0);
        assert_eq!(d.first_diff, 0);
        // The first "" has other calls than cur[1]: not reused, as with a map from
        // content to its first index.
        assert_eq!(d.reuse, vec![Some(3), None, Some(1), None, None]);
    }
}
