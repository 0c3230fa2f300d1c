use std::collections::HashSet;
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv4Addr, TcpStream, UdpSocket};
use std::sync::mpsc::{sync_channel, Receiver};
use std::thread;
use std::time::{Duration, Instant};

use magnetar_protocol::{OscArg, OscMessage};

use super::*;

const LOOPBACK: IpAddr = IpAddr::V4(Ipv4Addr::LOCALHOST);
const WAIT: Duration = Duration::from_millis(1500);

fn config(udp: bool, tcp: bool) -> NetConfig {
    NetConfig {
        udp_port: udp.then_some(0),
        tcp_port: tcp.then_some(0),
        bind: LOOPBACK,
        password: None,
        max_logins: 8,
        login_timeout: LOGIN_TIMEOUT,
    }
}

fn start(cfg: NetConfig) -> (Network, Receiver<Incoming>) {
    let (tx, rx) = sync_channel(64);
    (Network::start(cfg, tx).expect("network starts"), rx)
}

fn message(address: &str, n: i32) -> Vec<u8> {
    OscMessage::new(address, vec![OscArg::Int(n)]).encode()
}

fn framed(packet: &[u8]) -> Vec<u8> {
    let mut out = (packet.len() as i32).to_be_bytes().to_vec();
    out.extend_from_slice(packet);
    out
}

fn connect(net: &Network) -> TcpStream {
    let stream = TcpStream::connect((LOOPBACK, net.tcp_port().expect("tcp open"))).expect("connects");
    stream.set_read_timeout(Some(WAIT)).unwrap();
    stream
}

fn read_framed(stream: &mut TcpStream) -> Vec<u8> {
    let mut len = [0u8; 4];
    stream.read_exact(&mut len).expect("reply length");
    let mut data = vec![0u8; i32::from_be_bytes(len) as usize];
    stream.read_exact(&mut data).expect("reply body");
    data
}

/// True once the server has closed the connection (EOF or reset).
fn is_closed_by_server(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 64];
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        match stream.read(&mut buf) {
            Ok(0) => return true,
            Ok(_) => {}
            Err(e) if matches!(e.kind(), ErrorKind::ConnectionReset | ErrorKind::ConnectionAborted) => return true,
            Err(_) => return false,
        }
    }
    false
}

fn next(rx: &Receiver<Incoming>) -> Incoming {
    rx.recv_timeout(WAIT).expect("a packet arrives")
}

#[test]
fn udp_packet_arrives_whole_and_reply_returns_to_sender() {
    let (net, rx) = start(config(true, false));
    let client = UdpSocket::bind((LOOPBACK, 0)).unwrap();
    client.set_read_timeout(Some(WAIT)).unwrap();
    // Near the largest datagram, as a big /d_recv would be.
    let big = OscMessage::new("/d_recv", vec![OscArg::Blob(vec![7; 65000])]).encode();
    client.send_to(&big, (LOOPBACK, net.udp_port().unwrap())).unwrap();
    let got = next(&rx);
    assert_eq!(got.data, big);
    assert!(!got.from.is_tcp());
    assert_eq!(got.from.peer(), client.local_addr().unwrap());

    let reply = message("/done", 1);
    got.from.send(&reply).unwrap();
    let mut buf = [0u8; 256];
    let (n, from) = client.recv_from(&mut buf).expect("reply arrives");
    assert_eq!(&buf[..n], &reply[..]);
    assert_eq!(from.port(), net.udp_port().unwrap());
    net.shutdown();
}

#[test]
fn tcp_frames_are_reassembled_and_separated() {
    let (net, rx) = start(config(false, true));
    let mut client = connect(&net);
    let first = message("/first", 1);
    let frame = framed(&first);
    // One packet dribbled out in three writes, splitting the length too.
    for piece in [&frame[..2], &frame[2..7], &frame[7..]] {
        client.write_all(piece).unwrap();
        client.flush().unwrap();
        thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(next(&rx).data, first);

    // Two packets in a single write arrive as two.
    let (a, b) = (message("/a", 2), message("/b", 3));
    let mut both = framed(&a);
    both.extend(framed(&b));
    client.write_all(&both).unwrap();
    let got_a = next(&rx);
    let got_b = next(&rx);
    assert_eq!((got_a.data.as_slice(), got_b.data.as_slice()), (a.as_slice(), b.as_slice()));
    assert!(got_a.from.is_tcp());
    assert_eq!(got_a.from, got_b.from, "one connection is one client");
    assert_eq!(got_a.from.peer(), client.local_addr().unwrap());

    // Replies come back framed the same way.
    let reply = message("/done", 4);
    got_b.from.send(&reply).unwrap();
    assert_eq!(read_framed(&mut client), reply);
    net.shutdown();
}

#[test]
fn clients_are_told_apart_by_peer_and_connection() {
    let (net, rx) = start(config(true, true));
    let udp_port = net.udp_port().unwrap();
    let u1 = UdpSocket::bind((LOOPBACK, 0)).unwrap();
    let u2 = UdpSocket::bind((LOOPBACK, 0)).unwrap();
    u1.send_to(&message("/x", 1), (LOOPBACK, udp_port)).unwrap();
    let first = next(&rx).from;
    u1.send_to(&message("/x", 2), (LOOPBACK, udp_port)).unwrap();
    let again = next(&rx).from;
    u2.send_to(&message("/x", 3), (LOOPBACK, udp_port)).unwrap();
    let other = next(&rx).from;
    let mut t1 = connect(&net);
    let mut t2 = connect(&net);
    t1.write_all(&framed(&message("/x", 4))).unwrap();
    let tcp1 = next(&rx).from;
    t2.write_all(&framed(&message("/x", 5))).unwrap();
    let tcp2 = next(&rx).from;

    assert_eq!(first, again);
    // A reply address hashes by peer and connection identity, never by the
    // connection's state inside.
    #[allow(clippy::mutable_key_type)]
    let clients: HashSet<ReplyAddr> = [first, again, other, tcp1, tcp2].into_iter().collect();
    assert_eq!(clients.len(), 4);
    net.shutdown();
}

#[test]
fn right_password_opens_the_connection_and_is_not_passed_on() {
    let mut cfg = config(false, true);
    cfg.password = Some("sesame".into());
    let (net, rx) = start(cfg);
    let mut client = connect(&net);
    let login = OscMessage::new("sesame", vec![]).encode();
    let cmd = message("/status", 1);
    let mut bytes = framed(&login);
    bytes.extend(framed(&cmd));
    client.write_all(&bytes).unwrap();
    assert_eq!(next(&rx).data, cmd, "the first packet passed on is the command, not the password");
    net.shutdown();
}

#[test]
fn wrong_password_closes_the_connection_and_passes_nothing() {
    let mut cfg = config(false, true);
    cfg.password = Some("sesame".into());
    let (net, rx) = start(cfg);
    let mut client = connect(&net);
    let wrong = framed(&OscMessage::new("guess", vec![]).encode());
    let cmd = framed(&message("/status", 1));
    let mut bytes = Vec::new();
    for _ in 0..3 {
        bytes.extend(&wrong);
    }
    // The fourth try is a command: it counts as a wrong password too.
    bytes.extend(&cmd);
    client.write_all(&bytes).unwrap();
    assert!(is_closed_by_server(&mut client));
    assert!(rx.try_recv().is_err(), "nothing from an unauthenticated client");

    // A password packet that is far too long is refused outright.
    let mut client = connect(&net);
    client.write_all(&framed(&message("/a_long_address_that_is_not_it", 1))).unwrap();
    assert!(is_closed_by_server(&mut client));
    assert!(rx.try_recv().is_err());
    net.shutdown();
}

#[test]
fn a_connection_that_sends_no_password_in_time_is_closed_and_frees_its_login() {
    let mut cfg = config(false, true);
    cfg.password = Some("sesame".into());
    cfg.max_logins = 1;
    cfg.login_timeout = Duration::from_millis(300);
    let (net, rx) = start(cfg);
    let mut idle = connect(&net);
    assert!(is_closed_by_server(&mut idle), "an idle connection holds the only login for ever");
    // The login is free again.
    let mut client = connect(&net);
    let mut bytes = framed(&OscMessage::new("sesame", vec![]).encode());
    bytes.extend(framed(&message("/status", 1)));
    client.write_all(&bytes).unwrap();
    assert_eq!(next(&rx).data, message("/status", 1));
    // Logged in, a connection may stay quiet as long as it likes.
    thread::sleep(Duration::from_millis(500));
    client.write_all(&framed(&message("/status", 2))).unwrap();
    assert_eq!(next(&rx).data, message("/status", 2));
    net.shutdown();
}

#[test]
fn connections_beyond_max_logins_are_closed() {
    let mut cfg = config(false, true);
    cfg.max_logins = 1;
    let (net, rx) = start(cfg);
    let mut first = connect(&net);
    first.write_all(&framed(&message("/one", 1))).unwrap();
    assert_eq!(next(&rx).data, message("/one", 1));

    let mut extra = connect(&net);
    let _ = extra.write_all(&framed(&message("/two", 2)));
    assert!(is_closed_by_server(&mut extra));
    assert!(rx.try_recv().is_err());

    // The first still works, and once it leaves its slot is free again.
    first.write_all(&framed(&message("/three", 3))).unwrap();
    assert_eq!(next(&rx).data, message("/three", 3));
    drop(first);
    let deadline = Instant::now() + WAIT;
    let mut admitted = false;
    while !admitted && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(20));
        let mut again = connect(&net);
        if again.write_all(&framed(&message("/four", 4))).is_ok() {
            admitted = rx.recv_timeout(Duration::from_millis(200)).is_ok();
        }
        drop(again.shutdown(std::net::Shutdown::Both));
    }
    assert!(admitted, "a freed login slot can be used again");
    net.shutdown();
}

#[test]
fn bad_frame_length_closes_only_that_connection() {
    let (net, rx) = start(config(false, true));
    let mut good = connect(&net);
    for header in [i32::MAX.to_be_bytes(), (-4i32).to_be_bytes(), ((MAX_TCP_PACKET + 1) as i32).to_be_bytes()] {
        let mut bad = connect(&net);
        bad.write_all(&header).unwrap();
        bad.write_all(b"garbage!").unwrap();
        assert!(is_closed_by_server(&mut bad), "length {header:?} closes the connection");
    }
    good.write_all(&framed(&message("/still_here", 1))).unwrap();
    assert_eq!(next(&rx).data, message("/still_here", 1));
    assert!(rx.try_recv().is_err(), "no garbage passed on");
    net.shutdown();
}

#[test]
fn full_sink_drops_and_counts_instead_of_blocking() {
    let (tx, rx) = sync_channel(1);
    let net = Network::start(config(true, false), tx).unwrap();
    let client = UdpSocket::bind((LOOPBACK, 0)).unwrap();
    for i in 0..5 {
        client.send_to(&message("/x", i), (LOOPBACK, net.udp_port().unwrap())).unwrap();
    }
    let deadline = Instant::now() + WAIT;
    while net.dropped_packets() < 4 && Instant::now() < deadline {
        thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(net.dropped_packets(), 4);
    // The socket thread is still alive: room in the sink lets packets in again.
    assert_eq!(rx.recv().unwrap().data, message("/x", 0));
    client.send_to(&message("/y", 9), (LOOPBACK, net.udp_port().unwrap())).unwrap();
    assert_eq!(rx.recv_timeout(WAIT).unwrap().data, message("/y", 9));
    net.shutdown();
}

#[test]
fn shutdown_is_prompt_and_frees_the_ports_for_a_new_server() {
    let (net, rx) = start(config(true, true));
    let (udp_port, tcp_port) = (net.udp_port().unwrap(), net.tcp_port().unwrap());
    // A connected TCP client and a held UDP reply address must not keep anything open.
    let mut client = connect(&net);
    client.write_all(&framed(&message("/hello", 1))).unwrap();
    let tcp_from = next(&rx).from;
    let u = UdpSocket::bind((LOOPBACK, 0)).unwrap();
    u.send_to(&message("/hello", 2), (LOOPBACK, udp_port)).unwrap();
    let udp_from = next(&rx).from;

    let began = Instant::now();
    net.shutdown();
    assert!(began.elapsed() < Duration::from_millis(500), "shutdown took {:?}", began.elapsed());
    assert!(is_closed_by_server(&mut client));
    assert!(udp_from.send(b"late").is_err());
    assert!(tcp_from.send(b"late").is_err());

    let cfg = NetConfig { udp_port: Some(udp_port), tcp_port: Some(tcp_port), ..config(true, true) };
    let (again, rx) = start(cfg);
    assert_eq!((again.udp_port(), again.tcp_port()), (Some(udp_port), Some(tcp_port)));
    let mut client = connect(&again);
    client.write_all(&framed(&message("/again", 3))).unwrap();
    assert_eq!(next(&rx).data, message("/again", 3));
    again.shutdown();
}

#[test]
fn port_in_use_is_reported_not_shared() {
    let (net, _rx) = start(config(true, true));
    let (tx, _rx2) = sync_channel(1);
    let cfg = NetConfig { udp_port: net.udp_port(), tcp_port: None, ..config(true, false) };
    let err = Network::start(cfg, tx.clone()).err().expect("UDP port is taken");
    assert_eq!(err.kind(), ErrorKind::AddrInUse);
    let cfg = NetConfig { udp_port: None, tcp_port: net.tcp_port(), ..config(false, true) };
    let err = Network::start(cfg, tx).err().expect("TCP port is taken");
    assert_eq!(err.kind(), ErrorKind::AddrInUse);
    net.shutdown();
}
