//! Toy hosts shared by the integration tests.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::Duration;

use bytes::Bytes;
use tput_netsim::{Addr, Datagram, Ecn, FlowId, Host, Rng, SimTime};

/// Sends scripted datagrams at scripted times. Payload byte 0..4 carries the
/// sequence number (little endian) when the payload is at least 4 bytes.
pub struct Scripted {
    /// (time, dst, flow, payload length), in time order.
    pub script: VecDeque<(SimTime, Addr, FlowId, usize)>,
    pub seq: u32,
}

impl Scripted {
    pub fn new(mut items: Vec<(SimTime, Addr, FlowId, usize)>) -> Self {
        items.sort_by_key(|i| i.0);
        Scripted {
            script: items.into(),
            seq: 0,
        }
    }
}

pub fn payload(seq: u32, len: usize) -> Bytes {
    let mut v = vec![0u8; len];
    if len >= 4 {
        v[..4].copy_from_slice(&seq.to_le_bytes());
    }
    Bytes::from(v)
}

impl Host for Scripted {
    fn on_datagram(&mut self, _: SimTime, _: Addr, _: FlowId, _: Ecn, _: Bytes) {}
    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        let &(t, dst, flow, len) = self.script.front()?;
        if t > now {
            return None;
        }
        self.script.pop_front();
        let d = Datagram {
            dst,
            flow,
            ecn: Ecn::NotEct,
            payload: payload(self.seq, len),
        };
        self.seq += 1;
        Some(d)
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        self.script.front().map(|i| i.0)
    }
    fn on_timeout(&mut self, _: SimTime) {}
}

/// Records every arrival: (time, from, flow, seq, len).
#[derive(Default)]
pub struct Recorder {
    pub got: Vec<(SimTime, Addr, FlowId, u32, usize)>,
}

impl Recorder {
    pub fn seqs(&self) -> Vec<u32> {
        self.got.iter().map(|g| g.3).collect()
    }
    pub fn times_us(&self) -> Vec<f64> {
        self.got.iter().map(|g| g.0.as_nanos() as f64 / 1000.0).collect()
    }
}

impl Host for Recorder {
    fn on_datagram(&mut self, now: SimTime, from: Addr, flow: FlowId, _: Ecn, p: Bytes) {
        let seq = if p.len() >= 4 {
            u32::from_le_bytes(p[..4].try_into().unwrap())
        } else {
            0
        };
        self.got.push((now, from, flow, seq, p.len()));
    }
    fn poll_transmit(&mut self, _: SimTime) -> Option<Datagram> {
        None
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        None
    }
    fn on_timeout(&mut self, _: SimTime) {}
}

/// Constant-rate source: `size`-byte payloads every `interval` in
/// `[start, stop)`.
pub struct Pacer {
    pub dst: Addr,
    pub flow: FlowId,
    pub size: usize,
    pub interval: Duration,
    pub next: SimTime,
    pub stop: SimTime,
    pub due: bool,
    pub sent: u64,
}

impl Pacer {
    pub fn new(dst: Addr, flow: FlowId, size: usize, interval: Duration, start: SimTime, stop: SimTime) -> Self {
        Pacer {
            dst,
            flow,
            size,
            interval,
            next: start,
            stop,
            due: false,
            sent: 0,
        }
    }
}

impl Host for Pacer {
    fn on_datagram(&mut self, _: SimTime, _: Addr, _: FlowId, _: Ecn, _: Bytes) {}
    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        if self.next > now || self.next >= self.stop {
            return None;
        }
        self.next += self.interval;
        self.sent += 1;
        Some(Datagram {
            dst: self.dst,
            flow: self.flow,
            ecn: Ecn::NotEct,
            payload: Bytes::from(vec![0u8; self.size]),
        })
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        (self.next < self.stop).then_some(self.next)
    }
    fn on_timeout(&mut self, _: SimTime) {
        self.due = true;
    }
}

/// Window-based toy sender: keeps up to `window` datagrams unacknowledged;
/// each ACK releases one more; if no ACK arrives for `rto` the window is
/// refilled (so losses never stall it). Starts at a random jitter.
pub struct WindowSender {
    pub dst: Addr,
    pub flow: FlowId,
    pub window: u32,
    pub outstanding: u32,
    pub size: usize,
    pub start: SimTime,
    pub rto: Duration,
    pub last_progress: SimTime,
    pub acked: u64,
    pub seq: u32,
    pub started: bool,
}

impl WindowSender {
    pub fn new(dst: Addr, flow: FlowId, window: u32, size: usize, rng: &mut Rng, max_jitter: Duration) -> Self {
        let start = SimTime::from_nanos(rng.below(max_jitter.as_nanos() as u64 + 1));
        WindowSender {
            dst,
            flow,
            window,
            outstanding: 0,
            size,
            start,
            rto: Duration::from_millis(200),
            last_progress: start,
            acked: 0,
            seq: 0,
            started: false,
        }
    }
}

impl Host for WindowSender {
    fn on_datagram(&mut self, now: SimTime, _: Addr, _: FlowId, _: Ecn, _: Bytes) {
        self.outstanding = self.outstanding.saturating_sub(1);
        self.acked += 1;
        self.last_progress = now;
    }
    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        if !self.started || now < self.start || self.outstanding >= self.window {
            return None;
        }
        self.outstanding += 1;
        self.seq += 1;
        Some(Datagram {
            dst: self.dst,
            flow: self.flow,
            ecn: Ecn::NotEct,
            payload: payload(self.seq, self.size),
        })
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        Some(if self.started {
            self.last_progress + self.rto
        } else {
            self.start
        })
    }
    fn on_timeout(&mut self, now: SimTime) {
        if !self.started {
            self.started = true;
            self.last_progress = now;
        } else if now >= self.last_progress + self.rto {
            self.outstanding = 0;
            self.last_progress = now;
        }
    }
}

/// Answers every datagram with a `size`-byte ACK on flow `flow | 0x8000`.
pub struct Acker {
    pub size: usize,
    pub pending: VecDeque<(Addr, FlowId)>,
    pub received: u64,
}

impl Acker {
    pub fn new(size: usize) -> Self {
        Acker {
            size,
            pending: VecDeque::new(),
            received: 0,
        }
    }
}

impl Host for Acker {
    fn on_datagram(&mut self, _: SimTime, from: Addr, flow: FlowId, _: Ecn, _: Bytes) {
        self.received += 1;
        self.pending.push_back((from, flow | 0x8000));
    }
    fn poll_transmit(&mut self, _: SimTime) -> Option<Datagram> {
        let (dst, flow) = self.pending.pop_front()?;
        Some(Datagram {
            dst,
            flow,
            ecn: Ecn::NotEct,
            payload: Bytes::from(vec![0u8; self.size]),
        })
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        None
    }
    fn on_timeout(&mut self, _: SimTime) {}
}
