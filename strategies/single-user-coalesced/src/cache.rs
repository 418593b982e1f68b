//! Per-session reuse for a replay (`recap_core::Replay`): every text of the summary that
//! depends on one item only (a call's arguments, whether it repeats the call before it, a
//! definition's line and sample, where a long print is cut) is printed once per session
//! into one arena and copied on every later call; the folded memory is extended turn by
//! turn. A call then costs about a copy of its prompt. A cache serves the one session
//! whose replay holds it.

use crate::options::SummaryOptions;
use crate::pieces::{
    DefKind, Pieces, same_call, write_call_head, write_call_tail, write_def_line, write_sample,
};
use crate::texts::{print_cut, shown_print_len};
use recap_core::memory::define;
use recap_core::{Definition, Session, ToolCall, Turn};

/// A piece of text in the arena.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

/// A tool call of a successful turn.
#[derive(Debug, Clone, Copy)]
struct CallSlot {
    turn: usize,
    index: usize,
    /// Its line up to the run count, and its result type.
    head: Option<Span>,
    tail: Option<Span>,
    /// Whether it repeats the successful call right before it in the session
    /// (TC-008), and whether it is even identical to it (same name, arguments equal
    /// down to the bits of floats and the order of entries: the same line).
    repeats: Option<bool>,
    identical: bool,
}

/// A definition made by a successful turn.
#[derive(Debug, Clone, Copy)]
struct DefSlot {
    turn: usize,
    index: usize,
    name_hash: u64,
    kind: DefKind,
    line: Option<Span>,
    /// The line followed by its sample.
    line_and_sample: Option<Span>,
}

/// A print of a successful turn.
#[derive(Debug, Clone, Copy)]
struct PrintSlot {
    turn: usize,
    index: usize,
    /// Where it is cut when longer than the limit (`Some(None)`: kept whole).
    cut: Option<Option<usize>>,
}

/// The summary's per-session cache (shared by `single-user-coalesced` and
/// `rolling-window`): the calls, definitions and prints of the successful turns in
/// session order, so that a call's windows ("the last 20 calls") are ranges, and their
/// texts, filled lazily (a sample is printed only once a call shows it).
#[derive(Debug, Default)]
pub struct SummaryCache {
    /// Every cached text, back to back.
    arena: String,
    /// How many turns of the session are indexed below.
    indexed: usize,
    first_success: Option<usize>,
    /// The first successful turn that printed.
    first_printed: Option<usize>,
    /// Per indexed turn `t`: how many slots the turns up to `t` (included) have.
    calls_end: Vec<usize>,
    defs_end: Vec<usize>,
    prints_end: Vec<usize>,
    calls: Vec<CallSlot>,
    defs: Vec<DefSlot>,
    prints: Vec<PrintSlot>,
    /// The first slot of the current call window.
    calls_from: usize,
    /// The memory folded over the first `folded` definition slots, as slots.
    live: Vec<usize>,
    folded: usize,
    /// The length of the last context written and its number of turns, to pre-size
    /// the next one.
    last_len: usize,
    last_turns: usize,
}

impl SummaryCache {
    /// An empty cache, for one session's replay (whose turns only grow from call to
    /// call).
    pub fn new() -> Self {
        Self::default()
    }

    /// A size for the string the context over the first `turns` turns of `session` is
    /// written into: the last context's size plus what the turns since then may add,
    /// or an estimate on the first call.
    pub fn len_hint(&self, session: &Session, turns: usize, options: SummaryOptions) -> usize {
        let turns = turns.min(session.turns.len());
        if self.last_len == 0 {
            return crate::context_len_hint(&session.mission, &session.turns[..turns], options);
        }
        let added: usize = session.turns[self.last_turns.min(turns)..turns]
            .iter()
            .map(|t| match t.error_message() {
                Some(message) if !t.success => t.program.len() + message.len() + 64,
                // Its prints may all enter the Output section.
                _ => 256 + t.prints.iter().map(|p| shown_print_len(p)).sum::<usize>(),
            })
            .sum();
        self.last_len + added + 64
    }

    /// [`crate::write_context`] over the first `turns` turns of `session`, the session
    /// this cache serves.
    pub fn write_context(
        &mut self,
        out: &mut String,
        session: &Session,
        turns: usize,
        options: SummaryOptions,
    ) {
        let start = out.len();
        self.index(&session.turns);
        let turns = &session.turns[..turns.min(session.turns.len())];
        crate::write_context_with(out, &session.mission, turns, options, self);
        self.last_len = out.len() - start;
        self.last_turns = turns.len();
    }

    /// Indexes every turn of the session not indexed yet: all of them on the first
    /// call, the turns gained since on later ones. Texts are filled later, when shown.
    fn index(&mut self, turns: &[Turn]) {
        let new = &turns[self.indexed.min(turns.len())..];
        if new.is_empty() {
            return;
        }
        let (mut calls, mut defs, mut prints) = (0, 0, 0);
        for t in new.iter().filter(|t| t.success) {
            calls += t.tool_calls.len();
            defs += t.definitions.len();
            prints += t.prints.len();
        }
        for ends in [
            &mut self.calls_end,
            &mut self.defs_end,
            &mut self.prints_end,
        ] {
            ends.reserve(new.len());
        }
        self.calls.reserve(calls);
        self.defs.reserve(defs);
        self.prints.reserve(prints);
        // Room for the texts (an argument list is a few dozen bytes, a definition line
        // and its sample about a hundred), so the arena rarely grows by copying.
        self.arena.reserve(calls * 40 + defs * 128);
        for (turn, t) in new.iter().enumerate().map(|(i, t)| (self.indexed + i, t)) {
            if t.success {
                self.first_success.get_or_insert(turn);
                if !t.prints.is_empty() {
                    self.first_printed.get_or_insert(turn);
                }
                self.calls
                    .extend((0..t.tool_calls.len()).map(|index| CallSlot {
                        turn,
                        index,
                        head: None,
                        tail: None,
                        repeats: None,
                        identical: false,
                    }));
                self.defs.extend(
                    t.definitions
                        .iter()
                        .enumerate()
                        .map(|(index, def)| DefSlot {
                            turn,
                            index,
                            name_hash: name_hash(&def.name),
                            kind: DefKind::of(def),
                            line: None,
                            line_and_sample: None,
                        }),
                );
                self.prints
                    .extend((0..t.prints.len()).map(|index| PrintSlot {
                        turn,
                        index,
                        cut: None,
                    }));
            }
            self.calls_end.push(self.calls.len());
            self.defs_end.push(self.defs.len());
            self.prints_end.push(self.prints.len());
        }
        self.indexed = turns.len();
    }

    fn text(&self, span: Span) -> &str {
        &self.arena[span.start..span.end]
    }
}

/// A cheap fingerprint of a definition's name (its length and first and last bytes),
/// to tell most names apart without reading both; equal fingerprints still compare
/// the names.
fn name_hash(name: &str) -> u64 {
    let bytes = name.as_bytes();
    let word = |part: &[u8]| part.iter().fold(0u64, |w, &b| (w << 8) | u64::from(b));
    let head = word(&bytes[..bytes.len().min(8)]);
    let tail = word(&bytes[bytes.len().saturating_sub(8)..]);
    (bytes.len() as u64) ^ head.rotate_left(16) ^ tail.rotate_left(40)
}

/// How many slots the first `turns` turns have, from per-turn running totals.
fn slots_before(ends: &[usize], turns: usize) -> usize {
    turns.checked_sub(1).map_or(0, |last| ends[last])
}

/// The line and sample of a definition, as one span (see
/// [`write_def_entry`](crate::pieces::write_def_entry)); the line alone is cached on the
/// way, as its prefix.
fn line_and_sample<'t>(
    arena: &mut String,
    slot: &mut DefSlot,
    def: impl FnOnce() -> &'t Definition,
) -> Span {
    *slot.line_and_sample.get_or_insert_with(|| {
        let def = def();
        let start = arena.len();
        write_def_line(arena, def);
        let line_end = arena.len();
        write_sample(arena, def);
        slot.line.get_or_insert(Span {
            start,
            end: line_end,
        });
        Span {
            start,
            end: arena.len(),
        }
    })
}

/// The cached span in `slot`, or `write`'s output appended to the arena and cached.
fn cached(arena: &mut String, slot: &mut Option<Span>, write: impl FnOnce(&mut String)) -> Span {
    *slot.get_or_insert_with(|| {
        let start = arena.len();
        write(arena);
        Span {
            start,
            end: arena.len(),
        }
    })
}

impl SummaryCache {
    /// The call in slot `at`.
    fn call<'t>(&self, turns: &'t [Turn], at: usize) -> &'t ToolCall {
        let slot = &self.calls[at];
        &turns[slot.turn].tool_calls[slot.index]
    }
}

impl<'t> Pieces<'t> for SummaryCache {
    fn any_success(&mut self, turns: &'t [Turn]) -> bool {
        self.first_success.is_some_and(|t| t < turns.len())
    }

    fn printed(&mut self, turns: &'t [Turn]) -> bool {
        self.first_printed.is_some_and(|t| t < turns.len())
    }

    fn calls_window(&mut self, turns: &'t [Turn], limit: usize) -> usize {
        let end = slots_before(&self.calls_end, turns.len());
        self.calls_from = end.saturating_sub(limit);
        end - self.calls_from
    }

    fn repeats(&mut self, turns: &'t [Turn], i: usize) -> bool {
        // The slot before is the successful call right before it in the session, so
        // the answer belongs to the call alone.
        let at = self.calls_from + i;
        if let Some(repeats) = self.calls[at].repeats {
            return repeats;
        }
        let (call, previous) = (self.call(turns, at), self.call(turns, at - 1));
        // An identical call (the usual repeat: polling) also prints identically.
        let identical = call.name == previous.name && call.args.is_identical(&previous.args);
        let repeats = identical || same_call(call, previous);
        self.calls[at].repeats = Some(repeats);
        self.calls[at].identical = identical;
        repeats
    }

    fn call_head(&mut self, out: &mut String, turns: &'t [Turn], i: usize) {
        let at = self.calls_from + i;
        if self.calls[at].head.is_none() {
            // A call identical to the ones before it has their line: reuse a printed
            // one when there is one.
            let mut before = at;
            while self.calls[before].identical && self.calls[before].head.is_none() {
                before -= 1;
            }
            self.calls[at].head = self.calls[before].head;
        }
        let slot = &mut self.calls[at];
        // The call itself is only read to print it, not on later calls.
        let (turn, index) = (slot.turn, slot.index);
        let span = cached(&mut self.arena, &mut slot.head, |a| {
            write_call_head(a, &turns[turn].tool_calls[index])
        });
        out.push_str(self.text(span));
    }

    fn call_tail(&mut self, out: &mut String, turns: &'t [Turn], i: usize) {
        let slot = &mut self.calls[self.calls_from + i];
        let (turn, index) = (slot.turn, slot.index);
        let span = cached(&mut self.arena, &mut slot.tail, |a| {
            write_call_tail(a, &turns[turn].tool_calls[index])
        });
        out.push_str(self.text(span));
    }

    fn definitions(&mut self, out: &mut String, turns: &'t [Turn], printed: bool) {
        let target = slots_before(&self.defs_end, turns.len());
        if self.folded > target {
            // An earlier call than the last one: fold again from the start.
            self.live.clear();
            self.folded = 0;
        }
        let defs = &self.defs;
        let name = |slot: usize| {
            turns[defs[slot].turn].definitions[defs[slot].index]
                .name
                .as_str()
        };
        for slot in self.folded..target {
            // Names are compared only when their hashes match.
            let hash = defs[slot].name_hash;
            define(&mut self.live, slot, |&live| {
                defs[live].name_hash == hash && name(live) == name(slot)
            });
        }
        self.folded = target;
        for function in [true, false] {
            for &at in &self.live {
                let slot = &mut self.defs[at];
                if slot.kind.function != function {
                    continue;
                }
                // The definition itself is only read to print it.
                let (turn, index) = (slot.turn, slot.index);
                let def = || &turns[turn].definitions[index];
                let text = if !printed && slot.kind.has_sample {
                    line_and_sample(&mut self.arena, slot, def)
                } else {
                    cached(&mut self.arena, &mut slot.line, |a| {
                        write_def_line(a, def())
                    })
                };
                out.push_str(&self.arena[text.start..text.end]);
            }
        }
    }

    fn output(&mut self, out: &mut String, turns: &'t [Turn], limit: usize) {
        let to = slots_before(&self.prints_end, turns.len());
        for slot in &mut self.prints[to.saturating_sub(limit)..to] {
            let print = turns[slot.turn].prints[slot.index].as_str();
            out.push('\n');
            if print.len() <= crate::PRINT_CHAR_LIMIT {
                out.push_str(print);
                continue;
            }
            match *slot.cut.get_or_insert_with(|| print_cut(print)) {
                Some(cut) => {
                    out.push_str(&print[..cut]);
                    out.push_str("...");
                }
                None => out.push_str(print),
            }
        }
    }
}
