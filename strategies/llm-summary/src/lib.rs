//! `llm-summary` (chat form), after OpenHands' `LLMSummarizingCondenser` and anchored
//! iterative summarization: once a call's prompt would exceed `trigger` tokens, every
//! turn but the newest `keep` is replaced by a summary that the endpoint writes, placed
//! as a USER message right after SYSTEM and USER(mission). Later cuts update the summary
//! incrementally: the summarizer sees the previous summary and only the turns being
//! forgotten now (the anchor), never the whole history again. Between cuts the prompt
//! only grows, so a provider's prompt cache is reused until the next cut.
//!
//! Cuts fall on turn boundaries, so a tool result never loses its call. The summarizer's
//! requests go through recap-llm's endpoint and response cache: a replay with the
//! same cache is byte-identical (SPEC 7.6), and the summarizer's tokens are accounted
//! under [`recap_llm::summarizer_purpose`] so reports show them beside the prompt
//! tokens. The strategy needs an endpoint, so it is not among the built-ins (which stay
//! offline): `recap eval --endpoint …` registers it ([`register`]).
//!
//! Where recap differs from OpenHands: the trigger counts tokens (the run's tokenizer)
//! rather than events; `keep` counts turns (an ASSISTANT response and its observations);
//! OpenHands keeps `keep_first` events verbatim, recap always keeps SYSTEM and the
//! mission and nothing else before the summary.

pub mod template;

use recap_core::tokens::message_tokens;
use recap_core::{
    Answer, BuildContext, ChatTurn, Form, Invariant, Message, OptionInfo, PromptDelta, RenderError,
    RenderRequest, Replay, Session, SpecError, Strategy, StrategyInfo, StrategySpec, TokenCounter,
};
use recap_llm::{ChatRequest, Endpoint, Sampling, Tools, summarizer_purpose};
use std::path::PathBuf;
use std::sync::Arc;
use template::{DEFAULT_TEMPLATE, SUMMARY_PREFIX};

pub const NAME: &str = "llm-summary";
pub const DEFAULT_TRIGGER: u64 = 20_000;
pub const DEFAULT_KEEP: u64 = 10;
pub const DEFAULT_SUMMARY_TOKENS: u64 = 1024;
pub const DEFAULT_EVENT_CHARS: u64 = 10_000;

/// What to pass when `llm-summary` is named where no endpoint is configured.
pub const NEEDS_ENDPOINT: &str = "strategy llm-summary asks a model for its summaries: run it with `recap eval --endpoint URL --model NAME --strategy llm-summary` (URL: an OpenAI-compatible server such as http://127.0.0.1:8000/v1; see docs/evaluation.md)";

pub fn info() -> StrategyInfo {
    StrategyInfo {
        name: NAME.to_string(),
        summary: "chat form: past `trigger` tokens, all but the newest `keep` turns become a summary written by the endpoint, updated incrementally (OpenHands LLMSummarizingCondenser); needs --endpoint".to_string(),
        options: vec![
            OptionInfo {
                key: "trigger".into(),
                default: DEFAULT_TRIGGER.to_string(),
                help: "prompt tokens past which older turns are summarized (≥ 1)".into(),
            },
            OptionInfo {
                key: "keep".into(),
                default: DEFAULT_KEEP.to_string(),
                help: "newest turns always sent verbatim (≥ 1)".into(),
            },
            OptionInfo {
                key: "summary_tokens".into(),
                default: DEFAULT_SUMMARY_TOKENS.to_string(),
                help: "completion tokens a summary may take (max_tokens of its request)".into(),
            },
            OptionInfo {
                key: "event_chars".into(),
                default: DEFAULT_EVENT_CHARS.to_string(),
                help: "characters of one message shown to the summarizer (cut in the middle)".into(),
            },
            OptionInfo {
                key: "template".into(),
                default: "built-in".into(),
                help: "a file holding the summarizer's prompt, with {mission}, {previous_summary} and {events}".into(),
            },
        ],
        origin: "recap eval".to_string(),
    }
}

/// Registers `llm-summary`, asking `endpoint` for summaries with `model`.
pub fn register(
    registry: &mut recap_core::Registry,
    endpoint: Arc<Endpoint>,
    model: String,
) -> Result<(), SpecError> {
    registry.register_with_context(info(), move |spec, ctx| {
        build(spec, ctx, Arc::clone(&endpoint), model.clone())
    })
}

pub fn build(
    spec: &StrategySpec,
    ctx: &BuildContext,
    endpoint: Arc<Endpoint>,
    model: String,
) -> Result<Arc<dyn Strategy>, SpecError> {
    spec.only_options(&[
        "trigger",
        "keep",
        "summary_tokens",
        "event_chars",
        "template",
    ])?;
    let bad = |key: &str, value: &str, expected: String| SpecError::BadValue {
        strategy: spec.name.clone(),
        key: key.into(),
        value: value.into(),
        expected,
    };
    let summary_tokens = spec.int_at_least("summary_tokens", 1, DEFAULT_SUMMARY_TOKENS)?;
    let summary_tokens = u32::try_from(summary_tokens).map_err(|_| {
        bad(
            "summary_tokens",
            &summary_tokens.to_string(),
            "expected at most 4294967295".into(),
        )
    })?;
    let (template, template_path) = match spec.options.get("template") {
        None => (DEFAULT_TEMPLATE.to_string(), None),
        Some(p) => {
            let text = std::fs::read_to_string(p)
                .map_err(|e| bad("template", p, format!("expected a readable file ({e})")))?;
            if !text.contains("{events}") {
                return Err(bad(
                    "template",
                    p,
                    "expected a template holding {events}".into(),
                ));
            }
            (text, Some(PathBuf::from(p)))
        }
    };
    Ok(Arc::new(LlmSummary {
        trigger: spec.int_at_least("trigger", 1, DEFAULT_TRIGGER)?,
        keep: spec.int_at_least("keep", 1, DEFAULT_KEEP)? as usize,
        summary_tokens,
        event_chars: spec.int_at_least("event_chars", 16, DEFAULT_EVENT_CHARS)? as usize,
        template,
        template_path,
        counter: ctx.require_counter(&spec.name)?,
        endpoint,
        model,
    }))
}

#[derive(Clone)]
pub struct LlmSummary {
    pub trigger: u64,
    pub keep: usize,
    pub summary_tokens: u32,
    pub event_chars: usize,
    template: String,
    template_path: Option<PathBuf>,
    counter: Arc<dyn TokenCounter>,
    endpoint: Arc<Endpoint>,
    model: String,
}

/// What the replay of one session keeps: its history messages, their tokens, and after
/// each call the forgetting point and the summary in force.
#[derive(Default)]
struct Calls {
    messages: Vec<Message>,
    tokens: Vec<u64>,
    /// `turn_start[i]`: index of turn `i + 1`'s first message.
    turn_start: Vec<usize>,
    /// Per call replayed: (forgetting point, summary).
    calls: Vec<(usize, Option<Arc<str>>)>,
}

impl Calls {
    fn extend(&mut self, turns: &[ChatTurn], counter: &dyn TokenCounter) {
        for turn in &turns[self.turn_start.len().min(turns.len())..] {
            self.turn_start.push(self.messages.len());
            for m in turn.messages() {
                self.tokens.push(message_tokens(counter, &m));
                self.messages.push(m);
            }
        }
    }

    /// History messages once `j` turns are complete.
    fn end_of(&self, j: usize) -> usize {
        self.turn_start
            .get(j)
            .copied()
            .unwrap_or(self.messages.len())
    }
}

impl LlmSummary {
    fn summary_message(summary: &str) -> Message {
        Message::user(format!("{SUMMARY_PREFIX}{summary}"))
    }

    /// Replays calls up to `k`, asking for summaries where cuts fall.
    fn advance(
        &self,
        replay: &mut Calls,
        opening: &[Message],
        turns: &[ChatTurn],
        k: usize,
    ) -> Result<(), RenderError> {
        replay.extend(&turns[..k.min(turns.len())], self.counter.as_ref());
        let opening_tokens: u64 = 3 + opening
            .iter()
            .map(|m| message_tokens(self.counter.as_ref(), m))
            .sum::<u64>();
        while replay.calls.len() <= k {
            let j = replay.calls.len();
            let (mut f, mut summary) = replay.calls.last().cloned().unwrap_or((0, None));
            let end = replay.end_of(j);
            let summary_tokens = summary.as_deref().map_or(0, |s| {
                message_tokens(self.counter.as_ref(), &Self::summary_message(s))
            });
            let prompt =
                opening_tokens + summary_tokens + replay.tokens[f..end].iter().sum::<u64>();
            if prompt > self.trigger && j > self.keep {
                let cut = replay.end_of(j - self.keep);
                if cut > f {
                    let next =
                        self.summarize(opening, summary.as_deref(), &replay.messages[f..cut])?;
                    summary = Some(Arc::from(next));
                    f = cut;
                }
            }
            replay.calls.push((f, summary));
        }
        Ok(())
    }

    fn summarize(
        &self,
        opening: &[Message],
        previous: Option<&str>,
        forgotten: &[Message],
    ) -> Result<String, RenderError> {
        let mission = opening.get(1).map_or("", |m| m.content.as_str());
        let prompt = template::fill(
            &self.template,
            mission,
            previous,
            &template::events(forgotten, self.event_chars),
        );
        let sampling = Sampling {
            model: self.model.clone(),
            max_tokens: self.summary_tokens,
            temperature: 0.0,
        };
        let request = ChatRequest::new(&sampling, &[Message::user(prompt)], Tools::None);
        let done = self
            .endpoint
            .complete(&request, &summarizer_purpose(&self.spec()))
            .map_err(|e| RenderError::new("summarizer", e.to_string()))?;
        match &done.reply {
            Ok(reply) => match reply.content.as_deref().map(str::trim) {
                Some(text) if !text.is_empty() => Ok(text.to_string()),
                _ => Err(RenderError::new(
                    "summarizer",
                    "the endpoint's summary was empty",
                )),
            },
            Err(m) => Err(RenderError::new("summarizer", m.to_string())),
        }
    }

    fn prompt(&self, replay: &Calls, opening: Vec<Message>, k: usize) -> Vec<Message> {
        let (f, summary) = &replay.calls[k];
        let end = replay.end_of(k);
        let mut out = opening;
        out.reserve(1 + end - f);
        if let Some(s) = summary {
            out.push(Self::summary_message(s));
        }
        out.extend_from_slice(&replay.messages[*f..end]);
        out
    }
}

/// llm-summary's replay.
struct Summarising {
    strategy: LlmSummary,
    calls: Calls,
}

impl Replay for Summarising {
    fn call(&mut self, session: &Session, k: usize, _held: usize) -> Answer {
        let request = RenderRequest::for_call(session, k)?;
        let opening = recap_history::opening(&request);
        self.strategy
            .advance(&mut self.calls, &opening, request.chat_turns, k)?;
        Ok(PromptDelta::whole(self.strategy.prompt(
            &self.calls,
            opening,
            k,
        )))
    }
}

impl Strategy for LlmSummary {
    fn spec(&self) -> String {
        let mut options = Vec::new();
        if self.event_chars as u64 != DEFAULT_EVENT_CHARS {
            options.push(format!("event_chars={}", self.event_chars));
        }
        if self.keep as u64 != DEFAULT_KEEP {
            options.push(format!("keep={}", self.keep));
        }
        if u64::from(self.summary_tokens) != DEFAULT_SUMMARY_TOKENS {
            options.push(format!("summary_tokens={}", self.summary_tokens));
        }
        if let Some(p) = &self.template_path {
            options.push(format!("template={}", p.display()));
        }
        if self.trigger != DEFAULT_TRIGGER {
            options.push(format!("trigger={}", self.trigger));
        }
        if options.is_empty() {
            NAME.to_string()
        } else {
            format!("{NAME}:{}", options.join(","))
        }
    }

    /// The session's calls replayed in order, each summary asked for once.
    fn open(&self) -> Box<dyn Replay> {
        Box::new(Summarising {
            strategy: self.clone(),
            calls: Calls::default(),
        })
    }

    fn invariants(&self) -> Vec<Invariant> {
        let mut all = Invariant::UNIVERSAL.to_vec();
        all.push(Invariant::MissionLeadsFirstUser);
        all
    }

    fn forms(&self) -> Vec<Form> {
        vec![Form::Chat]
    }
}
