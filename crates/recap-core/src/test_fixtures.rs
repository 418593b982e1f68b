//! Turns for the unit tests of this crate.

use crate::session::{Turn, TurnError};

/// Turn `number` running `(step number)`: a success, or a failure with error `boom`;
/// nothing printed, called or defined.
pub fn turn(number: u32, success: bool) -> Turn {
    Turn {
        number,
        program: format!("(step {number})"),
        raw_response: format!("```clojure\n(step {number})\n```"),
        success,
        error: (!success).then(|| TurnError {
            message: "boom".into(),
            reason: None,
        }),
        result: None,
        prints: vec![],
        tool_calls: vec![],
        definitions: vec![],
        feedback: None,
        usage: None,
    }
}
