//! The UDP port: one thread receiving datagrams.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::Duration;

use super::{join_quietly, Incoming, ReplyAddr, Shared, POLL_INTERVAL, UDP_BUFFER};

/// Kernel receive buffer asked for, so a burst of large packets (e.g.
/// `/d_recv`) is not lost while the thread hands the previous one on.
const SOCKET_RECEIVE_BUFFER: libc::c_int = 1 << 20;

pub(super) struct UdpPort {
    port: u16,
    /// The only long-lived strong reference besides the thread's: once both
    /// are gone the socket is closed, whatever reply addresses remain.
    socket: Arc<UdpSocket>,
    thread: JoinHandle<()>,
}

impl UdpPort {
    pub(super) fn start(addr: SocketAddr, shared: Arc<Shared>) -> io::Result<UdpPort> {
        // No SO_REUSEADDR here: on Linux it would let two servers share one
        // UDP port; a closed UDP socket frees its port at once anyway.
        let socket = UdpSocket::bind(addr)?;
        socket.set_read_timeout(Some(POLL_INTERVAL))?;
        enlarge_receive_buffer(&socket);
        let port = socket.local_addr()?.port();
        let socket = Arc::new(socket);
        let thread_socket = Arc::clone(&socket);
        let thread = thread::Builder::new()
            .name("magnetar-udp".into())
            .spawn(move || receive_loop(thread_socket, shared))?;
        Ok(UdpPort { port, socket, thread })
    }

    pub(super) fn port(&self) -> u16 {
        self.port
    }

    /// Call with the stop flag set; returns once the socket is closed.
    pub(super) fn stop(self) {
        join_quietly(self.thread, "UDP");
        drop(self.socket);
    }
}

fn receive_loop(socket: Arc<UdpSocket>, shared: Arc<Shared>) {
    let weak = Arc::downgrade(&socket);
    let mut buf = vec![0u8; UDP_BUFFER];
    while !shared.stopping() {
        match socket.recv_from(&mut buf) {
            Ok((0, _)) => {}
            Ok((n, peer)) => {
                let incoming = Incoming { data: buf[..n].to_vec(), from: ReplyAddr::udp(weak.clone(), peer) };
                shared.deliver(incoming, Duration::ZERO);
            }
            Err(e) if is_transient(&e) => {}
            Err(e) => {
                if !shared.stopping() {
                    eprintln!("magnetar: UDP receive error: {e}");
                }
                // Never spin on an error that repeats.
                thread::sleep(Duration::from_millis(10));
            }
        }
    }
}

/// Timeouts and interruptions, plus the ICMP "port unreachable" some systems
/// report after a reply to a client that has gone.
fn is_transient(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock
            | io::ErrorKind::TimedOut
            | io::ErrorKind::Interrupted
            | io::ErrorKind::ConnectionRefused
            | io::ErrorKind::ConnectionReset
    )
}

fn enlarge_receive_buffer(socket: &UdpSocket) {
    use std::os::fd::AsRawFd;
    let size = SOCKET_RECEIVE_BUFFER;
    // SAFETY: the descriptor is open for the duration of the call (borrowed
    // from `socket`) and the option value points at a live c_int of the
    // length passed. Failure only leaves the system default in place.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_RCVBUF,
            (&size as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}
