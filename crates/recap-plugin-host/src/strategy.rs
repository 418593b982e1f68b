//! A plugin strategy as a [`recap_core::Strategy`]: each replay of a session is a
//! plugin-side session ([`crate::replay`]), so the per-call cost does not grow with the
//! history already sent.

use crate::call::CallError;
use crate::load::{Plugin, split_invariants};
use crate::replay::{HostSession, Target};
use recap_abi::TokenCounts;
use recap_abi::wire::{self, SessionHeader};
use recap_core::{
    Answer, Form, Invariant, Message, RenderError, RenderRequest, Replay, Session, SpecError,
    Strategy, StrategySpec, TokenCounter,
};
use std::collections::BTreeMap;
use std::sync::Arc;

/// One instance of a plugin strategy (a spec string's options applied).
#[derive(Clone)]
pub struct PluginStrategy {
    plugin: Arc<Plugin>,
    options: Arc<BTreeMap<String, String>>,
    spec: String,
    invariants: Vec<Invariant>,
    /// The forms this instance renders; other sessions are never sent to the plugin.
    forms: Vec<Form>,
    /// The run's tokenizer: chat requests then carry per-message token counts.
    counter: Option<Arc<dyn TokenCounter>>,
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
            options: Arc::new(spec.options.clone()),
            spec: spec_text,
            invariants,
            forms,
            counter: None,
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

    /// The prompt of `request` through the ABI's full request (`render`): the whole
    /// history in one call, as a plugin without session functions is always asked. A
    /// replay asks for only the turns the plugin does not hold yet.
    pub fn render_request(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
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

    /// A plugin-side session: only the turns the plugin does not hold yet go out.
    fn open(&self) -> Box<dyn Replay> {
        Box::new(PluginReplay {
            strategy: self.clone(),
            host: HostSession::new(),
        })
    }

    /// Two plugin-side sessions opened as a pair: an SDK plugin holds their turns once,
    /// and a request both send is encoded once.
    fn open_pair(&self) -> [Box<dyn Replay>; 2] {
        HostSession::pair().map(|host| {
            Box::new(PluginReplay {
                strategy: self.clone(),
                host,
            }) as Box<dyn Replay>
        })
    }

    fn invariants(&self) -> Vec<Invariant> {
        self.invariants.clone()
    }

    fn forms(&self) -> Vec<Form> {
        self.forms.clone()
    }

    /// recap cannot see into a plugin: its determinism is checked at every call.
    fn opaque(&self) -> bool {
        true
    }
}

/// One session replayed through a plugin.
struct PluginReplay {
    strategy: PluginStrategy,
    host: HostSession,
}

impl Replay for PluginReplay {
    /// What the plugin's response keeps of its previous one (`messages_kept`), when the
    /// caller holds that response: the kept messages are not copied out again.
    fn call(&mut self, session: &Session, k: usize, held: usize) -> Answer {
        RenderRequest::for_call(session, k)?;
        let s = &self.strategy;
        s.check_form(session.form)?;
        let to = Target {
            backend: &s.plugin.backend,
            options: &s.options,
            counter: s.counter.as_deref(),
        };
        self.host
            .call(&to, session, k, held)
            .map_err(|e| s.render_error(e))
    }
}
