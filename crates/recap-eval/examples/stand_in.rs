//! Serves the stand-in model on 127.0.0.1 for measurements by hand:
//! `cargo run -p recap-eval --features stand-in --example stand_in -- [SECONDS]`
//! prints the base URL, then serves for SECONDS (default 600) and stops by itself.

fn main() -> std::io::Result<()> {
    let seconds: u64 = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    let server = recap_eval::standin::StandIn::start(recap_eval::standin::Config::default())?;
    println!("{}", server.url());
    std::thread::sleep(std::time::Duration::from_secs(seconds));
    println!("answered {} requests", server.answered());
    Ok(())
}
