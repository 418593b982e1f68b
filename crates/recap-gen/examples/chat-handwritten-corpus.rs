//! Writes the hand-authored chat-form bench corpus (see `recap_gen::chat_handwritten`):
//!
//! ```text
//! cargo run -p recap-gen --example chat-handwritten-corpus > bench-data/chat-handwritten.jsonl
//! ```

fn main() -> anyhow::Result<()> {
    let sessions = recap_gen::chat_handwritten::sessions()?;
    let stdout = std::io::stdout();
    recap_gen::write_jsonl(&mut stdout.lock(), &sessions)?;
    Ok(())
}
