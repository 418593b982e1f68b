//! gzip-compressed corpora: `recap run`, `recap validate` and the other corpus readers
//! read `corpus.jsonl.gz` as they read `corpus.jsonl`. The file's first bytes decide
//! (the gzip magic number), not its name, so a renamed file still reads.

use flate2::read::MultiGzDecoder;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// An opened corpus file: plain, or gzip (decompressed while read; a cut or corrupt
/// archive is a read error where the damage starts).
pub enum CorpusFile {
    Plain(FileBytes),
    Gzip(Box<MultiGzDecoder<BufReader<FileBytes>>>),
}

/// The file as stored, with the bytes read from it counted when asked: progress over a
/// gzip corpus is then measured in the compressed bytes its size is given in.
pub struct FileBytes {
    file: File,
    read: Option<Arc<AtomicU64>>,
}

impl Read for FileBytes {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.file.read(buf)?;
        if let Some(read) = &self.read {
            read.fetch_add(n as u64, Ordering::Relaxed);
        }
        Ok(n)
    }
}

impl CorpusFile {
    /// Wraps an opened file, looking at its first two bytes.
    pub fn new(file: File) -> io::Result<CorpusFile> {
        Self::counted(file, None)
    }

    /// [`CorpusFile::new`], adding the bytes read from the file as stored (compressed,
    /// for gzip) to `read` when given.
    pub fn counted(mut file: File, read: Option<Arc<AtomicU64>>) -> io::Result<CorpusFile> {
        let mut magic = [0u8; 2];
        let mut got = 0;
        while got < magic.len() {
            match file.read(&mut magic[got..])? {
                0 => break,
                n => got += n,
            }
        }
        file.seek(SeekFrom::Start(0))?;
        let file = FileBytes { file, read };
        Ok(if got == 2 && magic == [0x1f, 0x8b] {
            CorpusFile::Gzip(Box::new(MultiGzDecoder::new(BufReader::new(file))))
        } else {
            CorpusFile::Plain(file)
        })
    }

    pub fn is_gzip(&self) -> bool {
        matches!(self, CorpusFile::Gzip(_))
    }
}

impl Read for CorpusFile {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            CorpusFile::Plain(f) => f.read(buf),
            CorpusFile::Gzip(gz) => gz.read(buf),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gzip(text: &str) -> Vec<u8> {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(text.as_bytes()).unwrap();
        gz.finish().unwrap()
    }

    fn read(bytes: &[u8]) -> (bool, io::Result<String>) {
        let dir =
            std::env::temp_dir().join(format!("recap-gz-{}-{}", std::process::id(), bytes.len()));
        std::fs::write(&dir, bytes).unwrap();
        let mut f = CorpusFile::new(File::open(&dir).unwrap()).unwrap();
        let mut text = String::new();
        let r = f.read_to_string(&mut text).map(|_| text);
        let _ = std::fs::remove_file(&dir);
        (f.is_gzip(), r)
    }

    #[test]
    fn bytes_are_counted_as_stored() {
        let text = "{\"id\": \"a\"}\n".repeat(1000);
        let compressed = gzip(&text);
        assert!(compressed.len() < text.len() / 10);
        for bytes in [compressed.clone(), text.clone().into_bytes()] {
            let path = std::env::temp_dir().join(format!(
                "recap-gz-count-{}-{}",
                std::process::id(),
                bytes.len()
            ));
            std::fs::write(&path, &bytes).unwrap();
            let read = Arc::new(AtomicU64::new(0));
            let mut f =
                CorpusFile::counted(File::open(&path).unwrap(), Some(Arc::clone(&read))).unwrap();
            let mut out = String::new();
            f.read_to_string(&mut out).unwrap();
            let _ = std::fs::remove_file(&path);
            assert_eq!(out, text);
            // The two magic bytes are read twice (sniffed, then from the start again)
            // but counted once: the sniff is not counted.
            assert_eq!(read.load(Ordering::Relaxed), bytes.len() as u64);
        }
    }

    #[test]
    fn gzip_is_recognised_by_its_bytes_and_plain_text_passes_through() {
        let (gz, text) = read(&gzip("{\"id\": \"a\"}\n"));
        assert!(gz);
        assert_eq!(text.unwrap(), "{\"id\": \"a\"}\n");
        let (gz, text) = read(b"{\"id\": \"b\"}\n");
        assert!(!gz);
        assert_eq!(text.unwrap(), "{\"id\": \"b\"}\n");
        let (gz, text) = read(b"{");
        assert!(!gz);
        assert_eq!(text.unwrap(), "{");
    }

    #[test]
    fn a_cut_archive_is_a_read_error() {
        let bytes = gzip(&"{\"id\": \"a\"}\n".repeat(100));
        let (_, text) = read(&bytes[..bytes.len() / 2]);
        assert!(text.is_err());
    }
}
