//! The segment as a client sees it: found by name, control buses shared with
//! the world's slice, scope regions handed over in order.

use magnetar_shm::{Client, ServerShm};
use std::path::Path;

/// A port number of this test process's own (segments are named by port only).
fn port(offset: u16) -> u16 {
    40000 + (std::process::id() % 10000) as u16 + offset
}

#[test]
fn client_reads_and_server_sees_the_same_control_buses() {
    let port = port(0);
    let shm = ServerShm::create(port, 128).expect("segment");
    assert!(Path::new(&format!("/dev/shm/SuperColliderServer_{port}")).exists());
    let (mut buses, _scopes) = shm.into_world_parts();
    assert_eq!(buses.len(), 128);
    assert!(buses.iter().all(|&v| v == 0.0));
    buses[5] = 0.5;
    buses[127] = -2.0;
    let client = Client::open(port).expect("client");
    assert_eq!(client.control_buses(4, 2), vec![0.0, 0.5]);
    assert_eq!(client.control_buses(127, 1), vec![-2.0]);
    drop(buses);
    drop(_scopes);
    assert!(!Path::new(&format!("/dev/shm/SuperColliderServer_{port}")).exists());
}

#[test]
fn a_stale_segment_is_replaced() {
    let port = port(1);
    let path = format!("/dev/shm/SuperColliderServer_{port}");
    std::fs::write(&path, vec![0xffu8; 4096]).unwrap();
    let shm = ServerShm::create(port, 16).expect("segment over a stale one");
    let (buses, _scopes) = shm.into_world_parts();
    assert!(buses.iter().all(|&v| v == 0.0));
    assert_eq!(Client::open(port).expect("client").control_buses(0, 16), vec![0.0; 16]);
}

#[test]
fn scope_regions_reach_the_reader_and_buffers_come_back() {
    let port = port(2);
    let (_buses, mut scopes) = ServerShm::create(port, 8).expect("segment").into_world_parts();
    let client = Client::open(port).expect("client");
    assert_eq!(client.scope(0), None);

    let region = scopes.acquire(0, 2, 64).expect("a free buffer");
    // The same buffer cannot be taken twice; out of range is refused.
    assert!(scopes.acquire(0, 1, 64).is_none());
    assert!(scopes.acquire(128, 1, 64).is_none());
    // SAFETY: the region holds 2 planes of 64 floats.
    let planes = unsafe { std::slice::from_raw_parts_mut(region.as_ptr(), 128) };
    planes[..64].fill(0.25);
    planes[64..].fill(-0.5);
    let seen = client.scope(0).expect("in use");
    assert_eq!((seen.channels, seen.max_frames, seen.frames), (2, 64, 0), "nothing published yet");
    let next = scopes.push(0, 48).expect("next region");
    assert_ne!(next, region);
    let seen = client.scope(0).expect("in use");
    assert_eq!(seen.frames, 48);
    assert!(seen.data[..64].iter().all(|&v| v == 0.25));
    assert!(seen.data[64..].iter().all(|&v| v == -0.5));

    // The pool holds 128 x 8192 floats, as scsynth's: 42 more buffers of 2 x 4096 frames (three
    // regions each) fit beside the first; then it is full until one comes back.
    let taken: Vec<u32> = (1..128).filter(|&i| scopes.acquire(i, 2, 4096).is_some()).collect();
    assert_eq!(taken.len(), 42);
    assert!(scopes.acquire(127, 2, 4096).is_none());
    scopes.release(taken[10]);
    assert!(scopes.acquire(127, 2, 4096).is_some(), "a freed buffer's room is reused");
    scopes.release(0);
    assert_eq!(client.scope(0), None);
    assert!(scopes.acquire(0, 2, 64).is_some());
}
