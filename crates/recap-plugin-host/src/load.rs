//! Opening a library and turning it into a checked [`Plugin`], in this process or in
//! worker processes.

use crate::backend::{Backend, InProcess};
use crate::call;
use crate::descriptor;
use crate::error::{LoadError, Problem, chain};
use crate::isolated::{Isolated, IsolationConfig};
use crate::selftest::{self, SelfTestReport};
use libloading::Library;
use recap_abi::ffi::{ABI_MAJOR, DESCRIPTOR_SYMBOL, PROBE_SYMBOL, PluginDescriptorV1};
use recap_abi::wire;
use recap_core::{Form, Invariant, OptionInfo};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// Where a plugin's code runs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Isolation {
    /// Loaded into this process: the cheapest calls, but a plugin that aborts, crashes
    /// or exits takes the process with it.
    #[default]
    InProcess,
    /// In worker processes: a crash, an abort, an `exit` or running out of memory is
    /// an error of the call it happened in.
    Process(IsolationConfig),
}

/// A loaded, validated and self-tested plugin library.
#[derive(Debug)]
pub struct Plugin {
    path: PathBuf,
    name: String,
    version: String,
    abi_minor: u32,
    summary: String,
    options: Vec<OptionInfo>,
    invariants: Vec<Invariant>,
    unknown_invariants: Vec<String>,
    forms: Vec<Form>,
    unknown_forms: Vec<String>,
    self_test: SelfTestReport,
    pub(crate) backend: Backend,
}

impl Plugin {
    /// The library file (canonical path).
    pub fn path(&self) -> &Path {
        &self.path
    }
    /// The strategy name, as used in spec strings.
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn version(&self) -> &str {
        &self.version
    }
    /// `(major, minor)` of the ABI the plugin was built against.
    pub fn abi(&self) -> (u32, u32) {
        (ABI_MAJOR, self.abi_minor)
    }
    pub fn summary(&self) -> &str {
        &self.summary
    }
    /// The options it accepts (empty without `describe`).
    pub fn options(&self) -> &[OptionInfo] {
        &self.options
    }
    /// The invariants declared for the default options.
    pub fn invariants(&self) -> &[Invariant] {
        &self.invariants
    }
    /// Declared invariant ids this host does not know (from a newer ABI minor).
    pub fn unknown_invariants(&self) -> &[String] {
        &self.unknown_invariants
    }
    /// The session forms it renders with default options (`describe`'s `forms`;
    /// PTC-Lisp alone for a plugin without `describe` or built against ABI 1.0).
    pub fn forms(&self) -> &[Form] {
        &self.forms
    }
    /// Declared form names this host does not know (from a newer ABI minor).
    pub fn unknown_forms(&self) -> &[String] {
        &self.unknown_forms
    }
    /// Whether the plugin renders sessions incrementally (the `session_*` functions).
    pub fn has_sessions(&self) -> bool {
        self.backend.has_sessions()
    }
    pub fn has_describe(&self) -> bool {
        self.backend.has_describe()
    }
    /// Whether the plugin runs in worker processes.
    pub fn is_isolated(&self) -> bool {
        matches!(self.backend, Backend::Isolated(_))
    }
    pub fn self_test(&self) -> &SelfTestReport {
        &self.self_test
    }
}

/// `dlerror` is not thread-safe everywhere: one load at a time.
static LOADING: Mutex<()> = Mutex::new(());

/// Opens `path` in this process and accepts it as a plugin: probe, descriptor,
/// describe, self-test. Whatever happens, the library stays loaded for the life of the
/// process.
pub fn load(path: &Path) -> Result<Arc<Plugin>, LoadError> {
    load_with(path, &Isolation::InProcess)
}

/// The name, version and ABI minor a library's descriptor declares.
struct Identity {
    name: String,
    version: String,
    abi_minor: u32,
}

/// Accepts `path` as a plugin run as `isolation` says: the probe and descriptor checks
/// (in a worker process when isolated), then describe and the self-test.
pub fn load_with(path: &Path, isolation: &Isolation) -> Result<Arc<Plugin>, LoadError> {
    let fail = |problem| LoadError::new(path, problem);
    let meta = std::fs::metadata(path).map_err(|e| fail(Problem::Io(e)))?;
    if !meta.is_file() {
        return Err(fail(Problem::NotALibrary("not a regular file".into())));
    }
    // An absolute path keeps dlopen from searching the library path.
    let path = &std::fs::canonicalize(path).map_err(|e| fail(Problem::Io(e)))?;
    let fail = |problem| LoadError::new(path, problem);

    let (identity, backend) = match isolation {
        Isolation::InProcess => {
            let validated = open_validated(path).map_err(fail)?;
            let identity = Identity {
                name: validated.name,
                version: validated.version,
                abi_minor: validated.abi_minor,
            };
            (identity, Backend::InProcess(InProcess::new(validated.fns)))
        }
        Isolation::Process(config) => {
            let isolated = Isolated::start(path, config).map_err(fail)?;
            let info = &isolated.info;
            let identity = Identity {
                name: info.name.clone(),
                version: info.version.clone(),
                abi_minor: info.abi_minor,
            };
            (identity, Backend::Isolated(Arc::new(isolated)))
        }
    };
    let validated = identity;

    let description = backend
        .describe(wire::describe_request(&BTreeMap::new()))
        .map_err(|e| fail(Problem::Describe(e)))?;
    let mut summary = String::new();
    let mut options = Vec::new();
    let mut invariants = Invariant::UNIVERSAL.to_vec();
    let mut unknown_invariants = Vec::new();
    let mut forms = vec![Form::Ptc];
    let mut unknown_forms = Vec::new();
    if let Some(d) = description {
        if d.name != validated.name {
            return Err(fail(Problem::Describe(call::CallError::InvalidResponse {
                status: 0,
                reason: format!(
                    "describe names the strategy {:?} but the descriptor names it {:?}",
                    d.name, validated.name
                ),
            })));
        }
        summary = d.summary.clone();
        options = d.options.iter().map(OptionInfo::from).collect();
        (invariants, unknown_invariants) = split_invariants(&d.invariants);
        (forms, unknown_forms) = d.split_forms();
        if forms.is_empty() {
            return Err(fail(Problem::Describe(call::CallError::InvalidResponse {
                status: 0,
                reason: format!(
                    "describe declares no session form this recap renders (forms: {}; known: {})",
                    unknown_forms.join(", "),
                    Form::ALL.map(Form::as_str).join(", ")
                ),
            })));
        }
    }

    let self_test = selftest::run(&backend, &forms)
        .map_err(|(step, error)| fail(Problem::SelfTest { step, error }))?;

    Ok(Arc::new(Plugin {
        path: path.clone(),
        name: validated.name,
        version: validated.version,
        abi_minor: validated.abi_minor,
        summary,
        options,
        invariants,
        unknown_invariants,
        forms,
        unknown_forms,
        self_test,
        backend,
    }))
}

/// Opens a library in this process (never unloaded, even when rejected) and checks its
/// probe and descriptor. `path` is canonical.
pub(crate) fn open_validated(path: &Path) -> Result<descriptor::Validated, Problem> {
    let _guard = LOADING
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    let lib = open(path).map_err(|e| Problem::NotALibrary(chain(&e)))?;
    // Never unloaded, even when rejected below: plugin code, statics and the
    // descriptor are 'static from now on, and unloading a library whose
    // thread-locals were used is unsound.
    let lib: &'static Library = Box::leak(Box::new(lib));
    probe_and_validate(lib)
}

/// Declared invariants this host knows, and the ids of the others.
pub(crate) fn split_invariants(wire: &[wire::InvariantWire]) -> (Vec<Invariant>, Vec<String>) {
    let mut known = Vec::new();
    let mut unknown = Vec::new();
    for w in wire {
        match w.to_invariant() {
            Some(inv) => known.push(inv),
            None => unknown.push(w.id.clone()),
        }
    }
    (known, unknown)
}

#[cfg(unix)]
fn open(path: &Path) -> Result<Library, libloading::Error> {
    use libloading::os::unix;
    // SAFETY: loading runs the library's initialisers, which the host cannot check;
    // recap only loads files the user named, and documents that plugins are trusted
    // code. RTLD_NOW fails here on unresolved symbols instead of at a later call;
    // RTLD_LOCAL keeps plugins (which all export the same names) from interposing on
    // one another.
    unsafe { unix::Library::open(Some(path), unix::RTLD_NOW | unix::RTLD_LOCAL) }.map(Library::from)
}

#[cfg(not(unix))]
fn open(path: &Path) -> Result<Library, libloading::Error> {
    // SAFETY: as for the unix variant: initialisers of a user-named, trusted library.
    unsafe { Library::new(path) }
}

type ProbeFn = unsafe extern "C" fn() -> u32;
type EntryFn = unsafe extern "C" fn() -> *const PluginDescriptorV1;

fn probe_and_validate(lib: &'static Library) -> Result<descriptor::Validated, Problem> {
    let symbol_name = |s: &std::ffi::CStr| -> &'static str {
        if s == PROBE_SYMBOL {
            "recap_strategy_abi_version"
        } else {
            "recap_strategy_plugin_v1"
        }
    };
    let missing = |s: &std::ffi::CStr, e: libloading::Error| Problem::MissingSymbol {
        symbol: symbol_name(s),
        detail: chain(&e),
    };
    // The probe first, and nothing else until its answer is known.
    // SAFETY: the probe's C signature `uint32_t (void)` is frozen by the ABI; a library
    // exporting this name with another signature breaks the ABI contract.
    let probe: ProbeFn =
        *unsafe { lib.get::<ProbeFn>(PROBE_SYMBOL) }.map_err(|e| missing(PROBE_SYMBOL, e))?;
    // SAFETY: a frozen, argument-less function of a loaded library.
    let major = unsafe { probe() };
    if major != ABI_MAJOR {
        return Err(Problem::AbiVersion {
            plugin: major,
            host: ABI_MAJOR,
        });
    }
    // SAFETY: ABI 1 fixes the entry point's signature.
    let entry: EntryFn = *unsafe { lib.get::<EntryFn>(DESCRIPTOR_SYMBOL) }
        .map_err(|e| missing(DESCRIPTOR_SYMBOL, e))?;
    // SAFETY: an argument-less function of a library that said it speaks ABI 1.
    let descriptor = unsafe { entry() };
    // SAFETY: an ABI 1 plugin returns null or a pointer to a 'static descriptor of its
    // declared size, whose strings are 'static; the library is never unloaded.
    unsafe { descriptor::validate(descriptor) }
}
