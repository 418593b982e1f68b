//! The message history every strategy keeps its turns from, rendered exactly as the
//! `full-history` baseline sends them (SPEC 6.1 and 11.3): `[SYSTEM, USER(mission)]`,
//! then for each turn in the PTC-Lisp form `ASSISTANT(raw_response)` and `USER(feedback)`,
//! in the chat form the ASSISTANT message with its tool calls and each observation as its
//! own TOOL or USER message.
//!
//! The turn writers at the root render one request; [`transcript::Transcript`] keeps a
//! session's rendered turns across its calls (full-history's replay, and what
//! `rolling-window` and `recorded` keep turns from); [`chat::History`] is the chat
//! history the chat strategies cut, mask and clear, with the [`chat::Planner`] replay.
//! It is a library of no strategy: a strategy depends on it, never on another strategy.

pub mod chat;
pub mod transcript;

use recap_core::strategy::FINAL_TURN_LINE;
use recap_core::{ChatTurn, Form, Message, RenderRequest, Turn};
use std::borrow::Cow;

/// The full-history prompt for a request: the opening and every completed turn; never
/// fails.
pub fn render(request: &RenderRequest<'_>) -> Vec<Message> {
    match request.form {
        Form::Ptc => {
            let mut messages = Vec::with_capacity(2 + 2 * request.turns.len());
            messages.push(Message::system(request.system_prompt));
            messages.push(Message::user(request.mission));
            push_pairs(&mut messages, request.turns, 0, request.max_turns);
            messages
        }
        Form::Chat => {
            let mut messages = opening(request);
            push_chat_turns(&mut messages, request.chat_turns);
            messages
        }
    }
}

/// `[SYSTEM(system_prompt), USER(mission)]`: how every strategy's prompt starts, and
/// all of it at call 0.
pub fn opening(request: &RenderRequest<'_>) -> Vec<Message> {
    opening_pair(request).into()
}

/// [`opening`] as a pair.
pub fn opening_pair(request: &RenderRequest<'_>) -> [Message; 2] {
    [
        Message::system(request.system_prompt),
        Message::user(request.mission),
    ]
}

/// Appends each chat turn's messages: the ASSISTANT response, then its observations.
pub fn push_chat_turns(messages: &mut Vec<Message>, turns: &[ChatTurn]) {
    messages.reserve(turns.iter().map(ChatTurn::message_count).sum());
    for turn in turns {
        messages.extend(turn.messages());
    }
}

/// Appends `ASSISTANT(raw_response)`, `USER(feedback)` for each of `turns`, where
/// `turns[0]` is the session's turn number `first_index + 1`.
pub fn push_pairs(messages: &mut Vec<Message>, turns: &[Turn], first_index: usize, max_turns: u32) {
    for (i, turn) in turns.iter().enumerate() {
        let completed = first_index + i + 1;
        messages.push(Message::assistant(turn.raw_response.as_str()));
        messages.push(Message::user(
            feedback(turn, completed, max_turns).into_owned(),
        ));
    }
}

/// The USER message after a turn: the recorded feedback when present, else the
/// generated one (see [`write_generated_feedback`]). `completed` is the number of turns
/// completed once this turn is done (its 1-based position).
pub fn feedback(turn: &Turn, completed: usize, max_turns: u32) -> Cow<'_, str> {
    match &turn.feedback {
        Some(recorded) => Cow::Borrowed(recorded.as_str()),
        None => {
            let mut out = String::with_capacity(generated_len_hint(turn));
            write_generated_feedback(&mut out, turn, completed, max_turns);
            Cow::Owned(out)
        }
    }
}

fn generated_len_hint(turn: &Turn) -> usize {
    let prints: usize = turn.prints.iter().map(|p| p.len() + 1).sum();
    let error = turn.error_message().map_or(0, |m| m.len() + 9);
    prints + error + 80
}

/// The generated feedback after a turn: the parts that exist joined by a blank line —
/// the prints joined by `\n`, `Error: {message}` for a failed turn, and the turns line
/// for the next call. A turn whose prints are all empty strings contributes no prints
/// part (it would only add blank lines).
pub fn write_generated_feedback(out: &mut String, turn: &Turn, completed: usize, max_turns: u32) {
    let start = out.len();
    if turn.prints.iter().any(|p| !p.is_empty()) {
        for (i, p) in turn.prints.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(p);
        }
    }
    if !turn.success {
        if out.len() > start {
            out.push_str("\n\n");
        }
        out.push_str("Error: ");
        out.push_str(turn.error_message().unwrap_or_default());
    }
    if out.len() > start {
        out.push_str("\n\n");
    }
    push_turns_line(out, turns_left_after(completed, max_turns));
}

/// Turns left for the call after `completed` turns.
pub fn turns_left_after(completed: usize, max_turns: u32) -> u32 {
    max_turns.saturating_sub(u32::try_from(completed).unwrap_or(u32::MAX))
}

/// Appends the turns line (MSG-005) without allocating: the same text as
/// [`recap_core::turns_line`].
pub fn push_turns_line(out: &mut String, turns_left: u32) {
    if turns_left >= 2 {
        out.push_str("Turns left: ");
        recap_core::write_decimal(out, u64::from(turns_left));
    } else {
        out.push_str(FINAL_TURN_LINE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_gen::builder::{SessionBuilder, TurnBuilder};

    #[test]
    fn zero_turns_is_system_and_mission() {
        let s = SessionBuilder::new("m").system("sys").build();
        let req = RenderRequest::for_call(&s, 0).unwrap();
        assert_eq!(
            render(&req),
            vec![Message::system("sys"), Message::user("m")]
        );
    }

    #[test]
    fn a_chat_session_with_zero_turns_is_system_and_mission_and_keeps_its_form() {
        let line = r#"{"id":"z","mission":"m","system_prompt":"sys","max_turns":null,"turns":[]}"#;
        let s = recap_core::Session::from_json(&serde_json::from_str(line).unwrap()).unwrap();
        assert_eq!(s.form, Form::Chat);
        assert_eq!(s.budget(), None);
        let req = RenderRequest::for_call(&s, 0).unwrap();
        assert_eq!(
            render(&req),
            vec![Message::system("sys"), Message::user("m")]
        );
        assert_eq!(s.to_json().to_string(), serde_json::json!({"id":"z","mission":"m","system_prompt":"sys","max_turns":null,"turns":[]}).to_string());
    }

    #[test]
    fn recorded_feedback_is_used_verbatim() {
        let s = SessionBuilder::new("m")
            .turn(TurnBuilder::ok("(+ 1 2)").feedback("exactly this"))
            .build();
        let req = RenderRequest::for_call(&s, 1).unwrap();
        let msgs = render(&req);
        assert_eq!(msgs[3], Message::user("exactly this"));
    }

    #[test]
    fn generated_feedback_joins_prints_error_and_turns_line() {
        let s = SessionBuilder::new("m")
            .max_turns(3)
            .turn(TurnBuilder::failed("(boom)", "bad").prints(["a", "b"]))
            .turn(TurnBuilder::ok("(ok)"))
            .build();
        let req = RenderRequest::for_call(&s, 2).unwrap();
        let msgs = render(&req);
        assert_eq!(msgs[3].content, "a\nb\n\nError: bad\n\nTurns left: 2");
        assert_eq!(
            msgs[5].content,
            "⚠️ FINAL TURN - you must call (return result) or (fail response) next."
        );
    }

    #[test]
    fn empty_prints_add_no_blank_lines() {
        let s = SessionBuilder::new("m")
            .turn(TurnBuilder::ok("(println \"\")").prints([""]))
            .build();
        let req = RenderRequest::for_call(&s, 1).unwrap();
        assert_eq!(render(&req)[3].content, "Turns left: 4");
    }

    #[test]
    fn push_turns_line_matches_the_core_turns_line() {
        for left in [0, 1, 2, 3, 10, 29, u32::MAX] {
            let mut out = String::new();
            push_turns_line(&mut out, left);
            assert_eq!(out, recap_core::turns_line(left));
        }
    }

    #[test]
    fn the_opening_and_the_pairs_are_the_whole_prompt() {
        let session = recap_gen::generate_corpus(3, 1, 4..=4).remove(0);
        let request = RenderRequest::for_call(&session, 3).expect("a call");
        let mut messages = opening(&request);
        push_pairs(&mut messages, &session.turns[..3], 0, session.max_turns);
        assert_eq!(messages, render(&request));
        assert_eq!(messages.len(), 2 + 2 * 3);
    }
}
