//! Reads a chat-form `session_render` request straight into [`ChatTurn`]s and token
//! counts, without a `serde_json::Value` tree in between: the plugin decodes every turn
//! it is sent, twice per replayed session in `recap run` (the determinism check renders
//! through a second session), and the tree was most of that cost.
//!
//! A fast path only, as [`crate::decode`] is for PTC-Lisp turns: whatever it does not
//! read exactly as the reference path would (the wire's unknown fields dropped by
//! [`crate::lenient`], then `ChatTurn::from_json` and the request's count checks) — a
//! type error, a missing or repeated field, a PTC-Lisp field, an unknown role, a tool
//! result answering no call, counts that do not fit the turns — makes it give up, and
//! the caller decodes through the tree, which gives the reference result or the
//! reference error. Tests hold the two to the same answers.

use crate::decode::first_time;
use crate::json::{Fast, GiveUp, Reader};
use recap_core::chat::{CHAT_TURN_FIELDS, PTC_TURN_FIELDS};
use recap_core::{AssistantTurn, ChatToolCall, ChatTurn, Observation};
use serde_json::{Map, Value as Json};

/// `(turns_offset, turns, token_counts.turns)` of a chat-form `session_render` request,
/// or `None` to fall back to the reference decoder.
pub(crate) type ChatDelta = (usize, Vec<ChatTurn>, Option<Vec<Vec<u64>>>);

pub(crate) fn chat_session_delta(bytes: &[u8]) -> Option<ChatDelta> {
    let mut r = Reader::new(bytes).ok()?;
    let delta = delta(&mut r).ok()?;
    r.end().ok()?;
    Some(delta)
}

/// Marks the object's `i`-th known key as seen (bit `i` of `seen`): a repeated key
/// means "last wins" in the tree, which is not worth mirroring here.
fn once(seen: &mut u32, i: u32) -> Fast<()> {
    first_time(seen, 1 << i)
}

fn delta(r: &mut Reader<'_>) -> Fast<ChatDelta> {
    let (mut offset, mut turns, mut counts) = (0u64, Vec::new(), None);
    let mut seen = 0;
    let mut m = r.object()?;
    while let Some(key) = r.key(&mut m)? {
        match &*key {
            "turns_offset" => {
                once(&mut seen, 0)?;
                if !r.null()? {
                    offset = r.u64()?;
                }
            }
            "turns" => {
                once(&mut seen, 1)?;
                if !r.null()? {
                    let mut a = r.array()?;
                    while r.item(&mut a)? {
                        turns.push(turn(r)?);
                    }
                }
            }
            "token_counts" => {
                once(&mut seen, 2)?;
                counts = token_counts(r)?;
            }
            _ => r.skip()?,
        }
    }
    let offset = usize::try_from(offset).map_err(|_| GiveUp)?;
    if let Some(counts) = &counts {
        let fits = counts.len() == turns.len()
            && counts
                .iter()
                .zip(&turns)
                .all(|(c, t)| c.len() == t.message_count());
        if !fits {
            return Err(GiveUp);
        }
    }
    Ok((offset, turns, counts))
}

/// `token_counts.turns`, the only part of the counts a session render uses (the
/// opening's counts came with `session_open`).
fn token_counts(r: &mut Reader<'_>) -> Fast<Option<Vec<Vec<u64>>>> {
    if r.null()? {
        return Ok(None);
    }
    let mut turns = None;
    let mut seen = 0;
    let mut m = r.object()?;
    while let Some(key) = r.key(&mut m)? {
        match &*key {
            "tokenizer" => {
                once(&mut seen, 0)?;
                r.opt_string()?;
            }
            "system" => {
                once(&mut seen, 1)?;
                opt_u64(r)?;
            }
            "mission" => {
                once(&mut seen, 2)?;
                opt_u64(r)?;
            }
            "turns" => {
                once(&mut seen, 3)?;
                if !r.null()? {
                    let mut list = Vec::new();
                    let mut a = r.array()?;
                    while r.item(&mut a)? {
                        let mut counts = Vec::new();
                        let mut b = r.array()?;
                        while r.item(&mut b)? {
                            counts.push(r.u64()?);
                        }
                        list.push(counts);
                    }
                    turns = Some(list);
                }
            }
            _ => r.skip()?,
        }
    }
    Ok(turns)
}

fn turn(r: &mut Reader<'_>) -> Fast<ChatTurn> {
    let (mut number, mut assistant, mut observations) = (None, None, Vec::new());
    let (mut success, mut usage) = (true, None);
    let mut seen = 0;
    let mut m = r.object()?;
    while let Some(key) = r.key(&mut m)? {
        match &*key {
            "number" => {
                once(&mut seen, 0)?;
                number = Some(u32::try_from(r.u64()?).map_err(|_| GiveUp)?);
            }
            "assistant" => {
                once(&mut seen, 1)?;
                assistant = Some(assistant_turn(r)?);
            }
            "observations" => {
                once(&mut seen, 2)?;
                if !r.null()? {
                    let mut a = r.array()?;
                    while r.item(&mut a)? {
                        observations.push(observation(r)?);
                    }
                }
            }
            "success" => {
                once(&mut seen, 3)?;
                if !r.null()? {
                    success = r.bool()?;
                }
            }
            "usage" => {
                once(&mut seen, 4)?;
                usage = object_tree(r)?;
            }
            // A PTC-Lisp field in a chat turn: the reference decoder says why.
            k if PTC_TURN_FIELDS.contains(&k) && !CHAT_TURN_FIELDS.contains(&k) => {
                return Err(GiveUp);
            }
            _ => r.skip()?,
        }
    }
    let (Some(number), Some(assistant)) = (number, assistant) else {
        return Err(GiveUp);
    };
    let answered = observations.iter().all(|o| match o {
        Observation::Tool { tool_call_id, .. } => {
            assistant.tool_calls.iter().any(|c| &c.id == tool_call_id)
        }
        Observation::User { .. } => true,
    });
    if !answered {
        return Err(GiveUp);
    }
    Ok(ChatTurn {
        number,
        assistant,
        observations,
        success,
        usage,
    })
}

fn assistant_turn(r: &mut Reader<'_>) -> Fast<AssistantTurn> {
    let (mut content, mut tool_calls, mut reasoning) = (None, Vec::new(), None);
    let mut seen = 0;
    let mut m = r.object()?;
    while let Some(key) = r.key(&mut m)? {
        match &*key {
            "content" => {
                once(&mut seen, 0)?;
                content = r.opt_text()?;
            }
            "tool_calls" => {
                once(&mut seen, 1)?;
                if !r.null()? {
                    let mut a = r.array()?;
                    while r.item(&mut a)? {
                        let call = tool_call(r)?;
                        if tool_calls.iter().any(|c: &ChatToolCall| c.id == call.id) {
                            return Err(GiveUp);
                        }
                        tool_calls.push(call);
                    }
                }
            }
            "reasoning" => {
                once(&mut seen, 2)?;
                reasoning = r.opt_string()?;
            }
            _ => r.skip()?,
        }
    }
    Ok(AssistantTurn {
        content,
        tool_calls,
        reasoning,
    })
}

fn tool_call(r: &mut Reader<'_>) -> Fast<ChatToolCall> {
    let (mut id, mut name, mut arguments) = (None, None, None);
    let mut seen = 0;
    let mut m = r.object()?;
    while let Some(key) = r.key(&mut m)? {
        match &*key {
            "id" => {
                once(&mut seen, 0)?;
                id = Some(r.text()?);
            }
            "name" => {
                once(&mut seen, 1)?;
                name = Some(r.text()?);
            }
            "arguments" => {
                once(&mut seen, 2)?;
                arguments = Some(r.text()?);
            }
            _ => r.skip()?,
        }
    }
    match (id, name, arguments) {
        (Some(id), Some(name), Some(arguments)) => Ok(ChatToolCall {
            id,
            name,
            arguments,
        }),
        _ => Err(GiveUp),
    }
}

/// An observation: which fields count depends on `role`, which may come last, so
/// every field either role knows is read (a value of the wrong type gives up even where
/// the role would have ignored it: slower, never wrong).
fn observation(r: &mut Reader<'_>) -> Fast<Observation> {
    let mut role = None;
    let (mut tool_call_id, mut name, mut content) = (None, None, None);
    let (mut is_error, mut environment) = (None, None);
    let mut seen = 0;
    let mut m = r.object()?;
    while let Some(key) = r.key(&mut m)? {
        match &*key {
            "role" => {
                once(&mut seen, 0)?;
                role = Some(r.str()?);
            }
            "tool_call_id" => {
                once(&mut seen, 1)?;
                tool_call_id = Some(r.text()?);
            }
            "name" => {
                once(&mut seen, 2)?;
                name = r.opt_text()?;
            }
            "content" => {
                once(&mut seen, 3)?;
                content = Some(r.text()?);
            }
            "is_error" => {
                once(&mut seen, 4)?;
                is_error = opt_bool(r)?;
            }
            "environment" => {
                once(&mut seen, 5)?;
                environment = opt_bool(r)?;
            }
            _ => r.skip()?,
        }
    }
    let content = content.ok_or(GiveUp)?;
    match role.as_deref() {
        Some("tool") => Ok(Observation::Tool {
            tool_call_id: tool_call_id.ok_or(GiveUp)?,
            name,
            content,
            is_error: is_error.unwrap_or(false),
        }),
        Some("user") => Ok(Observation::User {
            content,
            environment: environment.unwrap_or(false),
        }),
        _ => Err(GiveUp),
    }
}

fn opt_u64(r: &mut Reader<'_>) -> Fast<Option<u64>> {
    if r.null()? {
        return Ok(None);
    }
    r.u64().map(Some)
}

fn opt_bool(r: &mut Reader<'_>) -> Fast<Option<bool>> {
    if r.null()? {
        return Ok(None);
    }
    r.bool().map(Some)
}

/// An arbitrary object (`usage`, rare): validated here, then read by serde_json.
fn object_tree(r: &mut Reader<'_>) -> Fast<Option<Map<String, Json>>> {
    if r.null()? {
        return Ok(None);
    }
    r.peek();
    let start = r.position();
    r.skip()?;
    serde_json::from_str(r.slice(start, r.position()))
        .map(Some)
        .map_err(|_| GiveUp)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mutation::{Xorshift, mutant};
    use crate::tokens::count_turn;
    use crate::wire::{
        Delta, DeltaTurns, chat_delta_tree, decode_delta, put_chat_session_render_request,
    };
    use recap_core::Form;
    use recap_core::tokens::WordCounter;

    /// The reference decoder's answer, `None` when it rejects the request.
    fn reference(bytes: &[u8]) -> Option<ChatDelta> {
        match chat_delta_tree(bytes).ok()? {
            Delta {
                turns_offset,
                turns: DeltaTurns::Chat(turns),
                token_counts,
            } => Some((turns_offset, turns, token_counts)),
            Delta { .. } => None,
        }
    }

    /// Requests as the host writes them for generated chat sessions, every call from
    /// its previous one, with and without token counts.
    fn host_requests(seed: u64, sessions: usize) -> Vec<Vec<u8>> {
        let mut requests = Vec::new();
        for session in recap_gen::generate_chat_corpus(seed, sessions, 1..=12) {
            let counts: Vec<Vec<u64>> = session
                .chat_turns
                .iter()
                .map(|t| count_turn(&WordCounter, t))
                .collect();
            let n = session.chat_turns.len();
            for (from, to) in [(0, n), (0, 1.min(n)), (n / 2, n), (n, n)] {
                for with_counts in [false, true] {
                    let mut request = Vec::new();
                    put_chat_session_render_request(
                        &mut request,
                        from,
                        &session.chat_turns[from..to],
                        with_counts.then(|| &counts[from..to]),
                    );
                    requests.push(request);
                }
            }
        }
        requests
    }

    #[test]
    fn the_fast_path_takes_every_host_request_and_reads_what_the_tree_reads() {
        let mut turns = 0;
        for request in host_requests(31, 40) {
            let fast = chat_session_delta(&request).unwrap_or_else(|| {
                panic!(
                    "the fast path gave up on {}",
                    String::from_utf8_lossy(&request)
                )
            });
            turns += fast.1.len();
            assert_eq!(Some(fast), reference(&request));
        }
        assert!(turns > 300, "{turns} turns checked");
    }

    #[test]
    fn what_the_fast_path_does_not_take_is_left_to_the_tree_decoder() {
        let call = r#""assistant": {"content": null, "tool_calls": [{"id": "c", "name": "f", "arguments": "{}"}]}"#;
        for bad in [
            // a repeated key, a PTC-Lisp field, a missing field, a wrong type
            format!(r#"{{"turns": [{{"number": 1, "number": 2, {call}}}]}}"#),
            format!(r#"{{"turns": [{{"number": 1, "program": "p", {call}}}]}}"#),
            r#"{"turns": [{"number": 1}]}"#.to_string(),
            format!(r#"{{"turns": [{{"number": "1", {call}}}]}}"#),
            // a result answering no call; an unknown role; two calls with one id
            format!(
                r#"{{"turns": [{{"number": 1, {call}, "observations": [{{"role": "tool", "tool_call_id": "x", "content": "r"}}]}}]}}"#
            ),
            format!(
                r#"{{"turns": [{{"number": 1, {call}, "observations": [{{"role": "system", "content": "r"}}]}}]}}"#
            ),
            r#"{"turns": [{"number": 1, "assistant": {"tool_calls": [{"id": "c", "name": "f", "arguments": ""}, {"id": "c", "name": "g", "arguments": ""}]}}]}"#.to_string(),
            // counts that do not fit the turns; a negative offset; trailing bytes
            format!(r#"{{"turns": [{{"number": 1, {call}}}], "token_counts": {{"turns": [[1, 2]]}}}}"#),
            r#"{"turns_offset": -1}"#.to_string(),
            r#"{"turns": []} x"#.to_string(),
        ] {
            assert!(chat_session_delta(bad.as_bytes()).is_none(), "{bad}");
            // And the answer is the reference's, through the public entry point.
            assert_eq!(
                decode_delta(bad.as_bytes(), Form::Chat).ok(),
                chat_delta_tree(bad.as_bytes()).ok(),
                "{bad}"
            );
        }
    }

    #[test]
    fn fields_the_wire_does_not_know_are_skipped_as_the_tree_drops_them() {
        let request = br#"{"abi": {"major": 1}, "turns_offset": 2, "turns": [{"number": 3, "tokens": [1],
            "assistant": {"content": "a", "model": "m", "tool_calls": [{"id": "c", "type": "function", "name": "f", "arguments": "{}"}]},
            "observations": [{"role": "tool", "tool_call_id": "c", "content": "r", "environment": true, "ms": 1},
                             {"content": "u", "is_error": false, "role": "user", "name": null}],
            "success": null, "usage": {"input_tokens": 5, "x": [1.5, null]}}],
            "token_counts": {"tokenizer": "o200k_base", "system": null, "turns": [[1, 2, 3]], "later": {}}}"#;
        let fast = chat_session_delta(request).expect("the fast path takes it");
        assert_eq!(Some(&fast), reference(request).as_ref());
        assert_eq!(fast.0, 2);
        assert_eq!(fast.2, Some(vec![vec![1, 2, 3]]));
    }

    #[test]
    fn mutated_requests_decode_as_the_reference_does() {
        let mut g = Xorshift(0x5DEE_CE66_D1CE_4E5B);
        let tokens: [&[u8]; 16] = [
            b"\"",
            b"\\",
            b"{",
            b"}",
            b"[",
            b"]",
            b",",
            b":",
            b"null",
            b"-1",
            b"1e3",
            b"\\u",
            b"\xc3",
            b"\"role\":\"user\"",
            b"\"id\":\"x\",",
            b"true",
        ];
        let (mut mutants, mut valid) = (0, 0);
        for base in host_requests(9, 12) {
            for _ in 0..60 {
                let m = mutant(&mut g, &base, &tokens, 3, true);
                let want = reference(&m);
                if let Some(fast) = chat_session_delta(&m) {
                    assert_eq!(Some(fast), want, "{}", String::from_utf8_lossy(&m));
                }
                let got = decode_delta(&m, Form::Chat).ok().map(|d| match d.turns {
                    DeltaTurns::Chat(t) => (d.turns_offset, t, d.token_counts),
                    DeltaTurns::Ptc(_) => unreachable!("a chat request decodes to chat turns"),
                });
                assert_eq!(got, want, "{}", String::from_utf8_lossy(&m));
                mutants += 1;
                valid += usize::from(want.is_some());
            }
        }
        assert!(
            mutants > 3000 && valid > 300,
            "{mutants} mutants, {valid} valid"
        );
    }
}
