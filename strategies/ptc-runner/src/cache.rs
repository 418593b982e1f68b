//! The fast path of the strategy: the USER message written into one exactly sized
//! buffer from texts printed once per session.
//!
//! The strategy's replay keeps a [`RenderCache`] for its session, so that on every later
//! call of the session only what changed is printed: the tools and data sections (they
//! depend only on the session) are printed on the first call, each definition's `user/`
//! line and each tool call's `;   name(args)` line the first time a call shows it, and the
//! live definitions are folded turn by turn. A call rendered in isolation uses the same
//! code with a fresh cache.
//!
//! The output is byte for byte that of [`crate::suc::to_messages`] (the reference the
//! golden cases check); `tests/fast_path.rs` compares both.

use crate::literals::{
    CALLS_HEADER, ERROR_PARTS, FINAL_WORK_TURN, NO_CALLS, OUTPUT_HEADER, TURNS_LEFT, USER_HEADER,
    write_call_line, write_error_section, write_turns_indicator,
};
use crate::namespace::{self, DataOptions, MemoryEntry};
use crate::suc::Limits;
use recap_core::{Message, RenderRequest, Session, Turn};
use std::cmp::Ordering;
use std::collections::VecDeque;

/// A piece of text in the arena.
#[derive(Debug, Clone, Copy)]
struct Span {
    start: usize,
    end: usize,
}

impl Span {
    fn len(self) -> usize {
        self.end - self.start
    }
}

/// A definition of a successful turn, and its `\n` + `user/` line once printed.
#[derive(Debug, Clone, Copy)]
struct DefSlot {
    turn: usize,
    index: usize,
    /// Its name's sort key, read once when indexed.
    name: NamePrefix,
    /// Functions are listed before values.
    function: bool,
    /// Whether it shows at all (nil, `[]` and `{}` values do not).
    informative: bool,
    line: Option<Span>,
}

/// Per-session texts and indexes of the fast path.
///
/// Calls, definitions and prints of the successful turns (failed turns contribute none)
/// are kept in session order with per-turn running totals, so that "the last N calls
/// before turn k" is a range found in constant time, not a walk over the history.
#[derive(Debug)]
pub struct RenderCache {
    limits: Limits,
    /// The cached texts (namespaces, definition lines), back to back.
    arena: String,
    /// The printed call lines, back to back in the order printed: in session order
    /// when calls are rendered in order, so that a window of them is mostly one slice.
    /// A repeated call's line is its predecessor's text (spans never decrease).
    call_arena: String,
    /// The tools section, then the data section after a blank line when there is data
    /// (both depend only on the session).
    namespaces: Option<Span>,
    has_println: bool,
    /// How many turns are indexed below.
    indexed: usize,
    /// Per indexed turn `t`: how many calls, definitions and prints the successful
    /// turns up to `t` (included) have. A call (print) is named by its rank in the
    /// session, its slot; the turn holding a slot is found by binary search.
    calls_end: Vec<usize>,
    defs_end: Vec<usize>,
    prints_end: Vec<usize>,
    /// The definitions, one per slot (folding reads every one of them).
    defs: Vec<DefSlot>,
    /// The printed lines of the calls in slots `call_lines_from..` (as many as there
    /// are lines): the window of the last call, extended as the window slides forward.
    /// Only a window is kept, not one entry per call of the session, so that a single
    /// `render` of a long session does not pay for indexing every call.
    call_lines: VecDeque<Span>,
    call_lines_from: usize,
    /// The live definitions after folding the first `folded` definition slots, one
    /// slot per name (its latest definition), in name order (the order `user/` lists
    /// them in): a new name is inserted in place, a redefinition replaces its entry.
    /// Each with its name's [`NamePrefix`], so that the search reads this vector and
    /// only names longer than 16 bytes (scattered over the session: cache misses).
    live: Vec<(NamePrefix, usize)>,
    folded: usize,
    /// The `user/` section (a blank line first) of the definitions in `live`, empty
    /// when none is informative.
    user_section: String,
    /// Whether `user_section` shows `live`.
    section_valid: bool,
}

impl RenderCache {
    /// An empty cache, for one request or one session.
    pub fn new(limits: Limits) -> Self {
        Self {
            limits,
            arena: String::new(),
            call_arena: String::new(),
            namespaces: None,
            has_println: false,
            indexed: 0,
            calls_end: Vec::new(),
            defs_end: Vec::new(),
            prints_end: Vec::new(),
            defs: Vec::new(),
            call_lines: VecDeque::new(),
            call_lines_from: 0,
            live: Vec::new(),
            folded: 0,
            user_section: String::new(),
            section_valid: true,
        }
    }

    /// A fresh cache for `session`, sized once for what its calls will keep (the
    /// indexes of all its turns, a window of call lines, its tools section) rather than
    /// grown call by call.
    pub fn sized_for(session: &Session, limits: Limits) -> Self {
        let mut cache = Self::new(limits);
        let turns = session.turns.len();
        for ends in [
            &mut cache.calls_end,
            &mut cache.defs_end,
            &mut cache.prints_end,
        ] {
            ends.reserve_exact(turns);
        }
        let defs: usize = session
            .turns
            .iter()
            .filter(|t| t.success)
            .map(|t| t.definitions.len())
            .sum();
        cache.defs.reserve_exact(defs);
        cache.live.reserve(defs.min(64));
        cache.user_section.reserve(defs.min(64) * 96);
        cache
            .call_lines
            .reserve(limits.tool_call_limit.min(256) + 8);
        // The tools section takes about its specs' text plus its layout, and the first
        // window of calls a few dozen bytes a line.
        let tools: usize = session
            .tools
            .iter()
            .map(|(name, spec)| {
                2 * name.len()
                    + spec.signature.as_ref().map_or(0, String::len)
                    + spec.description.as_ref().map_or(0, String::len)
                    + 32
            })
            .sum();
        cache.arena.reserve(tools + 1024);
        cache
            .call_arena
            .reserve(2 * limits.tool_call_limit.min(64) * 48);
        cache
    }

    /// `[SYSTEM, USER]` for `request`, equal to the reference renderer's messages.
    /// `request` must belong to the session this cache was obtained for (or the cache
    /// must be fresh).
    pub fn render(&mut self, request: &RenderRequest<'_>) -> Vec<Message> {
        let turns = request.turns;
        // The original ran its renderer only from the second call on; the first call is
        // the mission itself (SPEC 5: every strategy's zero-turn prompt).
        let Some(last) = turns.last() else {
            return vec![
                Message::system(request.system_prompt),
                Message::user(request.mission),
            ];
        };
        self.index(turns);
        let k = turns.len();
        let namespaces = self.namespaces(request);

        // Print what this call shows and is not cached yet, and add up the sizes, so
        // that the message is written into one buffer of the right size.
        self.fill_live(turns);
        let calls_to = self.calls_end[k - 1];
        let calls_from = calls_to.saturating_sub(self.limits.tool_call_limit);
        let calls_len = self.fill_calls(turns, calls_from, calls_to);
        let prints_to = self.prints_end[k - 1];
        let prints_from = prints_to.saturating_sub(self.limits.println_limit);
        let shown_prints = || {
            slots(&self.prints_end, prints_from, prints_to)
                .map(|(turn, index)| turns[turn].prints[index].as_str())
        };
        let prints_len: usize = if self.has_println {
            shown_prints().map(|p| 1 + p.len()).sum()
        } else {
            0
        };
        let error = (!last.success).then(|| {
            (
                last.program.as_str(),
                last.error_message().unwrap_or_default(),
            )
        });
        let turns_left = request.turns_left().saturating_sub(1);

        let capacity = request.mission.len()
            + 2
            + namespaces.len()
            + self.user_section.len()
            + CALLS_HEADER.len().max(NO_CALLS.len())
            + 2
            + calls_len
            + OUTPUT_HEADER.len()
            + 2
            + prints_len
            + error.map_or(0, |(program, message)| {
                ERROR_PARTS.iter().map(|p| p.len()).sum::<usize>() + program.len() + message.len()
            })
            + FINAL_WORK_TURN.len().max(TURNS_LEFT.len() + 20)
            + 2;
        let mut out = String::with_capacity(capacity);

        // Sections are joined by a blank line; only the mission may be empty (and is
        // then left out, as the original dropped empty sections).
        if !request.mission.is_empty() {
            out.push_str(request.mission);
            out.push_str("\n\n");
        }
        out.push_str(self.text(namespaces));
        out.push_str(&self.user_section);
        out.push_str("\n\n");
        if calls_to == 0 {
            out.push_str(NO_CALLS);
        } else {
            out.push_str(CALLS_HEADER);
            // Lines printed one after the other are copied as one slice.
            let mut run: Option<Span> = None;
            for &line in self.call_lines.range(..calls_to - calls_from) {
                match run {
                    Some(r) if r.end == line.start => run = Some(Span { end: line.end, ..r }),
                    _ => {
                        if let Some(r) = run {
                            out.push_str(&self.call_arena[r.start..r.end]);
                        }
                        run = Some(line);
                    }
                }
            }
            if let Some(r) = run {
                out.push_str(&self.call_arena[r.start..r.end]);
            }
        }
        if self.has_println {
            out.push_str("\n\n");
            out.push_str(OUTPUT_HEADER);
            for p in shown_prints() {
                out.push('\n');
                out.push_str(p);
            }
        }
        if let Some((program, message)) = error {
            out.push_str("\n\n");
            write_error_section(&mut out, program, message);
        }
        out.push_str("\n\n");
        write_turns_indicator(&mut out, u64::from(turns_left));
        vec![Message::system(request.system_prompt), Message::user(out)]
    }

    fn text(&self, span: Span) -> &str {
        &self.arena[span.start..span.end]
    }

    /// The tools and data sections, printed on the first call that needs them.
    fn namespaces(&mut self, request: &RenderRequest<'_>) -> Span {
        if let Some(span) = self.namespaces {
            return span;
        }
        let start = self.arena.len();
        namespace::write_tools(&mut self.arena, request.tools);
        if let Some(data) =
            namespace::render_data(request.data, &DataOptions::new(self.limits.samples))
        {
            self.arena.push_str("\n\n");
            self.arena.push_str(&data);
        }
        self.has_println = namespace::has_println_tool(request.tools);
        let span = Span {
            start,
            end: self.arena.len(),
        };
        self.namespaces = Some(span);
        span
    }

    /// Indexes the turns not indexed yet: all of them on the first call, the turns
    /// gained since on later ones. Texts are printed later, when shown.
    fn index(&mut self, turns: &[Turn]) {
        let Some(new) = turns.get(self.indexed..).filter(|new| !new.is_empty()) else {
            return;
        };
        for ends in [
            &mut self.calls_end,
            &mut self.defs_end,
            &mut self.prints_end,
        ] {
            ends.reserve(new.len());
        }
        let (defs, calls): (usize, usize) =
            new.iter().filter(|t| t.success).fold((0, 0), |(d, c), t| {
                (d + t.definitions.len(), c + t.tool_calls.len())
            });
        self.defs.reserve(defs);
        // Room for the lines these turns may add (a call's line is a few dozen bytes, a
        // definition's about a hundred), so the arenas rarely grow by copying. Only the
        // last `tool_call_limit` calls are printed by a single render.
        self.call_arena
            .reserve(calls.min(self.limits.tool_call_limit.saturating_mul(2)) * 48);
        self.arena.reserve(defs.min(64) * 96);
        let (mut calls, mut prints) = (
            self.calls_end.last().copied().unwrap_or(0),
            self.prints_end.last().copied().unwrap_or(0),
        );
        for (turn, t) in new.iter().enumerate().map(|(i, t)| (self.indexed + i, t)) {
            // Failed turns contribute no calls, definitions or prints.
            if t.success {
                calls += t.tool_calls.len();
                prints += t.prints.len();
                self.defs.extend(
                    t.definitions
                        .iter()
                        .enumerate()
                        .map(|(index, def)| DefSlot {
                            turn,
                            index,
                            name: NamePrefix::of(&def.name),
                            function: def.is_function(),
                            informative: namespace::informative(def.value.as_ref()),
                            line: None,
                        }),
                );
            }
            self.calls_end.push(calls);
            self.defs_end.push(self.defs.len());
            self.prints_end.push(prints);
        }
        self.indexed = turns.len();
    }

    /// Folds the definitions of the first `turns.len()` turns into the live set (from
    /// where the last call left off, or from the start for an earlier call) and, when
    /// the live set changed, prints the lines of the live definitions not printed yet
    /// and assembles `user_section` again (most turns define nothing, so most calls
    /// reuse the section as it is).
    fn fill_live(&mut self, turns: &[Turn]) {
        let target = self.defs_end[turns.len() - 1];
        if self.folded > target {
            // An earlier call than the last one: fold again from the start.
            self.live.clear();
            self.folded = 0;
            self.section_valid = false;
        }
        let defs = &self.defs;
        let name = |slot: usize| {
            let slot = &defs[slot];
            turns[slot.turn].definitions[slot.index].name.as_str()
        };
        for (slot, def) in defs.iter().enumerate().take(target).skip(self.folded) {
            // A redefinition replaces the entry (the latest value wins; names are
            // unique among the live definitions). Most definitions redefine a live
            // name: a scan for an equal key (the live set is a few dozen short entries
            // side by side) finds it without a search; a new name is inserted at its
            // place in name order.
            let key = def.name;
            let same = |&(p, l): &(NamePrefix, usize)| {
                p == key && (key.len <= NamePrefix::WHOLE || name(l) == name(slot))
            };
            match self.live.iter().position(same) {
                Some(pos) => self.live[pos].1 = slot,
                None => {
                    let pos = self.live.partition_point(|&(p, l)| {
                        p.order(key, || name(l).cmp(name(slot))).is_lt()
                    });
                    self.live.insert(pos, (key, slot));
                }
            }
            self.section_valid = false;
        }
        self.folded = target;
        if self.section_valid {
            return;
        }

        for &(_, at) in &self.live {
            let slot = &mut self.defs[at];
            if !slot.informative || slot.line.is_some() {
                continue;
            }
            let d = &turns[slot.turn].definitions[slot.index];
            let entry = MemoryEntry {
                name: &d.name,
                value: d.value.as_ref(),
                function: slot.function,
                docstring: d.docstring.as_deref(),
            };
            let start = self.arena.len();
            self.arena.push('\n');
            if slot.function {
                namespace::write_function_line(&mut self.arena, &entry);
            } else {
                namespace::write_value_line(
                    &mut self.arena,
                    &entry,
                    self.has_println,
                    self.limits.samples,
                );
            }
            slot.line = Some(Span {
                start,
                end: self.arena.len(),
            });
        }

        self.user_section.clear();
        let shown = |function: bool| {
            self.live
                .iter()
                .map(|&(_, at)| &self.defs[at])
                .filter(move |slot| slot.informative && slot.function == function)
                .filter_map(|slot| slot.line)
        };
        if shown(true).chain(shown(false)).next().is_some() {
            self.user_section.push_str("\n\n");
            self.user_section.push_str(USER_HEADER);
            // Functions first, then values, each group in name order.
            for line in shown(true).chain(shown(false)) {
                self.user_section
                    .push_str(&self.arena[line.start..line.end]);
            }
        }
        self.section_valid = true;
    }

    /// Makes `call_lines` start with the lines of the calls in slots `from..to`,
    /// printing those not printed yet; returns the length of those lines.
    fn fill_calls(&mut self, turns: &[Turn], from: usize, to: usize) -> usize {
        let cached_to = self.call_lines_from + self.call_lines.len();
        if from < self.call_lines_from || from > cached_to {
            // An earlier call, or a window past the cached one: print it afresh. No
            // span points into the arena any more.
            self.call_lines.clear();
            self.call_arena.clear();
        } else {
            // The window slid forward: drop the lines of the calls that left it.
            self.call_lines.drain(..from - self.call_lines_from);
            // Their text is never shown again (calls come in order): once it is most of
            // the arena, cut it off, so that a long session keeps about a window of
            // text rather than every call it made.
            let cut = self.call_lines.front().map_or(0, |first| first.start);
            if cut > CALL_ARENA_SLACK && cut > self.call_arena.len() / 2 {
                self.call_arena.drain(..cut);
                for line in &mut self.call_lines {
                    line.start -= cut;
                    line.end -= cut;
                }
            }
        }
        self.call_lines_from = from;
        let have = from + self.call_lines.len();
        if have < to {
            // The call before the first one to print, when its line is at hand.
            let mut previous = self
                .call_lines
                .back()
                .and_then(|&line| Some((slots(&self.calls_end, have - 1, have).next()?, line)));
            for (turn, index) in slots(&self.calls_end, have, to) {
                let call = &turns[turn].tool_calls[index];
                // Agents repeat calls (polling, retries): a call identical to the one
                // before it shares that call's line instead of printing it again.
                let repeated = previous.filter(|&((t, i), _)| {
                    let before = &turns[t].tool_calls[i];
                    before.name == call.name && before.args.is_identical(&call.args)
                });
                let line = match repeated {
                    Some((_, line)) => line,
                    None => {
                        let arena = &mut self.call_arena;
                        let start = arena.len();
                        write_call_line(arena, &call.name, &call.args);
                        Span {
                            start,
                            end: arena.len(),
                        }
                    }
                };
                self.call_lines.push_back(line);
                previous = Some(((turn, index), line));
            }
        }
        self.call_lines
            .range(..to - from)
            .map(|line| line.len())
            .sum()
    }
}

/// The `(turn, index within the turn)` of slots `from..to`, given per-turn running
/// totals `ends` (see [`RenderCache::calls_end`]); `to` must not exceed the last total.
fn slots(ends: &[usize], from: usize, to: usize) -> impl Iterator<Item = (usize, usize)> {
    // The first turn whose running total passes `from` holds slot `from`.
    let mut turn = ends.partition_point(|&end| end <= from);
    (from..to).map(move |slot| {
        while ends[turn] <= slot {
            turn += 1;
        }
        let first = turn.checked_sub(1).map_or(0, |before| ends[before]);
        (turn, slot - first)
    })
}

/// A name's sort key: its first 16 bytes, zero-padded, as a big-endian number, and its
/// length. Keys order names exactly when both are at most 16 bytes long (equal padded
/// bytes then mean equal names, or one a prefix of the other, the shorter first); for
/// longer names, equal heads leave the order to the names themselves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct NamePrefix {
    head: u128,
    len: usize,
}

impl NamePrefix {
    const WHOLE: usize = 16;

    fn of(name: &str) -> Self {
        let mut bytes = [0u8; Self::WHOLE];
        let head = &name.as_bytes()[..name.len().min(Self::WHOLE)];
        bytes[..head.len()].copy_from_slice(head);
        Self {
            head: u128::from_be_bytes(bytes),
            len: name.len(),
        }
    }

    /// The order of the names behind `self` and `other`; `names` compares them when
    /// the keys cannot tell.
    #[inline(always)]
    fn order(self, other: Self, names: impl FnOnce() -> Ordering) -> Ordering {
        self.head.cmp(&other.head).then_with(|| {
            if self.len <= Self::WHOLE && other.len <= Self::WHOLE {
                self.len.cmp(&other.len)
            } else {
                names()
            }
        })
    }
}

/// Bytes of call lines no longer shown that the call arena may keep before it is
/// compacted.
const CALL_ARENA_SLACK: usize = 1 << 12;

#[cfg(test)]
mod tests {
    use super::{Limits, NamePrefix, RenderCache};
    use proptest::prelude::*;
    use recap_core::memory::fold;
    use recap_core::{Definition, Turn, Value};
    use recap_gen::builder::TurnBuilder;
    use std::cmp::Ordering;

    /// Short names, one the prefix of another, and long ones that share their first 16
    /// bytes (the key scan then compares the names).
    const NAMES: [&str; 6] = [
        "a",
        "ab",
        "b",
        "a_long_name_past_16_bytes",
        "a_long_name_past_16_bytez",
        "zz",
    ];

    fn turns(spec: &[(bool, Vec<usize>)]) -> Vec<Turn> {
        spec.iter()
            .enumerate()
            .map(|(t, (success, names))| {
                let mut turn = match success {
                    true => TurnBuilder::ok("(def x 1)"),
                    false => TurnBuilder::failed("(def x 1)", "boom"),
                };
                for (i, &n) in names.iter().enumerate() {
                    turn = turn.def(NAMES[n], Value::Int((10 * t + i) as i64));
                }
                turn.build()
            })
            .collect()
    }

    /// The live set the cache folded, as definitions.
    fn live<'t>(cache: &RenderCache, turns: &'t [Turn]) -> Vec<&'t Definition> {
        cache
            .live
            .iter()
            .map(|&(_, at)| &turns[cache.defs[at].turn].definitions[cache.defs[at].index])
            .collect()
    }

    proptest! {
        /// The search in `fill_live` relies on it: keys order names exactly as the
        /// names compare, reading the names only when both keys cannot tell.
        #[test]
        fn keys_order_names_like_the_names(a in "[ab\\x00é-]{0,20}", b in "[ab\\x00é-]{0,20}") {
            let (ka, kb) = (NamePrefix::of(&a), NamePrefix::of(&b));
            prop_assert_eq!(ka.order(kb, || a.cmp(&b)), a.cmp(&b));
            let mut read = false;
            let _ = ka.order(kb, || { read = true; Ordering::Equal });
            prop_assert!(!read || a.len() > 16 || b.len() > 16);
        }

        /// The fast path folds memory its own way (a key scan, names kept sorted, a
        /// redefinition replaced in place) for speed; it must keep exactly the
        /// definitions of the one folding rule (`recap_core::memory::fold`), listed in
        /// name order as `user/` shows them: on calls in order and on an earlier call
        /// after them.
        #[test]
        fn live_set_is_the_memory_fold_in_name_order(
            spec in prop::collection::vec(
                (any::<bool>(), prop::collection::vec(0..NAMES.len(), 0..4)),
                1..10,
            ),
            earlier in 0usize..10,
        ) {
            let turns = turns(&spec);
            let mut cache = RenderCache::new(Limits::default());
            cache.index(&turns);
            for k in (1..=turns.len()).chain([1 + earlier % turns.len()]) {
                cache.fill_live(&turns[..k]);
                let mut want = fold(&turns[..k]);
                want.sort_by(|a, b| a.name.cmp(&b.name));
                prop_assert_eq!(live(&cache, &turns), want, "after {} turns", k);
            }
        }
    }
}
