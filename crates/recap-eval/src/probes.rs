//! Probe QA: questions whose answers were in the history, asked after compression
//! (after Factory's probe-based evaluation of compaction), generated from the facts
//! recap's retention measure records (SPEC 9 for the PTC form, 11.5 for the chat form)
//! and graded by exact match of the fact.
//!
//! Each probe names where the fact was (turn, tool, kind) and gives its first characters
//! as a cue, so that the expected answer is one exact string. An answer is correct when
//! its first non-blank line (trimmed, one pair of surrounding quotes or backticks
//! removed) contains the fact verbatim and is at most [`SLACK_CHARS`] characters longer:
//! a model that quotes the line with a little framing passes, one that pastes half the
//! prompt does not. With `--judge`, a second request asks the model to grade the
//! answer against the fact ([`JUDGE_TEMPLATE`]).

use recap_core::{ChatTurn, Form, Observation, Session, Turn};
use recap_harness::retention::chat_facts::{FACT_CHARS, MIN_LITERAL_CHARS, string_literals};
use recap_llm::rng::Rng;

/// Characters a probe's fact needs: a shorter one is too easy to hit by chance.
pub const MIN_PROBE_CHARS: usize = 4;
/// Characters of framing an answer may add around the fact.
pub const SLACK_CHARS: usize = 40;
/// Characters of the cue at most.
pub const MAX_CUE_CHARS: usize = 12;

/// The first line of every probe question.
pub const PROBE_HEADER: &str = "Question about the conversation above";
/// The line that gives the cue; it ends the question.
pub const CUE_PREFIX: &str = "It begins with: ";

/// Where a fact was recorded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactKind {
    /// A string literal of a tool call's arguments (chat).
    Argument { tool: String },
    /// A tool result's first non-blank line (chat).
    ToolResult { tool: Option<String> },
    /// A failed tool result's first line (chat).
    ToolError { tool: Option<String> },
    /// A user message's first non-blank line (chat).
    UserMessage,
    /// Environment output delivered as a user message (chat).
    Environment,
    /// A name a successful program defined (PTC).
    Definition,
    /// A printed line (PTC).
    Print,
    /// A failed program's error message (PTC).
    TurnError,
}

/// One fact, as a probe asks it: the text is the recorded fact's first non-blank line,
/// trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fact {
    /// The turn (1-based) that recorded it: known to calls after `turn` turns or more.
    pub turn: u32,
    pub kind: FactKind,
    pub text: String,
}

/// A question about one fact.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Probe {
    pub fact: Fact,
    pub question: String,
}

fn cut(s: &str) -> String {
    s.chars().take(FACT_CHARS).collect()
}

fn first_non_blank_line(text: &str) -> &str {
    text.split(['\n', '\r'])
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
}

fn first_line(text: &str) -> &str {
    text.split(['\n', '\r']).next().unwrap_or("")
}

/// The session's facts in order of recording, each text once (its first recording).
pub fn session_facts(session: &Session) -> Vec<Fact> {
    let mut out = Vec::new();
    match session.form {
        Form::Chat => {
            for turn in &session.chat_turns {
                chat_turn_facts(turn, &mut out);
            }
        }
        Form::Ptc => {
            for turn in &session.turns {
                ptc_turn_facts(turn, &mut out);
            }
        }
    }
    let mut seen = std::collections::HashSet::new();
    out.retain(|f: &Fact| {
        let text = first_non_blank_line(&f.text).trim();
        text.chars().count() >= MIN_PROBE_CHARS && seen.insert(text.to_string())
    });
    for f in &mut out {
        f.text = first_non_blank_line(&f.text).trim().to_string();
    }
    out
}

/// SPEC 11.5, with where each fact came from.
fn chat_turn_facts(turn: &ChatTurn, out: &mut Vec<Fact>) {
    let at = |kind, text: String| Fact {
        turn: turn.number,
        kind,
        text,
    };
    for call in &turn.assistant.tool_calls {
        for literal in string_literals(&call.arguments) {
            if literal.chars().count() >= MIN_LITERAL_CHARS {
                out.push(at(
                    FactKind::Argument {
                        tool: call.name.to_string(),
                    },
                    cut(literal),
                ));
            }
        }
    }
    for o in &turn.observations {
        let tool = match o {
            Observation::Tool { tool_call_id, .. } => turn
                .assistant
                .tool_calls
                .iter()
                .find(|c| &c.id == tool_call_id)
                .map(|c| c.name.to_string()),
            Observation::User { .. } => None,
        };
        let kind = match o {
            Observation::Tool { .. } => FactKind::ToolResult { tool: tool.clone() },
            Observation::User {
                environment: true, ..
            } => FactKind::Environment,
            Observation::User { .. } => FactKind::UserMessage,
        };
        out.push(at(kind, cut(first_non_blank_line(o.content()))));
        if o.is_error() {
            out.push(at(
                FactKind::ToolError { tool },
                cut(first_line(o.content())),
            ));
        }
    }
}

/// SPEC 9: definitions of successful turns, each print's first line, the error message.
fn ptc_turn_facts(turn: &Turn, out: &mut Vec<Fact>) {
    let at = |kind, text: String| Fact {
        turn: turn.number,
        kind,
        text,
    };
    if turn.success {
        for d in &turn.definitions {
            out.push(at(FactKind::Definition, d.name.clone()));
        }
    }
    for p in &turn.prints {
        out.push(at(FactKind::Print, cut(first_line(p))));
    }
    if let Some(m) = turn.error_message() {
        out.push(at(FactKind::TurnError, m.to_string()));
    }
}

fn tool_phrase(tool: &Option<String>) -> String {
    match tool {
        Some(t) => format!("the tool `{t}`"),
        None => "a tool".to_string(),
    }
}

/// Where the question points, in words.
fn locator(fact: &Fact) -> String {
    let t = fact.turn;
    match &fact.kind {
        FactKind::Argument { tool } => format!(
            "In turn {t} the assistant called the tool `{tool}`. Quote the string in that call's arguments"
        ),
        FactKind::ToolResult { tool } => format!(
            "In turn {t} {} returned a result. Quote the first non-blank line of that result",
            tool_phrase(tool)
        ),
        FactKind::ToolError { tool } => format!(
            "In turn {t} a call of {} failed. Quote the first line of its error",
            tool_phrase(tool)
        ),
        FactKind::UserMessage => {
            format!("After turn {t} the user wrote a message. Quote its first non-blank line")
        }
        FactKind::Environment => {
            format!("After turn {t} the environment sent output. Quote its first non-blank line")
        }
        FactKind::Definition => {
            format!("The program of turn {t} defined a name. Quote that name")
        }
        FactKind::Print => format!("The program of turn {t} printed a line. Quote that line"),
        FactKind::TurnError => {
            format!("The program of turn {t} failed. Quote the first line of its error message")
        }
    }
}

/// The first characters of a fact that the question gives away.
pub fn cue(fact: &str) -> String {
    let n = fact.chars().count();
    fact.chars().take((n / 3).clamp(1, MAX_CUE_CHARS)).collect()
}

/// The question asked about `fact` (appended to the prompt as a USER message).
pub fn question(fact: &Fact) -> String {
    format!(
        "{PROBE_HEADER} (answer from it alone; do not call tools): {}. Reply with exactly \
         that text on one line and nothing else; reply UNKNOWN if the conversation no longer \
         shows it.\n{CUE_PREFIX}{}",
        locator(fact),
        cue(&fact.text)
    )
}

/// Up to `n` probes for the call after `k` turns of a session with `facts`: facts
/// recorded by its first `k` turns, chosen by a generator seeded with `(seed, session,
/// k)`, so every strategy is asked the same questions.
pub fn probes_for_call(
    facts: &[Fact],
    k: usize,
    n: usize,
    seed: u64,
    session: usize,
) -> Vec<Probe> {
    let mut known: Vec<&Fact> = facts.iter().filter(|f| (f.turn as usize) <= k).collect();
    Rng::derive(seed, &[session as u64, k as u64, 0x5052_4f42]).shuffle(&mut known);
    known
        .into_iter()
        .take(n)
        .map(|f| Probe {
            fact: f.clone(),
            question: question(f),
        })
        .collect()
}

/// Exact-match grading (see the module's rule).
pub fn grade(answer: &str, fact: &str) -> bool {
    let line = first_non_blank_line(answer).trim();
    let line = strip_quotes(line);
    line.contains(fact) && line.chars().count() <= fact.chars().count() + SLACK_CHARS
}

fn strip_quotes(s: &str) -> &str {
    for q in ['"', '\'', '`'] {
        if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
            return &s[1..s.len() - 1];
        }
    }
    s
}

/// The judge's prompt (a single USER message), for `--judge`.
pub const JUDGE_TEMPLATE: &str = "You are grading an answer to a question about an earlier conversation.\n\
Question: {question}\n\
Expected answer: {expected}\n\
Given answer: {answer}\n\
Does the given answer state the expected answer? The wording may differ slightly (quotes, \
framing), the content may not. Reply with one word: CORRECT or INCORRECT.";

pub fn judge_prompt(question: &str, expected: &str, answer: &str) -> String {
    JUDGE_TEMPLATE
        .replace("{question}", question)
        .replace("{expected}", expected)
        .replace("{answer}", answer)
}

/// The judge's verdict, `None` when it gave neither word.
pub fn judge_verdict(reply: &str) -> Option<bool> {
    let word: String = reply
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphabetic())
        .collect::<String>()
        .to_ascii_uppercase();
    match word.as_str() {
        "CORRECT" => Some(true),
        "INCORRECT" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use recap_gen::chat::ChatSessionBuilder;
    use recap_harness::retention::chat_facts::chat_turn_facts as spec_facts;

    fn session() -> Session {
        ChatSessionBuilder::new("m")
            .tool_turn(
                "",
                &[("c1", "read_file", r#"{"path": "/repo/src/main.rs"}"#)],
                &["\n\nfn main() { run() }\nmore"],
            )
            .text_turn("which?", &["Book the 9am flight please"])
            .build()
    }

    #[test]
    fn chat_facts_are_the_retention_facts_with_their_origin() {
        let s = session();
        let facts = session_facts(&s);
        let texts: Vec<&str> = facts.iter().map(|f| f.text.as_str()).collect();
        let spec: Vec<String> = s.chat_turns.iter().flat_map(spec_facts).collect();
        assert_eq!(texts, spec.iter().map(|f| f.trim()).collect::<Vec<_>>());
        assert_eq!(
            facts[1].kind,
            FactKind::ToolResult {
                tool: Some("read_file".into())
            }
        );
        assert_eq!(facts[2].kind, FactKind::UserMessage);
        assert_eq!(facts[2].turn, 2);
    }

    #[test]
    fn probes_ask_only_what_was_recorded_before_the_call() {
        let facts = session_facts(&session());
        assert!(probes_for_call(&facts, 0, 5, 1, 0).is_empty());
        let after_one = probes_for_call(&facts, 1, 5, 1, 0);
        assert_eq!(after_one.len(), 2);
        assert!(after_one.iter().all(|p| p.fact.turn == 1));
        assert_eq!(after_one, probes_for_call(&facts, 1, 5, 1, 0));
        let q = &after_one[0].question;
        assert!(q.starts_with(PROBE_HEADER), "{q}");
        let cue_line = q.lines().last().unwrap();
        assert!(
            after_one[0]
                .fact
                .text
                .starts_with(cue_line.strip_prefix(CUE_PREFIX).unwrap())
        );
    }

    #[test]
    fn grading_wants_the_fact_with_little_else() {
        let fact = "fn main() { run() }";
        assert!(grade("fn main() { run() }", fact));
        assert!(grade("`fn main() { run() }`\n", fact));
        assert!(grade("The line is: fn main() { run() }", fact));
        assert!(!grade("fn main() {}", fact));
        assert!(!grade("UNKNOWN", fact));
        assert!(!grade(&format!("{} {fact}", "x".repeat(60)), fact));
    }

    #[test]
    fn judge_words() {
        assert_eq!(judge_verdict("CORRECT"), Some(true));
        assert_eq!(judge_verdict(" incorrect."), Some(false));
        assert_eq!(judge_verdict("maybe"), None);
        let p = judge_prompt("q?", "exp", "ans");
        assert!(p.contains("Question: q?") && p.contains("Expected answer: exp"));
    }
}
