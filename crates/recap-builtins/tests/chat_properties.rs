//! Properties of every chat-form strategy over generated chat sessions (SPEC 11.3, 11.4):
//! at every call the declared invariants hold (tool pairing above all: no result
//! without its call, no call without its result), the replay equals the call rendered alone,
//! rendering is deterministic, and each strategy sends exactly what SPEC 11.3 says it
//! sends — checked against a reference written from the spec text, independent of the
//! strategies' code.

use proptest::prelude::*;
use recap_core::invariants::{CheckContext, calls, check, check_session};
use recap_core::tokens::{WordCounter, message_tokens, prompt_tokens};
use recap_core::{
    ChatTurn, Form, Invariant, Message, Registry, Role, Session, Strategy, StrategySpec,
    TokenCounter, render_call,
};
use recap_gen::chat::ChatSessionBuilder;
use recap_testkit::strategy_checks::walk_deltas;
use std::sync::Arc;

/// Every chat strategy at its defaults, and settings where cuts, masks and clears happen
/// on almost every call of a generated session.
const SPECS: &[&str] = &[
    "full-history",
    "rolling-window",
    "rolling-window:window=1",
    "rolling-window:window=2",
    "observation-masking",
    "observation-masking:window=1",
    "observation-masking:window=2",
    "observation-masking:window=3",
    "token-budget-trim",
    "token-budget-trim:max_tokens=50",
    "token-budget-trim:max_tokens=500",
    "token-budget-trim:max_tokens=50,keep_mission=false",
    "token-budget-trim:max_tokens=500,keep_mission=false",
    "tool-result-clearing",
    "tool-result-clearing:trigger=0,keep=0",
    "tool-result-clearing:trigger=0,keep=1,clear_inputs=true",
    "tool-result-clearing:trigger=0,keep=2,exclude_tools=bash|get_user_details",
    "tool-result-clearing:trigger=300,keep=1,clear_at_least=40",
    "amortized-forgetting",
    "amortized-forgetting:max_size=4",
    "amortized-forgetting:max_size=5,keep_first=1",
    "amortized-forgetting:max_size=7",
    "amortized-forgetting:max_size=10,keep_first=1",
    "amortized-forgetting:max_size=10,keep_first=4",
];

fn registry() -> Registry {
    let mut registry = recap_builtins::registry();
    registry.set_counter(Arc::new(WordCounter));
    registry
}

struct Built {
    spec: StrategySpec,
    strategy: Arc<dyn Strategy>,
}

fn build_all(registry: &Registry) -> Vec<Built> {
    SPECS
        .iter()
        .map(|s| {
            let spec = StrategySpec::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"));
            let strategy = registry
                .build_spec(&spec)
                .unwrap_or_else(|e| panic!("{s}: {e}"));
            assert!(
                strategy.forms().contains(&Form::Chat),
                "{s} does not render chat"
            );
            // check_session checks determinism (two renders) only where it is declared.
            assert!(
                strategy.invariants().contains(&Invariant::Deterministic),
                "{s} does not declare determinism"
            );
            Built { spec, strategy }
        })
        .collect()
}

fn option(spec: &StrategySpec, key: &str, default: u64) -> u64 {
    spec.options.get(key).map_or(default, |v| {
        v.parse().unwrap_or_else(|_| panic!("{key}={v}"))
    })
}

fn keeps_mission(spec: &StrategySpec) -> bool {
    spec.options.get("keep_mission").map(String::as_str) != Some("false")
}

/// The history of the first `k` turns: each response, then each observation.
fn history(session: &Session, k: usize) -> Vec<Message> {
    session.chat_turns[..k]
        .iter()
        .flat_map(ChatTurn::messages)
        .collect()
}

fn opening(session: &Session) -> Vec<Message> {
    vec![
        Message::system(session.system_prompt.as_str()),
        Message::user(session.mission.as_str()),
    ]
}

/// Lines as SPEC 11.3 counts them for the masking placeholder.
fn lines(text: &str) -> usize {
    let unified = text.replace("\r\n", "\n").replace('\r', "\n");
    let breaks = unified.matches('\n').count();
    if unified.is_empty() || unified.ends_with('\n') {
        breaks
    } else {
        breaks + 1
    }
}

fn full_history(session: &Session, k: usize) -> Vec<Message> {
    let mut out = opening(session);
    out.extend(history(session, k));
    out
}

fn rolling_window(session: &Session, k: usize, window: usize) -> Vec<Message> {
    let mut out = opening(session);
    for turn in &session.chat_turns[k.saturating_sub(window)..k] {
        out.extend(turn.messages());
    }
    out
}

fn observation_masking(session: &Session, k: usize, window: usize) -> Vec<Message> {
    let mut out = opening(session);
    let masked = k.saturating_sub(window);
    for (t, turn) in session.chat_turns[..k].iter().enumerate() {
        out.push(turn.assistant.to_message());
        for o in &turn.observations {
            let mut m = o.to_message();
            if t < masked && o.is_environment() {
                m.content = format!(
                    "Old environment output: ({} lines omitted)",
                    lines(o.content())
                )
                .into();
            }
            out.push(m);
        }
    }
    out
}

/// The longest history suffix whose whole prompt fits, never starting at a TOOL message
/// (or, without the mission, starting at a USER message, the mission being the first).
fn token_budget_trim(
    session: &Session,
    k: usize,
    counter: &dyn TokenCounter,
    max_tokens: u64,
    keep_mission: bool,
) -> Vec<Message> {
    let [system, mission] = <[Message; 2]>::try_from(opening(session)).expect("two messages");
    let (fixed, candidates) = if keep_mission {
        (vec![system, mission], history(session, k))
    } else {
        let mut h = vec![mission];
        h.extend(history(session, k));
        (vec![system], h)
    };
    let fixed_tokens = prompt_tokens(counter, &fixed);
    let mut suffix_tokens = vec![0u64; candidates.len() + 1];
    for i in (0..candidates.len()).rev() {
        suffix_tokens[i] = suffix_tokens[i + 1] + message_tokens(counter, &candidates[i]);
    }
    let may_start = |i: usize| match candidates.get(i) {
        None => true,
        Some(m) if keep_mission => m.role != Role::Tool,
        Some(m) => m.role == Role::User,
    };
    let start = (0..=candidates.len())
        .find(|&i| may_start(i) && fixed_tokens + suffix_tokens[i] <= max_tokens)
        .unwrap_or(candidates.len());
    let mut out = fixed;
    out.extend_from_slice(&candidates[start..]);
    out
}

struct Clearing<'a> {
    trigger: u64,
    keep: usize,
    clear_at_least: u64,
    exclude: Vec<&'a str>,
    clear_inputs: bool,
}

fn tool_result_clearing(
    session: &Session,
    k: usize,
    counter: &dyn TokenCounter,
    c: &Clearing<'_>,
) -> Vec<Message> {
    let full = full_history(session, k);
    if prompt_tokens(counter, &full) <= c.trigger {
        return full;
    }
    let uses: usize = session.chat_turns[..k]
        .iter()
        .map(|t| t.assistant.tool_calls.len())
        .sum();
    let clearable = uses.saturating_sub(c.keep);
    let mut out = opening(session);
    let mut seen = 0;
    for turn in &session.chat_turns[..k] {
        let mut response = turn.assistant.to_message();
        let mut cleared_ids = Vec::new();
        let mut calls = response.tool_calls.to_vec();
        for call in &mut calls {
            if seen < clearable && !c.exclude.contains(&call.name.as_str()) {
                cleared_ids.push(call.id.clone());
                if c.clear_inputs {
                    call.arguments = "{}".into();
                }
            }
            seen += 1;
        }
        response.tool_calls = calls.into();
        out.push(response);
        for o in &turn.observations {
            let mut m = o.to_message();
            if m.role == Role::Tool
                && cleared_ids
                    .iter()
                    .any(|id| Some(id) == m.tool_call_id.as_ref())
            {
                m.content = "[cleared]".into();
            }
            out.push(m);
        }
    }
    // Only cleared messages differ: counting them alone is the same difference.
    let removed: u64 = full
        .iter()
        .zip(&out)
        .filter(|(a, b)| a != b)
        .map(|(a, b)| message_tokens(counter, a).saturating_sub(message_tokens(counter, b)))
        .sum();
    if removed < c.clear_at_least {
        full
    } else {
        out
    }
}

/// Replays the forgetting point from call 0 to call `k`, as SPEC 11.3 describes it.
fn amortized_forgetting(
    session: &Session,
    k: usize,
    max_size: usize,
    keep_first: usize,
) -> Vec<Message> {
    let skip_tools = |h: &[Message], mut i: usize| {
        while h.get(i).is_some_and(|m| m.role == Role::Tool) {
            i += 1;
        }
        i
    };
    let all = history(session, k);
    let mut f: Option<usize> = None;
    let mut head = 0;
    let mut len = 0;
    for j in 0..=k {
        // The history of call j: the first j turns.
        len = session.chat_turns[..j]
            .iter()
            .map(ChatTurn::message_count)
            .sum();
        let h = &all[..len];
        head = skip_tools(h, keep_first.min(len));
        let start = f.unwrap_or(head).max(head);
        if head + (len - start) > max_size {
            let newest = max_size / 2 - keep_first;
            f = Some(skip_tools(h, len.saturating_sub(newest).max(head)));
        }
    }
    let start = f.unwrap_or(head).max(head);
    let mut out = opening(session);
    out.extend_from_slice(&all[..head]);
    out.extend_from_slice(&all[start..len]);
    out
}

/// What SPEC 11.3 says `spec` sends at call `k`, where the spec pins it down.
fn reference(spec: &StrategySpec, session: &Session, k: usize) -> Option<Vec<Message>> {
    let counter = WordCounter;
    Some(match spec.name.as_str() {
        "full-history" => full_history(session, k),
        "rolling-window" => rolling_window(session, k, option(spec, "window", 3) as usize),
        "observation-masking" => {
            observation_masking(session, k, option(spec, "window", 10) as usize)
        }
        "token-budget-trim" => token_budget_trim(
            session,
            k,
            &counter,
            option(spec, "max_tokens", 8000),
            keeps_mission(spec),
        ),
        "tool-result-clearing" => tool_result_clearing(
            session,
            k,
            &counter,
            &Clearing {
                trigger: option(spec, "trigger", 100_000),
                keep: option(spec, "keep", 3) as usize,
                clear_at_least: option(spec, "clear_at_least", 0),
                exclude: spec
                    .options
                    .get("exclude_tools")
                    .map_or_else(Vec::new, |v| v.split('|').collect()),
                clear_inputs: spec.options.get("clear_inputs").map(String::as_str) == Some("true"),
            },
        ),
        "amortized-forgetting" => amortized_forgetting(
            session,
            k,
            option(spec, "max_size", 100) as usize,
            option(spec, "keep_first", 0) as usize,
        ),
        _ => return None,
    })
}

/// A message's debug form, cut short: outputs run to thousands of lines.
fn brief(m: Option<&Message>) -> String {
    let text = format!("{m:?}");
    match text.char_indices().nth(400) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text,
    }
}

/// Checks one strategy on every call of one session; the first broken property, or
/// whether some call's prompt differs from the full history (the strategy cut, masked or
/// cleared something).
fn check_strategy(built: &Built, session: &Session) -> Result<bool, String> {
    let Built { spec, strategy } = built;
    let name = strategy.spec();
    // The declared invariants over all calls, with determinism and append-only.
    let violations =
        check_session(strategy.as_ref(), session).map_err(|e| format!("{name}: {e}"))?;
    let allowed = |id: &str| !keeps_mission(spec) && id == "mission-verbatim";
    if let Some(v) = violations.iter().find(|v| !allowed(v.invariant)) {
        return Err(format!(
            "{name}: call {}: {}: {}",
            v.call, v.invariant, v.detail
        ));
    }
    let mut replay = strategy.open();
    let mut acted = false;
    for k in calls(session) {
        let rendered =
            render_call(strategy.as_ref(), session, k).map_err(|e| format!("{name}: {e}"))?;
        let incremental = replay
            .call(session, k, 0)
            .map_err(|e| format!("{name}: {e}"))?
            .tail;
        if incremental != rendered {
            return Err(format!(
                "{name}: call {k}: the replay differs from the call rendered alone"
            ));
        }
        // Tool pairing whatever the strategy declares: no orphan result, no unanswered call.
        let ctx = CheckContext {
            session,
            k,
            messages: &rendered,
            previous: None,
            second_render: None,
            print_lines: None,
            sightings: None,
        };
        if let Some(v) = check(&[Invariant::ToolPairing, Invariant::SystemFirst], &ctx).first() {
            return Err(format!("{name}: call {k}: {}: {}", v.invariant, v.detail));
        }
        // A dropped mission is allowed only where the option allows it, and then counted.
        let shown = rendered
            .iter()
            .any(|m| m.content.contains(&session.mission));
        let counted = violations
            .iter()
            .any(|v| v.call == k && v.invariant == "mission-verbatim");
        if shown == counted {
            return Err(format!(
                "{name}: call {k}: mission shown: {shown}, drop counted: {counted}"
            ));
        }
        acted |= rendered != full_history(session, k);
        if let Some(expected) = reference(spec, session, k)
            && rendered != expected
        {
            let at = rendered
                .iter()
                .zip(&expected)
                .position(|(a, b)| a != b)
                .unwrap_or(rendered.len().min(expected.len()));
            return Err(format!(
                "{name}: call {k}: differs from SPEC 11.3 at message {at} ({} messages, expected {}): got {}, expected {}",
                rendered.len(),
                expected.len(),
                brief(rendered.get(at)),
                brief(expected.get(at))
            ));
        }
        if spec.name == "token-budget-trim" {
            let max_tokens = option(spec, "max_tokens", 8000);
            let tokens = prompt_tokens(&WordCounter, &rendered);
            let floor = if keeps_mission(spec) { 2 } else { 1 };
            let minimal = prompt_tokens(&WordCounter, &opening(session)[..floor]);
            if tokens > max_tokens && !(rendered.len() == floor && minimal > max_tokens) {
                return Err(format!(
                    "{name}: call {k}: {tokens} tokens, over the budget"
                ));
            }
        }
    }
    // Answered as deltas against the prompt the caller holds, as the harness asks.
    let ks: Vec<(usize, bool)> = calls(session).map(|k| (k, false)).collect();
    walk_deltas(strategy.as_ref(), session, &ks)?;
    Ok(acted)
}

/// On sessions long enough to cut, mask and clear, every chat strategy answers most
/// calls by keeping some of the previous prompt (the opening at least), and deltas over
/// skipped calls still equal the calls rendered alone.
#[test]
fn chat_deltas_keep_the_previous_prompt() {
    let registry = registry();
    let all = build_all(&registry);
    for session in recap_gen::generate_chat_corpus(5, 3, 20..=30) {
        let n = calls(&session).len();
        let in_order: Vec<(usize, bool)> = (0..n).map(|k| (k, false)).collect();
        // Every other call, with the held prompt forgotten at every fifth step.
        let skipping: Vec<(usize, bool)> = (0..n).step_by(2).map(|k| (k, k % 5 == 4)).collect();
        for built in &all {
            let kept = walk_deltas(built.strategy.as_ref(), &session, &in_order)
                .unwrap_or_else(|e| panic!("{}: {e}", session.id));
            assert!(
                kept >= n / 2,
                "{} on {}: only {kept} of {n} calls kept anything",
                built.strategy.spec(),
                session.id
            );
            walk_deltas(built.strategy.as_ref(), &session, &skipping)
                .unwrap_or_else(|e| panic!("{}: {e}", session.id));
        }
    }
}

#[test]
fn every_chat_strategy_of_the_registry_is_covered() {
    let registry = registry();
    for info in registry.infos() {
        let strategy = registry.build(&info.name).unwrap();
        // `recorded` replays a session's record, not a policy: its own tests hold it to
        // full-history and to its record (strategies/recorded).
        if strategy.forms().contains(&Form::Chat) && !strategy.replays_record() {
            assert!(
                SPECS
                    .iter()
                    .any(|s| s.split(':').next() == Some(info.name.as_str())),
                "{} renders the chat form but is not in SPECS",
                info.name
            );
        }
    }
}

#[test]
fn the_references_see_what_they_should() {
    // Two turns: a call answered with two lines and an environment output with three.
    let s = ChatSessionBuilder::new("m")
        .tool_turn(
            "",
            &[("c1", "bash", "{\"command\": \"ls\"}")],
            &["a\r\nb\n"],
        )
        .command_turn("```\nls\n```", "x\ry\nz")
        .build();
    let masked = observation_masking(&s, 2, 1);
    assert_eq!(
        masked[3].content,
        "Old environment output: (2 lines omitted)"
    );
    assert_eq!(masked[3].tool_call_id.as_deref(), Some("c1"));
    assert_eq!(masked[5].content, "x\ry\nz");
    assert_eq!(lines(""), 0);
    assert_eq!(lines("\n"), 1);
    assert_eq!(lines("x\ry\nz"), 3);
    // Clearing everything leaves the calls and the placeholder.
    let all = Clearing {
        trigger: 0,
        keep: 0,
        clear_at_least: 0,
        exclude: vec![],
        clear_inputs: true,
    };
    let cleared = tool_result_clearing(&s, 2, &WordCounter, &all);
    assert_eq!(cleared[3].content, "[cleared]");
    assert_eq!(cleared[2].tool_calls[0].arguments, "{}");
    // A budget of the opening alone keeps no history; one message more than the opening
    // never starts at the TOOL result.
    let opening_tokens = prompt_tokens(&WordCounter, &opening(&s));
    assert_eq!(
        token_budget_trim(&s, 2, &WordCounter, opening_tokens, true).len(),
        2
    );
    let trimmed = token_budget_trim(&s, 1, &WordCounter, opening_tokens + 7, true);
    assert!(trimmed.iter().all(|m| m.role != Role::Tool), "{trimmed:?}");
    // After a cut only the newest max_size / 2 messages remain.
    assert_eq!(amortized_forgetting(&s, 2, 2, 0).len(), 2 + 1);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20))]

    #[test]
    fn chat_strategies_keep_their_contract(session in recap_gen::chat_session_in(1..=14)) {
        let registry = registry();
        for built in build_all(&registry) {
            if let Err(e) = check_strategy(&built, &session) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}

/// Long sessions are few but cheap to cover deterministically: a small seeded corpus.
/// On them, every setting chosen to cut, mask or clear does so at some call, so the
/// comparisons above are not between copies of the full history.
#[test]
fn chat_strategies_keep_their_contract_on_long_sessions() {
    let registry = registry();
    let all = build_all(&registry);
    let mut acted = vec![false; all.len()];
    for session in recap_gen::generate_chat_corpus(11, 2, 30..=40) {
        for (built, acted) in all.iter().zip(&mut acted) {
            match check_strategy(built, &session) {
                Ok(did) => *acted |= did,
                Err(e) => panic!("{}: {e}", session.id),
            }
        }
    }
    for ((built, acted), spec) in all.iter().zip(acted).zip(SPECS) {
        let tuned = spec.contains(':');
        assert!(
            !tuned || acted,
            "{}: never differs from full-history",
            built.strategy.spec()
        );
    }
}
