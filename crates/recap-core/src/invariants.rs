//! The invariant checker (SPEC section 7).
//!
//! [`check`] looks at one render and returns the declared invariants it breaks; it is
//! called by the harness on every render, so a passing check allocates nothing and is
//! linear in the size of the prompt. [`check_session`] renders every call of a session
//! (twice, for determinism) and checks all of them.
//!
//! Where a rule needs an interpretation, it is the one the built-ins are held to:
//! - turns line (5): call 0 renders `[SYSTEM, USER(mission)]` with no turns line, so the
//!   rule applies from call 1; a call whose last USER message is exactly the last turn's
//!   recorded feedback is exempt (the recording is what the model was shown);
//! - failed turns (4): the program, or the turn's whole `raw_response`, appears
//!   verbatim; the error message, or the turn's recorded feedback, appears verbatim;
//! - limits (7): a summary is a block that starts an ASSISTANT message, or follows the
//!   mission and a blank line at the start of a USER message; its tool-call lines
//!   (`;   …` after `; Tool calls:`) are counted, and its Output lines must be
//!   producible by at most `println_limit` of the session's prints.

use crate::message::{Message, Role};
use crate::session::{Form, Session};
use crate::strategy::{
    FINAL_TURN_LINE, Invariant, RenderError, RenderRequest, Strategy, render_call, turns_line,
};

/// One broken invariant at one call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The call index k (the prompt after k completed turns).
    pub call: usize,
    pub invariant: &'static str,
    pub detail: String,
}

/// What the checker looks at for one call.
pub struct CheckContext<'a> {
    pub session: &'a Session,
    /// Completed turns before this call.
    pub k: usize,
    pub messages: &'a [Message],
    /// The render of call k-1, for append-only (the harness passes it for the
    /// strategies that declare append-only, the only ones the rule reads it for).
    pub previous: Option<&'a [Message]>,
    /// A second render of the same call, for determinism: `messages` itself when the
    /// caller has already found the two equal (the harness compares them where they may
    /// differ, without building the second whole).
    pub second_render: Option<&'a [Message]>,
    /// The session's [`PrintLines`], when the caller keeps them across calls; without
    /// them the limits rule counts the prints' lines again at every call.
    pub print_lines: Option<&'a PrintLines>,
    /// Where the session's verbatim texts were found at the strategy's earlier calls,
    /// when the caller keeps them across calls (one per strategy and session).
    pub sightings: Option<&'a Sightings>,
}

/// Where each text a rule must find verbatim (the mission, a failed turn's program,
/// response, error and feedback) was last found in one strategy's prompts of one
/// session: (message index, byte offset), keyed by the text's address in the session.
///
/// A prompt rebuilt at every call mostly holds such a text where the previous call's
/// did, so a look there — a compare of the text's length — settles most searches that
/// would otherwise scan the whole prompt, once per failed turn per call (the failed-turns
/// rule was 7 % of a PTC-Lisp run). A look that misses falls back to the search, so the
/// answer is the search's whatever the sightings hold.
///
/// The searcher of each text is kept too: building one (two-way, with a prefilter) cost
/// twice as much as the searches themselves.
#[derive(Debug, Default)]
pub struct Sightings {
    at: std::cell::RefCell<std::collections::HashMap<(usize, usize), Sighting>>,
}

#[derive(Debug)]
struct Sighting {
    finder: memchr::memmem::Finder<'static>,
    /// (message index, byte offset) where it was last found.
    place: Option<(usize, usize)>,
}

impl Sightings {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether some of `needles` occurs in some message's content (as [`appears`]),
    /// looking first where each was last seen: one of several alternatives that is
    /// never shown (a program when the whole response is) is searched for only when
    /// no other is where it was.
    fn any_appears(&self, messages: &[Message], needles: &[&str]) -> bool {
        needles.iter().any(|n| self.seen_again(messages, n))
            || needles.iter().any(|n| self.search(messages, n))
    }

    fn key(needle: &str) -> (usize, usize) {
        (needle.as_ptr() as usize, needle.len())
    }

    /// Whether `needle` is where it was last seen.
    fn seen_again(&self, messages: &[Message], needle: &str) -> bool {
        let last = self
            .at
            .borrow()
            .get(&Self::key(needle))
            .and_then(|s| s.place);
        last.is_some_and(|(i, at)| {
            messages
                .get(i)
                .and_then(|m| m.content.as_bytes().get(at..))
                .is_some_and(|rest| rest.starts_with(needle.as_bytes()))
        })
    }

    /// [`appears`], remembering where the needle was found.
    fn search(&self, messages: &[Message], needle: &str) -> bool {
        let mut at = self.at.borrow_mut();
        let sighting = at.entry(Self::key(needle)).or_insert_with(|| Sighting {
            finder: memchr::memmem::Finder::new(needle.as_bytes()).into_owned(),
            place: None,
        });
        sighting.place = messages
            .iter()
            .enumerate()
            .find_map(|(i, m)| sighting.finder.find(m.content.as_bytes()).map(|at| (i, at)));
        sighting.place.is_some()
    }
}

/// Whether some of `needles` appears ([`appears`]), through the context's sightings
/// when it has them.
fn any_appears(ctx: &CheckContext<'_>, needles: &[&str]) -> bool {
    match ctx.sightings {
        Some(s) => s.any_appears(ctx.messages, needles),
        None => needles.iter().any(|n| appears(ctx.messages, n)),
    }
}

/// How many lines each print of a session has, in turn order: what the limits rule
/// compares a summary's Output lines with, counted once per session rather than at
/// every call (the prints are most of a PTC-Lisp session's text).
#[derive(Debug, Clone, Default)]
pub struct PrintLines {
    lines: Vec<usize>,
    /// `turn_ends[t]`: how many prints turns `..=t` have.
    turn_ends: Vec<usize>,
}

impl PrintLines {
    pub fn of(session: &Session) -> Self {
        let mut lines = Vec::new();
        let mut turn_ends = Vec::with_capacity(session.turns.len());
        for turn in &session.turns {
            lines.extend(turn.prints.iter().map(|p| print_lines(p)));
            turn_ends.push(lines.len());
        }
        PrintLines { lines, turn_ends }
    }

    /// The line counts of the prints of the first `k` turns.
    fn before(&self, k: usize) -> &[usize] {
        match k.min(self.turn_ends.len()) {
            0 => &[],
            k => &self.lines[..self.turn_ends[k - 1]],
        }
    }
}

/// A print's lines: one more than its line breaks.
fn print_lines(print: &str) -> usize {
    memchr::memchr_iter(b'\n', print.as_bytes()).count() + 1
}

/// Returns the declared invariants this render breaks.
///
/// In a chat-form session (SPEC 11.4) role alternation is replaced by tool pairing, and
/// the PTC-Lisp rules about failed programs, the turns line and summary limits do not
/// apply; the universal ones (system first, mission verbatim, determinism) and
/// append-only are checked as in the PTC form.
pub fn check(declared: &[Invariant], ctx: &CheckContext<'_>) -> Vec<Violation> {
    let mut out = Vec::new();
    let chat = ctx.session.form == Form::Chat;
    for inv in declared {
        let inv = match inv {
            Invariant::RoleAlternation if chat => &Invariant::ToolPairing,
            Invariant::FailedTurnsVerbatim | Invariant::TurnsLine | Invariant::Limits { .. }
                if chat =>
            {
                continue;
            }
            other => other,
        };
        let detail = match inv {
            Invariant::SystemFirst => system_first(ctx),
            Invariant::MissionVerbatim => mission_verbatim(ctx),
            Invariant::MissionLeadsFirstUser => mission_leads(ctx),
            Invariant::RoleAlternation => role_alternation(ctx.messages),
            Invariant::FailedTurnsVerbatim => failed_turns_verbatim(ctx),
            Invariant::TurnsLine => turns_line_ok(ctx),
            Invariant::Deterministic => deterministic(ctx),
            Invariant::Limits {
                tool_call_limit,
                println_limit,
            } => limits(ctx, *tool_call_limit as usize, *println_limit as usize),
            Invariant::AppendOnly => append_only(ctx),
            Invariant::ToolPairing => tool_pairing(ctx.messages),
        };
        if let Some(detail) = detail {
            out.push(Violation {
                call: ctx.k,
                invariant: inv.id(),
                detail,
            });
        }
    }
    out
}

/// A render that failed during [`check_session`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("call {call}: {error}")]
pub struct CallError {
    pub call: usize,
    pub error: RenderError,
}

/// The calls a session has: after k completed turns for every k with
/// `k ≤ turns` and `k < max_turns`.
pub fn calls(session: &Session) -> std::ops::Range<usize> {
    0..session
        .turn_count()
        .min(session.max_turns.saturating_sub(1) as usize)
        + 1
}

/// Renders every call of `session` twice with `strategy` and checks the invariants the
/// strategy declares. Stops at the first render error.
pub fn check_session(
    strategy: &dyn Strategy,
    session: &Session,
) -> Result<Vec<Violation>, CallError> {
    let declared = strategy.invariants();
    let print_lines = PrintLines::of(session);
    let sightings = Sightings::new();
    let mut violations = Vec::new();
    let mut previous: Option<Vec<Message>> = None;
    for k in calls(session) {
        RenderRequest::for_call(session, k).map_err(|e| CallError {
            call: k,
            error: RenderError::new("invalid_request", e.to_string()),
        })?;
        // Each render from a fresh replay: the answer of the call in isolation.
        let render =
            || render_call(strategy, session, k).map_err(|error| CallError { call: k, error });

        let first = render()?;
        let second = render()?;
        let ctx = CheckContext {
            session,
            k,
            messages: &first,
            previous: previous.as_deref(),
            second_render: Some(&second),
            print_lines: Some(&print_lines),
            sightings: Some(&sightings),
        };
        violations.extend(check(&declared, &ctx));
        previous = Some(first);
    }
    Ok(violations)
}

fn system_first(ctx: &CheckContext<'_>) -> Option<String> {
    match ctx.messages.first() {
        Some(m) if m.role == Role::System && m.content == ctx.session.system_prompt => None,
        Some(m) if m.role == Role::System => Some(format!(
            "the SYSTEM message differs from the system prompt ({} vs {} bytes)",
            m.content.len(),
            ctx.session.system_prompt.len()
        )),
        Some(m) => Some(format!("the first message is {}, not system", m.role)),
        None => Some("no messages".to_string()),
    }
}

/// SPEC 11.4.2: a TOOL message answers a call of the nearest preceding ASSISTANT
/// message (by id, once), and every call is answered before the next ASSISTANT message
/// or the end of the prompt — the pairing provider APIs enforce.
fn tool_pairing(messages: &[Message]) -> Option<String> {
    // The calls of the current ASSISTANT message, and whether each has been answered.
    let mut open: Option<(usize, &Message)> = None;
    let mut answered: Vec<bool> = Vec::new();
    let unanswered = |open: Option<(usize, &Message)>, answered: &[bool]| {
        let (i, m) = open?;
        let c = m.tool_calls.iter().zip(answered).find(|(_, a)| !**a)?.0;
        Some(format!(
            "message {i}: tool call {:?} ({}) is not answered before the next assistant message or the end",
            c.id, c.name
        ))
    };
    for (i, m) in messages.iter().enumerate() {
        match m.role {
            Role::Assistant => {
                if let Some(v) = unanswered(open, &answered) {
                    return Some(v);
                }
                answered.clear();
                answered.resize(m.tool_calls.len(), false);
                open = Some((i, m));
            }
            Role::Tool => {
                let id = m.tool_call_id.as_deref().unwrap_or_default();
                let Some((_, a)) = open else {
                    return Some(format!(
                        "message {i}: a tool result ({id:?}) with no assistant message before it"
                    ));
                };
                match a.tool_calls.iter().position(|c| c.id == id) {
                    Some(j) if !answered[j] => answered[j] = true,
                    Some(_) => {
                        return Some(format!("message {i}: tool call {id:?} is answered twice"));
                    }
                    None => {
                        return Some(format!(
                            "message {i}: tool result {id:?} answers no call of the nearest assistant message"
                        ));
                    }
                }
            }
            Role::System | Role::User => {}
        }
    }
    unanswered(open, &answered)
}

fn mission_verbatim(ctx: &CheckContext<'_>) -> Option<String> {
    let mission = ctx.session.mission.as_str();
    // Built-ins start a message with the mission: a prefix test settles it without a
    // searcher.
    let leads = ctx.messages.iter().any(|m| m.content.starts_with(mission));
    if leads || any_appears(ctx, &[mission]) {
        None
    } else {
        Some("the mission does not appear verbatim in any message".to_string())
    }
}

fn first_user(messages: &[Message]) -> Option<&Message> {
    messages.iter().find(|m| m.role == Role::User)
}

fn mission_leads(ctx: &CheckContext<'_>) -> Option<String> {
    match first_user(ctx.messages) {
        Some(m) if m.content.starts_with(ctx.session.mission.as_str()) => None,
        Some(_) => Some("the first USER message does not start with the mission".to_string()),
        None => Some("there is no USER message".to_string()),
    }
}

fn role_alternation(messages: &[Message]) -> Option<String> {
    for (i, m) in messages.iter().enumerate() {
        let expected = match i {
            0 => Role::System,
            i if i % 2 == 1 => Role::User,
            _ => Role::Assistant,
        };
        if m.role != expected {
            return Some(format!("message {i} is {}, expected {expected}", m.role));
        }
    }
    match messages.last() {
        Some(m) if m.role == Role::User => None,
        Some(m) => Some(format!("the last message is {}, expected user", m.role)),
        None => Some("no messages".to_string()),
    }
}

/// Whether `needle` occurs in some message's content, as `str::contains` decides it.
/// One searcher serves every message: `str::contains` builds a new one per message,
/// and on short prompts that construction dominated the whole check.
fn appears(messages: &[Message], needle: &str) -> bool {
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    messages
        .iter()
        .any(|m| finder.find(m.content.as_bytes()).is_some())
}

/// Whether some message is exactly `text`. Strategies that keep a reply or a recorded
/// feedback show it as a whole message; this test (lengths first) then answers without
/// building a searcher, which on short prompts costs more than the search.
fn is_message(messages: &[Message], text: &str) -> bool {
    messages.iter().any(|m| m.content == text)
}

fn failed_turns_verbatim(ctx: &CheckContext<'_>) -> Option<String> {
    for turn in ctx.session.failed_turns(ctx.k) {
        let program_shown = is_message(ctx.messages, &turn.raw_response)
            || any_appears(ctx, &[&turn.program, &turn.raw_response]);
        if !program_shown {
            return Some(format!(
                "failed turn {}: its program does not appear verbatim",
                turn.number
            ));
        }
        let message = turn.error_message().unwrap_or_default();
        let feedback = turn.feedback.as_deref();
        let shown = feedback.is_some_and(|f| is_message(ctx.messages, f))
            || match feedback {
                Some(f) => any_appears(ctx, &[message, f]),
                None => any_appears(ctx, &[message]),
            };
        if !shown {
            return Some(format!(
                "failed turn {}: its error message does not appear verbatim",
                turn.number
            ));
        }
    }
    None
}

fn turns_line_ok(ctx: &CheckContext<'_>) -> Option<String> {
    if ctx.k == 0 {
        return None;
    }
    let Some(last_user) = ctx.messages.iter().rev().find(|m| m.role == Role::User) else {
        return Some("there is no USER message".to_string());
    };
    let recorded = ctx
        .session
        .turns
        .get(ctx.k - 1)
        .and_then(|t| t.feedback.as_deref());
    if recorded == Some(last_user.content.as_str()) {
        return None;
    }
    let left = ctx.session.max_turns.saturating_sub(ctx.k as u32);
    if ends_with_turns_line(&last_user.content, left) {
        None
    } else {
        Some(format!(
            "the last USER message does not end with {:?}",
            turns_line(left)
        ))
    }
}

/// `text.ends_with(&turns_line(left))` without building the line.
fn ends_with_turns_line(text: &str, left: u32) -> bool {
    if left < 2 {
        return text.ends_with(FINAL_TURN_LINE);
    }
    let mut digits = [0u8; 10];
    let mut i = digits.len();
    let mut n = left;
    while n > 0 {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    text.as_bytes()
        .strip_suffix(&digits[i..])
        .is_some_and(|rest| rest.ends_with(b"Turns left: "))
}

fn deterministic(ctx: &CheckContext<'_>) -> Option<String> {
    let second = ctx.second_render?;
    if std::ptr::eq(second, ctx.messages) || second == ctx.messages {
        return None;
    }
    let at = ctx
        .messages
        .iter()
        .zip(second)
        .position(|(a, b)| a != b)
        .unwrap_or(ctx.messages.len().min(second.len()));
    Some(format!("a second render differs at message {at}"))
}

fn append_only(ctx: &CheckContext<'_>) -> Option<String> {
    let previous = ctx.previous?;
    if previous.len() > ctx.messages.len() {
        return Some(format!(
            "{} messages, fewer than the previous call's {}",
            ctx.messages.len(),
            previous.len()
        ));
    }
    let at = previous
        .iter()
        .zip(ctx.messages)
        .position(|(a, b)| a != b)?;
    Some(format!("message {at} differs from the previous call's"))
}

/// Where a summary may start in each message (see the module docs).
fn summary_starts<'m>(
    messages: &'m [Message],
    mission: &'m str,
) -> impl Iterator<Item = (usize, &'m str)> + 'm {
    messages.iter().enumerate().filter_map(move |(i, m)| {
        let text = match m.role {
            Role::Assistant => m.content.as_str(),
            Role::User => m.content.strip_prefix(mission)?.strip_prefix("\n\n")?,
            Role::System | Role::Tool => return None,
        };
        text.starts_with("; ").then_some((i, text))
    })
}

fn limits(ctx: &CheckContext<'_>, tool_call_limit: usize, println_limit: usize) -> Option<String> {
    for (i, summary) in summary_starts(ctx.messages, &ctx.session.mission) {
        let mut lines = summary.split('\n').peekable();
        if lines.peek() == Some(&"; Tool calls:") {
            lines.next();
            let mut n = 0;
            while lines.next_if(|l| l.starts_with(";   ")).is_some() {
                n += 1;
            }
            if n > tool_call_limit {
                return Some(format!(
                    "message {i}: {n} tool-call lines, more than tool_call_limit {tool_call_limit}"
                ));
            }
        }
        while lines
            .next_if(|l| l.starts_with("; ") && *l != "; Output:")
            .is_some()
        {}
        let Some(output) = lines.next().filter(|l| *l == "; Output:") else {
            continue;
        };
        // The section is most of a summary: its lines are counted from the text after
        // the `; Output:` line rather than split off one by one.
        let end = output.as_ptr() as usize - summary.as_ptr() as usize + output.len();
        let n = summary.get(end + 1..).map_or(0, output_lines);
        // Each print is at least one line: the common case needs no more work.
        if n > println_limit {
            let most = most_lines(ctx, println_limit);
            if n > most {
                return Some(format!(
                    "message {i}: {n} Output lines, more than {println_limit} prints can make ({most})"
                ));
            }
        }
    }
    None
}

/// How many lines a summary's Output section has, given the text after its `; Output:`
/// line: its lines up to the first empty line followed by a line that ends the section
/// ([`ends_section`]), or all of them.
fn output_lines(rest: &str) -> usize {
    let mut count = 0;
    let mut line_start = 0;
    for q in memchr::memchr_iter(b'\n', rest.as_bytes()) {
        if q == line_start {
            let after = &rest[q + 1..];
            let next = &after[..memchr::memchr(b'\n', after.as_bytes()).unwrap_or(after.len())];
            if ends_section(next) {
                return count;
            }
        }
        count += 1;
        line_start = q + 1;
    }
    count + 1
}

/// The line that starts the part after a summary: a failed-turn block or a turns line.
fn ends_section(line: &str) -> bool {
    line == "---" || line.starts_with("Turns left: ") || line == FINAL_TURN_LINE
}

/// The most Output lines `limit` of the session's prints (each cut at 2000 characters)
/// can produce.
fn most_lines(ctx: &CheckContext<'_>, limit: usize) -> usize {
    let counted;
    let lines = match ctx.print_lines {
        Some(p) => p.before(ctx.k),
        None => {
            counted = PrintLines::of(ctx.session);
            counted.before(ctx.k)
        }
    };
    if limit >= lines.len() {
        return lines.iter().sum();
    }
    let mut counts = lines.to_vec();
    // The `limit` largest, in any order.
    counts.select_nth_unstable_by(limit, |a, b| b.cmp(a));
    counts[..limit].iter().sum()
}

#[cfg(test)]
mod tests;
