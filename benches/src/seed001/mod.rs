//! Seed 001 reproduced: K. Morokoshi, T. Yakoh, "The effect of periodic
//! data-link cut-offs on TCP throughput" (docs/papers.md), and the two
//! remedies the paper proposes but does not evaluate.
//!
//! Set-up (the paper's, where it gives one): one sender -> switch -> receiver,
//! 1 Gbit/s links; the *switch* periodically cuts what it forwards (the cut
//! sits on the switch -> receiver link): in `drop` mode (the paper's S-TDMA
//! "exclusive" mode) it discards arrivals during the cut and loses the frame
//! on the wire when the cut begins. Ethernet-sized frames: 1500-byte IP
//! packets (QUIC: 1472-byte UDP payloads + 28 bytes IPv4/UDP; TCP model:
//! 1460-byte segments + 40 bytes TCP/IP), 12 us each at 1 Gbit/s.
//!
//! Our choices where the paper gives none: 10 us propagation delay per hop;
//! switch buffer 1000 packets (DropTail), sender queue 1000 packets; the
//! "seed" of a point is the phase of the cut-off relative to the flow start
//! (the flow starts at t = 0, the connected interval at `phase`).
//!
//! Remedies: `hold` (the switch queues during the cut and, knowing its own
//! schedule, never starts a frame it cannot finish before the cut: a guard
//! interval), `pause` (the switch PAUSEs the sender's link just before each
//! cut, IEEE 802.3x style; the sender's queue holds the data), and
//! `hold_abort` (queueing without the guard: the frame on the wire at the
//! cut is lost).
//!
//! Timeouts: the TCP model counts its RTOs; for QUIC, quinn-proto's "PTO
//! fired" trace event is counted (RFC 9002 §6.2), see
//! [`crate::seed001_timeouts`].
//!
//! The TCP model's timers (stated in [`Transport`]'s flows): RFC 6298 with a
//! min RTO of 200 ms and an initial RTO of 1 s, and a fast retransmit
//! restarts the retransmission timer (`tcp.restart_timer_on_fast_retransmit`,
//! the model's default, as ns-2 and Linux do). Without the restart the
//! model timed out one RTO after the last ACK of new data; at a 1 ms period
//! with a 200 ms min RTO every later RTO (0.2 s backed off to 0.4, 0.8, ...)
//! is a whole number of periods, so once one timeout falls into a cut the
//! next ones do too (a phase lock; with a min RTO of 206.18 ms there is
//! none). ns-2 restarts it; `cargo bench -p tput-benches --bench tcp_ns2`
//! compares both simulators on this path with and without the lock.
//!
//! # Why QUIC collapses at a 100 us period
//!
//! At a 100 us period QUIC's throughput collapses at every occupancy below
//! 1 (3, 4, 2 and 0 Mbit/s at 0.99, 0.95, 0.9 and 0.8 in a 0.5 s run, NewReno)
//! although whole frames in the connected intervals would carry over
//! 930 Mbit/s. A per-packet trace (`tputctl sim --qlog DIR` on this path with
//! `period = "100us"`, `connected = 0.95`; quinn-proto's qlog events
//! `packet_sent`, `packet_lost`, `metrics_updated`) shows why:
//!
//! - Every cut loses the frame on the wire when it begins and whatever the
//!   switch is handed during it: about one packet in every 8 (a 1472-byte
//!   datagram is 12 us on the wire, 8 fit in a period). Each loss halves the
//!   window, so after the first millisecond it holds 2-3 packets (min RTT
//!   65 us).
//! - With 2-3 packets in flight, a loss often leaves the receiver one
//!   ack-eliciting packet short of the two after which it acknowledges at
//!   once, and it waits its `max_ack_delay` of 25 ms (RFC 9000 §13.2.1)
//!   before acknowledging; when the lost packet was the last of its flight,
//!   nothing later declares it lost by the packet threshold (RFC 9002
//!   §6.1.1) and only the probe timeout recovers it, `smoothed_rtt +
//!   max(4 rttvar, 1 ms) + max_ack_delay` (§6.2.1), again 25 ms and more at
//!   a 0.07 ms RTT. In 300 ms at occupancy 0.95 the sender sent 143 packets
//!   (22 lost) and stood idle in 12 gaps of 24-26 ms: 10 ended by an ACK
//!   whose RTT sample is 25.07 ms (the receiver's delay), 2 by a PTO.
//!
//! So the flow sends a dozen packets per 25 ms. A check with a local patch
//! to the node (not in the tree) that enables quinn-proto's ACK frequency
//! extension: acknowledging every packet (`ack_eliciting_threshold` 0) gives
//! 11, 10, 6 and 1 Mbit/s at 0.99, 0.95, 0.9 and 0.8 (the gaps that remain
//! end in PTOs, 26 ms each);
//! also asking for a `max_ack_delay` of 100 us, which shortens the PTO to
//! a fraction of a millisecond, gives 102, 54, 38 and 13 Mbit/s. What is
//! left is the loss rate itself, one packet in eight, for a loss-based
//! controller. TCP (the model and ns-2) collapses here as well, for the
//! same reason at a larger scale: its tail losses wait for a 200 ms RTO.
//!
//! # As a plan
//!
//! [`Seed001`] is a [`Reproduction`]: every sweep simulation is a point of
//! its plan, whose points keep their flow's interval records and the links'
//! counters and count their timeouts while they run (`keep.timeouts`: the
//! counter is a `tracing` subscriber, so it must run in the process that
//! simulates); [`crate::repro`] runs them here, prints them (`--plan`) or
//! builds every table and sweep figure from results run elsewhere (`--from
//! DIR`; see `benches/benches/seed001.rs`). The mechanism timelines need the
//! controllers' traces, which no point result keeps: they are in no plan and
//! run where the tables are built.

use std::path::Path;
use std::time::{Duration, Instant};

use tput_cc::ControllerSpec;
use tput_cc::units::Rate;
use tput_lab::scenario::{
    CutModeSpec, CutoffSpec, DelayedAck, FlowGroup, LinkSpec, RunOptions, Scenario, ScenarioResult, TcpSpec,
    TopologySpec, run_with,
};
use tput_tcp::Recovery;

use crate::repro::{Built, Measurements, Planned, Reproduction};
use crate::seed001_timeouts::{Timeout, TimeoutCounter};
use crate::thread_cpu_secs;
use tput_lab::plan::{Keep, collapse_intervals};

mod tables;
mod timelines;

pub use tables::{collapsed, threshold};

/// Link rate, bits per second (the paper's 1 Gbit/s).
pub const LINK_BPS: u64 = 1_000_000_000;
/// IP packet size on the wire, bytes (Ethernet MTU).
pub const IP_PACKET: u64 = 1500;
/// QUIC's UDP payload: 1500 - 28 bytes of IPv4 + UDP header.
const QUIC_MTU: u16 = 1472;
/// The TCP model's segment: 1500 - 40 bytes of TCP/IP header.
const TCP_SEGMENT: u64 = 1460;
/// Sender's own queue (its NIC), packets.
const SENDER_QUEUE: u32 = 1000;
/// Interval of the delivery records (resolution of the idle gap).
const INTERVAL: Duration = Duration::from_millis(10);

/// The transports compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Transport {
    /// The TCP model, NewReno recovery (RFC 6582), min RTO 200 ms.
    TcpNewReno,
    /// The TCP model, SACK recovery (RFC 6675), min RTO 200 ms.
    TcpSack,
    /// QUIC (quinn-proto) with NewReno (RFC 9002 §7).
    QuicNewReno,
    /// QUIC (quinn-proto) with CUBIC (RFC 9438).
    QuicCubic,
}

impl Transport {
    /// All four, in table order.
    pub const ALL: [Transport; 4] = [
        Transport::TcpNewReno,
        Transport::TcpSack,
        Transport::QuicNewReno,
        Transport::QuicCubic,
    ];

    /// The name in tables and files.
    pub fn name(self) -> &'static str {
        match self {
            Transport::TcpNewReno => "TCP NewReno",
            Transport::TcpSack => "TCP SACK",
            Transport::QuicNewReno => "QUIC NewReno",
            Transport::QuicCubic => "QUIC CUBIC",
        }
    }

    fn is_tcp(self) -> bool {
        matches!(self, Transport::TcpNewReno | Transport::TcpSack)
    }

    fn flow(self) -> FlowGroup {
        let spec = |t: &str| -> ControllerSpec { t.parse().expect("a valid controller spec") };
        let tcp = |recovery| TcpSpec {
            recovery: Some(recovery),
            segment: Some(TCP_SEGMENT),
            delayed_ack: Some(DelayedAck::Switch(false)),
            // The model's defaults, stated: RFC 6298's initial RTO, and the
            // timer restarted by a fast retransmit (ns-2, Linux).
            initial_rto: Some(Duration::from_secs(1)),
            restart_timer_on_fast_retransmit: Some(true),
            ..TcpSpec::default()
        };
        let g = match self {
            Transport::TcpNewReno => FlowGroup::new(spec("newreno")).over_tcp(tcp(Recovery::NewReno)),
            Transport::TcpSack => FlowGroup::new(spec("newreno")).over_tcp(tcp(Recovery::Sack)),
            Transport::QuicNewReno => FlowGroup::new(spec("newreno")),
            Transport::QuicCubic => FlowGroup::new(spec("cubic")),
        };
        g.with_start_jitter(Duration::ZERO)
    }
}

/// Where the cut sits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// In the switch, on what it forwards (switch -> receiver): the paper's.
    Switch,
    /// On the sender's own link (sender -> switch), as the shipped
    /// `scenarios/seed001-cutoff.toml` had it before.
    SenderLink,
}

/// One simulation.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// Which study: `drop`, `hold`, `pause`, `hold_abort`, `delay x10`,
    /// `buffer /10`, `buffer /10 hold`, `sender link`.
    pub study: &'static str,
    /// Transport.
    pub transport: Transport,
    /// Cut-off period.
    pub period: Duration,
    /// Connected share of each period (the paper's occupancy).
    pub occupancy: f64,
    /// Phase seed (1-based).
    pub seed: u64,
    /// Cut-off mode.
    pub mode: CutModeSpec,
    /// Where the cut sits.
    pub placement: Placement,
    /// One-way propagation delay per hop.
    pub delay: Duration,
    /// Switch buffer, packets.
    pub switch_queue: u32,
    /// Simulated time.
    pub duration: Duration,
}

impl Point {
    /// The cut-off's phase for this point's seed: a fraction of the period
    /// from the golden-ratio sequence (0.618, 0.236, 0.854, ...).
    pub fn phase(&self) -> Duration {
        let frac = (self.seed as f64 * 0.618_033_988_749_895).fract();
        Duration::from_nanos((self.period.as_nanos() as f64 * frac).round() as u64)
    }

    /// The scenario of this point.
    pub fn scenario(&self) -> Scenario {
        let hop = |queue: u32| LinkSpec::new(Rate::from_bits_per_sec(LINK_BPS), self.delay).with_queue_packets(queue);
        let cut = CutoffSpec {
            period: self.period,
            connected: self.occupancy,
            phase: Some(self.phase()),
            mode: self.mode,
            pause_lead: None,
        };
        let (mut first, mut second) = (hop(SENDER_QUEUE), hop(self.switch_queue));
        match self.placement {
            Placement::Switch => second.cutoff = Some(cut),
            Placement::SenderLink => first.cutoff = Some(cut),
        }
        let mut s = Scenario::new(
            self.duration,
            TopologySpec::chain(vec![first, second]),
            vec![self.transport.flow()],
        );
        s.name = Some(format!("seed001-{}", self.study));
        s.seed = self.seed;
        s.mtu = QUIC_MTU;
        s.interval = INTERVAL;
        s
    }

    /// The point's name in progress lines and errors.
    pub fn label(&self) -> String {
        format!(
            "{} {} period {} occupancy {:.3} seed {}",
            self.study,
            self.transport.name(),
            fmt_period(self.period),
            self.occupancy,
            self.seed
        )
    }
}

/// A period as the paper writes it (`10us`, `1ms`).
pub fn fmt_period(p: Duration) -> String {
    tput_cc::units::format_duration(p)
}

/// What one simulation measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// The point.
    pub point: Point,
    /// Verified payload bytes * 8 / duration, Mbit/s (0 if the handshake
    /// never completed or the transfer never reported).
    pub throughput_mbps: f64,
    /// The QUIC handshake completed, judged by the transfer having left a
    /// trace: an interval record at the sender or verified bytes at the
    /// receiver (always true for the TCP model, which has no handshake).
    pub handshake_ok: bool,
    /// Retransmission timeouts (TCP) or PTO expiries (QUIC) of the sender.
    pub timeouts: u32,
    /// The longest run of consecutive timeouts.
    pub max_consecutive: u32,
    /// The longest stretch with no payload delivered, seconds (resolution
    /// 10 ms), from the flow's start to the end of the run.
    pub longest_idle_secs: f64,
    /// Queue high-water mark of the switch's output (packets).
    pub switch_hw_packets: u64,
    /// Queue high-water mark of the sender's link (packets).
    pub sender_hw_packets: u64,
    /// The queueing delay the largest of those two high-water marks adds,
    /// ms (its bytes at the link rate).
    pub added_delay_ms: f64,
    /// Packets lost to the cut (aborted on the wire or discarded).
    pub cut_losses: u64,
    /// The simulation's CPU seconds when [`measure`] ran it (0 for a plan
    /// point: the framework's `cpu.csv` has those).
    pub cpu_secs: f64,
}

/// The ceiling the link itself puts on a point, Mbit/s of 1500-byte packets'
/// payload, whatever the transport: in `drop`/`hold_abort` mode a frame is
/// only delivered if it fits whole in a connected interval, so at most
/// `floor(connected / frame time)` frames per period pass; in `hold` (the
/// guard) the same; in `pause` too. At occupancy 1 the full rate.
pub fn link_bound_mbps(period: Duration, occupancy: f64, payload: u64) -> f64 {
    let frame_ns = (IP_PACKET * 8 * 1_000_000_000).div_ceil(LINK_BPS) as f64;
    let per_packet = payload as f64 * 8.0;
    if occupancy >= 1.0 {
        return LINK_BPS as f64 / (IP_PACKET as f64 * 8.0) * per_packet / 1e6;
    }
    let connected = occupancy * period.as_nanos() as f64;
    let frames = (connected / frame_ns).floor();
    frames * per_packet / period.as_secs_f64() / 1e6
}

/// Payload per 1500-byte packet: the TCP segment, or QUIC's UDP payload less
/// about 40 bytes of short header, AEAD tag and STREAM frame header.
fn payload_of(t: Transport) -> u64 {
    if t.is_tcp() {
        TCP_SEGMENT
    } else {
        u64::from(QUIC_MTU) - 40
    }
}

/// Runs `p`, counting timeouts (with controller traces, which a plan
/// point's result does not keep: the mechanism timelines use this).
pub fn measure(p: &Point) -> Result<(PointResult, ScenarioResult, Vec<Timeout>), String> {
    let s = p.scenario();
    let (cpu0, wall0) = (thread_cpu_secs(), Instant::now());
    let (r, timeouts) = TimeoutCounter::run(|| run_with(&s, &RunOptions::default(), |_| {}));
    let r = r.map_err(|e| e.to_string())?;
    let cpu = cpu0
        .zip(thread_cpu_secs())
        .map_or(wall0.elapsed().as_secs_f64(), |(a, b)| b - a);
    let res = measure_from(p, &r, &timeouts, cpu)?;
    Ok((res, r, timeouts))
}

/// What `p` measured, from its run's result `r` and the timeouts counted
/// while it ran (`cpu`: the simulation's CPU seconds, 0 when unknown): the
/// one place where a local run and results collected from elsewhere become
/// tables.
fn measure_from(p: &Point, r: &ScenarioResult, timeouts: &[Timeout], cpu: f64) -> Result<PointResult, String> {
    let f = r.flows.first().ok_or("no flow")?;
    let secs = p.duration.as_secs_f64();
    // On runs of sending and of silence, as a plan's points keep them
    // (`Keep::interval_runs`): the same figures from either.
    let intervals = collapse_intervals(&f.intervals);
    let handshake_ok = p.transport.is_tcp() || !intervals.is_empty() || f.bytes > 0;
    // Longest run of empty intervals, then the tail after the last record.
    let mut longest = 0.0f64;
    let mut run = 0.0;
    let mut last_end = 0.0;
    for iv in &intervals {
        if iv.bytes == 0 {
            run += iv.end_secs - iv.start_secs;
        } else {
            run = 0.0;
        }
        longest = longest.max(run);
        last_end = iv.end_secs;
    }
    let tail = (secs - f.start_secs - last_end).max(0.0);
    longest = longest.max(if intervals.last().is_some_and(|iv| iv.bytes == 0) {
        run + tail
    } else {
        tail
    });
    if !handshake_ok {
        longest = secs;
    }
    let (hw_sender, hw_switch) = (
        r.links.first().map_or(Default::default(), |l| l.queued_max),
        r.links.get(2).map_or(Default::default(), |l| l.queued_max),
    );
    let hw_bytes = hw_sender.bytes.max(hw_switch.bytes);
    let cut_losses = r.links.iter().map(|l| l.dropped_cutoff.packets).sum();
    let max_consecutive = timeouts.iter().map(|t| t.consecutive).max().unwrap_or(0);
    let res = PointResult {
        point: p.clone(),
        throughput_mbps: f.bytes as f64 * 8.0 / secs / 1e6,
        handshake_ok,
        timeouts: timeouts.len() as u32,
        max_consecutive,
        longest_idle_secs: longest.min(secs),
        switch_hw_packets: hw_switch.packets,
        sender_hw_packets: hw_sender.packets,
        added_delay_ms: hw_bytes as f64 * 8.0 / LINK_BPS as f64 * 1e3,
        cut_losses,
        cpu_secs: cpu,
    };
    Ok(res)
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Simulated time of the main sweep (the paper: 10 s).
    pub duration: Duration,
    /// Simulated time of the remedy and sensitivity sweeps.
    pub side_duration: Duration,
    /// Cut-off periods.
    pub periods: Vec<Duration>,
    /// Occupancies of the main sweep.
    pub occupancies: Vec<f64>,
    /// Occupancies of the remedy and sensitivity sweeps.
    pub side_occupancies: Vec<f64>,
    /// Phase seeds of the main sweep.
    pub seeds: Vec<u64>,
    /// Phase seeds of the remedy and sensitivity sweeps.
    pub side_seeds: Vec<u64>,
    /// Transports.
    pub transports: Vec<Transport>,
    /// Run the remedies (`hold`, `pause`, `hold_abort`).
    pub remedies: bool,
    /// Run the sensitivity curves (10x delay, 10x smaller buffer).
    pub sensitivity: bool,
    /// Run the placement comparison (cut on the sender's link).
    pub placement: bool,
    /// Simulated time of each mechanism timeline (0: none).
    pub timeline_duration: Duration,
}

/// The paper's periods.
pub fn paper_periods() -> Vec<Duration> {
    vec![
        Duration::from_micros(10),
        Duration::from_micros(100),
        Duration::from_millis(1),
        Duration::from_millis(10),
    ]
}

impl Options {
    /// The full reproduction (see the bench's docs for its size).
    pub fn full() -> Self {
        Options {
            duration: Duration::from_secs(10),
            side_duration: Duration::from_secs(3),
            periods: paper_periods(),
            occupancies: vec![0.5, 0.7, 0.8, 0.85, 0.89, 0.92, 0.95, 0.97, 0.98, 0.99, 0.995, 1.0],
            side_occupancies: vec![0.5, 0.7, 0.85, 0.95],
            seeds: vec![1, 2, 3],
            side_seeds: vec![1],
            transports: Transport::ALL.to_vec(),
            remedies: true,
            sensitivity: true,
            placement: true,
            timeline_duration: Duration::from_secs(10),
        }
    }

    /// A quick smoke test of every table and figure.
    pub fn short() -> Self {
        Options {
            duration: Duration::from_secs(2),
            side_duration: Duration::from_secs(1),
            occupancies: vec![0.5, 0.89, 0.95, 1.0],
            side_occupancies: vec![0.7],
            seeds: vec![1],
            timeline_duration: Duration::from_secs(2),
            ..Options::full()
        }
    }

    fn base(&self, study: &'static str, t: Transport, period: Duration, occ: f64, seed: u64) -> Point {
        Point {
            study,
            transport: t,
            period,
            occupancy: occ,
            seed,
            mode: CutModeSpec::Drop,
            placement: Placement::Switch,
            delay: Duration::from_micros(10),
            switch_queue: 1000,
            duration: self.duration,
        }
    }

    /// Every point, main sweep first.
    pub fn points(&self) -> Vec<Point> {
        let mut v = Vec::new();
        for &t in &self.transports {
            for &period in &self.periods {
                for &occ in &self.occupancies {
                    // Occupancy 1 never cuts: one seed says it all.
                    let seeds = if occ >= 1.0 { &self.seeds[..1] } else { &self.seeds[..] };
                    for &seed in seeds {
                        v.push(self.base("drop", t, period, occ, seed));
                    }
                }
            }
        }
        let mut side = |study: &'static str, f: &dyn Fn(&mut Point)| {
            for &t in &self.transports {
                for &period in &self.periods {
                    for &occ in &self.side_occupancies {
                        for &seed in &self.side_seeds {
                            let mut p = self.base(study, t, period, occ, seed);
                            p.duration = self.side_duration;
                            f(&mut p);
                            v.push(p);
                        }
                    }
                }
            }
        };
        if self.remedies {
            side("hold", &|p| p.mode = CutModeSpec::Hold);
            side("pause", &|p| p.mode = CutModeSpec::Pause);
            side("hold_abort", &|p| p.mode = CutModeSpec::HoldAbort);
            side("drop (short)", &|_| {});
        }
        if self.sensitivity {
            side("delay x10", &|p| p.delay = Duration::from_micros(100));
            side("buffer /10", &|p| p.switch_queue = 100);
            side("buffer /10 hold", &|p| {
                p.switch_queue = 100;
                p.mode = CutModeSpec::Hold;
            });
        }
        if self.placement {
            side("sender link", &|p| p.placement = Placement::SenderLink);
        }
        v
    }
}

/// Seed 001's reproduction: the sweeps and timelines [`Options`] asks for.
#[derive(Debug, Clone)]
pub struct Seed001 {
    /// What to run.
    pub options: Options,
}

impl Reproduction for Seed001 {
    type Point = Point;
    type Measured = PointResult;

    fn name(&self) -> &'static str {
        "seed001"
    }

    /// Every sweep point, each labelled with its study, transport, period
    /// and occupancy (its seed is the point's own `seed`), keeping its
    /// flow's interval records, the links' counters and the timeouts
    /// counted while it runs.
    fn points(&self) -> Result<Vec<Planned<Point>>, String> {
        let keep = Keep {
            intervals: true,
            interval_runs: true,
            timeouts: true,
            ..Keep::result()
        };
        Ok(self
            .options
            .points()
            .into_iter()
            .map(|p| {
                let labels = [
                    ("study", p.study.to_string()),
                    ("transport", p.transport.name().to_string()),
                    ("period_us", p.period.as_micros().to_string()),
                    ("occupancy", p.occupancy.to_string()),
                ];
                let scenario = p.scenario();
                Planned::new(p, labels, scenario, keep.clone())
            })
            .collect())
    }

    fn label(&self, p: &Point) -> String {
        p.label()
    }

    fn measure(&self, p: &Point, r: &tput_lab::plan::PointResult) -> Result<PointResult, String> {
        let (Some(result), Some(timeouts)) = (r.result.as_ref(), r.timeouts.as_ref()) else {
            return Err("the point's result keeps no per-flow results or timeouts (not from this bench's plan)".into());
        };
        measure_from(p, result, timeouts, 0.0)
    }

    fn progress(&self, x: &PointResult) -> String {
        format!(
            "{:.1} Mbit/s, {} timeouts (max {} in a row), idle {:.2} s",
            x.throughput_mbps, x.timeouts, x.max_consecutive, x.longest_idle_secs
        )
    }

    /// The sweep's tables and figures, then the mechanism timelines (run
    /// here, wherever the sweep ran).
    fn build(&self, out: &Path, measured: &Measurements<Point, PointResult>) -> Result<Built, String> {
        let o = &self.options;
        let points: Vec<PointResult> = measured.iter().filter_map(|(_, m)| m.as_ref().ok().cloned()).collect();
        let mut built = Built {
            text: tables::tables(o, &points),
            files: tables::write_sweep(o, out, &points)?,
            ..Built::default()
        };
        if !o.timeline_duration.is_zero() {
            let (text, files) = timelines::timelines(o, out, &points, |l| eprintln!("{l}"))?;
            built.text.push_str(&text);
            built.files.extend(files);
        }
        Ok(built)
    }
}
