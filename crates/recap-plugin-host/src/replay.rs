//! The host's side of one session replayed through a plugin: the plugin-side session
//! it opens, the turns it sends (only those the plugin does not hold yet), and the
//! answers it takes in (what a response keeps of the previous one, and the earlier
//! messages it refers to).
//!
//! The two replays recap's determinism check opens of one session are a pair
//! ([`HostSession::pair`]): the plugin-side sessions are opened with the pair's id, so
//! that an SDK plugin holds their turns once, and a request both send is encoded once.
//! What a render produced is never shared: the check compares two independent renders.

use crate::backend::{Backend, Channel, Reply, disabled, overran};
use crate::call::{CallError, MAX_RESPONSE_BYTES, Then, WorkerEvent, WorkerFailure};
use recap_abi::TokenCounts;
use recap_abi::tokens::count_turn;
use recap_abi::wire::{self, Reuse, SessionHeader};
use recap_core::{Form, Message, PromptDelta, Session, TokenCounter};
use std::cell::RefCell;
use std::collections::BTreeMap;
use std::rc::Rc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What the two host sessions of a pair share: the pair's id, and the last request one
/// of them encoded, for the other.
#[derive(Debug)]
pub(crate) struct Pair {
    id: u64,
    /// The turns `from..to` of a `session_render` request, and its bytes.
    encoded: RefCell<Option<(usize, usize, Vec<u8>)>>,
}

impl Pair {
    fn new() -> Rc<Self> {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Rc::new(Pair {
            id: NEXT.fetch_add(1, Ordering::Relaxed),
            encoded: RefCell::new(None),
        })
    }

    /// The bytes of the request for turns `from..to`, when the other session encoded it.
    fn take(&self, from: usize, to: usize) -> Option<Vec<u8>> {
        let mut encoded = self.encoded.borrow_mut();
        match encoded.take() {
            Some((f, t, bytes)) if (f, t) == (from, to) => Some(bytes),
            other => {
                *encoded = other;
                None
            }
        }
    }
}

/// Where a host session's calls go: the plugin, the strategy instance's options, and the
/// run's tokenizer (chat requests then carry token counts).
pub(crate) struct Target<'a> {
    pub(crate) backend: &'a Backend,
    pub(crate) options: &'a BTreeMap<String, String>,
    pub(crate) counter: Option<&'a dyn TokenCounter>,
}

/// The host's side of rendering one session incrementally.
pub(crate) struct HostSession {
    mode: Mode,
    /// The token counts of the chat turns counted so far (each turn counted once).
    counts: Option<TokenCounts>,
    /// Shared with the other host session of a pair.
    pair: Option<Rc<Pair>>,
}

enum Mode {
    /// Not started yet, or to start again (after a failed call).
    Idle,
    Open(Box<Open>),
    /// The plugin's worker process failed at this call: the rest of the session is not
    /// sent (the next session gets a new worker).
    Failed {
        call: usize,
    },
}

/// A started session: its channel and what it holds.
struct Open {
    channel: Channel,
    shape: Shape,
    /// The request being made.
    request: Vec<u8>,
}

enum Shape {
    /// The plugin keeps the turns: only new turns go out, only changed messages come
    /// back.
    Plugin {
        /// Turns the plugin-side session holds.
        sent: usize,
        /// The messages of the last response received.
        previous: Vec<Message>,
    },
    /// The plugin has no session functions: full requests, each built from the turns
    /// serialised for the calls before it.
    Bytes {
        /// The request up to the end of the last serialised turn.
        buf: Vec<u8>,
        /// `ends[i]`: the length of `buf` holding `i` turns.
        ends: Vec<usize>,
    },
}

/// Counts the chat turns up to `k` not counted yet (none without a tokenizer, and none
/// in a PTC-Lisp session, whose requests carry no counts).
fn count_to(
    counts: &mut Option<TokenCounts>,
    counter: Option<&dyn TokenCounter>,
    session: &Session,
    k: usize,
) {
    let Some(counter) = counter.filter(|_| session.form == Form::Chat) else {
        return;
    };
    let counts = counts.get_or_insert_with(|| {
        TokenCounts::opening(counter, &session.system_prompt, &session.mission)
    });
    while counts.turns.len() < k {
        let turn = &session.chat_turns[counts.turns.len()];
        counts.turns.push(count_turn(counter, turn));
    }
}

impl Open {
    /// Encodes the request of call `k` (its counts, when sent, cover `k` turns) into
    /// `self.request`; takes its bytes from `pair` when the other session of the pair
    /// encoded the same turns.
    fn encode(
        &mut self,
        counts: Option<&TokenCounts>,
        session: &Session,
        k: usize,
        pair: Option<&Pair>,
    ) {
        let request = &mut self.request;
        request.clear();
        match &mut self.shape {
            Shape::Plugin { sent, .. } => {
                // A session may be rewound: the plugin then drops the turns after `k`.
                let from = k.min(*sent);
                *sent = k;
                if let Some(bytes) = pair.and_then(|p| p.take(from, k)) {
                    *request = bytes;
                    return;
                }
                match session.form {
                    Form::Ptc => {
                        wire::put_session_render_request(request, from, &session.turns[from..k])
                    }
                    Form::Chat => wire::put_chat_session_render_request(
                        request,
                        from,
                        &session.chat_turns[from..k],
                        counts.map(|c| &c.turns[from..k]),
                    ),
                }
                if let Some(pair) = pair {
                    *pair.encoded.borrow_mut() = Some((from, k, request.clone()));
                }
            }
            Shape::Bytes { buf, ends } => {
                while ends.len() <= k {
                    let i = ends.len() - 1;
                    if i > 0 {
                        buf.push(b',');
                    }
                    match session.form {
                        Form::Ptc => wire::put_turn(buf, &session.turns[i]),
                        Form::Chat => wire::put_chat_turn(buf, &session.chat_turns[i]),
                    }
                    ends.push(buf.len());
                }
                request.extend_from_slice(&buf[..ends[k]]);
                wire::put_request_end(request, counts.map(|c| (c, &c.turns[..k])));
            }
        }
    }

    /// Takes in the reply to the call made; its messages as what they keep of the
    /// previous response when the caller holds that one (`held`, its length).
    fn apply(&mut self, (kept, new, reused): Reply, held: usize) -> Result<PromptDelta, CallError> {
        match &mut self.shape {
            Shape::Plugin { previous, .. } => {
                // `messages_kept` counts messages of the response just before this one.
                let relative = held > 0 && held == previous.len();
                *previous = with_reused(std::mem::take(previous), kept, new, &reused)?;
                let kept = if relative { kept } else { 0 };
                Ok(PromptDelta {
                    kept,
                    tail: previous[kept..].to_vec(),
                })
            }
            Shape::Bytes { .. } => Ok(PromptDelta::whole(new)),
        }
    }
}

/// The next response's messages: `kept` messages of `previous`, then `new` with the
/// `reused` ranges of `previous` in their places. Messages are moved out of `previous`
/// where they are used once (a sliding window reuses each once) and copied otherwise.
/// A response that does not fit `previous` (keeps or refers past its end, or refers to
/// more than a response may hold) is an invalid response.
fn with_reused(
    mut previous: Vec<Message>,
    kept: usize,
    new: Vec<Message>,
    reused: &[Reuse],
) -> Result<Vec<Message>, CallError> {
    if kept > previous.len() {
        return Err(CallError::invalid(
            0,
            format!(
                "messages_kept {kept} but the previous response had {} messages",
                previous.len()
            ),
        ));
    }
    if reused.is_empty() {
        previous.truncate(kept);
        previous.extend(new);
        return Ok(previous);
    }
    let held = previous.len();
    if let Some(r) = reused.iter().find(|r| r.to > held) {
        return Err(CallError::invalid(
            0,
            format!(
                "{{\"previous\": [{}, {}]}} but the previous response had {held} messages",
                r.from, r.to
            ),
        ));
    }
    // A few bytes of references could stand for any number of copies of the previous
    // prompt: what they stand for is held to the limit a response's own bytes have,
    // counted in O(1) per reference from running sums.
    let mut sums = Vec::with_capacity(held + 1);
    sums.push(0usize);
    for m in &previous {
        let last = sums.last().copied().unwrap_or(0);
        sums.push(last.saturating_add(message_bytes(m)));
    }
    let referenced = reused.iter().fold(0usize, |total, r| {
        total.saturating_add(sums[r.to] - sums[r.from])
    });
    if referenced > MAX_RESPONSE_BYTES {
        return Err(CallError::invalid(
            0,
            format!(
                "the previous messages it refers to come to {referenced} bytes, more than the \
                 {MAX_RESPONSE_BYTES}-byte limit of a response (256 MiB)"
            ),
        ));
    }
    // previous[kept..], each taken once; where a later reference finds it taken, it
    // copies it from where it went.
    let mut tail: Vec<Option<Message>> = previous.drain(kept..).map(Some).collect();
    let mut moved_to = vec![usize::MAX; tail.len()];
    let mut next = previous;
    let mut new = new.into_iter();
    let mut taken_new = 0;
    for r in reused {
        next.extend(new.by_ref().take(r.at.saturating_sub(taken_new)));
        taken_new = r.at;
        for i in r.from..r.to {
            let message = match i.checked_sub(kept) {
                None => next[i].clone(),
                Some(t) => match tail[t].take() {
                    Some(m) => {
                        moved_to[t] = next.len();
                        m
                    }
                    None => next[moved_to[t]].clone(),
                },
            };
            next.push(message);
        }
    }
    next.extend(new);
    Ok(next)
}

/// What a message weighs against [`MAX_RESPONSE_BYTES`] when a response refers to it:
/// its texts and a little for its structure, so that empty messages count too.
fn message_bytes(m: &Message) -> usize {
    let calls: usize = m
        .tool_calls
        .iter()
        .map(|c| c.id.len() + c.name.len() + c.arguments.len() + 16)
        .sum();
    let rest =
        m.tool_call_id.as_ref().map_or(0, |s| s.len()) + m.name.as_ref().map_or(0, |s| s.len());
    m.content.len() + calls + rest + 16
}

impl HostSession {
    pub(crate) fn new() -> Self {
        Self {
            mode: Mode::Idle,
            counts: None,
            pair: None,
        }
    }

    /// Two host sessions of one session, as a pair (see the module docs).
    pub(crate) fn pair() -> [Self; 2] {
        let pair = Pair::new();
        [Some(Rc::clone(&pair)), Some(pair)].map(|pair| Self {
            pair,
            ..Self::new()
        })
    }

    /// Renders call `k` (after `k` turns) of `session`, as what it keeps of the last
    /// answer when the caller holds that one (`held`, its length); chat requests carry
    /// the token counts of `counter` when there is one.
    pub(crate) fn call(
        &mut self,
        to: &Target<'_>,
        session: &Session,
        k: usize,
        held: usize,
    ) -> Result<PromptDelta, CallError> {
        // The replay of a session in which this plugin overran at call `at` on a thread
        // that was given up: that call is the time-out, the later ones are refused.
        if let Some(at) = recap_core::rescue::replay_overran_at()
            && k >= at
        {
            self.mode = Mode::Idle;
            return Err(if k == at { overran() } else { disabled() });
        }
        if let Mode::Failed { call } = self.mode {
            return Err(CallError::Worker(Box::new(WorkerFailure {
                event: WorkerEvent::EarlierInSession { call },
                at: Some((session.id.clone(), k)),
                then: Then::Nothing,
            })));
        }
        let served = (|| -> Result<PromptDelta, CallError> {
            count_to(&mut self.counts, to.counter, session, k);
            if let Mode::Idle | Mode::Failed { .. } = self.mode {
                let pair = self.pair.as_ref().map(|p| p.id);
                self.mode = Mode::Open(Box::new(start(to, self.counts.as_ref(), session, pair)?));
            }
            let Mode::Open(open) = &mut self.mode else {
                return Err(CallError::invalid(
                    0,
                    "the session did not start (a recap bug)",
                ));
            };
            open.encode(self.counts.as_ref(), session, k, self.pair.as_deref());
            let reply = open.channel.call(&open.request)?;
            open.apply(reply, held)
        })();
        let mut e = match served {
            Ok(delta) => return Ok(delta),
            Err(e) => e,
        };
        if let CallError::Worker(w) = &mut e {
            w.at.get_or_insert_with(|| (session.id.clone(), k));
            // A disabled plugin says so at every call; a failed worker once.
            if !matches!(w.event, WorkerEvent::Disabled { .. }) {
                self.mode = Mode::Failed { call: k };
            }
        } else {
            // A failed call may leave either side half-updated: start over next time.
            self.mode = Mode::Idle;
        }
        Err(e)
    }
}

/// Opens the plugin-side session; `pair` names the pair of host sessions this one is
/// of, so that the plugin may hold the turns of both once.
fn start(
    to: &Target<'_>,
    counts: Option<&TokenCounts>,
    session: &Session,
    pair: Option<u64>,
) -> Result<Open, CallError> {
    let (backend, options) = (to.backend, to.options);
    let header = SessionHeader::of_session(session);
    let (channel, shape) = if backend.has_sessions() {
        let request = wire::session_open_request(options, &header, counts, pair);
        let shape = Shape::Plugin {
            sent: 0,
            previous: Vec::new(),
        };
        (backend.channel(Some(request))?, shape)
    } else {
        let mut buf = Vec::with_capacity(4096);
        wire::put_render_request_head(&mut buf, options, &header);
        let ends = vec![buf.len()];
        (backend.channel(None)?, Shape::Bytes { buf, ends })
    };
    Ok(Open {
        channel,
        shape,
        request: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(i: usize) -> Message {
        Message::user(format!("message {i}"))
    }

    #[test]
    fn references_resolve_against_the_previous_response() {
        let previous: Vec<Message> = (0..6).map(user).collect();
        let new = vec![user(10), user(11)];
        // Keep 1; then previous[3..6], a new one, previous[0..2] (one of them kept,
        // one moved), previous[4..5] again (moved already: copied), the other new one.
        let reused = [
            Reuse {
                at: 0,
                from: 3,
                to: 6,
            },
            Reuse {
                at: 1,
                from: 0,
                to: 2,
            },
            Reuse {
                at: 1,
                from: 4,
                to: 5,
            },
        ];
        let got = with_reused(previous.clone(), 1, new, &reused).expect("valid references");
        let want: Vec<Message> = [0, 3, 4, 5, 10, 0, 1, 4, 11]
            .into_iter()
            .map(user)
            .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn references_may_not_stand_for_more_than_a_response_may_hold() {
        // 64 KiB of text, referred to 5,000 times by a few kilobytes of references.
        let previous = vec![Message::user("x".repeat(64 << 10))];
        let reused: Vec<Reuse> = (0..5000)
            .map(|_| Reuse {
                at: 0,
                from: 0,
                to: 1,
            })
            .collect();
        let e = with_reused(previous.clone(), 0, Vec::new(), &reused).expect_err("too much");
        assert!(
            e.to_string().contains("more than the 268435456-byte limit"),
            "{e}"
        );
        // Within the limit they resolve.
        let got = with_reused(previous, 0, Vec::new(), &reused[..3]).expect("within");
        assert_eq!(got.len(), 3);
    }

    #[test]
    fn keeping_more_than_the_previous_response_is_an_invalid_response() {
        let previous: Vec<Message> = (0..2).map(user).collect();
        let e = with_reused(previous.clone(), 3, Vec::new(), &[]).expect_err("kept past the end");
        assert!(
            e.to_string()
                .contains("messages_kept 3 but the previous response had 2 messages"),
            "{e}"
        );
        // Without references: the kept prefix, then the new messages.
        let got = with_reused(previous, 1, vec![user(7)], &[]).expect("fits");
        assert_eq!(got, vec![user(0), user(7)]);
    }

    #[test]
    fn a_reference_past_the_previous_response_is_an_invalid_response() {
        let previous: Vec<Message> = (0..3).map(user).collect();
        let e = with_reused(
            previous,
            0,
            Vec::new(),
            &[Reuse {
                at: 0,
                from: 2,
                to: 4,
            }],
        )
        .expect_err("out of range");
        assert!(
            e.to_string()
                .contains(r#"{"previous": [2, 4]} but the previous response had 3 messages"#),
            "{e}"
        );
    }
}
