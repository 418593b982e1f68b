//! `recap strategies`: every registered strategy with its options and defaults.

use anyhow::Result;
use recap_core::Registry;
use std::io::Write;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {}

pub fn run(_args: Args) -> Result<ExitCode> {
    // Plugins (`--plugin`) register into this registry before listing.
    let mut registry: Registry = recap_builtins::registry();
    // Building a default instance tells its forms; budgets need a tokenizer to build.
    registry.set_counter(std::sync::Arc::new(recap_harness::Tokenizer::get(
        recap_harness::Encoding::O200kBase,
        recap_harness::Backend::Fast,
    )));
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
        if let Ok(strategy) = registry.build(&info.name) {
            let forms: Vec<&str> = strategy.forms().iter().map(|f| f.as_str()).collect();
            writeln!(out, "    forms: {}", forms.join(", "))?;
        }
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
