//! Per-session reuse for [`Strategy::render_session`](recap_core::Strategy): every text
//! of the summary that depends on one item only (a call's arguments, whether it repeats
//! the call before it, a definition's line and sample, where a long print is cut) is
//! printed once per session into one arena and copied on every later call; the folded
//! memory is extended turn by turn. A call then costs about a copy of its prompt.
//!
//! The cache remembers which session filled it ([`SessionKey`]) and starts over when
//! asked about another one, so a shared or reused state never yields a wrong prompt.

use crate::options::SummaryOptions;
use crate::pieces::{
    CallAt, DefAt, Pieces, fold_turn, same_call, write_args, write_def_line, write_sample,
};
use crate::summary::{print_cut, write_summary_with};
use recap_core::{Session, SessionState, Turn};

/// Which session a per-session cache was filled from: its id, its `max_turns`, and the
/// address of its turns. A session that only gains turns keeps the address unless its
/// turn vector reallocates (the cache then starts over, which is merely slower); a
/// different session, even with the same id, has other turns at another address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionKey {
    id: String,
    max_turns: u32,
    turns_addr: usize,
}

impl SessionKey {
    pub fn of(session: &Session) -> Self {
        Self {
            id: session.id.clone(),
            max_turns: session.max_turns,
            turns_addr: session.turns.as_ptr().addr(),
        }
    }

    /// Whether `session` is the one this key was made from (cached data for its first
    /// turns is still valid, given the contract that sessions only gain turns).
    pub fn matches(&self, session: &Session) -> bool {
        self.turns_addr == session.turns.as_ptr().addr()
            && self.max_turns == session.max_turns
            && self.id == session.id
    }
}

/// A piece of text in the arena.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

#[derive(Debug, Clone, Copy, Default)]
struct CallPieces {
    args: Option<Span>,
    same_as_previous: Option<bool>,
}

#[derive(Debug, Clone, Copy, Default)]
struct DefPieces {
    line: Option<Span>,
    sample: Option<Span>,
}

/// The summary's per-session cache (shared by `single-user-coalesced` and
/// `rolling-window`). Pieces are filled lazily: a sample is printed only once a call
/// shows it.
#[derive(Debug)]
pub struct SummaryCache {
    key: SessionKey,
    /// Every cached text, back to back.
    arena: String,
    /// Per indexed turn, where its calls, definitions and prints start in the flat
    /// vectors below.
    call_base: Vec<usize>,
    def_base: Vec<usize>,
    print_base: Vec<usize>,
    calls: Vec<CallPieces>,
    defs: Vec<DefPieces>,
    /// Where a print longer than the cut limit is cut (`Some(None)`: kept whole).
    cuts: Vec<Option<Option<usize>>>,
    /// The memory folded over the first `folded` turns, as (turn, index).
    live: Vec<(usize, usize)>,
    folded: usize,
    /// The length of the last context written, to pre-size the next one.
    last_len: usize,
}

impl SummaryCache {
    fn new(key: SessionKey) -> Self {
        Self {
            key,
            arena: String::new(),
            call_base: Vec::new(),
            def_base: Vec::new(),
            print_base: Vec::new(),
            calls: Vec::new(),
            defs: Vec::new(),
            cuts: Vec::new(),
            live: Vec::new(),
            folded: 0,
            last_len: 0,
        }
    }

    /// The cache kept in `state` for `session`; a new one when `state` is empty, holds
    /// something else, or was filled from another session.
    pub fn for_session<'s>(state: &'s mut SessionState, session: &Session) -> &'s mut Self {
        let reusable = state.get_mut::<Self>().is_some_and(|cache| {
            cache.key.matches(session) && cache.call_base.len() <= session.turns.len()
        });
        if !reusable {
            return state.set(Self::new(SessionKey::of(session)));
        }
        match state.get_mut::<Self>() {
            Some(cache) => cache,
            None => state.set(Self::new(SessionKey::of(session))),
        }
    }

    /// A size for the string the next context is written into.
    pub fn len_hint(&self) -> usize {
        self.last_len + 64
    }

    /// [`crate::write_context`] over the first `turns` turns of `session`, the session
    /// this cache was obtained for with [`SummaryCache::for_session`].
    pub fn write_context(
        &mut self,
        out: &mut String,
        session: &Session,
        turns: usize,
        options: SummaryOptions,
    ) {
        let start = out.len();
        let turns = &session.turns[..turns.min(session.turns.len())];
        self.index(turns);
        crate::write_context_with(out, &session.mission, turns, options, self);
        self.last_len = out.len() - start;
    }

    /// Makes room for the pieces of every turn among `turns` (the flat vectors grow
    /// with the session, never shrink: earlier turns do not change).
    fn index(&mut self, turns: &[Turn]) {
        for turn in &turns[self.call_base.len().min(turns.len())..] {
            self.call_base.push(self.calls.len());
            self.def_base.push(self.defs.len());
            self.print_base.push(self.cuts.len());
            self.calls
                .resize(self.calls.len() + turn.tool_calls.len(), CallPieces::default());
            self.defs
                .resize(self.defs.len() + turn.definitions.len(), DefPieces::default());
            self.cuts.resize(self.cuts.len() + turn.prints.len(), None);
        }
    }

    fn text(&self, span: Span) -> &str {
        &self.arena[span.start..span.end]
    }
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

impl<'t> Pieces<'t> for SummaryCache {
    fn args(&mut self, out: &mut String, call: &CallAt<'t>) {
        let slot = &mut self.calls[self.call_base[call.turn] + call.index].args;
        let span = cached(&mut self.arena, slot, |a| write_args(a, &call.call.args));
        out.push_str(self.text(span));
    }

    fn same_as_previous(&mut self, call: &CallAt<'t>, previous: &CallAt<'t>) -> bool {
        // `previous` is always the successful call right before `call` in the session,
        // so the answer belongs to `call` alone.
        let slot = &mut self.calls[self.call_base[call.turn] + call.index].same_as_previous;
        *slot.get_or_insert_with(|| same_call(call.call, previous.call))
    }

    fn fold(&mut self, turns: &'t [Turn]) -> usize {
        if self.folded > turns.len() {
            // An earlier call than the last one: fold again from the start.
            self.live.clear();
            self.folded = 0;
        }
        for (t, turn) in turns.iter().enumerate().skip(self.folded) {
            fold_turn(
                &mut self.live,
                t,
                turn,
                |&(t, i)| turns[t].definitions[i].name.as_str(),
                |at| (at.turn, at.index),
            );
        }
        self.folded = turns.len();
        self.live.len()
    }

    fn live_at(&self, turns: &'t [Turn], i: usize) -> DefAt<'t> {
        let (turn, index) = self.live[i];
        DefAt {
            turn,
            index,
            def: &turns[turn].definitions[index],
        }
    }

    fn def_line(&mut self, out: &mut String, def: &DefAt<'t>) {
        let slot = &mut self.defs[self.def_base[def.turn] + def.index].line;
        let span = cached(&mut self.arena, slot, |a| write_def_line(a, def.def));
        out.push_str(self.text(span));
    }

    fn sample(&mut self, out: &mut String, def: &DefAt<'t>) {
        let slot = &mut self.defs[self.def_base[def.turn] + def.index].sample;
        let span = cached(&mut self.arena, slot, |a| write_sample(a, def.def));
        out.push_str(self.text(span));
    }

    fn print(&mut self, out: &mut String, turn: usize, index: usize, print: &str) {
        let cut = if print.len() <= crate::PRINT_CHAR_LIMIT {
            None
        } else {
            *self.cuts[self.print_base[turn] + index].get_or_insert_with(|| print_cut(print))
        };
        match cut {
            Some(cut) => {
                out.push_str(&print[..cut]);
                out.push_str("...");
            }
            None => out.push_str(print),
        }
    }
}
