//! [`Text`]: the immutable, shared string of a rendered [`crate::Message`].
//!
//! A strategy that keeps most of the history returns most of the same messages at every
//! call, and `recap run` renders every call twice (the determinism check): with owned
//! `String`s each of those messages was allocated, copied and freed again at every call,
//! which was a third of a chat run's instructions. A `Text` is reference-counted, so a
//! kept message costs a counter increment, and two renders that share a message compare
//! equal by pointer before comparing bytes.
//!
//! The storage is an `Arc<str>`, which copies a `String` once when it becomes a `Text`.
//! Measured against the alternatives (`scripts/bench-instructions.sh --engine`): an
//! `Arc<String>` (no copy, but two allocations from a `&str` and a second pointer to
//! follow) and `bytes::Bytes` (no copy; an allocation at the first clone, a call through
//! a vtable at every drop) each cost the chat corpus 10–25 % more than `Arc<str>` and
//! saved the PTC-Lisp corpus, whose strategies build most of their prompt anew at every
//! call, at most 1.5 %.

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::borrow::{Borrow, Cow};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

/// An immutable string that is cheap to clone (a reference count). Reads as `&str`
/// (`Deref`); built from `String`, `&str` and the like with `.into()`. To change one,
/// build a new one: `msg.content = format!("{}…", msg.content).into()`.
#[derive(Clone, Eq, PartialOrd, Ord)]
pub struct Text(Arc<str>);

impl Text {
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether both are the same allocation: equal without comparing bytes.
    pub fn ptr_eq(a: &Text, b: &Text) -> bool {
        Arc::ptr_eq(&a.0, &b.0)
    }

    /// Whether another `Text` holds the same allocation (a session's turn, a
    /// strategy's cache): work keyed by [`Text::address`] can then be reused.
    pub fn is_shared(&self) -> bool {
        Arc::strong_count(&self.0) > 1
    }

    /// The allocation's address: a key for work on this text that stays valid while a
    /// clone of it is held (an address is reused only once every clone is gone).
    pub fn address(&self) -> usize {
        self.0.as_ptr() as usize
    }
}

impl Default for Text {
    fn default() -> Self {
        Text(Arc::from(""))
    }
}

impl Deref for Text {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        &self.0
    }
}

/// As the `str` it holds, so that a `Text`-keyed map is looked up with a `&str`.
impl Hash for Text {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl From<String> for Text {
    fn from(s: String) -> Self {
        Text(Arc::from(s))
    }
}

impl From<&String> for Text {
    fn from(s: &String) -> Self {
        Text(Arc::from(s.as_str()))
    }
}

impl From<&str> for Text {
    fn from(s: &str) -> Self {
        Text(Arc::from(s))
    }
}

impl From<Box<str>> for Text {
    fn from(s: Box<str>) -> Self {
        Text(Arc::from(s))
    }
}

impl From<Cow<'_, str>> for Text {
    fn from(s: Cow<'_, str>) -> Self {
        match s {
            Cow::Borrowed(s) => s.into(),
            Cow::Owned(s) => s.into(),
        }
    }
}

impl From<&Text> for Text {
    fn from(s: &Text) -> Self {
        s.clone()
    }
}

impl From<Text> for String {
    fn from(t: Text) -> Self {
        t.as_str().to_owned()
    }
}

/// Two renders that kept the same message hold the same bytes: equal without reading them.
impl PartialEq for Text {
    fn eq(&self, other: &Text) -> bool {
        Text::ptr_eq(self, other) || self.as_str() == other.as_str()
    }
}

impl PartialEq<str> for Text {
    fn eq(&self, other: &str) -> bool {
        self.as_str() == other
    }
}

impl PartialEq<&str> for Text {
    fn eq(&self, other: &&str) -> bool {
        self.as_str() == *other
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_str() == other.as_str()
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self == other.as_str()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        *self == other.as_str()
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Serialize for Text {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for Text {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl serde::de::Visitor<'_> for Visitor {
            type Value = Text;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text, E> {
                Ok(v.into())
            }
            fn visit_string<E: serde::de::Error>(self, v: String) -> Result<Text, E> {
                Ok(v.into())
            }
        }
        deserializer.deserialize_str(Visitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_compares_and_serializes_as_the_string_it_holds() {
        let t = Text::from("ab\"c");
        assert_eq!(t, "ab\"c");
        assert_eq!(t.len(), 4);
        assert_eq!(format!("{t}"), "ab\"c");
        assert_eq!(format!("{t:?}"), format!("{:?}", "ab\"c"));
        assert_eq!(serde_json::to_string(&t).unwrap(), r#""ab\"c""#);
        let back: Text = serde_json::from_str(r#""ab\"c""#).unwrap();
        assert_eq!(back, t);
        assert!(serde_json::from_str::<Text>("1").is_err());
        assert_eq!(Text::default(), "");
        assert_eq!(String::from(t.clone()), "ab\"c");
        assert_eq!(String::from(t), "ab\"c");
    }

    #[test]
    fn a_clone_is_the_same_allocation_and_equal_texts_need_not_be() {
        let a = Text::from(String::from("x"));
        let b = a.clone();
        assert!(Text::ptr_eq(&a, &b));
        let c = Text::from("x");
        assert!(!Text::ptr_eq(&a, &c));
        assert!(a.is_shared() && !c.is_shared());
        assert_eq!(a.address(), b.address());
        assert_ne!(a.address(), c.address());
        drop(b);
        assert!(!a.is_shared());
        assert_eq!(a, c);
        let (a, b) = (Text::from("a"), Text::from("b"));
        assert!(a < b);
    }

    #[test]
    fn hashes_as_the_str_it_holds() {
        use std::collections::HashSet;
        let set: HashSet<Text> = [Text::from("k")].into_iter().collect();
        assert!(set.contains("k"));
    }
}
