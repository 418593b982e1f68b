//! The `per-turn-summary` strategy (SPEC section 6).
