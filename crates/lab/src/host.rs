//! The simulator back end: a [`Node`] hosted by `tput-netsim` in virtual time.
//!
//! [`QuicHost`] implements [`tput_netsim::Host`] by mapping each call one to
//! one onto the node, with [`SimTime::to_instant`] for `now`; the node code is
//! the same that runs over UDP sockets. [`OracleBandwidth`] feeds the
//! simulator's bandwidth oracle to the guarantee controller (seed 000's set-up).
//!
//! The host also traces the controller of each transfer it starts with
//! [`QuicHost::schedule`] ([`QuicHost::cc_traces`]): see [`CcSample`] for the
//! sampling rule.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::{Bytes, BytesMut};
use serde::Serialize;
use tput_cc::units::Rate;
use tput_cc::{AlgorithmState, BandwidthSource, BbrMode, Snapshot};
use tput_netsim::{Addr, Datagram, Ecn, FileArrivals, FlowId, Host, OracleHandle, SimTime};

use tput_transport::{Direction, IntervalStats, Node, NodeEvent, ServerTrust, TransferOutcome, TransferSpec};

mod samples;
pub use samples::{CcSamples, Iter as CcSamplesIter};

/// The sending controller's state at one moment of simulated time.
///
/// Sampling rule ([`QuicHost::cc_traces`]): the host reads the controller
/// after every datagram and timer event and keeps a sample when one of these
/// fields changed. A change that only grows the window within
/// [`TRACE_MIN_GAP_SECS`] of the last kept sample is held back (the latest
/// such state replaces the one held); every other change (the window shrinks,
/// `ssthresh`, `k`, `s` or BBR's state changes) is kept at once, preceded by the held-back
/// state, so the peaks and troughs of a sawtooth are exact while steady
/// growth costs at most one sample per flow per millisecond.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize)]
pub struct CcSample {
    /// Simulated time, seconds since the start of the run.
    pub time_secs: f64,
    /// Congestion window, bytes.
    pub cwnd_bytes: u64,
    /// Slow-start threshold, bytes (`None` while infinite).
    pub ssthresh_bytes: Option<u64>,
    /// The guarantee controller's slope `k` (packets per RTT); `None` for other controllers.
    pub k: Option<f64>,
    /// The guarantee controller's control slot `s`, RTTs; `None` for other controllers.
    pub slot_rtts: Option<u32>,
    /// The guarantee controller's `k_bw` before the clamp; `None` for other controllers.
    pub k_bw: Option<f64>,
    /// The guarantee controller's `k_max` (infinite when unlimited); `None` for other controllers.
    pub k_max: Option<f64>,
    /// The guarantee controller's control-slot goal `g_i`, bytes per second; `None` for other controllers.
    pub goal_bytes_per_sec: Option<f64>,
    /// The guarantee controller's loss floor, bytes (0 in the paper's mode); `None` for other controllers.
    pub floor_bytes: Option<u64>,
    /// BBR's state (`BBR.state`, draft-ietf-ccwg-bbr-06 §5.3); `None` for
    /// other controllers. A change of state is kept at once.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bbr_mode: Option<BbrMode>,
}

impl CcSample {
    /// The sample of `snap` at `time_secs`.
    pub fn new(time_secs: f64, snap: &Snapshot) -> Self {
        let mut sample = Self {
            time_secs,
            cwnd_bytes: snap.cwnd_bytes,
            ssthresh_bytes: snap.ssthresh_bytes,
            ..Self::default()
        };
        if let AlgorithmState::Guarantee {
            k,
            slot_rtts,
            k_bw,
            k_max,
            goal_bytes_per_sec,
            floor_bytes,
            ..
        } = snap.state
        {
            sample.k = Some(k);
            sample.slot_rtts = Some(slot_rtts);
            sample.k_bw = Some(k_bw);
            sample.k_max = Some(k_max.unwrap_or(f64::INFINITY));
            sample.goal_bytes_per_sec = Some(goal_bytes_per_sec);
            sample.floor_bytes = Some(floor_bytes);
        }
        if let AlgorithmState::Bbr { mode, .. } = snap.state {
            sample.bbr_mode = Some(mode);
        }
        sample
    }

    /// Whether the traced fields equal those of `other` (the time aside).
    fn same_state(&self, other: &Self) -> bool {
        self.cwnd_bytes == other.cwnd_bytes
            && self.ssthresh_bytes == other.ssthresh_bytes
            && self.k.map(f64::to_bits) == other.k.map(f64::to_bits)
            && self.slot_rtts == other.slot_rtts
            && self.bbr_mode == other.bbr_mode
    }

    /// Whether going from `self` to `next` is only window growth.
    fn only_grows_to(&self, next: &Self) -> bool {
        next.cwnd_bytes >= self.cwnd_bytes
            && next.ssthresh_bytes == self.ssthresh_bytes
            && next.k.map(f64::to_bits) == self.k.map(f64::to_bits)
            && next.slot_rtts == self.slot_rtts
            && next.bbr_mode == self.bbr_mode
    }
}

/// The time-weighted mean window of a trace over `[from, to)` seconds,
/// bytes: a sample's window holds until the next sample (the trace is a
/// step function), so each counts for the time it held. The plain mean of
/// the samples is biased: a reduction is always kept, while growth is kept
/// at most once per [`TRACE_MIN_GAP_SECS`]. `None` if no sample is at or
/// before `from` or the span is empty.
///
/// ```
/// use tput_lab::host::{CcSample, cc_time_average};
/// let at = |t: f64, w: u64| CcSample { time_secs: t, cwnd_bytes: w, ..CcSample::default() };
/// // 10 kB for 0.9 s, then three quick samples in 0.1 s.
/// let trace = [at(0.0, 10_000), at(0.9, 20_000), at(0.95, 20_000), at(0.99, 20_000)];
/// let avg = cc_time_average(&trace, 0.0, 1.0).unwrap();
/// assert!((avg - 11_000.0).abs() < 1e-6, "{avg}"); // the plain mean: 17 500
/// ```
pub fn cc_time_average(samples: &[CcSample], from: f64, to: f64) -> Option<f64> {
    if to <= from || samples.first().is_none_or(|s| s.time_secs > from) {
        return None;
    }
    let mut area = 0.0;
    for (i, s) in samples.iter().enumerate() {
        let start = s.time_secs.max(from);
        let end = samples.get(i + 1).map_or(to, |n| n.time_secs).min(to);
        if end > start {
            area += s.cwnd_bytes as f64 * (end - start);
        }
    }
    Some(area / (to - from))
}

/// Minimum simulated time between two kept samples of pure window growth (see [`CcSample`]).
pub const TRACE_MIN_GAP_SECS: f64 = 1e-3;

/// The trace of one transfer's controller, built by the rule on [`CcSample`].
#[derive(Debug, Clone, Default)]
pub(crate) struct CcTrace {
    /// The transfer id in the node.
    id: u64,
    samples: CcSamples,
    /// The latest state not kept yet (window growth within the gap).
    held: Option<CcSample>,
    /// The transfer is gone: no more samples.
    done: bool,
}

impl CcTrace {
    pub(crate) fn push(&mut self, s: CcSample) {
        let current = self.held.as_ref().or(self.samples.last());
        if current.is_some_and(|c| c.same_state(&s)) {
            return;
        }
        match self.samples.last() {
            Some(&last) if last.only_grows_to(&s) && self.held.is_none_or(|h| h.only_grows_to(&s)) => {
                if s.time_secs - last.time_secs >= TRACE_MIN_GAP_SECS {
                    self.samples.push(s);
                    self.held = None;
                } else {
                    self.held = Some(s);
                }
            }
            _ => {
                self.samples.extend(self.held.take());
                self.samples.push(s);
            }
        }
    }

    pub(crate) fn finish(&mut self) -> CcSamples {
        self.samples.extend(self.held.take());
        self.samples.shrink_to_fit();
        std::mem::take(&mut self.samples)
    }
}

/// The simulator's bandwidth oracle as a [`BandwidthSource`]: `A` = the link's
/// capacity minus the throughput of all flows but the excluded ones, `P` = the
/// link's rate, both exact and current (what the paper's simulations used).
#[derive(Debug, Clone)]
pub struct OracleBandwidth(pub OracleHandle);

impl BandwidthSource for OracleBandwidth {
    fn available(&self, _now: Instant) -> Option<Rate> {
        Some(Rate::from_bits_per_sec(self.0.available().bits_per_sec()))
    }
    fn physical(&self, _now: Instant) -> Option<Rate> {
        Some(Rate::from_bits_per_sec(self.0.capacity().bits_per_sec()))
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
    /// Controller traces of scheduled uploads, in start order.
    traces: Vec<CcTrace>,
    /// Whether uploads get a [`CcTrace`].
    tracing: bool,
    /// Datagrams of a GSO batch not handed to the simulator yet.
    pending: VecDeque<Datagram>,
    /// Files of the file workload whose connection was created.
    files_started: u64,
    /// Whether datagrams carry quinn-proto's ECN codepoints both ways.
    ecn: bool,
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
            traces: Vec::new(),
            tracing: true,
            pending: VecDeque::new(),
            files_started: 0,
            ecn: false,
        }
    }

    /// Speak ECN (RFC 9000 §13.4): send every datagram with the codepoint
    /// quinn-proto asks for and hand quinn-proto the codepoint each datagram
    /// arrived with. Off by default: datagrams are Not-ECT and quinn-proto
    /// hears of no codepoint, so its ECN validation fails and it sends
    /// Not-ECT too.
    pub fn with_ecn(mut self) -> Self {
        self.ecn = true;
        self
    }

    /// Keep no controller traces ([`cc_traces`](Self::cc_traces) stays empty).
    pub fn without_cc_traces(mut self) -> Self {
        self.tracing = false;
        self
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

    /// Files of the file workload started so far (a file that could not even
    /// start is in [`start_errors`](Self::start_errors) as well).
    pub fn files_started(&self) -> u64 {
        self.files_started
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

    /// Controller traces of the uploads started with [`schedule`](Self::schedule),
    /// as (transfer id, samples) in start order, by the rule on [`CcSample`]. Downloads
    /// (whose controller is on the server) and file workloads are not traced.
    pub fn cc_traces(&self) -> Vec<(u64, CcSamples)> {
        self.traces
            .iter()
            .map(|t| {
                let mut t = t.clone();
                (t.id, t.finish())
            })
            .collect()
    }

    /// Take the controller traces out of the host (see [`cc_traces`](Self::cc_traces)).
    pub fn take_cc_traces(&mut self) -> Vec<(u64, CcSamples)> {
        std::mem::take(&mut self.traces)
            .into_iter()
            .map(|mut t| (t.id, t.finish()))
            .collect()
    }

    /// The node, e.g. to read controller snapshots.
    pub fn node(&self) -> &Node {
        &self.node
    }

    fn instant(&self, t: SimTime) -> Instant {
        t.to_instant(self.epoch)
    }

    /// Sample the controller of every traced transfer at `now`.
    fn trace(&mut self, now: SimTime) {
        let secs = now.as_secs_f64();
        for t in self.traces.iter_mut().filter(|t| !t.done) {
            match self.node.snapshot(t.id) {
                Some(snap) => t.push(CcSample::new(secs, &snap)),
                // Not reported yet (handshake), or the connection is gone.
                None => t.done = !t.samples.is_empty() || t.held.is_some(),
            }
        }
    }

    fn collect(&mut self) {
        while let Some(ev) = self.node.poll_event() {
            match ev {
                NodeEvent::Interval { id, stats } => self.intervals.push((id, stats)),
                NodeEvent::Finished(outcome) => self.outcomes.push(*outcome),
                _ => {}
            }
        }
    }

    fn start_due(&mut self, now: SimTime) {
        let at = self.instant(now);
        while self.starts.front().is_some_and(|(t, ..)| *t <= now) {
            let (_, server, spec) = self.starts.pop_front().expect("front exists");
            let upload = spec.direction == Direction::Upload;
            match self
                .node
                .start_transfer(at, server.to_socket_addr(), &self.server_name, &self.trust, spec)
            {
                Ok(id) if upload && self.tracing => self.traces.push(CcTrace {
                    id,
                    ..CcTrace::default()
                }),
                Ok(_) => {}
                Err(e) => self.start_errors.push(e.to_string()),
            }
        }
        if let Some((w, next)) = &mut self.files {
            while let Some((t, bytes)) = *next
                && t <= now
            {
                let mut spec = w.template.clone();
                spec.bytes = Some(bytes);
                spec.duration = None;
                self.files_started += 1;
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

    fn on_datagram(&mut self, now: SimTime, from: Addr, _flow: FlowId, ecn: Ecn, payload: Bytes) {
        // quinn-proto decrypts in place; this is the datagram's only copy when
        // the sender still shares the buffer.
        let data = payload.try_into_mut().unwrap_or_else(|b| BytesMut::from(&b[..]));
        let at = self.instant(now);
        let ecn = if self.ecn {
            quinn_proto::EcnCodepoint::from_bits(ecn.bits())
        } else {
            None
        };
        self.node.handle_datagram_ecn(at, from.to_socket_addr(), ecn, data);
        self.trace(now);
        self.collect();
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Datagram> {
        loop {
            if let Some(d) = self.pending.pop_front() {
                return Some(d);
            }
            let out = self.node.poll_transmit()?;
            let flow = self.node.flow();
            let ecn = match out.ecn {
                Some(e) if self.ecn => Ecn::from_bits(e as u8),
                _ => Ecn::NotEct,
            };
            match Addr::from_socket_addr(out.destination) {
                // One datagram, the simulator's usual case (the node is left at one segment).
                Some(dst) if out.segment_size.is_none() => {
                    return Some(Datagram {
                        dst,
                        flow,
                        ecn,
                        payload: out.payload,
                    });
                }
                Some(dst) => self.pending.extend(out.datagrams().map(|payload| Datagram {
                    dst,
                    flow,
                    ecn,
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
        // Lets a `tracing` subscriber time quinn-proto's own events (such as
        // its "PTO fired" trace, RFC 9002 §6.2) in simulated time; free when
        // nothing subscribes.
        let _span =
            tracing::trace_span!("sim_timeout", now_ns = now.as_nanos(), server = self.node.is_server()).entered();
        self.node.handle_timeout(at);
        self.trace(now);
        self.collect();
    }
}
