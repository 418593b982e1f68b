//! Size and SHA-256 of what passes through a writer or reader: a part's files are
//! summed as the shard writes them and checked as the merge reads them.

use sha2::{Digest, Sha256};
use std::cell::Cell;
use std::io::{self, BufRead, Read, Write};
use std::rc::Rc;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A writer that sums what it writes; its byte count can be read while another owner
/// (a CSV writer, say) holds it.
pub(crate) struct SummingWriter<W> {
    inner: W,
    hasher: Sha256,
    bytes: Rc<Cell<u64>>,
}

impl<W: Write> SummingWriter<W> {
    pub(crate) fn new(inner: W) -> Self {
        SummingWriter {
            inner,
            hasher: Sha256::new(),
            bytes: Rc::new(Cell::new(0)),
        }
    }

    /// The running byte count.
    pub(crate) fn counter(&self) -> Rc<Cell<u64>> {
        Rc::clone(&self.bytes)
    }

    /// Flushes; returns (bytes, SHA-256 hex).
    pub(crate) fn finish(mut self) -> io::Result<(u64, String)> {
        self.inner.flush()?;
        Ok((self.bytes.get(), hex(&self.hasher.finalize())))
    }
}

impl<W: Write> Write for SummingWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let n = self.inner.write(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes.set(self.bytes.get() + n as u64);
        Ok(n)
    }

    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
}

/// A buffered reader that sums what is consumed from it.
pub(crate) struct SummingReader<R> {
    inner: R,
    hasher: Sha256,
    bytes: u64,
}

impl<R: BufRead> SummingReader<R> {
    pub(crate) fn new(inner: R) -> Self {
        SummingReader {
            inner,
            hasher: Sha256::new(),
            bytes: 0,
        }
    }

    /// Whether nothing is left to read.
    pub(crate) fn at_end(&mut self) -> io::Result<bool> {
        Ok(self.inner.fill_buf()?.is_empty())
    }

    /// (bytes consumed, SHA-256 hex of them).
    pub(crate) fn sum(self) -> (u64, String) {
        (self.bytes, hex(&self.hasher.finalize()))
    }
}

impl<R: BufRead> Read for SummingReader<R> {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(out.len());
        out[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for SummingReader<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if let Ok(buf) = self.inner.fill_buf() {
            self.hasher.update(&buf[..n.min(buf.len())]);
        }
        self.bytes += n as u64;
        self.inner.consume(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_sides_agree_on_size_and_hash() {
        let mut w = SummingWriter::new(Vec::new());
        let counter = w.counter();
        w.write_all(b"abc\n").unwrap();
        assert_eq!(counter.get(), 4);
        w.write_all(b"def\n").unwrap();
        let (n, sum) = w.finish().unwrap();
        assert_eq!(n, 8);
        let mut r = SummingReader::new(io::BufReader::with_capacity(3, &b"abc\ndef\n"[..]));
        let mut line = String::new();
        r.read_line(&mut line).unwrap();
        let mut rest = Vec::new();
        r.read_to_end(&mut rest).unwrap();
        assert!(r.at_end().unwrap());
        assert_eq!(r.sum(), (8, sum));
    }
}
