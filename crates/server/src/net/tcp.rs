//! The TCP port: an accepting thread plus one reader thread per connection.
//! Packets are framed by a big-endian int32 length in both directions.

use std::collections::HashMap;
use std::io;
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::os::fd::AsRawFd;
use std::sync::{Arc, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::Duration;

use super::reply::TcpConn;
use super::{join_quietly, Incoming, ReplyAddr, Shared, MAX_TCP_PACKET, POLL_INTERVAL, TCP_SINK_PATIENCE};

/// Tries a client gets at the password before it is disconnected.
const LOGIN_ATTEMPTS: u32 = 4;

/// Pause after a wrong password, times the attempt number: slows guessing.
const LOGIN_RETRY_DELAY: Duration = Duration::from_millis(100);

/// Longest password packet read (scsynth's limit), unless the password
/// itself needs more room as an OSC address.
const MAX_PASSWORD_PACKET: usize = 32;

/// A reply write that stalls this long (the client stopped reading) ends
/// the connection rather than holding up the replying thread.
const WRITE_TIMEOUT: Duration = Duration::from_secs(2);

use magnetar_protocol::framing::read_frame;

/// A live connection as the port sees it, for shutdown.
struct Entry {
    /// A second handle on the socket, used only to shut it down.
    control: TcpStream,
    thread: JoinHandle<()>,
}

type Registry = Mutex<HashMap<u64, Entry>>;

fn lock(registry: &Registry) -> MutexGuard<'_, HashMap<u64, Entry>> {
    registry.lock().unwrap_or_else(|p| p.into_inner())
}

pub(super) struct TcpPort {
    port: u16,
    accept_thread: JoinHandle<()>,
    registry: Arc<Registry>,
}

impl TcpPort {
    pub(super) fn start(
        addr: SocketAddr,
        password: Option<String>,
        max_logins: usize,
        login_timeout: Duration,
        shared: Arc<Shared>,
    ) -> io::Result<TcpPort> {
        // std sets SO_REUSEADDR on Unix listeners, so a restarted server can
        // bind while old connections linger in TIME_WAIT.
        let listener = TcpListener::bind(addr)?;
        listener.set_nonblocking(true)?;
        let port = listener.local_addr()?.port();
        let registry: Arc<Registry> = Arc::new(Mutex::new(HashMap::new()));
        let acceptor = Acceptor {
            listener,
            password: password.map(Arc::from),
            max_logins,
            login_timeout,
            shared,
            registry: Arc::clone(&registry),
            next_id: 0,
        };
        let accept_thread = thread::Builder::new().name("magnetar-tcp".into()).spawn(move || acceptor.run())?;
        Ok(TcpPort { port, accept_thread, registry })
    }

    pub(super) fn port(&self) -> u16 {
        self.port
    }

    /// Call with the stop flag set: closes the listener and every connection
    /// and waits for their threads.
    pub(super) fn stop(self) {
        // First the acceptor, so no connection is added behind our back.
        join_quietly(self.accept_thread, "TCP accept");
        let entries: Vec<Entry> = lock(&self.registry).drain().map(|(_, e)| e).collect();
        for entry in &entries {
            // Wakes a reader blocked in read() (and a writer in write()).
            let _ = entry.control.shutdown(Shutdown::Both);
        }
        for entry in entries {
            join_quietly(entry.thread, "TCP connection");
        }
    }
}

struct Acceptor {
    listener: TcpListener,
    password: Option<Arc<str>>,
    max_logins: usize,
    login_timeout: Duration,
    shared: Arc<Shared>,
    registry: Arc<Registry>,
    next_id: u64,
}

impl Acceptor {
    fn run(mut self) {
        while !self.shared.stopping() {
            if !wait_readable(&self.listener, POLL_INTERVAL) {
                continue;
            }
            match self.listener.accept() {
                Ok((stream, peer)) => self.admit(stream, peer),
                Err(e) if matches!(e.kind(), io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted) => {}
                Err(e) => {
                    eprintln!("magnetar: TCP accept failed: {e}");
                    // E.g. out of descriptors: the listener stays readable, so pause.
                    thread::sleep(POLL_INTERVAL);
                }
            }
        }
        // The listener is closed when `self` drops here.
    }

    fn admit(&mut self, stream: TcpStream, peer: SocketAddr) {
        // Held until the entry is in place, so a connection that ends at once
        // still finds (and removes) its own entry.
        let mut conns = lock(&self.registry);
        if conns.len() >= self.max_logins {
            eprintln!("magnetar: refusing TCP connection from {peer}: {} login(s) already open", self.max_logins);
            return;
        }
        let id = self.next_id;
        self.next_id += 1;
        let prepared = prepare(&stream).and_then(|(writer, control)| {
            let conn = TcpConn::new(id, peer, writer);
            let connection = Connection {
                stream,
                conn,
                peer,
                password: self.password.clone(),
                login_timeout: self.login_timeout,
                shared: Arc::clone(&self.shared),
                registry: Arc::clone(&self.registry),
                id,
            };
            let thread = thread::Builder::new().name("magnetar-tcp-conn".into()).spawn(move || connection.run())?;
            Ok(Entry { control, thread })
        });
        match prepared {
            Ok(entry) => {
                conns.insert(id, entry);
            }
            Err(e) => eprintln!("magnetar: cannot serve TCP connection from {peer}: {e}"),
        }
    }
}

/// Sets the socket up and returns its writing and controlling handles.
fn prepare(stream: &TcpStream) -> io::Result<(TcpStream, TcpStream)> {
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
    stream.set_write_timeout(Some(WRITE_TIMEOUT))?;
    Ok((stream.try_clone()?, stream.try_clone()?))
}

/// Waits up to `timeout` for a pending connection.
fn wait_readable(listener: &TcpListener, timeout: Duration) -> bool {
    let mut pfd = libc::pollfd { fd: listener.as_raw_fd(), events: libc::POLLIN, revents: 0 };
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `pfd` is one valid pollfd that outlives the call, matching the
    // count of 1, and its descriptor is kept open by the borrowed listener.
    let ready = unsafe { libc::poll(&mut pfd, 1, millis) };
    ready > 0
}

/// One client connection, run on its own thread.
struct Connection {
    stream: TcpStream,
    conn: Arc<TcpConn>,
    peer: SocketAddr,
    password: Option<Arc<str>>,
    login_timeout: Duration,
    shared: Arc<Shared>,
    registry: Arc<Registry>,
    id: u64,
}

impl Connection {
    fn run(mut self) {
        self.serve();
        // Close the descriptors now, even if reply addresses are still held.
        self.conn.close();
        let _ = self.stream.shutdown(Shutdown::Both);
        lock(&self.registry).remove(&self.id);
    }

    fn serve(&mut self) {
        if let Some(password) = self.password.clone() {
            if !self.login(&password) {
                return;
            }
        }
        let from = ReplyAddr::tcp(Arc::clone(&self.conn));
        loop {
            match read_frame(&mut self.stream, MAX_TCP_PACKET) {
                Ok(Some(data)) if data.is_empty() => {}
                Ok(Some(data)) => self.shared.deliver(Incoming { data, from: from.clone() }, TCP_SINK_PATIENCE),
                Ok(None) => return,
                Err(e) => {
                    if !self.shared.stopping() {
                        eprintln!("magnetar: closing TCP connection from {}: {e}", self.peer);
                    }
                    return;
                }
            }
        }
    }

    /// Reads password attempts; true once one matches within the time allowed.
    fn login(&mut self, password: &str) -> bool {
        let limit = MAX_PASSWORD_PACKET.max(password.len() + 12);
        let deadline = std::time::Instant::now() + self.login_timeout;
        for attempt in 1..=LOGIN_ATTEMPTS {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() || self.stream.set_read_timeout(Some(left)).is_err() {
                return false;
            }
            match read_frame(&mut self.stream, limit) {
                Ok(Some(frame)) if password_matches(&frame, password) => {
                    return self.stream.set_read_timeout(None).is_ok();
                }
                Ok(Some(_)) => {}
                Ok(None) => return false,
                Err(e) => {
                    if !self.shared.stopping() {
                        eprintln!("magnetar: TCP login from {} failed: {e}", self.peer);
                    }
                    return false;
                }
            }
            if attempt < LOGIN_ATTEMPTS && !self.shared.sleep_unless_stopped(LOGIN_RETRY_DELAY * attempt) {
                return false;
            }
        }
        eprintln!("magnetar: TCP login from {} refused: wrong password", self.peer);
        false
    }
}

/// The packet's leading NUL-terminated string, i.e. the address of an OSC
/// message, must be the password.
fn password_matches(frame: &[u8], password: &str) -> bool {
    let end = frame.iter().position(|&b| b == 0).unwrap_or(frame.len());
    &frame[..end] == password.as_bytes()
}
