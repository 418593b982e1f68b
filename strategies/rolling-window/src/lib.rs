//! The `rolling-window` strategy (SPEC section 6.4): the last `window` turns are kept as
//! `full-history` pairs; older ones are folded into the first USER message exactly as
//! `single-user-coalesced` renders them (mission, summary, failed turns) but without a
//! turns line. With k ≤ window it equals `full-history`.
//!
//! Chat form (SPEC 11.3, after OpenHands' `RecentEventsCondenser`): the last `window`
//! turns verbatim, older turns dropped whole. A turn is an ASSISTANT response with all
//! its observations, so a tool result never loses its call.

use recap_core::{
    Answer, Form, Invariant, Message, OptionInfo, PromptDelta, RenderRequest, Replay, Session,
    SpecError, Strategy, StrategyInfo, StrategySpec, reference_first,
};
use recap_history::transcript::Transcript;
use recap_single_user_coalesced::{
    SummaryCache, SummaryOptions, canonical_spec, context_len_hint, reject_unknown, single_shot,
    summary_invariants, write_context,
};
use std::sync::Arc;

pub const NAME: &str = "rolling-window";
pub const DEFAULT_WINDOW: u32 = 3;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RollingWindow {
    /// How many of the most recent turns stay verbatim.
    pub window: u32,
    pub options: SummaryOptions,
}

impl Default for RollingWindow {
    fn default() -> Self {
        Self {
            window: DEFAULT_WINDOW,
            options: SummaryOptions::default(),
        }
    }
}

pub fn info() -> StrategyInfo {
    let mut options = vec![OptionInfo {
        key: "window".into(),
        default: DEFAULT_WINDOW.to_string(),
        help: "most recent turns kept verbatim as full-history pairs".into(),
    }];
    options.extend(SummaryOptions::infos());
    StrategyInfo {
        name: NAME.to_string(),
        summary: "the last `window` turns verbatim; older turns folded into the first USER message as single-user-coalesced renders them".to_string(),
        options,
        origin: "built-in".to_string(),
    }
}

pub fn build(spec: &StrategySpec) -> Result<Arc<dyn Strategy>, SpecError> {
    reject_unknown(spec, &["window", "println_limit", "tool_call_limit"])?;
    Ok(Arc::new(RollingWindow {
        window: spec.positive_int("window", DEFAULT_WINDOW)?,
        options: SummaryOptions::from_spec(spec)?,
    }))
}

impl Strategy for RollingWindow {
    fn spec(&self) -> String {
        let mut options = self.options.non_default();
        if self.window != DEFAULT_WINDOW {
            options.push(("window", self.window));
        }
        canonical_spec(NAME, options)
    }

    /// [`RollingWindow::render_messages`] first, then the kept turns from the session's
    /// transcript and the folded part's pieces from its [`SummaryCache`].
    fn open(&self) -> Box<dyn Replay> {
        let strategy = *self;
        reference_first(
            move |request| Ok(strategy.render_messages(request)),
            Box::new(Rolling {
                strategy,
                transcript: Transcript::new(),
                cache: SummaryCache::new(),
            }),
        )
    }

    fn invariants(&self) -> Vec<Invariant> {
        summary_invariants(self.options)
    }

    fn forms(&self) -> Vec<Form> {
        Form::ALL.to_vec()
    }
}

/// rolling-window's incremental replay.
struct Rolling {
    strategy: RollingWindow,
    /// The chat form, and the PTC-Lisp calls before the window fills, keep turns as
    /// full-history renders them: from the session's transcript, rendered once.
    transcript: Transcript,
    /// The folded part's pieces, printed once per session.
    cache: SummaryCache,
}

impl Replay for Rolling {
    /// The chat form (and the PTC-Lisp calls before the window fills) answered against
    /// the previous prompt: the turns added while the window has not moved, the opening
    /// kept when it has. Other PTC-Lisp prompts whole.
    fn call(&mut self, session: &Session, k: usize, held: usize) -> Answer {
        let request = RenderRequest::for_call(session, k)?;
        let window = self.strategy.window as usize;
        if request.form == Form::Chat || k <= window {
            let t = self.transcript.advanced(&request);
            return Ok(t.answer(k.saturating_sub(window), k, held));
        }
        if let Some(full) = single_shot(&request) {
            return Ok(PromptDelta::whole(full));
        }
        let options = self.strategy.options;
        let older = k - window;
        let mut first = String::with_capacity(self.cache.len_hint(session, older, options));
        self.cache
            .write_context(&mut first, session, older, options);
        Ok(PromptDelta::whole(self.strategy.assemble(&request, first)))
    }
}

impl RollingWindow {
    /// The rolling-window prompt; never fails.
    pub fn render_messages(&self, request: &RenderRequest<'_>) -> Vec<Message> {
        if request.form == Form::Chat {
            return self.render_chat(request);
        }
        let k = request.turns.len();
        let window = self.window as usize;
        // k ≤ window: nothing to fold. SS-001: single-shot mode is not compressed.
        if k <= window {
            return recap_history::render(request);
        }
        if let Some(full) = single_shot(request) {
            return full;
        }
        let older = &request.turns[..k - window];
        let mut first =
            String::with_capacity(context_len_hint(request.mission, older, self.options));
        write_context(&mut first, request.mission, older, self.options);
        self.assemble(request, first)
    }

    /// Chat form: `[SYSTEM, USER(mission)]` and the last `window` turns whole.
    fn render_chat(&self, request: &RenderRequest<'_>) -> Vec<Message> {
        let turns = request.chat_turns;
        let kept = &turns[turns.len().saturating_sub(self.window as usize)..];
        let mut messages = recap_history::opening(request);
        recap_history::push_chat_turns(&mut messages, kept);
        messages
    }

    /// `[SYSTEM, USER(first)]`, then the last `window` turns as full-history pairs
    /// (only called with more than `window` turns).
    fn assemble(&self, request: &RenderRequest<'_>, first: String) -> Vec<Message> {
        let older = request.turns.len() - self.window as usize;
        let kept = &request.turns[older..];
        let mut messages = Vec::with_capacity(2 + 2 * kept.len());
        messages.push(Message::system(request.system_prompt));
        messages.push(Message::user(first));
        recap_history::push_pairs(&mut messages, kept, older, request.max_turns);
        messages
    }
}
