//! The provenance block of `recap run`'s report: this recap, the command line and
//! experiment file, and every plugin, corpus and vocabulary by hash.

use anyhow::Result;
use recap_harness::Tokenizer;
use recap_harness::report::provenance::{
    ConfigFile, PluginFailure, PluginFile, Provenance, corpus_files, file_sha256, vocabulary,
};
use recap_plugin_host::Plugin;
use std::path::PathBuf;
use std::sync::Arc;

/// The git commit this binary was built from (`unknown` outside a checkout).
pub const GIT_COMMIT: &str = env!("RECAP_GIT_COMMIT");

/// The experiment file as the report records it.
pub struct ConfigText {
    pub path: PathBuf,
    pub content: String,
}

pub fn collect(
    config: Option<&ConfigText>,
    plugins: &[Arc<Plugin>],
    failures: &[super::plugins::LoadFailure],
    corpora: &[PathBuf],
    tokenizers: &[Tokenizer],
) -> Result<Provenance> {
    let mut plugin_files = Vec::with_capacity(plugins.len());
    for p in plugins {
        let (sha256, _) = file_sha256(p.path())?;
        plugin_files.push(PluginFile {
            path: p.path().display().to_string(),
            name: p.name().to_string(),
            version: p.version().to_string(),
            sha256,
        });
    }
    Ok(Provenance {
        recap_version: env!("CARGO_PKG_VERSION").to_string(),
        git_commit: GIT_COMMIT.to_string(),
        command_line: std::env::args_os()
            .map(|a| a.to_string_lossy().into_owned())
            .collect(),
        config: config.map(|c| ConfigFile {
            path: c.path.display().to_string(),
            content: c.content.clone(),
        }),
        plugins: plugin_files,
        plugin_failures: failures
            .iter()
            .map(|f| PluginFailure {
                path: f.path.display().to_string(),
                error: f.error.clone(),
            })
            .collect(),
        corpora: corpus_files(corpora)?,
        tokenizers: tokenizers
            .iter()
            .map(|t| vocabulary(t.encoding()))
            .collect(),
        shards: Vec::new(),
    })
}
