//! The `full-history` strategy (SPEC section 6).
