//! Property tests over generated sessions (recap-gen): the invariants of SPEC section 7
//! for every built-in, and properties of single strategies that those invariants do not
//! cover.

use proptest::prelude::*;
use recap_core::invariants::{calls, check_session};
use recap_core::{Message, Role, Session, Strategy, Value, to_clojure};
use recap_gen::arb_session;
use std::sync::Arc;

/// The built-ins with their defaults and with small limits, so the limits bind often
/// (the specs every cross-strategy property runs), each built anew.
fn strategies() -> Vec<Arc<dyn Strategy>> {
    recap_testkit::specs::build_all()
        .into_iter()
        .map(|(_, strategy)| strategy)
        .collect()
}

fn render(strategy: &dyn Strategy, session: &Session, k: usize) -> Vec<Message> {
    recap_core::render_call(strategy, session, k).unwrap()
}

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Generated sessions are large; shrinking a failure takes long enough as it is.
        max_shrink_iters: 200,
        ..ProptestConfig::default()
    }
}

proptest! {
    #![proptest_config(config(48))]

    #[test]
    fn every_builtin_keeps_every_invariant_it_declares(session in arb_session()) {
        for strategy in strategies() {
            let violations = check_session(strategy.as_ref(), &session).unwrap();
            prop_assert!(
                violations.is_empty(),
                "{} on session {}: {:?}",
                strategy.spec(),
                session.id,
                violations
            );
        }
    }

    #[test]
    fn rendering_is_deterministic_across_instances(session in arb_session()) {
        let a = strategies();
        let b = strategies();
        let copy = session.clone();
        for (sa, sb) in a.iter().zip(&b) {
            for k in calls(&session) {
                prop_assert_eq!(render(sa.as_ref(), &session, k), render(sb.as_ref(), &copy, k));
            }
        }
    }

    #[test]
    fn single_user_coalesced_never_shows_a_successful_program(session in arb_session()) {
        let suc = recap_builtins::registry().build("single-user-coalesced").unwrap();
        for k in calls(&session) {
            let messages = render(suc.as_ref(), &session, k);
            let shown: String = messages.iter().map(|m| m.content.as_str()).collect::<Vec<_>>().join("\n");
            for turn in session.turns[..k].iter().filter(|t| t.success) {
                if shown.contains(&turn.program) {
                    prop_assert!(
                        is_also_data(&session, k, &turn.program),
                        "call {}: turn {}'s program leaked into the prompt", k, turn.number
                    );
                }
            }
        }
    }

    #[test]
    fn tool_call_and_output_lines_respect_their_limits(
        session in arb_session(),
        tool_call_limit in 1u32..6,
        println_limit in 1u32..6,
    ) {
        let spec = format!("single-user-coalesced:println_limit={println_limit},tool_call_limit={tool_call_limit}");
        let suc = recap_builtins::registry().build(&spec).unwrap();
        for k in calls(&session).skip(1) {
            let content = &render(suc.as_ref(), &session, k)[1].content;
            let tool_lines = content.lines().filter(|l| l.starts_with(";   ")).count();
            prop_assert!(tool_lines <= tool_call_limit as usize, "{} tool lines", tool_lines);
            // The Output section is exactly the last `println_limit` prints, each cut.
            let prints: Vec<&String> = session.turns[..k]
                .iter()
                .filter(|t| t.success)
                .flat_map(|t| t.prints.iter())
                .collect();
            if !prints.is_empty() {
                let mut expected = String::from("\n; Output:");
                for p in &prints[prints.len().saturating_sub(println_limit as usize)..] {
                    expected.push('\n');
                    recap_single_user_coalesced::push_cut_print(&mut expected, p);
                }
                prop_assert!(content.contains(&expected), "call {}: Output section differs", k);
            } else {
                prop_assert!(!content.contains("\n; Output:"));
            }
        }
    }

    #[test]
    fn per_turn_summary_and_full_history_are_append_only(session in arb_session()) {
        let registry = recap_builtins::registry();
        for spec in ["per-turn-summary", "full-history", "per-turn-summary:println_limit=1"] {
            let strategy = registry.build(spec).unwrap();
            let mut previous: Option<Vec<Message>> = None;
            for k in calls(&session) {
                let messages = render(strategy.as_ref(), &session, k);
                if let Some(prev) = &previous {
                    prop_assert!(messages.len() == prev.len() + 2);
                    prop_assert_eq!(&messages[..prev.len()], &prev[..], "{} call {}", spec, k);
                }
                previous = Some(messages);
            }
        }
    }

    #[test]
    fn rolling_window_keeps_the_last_turns_verbatim(session in arb_session(), window in 1u32..5) {
        let registry = recap_builtins::registry();
        let rw = registry.build(&format!("rolling-window:window={window}")).unwrap();
        let full = registry.build("full-history").unwrap();
        for k in calls(&session) {
            let got = render(rw.as_ref(), &session, k);
            let reference = render(full.as_ref(), &session, k);
            let kept = 2 * k.min(window as usize);
            prop_assert_eq!(got.len(), 2 + kept);
            prop_assert_eq!(&got[2..], &reference[reference.len() - kept..]);
            if k <= window as usize {
                prop_assert_eq!(&got, &reference);
            }
            prop_assert_eq!(got[1].role, Role::User);
        }
    }
}

/// Whether a program text is also something the summary may legitimately show: a print,
/// a printed value, the mission, or a failed turn's text.
fn is_also_data(session: &Session, k: usize, program: &str) -> bool {
    let printed = |v: &Value| {
        [
            recap_single_user_coalesced::ARGS_PRINT,
            recap_single_user_coalesced::SAMPLE_PRINT,
        ]
        .iter()
        .any(|o| to_clojure(v, *o).0.contains(program))
    };
    session.mission.contains(program)
        || session.system_prompt.contains(program)
        || session.turns[..k].iter().any(|t| {
            t.prints.iter().any(|p| p.contains(program))
                || (!t.success
                    && (t.program.contains(program)
                        || t.error_message().is_some_and(|m| m.contains(program))))
                || t.definitions.iter().any(|d| {
                    d.name.contains(program)
                        || d.docstring.as_deref().is_some_and(|s| s.contains(program))
                        || d.value.as_ref().is_some_and(printed)
                })
                || t.tool_calls
                    .iter()
                    .any(|c| c.name.contains(program) || printed(&c.args))
        })
}

type Mutation = fn(&mut Vec<Message>);

/// A strategy that renders with one strategy but declares invariants it does not keep,
/// to show the checker catches each kind of break on generated sessions.
struct Liar {
    inner: Arc<dyn Strategy>,
    declares: Vec<recap_core::Invariant>,
    mutate: Mutation,
}

impl Strategy for Liar {
    fn spec(&self) -> String {
        format!("liar({})", self.inner.spec())
    }
    fn open(&self) -> Box<dyn recap_core::Replay> {
        Box::new(Lying {
            inner: self.inner.open(),
            mutate: self.mutate,
        })
    }
    fn invariants(&self) -> Vec<recap_core::Invariant> {
        self.declares.clone()
    }
}

/// The inner strategy's prompts, each whole and mutated.
struct Lying {
    inner: Box<dyn recap_core::Replay>,
    mutate: Mutation,
}

impl recap_core::Replay for Lying {
    fn call(&mut self, session: &Session, k: usize, _held: usize) -> recap_core::Answer {
        let mut messages = self.inner.call(session, k, 0)?.tail;
        (self.mutate)(&mut messages);
        Ok(recap_core::PromptDelta::whole(messages))
    }
}

#[test]
fn the_checker_catches_strategies_that_break_their_promises() {
    use recap_core::Invariant;
    let corpus = recap_gen::generate_corpus(3, 40, 2..=12);
    let registry = recap_builtins::registry();
    let suc = registry.build("single-user-coalesced").unwrap();
    let cases: Vec<(&str, Invariant, Mutation)> = vec![
        (
            "limits",
            Invariant::Limits {
                tool_call_limit: 1,
                println_limit: 1,
            },
            |_| {},
        ),
        ("append-only", Invariant::AppendOnly, |_| {}),
        (
            "failed-turns-verbatim",
            Invariant::FailedTurnsVerbatim,
            |m| {
                if let Some(i) = m[1].content.find("\n\n---\nYour previous attempt") {
                    m[1].content = m[1].content[..i].into();
                }
            },
        ),
        ("turns-line", Invariant::TurnsLine, |m| {
            if let Some(i) = m[1].content.rfind("\n\n") {
                m[1].content = m[1].content[..i].into();
            }
        }),
        (
            "mission-leads-first-user",
            Invariant::MissionLeadsFirstUser,
            |m| {
                m[1].content = format!(" {}", m[1].content).into();
            },
        ),
        ("system-first", Invariant::SystemFirst, |m| {
            m[0].content = format!("{}.", m[0].content).into();
        }),
        ("role-alternation", Invariant::RoleAlternation, |m| {
            m.push(Message::assistant("x"));
        }),
    ];
    for (id, invariant, mutate) in cases {
        let liar = Liar {
            inner: suc.clone(),
            declares: vec![invariant],
            mutate,
        };
        let found = corpus
            .iter()
            .flat_map(|s| check_session(&liar, s).unwrap())
            .filter(|v| v.invariant == id)
            .count();
        assert!(found > 0, "no {id} violation found");
    }
}
