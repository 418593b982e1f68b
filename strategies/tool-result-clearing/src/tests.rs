use super::*;
use recap_core::prompt_tokens;
use recap_core::tokens::WordCounter;
use recap_core::{Session, render_call};
use recap_gen::chat::ChatSessionBuilder;

fn clearing(trigger: u64, keep: u64) -> ToolResultClearing {
    ToolResultClearing {
        trigger,
        keep,
        ..ToolResultClearing::new(Arc::new(WordCounter))
    }
}

fn session() -> Session {
    ChatSessionBuilder::new("find the order")
        .tool_turn(
            "",
            &[("c1", "search", "{\"q\": \"order 17\"}")],
            &["r1 a b c d e f"],
        )
        .tool_turn(
            "",
            &[("c2", "fetch", "{\"id\": 17}"), ("c3", "search", "{}")],
            &["r2 a b c", "r3 x"],
        )
        .text_turn("found it", &["thanks"])
        .tool_turn("", &[("c4", "fetch", "{\"id\": 18}")], &["r4 y"])
        .build()
}

#[test]
fn below_the_trigger_nothing_changes() {
    let s = session();
    let r = RenderRequest::for_call(&s, 4).unwrap();
    let full = recap_history::render(&r);
    let tokens = prompt_tokens(&WordCounter, &full);
    assert_eq!(render_call(&clearing(tokens, 0), &s, 4).unwrap(), full);
    assert_ne!(render_call(&clearing(tokens - 1, 0), &s, 4).unwrap(), full);
}

#[test]
fn past_the_trigger_all_but_the_newest_keep_results_are_cleared() {
    let s = session();
    let r = RenderRequest::for_call(&s, 4).unwrap();
    let m = render_call(&clearing(0, 2), &s, 4).unwrap();
    let contents: Vec<_> = m
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(contents, ["[cleared]", "[cleared]", "r3 x", "r4 y"]);
    // Calls, ids and every other message stay.
    let full = recap_history::render(&r);
    assert_eq!(m.len(), full.len());
    for (a, b) in m.iter().zip(&full) {
        assert_eq!(
            (a.role, &a.tool_calls, &a.tool_call_id),
            (b.role, &b.tool_calls, &b.tool_call_id)
        );
    }
}

#[test]
fn excluded_tools_and_inputs() {
    let s = session();
    let mut c = clearing(0, 0);
    c.exclude_tools = vec!["fetch".into()];
    c.clear_inputs = true;
    let m = render_call(&c, &s, 4).unwrap();
    let results: Vec<_> = m
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.content.as_str())
        .collect();
    assert_eq!(results, ["[cleared]", "r2 a b c", "[cleared]", "r4 y"]);
    let args: Vec<_> = m
        .iter()
        .flat_map(|m| &m.tool_calls)
        .map(|c| c.arguments.as_str())
        .collect();
    assert_eq!(args, ["{}", "{\"id\": 17}", "{}", "{\"id\": 18}"]);
}

#[test]
fn clear_at_least_clears_all_or_nothing() {
    let s = session();
    let r = RenderRequest::for_call(&s, 4).unwrap();
    let full = recap_history::render(&r);
    let cleared = render_call(&clearing(0, 0), &s, 4).unwrap();
    let gain = prompt_tokens(&WordCounter, &full) - prompt_tokens(&WordCounter, &cleared);
    let mut c = clearing(0, 0);
    c.clear_at_least = gain;
    assert_eq!(render_call(&c, &s, 4).unwrap(), cleared);
    c.clear_at_least = gain + 1;
    assert_eq!(render_call(&c, &s, 4).unwrap(), full);
}

#[test]
fn invariants_hold_and_a_replay_equals_each_call_rendered_alone() {
    let s = session();
    let c = clearing(10, 1);
    assert_eq!(
        recap_core::invariants::check_session(&c, &s).unwrap(),
        vec![]
    );
    let mut replay = c.open();
    for k in 0..=4 {
        assert_eq!(
            replay.call(&s, k, 0).unwrap().tail,
            render_call(&c, &s, k).unwrap()
        );
    }
}

#[test]
fn options_are_validated_and_canonical() {
    let ctx = BuildContext {
        counter: Some(Arc::new(WordCounter)),
    };
    let b = |s: &str| build(&StrategySpec::parse(s).unwrap(), &ctx);
    assert_eq!(b(NAME).unwrap().spec(), NAME);
    assert_eq!(
        b("tool-result-clearing:exclude_tools=b|a|a,keep=0,trigger=500")
            .unwrap()
            .spec(),
        "tool-result-clearing:exclude_tools=a|b,keep=0,trigger=500"
    );
    for bad in [
        "tool-result-clearing:keep=-1",
        "tool-result-clearing:clear_inputs=1",
        "tool-result-clearing:exclude_tools=a||b",
    ] {
        assert!(matches!(b(bad), Err(SpecError::BadValue { .. })), "{bad}");
    }
}
