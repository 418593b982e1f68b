//! A plugin strategy as a [`recap_core::Strategy`], with incremental rendering of
//! sessions: the per-call cost does not grow with the history already sent, and calls
//! to an in-process plugin are queued ahead so that its lane renders the next call
//! while the caller uses this one.

use crate::backend::{Backend, Channel, Reply};
use crate::call::{CallError, MAX_RESPONSE_BYTES, Then, WorkerEvent, WorkerFailure};
use crate::load::{Plugin, split_invariants};
use recap_abi::TokenCounts;
use recap_abi::tokens::count_turn;
use recap_abi::wire::{self, Reuse, SessionHeader};
use recap_core::{
    Form, Invariant, Message, PromptDelta, RenderError, RenderRequest, Session, SessionState,
    SharedSlot, SpecError, Strategy, StrategySpec, TokenCounter,
};
use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One instance of a plugin strategy (a spec string's options applied).
pub struct PluginStrategy {
    plugin: Arc<Plugin>,
    options: BTreeMap<String, String>,
    spec: String,
    invariants: Vec<Invariant>,
    /// The forms this instance renders; other sessions are never sent to the plugin.
    forms: Vec<Form>,
    /// The run's tokenizer: chat requests then carry per-message token counts.
    counter: Option<Arc<dyn TokenCounter>>,
    /// Tells this instance's [`SessionState`]s apart from other instances'.
    instance: u64,
}

impl std::fmt::Debug for PluginStrategy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginStrategy")
            .field("plugin", &self.plugin.path())
            .field("spec", &self.spec)
            .field("forms", &self.forms)
            .field(
                "counter",
                &self.counter.as_ref().map(|c| c.name().to_string()),
            )
            .finish_non_exhaustive()
    }
}

static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

impl PluginStrategy {
    /// Builds an instance; the plugin's `describe` validates the options and declares
    /// the instance's invariants.
    pub fn new(plugin: Arc<Plugin>, spec: &StrategySpec) -> Result<Self, SpecError> {
        let mut canonical = spec.clone();
        canonical.name = plugin.name().to_string();
        let mut invariants = plugin.invariants().to_vec();
        let mut forms = plugin.forms().to_vec();
        let mut spec_text = canonical.to_string();
        if plugin.has_describe() {
            let request = wire::describe_request(&spec.options);
            match plugin.backend.describe(request) {
                Ok(Some(d)) => {
                    invariants = split_invariants(&d.invariants).0;
                    forms = d.split_forms().0;
                    if forms.is_empty() {
                        return Err(SpecError::Syntax {
                            spec: canonical.to_string(),
                            message: format!(
                                "plugin {}: with these options it declares no session form this recap renders",
                                plugin.path().display()
                            ),
                        });
                    }
                    if let Some(s) = d.spec.filter(|s| !s.is_empty()) {
                        spec_text = s;
                    }
                }
                Ok(None) => {}
                Err(e) => return Err(spec_error(&plugin, &canonical, e)),
            }
        } else {
            // `canonical` carries the plugin's name, which the error names.
            canonical.no_options()?;
        }
        Ok(Self {
            plugin,
            options: spec.options.clone(),
            spec: spec_text,
            invariants,
            forms,
            counter: None,
            instance: NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed),
        })
    }

    /// The same instance counting with `counter` (the run's tokenizer): its chat
    /// requests carry token counts.
    pub fn counting_with(mut self, counter: Option<Arc<dyn TokenCounter>>) -> Self {
        self.counter = counter;
        self
    }

    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    fn render_error(&self, e: CallError) -> RenderError {
        e.into_render_error(&self.plugin.path().display().to_string())
    }

    /// Refuses a session in a form the plugin did not declare: it is never sent one.
    fn check_form(&self, form: Form) -> Result<(), RenderError> {
        if self.forms.contains(&form) {
            return Ok(());
        }
        Err(RenderError::new(
            wire::KIND_UNSUPPORTED_FORM,
            format!(
                "plugin {}: {} renders {} sessions only; a {form} session is not sent to it",
                self.plugin.path().display(),
                self.plugin.name(),
                self.forms
                    .iter()
                    .map(|f| f.as_str())
                    .collect::<Vec<_>>()
                    .join(" and ")
            ),
        ))
    }
}

/// Maps a failed `describe` for a spec to the registry's error vocabulary.
fn spec_error(plugin: &Plugin, spec: &StrategySpec, e: CallError) -> SpecError {
    match e {
        CallError::Plugin { error, .. } if error.kind == wire::KIND_INVALID_OPTIONS => {
            let error = *error;
            match (error.key, error.value) {
                // The SDK names the option at fault; its message is what was expected.
                (Some(key), Some(value)) => SpecError::BadValue {
                    strategy: plugin.name().to_string(),
                    key,
                    value,
                    expected: error.message,
                },
                _ => SpecError::Syntax {
                    spec: spec.to_string(),
                    message: error.message,
                },
            }
        }
        other => SpecError::Syntax {
            spec: spec.to_string(),
            message: format!(
                "plugin {}: describe failed: {other}",
                plugin.path().display()
            ),
        },
    }
}

impl Strategy for PluginStrategy {
    fn spec(&self) -> String {
        self.spec.clone()
    }

    /// A full request every call: its cost grows with the history. Callers rendering
    /// a whole session should use [`Strategy::render_session`].
    fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        self.check_form(request.form)?;
        let header = SessionHeader::of_request(request);
        let bytes = match request.form {
            Form::Ptc => wire::render_request(&self.options, &header, request.turns),
            Form::Chat => {
                let counts = self.counter.as_deref().map(|c| {
                    TokenCounts::of_session(
                        c,
                        request.system_prompt,
                        request.mission,
                        request.chat_turns,
                    )
                });
                wire::chat_render_request(
                    &self.options,
                    &header,
                    request.chat_turns,
                    counts.as_ref(),
                )
            }
        };
        self.plugin
            .backend
            .render(bytes)
            .map_err(|e| self.render_error(e))
    }

    fn invariants(&self) -> Vec<Invariant> {
        self.invariants.clone()
    }

    fn forms(&self) -> Vec<Form> {
        self.forms.clone()
    }

    fn render_session(
        &self,
        session: &Session,
        k: usize,
        state: &mut SessionState,
    ) -> Result<Vec<Message>, RenderError> {
        self.render_session_delta(session, k, state, None)
            .map(|d| d.tail)
    }

    /// What the plugin's response keeps of its previous one (`messages_kept`), when the
    /// caller holds that response: the kept messages are not copied out again.
    fn render_session_delta(
        &self,
        session: &Session,
        k: usize,
        state: &mut SessionState,
        held: Option<usize>,
    ) -> Result<PromptDelta, RenderError> {
        RenderRequest::for_call(session, k)?;
        self.check_form(session.form)?;
        let shared = state.shared();
        let host = state.reuse_or_set(
            |s: &HostSession| s.belongs_to(self.instance, session),
            || HostSession::new(self.instance, session),
        );
        host.shared = shared;
        let result = host.render_delta(
            &self.plugin.backend,
            &self.options,
            self.counter.as_deref(),
            session,
            k,
            held,
        );
        if let Err(e) = &result
            && !matches!(e, CallError::Worker(_))
        {
            // A failed call may leave either side half-updated: start over next time.
            // (After a worker failure the host session remembers it instead.)
            state.clear();
        }
        result.map_err(|e| self.render_error(e))
    }
}

/// How many calls a session queues ahead on its lane.
const AHEAD: usize = 16;
/// More are queued when no more than this many are left: half the batch, so that the
/// lane gets its next calls while it still renders these and never sleeps in between
/// (a sleep and a wake-up cost more CPU than most calls).
const LOW_WATER: usize = AHEAD / 2;
/// At most this many request bytes queued ahead (full requests carry the whole
/// history).
const AHEAD_BYTES: usize = 8 << 20;
/// Request buffers kept for reuse.
const SPARE_BUFFERS: usize = 4;

/// The host's side of rendering one session incrementally.
pub(crate) struct HostSession {
    instance: u64,
    session_id: String,
    mode: Mode,
    /// The token counts of the chat turns counted so far (each turn counted once).
    counts: Option<TokenCounts>,
    /// The call served last: a caller walking the calls in order gets the next ones
    /// queued ahead.
    last: Option<usize>,
    /// The call whose messages were handed out last, and how many: a caller holding
    /// them is answered with what the next response keeps of them.
    handed: Option<(usize, usize)>,
    /// Shared with the host session of the other state of a pair (recap's determinism
    /// check renders every call twice): a request encoded for one is sent by the other.
    shared: Option<SharedSlot>,
}

/// A `session_render` request as encoded for one host session of a pair: the other
/// sends the same bytes when it asks for the same turns.
struct EncodedRequest {
    /// The plugin strategy, the session (where it lives, and its id) and the turns.
    instance: u64,
    session_at: usize,
    session_id: String,
    from: usize,
    to: usize,
    bytes: Vec<u8>,
}

enum Mode {
    /// Not started yet.
    Idle,
    Open(Box<Open>),
    /// The plugin's worker process failed at this call: the rest of the session is not
    /// sent (the next session gets a new worker).
    Failed {
        call: usize,
    },
}

/// A started session: its channel, and the calls on their way.
struct Open {
    channel: Channel,
    /// The calls submitted and not received yet, oldest first, with their request
    /// sizes.
    queued: VecDeque<(usize, usize)>,
    queued_bytes: usize,
    /// Request buffers to reuse.
    spare: Vec<Vec<u8>>,
    shape: Shape,
}

enum Shape {
    /// The plugin keeps the turns: only new turns go out, only changed messages come
    /// back.
    Plugin {
        /// Turns the plugin-side session holds once every queued call is made.
        planned: usize,
        /// The messages of the last response received.
        previous: Vec<Message>,
        /// The call that response answered (`None` before the first).
        previous_call: Option<usize>,
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
    /// Queues call `j` (its counts, when sent, cover `j` turns); the request's bytes from
    /// `shared` when the other host session of a pair encoded the same turns.
    fn submit(
        &mut self,
        counts: Option<&TokenCounts>,
        session: &Session,
        j: usize,
        shared: Option<(&SharedSlot, u64)>,
    ) {
        let request = match &mut self.shape {
            Shape::Plugin { planned, .. } => {
                let from = j.min(*planned);
                *planned = j;
                let at = std::ptr::from_ref(session) as usize;
                let encoded = shared.and_then(|(s, instance)| {
                    s.take(|r: &EncodedRequest| {
                        r.instance == instance
                            && r.from == from
                            && r.to == j
                            && r.session_at == at
                            && r.session_id == session.id
                    })
                });
                match encoded {
                    Some(encoded) => encoded.bytes,
                    None => {
                        let mut request = self.spare.pop().unwrap_or_default();
                        match session.form {
                            Form::Ptc => wire::put_session_render_request(
                                &mut request,
                                from,
                                &session.turns[from..j],
                            ),
                            Form::Chat => wire::put_chat_session_render_request(
                                &mut request,
                                from,
                                &session.chat_turns[from..j],
                                counts.map(|c| &c.turns[from..j]),
                            ),
                        }
                        if let Some((shared, instance)) = shared {
                            shared.put(EncodedRequest {
                                instance,
                                session_at: at,
                                session_id: session.id.clone(),
                                from,
                                to: j,
                                bytes: request.clone(),
                            });
                        }
                        request
                    }
                }
            }
            Shape::Bytes { buf, ends } => {
                while ends.len() <= j {
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
                let mut request = self.spare.pop().unwrap_or_default();
                request.clear();
                request.extend_from_slice(&buf[..ends[j]]);
                wire::put_request_end(&mut request, counts.map(|c| (c, &c.turns[..j])));
                request
            }
        };
        self.queued.push_back((j, request.len()));
        self.queued_bytes += request.len();
        self.channel.submit(request);
    }

    /// The oldest queued call's outcome.
    fn receive(&mut self) -> (usize, Result<Reply, CallError>) {
        let (outcome, mut buffer) = self.channel.receive();
        let (call, len) = self.queued.pop_front().unwrap_or((usize::MAX, 0));
        self.queued_bytes -= len.min(self.queued_bytes);
        if self.spare.len() < SPARE_BUFFERS && buffer.capacity() > 0 {
            buffer.clear();
            self.spare.push(buffer);
        }
        (call, outcome)
    }

    /// Takes in the reply to call `call`; its messages when `want`, as what they keep of
    /// call `holds`'s when the caller holds that response.
    fn apply(
        &mut self,
        (kept, new, reused): Reply,
        call: usize,
        want: bool,
        holds: Option<usize>,
    ) -> Result<PromptDelta, CallError> {
        match &mut self.shape {
            Shape::Plugin {
                previous,
                previous_call,
                ..
            } => {
                // `messages_kept` counts messages of the response just before this one.
                let relative = holds.is_some() && *previous_call == holds;
                *previous = with_reused(std::mem::take(previous), kept, new, &reused)?;
                *previous_call = Some(call);
                let kept = if relative { kept } else { 0 };
                Ok(PromptDelta {
                    kept,
                    tail: if want {
                        previous[kept..].to_vec()
                    } else {
                        Vec::new()
                    },
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
    pub(crate) fn new(instance: u64, session: &Session) -> Self {
        Self {
            instance,
            session_id: session.id.clone(),
            mode: Mode::Idle,
            counts: None,
            last: None,
            handed: None,
            shared: None,
        }
    }

    fn belongs_to(&self, instance: u64, session: &Session) -> bool {
        self.instance == instance && self.session_id == session.id
    }

    /// Renders call `k` (after `k` turns) of `session`; chat requests carry the token
    /// counts of `counter` when there is one.
    pub(crate) fn render(
        &mut self,
        backend: &Backend,
        options: &BTreeMap<String, String>,
        counter: Option<&dyn TokenCounter>,
        session: &Session,
        k: usize,
    ) -> Result<Vec<Message>, CallError> {
        self.render_delta(backend, options, counter, session, k, None)
            .map(|d| d.tail)
    }

    /// [`HostSession::render`], answered as what it keeps of the messages handed out
    /// last when the caller holds them (`held`, their number).
    pub(crate) fn render_delta(
        &mut self,
        backend: &Backend,
        options: &BTreeMap<String, String>,
        counter: Option<&dyn TokenCounter>,
        session: &Session,
        k: usize,
        held: Option<usize>,
    ) -> Result<PromptDelta, CallError> {
        let holds = self
            .handed
            .take()
            .filter(|&(_, len)| held == Some(len))
            .map(|(call, _)| call);
        // The replay of a session in which this plugin overran at call `at` on a thread
        // that was given up: that call is the time-out, the later ones are refused.
        if let Some(at) = recap_core::rescue::replay_overran_at()
            && k >= at
        {
            self.mode = Mode::Idle;
            return Err(if k == at {
                crate::backend::overran()
            } else {
                crate::backend::disabled()
            });
        }
        if let Mode::Failed { call } = self.mode {
            return Err(CallError::Worker(Box::new(WorkerFailure {
                event: WorkerEvent::EarlierInSession { call },
                at: Some((self.session_id.clone(), k)),
                then: Then::Nothing,
            })));
        }
        // A replay starts at call 0 and walks on: queue from the first call, so that
        // only that one waits for a lane that was asleep.
        let sequential = match k {
            0 => self.last.is_none(),
            _ => self.last == Some(k - 1),
        };
        let result = self.serve(backend, options, counter, session, k, holds);
        match result {
            Ok(messages) => {
                self.last = Some(k);
                self.handed = Some((k, messages.kept + messages.tail.len()));
                if sequential {
                    self.queue_ahead(counter, session, k);
                }
                Ok(messages)
            }
            Err(mut e) => {
                self.last = None;
                if let CallError::Worker(w) = &mut e {
                    w.at.get_or_insert_with(|| (self.session_id.clone(), k));
                    // A disabled plugin says so at every call; a failed worker once.
                    if !matches!(w.event, WorkerEvent::Disabled { .. }) {
                        self.mode = Mode::Failed { call: k };
                    }
                }
                Err(e)
            }
        }
    }

    fn serve(
        &mut self,
        backend: &Backend,
        options: &BTreeMap<String, String>,
        counter: Option<&dyn TokenCounter>,
        session: &Session,
        k: usize,
        holds: Option<usize>,
    ) -> Result<PromptDelta, CallError> {
        // Calls queued ahead come back first, in order.
        while let Mode::Open(open) = &mut self.mode {
            if open.queued.is_empty() {
                break;
            }
            let (j, outcome) = open.receive();
            match outcome.and_then(|reply| open.apply(reply, j, j == k, holds)) {
                Ok(messages) if j == k => return Ok(messages),
                Ok(_) => {}
                Err(e) if j == k => return Err(e),
                Err(e @ (CallError::TimedOut(_) | CallError::Worker(_))) => return Err(e),
                // A call made ahead failed: the plugin-side session may be half-updated,
                // so start it again.
                Err(_) => self.mode = Mode::Idle,
            }
        }
        count_to(&mut self.counts, counter, session, k);
        if let Mode::Idle | Mode::Failed { .. } = self.mode {
            self.mode = Mode::Open(Box::new(Self::start(
                backend,
                options,
                self.counts.as_ref(),
                session,
                self.shared.as_ref().map(SharedSlot::id),
            )?));
        }
        let Mode::Open(open) = &mut self.mode else {
            return Err(CallError::invalid(
                0,
                "the session did not start (a recap bug)",
            ));
        };
        let shared = self.shared.as_ref().map(|s| (s, self.instance));
        open.submit(self.counts.as_ref(), session, k, shared);
        let (_, outcome) = open.receive();
        outcome.and_then(|reply| open.apply(reply, k, true, holds))
    }

    /// Opens the plugin-side session; `pair` names the pair of states this one renders
    /// for, so that the plugin may hold the turns of both once.
    fn start(
        backend: &Backend,
        options: &BTreeMap<String, String>,
        counts: Option<&TokenCounts>,
        session: &Session,
        pair: Option<u64>,
    ) -> Result<Open, CallError> {
        let header = SessionHeader::of_session(session);
        let (channel, shape) = if backend.has_sessions() {
            let request = wire::session_open_request(options, &header, counts, pair);
            let shape = Shape::Plugin {
                planned: 0,
                previous: Vec::new(),
                previous_call: None,
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
            queued: VecDeque::new(),
            queued_bytes: 0,
            spare: Vec::new(),
            shape,
        })
    }

    /// After call `k` of a caller walking the calls in order: queues the next calls on
    /// the lane, so that they are rendered while the caller uses this one.
    fn queue_ahead(&mut self, counter: Option<&dyn TokenCounter>, session: &Session, k: usize) {
        let Mode::Open(open) = &mut self.mode else {
            return;
        };
        if !open.channel.pipelines() || open.queued.len() > LOW_WATER {
            return;
        }
        // The last call a replay makes: the one that produced the last turn.
        let last = session.turn_count().saturating_sub(1).min(k + AHEAD);
        let mut j = open.queued.back().map_or(k, |&(call, _)| call) + 1;
        while j <= last
            && open.queued_bytes < AHEAD_BYTES
            && RenderRequest::for_call(session, j).is_ok()
        {
            count_to(&mut self.counts, counter, session, j);
            open.submit(self.counts.as_ref(), session, j, None);
            j += 1;
        }
    }
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
