//! `aggressive` (sample plugin): the seeds' "minimal summaries for token-constrained
//! scenarios". One USER message holding the mission, the names of the live
//! definitions (functions and values), the last error, and the turns line — no
//! samples, no output, no tool calls, no programs.
//!
//! ```text
//! Find well-reviewed products in stock
//!
//! ; Defined: electronics, reviews, inventory, in-stock?
//! ; Last error (turn 3): sort-by: expected a collection, got a string
//!
//! Turns left: 2
//! ```
//!
//! Chat form (ABI 1.1): SYSTEM, USER(mission), and only the newest `turns` turns
//! whole (default 1: the last response and what came back), older turns dropped whole
//! so that a tool result never loses its call. With `max_tokens` it also drops the
//! oldest of those turns until the prompt fits, counted with the run's tokenizer
//! through the token counts recap sends with chat requests; when not even the newest
//! turn fits, SYSTEM and USER(mission) alone are sent.
//!
//! Built as a `cdylib` and loaded with `recap ... --plugin`.

use recap_abi::TokenCounts;
use recap_core::{
    Form, Invariant, Message, OptionInfo, RenderError, RenderRequest, Replay, Session, SpecError,
    Strategy, StrategySpec, each_call,
};

pub const NAME: &str = "aggressive";
pub const DEFAULT_TURNS: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Aggressive {
    /// Chat form: how many of the newest turns are kept whole.
    pub turns: u32,
    /// Chat form: the prompt budget in tokens, if any.
    pub max_tokens: Option<u64>,
}

impl Default for Aggressive {
    fn default() -> Self {
        Self {
            turns: DEFAULT_TURNS,
            max_tokens: None,
        }
    }
}

impl Aggressive {
    /// The chat-form prompt; `tokens` are the host's counts (needed with `max_tokens`).
    pub fn render_chat(
        &self,
        request: &RenderRequest<'_>,
        tokens: Option<&TokenCounts>,
    ) -> Result<Vec<Message>, RenderError> {
        let turns = request.chat_turns;
        let mut first = turns.len().saturating_sub(self.turns as usize);
        if let Some(max) = self.max_tokens {
            let tokens = tokens.ok_or_else(|| {
                RenderError::new(
                    "needs_tokenizer",
                    "max_tokens needs the token counts recap sends when the run has a tokenizer",
                )
            })?;
            while first < turns.len() && tokens.prompt_with_turns(first..turns.len()) > max {
                first += 1;
            }
        }
        let mut out = vec![
            Message::system(request.system_prompt),
            Message::user(request.mission),
        ];
        for turn in &turns[first..] {
            out.extend(turn.messages());
        }
        Ok(out)
    }

    /// The USER message after at least one turn.
    fn content(request: &RenderRequest<'_>) -> String {
        let mut out = String::with_capacity(request.mission.len() + 256);
        out.push_str(request.mission);
        let live = recap_core::memory::fold(request.turns);
        let mut summary = String::new();
        if !live.is_empty() {
            summary.push_str("; Defined: ");
            for (i, def) in live.iter().enumerate() {
                if i > 0 {
                    summary.push_str(", ");
                }
                summary.push_str(&def.name);
            }
        }
        if let Some(failed) = request.turns.iter().rev().find(|t| !t.success) {
            if !summary.is_empty() {
                summary.push('\n');
            }
            summary.push_str(&format!(
                "; Last error (turn {}): {}",
                failed.number,
                failed.error_message().unwrap_or_default()
            ));
        }
        if !summary.is_empty() {
            out.push_str("\n\n");
            out.push_str(&summary);
        }
        out.push_str("\n\n");
        out.push_str(&request.turns_line());
        out
    }
}

impl Aggressive {
    /// Without the host's token counts: a chat render with `max_tokens` fails.
    pub fn render(&self, request: &RenderRequest<'_>) -> Result<Vec<Message>, RenderError> {
        if request.form == Form::Chat {
            return self.render_chat(request, None);
        }
        // SPEC 5: with no turns completed every strategy renders the mission alone.
        let user = if request.turns.is_empty() {
            request.mission.to_string()
        } else {
            Self::content(request)
        };
        Ok(vec![
            Message::system(request.system_prompt),
            Message::user(user),
        ])
    }
}

impl Strategy for Aggressive {
    fn open(&self) -> Box<dyn Replay> {
        let strategy = *self;
        each_call(move |request| strategy.render(request))
    }

    fn spec(&self) -> String {
        let mut options = Vec::new();
        if let Some(max) = self.max_tokens {
            options.push(format!("max_tokens={max}"));
        }
        if self.turns != DEFAULT_TURNS {
            options.push(format!("turns={}", self.turns));
        }
        if options.is_empty() {
            NAME.to_string()
        } else {
            format!("{NAME}:{}", options.join(","))
        }
    }

    fn invariants(&self) -> Vec<Invariant> {
        // Not failed-turns-verbatim (only the last error, no programs), not append-only.
        let mut all = Invariant::UNIVERSAL.to_vec();
        all.extend([Invariant::MissionLeadsFirstUser, Invariant::TurnsLine]);
        all
    }

    fn forms(&self) -> Vec<Form> {
        Form::ALL.to_vec()
    }
}

impl recap_abi::Plugin for Aggressive {
    const NAME: &'static str = NAME;
    const VERSION: &'static str = env!("CARGO_PKG_VERSION");
    const SUMMARY: &'static str = "minimal summary: definition names and the last error only (no samples, no output); chat: the newest turns whole, within a token budget";

    fn options() -> Vec<OptionInfo> {
        vec![
            OptionInfo {
                key: "turns".into(),
                default: DEFAULT_TURNS.to_string(),
                help: "chat form: how many of the newest turns are kept whole (integer ≥ 1)"
                    .into(),
            },
            OptionInfo {
                key: "max_tokens".into(),
                default: "none".into(),
                help: "chat form: prompt budget in tokens of the run's tokenizer; older kept turns are dropped until the prompt fits (integer ≥ 1, or none)".into(),
            },
        ]
    }

    fn from_spec(spec: &StrategySpec) -> Result<Self, SpecError> {
        // The SDK rejects unknown keys before this is called.
        let max_tokens = match spec.options.get("max_tokens").map(String::as_str) {
            None | Some("none") => None,
            Some(_) => Some(spec.int_at_least("max_tokens", 1, 0)?),
        };
        Ok(Self {
            turns: spec.positive_int("turns", DEFAULT_TURNS)?,
            max_tokens,
        })
    }

    const USES_TOKEN_COUNTS: bool = true;

    fn render_with_tokens(
        &self,
        session: &Session,
        k: usize,
        tokens: Option<&TokenCounts>,
    ) -> Result<Vec<Message>, RenderError> {
        let request = RenderRequest::for_call(session, k)?;
        match request.form {
            Form::Chat => self.render_chat(&request, tokens),
            Form::Ptc => self.render(&request),
        }
    }
}

recap_abi::export_strategy!(Aggressive);

#[cfg(test)]
mod tests {
    use super::*;
    use recap_abi::Plugin;
    use recap_core::invariants::check_session;
    use recap_core::prompt_tokens;
    use recap_core::tokens::WordCounter;
    use recap_gen::builder::{SessionBuilder, TurnBuilder, closure, value};
    use recap_gen::chat::ChatSessionBuilder;
    use serde_json::json;

    #[test]
    fn worked_example_after_three_turns() {
        let s = SessionBuilder::new("Find well-reviewed products in stock")
            .system("You are a PTC-Lisp agent.")
            .turn(
                TurnBuilder::ok("(def electronics ...)")
                    .def("electronics", value(json!([1, 2])))
                    .def("reviews", value(json!("text")))
                    .def_doc("inventory", "Warehouse stock", value(json!("stock")))
                    .definition(
                        "in-stock?",
                        recap_core::DefKind::Defn,
                        None,
                        Some(closure(&["name"], None)),
                    ),
            )
            .turn(TurnBuilder::ok("(println x)").prints(["In stock: Laptop"]))
            .turn(TurnBuilder::failed(
                "(def top (first (sort-by :rating reviews)))",
                "sort-by: expected a collection, got a string",
            ))
            .build();
        let m = Aggressive::default()
            .render(&RenderRequest::for_call(&s, 3).unwrap())
            .unwrap();
        assert_eq!(m.len(), 2);
        assert_eq!(
            m[1].content,
            "Find well-reviewed products in stock\n\n\
             ; Defined: electronics, reviews, inventory, in-stock?\n\
             ; Last error (turn 3): sort-by: expected a collection, got a string\n\n\
             Turns left: 2"
        );
        let m = Aggressive::default()
            .render(&RenderRequest::for_call(&s, 2).unwrap())
            .unwrap();
        assert!(
            !m[1].content.contains("In stock"),
            "no output: {}",
            m[1].content
        );
    }

    #[test]
    fn zero_turns_and_nothing_to_summarise() {
        let s = SessionBuilder::new("m")
            .system("sys")
            .turn(TurnBuilder::ok("(+ 1 2)"))
            .build();
        let m = Aggressive::default()
            .render(&RenderRequest::for_call(&s, 0).unwrap())
            .unwrap();
        assert_eq!(m, vec![Message::system("sys"), Message::user("m")]);
        let m = Aggressive::default()
            .render(&RenderRequest::for_call(&s, 1).unwrap())
            .unwrap();
        assert_eq!(m[1].content, "m\n\nTurns left: 4");
    }

    fn spec(text: &str) -> Result<Aggressive, SpecError> {
        Aggressive::from_spec(&StrategySpec::parse(text).unwrap())
    }

    #[test]
    fn options() {
        assert_eq!(spec("aggressive").unwrap(), Aggressive::default());
        let a = spec("aggressive:turns=3,max_tokens=200").unwrap();
        assert_eq!((a.turns, a.max_tokens), (3, Some(200)));
        assert_eq!(a.spec(), "aggressive:max_tokens=200,turns=3");
        assert_eq!(spec("aggressive:max_tokens=none").unwrap().max_tokens, None);
        for bad in [
            "aggressive:turns=0",
            "aggressive:max_tokens=0",
            "aggressive:max_tokens=x",
        ] {
            assert!(spec(bad).is_err(), "{bad}");
        }
    }

    fn chat_session() -> recap_core::Session {
        ChatSessionBuilder::new("Fix the failing test")
            .system("You are a coding agent.")
            .tool_turn(
                "",
                &[
                    ("c1", "run_tests", "{}"),
                    ("c2", "read_file", r#"{"path": "src/lib.rs"}"#),
                ],
                &["1 failed: parse_empty", "fn parse(s: &str) {}"],
            )
            .text_turn("The empty case is not handled. Fix it?", &["yes"])
            .command_turn("```\ncargo test\n```", "all 12 tests passed")
            .build()
    }

    #[test]
    fn chat_form_keeps_the_newest_turns_whole() {
        let s = chat_session();
        let opening = vec![
            Message::system("You are a coding agent."),
            Message::user("Fix the failing test"),
        ];
        let request = RenderRequest::for_call(&s, 3).unwrap();
        let m = Aggressive::default().render(&request).unwrap();
        let mut want = opening.clone();
        want.extend(s.chat_turns[2].messages());
        assert_eq!(m, want);
        let m = spec("aggressive:turns=5")
            .unwrap()
            .render(&request)
            .unwrap();
        let mut want = opening.clone();
        s.chat_turns.iter().for_each(|t| want.extend(t.messages()));
        assert_eq!(m, want, "more turns than the session has: all of them");
        let request = RenderRequest::for_call(&s, 0).unwrap();
        assert_eq!(Aggressive::default().render(&request).unwrap(), opening);
    }

    #[test]
    fn the_token_budget_drops_the_oldest_kept_turns() {
        let s = chat_session();
        let counts =
            TokenCounts::of_session(&WordCounter, &s.system_prompt, &s.mission, &s.chat_turns);
        let request = RenderRequest::for_call(&s, 3).unwrap();
        let all = spec("aggressive:turns=3").unwrap();
        let full = all.render(&request).unwrap();
        let full_tokens = prompt_tokens(&WordCounter, &full);
        assert_eq!(counts.prompt_with_turns(0..3), full_tokens);
        for max in [full_tokens, full_tokens - 1, 20, 1] {
            let budget = Aggressive {
                max_tokens: Some(max),
                ..all
            };
            let m = budget.render_with_tokens(&s, 3, Some(&counts)).unwrap();
            assert!(
                prompt_tokens(&WordCounter, &m) <= max || m.len() == 2,
                "{max}: {m:?}"
            );
            // Whole turns, newest last: the prompt is a suffix of the full one.
            assert_eq!(&m[..2], &full[..2]);
            assert!(full.ends_with(&m[2..]), "{max}");
            if max == full_tokens {
                assert_eq!(m, full);
            }
        }
        let budget = Aggressive {
            max_tokens: Some(100),
            ..all
        };
        let err = budget.render(&request).unwrap_err();
        assert_eq!(err.kind, "needs_tokenizer");
    }

    #[test]
    fn declared_invariants_hold_on_generated_chat_sessions() {
        for turns in [1, 3] {
            let strategy = Aggressive {
                turns,
                max_tokens: None,
            };
            for s in recap_gen::generate_chat_corpus(13, 30, 1..=10) {
                let violations = check_session(&strategy, &s).unwrap();
                assert!(
                    violations.is_empty(),
                    "turns {turns}, session {}: {violations:?}",
                    s.id
                );
            }
        }
    }

    #[test]
    fn declared_invariants_hold_on_generated_sessions() {
        for s in recap_gen::generate_corpus(5, 40, 0..=12) {
            let violations = check_session(&Aggressive::default(), &s).unwrap();
            assert!(violations.is_empty(), "session {}: {violations:?}", s.id);
        }
    }
}
