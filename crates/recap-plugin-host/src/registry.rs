//! Finding plugin files, loading several, and registering them next to built-ins.

use crate::error::{LoadError, Problem};
use crate::load::{Isolation, Plugin, load_with};
use crate::strategy::PluginStrategy;
use recap_core::{Registry, SpecError, Strategy, StrategyInfo};
use std::collections::BTreeSet;
use std::env::consts::{DLL_PREFIX, DLL_SUFFIX};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// Whether a file name looks like a shared library of this platform
/// (`lib*.so`, `lib*.dylib`, `*.dll`).
pub fn is_plugin_file_name(name: &str) -> bool {
    name.len() > DLL_PREFIX.len() + DLL_SUFFIX.len()
        && name.starts_with(DLL_PREFIX)
        && name.ends_with(DLL_SUFFIX)
}

/// The plugin libraries in `dir`, sorted by file name; other files are ignored.
pub fn plugin_files_in(dir: &Path) -> Result<Vec<PathBuf>, LoadError> {
    let entries = std::fs::read_dir(dir).map_err(|e| LoadError::new(dir, Problem::Io(e)))?;
    let mut files = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| LoadError::new(dir, Problem::Io(e)))?;
        let path = entry.path();
        let is_candidate = path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(is_plugin_file_name);
        if is_candidate && path.is_file() {
            files.push(path);
        }
    }
    files.sort();
    Ok(files)
}

/// Loads each file once (the same file named twice, even through different paths, is
/// loaded once), in order. Returns the plugins that loaded and the errors of the rest.
pub fn load_all(files: &[PathBuf]) -> (Vec<Arc<Plugin>>, Vec<LoadError>) {
    load_all_with(files, &Isolation::InProcess)
}

/// [`load_all`], each plugin run as `isolation` says.
pub fn load_all_with(
    files: &[PathBuf],
    isolation: &Isolation,
) -> (Vec<Arc<Plugin>>, Vec<LoadError>) {
    load_all_each(files, |_| isolation)
}

/// [`load_all`], each plugin run as `isolation_of` says for its file (an experiment
/// file may isolate one library and not another).
pub fn load_all_each<'i>(
    files: &[PathBuf],
    isolation_of: impl Fn(&Path) -> &'i Isolation,
) -> (Vec<Arc<Plugin>>, Vec<LoadError>) {
    let mut seen = BTreeSet::new();
    let mut plugins = Vec::new();
    let mut errors = Vec::new();
    for file in files {
        if let Ok(canonical) = std::fs::canonicalize(file)
            && !seen.insert(canonical)
        {
            continue;
        }
        match load_with(file, isolation_of(file)) {
            Ok(p) => plugins.push(p),
            Err(e) => errors.push(e),
        }
    }
    (plugins, errors)
}

/// Registers the plugin's strategy in `registry` under its own name; options given in
/// a spec string are validated by the plugin's `describe` and forwarded on every call.
/// Instances built by a registry holding the run's tokenizer send the plugin token
/// counts with chat requests.
pub fn register(registry: &mut Registry, plugin: &Arc<Plugin>) -> Result<(), LoadError> {
    let info = StrategyInfo {
        name: plugin.name().to_string(),
        summary: if plugin.summary().is_empty() {
            format!("plugin {} {}", plugin.name(), plugin.version())
        } else {
            plugin.summary().to_string()
        },
        options: plugin.options().to_vec(),
        origin: plugin.path().display().to_string(),
    };
    let factory_plugin = Arc::clone(plugin);
    registry
        .register_with_context(info, move |spec, context| {
            PluginStrategy::new(Arc::clone(&factory_plugin), spec)
                .map(|s| Arc::new(s.counting_with(context.counter.clone())) as Arc<dyn Strategy>)
        })
        .map_err(|e| match e {
            SpecError::Duplicate { name, first, .. } => {
                LoadError::new(plugin.path(), Problem::Duplicate { name, other: first })
            }
            other => LoadError::new(plugin.path(), Problem::Descriptor(other.to_string())),
        })
}
