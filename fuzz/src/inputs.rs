//! Structure-aware inputs: `arbitrary` drives builders of values and of valid sessions,
//! so the fuzzer spends its time inside the printer and the strategies instead of in
//! the JSON parser.
//!
//! Texts and names are drawn mostly from small vocabularies of awkward strings (empty,
//! line breaks, `;`, `#{`, the turns line itself, fences) so that redefinitions, merged
//! tool calls and docstring cleaning happen often; any string is still possible.

use arbitrary::Arbitrary;
use recap_core::session::{
    DefKind, Definition, Form, Session, ToolCall, ToolSpec, Turn, TurnError, fenced_program,
};
use recap_core::value::{Closure, SpecialFloat, Value};
use std::collections::BTreeMap;

const TEXTS: &[&str] = &[
    "",
    " ",
    "x",
    "\n",
    "\r\n",
    "a\rb",
    "line one\nline two",
    ";",
    "doc; with; semicolons",
    "#{",
    "\"quoted\"",
    "\\",
    "\u{0}",
    "\u{7f}\u{85}",
    "é🎉",
    "⚠️",
    "Turns left: 2",
    "⚠️ FINAL TURN - you must call (return result) or (fail response) next.",
    "```clojure\n(def x 1)\n```",
    "---",
    "; Tool calls:",
    "Error: boom",
];

const NAMES: &[&str] = &[
    "x",
    "y",
    "data",
    "_hidden",
    "in-stock?",
    "a;b",
    "",
    "search",
    "$kw",
];

/// A string that is usually awkward and sometimes anything.
#[derive(Debug, Clone)]
pub struct Text(pub String);

impl<'a> Arbitrary<'a> for Text {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Text(match u.int_in_range(0u8..=3)? {
            0 => String::arbitrary(u)?,
            1 => (*u.choose(TEXTS)?).to_string(),
            2 => {
                let n = u.int_in_range(0usize..=3)?;
                let mut s = String::new();
                for _ in 0..n {
                    s.push_str(u.choose(TEXTS)?);
                }
                s
            }
            _ => {
                // A long string, to cross the printer's cuts (80, 2000 chars).
                let unit = u.choose(TEXTS)?;
                let times = u.int_in_range(0usize..=2100)?;
                unit.repeat(times)
            }
        }))
    }
}

/// A name from a small set, so that names collide.
#[derive(Debug, Clone)]
pub struct Name(pub String);

impl<'a> Arbitrary<'a> for Name {
    fn arbitrary(u: &mut arbitrary::Unstructured<'a>) -> arbitrary::Result<Self> {
        Ok(Name(if u.ratio(1u8, 8u8)? {
            String::arbitrary(u)?
        } else {
            (*u.choose(NAMES)?).to_string()
        }))
    }
}

/// Mirrors [`Value`]; every variant reachable.
#[derive(Debug, Clone, Arbitrary)]
pub enum ArbValue {
    Nil,
    Bool(bool),
    Int(i64),
    SmallInt(i8),
    /// Integers near 2^53, where i64 and f64 disagree.
    NearF64Limit(i8),
    Float(f64),
    Str(Text),
    Keyword(Name),
    List(Vec<ArbValue>),
    Set(Vec<ArbValue>),
    Map(Vec<(ArbValue, ArbValue)>),
    KeywordMap(Vec<(Name, ArbValue)>),
    Fn {
        params: Vec<Option<Name>>,
        rest: Option<Name>,
        docstring: Option<Text>,
        return_type: Option<Text>,
    },
    Special(u8),
    Var(Name),
    Tuple(Vec<ArbValue>),
    Date(u16, u8, u8),
    Builtin,
}

impl ArbValue {
    pub fn build(&self) -> Value {
        let items = |v: &[ArbValue]| v.iter().map(ArbValue::build).collect();
        match self {
            ArbValue::Nil => Value::Nil,
            ArbValue::Bool(b) => Value::Bool(*b),
            ArbValue::Int(i) => Value::Int(*i),
            ArbValue::SmallInt(i) => Value::Int(i64::from(*i)),
            ArbValue::NearF64Limit(d) => {
                let base = 1i64 << 53;
                if d % 2 == 0 {
                    Value::Int(base + i64::from(*d / 4))
                } else {
                    Value::Float((base + i64::from(*d / 4)) as f64)
                }
            }
            ArbValue::Float(f) => Value::Float(*f),
            ArbValue::Str(t) => Value::Str(t.0.clone()),
            ArbValue::Keyword(n) => Value::Keyword(n.0.clone()),
            ArbValue::List(v) => Value::List(items(v)),
            ArbValue::Set(v) => Value::Set(items(v)),
            ArbValue::Tuple(v) => Value::Tuple(items(v)),
            ArbValue::Map(entries) => Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| (k.build(), v.build()))
                    .collect(),
            ),
            ArbValue::KeywordMap(entries) => Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| (Value::Keyword(k.0.clone()), v.build()))
                    .collect(),
            ),
            ArbValue::Fn {
                params,
                rest,
                docstring,
                return_type,
            } => Value::Fn(Closure {
                params: params
                    .iter()
                    .map(|p| p.as_ref().map(|n| n.0.clone()))
                    .collect(),
                rest: rest.as_ref().map(|n| n.0.clone()),
                docstring: docstring.as_ref().map(|t| t.0.clone()),
                return_type: return_type.as_ref().map(|t| t.0.clone()),
            }),
            ArbValue::Special(n) => Value::Special(match n % 3 {
                0 => SpecialFloat::Infinity,
                1 => SpecialFloat::NegativeInfinity,
                _ => SpecialFloat::NaN,
            }),
            ArbValue::Var(n) => Value::Var(n.0.clone()),
            ArbValue::Date(y, m, d) => {
                Value::Date(format!("{:04}-{:02}-{:02}", y % 10000, m % 100, d % 100))
            }
            ArbValue::Builtin => Value::Builtin,
        }
    }
}

#[derive(Debug, Clone, Arbitrary)]
pub struct ToolCallPlan {
    pub name: Name,
    pub args: ArbValue,
    pub result: Option<ArbValue>,
}

#[derive(Debug, Clone, Arbitrary)]
pub struct DefinitionPlan {
    pub name: Name,
    pub defn: bool,
    pub docstring: Option<Text>,
    pub value: Option<ArbValue>,
}

#[derive(Debug, Clone, Arbitrary)]
pub struct TurnPlan {
    pub program: Text,
    pub raw_response: Option<Text>,
    pub success: bool,
    pub error_message: Text,
    pub error_reason: Option<Text>,
    pub result: Option<ArbValue>,
    pub prints: Vec<Text>,
    /// Repeats the previous call this many extra times (TC-008 merging).
    pub tool_calls: Vec<(ToolCallPlan, u8)>,
    pub definitions: Vec<DefinitionPlan>,
    pub feedback: Option<Text>,
}

/// A plan for one valid session (SPEC section 4).
#[derive(Debug, Clone, Arbitrary)]
pub struct SessionPlan {
    pub system_prompt: Text,
    pub mission: Text,
    pub max_turns: u8,
    pub tools: Vec<(Name, Option<Text>, Option<Text>)>,
    pub data: Vec<(Name, ArbValue)>,
    pub turns: Vec<TurnPlan>,
}

impl SessionPlan {
    /// The session this plan describes, made valid: a non-empty mission, `max_turns`
    /// in 1..=12, at most `max_turns` turns numbered from 1, an error on failed turns.
    pub fn build(&self) -> Session {
        let mut mission = self.mission.0.clone();
        if mission.trim().is_empty() {
            mission.insert_str(0, "Do the thing");
        }
        let max_turns = u32::from(self.max_turns % 12) + 1;
        let turns = self
            .turns
            .iter()
            .take(max_turns as usize)
            .enumerate()
            .map(|(i, t)| t.build(i as u32 + 1))
            .collect();
        Session {
            id: "fuzz".into(),
            mission,
            system_prompt: self.system_prompt.0.clone(),
            max_turns,
            tools: self
                .tools
                .iter()
                .map(|(n, sig, desc)| {
                    (
                        n.0.clone(),
                        ToolSpec {
                            signature: sig.as_ref().map(|t| t.0.clone()),
                            description: desc.as_ref().map(|t| t.0.clone()),
                            parameters: None,
                        },
                    )
                })
                .collect::<BTreeMap<_, _>>(),
            data: self
                .data
                .iter()
                .map(|(n, v)| (n.0.clone(), v.build()))
                .collect(),
            meta: serde_json::Map::new(),
            turns,
            budget_recorded: true,
            form: Form::Ptc,
            chat_turns: Vec::new(),
        }
    }
}

impl TurnPlan {
    fn build(&self, number: u32) -> Turn {
        let program = self.program.0.clone();
        let mut tool_calls = Vec::new();
        for (plan, repeat) in &self.tool_calls {
            let call = ToolCall {
                name: plan.name.0.clone(),
                args: plan.args.build(),
                result: plan.result.as_ref().map(ArbValue::build),
            };
            for _ in 0..=(repeat % 4) {
                tool_calls.push(call.clone());
            }
        }
        Turn {
            number,
            raw_response: self
                .raw_response
                .as_ref()
                .map_or_else(|| fenced_program(&program), |t| t.0.clone()),
            program,
            success: self.success,
            error: (!self.success).then(|| TurnError {
                message: self.error_message.0.clone(),
                reason: self.error_reason.as_ref().map(|t| t.0.clone()),
            }),
            result: self.result.as_ref().map(ArbValue::build),
            prints: self.prints.iter().map(|t| t.0.clone()).collect(),
            tool_calls,
            definitions: self
                .definitions
                .iter()
                .map(|d| Definition {
                    name: d.name.0.clone(),
                    kind: if d.defn { DefKind::Defn } else { DefKind::Def },
                    docstring: d.docstring.as_ref().map(|t| t.0.clone()),
                    value: d.value.as_ref().map(ArbValue::build),
                })
                .collect(),
            feedback: self.feedback.as_ref().map(|t| t.0.clone()),
            usage: None,
        }
    }
}
