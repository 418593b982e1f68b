//! Writes the hand-authored bench corpus (see `recap_gen::handwritten`):
//!
//! ```text
//! cargo run -p recap-gen --example handwritten-corpus > bench-data/handwritten.jsonl
//! ```

fn main() -> anyhow::Result<()> {
    let sessions = recap_gen::handwritten::sessions()?;
    let stdout = std::io::stdout();
    recap_gen::write_jsonl(&mut stdout.lock(), &sessions)?;
    Ok(())
}
