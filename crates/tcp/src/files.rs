//! File transfers over the model (seed 003: R. Araki, TCP variants under
//! power-saving link-rate control): one TCP connection per file, each
//! created when its file arrives, multiplexed over one address pair.
//! [`TcpFileClient`] runs a [`TcpSender`] per file, [`TcpFileServer`] a
//! [`TcpSink`] per connection; together they know when each file was
//! created, when its first segment and its last byte arrived, and when its
//! sender had the last byte acknowledged (ns-2's "last ACK").
//!
//! # Wire format
//!
//! Each data datagram of the model (see the crate docs) gets a 12-byte
//! prefix (the connection number as a big-endian `u32`, the file's size as
//! a `u64`), each ACK a 4-byte prefix (the connection number). A data packet
//! is thus `segment + 52` bytes on the wire with the default overhead (12
//! more than a bulk flow's).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use tput_cc::{BandwidthSource, ControllerSpec};
use tput_netsim::{Addr, Datagram, Ecn, FileArrivals, FlowId, Host, SimTime};

use crate::{Amount, TcpConfig, TcpSender, TcpSink, TcpTransfer};

/// Bytes of the prefix of a data datagram (connection number, file size).
const DATA_PREFIX: usize = 12;
/// Bytes of the prefix of an ACK (connection number).
const ACK_PREFIX: usize = 4;

fn prefixed(prefix: &[u8], payload: &[u8]) -> Bytes {
    let mut b = BytesMut::with_capacity(prefix.len() + payload.len());
    b.put_slice(prefix);
    b.put_slice(payload);
    b.freeze()
}

/// A file the client started.
#[derive(Debug, Clone, Copy)]
struct Started {
    created: SimTime,
    bytes: u64,
    /// When its sender had every byte acknowledged.
    acked: Option<SimTime>,
}

/// The sending end of a TCP file workload: one [`TcpSender`] per file, each
/// created when its file arrives and dropped when its last byte is
/// acknowledged.
pub struct TcpFileClient {
    cfg: TcpConfig,
    cc: ControllerSpec,
    bandwidth: Option<Arc<dyn BandwidthSource>>,
    epoch: Instant,
    dst: Addr,
    flow: FlowId,
    arrivals: FileArrivals,
    until: SimTime,
    next: Option<(SimTime, u64)>,
    /// Running senders: (connection number, sender).
    active: Vec<(u32, TcpSender)>,
    started: Vec<Started>,
    /// Where the round robin over `active` resumes.
    turn: usize,
}

impl std::fmt::Debug for TcpFileClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpFileClient")
            .field("started", &self.started.len())
            .field("active", &self.active.len())
            .finish()
    }
}

impl TcpFileClient {
    /// Files of `arrivals` that start before `until`, each sent to `dst`
    /// (a [`TcpFileServer`]) by a new sender with `cfg` and a new `cc`
    /// controller, datagrams tagged with `flow`.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        cfg: TcpConfig,
        cc: ControllerSpec,
        bandwidth: Option<Arc<dyn BandwidthSource>>,
        epoch: Instant,
        dst: Addr,
        flow: FlowId,
        mut arrivals: FileArrivals,
        until: SimTime,
    ) -> Self {
        let next = arrivals.next().filter(|(t, _)| *t < until);
        Self {
            cfg,
            cc,
            bandwidth,
            epoch,
            dst,
            flow,
            arrivals,
            until,
            next,
            active: Vec::new(),
            started: Vec::new(),
            turn: 0,
        }
    }

    /// Files started so far.
    pub fn started(&self) -> u64 {
        self.started.len() as u64
    }

    /// Creation time and size of file (connection) `conn`.
    pub fn file(&self, conn: u32) -> Option<(SimTime, u64)> {
        self.started.get(conn as usize).map(|s| (s.created, s.bytes))
    }

    /// When file `conn`'s sender had its last byte acknowledged.
    pub fn acked(&self, conn: u32) -> Option<SimTime> {
        self.started.get(conn as usize).and_then(|s| s.acked)
    }

    /// Files whose sender still waits for acknowledgements.
    pub fn running(&self) -> usize {
        self.active.len()
    }

    fn start_due(&mut self, now: SimTime) {
        while let Some((t, bytes)) = self.next
            && t <= now
        {
            let conn = self.started.len() as u32;
            self.started.push(Started {
                created: t,
                bytes,
                acked: None,
            });
            let cc = self
                .cc
                .for_payload_acks()
                .build_in(self.cfg.segment as u16, self.bandwidth.clone(), None);
            let transfer = TcpTransfer::new(self.dst, self.flow, t, Amount::Bytes(bytes));
            let sender = TcpSender::new(self.cfg.clone(), cc, self.epoch, transfer);
            self.active.push((conn, sender));
            self.next = self.arrivals.next().filter(|(t, _)| *t < self.until);
        }
    }

    fn drop_finished(&mut self) {
        let before = self.active.len();
        for (conn, s) in &self.active {
            if let Some(t) = s.finished_at() {
                self.started[*conn as usize].acked = Some(t);
            }
        }
        self.active.retain(|(_, s)| !s.is_finished());
        if self.active.len() != before {
            self.turn = 0;
        }
    }
}

impl Host for TcpFileClient {
    fn on_attach(&mut self, now: SimTime, _local: Addr) {
        self.start_due(now);
    }

    fn on_datagram(&mut self, now: SimTime, from: Addr, flow: FlowId, ecn: Ecn, payload: Bytes) {
        if payload.len() < ACK_PREFIX {
            return;
        }
        let conn = u32::from_be_bytes(payload[..ACK_PREFIX].try_into().expect("4 bytes"));
        if let Some((_, s)) = self.active.iter_mut().find(|(c, _)| *c == conn) {
            s.on_datagram(now, from, flow, ecn, payload.slice(ACK_PREFIX..));
        }
        self.drop_finished();
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        let n = self.active.len();
        for k in 0..n {
            let i = (self.turn + k) % n;
            let (conn, s) = &mut self.active[i];
            if let Some(d) = s.poll_transmit(now) {
                let size = self.started[*conn as usize].bytes;
                let mut prefix = [0u8; DATA_PREFIX];
                prefix[..4].copy_from_slice(&conn.to_be_bytes());
                prefix[4..].copy_from_slice(&size.to_be_bytes());
                self.turn = i + 1;
                return Some(Datagram::new(d.dst, d.flow, prefixed(&prefix, &d.payload)));
            }
        }
        None
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        let senders = self.active.iter_mut().filter_map(|(_, s)| s.poll_timeout()).min();
        [senders, self.next.map(|(t, _)| t)].into_iter().flatten().min()
    }

    fn on_timeout(&mut self, now: SimTime) {
        self.start_due(now);
        for (_, s) in &mut self.active {
            if s.poll_timeout().is_some_and(|t| t <= now) {
                s.on_timeout(now);
            }
        }
        self.drop_finished();
    }
}

/// One connection at the receiving end.
#[derive(Debug)]
struct Incoming {
    sink: TcpSink,
    size: u64,
    first: SimTime,
    done: Option<SimTime>,
}

/// The receiving end of a TCP file workload: a [`TcpSink`] per connection,
/// created by its first segment; it records when each file began to arrive
/// and when its last byte arrived.
#[derive(Debug)]
pub struct TcpFileServer {
    cfg: TcpConfig,
    conns: BTreeMap<u32, Incoming>,
    out: VecDeque<Datagram>,
    corrupt: u64,
}

impl TcpFileServer {
    /// A server whose sinks follow `cfg`'s ACK policy.
    pub fn new(cfg: TcpConfig) -> Self {
        Self {
            cfg,
            conns: BTreeMap::new(),
            out: VecDeque::new(),
            corrupt: 0,
        }
    }

    /// Connection `conn`'s first arrival and, once complete, the arrival of its last byte.
    pub fn file(&self, conn: u32) -> Option<(SimTime, Option<SimTime>)> {
        self.conns.get(&conn).map(|c| (c.first, c.done))
    }

    /// Datagrams too short to carry the prefix.
    pub fn corrupt(&self) -> u64 {
        self.corrupt
    }

    fn drain(&mut self, conn: u32, now: SimTime) {
        let Some(c) = self.conns.get_mut(&conn) else { return };
        if c.done.is_none() && c.sink.delivered() >= c.size {
            c.done = Some(now);
        }
        while let Some(d) = c.sink.poll_transmit(now) {
            self.out
                .push_back(Datagram::new(d.dst, d.flow, prefixed(&conn.to_be_bytes(), &d.payload)));
        }
    }
}

impl Host for TcpFileServer {
    fn on_datagram(&mut self, now: SimTime, from: Addr, flow: FlowId, ecn: Ecn, payload: Bytes) {
        if payload.len() < DATA_PREFIX {
            self.corrupt += 1;
            return;
        }
        let conn = u32::from_be_bytes(payload[..4].try_into().expect("4 bytes"));
        let size = u64::from_be_bytes(payload[4..DATA_PREFIX].try_into().expect("8 bytes"));
        let cfg = &self.cfg;
        let c = self.conns.entry(conn).or_insert_with(|| Incoming {
            // No interval records or slots per file.
            sink: TcpSink::new(cfg.clone(), Duration::ZERO, None),
            size,
            first: now,
            done: None,
        });
        c.sink.on_datagram(now, from, flow, ecn, payload.slice(DATA_PREFIX..));
        self.drain(conn, now);
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Datagram> {
        self.out.pop_front()
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        self.conns.values_mut().filter_map(|c| c.sink.poll_timeout()).min()
    }

    fn on_timeout(&mut self, now: SimTime) {
        let due: Vec<u32> = self
            .conns
            .iter_mut()
            .filter_map(|(&k, c)| c.sink.poll_timeout().is_some_and(|t| t <= now).then_some(k))
            .collect();
        for conn in due {
            if let Some(c) = self.conns.get_mut(&conn) {
                c.sink.on_timeout(now);
            }
            self.drain(conn, now);
        }
    }
}
