//! The JACK driver: a JACK client laid out like scsynth's (client
//! `SuperCollider`, ports `in_N` / `out_N`) whose process callback runs the
//! audio work.

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Once};

use jack::jack_sys;

use super::dll::TimeDll;
use super::io::{PeriodTimes, SliceTables};
use super::rt::{flush_denormals, monotonic_ns};
use super::stats::{DriverStats, LoadMeter};
use super::{validate, Backend, DriverConfig, DriverError, Process, RunningDriver};

/// The name scsynth prefixes its JACK messages with.
const IDENT: &str = "JackDriver";

/// JACK's type string for audio ports; connections only make sense between these.
const AUDIO_TYPE: &str = "32 bit float mono audio";

/// Environment variables naming the ports to connect (scsynth's).
pub const ENV_DEFAULT_INPUTS: &str = "SC_JACK_DEFAULT_INPUTS";
pub const ENV_DEFAULT_OUTPUTS: &str = "SC_JACK_DEFAULT_OUTPUTS";

/// What an unset variable means: sclang sets both to "system" before booting,
/// so a server started by any client gets the same wiring.
const DEFAULT_CONNECT_PATTERN: &str = "system";

/// Keeps JACK's thread cancellation out of our notification callbacks.
///
/// JACK stops its threads with `pthread_cancel` and runs them with
/// *asynchronous* cancellation: deactivating kills the process thread, closing
/// kills the notification thread, and the cancellation may strike at any
/// instruction. If it strikes inside our code, the unwind meets Rust frames
/// that cannot unwind and glibc aborts the whole process ("FATAL: exception
/// not rethrown"); a notification (a graph reorder caused by our own ports
/// disconnecting) is often still running when closing kills its thread.
///
/// While a callback runs, the guard switches the thread to deferred
/// cancellation and holds cancellation off; on the way out it enables it again,
/// which under the deferred type never acts on the spot. A request that arrived
/// meanwhile then takes effect at the thread's next cancellation point, its
/// socket read inside libjack, where unwinding is safe. Once the client is
/// closing the thread stays deferred; otherwise the guard restores the old
/// type (the process thread, which runs the buffer-size callback once at
/// start, waits on a futex that is no cancellation point and needs it).
/// Each switch updates a flag in the thread's descriptor: no system call.
struct NoCancel<'a> {
    old_state: libc::c_int,
    old_type: libc::c_int,
    closing: &'a AtomicBool,
}

// Not exported by the `libc` crate; the values are glibc's and musl's.
extern "C" {
    fn pthread_setcancelstate(state: libc::c_int, oldstate: *mut libc::c_int) -> libc::c_int;
    fn pthread_setcanceltype(kind: libc::c_int, oldtype: *mut libc::c_int) -> libc::c_int;
}
const PTHREAD_CANCEL_DISABLE: libc::c_int = 1;
const PTHREAD_CANCEL_DEFERRED: libc::c_int = 0;

impl<'a> NoCancel<'a> {
    fn hold(closing: &'a AtomicBool) -> Self {
        let (mut old_state, mut old_type) = (0, 0);
        // SAFETY: both calls change only the calling thread's own cancellation
        // settings and write through valid out-pointers. Disabling first means
        // no request can act between the two.
        unsafe {
            pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &mut old_state);
            pthread_setcanceltype(PTHREAD_CANCEL_DEFERRED, &mut old_type);
        }
        NoCancel { old_state, old_type, closing }
    }
}

impl Drop for NoCancel<'_> {
    fn drop(&mut self) {
        let mut ignored = 0;
        // SAFETY: as in `hold`, on the same thread. Enabling under the deferred
        // type never cancels here; the type goes back only while nobody can
        // have asked for a cancellation (we close only after `closing` is set).
        unsafe {
            pthread_setcancelstate(self.old_state, &mut ignored);
            if self.old_type != PTHREAD_CANCEL_DEFERRED && !self.closing.load(Ordering::Acquire) {
                pthread_setcanceltype(self.old_type, &mut ignored);
            }
        }
    }
}

/// State shared between the process callback, the notification thread and the
/// controlling thread.
struct Shared {
    period_frames: Arc<AtomicUsize>,
    sample_rate: AtomicU64,
    output_latency_ns: AtomicU64,
    shut_down: AtomicBool,
    /// Set off the audio thread to make it restart its period clock.
    dll_reset: AtomicBool,
    /// Set before deactivating: callbacks from here on do no work.
    closing: AtomicBool,
}

pub(crate) struct JackHandle {
    client: jack::AsyncClient<Notifications, JackProcess>,
    name: String,
    shared: Arc<Shared>,
}

impl JackHandle {
    pub(crate) fn client_name(&self) -> &str {
        &self.name
    }

    pub(crate) fn is_shut_down(&self) -> bool {
        self.shared.shut_down.load(Ordering::Acquire)
    }

    /// Deactivates (JACK waits for a running callback to return) and closes.
    pub(crate) fn stop(self) {
        self.shared.closing.store(true, Ordering::Release);
        if let Err(e) = self.client.deactivate() {
            if !self.shared.shut_down.load(Ordering::Acquire) {
                eprintln!("{IDENT}: couldn't deactivate the client: {e}");
            }
        }
    }
}

/// Starts the JACK driver. Returns [`DriverError::NoServer`] at once when no
/// server runs (it never starts one).
pub fn start_jack(cfg: &DriverConfig, p: Box<dyn Process>) -> Result<RunningDriver, DriverError> {
    try_start_jack(cfg, p).map_err(|(e, _)| e)
}

/// Like [`start_jack`], but hands the process back when the failure happened
/// before JACK took it, so the caller can try another driver.
pub(crate) fn try_start_jack(
    cfg: &DriverConfig,
    p: Box<dyn Process>,
) -> Result<RunningDriver, (DriverError, Option<Box<dyn Process>>)> {
    let (client, server) = match open_for(cfg) {
        Ok(c) => c,
        Err(e) => return Err((e, Some(p))),
    };
    let name = client.name().to_string();
    let server_label = server.as_deref().unwrap_or("default");
    println!("{IDENT}: client name is '{name}'");

    let sample_rate = client.sample_rate() as f64;
    let period = client.buffer_size() as usize;
    if let Some(sr) = cfg.sample_rate {
        if sr != sample_rate {
            eprintln!(
                "{IDENT}: sample rate {sr} requested, but JACK server '{server_label}' runs at {sample_rate}; using {sample_rate}"
            );
        }
    }
    if cfg.hardware_buffer_size != 0 && cfg.hardware_buffer_size != period {
        eprintln!(
            "{IDENT}: hardware buffer size {} requested, but JACK's period is {period}; using {period}",
            cfg.hardware_buffer_size
        );
    }
    if !period.is_multiple_of(cfg.block_size) {
        return Err((DriverError::PeriodNotMultipleOfBlock { period, block: cfg.block_size }, Some(p)));
    }

    let ports = match register_ports(&client, cfg.num_inputs, cfg.num_outputs) {
        Ok(ports) => ports,
        Err(e) => return Err((e, Some(p))),
    };
    let (ins, outs) = ports;
    let in_names: Vec<String> = ins.iter().filter_map(|p| p.name().ok()).collect();
    let out_names: Vec<String> = outs.iter().filter_map(|p| p.name().ok()).collect();

    let stats = Arc::new(DriverStats::default());
    let shared = Arc::new(Shared {
        period_frames: Arc::new(AtomicUsize::new(period)),
        sample_rate: AtomicU64::new(sample_rate.to_bits()),
        output_latency_ns: AtomicU64::new(0),
        shut_down: AtomicBool::new(false),
        dll_reset: AtomicBool::new(false),
        closing: AtomicBool::new(false),
    });
    let handler = JackProcess {
        tables: SliceTables::new(ins.len(), outs.len()),
        process: p,
        ins,
        outs,
        stats: Arc::clone(&stats),
        meter: LoadMeter::new(sample_rate, period),
        block_size: cfg.block_size,
        shared: Arc::clone(&shared),
        thread_ready: false,
        dll: TimeDll::default(),
        dll_running: false,
    };
    let notifications = Notifications {
        stats: Arc::clone(&stats),
        shared: Arc::clone(&shared),
        out_names: out_names.clone(),
        reported_latency_ns: 0,
    };
    let active = match client.activate_async(notifications, handler) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("{IDENT}: couldn't activate jack client");
            return Err((DriverError::Jack(format!("couldn't activate the client: {e}")), None));
        }
    };

    let env = |key: &str| std::env::var(key).ok();
    connect_defaults(active.as_client(), env(ENV_DEFAULT_INPUTS).as_deref(), &in_names, Direction::IntoUs);
    connect_defaults(active.as_client(), env(ENV_DEFAULT_OUTPUTS).as_deref(), &out_names, Direction::FromUs);

    Ok(RunningDriver {
        sample_rate,
        period_frames: Arc::clone(&shared.period_frames),
        stats,
        name: "jack",
        backend: Backend::Jack(JackHandle { client: active, name, shared }),
    })
}

/// Splits `-H` as scsynth does: `server:client`, `client`, or `server:` for the
/// default client name. Returns (server, client).
pub(crate) fn parse_device_name(device: Option<&str>, default_client: &str) -> (Option<String>, String) {
    let device = device.unwrap_or("");
    if device.is_empty() {
        return (None, default_client.to_string());
    }
    let mut tokens = device.split(':');
    let first = tokens.next().unwrap_or("");
    match tokens.next() {
        None => (None, first.to_string()),
        Some(client) => {
            let server = (!first.is_empty()).then(|| first.to_string());
            let client = if client.is_empty() { default_client.to_string() } else { client.to_string() };
            (server, client)
        }
    }
}

fn open_for(cfg: &DriverConfig) -> Result<(jack::Client, Option<String>), DriverError> {
    validate(cfg)?;
    let (server, client_name) = parse_device_name(cfg.device_name.as_deref(), &cfg.client_name);
    let client = open_client(server.as_deref(), &client_name)?;
    Ok((client, server))
}

/// Opens a client on the named (or default) server without ever starting one.
pub(crate) fn open_client(server: Option<&str>, name: &str) -> Result<jack::Client, DriverError> {
    let lib = jack_sys::library().map_err(|e| DriverError::NoLibrary(e.to_string()))?;
    static LOGGING: Once = Once::new();
    // libjack's own messages ("cannot connect to server socket", ...) go to the
    // `log` facade; the driver prints its own, scsynth-like lines.
    LOGGING.call_once(|| jack::set_logger(jack::LoggerType::default()));

    let c_name = CString::new(name).map_err(|_| DriverError::Config("client name contains a NUL byte".into()))?;
    let c_server = match server {
        Some(s) => Some(CString::new(s).map_err(|_| DriverError::Config("server name contains a NUL byte".into()))?),
        None => None,
    };
    // The jack crate's opener cannot pass a server name (a C variadic argument),
    // so call libjack's jack_client_open directly.
    type OpenFn = unsafe extern "C" fn(
        *const libc::c_char,
        jack_sys::jack_options_t,
        *mut jack_sys::jack_status_t,
        ...
    ) -> *mut jack_sys::jack_client_t;
    // SAFETY: the symbol is libjack's jack_client_open, whose C signature is
    // (const char*, jack_options_t, jack_status_t*, ...) -> jack_client_t*.
    let open = unsafe { lib.get::<OpenFn>(b"jack_client_open\0") }
        .map_err(|e| DriverError::NoLibrary(e.to_string()))?;
    let mut status: jack_sys::jack_status_t = 0;
    let raw = match &c_server {
        // SAFETY: valid NUL-terminated strings and status pointer; with
        // JackServerName the variadic argument is the server name as a C string.
        Some(s) => unsafe {
            (*open)(
                c_name.as_ptr(),
                jack_sys::JackNoStartServer | jack_sys::JackServerName,
                &mut status,
                s.as_ptr(),
            )
        },
        // SAFETY: valid NUL-terminated string and status pointer; no variadic
        // argument is read without JackServerName.
        None => unsafe { (*open)(c_name.as_ptr(), jack_sys::JackNoStartServer, &mut status) },
    };
    if raw.is_null() {
        if status & jack_sys::JackServerFailed != 0 || status == jack_sys::JackFailure {
            return Err(DriverError::NoServer);
        }
        return Err(DriverError::Jack(format!("couldn't open a client (status {status:#x})")));
    }
    // SAFETY: `raw` is a freshly opened client that nothing else owns; the
    // Client wrapper closes it when dropped.
    Ok(unsafe { jack::Client::from_raw(raw) })
}

type PortLists = (Vec<jack::Port<jack::AudioIn>>, Vec<jack::Port<jack::AudioOut>>);

fn register_ports(client: &jack::Client, num_inputs: usize, num_outputs: usize) -> Result<PortLists, DriverError> {
    let fail = |name: &str, e: jack::Error| DriverError::Jack(format!("couldn't register port {name}: {e}"));
    let mut ins = Vec::with_capacity(num_inputs);
    for i in 1..=num_inputs {
        let name = format!("in_{i}");
        ins.push(client.register_port(&name, jack::AudioIn::default()).map_err(|e| fail(&name, e))?);
    }
    let mut outs = Vec::with_capacity(num_outputs);
    for i in 1..=num_outputs {
        let name = format!("out_{i}");
        outs.push(client.register_port(&name, jack::AudioOut::default()).map_err(|e| fail(&name, e))?);
    }
    Ok((ins, outs))
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Direction {
    /// Other clients' output ports feed our inputs.
    IntoUs,
    /// Our outputs feed other clients' input ports.
    FromUs,
}

/// Which (source, destination) pairs an `SC_JACK_DEFAULT_*` value asks for,
/// interpreted as scsynth does: one token without ':' is a port-name pattern
/// whose matches are connected in order; otherwise each comma-separated token is
/// a port name connected to our port of the same position. `None` (unset) means
/// "system"; an empty value connects nothing.
pub(crate) fn connection_plan(
    value: Option<&str>,
    ours: &[String],
    direction: Direction,
    matching_ports: impl FnOnce(&str) -> Vec<String>,
) -> Vec<(String, String)> {
    let value = value.unwrap_or(DEFAULT_CONNECT_PATTERN);
    if value.is_empty() || ours.is_empty() {
        return Vec::new();
    }
    let tokens: Vec<&str> = value.split(',').collect();
    let theirs: Vec<String> = if tokens.len() == 1 && !tokens[0].contains(':') {
        matching_ports(tokens[0])
    } else {
        tokens.iter().map(|t| t.to_string()).collect()
    };
    theirs
        .into_iter()
        .zip(ours)
        .map(|(their, our)| match direction {
            Direction::IntoUs => (their, our.clone()),
            Direction::FromUs => (our.clone(), their),
        })
        .collect()
}

fn connect_defaults(client: &jack::Client, value: Option<&str>, ours: &[String], direction: Direction) {
    let flags = match direction {
        Direction::IntoUs => jack::PortFlags::IS_OUTPUT,
        Direction::FromUs => jack::PortFlags::IS_INPUT,
    };
    let plan = connection_plan(value, ours, direction, |pattern| client.ports(Some(pattern), Some(AUDIO_TYPE), flags));
    for (src, dst) in plan {
        match client.connect_ports_by_name(&src, &dst) {
            Ok(()) => println!("{IDENT}: connected {src} to {dst}"),
            Err(_) => println!("{IDENT}: couldn't connect {src} to {dst}"),
        }
    }
}

/// The process callback's state; everything is allocated before activation.
struct JackProcess {
    process: Box<dyn Process>,
    ins: Vec<jack::Port<jack::AudioIn>>,
    outs: Vec<jack::Port<jack::AudioOut>>,
    tables: SliceTables,
    stats: Arc<DriverStats>,
    meter: LoadMeter,
    block_size: usize,
    shared: Arc<Shared>,
    thread_ready: bool,
    dll: TimeDll,
    dll_running: bool,
}

impl jack::ProcessHandler for JackProcess {
    fn process(&mut self, _: &jack::Client, ps: &jack::ProcessScope) -> jack::Control {
        // JACK cancels this thread once deactivation has let a cycle pass
        // without us; keep whatever cycles still come then short and silent.
        if self.shared.closing.load(Ordering::Relaxed) {
            for port in &mut self.outs {
                port.as_mut_slice(ps).fill(0.0);
            }
            return jack::Control::Continue;
        }
        if !self.thread_ready {
            flush_denormals();
            self.thread_ready = true;
        }
        let woke = monotonic_ns();
        let nframes = ps.n_frames() as usize;
        // Restart the period clock on the first cycle, after xruns and period changes.
        if self.shared.dll_reset.swap(false, Ordering::Relaxed) || !self.dll_running {
            let sr = f64::from_bits(self.shared.sample_rate.load(Ordering::Relaxed));
            self.dll.reset(sr, nframes, woke as f64);
            self.dll_running = true;
        }
        self.dll.update(woke as f64);
        let start_ns = self.dll.period_start_ns().max(0.0) as u64;
        let next_ns = self.dll.next_period_ns().max(0.0) as u64;
        if !nframes.is_multiple_of(self.block_size) {
            // Only reachable after a buffer-size change the engine cannot follow.
            for port in &mut self.outs {
                port.as_mut_slice(ps).fill(0.0);
            }
            return jack::Control::Continue;
        }
        let times = PeriodTimes {
            start_ns,
            next_ns,
            output_latency_ns: self.shared.output_latency_ns.load(Ordering::Relaxed),
        };
        // SAFETY: JACK guarantees every registered port's buffer holds `nframes`
        // samples during this callback; output buffers are distinct and owned by
        // this client, and no other reference to them is alive here.
        unsafe {
            self.tables.run(
                &mut *self.process,
                self.ins.iter().map(|p| p.as_slice(ps).as_ptr()),
                self.outs.iter_mut().map(|p| p.as_mut_slice(ps).as_mut_ptr()),
                nframes,
                times,
            );
        }
        let end = monotonic_ns();
        let period_ns = next_ns.saturating_sub(start_ns);
        // A backend may wake us after the predicted next cycle (wake-up jitter);
        // the work is late only if it also used more than a period itself.
        let late = end > next_ns.max(woke + period_ns);
        self.meter.record(&self.stats, end.saturating_sub(woke), period_ns, late);
        jack::Control::Continue
    }

    fn buffer_size(&mut self, _: &jack::Client, size: jack::Frames) -> jack::Control {
        let _hold = NoCancel::hold(&self.shared.closing);
        let size = size as usize;
        self.shared.period_frames.store(size, Ordering::Relaxed);
        self.shared.dll_reset.store(true, Ordering::Relaxed);
        let sr = f64::from_bits(self.shared.sample_rate.load(Ordering::Relaxed));
        self.meter.reset_rate(sr, size);
        if !size.is_multiple_of(self.block_size) {
            eprintln!(
                "{IDENT}: JACK's period of {size} frames is not a multiple of the block size {}; output is silent",
                self.block_size
            );
        }
        jack::Control::Continue
    }
}

/// JACK's non-real-time notifications.
struct Notifications {
    stats: Arc<DriverStats>,
    shared: Arc<Shared>,
    out_names: Vec<String>,
    reported_latency_ns: u64,
}

impl jack::NotificationHandler for Notifications {
    unsafe fn shutdown(&mut self, _status: jack::ClientStatus, reason: &str) {
        let _hold = NoCancel::hold(&self.shared.closing);
        self.shared.shut_down.store(true, Ordering::Release);
        eprintln!("{IDENT}: killed by jack ({reason})");
    }

    fn sample_rate(&mut self, _: &jack::Client, srate: jack::Frames) -> jack::Control {
        let _hold = NoCancel::hold(&self.shared.closing);
        self.shared.sample_rate.store((srate as f64).to_bits(), Ordering::Relaxed);
        jack::Control::Continue
    }

    fn graph_reorder(&mut self, client: &jack::Client) -> jack::Control {
        let _hold = NoCancel::hold(&self.shared.closing);
        // The output latency is the longest playback latency of our outputs.
        let frames = self
            .out_names
            .iter()
            .filter_map(|n| client.port_by_name(n))
            .map(|p| p.get_latency_range(jack::LatencyType::Playback).1)
            .max()
            .unwrap_or(0);
        let sr = f64::from_bits(self.shared.sample_rate.load(Ordering::Relaxed)).max(1.0);
        let ns = (frames as f64 * 1e9 / sr) as u64;
        self.shared.output_latency_ns.store(ns, Ordering::Relaxed);
        if ns != self.reported_latency_ns {
            self.reported_latency_ns = ns;
            println!("{IDENT}: max output latency {:.1} ms", ns as f64 / 1e6);
        }
        jack::Control::Continue
    }

    fn xrun(&mut self, _: &jack::Client) -> jack::Control {
        let _hold = NoCancel::hold(&self.shared.closing);
        self.stats.count_server_xrun();
        // As scsynth does: a lost cycle breaks the period clock's continuity.
        self.shared.dll_reset.store(true, Ordering::Relaxed);
        jack::Control::Continue
    }
}
