//! Timed datagrams through a relay: what the relay's accuracy is measured
//! with (`crates/lab/examples/relay_accuracy.rs`, the `live_timing` bench)
//! and what its tests check the accounting with.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

/// The first 8 bytes of the datagram that ends a [`blast`].
const END: u64 = u64::MAX;

/// One datagram that arrived, times in nanoseconds from the blast's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Arrival {
    /// When it was sent.
    pub sent_ns: u64,
    /// When it arrived.
    pub at_ns: u64,
}

impl Arrival {
    /// Its one-way time, send to arrival.
    pub fn one_way_ns(&self) -> u64 {
        self.at_ns.saturating_sub(self.sent_ns)
    }
}

/// Sends `count` datagrams of `size` bytes (at least 8) from a fresh
/// socket to `to` at `pps` per second, each carrying its send time, then
/// one that marks the end; returns what `sink` received, in arrival
/// order, until the end marker arrives or `quiet` passes with nothing
/// (a relay that drops the marker ends it that way). Pacing sleeps, so
/// that a relay on the same machine keeps its core; each datagram
/// carries its own send time, so pacing need not be exact.
pub fn blast(
    to: SocketAddr,
    sink: &UdpSocket,
    size: usize,
    pps: f64,
    count: u64,
    quiet: Duration,
) -> std::io::Result<Vec<Arrival>> {
    let t0 = Instant::now();
    let sink = sink.try_clone()?;
    sink.set_read_timeout(Some(quiet))?;
    let rx = std::thread::spawn(move || {
        let mut buf = vec![0u8; 65_536];
        let mut got = Vec::new();
        while let Ok(n) = sink.recv(&mut buf) {
            let at_ns = t0.elapsed().as_nanos() as u64;
            if n >= 8 {
                let sent_ns = u64::from_be_bytes(buf[..8].try_into().expect("8 bytes"));
                if sent_ns == END {
                    break;
                }
                got.push(Arrival { sent_ns, at_ns });
            }
        }
        got
    });
    let tx = UdpSocket::bind(match to {
        SocketAddr::V4(_) => "127.0.0.1:0",
        SocketAddr::V6(_) => "[::1]:0",
    })?;
    let mut payload = vec![0u8; size.max(8)];
    for i in 0..count {
        let due = Duration::from_secs_f64(i as f64 / pps);
        if let Some(wait) = due.checked_sub(t0.elapsed()) {
            std::thread::sleep(wait);
        }
        let now = t0.elapsed().as_nanos() as u64;
        payload[..8].copy_from_slice(&now.to_be_bytes());
        let _ = tx.send_to(&payload, to);
    }
    payload[..8].copy_from_slice(&END.to_be_bytes());
    let _ = tx.send_to(&payload, to);
    rx.join()
        .map_err(|_| std::io::Error::other("the receiving thread panicked"))
}
