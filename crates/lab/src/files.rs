//! File-transfer workloads (seed 003: R. Araki, TCP variants under
//! power-saving link-rate control; see docs/papers.md): the accounting of
//! every file ([`FileStats`]) and the TCP model's file hosts
//! ([`TcpFileClient`], [`TcpFileServer`]).
//!
//! A file is a new connection. Its *total time*, the primary figure, runs
//! from the file's arrival at the sender (the connection's creation) until
//! the sender holds the confirmation that its last byte arrived and verified:
//! the TCP model's ACK of the last byte (ns-2's "last ACK"), QUIC's receiver
//! report, which the receiver sends as it verifies the last byte. Handshake,
//! initial losses and their timeouts are in it, as in the paper's ns-2
//! measurement (from the file's arrival at the sender to the last ACK). Its
//! *transfer time*, kept beside it, runs from the moment the receiver sees
//! the transfer begin (QUIC: the request arrives at the server; the TCP
//! model, which has no handshake: the first segment arrives at the sink) to
//! the arrival of its last byte. The paper's mean file transfer time `D_e`
//! is the sum of the total times over the number of completed files, pooled
//! over every flow ([`pooled_mean`]). A file that never completes is counted,
//! never dropped: refused (the server's connection limit), failed, or
//! unfinished when the run ends.
//!
//! # The TCP model's wire format for files
//!
//! One TCP connection per file, multiplexed over one address pair: each data
//! datagram of [`crate::tcp`] gets a 12-byte prefix (the connection number as
//! a big-endian `u32`, the file's size as a `u64`), each ACK a 4-byte prefix
//! (the connection number). A data packet is thus `segment + 52` bytes on the
//! wire with the default overhead (12 more than a bulk flow's).

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use serde::Serialize;
use tput_cc::{BandwidthSource, ControllerSpec};
use tput_netsim::{Addr, Datagram, Ecn, FileArrivals, FlowId, Host, SimTime};

use crate::tcp::{Amount, TcpConfig, TcpSender, TcpSink, TcpTransfer};

/// What became of the files of one flow (or, merged, of many).
#[derive(Debug, Clone, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct FileStats {
    /// Files whose connection was created.
    pub started: u64,
    /// Transfer time of each completed file (first arrival at the receiver
    /// to its last byte), seconds, in completion order.
    pub transfer_secs: Vec<f64>,
    /// Total time of each completed file (from its creation at the sender to
    /// the sender's confirmation of its last byte; see the module docs),
    /// seconds, paired with `transfer_secs`: the primary figure.
    pub total_secs: Vec<f64>,
    /// Size of each completed file, bytes, paired with `transfer_secs`.
    pub sizes: Vec<u64>,
    /// Files the server refused (its connection limit).
    pub refused: u64,
    /// Files that failed otherwise (the connection broke, a byte did not verify).
    pub failed: u64,
    /// Files still running when the run ended.
    pub unfinished: u64,
}

impl FileStats {
    /// Files that completed.
    pub fn completed(&self) -> usize {
        self.transfer_secs.len()
    }

    /// Files that did not complete: refused + failed + unfinished.
    pub fn lost(&self) -> u64 {
        self.refused + self.failed + self.unfinished
    }

    /// Add `other`'s files to these.
    pub fn merge(&mut self, other: &FileStats) {
        self.started += other.started;
        self.transfer_secs.extend_from_slice(&other.transfer_secs);
        self.total_secs.extend_from_slice(&other.total_secs);
        self.sizes.extend_from_slice(&other.sizes);
        self.refused += other.refused;
        self.failed += other.failed;
        self.unfinished += other.unfinished;
    }

    /// The paper's `D_e` over these files: sum of total times (creation to
    /// the last byte's confirmation) / completed files; `None` if none completed.
    pub fn mean_total_secs(&self) -> Option<f64> {
        crate::stats::mean(self.total_secs.iter().copied())
    }

    /// The same with transfer times (first arrival at the receiver to the
    /// last byte: no handshake, no initial wait).
    pub fn mean_transfer_secs(&self) -> Option<f64> {
        crate::stats::mean(self.transfer_secs.iter().copied())
    }
}

/// All files of `flows` pooled into one [`FileStats`] (so that `D_e` is the
/// sum of every file's time over every completed file, not a mean of
/// per-flow means).
pub fn pooled<'a>(flows: impl IntoIterator<Item = &'a FileStats>) -> FileStats {
    let mut all = FileStats::default();
    for f in flows {
        all.merge(f);
    }
    all
}

/// `D_e` pooled over `flows`: see [`pooled`] and [`FileStats::mean_total_secs`].
pub fn pooled_mean<'a>(flows: impl IntoIterator<Item = &'a FileStats>) -> Option<f64> {
    pooled(flows).mean_total_secs()
}

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
            let transfer = TcpTransfer {
                dst: self.dst,
                flow: self.flow,
                start: t,
                amount: Amount::Bytes(bytes),
                interval: Duration::ZERO,
            };
            let sender = TcpSender::new(self.cfg.clone(), cc, self.epoch, transfer).without_cc_trace();
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
                return Some(Datagram {
                    dst: d.dst,
                    flow: d.flow,
                    ecn: Ecn::NotEct,
                    payload: prefixed(&prefix, &d.payload),
                });
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
            self.out.push_back(Datagram {
                dst: d.dst,
                flow: d.flow,
                ecn: Ecn::NotEct,
                payload: prefixed(&conn.to_be_bytes(), &d.payload),
            });
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
            sink: TcpSink::new(cfg.clone(), Duration::ZERO, Duration::ZERO, 0.0),
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

/// The files of a TCP flow: `client`'s starts and last ACKs joined with
/// `server`'s arrivals. A file completes when its sender has its last byte
/// acknowledged.
pub fn tcp_file_stats(client: &TcpFileClient, server: &TcpFileServer) -> FileStats {
    let mut s = FileStats {
        started: client.started(),
        ..FileStats::default()
    };
    let mut done = Vec::new();
    for conn in 0..client.started() as u32 {
        let (created, bytes) = client.file(conn).expect("started");
        match (server.file(conn), client.acked(conn)) {
            (Some((first, Some(end))), Some(acked)) => done.push((acked, end, first, created, bytes)),
            _ => s.unfinished += 1,
        }
    }
    done.sort_by_key(|&(acked, ..)| acked);
    for (acked, end, first, created, bytes) in done {
        s.transfer_secs.push(end.saturating_duration_since(first).as_secs_f64());
        s.total_secs
            .push(acked.saturating_duration_since(created).as_secs_f64());
        s.sizes.push(bytes);
    }
    s
}
