//! The `rolling-window` strategy (SPEC section 6).
