//! Telling whether per-session state kept in a [`SessionState`](crate::SessionState)
//! still belongs to the session a strategy is asked to render.
//!
//! Strategies that render incrementally cache texts printed for a session's earlier
//! calls. The contract lets a caller reuse one state across calls of one session whose
//! turns only grow; a state handed over from another session (a caller's mistake, or a
//! reused state) must make the strategy start over, never yield a wrong prompt.

use crate::Session;

/// Which session a cache was filled from.
///
/// A session that only gains turns keeps its turn vector's address unless the vector
/// reallocates (a cache then starts over, which is merely slower). A different live
/// session, even one with the same id, has its turns, mission and system prompt at other
/// addresses; the lengths and counts guard against an empty vector or string, whose
/// dangling address every empty one shares. Comparing addresses and lengths costs a few
/// instructions per call, where comparing the texts would cost as much as rendering.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionIdentity {
    id: String,
    max_turns: u32,
    turns_addr: usize,
    chat_turns_addr: usize,
    mission_addr: usize,
    mission_len: usize,
    system_addr: usize,
    system_len: usize,
    tools: usize,
    data: usize,
}

impl SessionIdentity {
    pub fn of(session: &Session) -> Self {
        Self {
            id: session.id.clone(),
            max_turns: session.max_turns,
            turns_addr: session.turns.as_ptr().addr(),
            chat_turns_addr: session.chat_turns.as_ptr().addr(),
            mission_addr: session.mission.as_ptr().addr(),
            mission_len: session.mission.len(),
            system_addr: session.system_prompt.as_ptr().addr(),
            system_len: session.system_prompt.len(),
            tools: session.tools.len(),
            data: session.data.len(),
        }
    }

    /// Whether `session` is the one this identity was taken from (so that what was
    /// cached for its first turns is still valid). The cheap fields first, the id last.
    pub fn matches(&self, session: &Session) -> bool {
        self.turns_addr == session.turns.as_ptr().addr()
            && self.chat_turns_addr == session.chat_turns.as_ptr().addr()
            && self.mission_addr == session.mission.as_ptr().addr()
            && self.mission_len == session.mission.len()
            && self.system_addr == session.system_prompt.as_ptr().addr()
            && self.system_len == session.system_prompt.len()
            && self.max_turns == session.max_turns
            && self.tools == session.tools.len()
            && self.data == session.data.len()
            && self.id == session.id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn session(id: &str) -> Session {
        Session::from_json(&serde_json::json!({
            "id": id,
            "mission": "m",
            "system_prompt": "s",
            "turns": [{"number": 1, "program": "p", "success": true}]
        }))
        .expect("valid session")
    }

    #[test]
    fn the_same_session_matches_while_it_gains_turns() {
        let mut s = session("a");
        s.turns.reserve(4);
        let identity = SessionIdentity::of(&s);
        assert!(identity.matches(&s));
        let again = s.turns[0].clone();
        s.turns.push(again);
        assert!(
            identity.matches(&s),
            "turns added in place keep the identity"
        );
    }

    #[test]
    fn another_session_never_matches() {
        let a = session("a");
        let identity = SessionIdentity::of(&a);
        // Equal content, other allocations.
        assert!(!identity.matches(&a.clone()));
        assert!(!identity.matches(&session("a")));
        assert!(!identity.matches(&session("b")));
        let mut budget = a.clone();
        budget.max_turns += 1;
        assert!(!SessionIdentity::of(&a).matches(&budget));
    }
}
