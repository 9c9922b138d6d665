//! The simulator back end: a [`Node`] hosted by `tput-netsim` in virtual time.
//!
//! [`QuicHost`] implements [`tput_netsim::Host`] by mapping each call one to
//! one onto the node, with [`SimTime::to_instant`] for `now`; the node code is
//! the same that runs over UDP sockets. [`OracleBandwidth`] feeds the
//! simulator's bandwidth oracle to the guarantee controller (seed 000's set-up).

use std::collections::VecDeque;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use tput_cc::BandwidthSource;
use tput_netsim::{Addr, Datagram, FileArrivals, FlowId, Host, OracleHandle, SimTime};

use tput_transport::{IntervalStats, Node, NodeEvent, ServerTrust, TransferOutcome, TransferSpec};

/// The simulator's bandwidth oracle as a [`BandwidthSource`]: `A` = the link's
/// capacity minus the throughput of all flows but the excluded ones, `P` = the
/// link's rate, both exact and current (what the paper's simulations used).
#[derive(Debug, Clone)]
pub struct OracleBandwidth(pub OracleHandle);

impl BandwidthSource for OracleBandwidth {
    fn available(&self, _now: Instant) -> Option<f64> {
        Some(self.0.available_bits_per_sec() as f64 / 8.0)
    }
    fn physical(&self, _now: Instant) -> Option<f64> {
        Some(self.0.capacity_bits_per_sec() as f64 / 8.0)
    }
}

/// Transfers started as files arrive (seed 003): exponential gaps, Pareto sizes.
#[derive(Debug)]
pub struct FileWorkload {
    /// The arrival process.
    pub arrivals: FileArrivals,
    /// No new file starts at or after this time.
    pub until: SimTime,
    /// Template of each file's transfer; its byte count is replaced by the file size.
    pub template: TransferSpec,
    /// The server to fetch from or upload to.
    pub server: Addr,
}

/// A QUIC node living in the simulator.
pub struct QuicHost {
    node: Node,
    epoch: Instant,
    trust: ServerTrust,
    server_name: String,
    starts: VecDeque<(SimTime, Addr, TransferSpec)>,
    files: Option<(FileWorkload, Option<(SimTime, u64)>)>,
    outcomes: Vec<TransferOutcome>,
    intervals: Vec<(u64, IntervalStats)>,
    start_errors: Vec<String>,
    /// Datagrams of a GSO batch not handed to the simulator yet.
    pending: VecDeque<Datagram>,
}

impl std::fmt::Debug for QuicHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuicHost")
            .field("node", &self.node)
            .field("outcomes", &self.outcomes.len())
            .finish()
    }
}

impl QuicHost {
    /// Host `node`; `epoch` is the `Instant` that virtual time zero maps to
    /// (the same for every host of a run). Clients trust servers as `trust` says.
    pub fn new(node: Node, epoch: Instant, trust: ServerTrust) -> Self {
        Self {
            node,
            epoch,
            trust,
            server_name: "localhost".into(),
            starts: VecDeque::new(),
            files: None,
            outcomes: Vec::new(),
            intervals: Vec::new(),
            start_errors: Vec::new(),
            pending: VecDeque::new(),
        }
    }

    /// Start `spec` towards `server` at virtual time `at`. Call before the
    /// simulator reaches `at` (starts are kept in time order).
    pub fn schedule(&mut self, at: SimTime, server: Addr, spec: TransferSpec) {
        let i = self.starts.partition_point(|(t, ..)| *t <= at);
        self.starts.insert(i, (at, server, spec));
    }

    /// Run a file workload: a new connection per file.
    pub fn set_files(&mut self, mut workload: FileWorkload) {
        let first = workload.arrivals.next().filter(|(t, _)| *t < workload.until);
        self.files = Some((workload, first));
    }

    /// Finished transfers, in the order they ended.
    pub fn outcomes(&self) -> &[TransferOutcome] {
        &self.outcomes
    }

    /// Interval records of this host's sending transfers: (transfer id, record).
    pub fn intervals(&self) -> &[(u64, IntervalStats)] {
        &self.intervals
    }

    /// Transfers that could not even start (bad configuration), with the reason.
    pub fn start_errors(&self) -> &[String] {
        &self.start_errors
    }

    /// The node, e.g. to read controller snapshots.
    pub fn node(&self) -> &Node {
        &self.node
    }

    fn instant(&self, t: SimTime) -> Instant {
        t.to_instant(self.epoch)
    }

    fn collect(&mut self) {
        while let Some(ev) = self.node.poll_event() {
            match ev {
                NodeEvent::Interval { id, stats } => self.intervals.push((id, stats)),
                NodeEvent::Finished(outcome) => self.outcomes.push(*outcome),
            }
        }
    }

    fn start_due(&mut self, now: SimTime) {
        let at = self.instant(now);
        while self.starts.front().is_some_and(|(t, ..)| *t <= now) {
            let (_, server, spec) = self.starts.pop_front().expect("front exists");
            if let Err(e) = self
                .node
                .start_transfer(at, server.to_socket_addr(), &self.server_name, &self.trust, spec)
            {
                self.start_errors.push(e.to_string());
            }
        }
        if let Some((w, next)) = &mut self.files {
            while let Some((t, bytes)) = *next
                && t <= now
            {
                let mut spec = w.template.clone();
                spec.bytes = Some(bytes);
                spec.duration = None;
                let server = w.server.to_socket_addr();
                if let Err(e) = self
                    .node
                    .start_transfer(at, server, &self.server_name, &self.trust, spec)
                {
                    self.start_errors.push(e.to_string());
                }
                *next = w.arrivals.next().filter(|(t, _)| *t < w.until);
            }
        }
    }

    fn next_start(&self) -> Option<SimTime> {
        let file = self.files.as_ref().and_then(|(_, next)| next.map(|(t, _)| t));
        [self.starts.front().map(|(t, ..)| *t), file]
            .into_iter()
            .flatten()
            .min()
    }
}

impl Host for QuicHost {
    fn on_attach(&mut self, now: SimTime, _local: Addr) {
        self.start_due(now);
    }

    fn on_datagram(&mut self, now: SimTime, from: Addr, flow: FlowId, payload: Bytes) {
        // quinn-proto decrypts in place; this is the datagram's only copy when
        // the sender still shares the buffer.
        let data = payload.try_into_mut().unwrap_or_else(|b| BytesMut::from(&b[..]));
        let at = self.instant(now);
        self.node.handle_datagram(at, from.to_socket_addr(), flow, data);
        self.collect();
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Datagram> {
        loop {
            if let Some(d) = self.pending.pop_front() {
                return Some(d);
            }
            let out = self.node.poll_transmit()?;
            match Addr::from_socket_addr(out.destination) {
                // One datagram, the simulator's usual case (the node is left at one segment).
                Some(dst) if out.segment_size.is_none() => {
                    return Some(Datagram {
                        dst,
                        flow: out.flow,
                        payload: out.payload,
                    });
                }
                Some(dst) => self.pending.extend(out.datagrams().map(|payload| Datagram {
                    dst,
                    flow: out.flow,
                    payload,
                })),
                None => tracing::warn!(dst = %out.destination, "dropping a datagram to a non-simulator address"),
            }
        }
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        let node = self.node.poll_timeout().map(|t| SimTime::from_instant(t, self.epoch));
        [node, self.next_start()].into_iter().flatten().min()
    }

    fn on_timeout(&mut self, now: SimTime) {
        self.start_due(now);
        let at = self.instant(now);
        self.node.handle_timeout(at);
        self.collect();
    }
}
