//! A plugin strategy as a [`recap_core::Strategy`], with incremental rendering of
//! sessions: the per-call cost does not grow with the history already sent.

use crate::call::{self, CallError, Fns, SessionHandle};
use crate::load::{Plugin, split_invariants};
use recap_abi::wire::{self, SessionHeader};
use recap_core::{
    Invariant, Message, RenderError, RenderRequest, Session, SessionState, SpecError, Strategy,
    StrategySpec,
};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// One instance of a plugin strategy (a spec string's options applied).
#[derive(Debug)]
pub struct PluginStrategy {
    plugin: Arc<Plugin>,
    options: BTreeMap<String, String>,
    spec: String,
    invariants: Vec<Invariant>,
    /// Tells this instance's [`SessionState`]s apart from other instances'.
    instance: u64,
}

static NEXT_INSTANCE: AtomicU64 = AtomicU64::new(1);

impl PluginStrategy {
    /// Builds an instance; the plugin's `describe` validates the options and declares
    /// the instance's invariants.
    pub fn new(plugin: Arc<Plugin>, spec: &StrategySpec) -> Result<Self, SpecError> {
        let mut canonical = spec.clone();
        canonical.name = plugin.name().to_string();
        let mut invariants = plugin.invariants().to_vec();
        let mut spec_text = canonical.to_string();
        if plugin.has_describe() {
            let request = wire::describe_request(&spec.options);
            match call::describe(&plugin.fns, &request) {
                Ok(Some(d)) => {
                    invariants = split_invariants(&d.invariants).0;
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
            instance: NEXT_INSTANCE.fetch_add(1, Ordering::Relaxed),
        })
    }

    pub fn plugin(&self) -> &Arc<Plugin> {
        &self.plugin
    }

    fn render_error(&self, e: CallError) -> RenderError {
        e.into_render_error(&self.plugin.path().display().to_string())
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
        let bytes = wire::render_request(
            &self.options,
            &SessionHeader::of_request(request),
            request.turns,
        );
        call::render(&self.plugin.fns, &bytes).map_err(|e| self.render_error(e))
    }

    fn invariants(&self) -> Vec<Invariant> {
        self.invariants.clone()
    }

    fn render_session(
        &self,
        session: &Session,
        k: usize,
        state: &mut SessionState,
    ) -> Result<Vec<Message>, RenderError> {
        RenderRequest::for_call(session, k)?;
        let host = state.reuse_or_set(
            |s: &HostSession| s.belongs_to(self.instance, session),
            || HostSession::new(self.instance, session),
        );
        let result = host.render(&self.plugin.fns, &self.options, session, k);
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
        }
    }

    fn belongs_to(&self, instance: u64, session: &Session) -> bool {
        self.instance == instance && self.session_id == session.id
    }

    pub(crate) fn render(
        &mut self,
        fns: &Fns,
        options: &BTreeMap<String, String>,
        session: &Session,
        k: usize,
    ) -> Result<Vec<Message>, CallError> {
        if let Mode::Idle = self.mode {
            let header = SessionHeader::of_session(session);
            self.mode = match fns.sessions {
                Some(sessions) => Mode::Plugin {
                    handle: SessionHandle::open(
                        fns,
                        sessions,
                        &wire::session_open_request(options, &header),
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
                if k >= *sent {
                    wire::put_session_render_request(request, *sent, &session.turns[*sent..k]);
                } else {
                    wire::put_session_render_request(request, k, &[]);
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
                    wire::put_turn(buf, &session.turns[i]);
                    ends.push(buf.len());
                }
                let end = ends[k];
                if end == buf.len() {
                    // The usual case (calls in order): close the request in place.
                    buf.extend_from_slice(wire::REQUEST_END);
                    let result = call::render(fns, buf);
                    buf.truncate(end);
                    result
                } else {
                    let mut request = Vec::with_capacity(end + 2);
                    request.extend_from_slice(&buf[..end]);
                    request.extend_from_slice(wire::REQUEST_END);
                    call::render(fns, &request)
                }
            }
        }
    }
}
