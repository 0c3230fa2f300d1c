//! Boots the `magnetar` binary as a client would and talks to it over UDP
//! and TCP: readiness line, SynthDefs, nodes, notifications, replies, quit,
//! and booting again on the same port.

use magnetar_protocol::osc::{decode, OscArg, OscMessage, OscPacket};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpStream, UdpSocket};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const READY: &str = "SuperCollider 3 server ready.";
/// How long a reply (or the exit after `/quit`) may take: a reply comes in
/// milliseconds, but the suite runs beside builds on two CPUs, where a
/// process can be kept off the CPU for seconds (two tests here once waited
/// out three seconds together).
const REPLY_WITHIN: Duration = Duration::from_secs(20);

struct Server {
    child: Child,
    /// The port its shared memory segment is named after.
    port: Option<String>,
}

impl Server {
    fn boot(args: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_magnetar"))
            .args(args)
            // No JACK server in this test's environment: the built-in clock driver plays.
            .env("JACK_NO_START_SERVER", "1")
            .env("JACK_DEFAULT_SERVER", "magnetar-test-no-such-server")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start magnetar");
        let stdout = child.stdout.take().expect("piped stdout");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match rx.recv_timeout(left) {
                Ok(line) if line.contains(READY) => {
                    let port = args.windows(2).find(|w| w[0] == "-u" || w[0] == "-t").map(|w| w[1].to_string());
                    return Server { child, port };
                }
                Ok(_) => {}
                Err(_) => panic!("magnetar did not print {READY:?} within 10 s"),
            }
        }
    }

    fn wait_exit(&mut self, within: Duration) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + within;
        while Instant::now() < deadline {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        None
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Killed, the server cannot remove its segment; scsynth's would stay too.
        if let Some(port) = &self.port {
            let _ = std::fs::remove_file(format!("/dev/shm/SuperColliderServer_{port}"));
        }
    }
}

fn free_port() -> u16 {
    UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

struct Udp {
    sock: UdpSocket,
}

impl Udp {
    fn connect(port: u16) -> Udp {
        let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
        sock.connect(("127.0.0.1", port)).unwrap();
        sock.set_read_timeout(Some(REPLY_WITHIN)).unwrap();
        Udp { sock }
    }

    fn send(&self, address: &str, args: Vec<OscArg>) {
        self.sock.send(&OscMessage::new(address, args).encode()).unwrap();
    }

    /// The next message with this address (others are skipped).
    fn expect(&self, address: &str) -> OscMessage {
        let mut buf = vec![0u8; 65536];
        loop {
            let n = self.sock.recv(&mut buf).unwrap_or_else(|e| panic!("waiting for {address}: {e}"));
            if let Ok(OscPacket::Message(m)) = decode(&buf[..n]) {
                if m.address.as_name() == Some(address) {
                    return m;
                }
            }
        }
    }
}

fn sine_def() -> Vec<u8> {
    std::fs::read(concat!(env!("CARGO_MANIFEST_DIR"), "/../synthdef/tests/fixtures/sine.scsyndef")).unwrap()
}

fn s(v: &str) -> OscArg {
    OscArg::Str(v.into())
}

#[test]
fn a_client_loads_a_def_plays_a_synth_hears_notifications_and_quits() {
    let port = free_port();
    let mut server = Server::boot(&["-u", &port.to_string(), "-o", "2"]);
    let c = Udp::connect(port);

    c.send("/notify", vec![OscArg::Int(1)]);
    let done = c.expect("/done");
    assert_eq!(done.args[0], s("/notify"));

    c.send("/d_recv", vec![OscArg::Blob(sine_def())]);
    assert_eq!(c.expect("/done").args[0], s("/d_recv"));

    c.send("/s_new", vec![s("sine"), OscArg::Int(1000), OscArg::Int(0), OscArg::Int(0)]);
    let go = c.expect("/n_go");
    assert_eq!(go.args[0], OscArg::Int(1000));
    assert_eq!(go.args[1], OscArg::Int(0), "parent is the root group");

    c.send("/status", vec![]);
    let status = c.expect("/status.reply");
    assert_eq!(status.args[2], OscArg::Int(1), "one synth runs");

    c.send("/g_queryTree", vec![OscArg::Int(0), OscArg::Int(0)]);
    let tree = c.expect("/g_queryTree.reply");
    assert!(tree.args.contains(&s("sine")), "{tree:?}");

    c.send("/n_free", vec![OscArg::Int(1000)]);
    assert_eq!(c.expect("/n_end").args[0], OscArg::Int(1000));

    c.send("/n_free", vec![OscArg::Int(1000)]);
    let fail = c.expect("/fail");
    assert_eq!(fail.args[1], s("Node 1000 not found"));

    c.send("/sync", vec![OscArg::Int(42)]);
    assert_eq!(c.expect("/synced").args[0], OscArg::Int(42));

    c.send("/quit", vec![]);
    assert_eq!(c.expect("/done").args[0], s("/quit"));
    let status = server.wait_exit(REPLY_WITHIN).expect("magnetar exits after /quit");
    assert!(status.success());

    // The port is free again at once: a new server boots on it.
    let _again = Server::boot(&["-u", &port.to_string()]);
    let c2 = Udp::connect(port);
    c2.send("/status", vec![]);
    c2.expect("/status.reply");
}

#[test]
fn tcp_clients_send_length_framed_packets_and_get_framed_replies() {
    let port = free_port();
    let _server = Server::boot(&["-t", &port.to_string()]);
    let mut tcp = TcpStream::connect(("127.0.0.1", port)).unwrap();
    tcp.set_read_timeout(Some(REPLY_WITHIN)).unwrap();
    let msg = OscMessage::new("/status", vec![]).encode();
    tcp.write_all(&(msg.len() as i32).to_be_bytes()).unwrap();
    tcp.write_all(&msg).unwrap();
    let mut len = [0u8; 4];
    tcp.read_exact(&mut len).unwrap();
    let mut body = vec![0u8; i32::from_be_bytes(len) as usize];
    tcp.read_exact(&mut body).unwrap();
    match decode(&body).unwrap() {
        OscPacket::Message(m) => assert_eq!(m.address.as_name(), Some("/status.reply")),
        other => panic!("expected /status.reply, got {other:?}"),
    }
}

#[test]
fn garbage_and_bad_commands_get_answers_and_the_server_keeps_running() {
    let port = free_port();
    let _server = Server::boot(&["-u", &port.to_string()]);
    let c = Udp::connect(port);
    c.sock.send(&[0xff, 0x00, 0x12]).unwrap();
    let fail = c.expect("/fail");
    assert_eq!(fail.args[0], s(""));
    assert!(matches!(&fail.args[1], OscArg::Str(t) if t.contains("not a multiple of 4")), "{fail:?}");
    c.sock.send(b"/s_new\0\0,s\0\0").unwrap();
    let fail = c.expect("/fail");
    assert_eq!(fail.args[0], s("/s_new"));
    assert!(matches!(&fail.args[1], OscArg::Str(t) if t.contains("byte 12")), "{fail:?}");
    c.send("/no_such_command", vec![]);
    assert_eq!(c.expect("/fail").args[1], s("Command not found"));
    c.send("/s_new", vec![s("nope"), OscArg::Int(5), OscArg::Int(0), OscArg::Int(0)]);
    assert_eq!(c.expect("/fail").args[1], s("SynthDef not found"));
    c.send("/status", vec![]);
    c.expect("/status.reply");
}

#[test]
fn a_full_real_time_pool_fails_the_synth_and_the_server_goes_on() {
    let port = free_port();
    // A 64 KB pool: room for a few synths only.
    let _server = Server::boot(&["-u", &port.to_string(), "-m", "64"]);
    let c = Udp::connect(port);
    c.send("/rtMemoryStatus", vec![]);
    let status = c.expect("/rtMemoryStatus.reply");
    let OscArg::Int(free_before) = status.args[0] else { panic!("{status:?}") };
    assert!(free_before > 0 && free_before <= 64 * 1024, "{status:?}");

    c.send("/d_recv", vec![OscArg::Blob(sine_def())]);
    c.expect("/done");
    let mut failed_at = None;
    for n in 0..400 {
        c.send("/s_new", vec![s("sine"), OscArg::Int(2000 + n), OscArg::Int(1), OscArg::Int(0)]);
        c.send("/sync", vec![OscArg::Int(n)]);
        // Either the synth fits (only /synced comes) or it fails first.
        let mut buf = vec![0u8; 65536];
        loop {
            let len = c.sock.recv(&mut buf).expect("reply");
            match decode(&buf[..len]) {
                Ok(OscPacket::Message(m)) if m.address.as_name() == Some("/fail") => {
                    assert_eq!(m.args[1], s("out of real time memory"));
                    failed_at = Some(n);
                }
                Ok(OscPacket::Message(m)) if m.address.as_name() == Some("/synced") => break,
                _ => {}
            }
        }
        if failed_at.is_some() {
            break;
        }
    }
    let n = failed_at.expect("the pool runs out before 400 synths");
    assert!(n > 0, "at least one synth fits");
    c.send("/status", vec![]);
    let status = c.expect("/status.reply");
    assert_eq!(status.args[2], OscArg::Int(n), "the synths that fit all run");
    c.send("/rtMemoryStatus", vec![]);
    let OscArg::Int(free_after) = c.expect("/rtMemoryStatus.reply").args[0] else { panic!() };
    assert!(free_after < free_before);

    // Freeing every other synth leaves holes: more memory is free than any
    // one request can get, and the reply says so.
    for id in (0..n).step_by(2) {
        c.send("/n_free", vec![OscArg::Int(2000 + id)]);
    }
    c.send("/sync", vec![OscArg::Int(1)]);
    c.expect("/synced");
    c.send("/rtMemoryStatus", vec![]);
    let reply = c.expect("/rtMemoryStatus.reply");
    let (OscArg::Int(free), OscArg::Int(largest)) = (&reply.args[0], &reply.args[1]) else { panic!("{reply:?}") };
    assert!(*free > free_after, "{reply:?}");
    assert!(*largest > 0 && largest < free, "largest free chunk {largest} of {free} free");
}
