//! Real BPE tokenizers behind one small type.
//!
//! Two implementations of the same encodings: `tiktoken-rs` (the reference: OpenAI's
//! own core, vendored) and the `tiktoken` 4.x crate (a pure-Rust rewrite, ~10× faster).
//! The fast one is the default only because `tests/tokenizer_identity.rs` proves it
//! gives the same token ids as the reference on every prompt of every bench-data corpus
//! and on the texts of the shared real corpora. Both load their vocabulary once per
//! process (singletons) and are safe to share between threads.
//!
//! `deepseek_v3` (the DeepSeek-V3/V3.1/V3.2 vocabulary, used to check replay fidelity
//! against DeepSeek's recorded counts) exists only in the fast backend: `tiktoken-rs`
//! has no such vocabulary, so the identity test skips it and asking for its reference
//! backend is an error ([`Tokenizer::try_get`]).

use std::fmt;
use std::str::FromStr;

/// A token-counting scheme known to the harness.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Encoding {
    O200kBase,
    Cl100kBase,
    DeepseekV3,
}

impl Encoding {
    pub const ALL: [Encoding; 3] = [
        Encoding::O200kBase,
        Encoding::Cl100kBase,
        Encoding::DeepseekV3,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Encoding::O200kBase => "o200k_base",
            Encoding::Cl100kBase => "cl100k_base",
            Encoding::DeepseekV3 => "deepseek_v3",
        }
    }

    /// Whether counts of a text split at safe line starts add up to the count of the
    /// whole (argued in [`crate::segments`] for these pre-tokenizer patterns only).
    pub fn line_additive(self) -> bool {
        matches!(self, Encoding::O200kBase | Encoding::Cl100kBase)
    }

    /// Whether the reference backend (`tiktoken-rs`) has this vocabulary.
    pub fn has_reference(self) -> bool {
        reference(self).is_some()
    }
}

impl fmt::Display for Encoding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tokenizer {given:?}; expected one of: o200k_base, cl100k_base, deepseek_v3")]
pub struct UnknownEncoding {
    pub given: String,
}

impl FromStr for Encoding {
    type Err = UnknownEncoding;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Encoding::ALL
            .into_iter()
            .find(|e| e.name() == s)
            .ok_or_else(|| UnknownEncoding {
                given: s.to_string(),
            })
    }
}

/// Which implementation computes the tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub enum Backend {
    /// `tiktoken` 4.x: proven identical to the reference on our data, much faster.
    #[default]
    Fast,
    /// `tiktoken-rs`: the reference.
    Reference,
}

impl Backend {
    pub fn name(self) -> &'static str {
        match self {
            Backend::Fast => "fast",
            Backend::Reference => "reference",
        }
    }

    /// The crate behind the backend, for reports.
    pub fn implementation(self) -> &'static str {
        match self {
            Backend::Fast => "tiktoken 4.x",
            Backend::Reference => "tiktoken-rs 0.12",
        }
    }
}

impl fmt::Display for Backend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown tokenizer backend {given:?}; expected `fast` or `reference`")]
pub struct UnknownBackend {
    pub given: String,
}

impl FromStr for Backend {
    type Err = UnknownBackend;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "fast" => Ok(Backend::Fast),
            "reference" => Ok(Backend::Reference),
            _ => Err(UnknownBackend {
                given: s.to_string(),
            }),
        }
    }
}

enum Imp {
    Fast(&'static tiktoken::CoreBpe),
    Reference(&'static tiktoken_rs::CoreBPE),
}

/// One encoding through one backend. Cheap to copy; the vocabulary is a process-wide
/// singleton loaded on first use.
#[derive(Clone, Copy)]
pub struct Tokenizer {
    encoding: Encoding,
    backend: Backend,
    imp: &'static Imp,
}

impl fmt::Debug for Tokenizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tokenizer({}, {})", self.encoding, self.backend)
    }
}

fn fast(encoding: Encoding) -> &'static tiktoken::CoreBpe {
    // Both vocabularies are compiled in (workspace features), so the lookup cannot miss.
    tiktoken::get_encoding(encoding.name())
        .unwrap_or_else(|| unreachable!("tiktoken built without the {encoding} vocabulary"))
}

fn reference(encoding: Encoding) -> Option<&'static tiktoken_rs::CoreBPE> {
    match encoding {
        Encoding::O200kBase => Some(tiktoken_rs::o200k_base_singleton()),
        Encoding::Cl100kBase => Some(tiktoken_rs::cl100k_base_singleton()),
        Encoding::DeepseekV3 => None,
    }
}

/// The reference backend lacks the asked-for vocabulary.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "tokenizer {encoding} has no `reference` backend (tiktoken-rs lacks it); use the `fast` backend"
)]
pub struct NoReference {
    pub encoding: Encoding,
}

impl Tokenizer {
    /// The singleton for this encoding and backend (loads the vocabulary once).
    ///
    /// Panics for an encoding without a reference backend (`deepseek_v3`) asked for with
    /// [`Backend::Reference`]; callers taking the pair from user input use [`try_get`].
    ///
    /// [`try_get`]: Tokenizer::try_get
    pub fn get(encoding: Encoding, backend: Backend) -> Tokenizer {
        Tokenizer::try_get(encoding, backend).unwrap_or_else(|e| panic!("{e}"))
    }

    /// The singleton for this encoding and backend, or an error when the backend lacks
    /// the vocabulary.
    pub fn try_get(encoding: Encoding, backend: Backend) -> Result<Tokenizer, NoReference> {
        use std::sync::OnceLock;
        static SLOTS: [OnceLock<Imp>; Tokenizer::SLOTS] =
            [const { OnceLock::new() }; Tokenizer::SLOTS];
        let reference = match backend {
            Backend::Fast => None,
            Backend::Reference => Some(reference(encoding).ok_or(NoReference { encoding })?),
        };
        let imp = SLOTS[slot(encoding, backend)].get_or_init(|| match reference {
            None => Imp::Fast(fast(encoding)),
            Some(bpe) => Imp::Reference(bpe),
        });
        Ok(Tokenizer {
            encoding,
            backend,
            imp,
        })
    }

    /// How many (encoding, backend) pairs there are.
    pub(crate) const SLOTS: usize = 2 * Encoding::ALL.len();

    /// A distinct index below [`Tokenizer::SLOTS`] per (encoding, backend).
    pub(crate) fn slot(&self) -> usize {
        slot(self.encoding, self.backend)
    }

    pub fn encoding(&self) -> Encoding {
        self.encoding
    }

    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Number of tokens of `text`; special-token markers count as ordinary text.
    pub fn count_tokens(&self, text: &str) -> usize {
        match self.imp {
            Imp::Fast(bpe) => bpe.count(text),
            Imp::Reference(bpe) => bpe.encode_ordinary(text).len(),
        }
    }

    /// The token ids of `text` (special-token markers as ordinary text).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        match self.imp {
            Imp::Fast(bpe) => bpe.encode(text),
            Imp::Reference(bpe) => bpe.encode_ordinary(text),
        }
    }
}

fn slot(encoding: Encoding, backend: Backend) -> usize {
    2 * (encoding as usize) + usize::from(backend == Backend::Reference)
}

/// Fixed per-message overhead of the chat format: `<|start|>`, `<|message|>`, `<|end|>`
/// around the role and content (SPEC section 9).
pub const MESSAGE_OVERHEAD: usize = 3;
/// Reply priming (`<|start|>assistant<|message|>`) added once per prompt.
pub const PROMPT_OVERHEAD: usize = 3;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_is_clear() {
        for e in Encoding::ALL {
            assert_eq!(e.name().parse::<Encoding>().unwrap(), e);
        }
        let err = "gpt2".parse::<Encoding>().unwrap_err().to_string();
        assert!(err.contains("gpt2") && err.contains("o200k_base"), "{err}");
        assert!("fastest".parse::<Backend>().is_err());
        assert!(err.contains("deepseek_v3"), "{err}");
    }

    #[test]
    fn deepseek_v3_is_fast_only() {
        assert!(Encoding::O200kBase.has_reference() && Encoding::Cl100kBase.has_reference());
        assert!(!Encoding::DeepseekV3.has_reference());
        let err = Tokenizer::try_get(Encoding::DeepseekV3, Backend::Reference).unwrap_err();
        assert!(err.to_string().contains("deepseek_v3"), "{err}");
        let ds = Tokenizer::get(Encoding::DeepseekV3, Backend::Fast);
        // A different vocabulary: not o200k's ids for the same text.
        let o200k = Tokenizer::get(Encoding::O200kBase, Backend::Fast);
        assert_ne!(ds.encode("hello world"), o200k.encode("hello world"));
        assert_eq!(
            ds.count_tokens("hello world"),
            ds.encode("hello world").len()
        );
        assert_eq!(ds.count_tokens(""), 0);
    }

    #[test]
    fn known_counts() {
        // Reference values from OpenAI's tiktoken documentation.
        for backend in [Backend::Fast, Backend::Reference] {
            let t = Tokenizer::get(Encoding::Cl100kBase, backend);
            assert_eq!(t.encode("hello world"), vec![15339, 1917]);
            assert_eq!(t.count_tokens("hello world"), 2);
            assert_eq!(t.count_tokens(""), 0);
            let t = Tokenizer::get(Encoding::O200kBase, backend);
            assert_eq!(
                t.count_tokens("<|endoftext|>"),
                t.encode("<|endoftext|>").len()
            );
            assert!(
                t.count_tokens("<|endoftext|>") > 1,
                "special marker must be text"
            );
        }
    }
}
