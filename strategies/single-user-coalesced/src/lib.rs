//! The `single-user-coalesced` strategy (SPEC section 6).
