//! Finding, checking and loading plugin libraries, in scsynth's places and
//! order.

use crate::{ffi, print, table, Host, PluginCmd, UnitDef};
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::os::raw::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// The plugin interface version scsynth 3.10 to 3.13 speaks.
pub const API_VERSION: i32 = 3;

/// The libraries of scsynth's own plugin directory (Debian's
/// `supercollider-server`). They define only names magnetar computes
/// itself, so they are loaded only when [`Prefer`] hands names to plugins.
pub const CORE_LIBRARIES: &[&str] = &[
    "BinaryOpUGens", "ChaosUGens", "DelayUGens", "DemandUGens", "DemoUGens", "DiskIO_UGens", "DynNoiseUGens",
    "FFT_UGens", "FilterUGens", "GendynUGens", "GrainUGens", "IOUGens", "LFUGens", "ML_UGens", "MulAddUGens",
    "NoiseUGens", "OscUGens", "PV_ThirdParty", "PanUGens", "PhysicalModelingUGens", "ReverbUGens", "TestUGens",
    "TriggerUGens", "UIUGens", "UnaryOpUGens", "UnpackFFTUGens",
];

/// Unit names the engine itself keeps even when plugins are preferred for
/// every name: they read the synth's controls and local buses and buffers,
/// which belong to the engine.
const ENGINE_UNITS: &[&str] = &[
    "Control", "TrigControl", "LagControl", "AudioControl", "LocalIn", "LocalOut", "LocalBuf", "MaxLocalBufs",
];

/// Which names plugins take even where magnetar has a unit of its own.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Prefer {
    /// magnetar's units for every name it has (the default).
    #[default]
    Native,
    /// The plugins' unit for every name one defines (but the engine's own
    /// control and local units).
    All,
    /// The plugins' unit for these names.
    Names(Vec<String>),
}

impl Prefer {
    /// Parses `--prefer-plugins`' value: `all`, or names separated by commas.
    pub fn parse(v: &str) -> Prefer {
        if v == "all" {
            Prefer::All
        } else {
            Prefer::Names(v.split(',').filter(|s| !s.is_empty()).map(str::to_string).collect())
        }
    }

    pub fn takes(&self, name: &str) -> bool {
        match self {
            Prefer::Native => false,
            Prefer::All => !ENGINE_UNITS.contains(&name),
            Prefer::Names(names) => names.iter().any(|n| n == name),
        }
    }
}

#[derive(Clone, Debug, Default)]
pub struct Options {
    /// scsynth's `-U`: directories (or files) separated by `:`. When given,
    /// only these are searched, as scsynth does.
    pub ugen_plugins_path: Option<String>,
    pub prefer: Prefer,
    /// Load nothing (`--no-plugins`).
    pub disabled: bool,
}

/// What loading found.
#[derive(Clone, Debug, Default)]
pub struct LoadReport {
    /// Libraries whose `load` ran.
    pub libraries: usize,
    /// Unit names they defined.
    pub units: usize,
    /// One line per library refused, naming the file.
    pub refused: Vec<String>,
}

/// scsynth's places, in its order: the plugin directory next to the
/// server, the system-wide and the user's `Extensions` directories.
pub fn default_search_paths() -> Vec<PathBuf> {
    let mut paths = vec![
        PathBuf::from("/usr/lib/SuperCollider/plugins"),
        PathBuf::from("/usr/local/lib/SuperCollider/plugins"),
        PathBuf::from("/usr/share/SuperCollider/Extensions"),
    ];
    let data_home = std::env::var_os("XDG_DATA_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".local/share")));
    if let Some(d) = data_home {
        paths.push(d.join("SuperCollider/Extensions"));
    }
    paths
}

/// What plugins register while their `load` runs.
pub(crate) struct Loading {
    pub units: HashMap<&'static str, UnitDef>,
    pub commands: HashMap<String, PluginCmd>,
    pub buf_gens: HashMap<String, crate::ffi::BufGenFunc>,
    pub library: &'static str,
}

pub(crate) static LOADING: Mutex<Option<Loading>> = Mutex::new(None);

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// Every `.so` under `dir`, depth first in name order, as scsynth walks
/// its plugin directories (`.scx` too, scsynth's old extension).
fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    if dir.is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    // Names and kinds from the directory listing itself: a stat per entry
    // only for symbolic links (followed, as `Path::is_dir` does), and names
    // sorted as such rather than as whole paths (the same order, in one
    // directory). The extension folders hold help files by the hundred.
    let mut entries: Vec<(std::ffi::OsString, bool)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let is_dir = match e.file_type() {
                Ok(kind) if !kind.is_symlink() => kind.is_dir(),
                _ => e.path().is_dir(),
            };
            Some((e.file_name(), is_dir))
        })
        .collect();
    entries.sort_unstable();
    for (name, is_dir) in entries {
        let p = dir.join(name);
        if is_dir {
            collect(&p, out);
        } else if p.extension().is_some_and(|e| e == "so" || e == "scx") {
            out.push(p);
        }
    }
}

pub(crate) fn load_all(options: &Options) -> (Host, LoadReport) {
    let table = table::build();
    let mut report = LoadReport::default();
    *LOADING.lock().unwrap_or_else(|e| e.into_inner()) =
        Some(Loading { units: HashMap::new(), commands: HashMap::new(), buf_gens: HashMap::new(), library: "" });
    if !options.disabled {
        let dirs: Vec<PathBuf> = match &options.ugen_plugins_path {
            Some(p) => p.split(':').filter(|s| !s.is_empty()).map(PathBuf::from).collect(),
            None => default_search_paths(),
        };
        let mut files = Vec::new();
        for d in &dirs {
            collect(d, &mut files);
        }
        let want_core = options.prefer != Prefer::Native;
        for file in files {
            let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
            if stem.ends_with("_supernova") {
                // supernova's builds sit next to scsynth's; scsynth passes over them silently.
                continue;
            }
            if !want_core && CORE_LIBRARIES.contains(&stem) {
                continue;
            }
            match load_one(&file, table) {
                Ok(()) => report.libraries += 1,
                Err(why) => {
                    let line = format!("plugins: refused {}: {why}", file.display());
                    eprintln!("{line}");
                    report.refused.push(line);
                }
            }
        }
    }
    if report.libraries > 0 {
        // Units may print from the audio thread (see `print`).
        print::start();
    }
    let loading = LOADING.lock().unwrap_or_else(|e| e.into_inner()).take();
    let loading = loading.unwrap_or(Loading {
        units: HashMap::new(),
        commands: HashMap::new(),
        buf_gens: HashMap::new(),
        library: "",
    });
    report.units = loading.units.len();
    let host = Host {
        units: loading.units,
        commands: loading.commands,
        buf_gens: loading.buf_gens,
        prefer: options.prefer.clone(),
        table,
    };
    (host, report)
}

fn dl_error() -> String {
    // SAFETY: dlerror returns null or a NUL-terminated message valid until the next dl call.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        "unknown error".into()
    } else {
        // SAFETY: non-null, NUL-terminated (above).
        unsafe { CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}

fn symbol(handle: *mut c_void, name: &CStr) -> *mut c_void {
    // SAFETY: `handle` is a live handle from dlopen; `name` is NUL-terminated.
    unsafe { libc::dlsym(handle, name.as_ptr()) }
}

/// Why a library was not loaded as a plugin (printed after its path).
#[derive(Debug, thiserror::Error)]
enum LoadError {
    #[error("a NUL byte in the path")]
    NulInPath,
    /// The dynamic loader's own message.
    #[error("{0}")]
    Dlopen(String),
    #[error("no api_version function: not a plugin built for SuperCollider 3.10 or later")]
    NoApiVersion,
    #[error("API version {0}, magnetar speaks {API_VERSION}")]
    ApiVersion(c_int),
    #[error("a supernova build (server_type 1); magnetar loads scsynth builds")]
    Supernova,
    #[error("no load function")]
    NoLoad,
}

fn load_one(file: &Path, table: &'static ffi::InterfaceTable) -> Result<(), LoadError> {
    let path = CString::new(file.as_os_str().as_encoded_bytes()).map_err(|_| LoadError::NulInPath)?;
    // SAFETY: dlopen with a NUL-terminated path. Loading runs the
    // library's initialisers: that is what loading a plugin means, and
    // scsynth does the same.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW) };
    if handle.is_null() {
        return Err(LoadError::Dlopen(dl_error()));
    }
    let close = |why: LoadError| {
        // SAFETY: `handle` came from dlopen above and nothing of it is used after this.
        unsafe { libc::dlclose(handle) };
        Err(why)
    };
    let api = symbol(handle, c"api_version");
    if api.is_null() {
        return close(LoadError::NoApiVersion);
    }
    // SAFETY: `api_version` is declared by the plugin interface as `int api_version(void)`.
    let api: ffi::ApiVersionFunc = unsafe { std::mem::transmute::<*mut c_void, ffi::ApiVersionFunc>(api) };
    // SAFETY: calls the plugin's own function, which takes no arguments.
    let version = unsafe { api() };
    if version != API_VERSION {
        return close(LoadError::ApiVersion(version));
    }
    let server_type = symbol(handle, c"server_type");
    if !server_type.is_null() {
        // SAFETY: declared as `int server_type(void)` by the interface.
        let f: ffi::ApiVersionFunc = unsafe { std::mem::transmute::<*mut c_void, ffi::ApiVersionFunc>(server_type) };
        // SAFETY: as above.
        if unsafe { f() } == 1 {
            return close(LoadError::Supernova);
        }
    }
    let load = symbol(handle, c"load");
    if load.is_null() {
        return close(LoadError::NoLoad);
    }
    // SAFETY: declared as `void load(InterfaceTable*)` by the interface.
    let load: ffi::LoadFunc = unsafe { std::mem::transmute::<*mut c_void, ffi::LoadFunc>(load) };
    let name = leak(file.display().to_string());
    if let Some(l) = LOADING.lock().unwrap_or_else(|e| e.into_inner()).as_mut() {
        l.library = name;
    }
    let table_ptr = table as *const ffi::InterfaceTable as *mut ffi::InterfaceTable;
    // SAFETY: the table lives for the rest of the process and is filled;
    // plugins only read it. The shim catches a C++ exception from `load`.
    let threw = unsafe { ffi::mg_call_load(load, table_ptr) };
    if threw != 0 {
        // Units it defined before throwing stay: their code is loaded.
        eprintln!("plugins: {name}: load threw an exception");
    }
    // The library stays loaded for the life of the process, as in scsynth.
    LOADED.lock().unwrap_or_else(|e| e.into_inner()).push(handle as usize);
    Ok(())
}

/// Handles of the libraries whose `load` ran, in load order.
static LOADED: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// Calls each loaded library's `unload`, if it has one, in reverse load
/// order: libraries that start threads in `load` stop them there. For the
/// end of the process, after the last unit ran.
pub fn unload_all() {
    let handles = std::mem::take(&mut *LOADED.lock().unwrap_or_else(|e| e.into_inner()));
    for handle in handles.into_iter().rev() {
        let f = symbol(handle as *mut c_void, c"unload");
        if f.is_null() {
            continue;
        }
        // SAFETY: declared as `void unload(void)` by the interface; the shim
        // catches an exception.
        unsafe {
            let f: ffi::UnloadFunc = std::mem::transmute::<*mut c_void, ffi::UnloadFunc>(f);
            ffi::mg_call_unload(f);
        }
    }
}
