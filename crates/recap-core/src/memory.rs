//! Memory folding (SPEC section 4, DEF-001/002/009): the definitions of all successful
//! turns so far, applied in order; a redefinition replaces the entry and moves the name
//! to the end.

use crate::session::{Definition, Turn};

/// The live definitions before a call, in order of (latest) definition.
pub fn fold(turns: &[Turn]) -> Vec<&Definition> {
    let mut live = Vec::new();
    fold_into(&mut live, turns);
    live
}

/// [`fold`] into `live`, which is cleared first (a renderer that folds on every call
/// keeps one buffer).
pub fn fold_into<'a>(live: &mut Vec<&'a Definition>, turns: &'a [Turn]) {
    live.clear();
    for turn in turns.iter().filter(|t| t.success) {
        for def in &turn.definitions {
            define(live, def, |d| d.name == def.name);
        }
    }
}

/// Applies one definition to the live list: the entry that `same_name` picks (a
/// redefinition) is removed and `entry` goes to the end. The entries may be anything
/// that stands for a definition (the session caches keep slot numbers), so that every
/// incremental fold applies this one rule.
pub fn define<E>(live: &mut Vec<E>, entry: E, same_name: impl FnMut(&E) -> bool) {
    if let Some(pos) = live.iter().position(same_name) {
        live.remove(pos);
    }
    live.push(entry);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::session::DefKind;
    use crate::value::Value;

    fn def(name: &str, v: i64) -> Definition {
        Definition {
            name: name.into(),
            kind: DefKind::Def,
            docstring: None,
            value: Some(Value::Int(v)),
        }
    }

    /// Folding reads only a turn's success and its definitions.
    fn turn(number: u32, success: bool, definitions: Vec<Definition>) -> Turn {
        Turn {
            definitions,
            ..crate::test_fixtures::turn(number, success)
        }
    }

    #[test]
    fn def_002_redefinition_moves_to_end_and_latest_wins() {
        let turns = vec![
            turn(1, true, vec![def("a", 1), def("b", 2)]),
            turn(2, true, vec![def("a", 3)]),
        ];
        let live = fold(&turns);
        let names: Vec<_> = live.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, ["b", "a"]);
        assert_eq!(live[1].value, Some(Value::Int(3)));
    }

    #[test]
    fn def_001_redefinition_within_a_turn_keeps_final_value() {
        let turns = vec![turn(1, true, vec![def("x", 1), def("x", 2)])];
        let live = fold(&turns);
        assert_eq!(live.len(), 1);
        assert_eq!(live[0].value, Some(Value::Int(2)));
    }

    #[test]
    fn failed_turns_define_nothing() {
        let turns = vec![turn(1, false, vec![def("x", 1)])];
        assert!(fold(&turns).is_empty());
    }
}
