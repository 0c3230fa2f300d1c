//! OSC transport: the UDP and TCP sockets a client talks to.
//!
//! This layer moves packets and nothing else. Every packet that arrives is
//! handed, undecoded, to a bounded channel together with the [`ReplyAddr`]
//! its answers go to; another thread decodes and executes it.
//!
//! Wire behaviour follows scsynth's:
//! - UDP: one OSC packet per datagram.
//! - TCP: every packet, in both directions, is preceded by its length as a
//!   big-endian int32. With a password set, the first packet of a connection
//!   must be a message whose address is the password (up to four tries, a
//!   growing pause after each wrong one), and is not passed on.
//! - At most `max_logins` TCP connections at once.
//! - With a password, a connection that has not sent it within
//!   [`LOGIN_TIMEOUT`] is closed, so that idle connections cannot hold every
//!   login and shut the others out (scsynth waits for ever).
//!
//! Differences, on purpose: a TCP connection over the limit is accepted and
//! closed at once (scsynth leaves it waiting in the backlog), a frame length
//! that is negative or above [`MAX_TCP_PACKET`] closes that connection
//! (scsynth would try to allocate it), and shutdown releases the ports
//! immediately even while reply addresses are still held elsewhere.

mod reply;
mod tcp;
mod udp;

#[cfg(test)]
mod tests;

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{SyncSender, TrySendError};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

pub use reply::ReplyAddr;

/// The largest TCP packet accepted; a longer frame closes its connection.
pub use magnetar_engine::limits::MAX_TCP_PACKET;

/// How long a connection may take to send the password.
pub const LOGIN_TIMEOUT: Duration = Duration::from_secs(10);

/// Receive buffer for one datagram: room for the largest UDP payload.
const UDP_BUFFER: usize = magnetar_engine::limits::MAX_UDP_PACKET;

/// How often blocked socket threads look at the stop flag.
const POLL_INTERVAL: Duration = Duration::from_millis(50);

/// How long a TCP reader waits for room in a full sink before dropping the
/// packet; TCP clients get a little back-pressure, UDP ones none.
const TCP_SINK_PATIENCE: Duration = Duration::from_millis(250);

/// What to listen on.
#[derive(Debug, Clone)]
pub struct NetConfig {
    /// UDP port; `Some(0)` picks any free port, `None` opens no UDP socket.
    pub udp_port: Option<u16>,
    /// TCP port; `Some(0)` picks any free port, `None` opens no TCP socket.
    pub tcp_port: Option<u16>,
    /// Local address to bind both sockets to.
    pub bind: IpAddr,
    /// Password TCP clients must send first; `None` or empty means none.
    pub password: Option<String>,
    /// Most TCP connections open at once.
    pub max_logins: usize,
    /// How long a connection may take to send the password ([`LOGIN_TIMEOUT`]).
    pub login_timeout: Duration,
}

/// One packet as received, with the address its replies go to.
#[derive(Debug)]
pub struct Incoming {
    pub data: Vec<u8>,
    pub from: ReplyAddr,
}

/// State shared by the socket threads.
struct Shared {
    stop: AtomicBool,
    dropped: AtomicU64,
    sink: SyncSender<Incoming>,
}

impl Shared {
    /// Hands a packet on, waiting at most `patience` for room; a packet that
    /// finds no room is counted and dropped so the socket keeps draining.
    fn deliver(&self, incoming: Incoming, patience: Duration) {
        let deadline = Instant::now() + patience;
        let mut pending = incoming;
        loop {
            match self.sink.try_send(pending) {
                Ok(()) => return,
                Err(TrySendError::Full(back)) => {
                    if Instant::now() >= deadline || self.stopping() {
                        break;
                    }
                    pending = back;
                    thread::sleep(Duration::from_millis(1));
                }
                Err(TrySendError::Disconnected(_)) => break,
            }
        }
        let before = self.dropped.fetch_add(1, Ordering::Relaxed);
        if before.is_multiple_of(1024) {
            eprintln!("magnetar: command queue full, dropped {} packet(s) so far", before + 1);
        }
    }

    fn stopping(&self) -> bool {
        self.stop.load(Ordering::Acquire)
    }

    /// Sleeps up to `total`, returning early (false) when asked to stop.
    fn sleep_unless_stopped(&self, total: Duration) -> bool {
        let deadline = Instant::now() + total;
        loop {
            if self.stopping() {
                return false;
            }
            let now = Instant::now();
            if now >= deadline {
                return true;
            }
            thread::sleep((deadline - now).min(POLL_INTERVAL));
        }
    }
}

/// The running transport. Dropping it shuts it down, as [`Network::shutdown`].
pub struct Network {
    shared: Arc<Shared>,
    udp: Option<udp::UdpPort>,
    tcp: Option<tcp::TcpPort>,
}

impl Network {
    /// Binds the sockets (port 0 = any free port) and starts the receiving
    /// threads; every packet is sent to `sink`. A full sink drops the packet
    /// (and counts it) rather than blocking the socket thread forever.
    pub fn start(cfg: NetConfig, sink: SyncSender<Incoming>) -> io::Result<Network> {
        let shared = Arc::new(Shared { stop: AtomicBool::new(false), dropped: AtomicU64::new(0), sink });
        let mut net = Network { shared: Arc::clone(&shared), udp: None, tcp: None };
        if let Some(port) = cfg.udp_port {
            let addr = SocketAddr::new(cfg.bind, port);
            net.udp = Some(udp::UdpPort::start(addr, Arc::clone(&shared)).map_err(|e| context(e, "UDP", addr))?);
        }
        if let Some(port) = cfg.tcp_port {
            let addr = SocketAddr::new(cfg.bind, port);
            let password = cfg.password.filter(|p| !p.is_empty());
            // On failure `net` is dropped here, which closes the UDP socket again.
            net.tcp = Some(
                tcp::TcpPort::start(addr, password, cfg.max_logins, cfg.login_timeout, Arc::clone(&shared))
                    .map_err(|e| context(e, "TCP", addr))?,
            );
        }
        Ok(net)
    }

    /// The bound UDP port, if UDP is open.
    pub fn udp_port(&self) -> Option<u16> {
        self.udp.as_ref().map(|u| u.port())
    }

    /// The bound TCP port, if TCP is open.
    pub fn tcp_port(&self) -> Option<u16> {
        self.tcp.as_ref().map(|t| t.port())
    }

    /// Packets dropped because the sink was full or gone.
    pub fn dropped_packets(&self) -> u64 {
        self.shared.dropped.load(Ordering::Relaxed)
    }

    /// Closes the sockets and joins the threads promptly (well under a
    /// second), so that a new server can bind the same ports at once.
    pub fn shutdown(mut self) {
        self.stop();
    }

    fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        if let Some(udp) = self.udp.take() {
            udp.stop();
        }
        if let Some(tcp) = self.tcp.take() {
            tcp.stop();
        }
    }
}

impl Drop for Network {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Says which socket failed, keeping the error kind (e.g. `AddrInUse`).
fn context(e: io::Error, what: &str, addr: SocketAddr) -> io::Error {
    let hint = if e.kind() == io::ErrorKind::AddrInUse {
        " (is another server running on this port?)"
    } else {
        ""
    };
    io::Error::new(e.kind(), format!("failed to open {what} socket on {addr}: {e}{hint}"))
}

/// Joins a socket thread, reporting (not propagating) a panic inside it.
fn join_quietly(handle: JoinHandle<()>, what: &str) {
    if handle.join().is_err() {
        eprintln!("magnetar: {what} thread ended abnormally");
    }
}
