use super::*;
use recap_core::prompt_tokens;
use recap_core::tokens::WordCounter;
use recap_core::{Message, Session, render_call};
use recap_gen::chat::ChatSessionBuilder;

fn trim(max_tokens: u64, keep_mission: bool) -> TokenBudgetTrim {
    TokenBudgetTrim::new(max_tokens, keep_mission, Arc::new(WordCounter))
}

fn session() -> Session {
    ChatSessionBuilder::new("fix the failing test please")
        .system("you are a careful agent")
        .tool_turn(
            "let me look",
            &[("c1", "read", "{\"path\": \"a b\"}")],
            &["one two three four five"],
        )
        .text_turn("should I also refactor", &["no just the fix"])
        .tool_turn(
            "",
            &[("c2", "run", "{}"), ("c3", "run", "{}")],
            &["passed all ten tests", "ok"],
        )
        .build()
}

#[test]
fn a_large_budget_is_full_history() {
    let s = session();
    for k in 0..=3 {
        let r = RenderRequest::for_call(&s, k).unwrap();
        assert_eq!(
            render_call(&trim(10_000, true), &s, k).unwrap(),
            recap_history::render(&r)
        );
        assert_eq!(
            render_call(&trim(10_000, false), &s, k).unwrap(),
            recap_history::render(&r)
        );
    }
}

#[test]
fn every_budget_is_kept_and_no_result_loses_its_call() {
    let s = session();
    let r = RenderRequest::for_call(&s, 3).unwrap();
    let floor = prompt_tokens(&WordCounter, &recap_history::opening(&r));
    let full = prompt_tokens(&WordCounter, &recap_history::render(&r));
    let mut lengths = Vec::new();
    for max in 1..=full + 2 {
        let m = render_call(&trim(max, true), &s, 3).unwrap();
        let used = prompt_tokens(&WordCounter, &m);
        assert!(used <= max.max(floor), "max {max}: {used} tokens");
        assert_eq!(&m[..2], &recap_history::opening(&r)[..]);
        assert_ne!(m.get(2).map(|m| m.role), Some(Role::Tool), "max {max}");
        // The kept part is a suffix of the history.
        let full_msgs = recap_history::render(&r);
        assert_eq!(m[2..], full_msgs[full_msgs.len() - (m.len() - 2)..]);
        lengths.push(m.len());
    }
    // More budget never keeps less.
    assert!(lengths.windows(2).all(|w| w[0] <= w[1]), "{lengths:?}");
    assert_eq!(*lengths.last().unwrap(), recap_history::render(&r).len());
}

#[test]
fn without_keep_mission_the_suffix_starts_at_a_user_message_or_is_system_alone() {
    let s = session();
    let r = RenderRequest::for_call(&s, 3).unwrap();
    let full = prompt_tokens(&WordCounter, &recap_history::render(&r));
    let mut dropped = 0;
    for max in 1..full {
        let m = render_call(&trim(max, false), &s, 3).unwrap();
        assert_eq!(m[0], Message::system("you are a careful agent"));
        assert!(
            prompt_tokens(&WordCounter, &m) <= max || m.len() == 1,
            "max {max}"
        );
        if let Some(first) = m.get(1) {
            assert_eq!(first.role, Role::User, "max {max}");
        }
        if !m.iter().any(|x| x.content == "fix the failing test please") {
            dropped += 1;
        }
    }
    assert!(dropped > 0, "a small budget drops the mission");
}

#[test]
fn a_dropped_mission_is_a_counted_violation() {
    let s = session();
    let strategy = trim(12, false);
    let violations = recap_core::invariants::check_session(&strategy, &s).unwrap();
    assert!(
        violations.iter().any(|v| v.invariant == "mission-verbatim"),
        "{violations:?}"
    );
    let kept = trim(12, true);
    assert_eq!(
        recap_core::invariants::check_session(&kept, &s).unwrap(),
        vec![]
    );
}

#[test]
fn a_replay_equals_each_call_rendered_alone() {
    let s = session();
    let strategy = trim(25, true);
    let mut replay = strategy.open();
    for k in 0..=3 {
        assert_eq!(
            replay.call(&s, k, 0).unwrap().tail,
            render_call(&strategy, &s, k).unwrap()
        );
    }
}

#[test]
fn options_need_a_tokenizer_and_valid_values() {
    let spec = |s: &str| StrategySpec::parse(s).unwrap();
    let ctx = BuildContext {
        counter: Some(Arc::new(WordCounter)),
    };
    assert!(matches!(
        build(&spec(NAME), &BuildContext::default()),
        Err(SpecError::NeedsTokenizer { .. })
    ));
    assert_eq!(build(&spec(NAME), &ctx).unwrap().spec(), NAME);
    assert_eq!(
        build(
            &spec("token-budget-trim:max_tokens=500,keep_mission=false"),
            &ctx
        )
        .unwrap()
        .spec(),
        "token-budget-trim:keep_mission=false,max_tokens=500"
    );
    for bad in [
        "token-budget-trim:max_tokens=0",
        "token-budget-trim:keep_mission=yes",
    ] {
        assert!(
            matches!(build(&spec(bad), &ctx), Err(SpecError::BadValue { .. })),
            "{bad}"
        );
    }
}
