//! A plugin strategy as a [`recap_core::Strategy`], with incremental rendering of
//! sessions: the per-call cost does not grow with the history already sent.

use crate::call::{self, CallError, Fns, SessionHandle};
use crate::load::{Plugin, split_invariants};
use recap_abi::TokenCounts;
use recap_abi::tokens::count_turn;
use recap_abi::wire::{self, SessionHeader};
use recap_core::{
    Form, Invariant, Message, RenderError, RenderRequest, Session, SessionState, SpecError,
    Strategy, StrategySpec, TokenCounter,
};
use std::collections::BTreeMap;
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
            match call::describe(&plugin.fns, &request) {
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
        } else if let Some(key) = spec.options.keys().next() {
            return Err(SpecError::UnknownOption {
                strategy: plugin.name().to_string(),
                key: key.clone(),
                known: "none".into(),
            });
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
        call::render(&self.plugin.fns, &bytes).map_err(|e| self.render_error(e))
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
        RenderRequest::for_call(session, k)?;
        self.check_form(session.form)?;
        let host = state.reuse_or_set(
            |s: &HostSession| s.belongs_to(self.instance, session),
            || HostSession::new(self.instance, session),
        );
        let result = host.render(
            &self.plugin.fns,
            &self.options,
            self.counter.as_deref(),
            session,
            k,
        );
        if result.is_err() {
            // A failed call may leave either side half-updated: start over next time.
            state.clear();
        }
        result.map_err(|e| self.render_error(e))
    }
}

/// The host's side of rendering one session incrementally.
pub(crate) struct HostSession {
    instance: u64,
    session_id: String,
    mode: Mode,
    /// The token counts of the chat turns counted so far (each turn counted once).
    counts: Option<TokenCounts>,
}

enum Mode {
    /// Not started yet.
    Idle,
    /// The plugin keeps the turns: only new turns go out, only changed messages come
    /// back.
    Plugin {
        handle: SessionHandle,
        /// Turns the plugin-side session holds.
        sent: usize,
        /// The messages of the previous response.
        previous: Vec<Message>,
        /// The request buffer, reused by every call.
        request: Vec<u8>,
    },
    /// The plugin has no session functions: keep the serialised request so that each
    /// call serialises only the new turns.
    Bytes {
        /// The request up to the end of the last serialised turn.
        buf: Vec<u8>,
        /// `ends[i]`: the length of `buf` holding `i` turns.
        ends: Vec<usize>,
    },
}

impl HostSession {
    pub(crate) fn new(instance: u64, session: &Session) -> Self {
        Self {
            instance,
            session_id: session.id.clone(),
            mode: Mode::Idle,
            counts: None,
        }
    }

    fn belongs_to(&self, instance: u64, session: &Session) -> bool {
        self.instance == instance && self.session_id == session.id
    }

    /// Counts the chat turns up to `k` not counted yet (none without a tokenizer, and
    /// none in a PTC-Lisp session, whose requests carry no counts).
    fn count_to(&mut self, counter: Option<&dyn TokenCounter>, session: &Session, k: usize) {
        let Some(counter) = counter.filter(|_| session.form == Form::Chat) else {
            return;
        };
        let counts = self.counts.get_or_insert_with(|| {
            TokenCounts::opening(counter, &session.system_prompt, &session.mission)
        });
        while counts.turns.len() < k {
            let turn = &session.chat_turns[counts.turns.len()];
            counts.turns.push(count_turn(counter, turn));
        }
    }

    /// Renders call `k` (after `k` turns) of `session`; chat requests carry the token
    /// counts of `counter` when there is one.
    pub(crate) fn render(
        &mut self,
        fns: &Fns,
        options: &BTreeMap<String, String>,
        counter: Option<&dyn TokenCounter>,
        session: &Session,
        k: usize,
    ) -> Result<Vec<Message>, CallError> {
        self.count_to(counter, session, k);
        let counts = self.counts.as_ref();
        if let Mode::Idle = self.mode {
            let header = SessionHeader::of_session(session);
            self.mode = match fns.sessions {
                Some(sessions) => Mode::Plugin {
                    handle: SessionHandle::open(
                        fns,
                        sessions,
                        &wire::session_open_request(options, &header, counts),
                    )?,
                    sent: 0,
                    previous: Vec::new(),
                    request: Vec::new(),
                },
                None => {
                    let mut buf = Vec::with_capacity(4096);
                    wire::put_render_request_head(&mut buf, options, &header);
                    let ends = vec![buf.len()];
                    Mode::Bytes { buf, ends }
                }
            };
        }
        match &mut self.mode {
            Mode::Idle => unreachable!("started above"),
            Mode::Plugin {
                handle,
                sent,
                previous,
                request,
            } => {
                let from = k.min(*sent);
                match session.form {
                    Form::Ptc => {
                        wire::put_session_render_request(request, from, &session.turns[from..k]);
                    }
                    Form::Chat => wire::put_chat_session_render_request(
                        request,
                        from,
                        &session.chat_turns[from..k],
                        counts.map(|c| &c.turns[from..k]),
                    ),
                }
                let (kept, new) = handle.render(request)?;
                *sent = k;
                if kept > previous.len() {
                    return Err(CallError::InvalidResponse {
                        status: 0,
                        reason: format!(
                            "messages_kept {kept} but the previous response had {} messages",
                            previous.len()
                        ),
                    });
                }
                let mut messages = Vec::with_capacity(kept + new.len());
                messages.extend_from_slice(&previous[..kept]);
                messages.extend_from_slice(&new);
                previous.truncate(kept);
                previous.extend(new);
                Ok(messages)
            }
            Mode::Bytes { buf, ends } => {
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
                let end = ends[k];
                let counted = counts.map(|c| (c, &c.turns[..k]));
                if end == buf.len() {
                    // The usual case (calls in order): close the request in place.
                    wire::put_request_end(buf, counted);
                    let result = call::render(fns, buf);
                    buf.truncate(end);
                    result
                } else {
                    let mut request = Vec::with_capacity(end + 2);
                    request.extend_from_slice(&buf[..end]);
                    wire::put_request_end(&mut request, counted);
                    call::render(fns, &request)
                }
            }
        }
    }
}
