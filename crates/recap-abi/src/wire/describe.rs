//! `describe`: the options schema and, for the options given, the instance's canonical
//! spec, declared invariants and (since ABI 1.1) the session forms it renders.

use super::put_json;
use recap_core::{Form, Invariant, OptionInfo};
use serde::{Deserialize, Serialize};

/// An option a strategy accepts, in `describe`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OptionWire {
    pub key: String,
    #[serde(default)]
    pub default: String,
    #[serde(default)]
    pub help: String,
}

impl From<&OptionInfo> for OptionWire {
    fn from(o: &OptionInfo) -> Self {
        Self {
            key: o.key.clone(),
            default: o.default.clone(),
            help: o.help.clone(),
        }
    }
}

impl From<&OptionWire> for OptionInfo {
    fn from(o: &OptionWire) -> Self {
        Self {
            key: o.key.clone(),
            default: o.default.clone(),
            help: o.help.clone(),
        }
    }
}

/// A declared invariant: `{"id": "limits", "tool_call_limit": 20, "println_limit": 15}`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InvariantWire {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_limit: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub println_limit: Option<u32>,
}

impl From<&Invariant> for InvariantWire {
    fn from(inv: &Invariant) -> Self {
        let (tool_call_limit, println_limit) = match inv {
            Invariant::Limits {
                tool_call_limit,
                println_limit,
            } => (Some(*tool_call_limit), Some(*println_limit)),
            _ => (None, None),
        };
        Self {
            id: inv.id().to_string(),
            tool_call_limit,
            println_limit,
        }
    }
}

impl InvariantWire {
    /// The invariant, or `None` for an id this host does not know (a newer plugin) or
    /// `limits` without both limits.
    pub fn to_invariant(&self) -> Option<Invariant> {
        Some(match self.id.as_str() {
            "system-first" => Invariant::SystemFirst,
            "mission-verbatim" => Invariant::MissionVerbatim,
            "mission-leads-first-user" => Invariant::MissionLeadsFirstUser,
            "role-alternation" => Invariant::RoleAlternation,
            "failed-turns-verbatim" => Invariant::FailedTurnsVerbatim,
            "turns-line" => Invariant::TurnsLine,
            "deterministic" => Invariant::Deterministic,
            "append-only" => Invariant::AppendOnly,
            "tool-pairing" => Invariant::ToolPairing,
            "limits" => Invariant::Limits {
                tool_call_limit: self.tool_call_limit?,
                println_limit: self.println_limit?,
            },
            _ => return None,
        })
    }
}

/// The form named on the wire (`"ptc"`, `"chat"`), or `None` for a name this side does
/// not know (a newer peer).
pub fn form_named(name: &str) -> Option<Form> {
    Form::ALL.into_iter().find(|f| f.as_str() == name)
}

/// What `describe` returns: the options schema and, for the options given, the
/// instance's canonical spec, declared invariants and forms.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Description {
    pub name: String,
    #[serde(default)]
    pub version: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub spec: Option<String>,
    #[serde(default)]
    pub options: Vec<OptionWire>,
    #[serde(default)]
    pub invariants: Vec<InvariantWire>,
    /// The session forms the instance renders (ABI 1.1). Absent — every 1.0 plugin —
    /// means `["ptc"]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forms: Option<Vec<String>>,
}

impl Description {
    /// The declared forms this side knows, and the names of the others. Absent means
    /// the PTC-Lisp form alone.
    pub fn split_forms(&self) -> (Vec<Form>, Vec<String>) {
        let Some(names) = &self.forms else {
            return (vec![Form::Ptc], Vec::new());
        };
        let mut known = Vec::new();
        let mut unknown = Vec::new();
        for name in names {
            match form_named(name) {
                Some(f) if !known.contains(&f) => known.push(f),
                Some(_) => {}
                None => unknown.push(name.clone()),
            }
        }
        (known, unknown)
    }
}

pub fn description_response(description: &Description) -> Vec<u8> {
    let mut out = Vec::with_capacity(256);
    put_json(&mut out, description);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn invariants_round_trip_and_unknown_ids_are_none() {
        for inv in [
            Invariant::SystemFirst,
            Invariant::MissionVerbatim,
            Invariant::MissionLeadsFirstUser,
            Invariant::RoleAlternation,
            Invariant::FailedTurnsVerbatim,
            Invariant::TurnsLine,
            Invariant::Deterministic,
            Invariant::AppendOnly,
            Invariant::ToolPairing,
            Invariant::Limits {
                tool_call_limit: 2,
                println_limit: 3,
            },
        ] {
            assert_eq!(InvariantWire::from(&inv).to_invariant(), Some(inv));
        }
        let future = InvariantWire {
            id: "no-secrets".into(),
            tool_call_limit: None,
            println_limit: None,
        };
        assert_eq!(future.to_invariant(), None);
    }

    #[test]
    fn forms_absent_mean_ptc_and_unknown_names_are_kept_apart() {
        let d: Description = serde_json::from_str(r#"{"name":"x"}"#).unwrap();
        assert_eq!(d.split_forms(), (vec![Form::Ptc], vec![]));
        let d: Description =
            serde_json::from_str(r#"{"name":"x","forms":["chat","video","ptc","chat"]}"#).unwrap();
        assert_eq!(
            d.split_forms(),
            (vec![Form::Chat, Form::Ptc], vec!["video".to_string()])
        );
        // A 1.1 description without forms is written without the field.
        let text =
            String::from_utf8(description_response(&Description { forms: None, ..d })).unwrap();
        assert!(!text.contains("forms"), "{text}");
    }
}
