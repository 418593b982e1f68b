//! recap's core: the value model and printer, sessions and corpora, the strategy
//! contract and registry. Everything here is pure and deterministic; I/O is limited to
//! reading corpora line by line.

pub mod chat;
pub mod corpus;
pub mod fields;
pub mod gz;
pub mod invariants;
pub mod json_type;
pub mod memory;
pub mod message;
pub mod printer;
pub mod registry;
pub mod rescue;
pub mod session;
pub mod strategy;
pub mod strict_json;
#[cfg(test)]
mod test_fixtures;
pub mod text;
pub mod tokens;
pub mod value;

pub use chat::{AssistantTurn, ChatToolCall, ChatTurn, Observation};
pub use corpus::{CorpusReader, Entry, RejectedSession};
pub use fields::FieldError;
pub use message::{Message, MessageToolCall, OpenAiMessage, Role, ToolCalls};
pub use printer::{PrintOptions, to_clojure, type_of, write_clojure, write_decimal, write_type_of};
pub use registry::{BuildContext, OptionInfo, Registry, SpecError, StrategyInfo, StrategySpec};
pub use session::{DefKind, Definition, Form, Session, ToolCall, ToolSpec, Turn, TurnError};
pub use strategy::{
    Answer, Invariant, PromptDelta, RenderError, RenderRequest, Replay, RequestError, Strategy,
    each_call, reference_first, render_call, turns_line,
};
pub use text::Text;
pub use tokens::{TokenCounter, prompt_tokens};
pub use value::{Closure, SpecialFloat, Value, ValueError};
