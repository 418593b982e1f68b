//! The last value a thread read, remembered by the exact bytes it read it from.
//!
//! `recap run` renders every call twice, through two independent plugin-side sessions
//! (its determinism check), and both sides of the boundary then read the same bytes
//! twice in a row on the same thread: the plugin the same request, the host the same
//! answer. The second read is a copy of the first. A read is a function of its bytes
//! (and the tag given with them), so this changes no value.

/// Inputs longer than this are read every time, never kept.
pub const REMEMBERED_BYTES: usize = 4 << 20;

/// One remembered read (kept in a thread-local by its user).
pub struct LastRead<V> {
    last: Option<(u64, Vec<u8>, V)>,
}

impl<V> Default for LastRead<V> {
    fn default() -> Self {
        Self::new()
    }
}

impl<V> LastRead<V> {
    pub const fn new() -> Self {
        LastRead { last: None }
    }
}

impl<V: Clone> LastRead<V> {
    /// `read(bytes)`: the value remembered for the same `tag` and bytes (handed over, so
    /// a third equal read reads again), else read now and, when it succeeds, remembered.
    pub fn read<E>(
        &mut self,
        tag: u64,
        bytes: &[u8],
        read: impl FnOnce(&[u8]) -> Result<V, E>,
    ) -> Result<V, E> {
        if let Some((t, b, value)) = self.last.take()
            && t == tag
            && b == bytes
        {
            return Ok(value);
        }
        let value = read(bytes)?;
        if bytes.len() <= REMEMBERED_BYTES {
            self.last = Some((tag, bytes.to_vec(), value.clone()));
        }
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_bytes_read_twice_in_a_row_are_read_once() {
        let mut last = LastRead::new();
        let reads = std::cell::Cell::new(0);
        let mut read = |tag, bytes: &[u8]| {
            last.read(tag, bytes, |b| {
                reads.set(reads.get() + 1);
                if b == b"bad" { Err("bad") } else { Ok(b.len()) }
            })
        };
        assert_eq!(read(0, b"abc"), Ok(3));
        assert_eq!(read(0, b"abc"), Ok(3));
        assert_eq!(reads.get(), 1, "read once");
        assert_eq!(read(1, b"abc"), Ok(3), "another tag reads again");
        assert_eq!(read(1, b"abcd"), Ok(4));
        assert_eq!(read(1, b"bad"), Err("bad"));
        assert_eq!(
            read(1, b"bad"),
            Err("bad"),
            "a failed read is not remembered"
        );
        assert_eq!(reads.get(), 5);
    }
}
