//! `recap strategies`: every registered strategy with its options and defaults.

use anyhow::Result;
use recap_core::Registry;
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<ExitCode> {
    // Plugins (`--plugin`) register into this registry before listing.
    let registry: Registry = recap_builtins::registry();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    write_listing(&mut out, &registry)?;
    Ok(ExitCode::SUCCESS)
}

pub fn write_listing(out: &mut impl Write, registry: &Registry) -> std::io::Result<()> {
    for (i, info) in registry.infos().enumerate() {
        if i > 0 {
            writeln!(out)?;
        }
        writeln!(out, "{}  ({})", info.name, info.origin)?;
        writeln!(out, "    {}", info.summary)?;
        if info.options.is_empty() {
            writeln!(out, "    options: none")?;
        } else {
            let width = info
                .options
                .iter()
                .map(|o| o.key.len() + o.default.len() + 1)
                .max()
                .unwrap_or(0);
            for o in &info.options {
                let kv = format!("{}={}", o.key, o.default);
                writeln!(out, "    {kv:<width$}  {}", o.help)?;
            }
        }
    }
    writeln!(
        out,
        "\nSpec syntax: name or name:key=value,key=value (e.g. rolling-window:window=2); options default as shown."
    )?;
    Ok(())
}
