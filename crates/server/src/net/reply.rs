//! Reply addresses: where a packet came from and where its answers go.

use std::fmt;
use std::hash::{Hash, Hasher};
use std::io::{self, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, UdpSocket};
use std::sync::{Arc, Mutex, Weak};

/// Where a packet came from and where its replies go. Cheap to clone; equal
/// addresses are the same client (UDP: same peer address; TCP: same
/// connection), which is what `/notify` keys on.
#[derive(Clone)]
pub struct ReplyAddr {
    kind: Kind,
}

#[derive(Clone)]
enum Kind {
    /// Weak, so that a held address never keeps the server's port bound.
    Udp { socket: Weak<UdpSocket>, peer: SocketAddr },
    Tcp(Arc<TcpConn>),
    /// scsynth's null reply address: what a plugin unit's asynchronous
    /// command answers to. Replies sent here go nowhere.
    Nowhere,
}

/// The sending side of one TCP connection.
pub(super) struct TcpConn {
    id: u64,
    peer: SocketAddr,
    /// `None` once the connection has ended: its descriptor is closed then.
    writer: Mutex<Option<TcpStream>>,
}

impl TcpConn {
    pub(super) fn new(id: u64, peer: SocketAddr, writer: TcpStream) -> Arc<TcpConn> {
        Arc::new(TcpConn { id, peer, writer: Mutex::new(Some(writer)) })
    }

    /// Closes the sending side for good.
    pub(super) fn close(&self) {
        let mut guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        *guard = None;
    }

    fn send(&self, packet: &[u8]) -> io::Result<()> {
        let len = i32::try_from(packet.len())
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "reply too large for a TCP frame"))?;
        // One buffer, one write: the length and the packet leave together.
        let mut frame = Vec::with_capacity(4 + packet.len());
        frame.extend_from_slice(&len.to_be_bytes());
        frame.extend_from_slice(packet);
        let mut guard = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let stream = guard
            .as_mut()
            .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "TCP client has disconnected"))?;
        let result = stream.write_all(&frame);
        if result.is_err() {
            // A half-written frame would desynchronise the client; end the
            // connection instead (this also wakes its reader thread).
            let _ = stream.shutdown(Shutdown::Both);
            *guard = None;
        }
        result
    }
}

impl ReplyAddr {
    pub(super) fn udp(socket: Weak<UdpSocket>, peer: SocketAddr) -> ReplyAddr {
        ReplyAddr { kind: Kind::Udp { socket, peer } }
    }

    pub(super) fn tcp(conn: Arc<TcpConn>) -> ReplyAddr {
        ReplyAddr { kind: Kind::Tcp(conn) }
    }

    /// An address whose replies are dropped (scsynth's null reply
    /// address). Holds nothing: made and cloned without allocating.
    pub fn nowhere() -> ReplyAddr {
        ReplyAddr { kind: Kind::Nowhere }
    }

    /// Sends one OSC packet to this client (framed on TCP). Fails once the
    /// client has disconnected or the server's socket is closed.
    pub fn send(&self, packet: &[u8]) -> io::Result<()> {
        match &self.kind {
            Kind::Udp { socket, peer } => {
                let socket = socket
                    .upgrade()
                    .ok_or_else(|| io::Error::new(io::ErrorKind::NotConnected, "UDP socket is closed"))?;
                let sent = socket.send_to(packet, peer)?;
                if sent != packet.len() {
                    return Err(io::Error::new(io::ErrorKind::WriteZero, "datagram truncated"));
                }
                Ok(())
            }
            Kind::Tcp(conn) => conn.send(packet),
            Kind::Nowhere => Ok(()),
        }
    }

    /// Whether replies go over a TCP connection.
    pub fn is_tcp(&self) -> bool {
        matches!(self.kind, Kind::Tcp(_))
    }

    /// The client's socket address.
    pub fn peer(&self) -> SocketAddr {
        match &self.kind {
            Kind::Udp { peer, .. } => *peer,
            Kind::Tcp(conn) => conn.peer,
            Kind::Nowhere => SocketAddr::from(([0, 0, 0, 0], 0)),
        }
    }
}

impl PartialEq for ReplyAddr {
    fn eq(&self, other: &Self) -> bool {
        match (&self.kind, &other.kind) {
            (Kind::Udp { peer: a, .. }, Kind::Udp { peer: b, .. }) => a == b,
            (Kind::Tcp(a), Kind::Tcp(b)) => a.id == b.id,
            (Kind::Nowhere, Kind::Nowhere) => true,
            _ => false,
        }
    }
}

impl Eq for ReplyAddr {}

impl Hash for ReplyAddr {
    fn hash<H: Hasher>(&self, state: &mut H) {
        match &self.kind {
            Kind::Udp { peer, .. } => {
                0u8.hash(state);
                peer.hash(state);
            }
            Kind::Tcp(conn) => {
                1u8.hash(state);
                conn.id.hash(state);
            }
            Kind::Nowhere => 2u8.hash(state),
        }
    }
}

impl fmt::Debug for ReplyAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            Kind::Udp { peer, .. } => write!(f, "udp:{peer}"),
            Kind::Tcp(conn) => write!(f, "tcp:{}#{}", conn.peer, conn.id),
            Kind::Nowhere => write!(f, "nowhere"),
        }
    }
}

impl fmt::Display for ReplyAddr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}
