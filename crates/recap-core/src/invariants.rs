//! The invariant checker (SPEC section 7). Being implemented (issue 3).

use crate::message::Message;
use crate::session::Session;
use crate::strategy::Invariant;

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
    /// The render of call k-1, for append-only.
    pub previous: Option<&'a [Message]>,
    /// A second render of the same call, for determinism.
    pub second_render: Option<&'a [Message]>,
}

/// Returns the declared invariants this render breaks.
pub fn check(declared: &[Invariant], ctx: &CheckContext<'_>) -> Vec<Violation> {
    let _ = (declared, ctx);
    todo!("invariant checker: being implemented")
}
