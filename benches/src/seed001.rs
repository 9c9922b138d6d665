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
//! Every sweep simulation is a point of [`plan`]: a `tput_lab::plan` plan
//! whose points keep their flow's interval records and the links' counters
//! and count their timeouts while they run (`keep.timeouts`: the counter is
//! a `tracing` subscriber, so it must run in the process that simulates). A
//! local run ([`reproduce`]) runs those points and builds every table and
//! sweep figure from their results as read back from JSON;
//! [`reproduce_from`] builds the same from results that `tputctl sweep run`
//! wrote anywhere (all but `cpu.csv`). The mechanism timelines need the
//! controllers' traces, which no point result keeps: they are in no plan and
//! run where the tables are built. The bench's flags: `--plan`, `--from DIR`
//! (see `benches/benches/seed001.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tput_cc::ControllerSpec;
use tput_cc::units::Rate;
use tput_lab::plot::{Figure, Panel, Series, Trace, line_chart};
use tput_lab::scenario::{
    CutModeSpec, CutoffSpec, DelayedAck, FlowGroup, LinkSpec, RunOptions, Scenario, ScenarioResult, TcpSpec,
    TopologySpec, run_with,
};
use tput_lab::sweep::run_parallel;
use tput_lab::tcp::Recovery;

use crate::seed001_timeouts::{Timeout, TimeoutCounter};
use crate::{Ran, run_point, thread_cpu_secs};
use tput_lab::plan::Keep;

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
            TopologySpec::Chain {
                hops: vec![first, second],
            },
            vec![self.transport.flow()],
        );
        s.name = Some(format!("seed001-{}", self.study));
        s.seed = self.seed;
        s.mtu = QUIC_MTU;
        s.interval = INTERVAL;
        s
    }

    fn label(&self) -> String {
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
    /// The simulation's CPU seconds.
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
    let handshake_ok = p.transport.is_tcp() || !f.intervals.is_empty() || f.bytes > 0;
    // Longest run of empty intervals, then the tail after the last record.
    let mut longest = 0.0f64;
    let mut run = 0.0;
    let mut last_end = 0.0;
    for iv in &f.intervals {
        if iv.bytes == 0 {
            run += iv.end_secs - iv.start_secs;
        } else {
            run = 0.0;
        }
        longest = longest.max(run);
        last_end = iv.end_secs;
    }
    let tail = (secs - f.start_secs - last_end).max(0.0);
    longest = longest.max(if f.intervals.last().is_some_and(|iv| iv.bytes == 0) {
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

/// What to run and where to write it.
#[derive(Debug, Clone)]
pub struct Options {
    /// Output directory.
    pub out_dir: PathBuf,
    /// Worker threads.
    pub jobs: usize,
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
    pub fn full(out_dir: PathBuf) -> Self {
        Options {
            out_dir,
            jobs: tput_lab::sweep::default_jobs(),
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
    pub fn short(out_dir: PathBuf) -> Self {
        Options {
            duration: Duration::from_secs(2),
            side_duration: Duration::from_secs(1),
            occupancies: vec![0.5, 0.89, 0.95, 1.0],
            side_occupancies: vec![0.7],
            seeds: vec![1],
            timeline_duration: Duration::from_secs(2),
            ..Options::full(out_dir)
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

/// Everything a run produced.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The tables, as printed.
    pub text: String,
    /// Every point's result.
    pub points: Vec<PointResult>,
    /// Points that failed, with the reason.
    pub failures: Vec<String>,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// CPU seconds of the timeline runs.
    pub timeline_cpu_secs: f64,
}

/// Every sweep point of `o` and the plan that runs them (same order): each
/// plan point labelled with its study, transport, period and occupancy
/// (its seed is the point's own `seed`), keeping its flow's interval records, the links' counters and the
/// timeouts counted while it runs.
fn planned(o: &Options) -> Result<(Vec<Point>, Vec<tput_lab::plan::Point>), String> {
    let pts = o.points();
    let keep = Keep {
        intervals: true,
        timeouts: true,
        ..Keep::result()
    };
    let items = pts
        .iter()
        .map(|p| {
            let labels = [
                ("study", p.study.to_string()),
                ("transport", p.transport.name().to_string()),
                ("period_us", p.period.as_micros().to_string()),
                ("occupancy", p.occupancy.to_string()),
            ]
            .map(|(k, v)| (k.to_string(), v))
            .into();
            (labels, p.scenario(), keep.clone())
        })
        .collect();
    let plan = tput_lab::plan::plan_scenarios(items).map_err(|e| e.to_string())?;
    Ok((pts, plan))
}

/// The plan of the sweep's simulations, in the order a local run runs
/// them: what `--plan` prints, for `tputctl sweep run FILE --index N --out
/// DIR` to run anywhere and [`reproduce_from`] to build the tables from.
/// The mechanism timelines are not in it (they need controller traces, which
/// a point's result does not keep): they run where the tables are built.
pub fn plan(o: &Options) -> Result<Vec<tput_lab::plan::Point>, String> {
    planned(o).map(|(_, plan)| plan)
}

/// What one plan point gave.
fn measured_of(p: &Point, ran: Ran) -> Result<PointResult, String> {
    let (r, cpu) = ran?;
    let (Some(result), Some(timeouts)) = (r.result.as_ref(), r.timeouts.as_ref()) else {
        return Err("the point's result keeps no per-flow results or timeouts (not from this bench's plan)".into());
    };
    measure_from(p, result, timeouts, cpu)
}

/// Run the reproduction; `progress` gets one line per finished simulation.
/// The sweep's simulations are the points of [`plan`], run here on
/// [`Options::jobs`] threads and read back as a collector reads a file of
/// `tputctl sweep run`; the mechanism timelines run after them.
pub fn reproduce(o: &Options, mut progress: impl FnMut(&str) + Send) -> Result<Report, String> {
    let (pts, plan) = planned(o)?;
    let total = plan.len();
    let ran = run_parallel(&plan, o.jobs, run_point, |done, p, r| {
        let pt = &pts[p.index];
        let line = match r.clone().and_then(|ran| measured_of(pt, Ok(ran))) {
            Ok(x) => format!(
                "{}: {:.1} Mbit/s, {} timeouts (max {} in a row), idle {:.2} s, in {:.1} CPU-s",
                pt.label(),
                x.throughput_mbps,
                x.timeouts,
                x.max_consecutive,
                x.longest_idle_secs,
                x.cpu_secs
            ),
            Err(e) => format!("{}: FAILED: {e}", pt.label()),
        };
        progress(&format!("[{done}/{total}] {line}"));
    });
    build(o, &pts, ran, true, progress)
}

/// Build the tables and figures of `o` from the point results in `dir`
/// (what `tputctl sweep run` wrote for the points of [`plan`] with the same
/// options) instead of simulating the sweep: the same files as
/// [`reproduce`] but for `cpu.csv`. The mechanism timelines, which no plan
/// holds, run here as in a local run. A missing result, or results of
/// another plan, is a one-line error naming the point.
pub fn reproduce_from(o: &Options, dir: &Path, progress: impl FnMut(&str) + Send) -> Result<Report, String> {
    let (pts, plan) = planned(o)?;
    let ran = crate::plan_results(dir, &plan, |i| pts[i].label())?;
    build(
        o,
        &pts,
        ran.into_iter().map(|r| Ok((r, 0.0))).collect(),
        false,
        progress,
    )
}

/// The report, tables and files from the points' results; `local`: the
/// results come from this process, with CPU times (written to `cpu.csv`).
fn build(
    o: &Options,
    pts: &[Point],
    ran: Vec<Ran>,
    local: bool,
    mut progress: impl FnMut(&str) + Send,
) -> Result<Report, String> {
    std::fs::create_dir_all(&o.out_dir).map_err(|e| format!("creating {}: {e}", o.out_dir.display()))?;
    let mut report = Report::default();
    let mut cpu = String::from("study,transport,period_us,occupancy,seed,cpu_s\n");
    for (p, r) in pts.iter().zip(ran) {
        if let Ok((_, secs)) = &r {
            let _ = writeln!(
                cpu,
                "{},{},{},{},{},{secs}",
                p.study,
                p.transport.name(),
                p.period.as_micros(),
                p.occupancy,
                p.seed
            );
        }
        match measured_of(p, r) {
            Ok(x) => report.points.push(x),
            Err(e) => report.failures.push(format!("{}: {e}", p.label())),
        }
    }
    report.text.push_str(&tables(o, &report.points));
    report.files.extend(write_sweep(o, &report.points)?);
    if !o.timeline_duration.is_zero() {
        let (text, files, cpu) = timelines(o, &report.points, &mut progress)?;
        report.text.push_str(&text);
        report.files.extend(files);
        report.timeline_cpu_secs = cpu;
    }
    if !report.failures.is_empty() {
        let _ = writeln!(report.text, "\nFAILED points:");
        for f in &report.failures {
            let _ = writeln!(report.text, "  {f}");
        }
    }
    if local {
        report.files.extend(write_files(&o.out_dir, &[("cpu.csv", cpu)])?);
    }
    let path = o.out_dir.join("tables.txt");
    std::fs::write(&path, &report.text).map_err(|e| format!("writing {}: {e}", path.display()))?;
    report.files.push(path);
    Ok(report)
}

/// Mean of the points of (study, transport, period, occupancy).
fn cell<'a>(points: &'a [PointResult], study: &str, t: Transport, period: Duration, occ: f64) -> Vec<&'a PointResult> {
    points
        .iter()
        .filter(|r| {
            r.point.study == study
                && r.point.transport == t
                && r.point.period == period
                && (r.point.occupancy - occ).abs() < 1e-9
        })
        .collect()
}

fn mean(v: impl IntoIterator<Item = f64>) -> f64 {
    let (s, n) = v.into_iter().fold((0.0, 0usize), |(s, n), x| (s + x, n + 1));
    if n == 0 { f64::NAN } else { s / n as f64 }
}

/// Whether throughput `tput` at `occ` has collapsed: below half of what the
/// link itself would let through at that occupancy with the uncut run's
/// efficiency (`full` = the transport's throughput at occupancy 1).
pub fn collapsed(tput: f64, occ: f64, full: f64) -> bool {
    tput < 0.5 * occ * full
}

/// The collapse threshold of one curve: the lowest occupancy of `occs`
/// (ascending) from which on no point has collapsed ([`collapsed`]).
/// `Some(lowest)` if nothing collapsed, `None` if even the highest
/// occupancy below 1 collapsed.
pub fn threshold(curve: &[(f64, f64)], full: f64) -> Option<f64> {
    let mut th = None;
    for &(occ, tput) in curve.iter().rev() {
        if occ >= 1.0 {
            continue;
        }
        if collapsed(tput, occ, full) {
            break;
        }
        th = Some(occ);
    }
    th
}

fn curve(points: &[PointResult], study: &str, t: Transport, period: Duration, occs: &[f64]) -> Vec<(f64, f64)> {
    occs.iter()
        .filter_map(|&o| {
            let c = cell(points, study, t, period, o);
            (!c.is_empty()).then(|| (o, mean(c.iter().map(|r| r.throughput_mbps))))
        })
        .collect()
}

/// Throughput at occupancy 1 of `t` in `study` (any period: nothing is cut).
fn full_rate(points: &[PointResult], study: &str, t: Transport) -> f64 {
    mean(
        points
            .iter()
            .filter(|r| r.point.study == study && r.point.transport == t && r.point.occupancy >= 1.0)
            .map(|r| r.throughput_mbps),
    )
}

/// An occupancy with as many decimals as it needs (0.5 -> "0.50", 0.995 -> "0.995").
fn fmt_occ(x: f64) -> String {
    let two = format!("{x:.2}");
    if (two.parse::<f64>().unwrap_or(x) - x).abs() < 1e-9 {
        two
    } else {
        format!("{x:.3}")
    }
}

fn tables(o: &Options, points: &[PointResult]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "Seed 001 (Morokoshi & Yakoh, periodic data-link cut-off vs TCP throughput)\n\
         Set-up: sender -> switch -> receiver, 1 Gbit/s links, 10 us propagation per hop (our choice; the paper gives none),\n\
         switch buffer 1000 packets and sender queue 1000 packets (our choice), 1500-byte IP packets (12 us on the wire),\n\
         the cut in the switch on what it forwards (drop: arrivals discarded, the frame on the wire lost); TCP model min RTO 200 ms,\n\
         initial RTO 1 s, the retransmission timer restarted by a fast retransmit (as ns-2 and Linux), no delayed ACKs; QUIC = quinn-proto. Main sweep {} s runs, {} phase seed(s); throughput = verified payload / run time.\n\
         QUIC timeouts = quinn-proto \"PTO fired\" events (probe timeouts, RFC 9002 6.2), TCP timeouts = RTO expiries.\n",
        o.duration.as_secs_f64(),
        o.seeds.len()
    );
    // Throughput vs occupancy, the main figure as a table.
    let _ = writeln!(
        t,
        "Throughput vs occupancy (Mbit/s, mean over seeds; [link bound] = what whole 1500-byte frames in the connected intervals allow)"
    );
    for &period in &o.periods {
        let _ = write!(t, "period {:>6} occ:", fmt_period(period));
        for &occ in &o.occupancies {
            let _ = write!(t, " {:>7}", fmt_occ(occ));
        }
        let _ = writeln!(t);
        for &tr in &o.transports {
            let _ = write!(t, "  {:<17}", tr.name());
            for &occ in &o.occupancies {
                let c = cell(points, "drop", tr, period, occ);
                let _ = write!(t, " {:>7.1}", mean(c.iter().map(|r| r.throughput_mbps)));
            }
            let _ = writeln!(t);
        }
        let _ = write!(t, "  {:<17}", "[link bound TCP]");
        for &occ in &o.occupancies {
            let _ = write!(t, " {:>7.1}", link_bound_mbps(period, occ, TCP_SEGMENT));
        }
        let _ = writeln!(t);
    }
    // Threshold table beside the paper's claims.
    let _ = writeln!(
        t,
        "\nCollapse threshold (lowest occupancy from which on throughput >= half of occupancy x the uncut throughput)\n\
         Paper: for every period throughput collapses below a threshold; the threshold is lowest (most tolerant) at 1 ms."
    );
    let _ = write!(t, "{:<17}", "transport");
    for &period in &o.periods {
        let _ = write!(t, " | {:>14}", fmt_period(period));
    }
    let _ = writeln!(t, " | most tolerant");
    for &tr in &o.transports {
        let full = full_rate(points, "drop", tr);
        let _ = write!(t, "{:<17}", tr.name());
        let mut best: Option<(f64, Vec<Duration>)> = None;
        for &period in &o.periods {
            let th = threshold(&curve(points, "drop", tr, period, &o.occupancies), full);
            let link_th = threshold(
                &o.occupancies
                    .iter()
                    .map(|&x| (x, link_bound_mbps(period, x, payload_of(tr))))
                    .collect::<Vec<_>>(),
                link_bound_mbps(period, 1.0, payload_of(tr)),
            );
            let tag = if th.is_some() && th == link_th || th.is_none() && link_th.is_none() {
                " L"
            } else {
                ""
            };
            let s = match th {
                None => "none".to_string(),
                Some(x) => fmt_occ(x),
            };
            let _ = write!(t, " | {:>14}", format!("{s}{tag}"));
            match (th, &mut best) {
                (Some(x), Some((b, ps))) if (x - *b).abs() < 1e-9 => ps.push(period),
                (Some(x), Some((b, _))) if x > *b => {}
                (Some(x), _) => best = Some((x, vec![period])),
                (None, _) => {}
            }
        }
        let _ = writeln!(
            t,
            " | {}",
            best.map_or("-".into(), |(x, ps)| {
                let names: Vec<String> = ps.iter().map(|p| fmt_period(*p)).collect();
                format!("{} ({})", names.join(" = "), fmt_occ(x))
            })
        );
    }
    let _ = writeln!(
        t,
        "(none = collapsed at every occupancy < 1 in the grid; L = the link's own bound has the same threshold: a link limit,\n\
         not the transport's; at 10 us a 12 us frame never fits a connected interval, so nothing passes below occupancy 1.)"
    );
    // Mechanism: timeouts and idle gaps in the main sweep.
    let _ = writeln!(
        t,
        "\nTimeouts and the longest idle gap (main sweep, mean over seeds: timeouts / max consecutive / longest idle s)"
    );
    for &period in &o.periods {
        let _ = writeln!(t, "period {}", fmt_period(period));
        for &tr in &o.transports {
            let _ = write!(t, "  {:<14}", tr.name());
            for &occ in &o.occupancies {
                let c = cell(points, "drop", tr, period, occ);
                if c.is_empty() {
                    continue;
                }
                let _ = write!(
                    t,
                    " {}:{:.0}/{:.0}/{:.2}",
                    fmt_occ(occ),
                    mean(c.iter().map(|r| f64::from(r.timeouts))),
                    mean(c.iter().map(|r| f64::from(r.max_consecutive))),
                    mean(c.iter().map(|r| r.longest_idle_secs))
                );
            }
            let _ = writeln!(t);
        }
    }
    let fails: Vec<_> = points.iter().filter(|r| !r.handshake_ok).collect();
    let _ = writeln!(
        t,
        "QUIC runs whose handshake never completed (counted as 0 Mbit/s): {}",
        fails.len()
    );
    // Remedies and sensitivity.
    let studies: Vec<&str> = {
        let mut s: Vec<&str> = points.iter().map(|r| r.point.study).filter(|s| *s != "drop").collect();
        s.dedup();
        let mut seen = Vec::new();
        for x in s {
            if !seen.contains(&x) {
                seen.push(x);
            }
        }
        seen
    };
    if !studies.is_empty() {
        let _ = writeln!(
            t,
            "\nRemedies and sensitivity ({} s runs, {} seed(s)): Mbit/s | switch queue high-water (packets) | sender queue high-water | added delay ms",
            o.side_duration.as_secs_f64(),
            o.side_seeds.len()
        );
        let _ = writeln!(
            t,
            "(drop (short) = the paper's drop mode at this run length; delay x10 = 100 us per hop; buffer /10 = switch buffer 100 packets;\n sender link = the cut on the sender's own link instead of the switch)"
        );
        for &period in &o.periods {
            let _ = writeln!(t, "period {}", fmt_period(period));
            for &tr in &o.transports {
                for study in &studies {
                    let _ = write!(t, "  {:<13} {:<16}", tr.name(), study);
                    for &occ in &o.side_occupancies {
                        let c = cell(points, study, tr, period, occ);
                        if c.is_empty() {
                            continue;
                        }
                        let _ = write!(
                            t,
                            " {occ:.2}: {:>6.1} |{:>4.0} |{:>4.0} |{:>5.2}",
                            mean(c.iter().map(|r| r.throughput_mbps)),
                            mean(c.iter().map(|r| r.switch_hw_packets as f64)),
                            mean(c.iter().map(|r| r.sender_hw_packets as f64)),
                            mean(c.iter().map(|r| r.added_delay_ms)),
                        );
                    }
                    let _ = writeln!(t);
                }
            }
        }
    }
    t
}

fn write_sweep(o: &Options, points: &[PointResult]) -> Result<Vec<PathBuf>, String> {
    let mut csv = String::from(
        "study,transport,period_us,occupancy,seed,mode,placement,delay_us,switch_queue,duration_s,throughput_mbps,link_bound_mbps,\
         handshake_ok,timeouts,max_consecutive_timeouts,longest_idle_s,switch_hw_packets,sender_hw_packets,added_delay_ms,cut_losses\n",
    );
    for r in points {
        let p = &r.point;
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{:?},{:?},{},{},{},{:.3},{:.3},{},{},{},{:.3},{},{},{:.4},{}",
            p.study,
            p.transport.name(),
            p.period.as_micros(),
            p.occupancy,
            p.seed,
            p.mode,
            p.placement,
            p.delay.as_micros(),
            p.switch_queue,
            p.duration.as_secs_f64(),
            r.throughput_mbps,
            link_bound_mbps(p.period, p.occupancy, payload_of(p.transport)),
            r.handshake_ok,
            r.timeouts,
            r.max_consecutive,
            r.longest_idle_secs,
            r.switch_hw_packets,
            r.sender_hw_packets,
            r.added_delay_ms,
            r.cut_losses
        );
    }
    let mut files: Vec<(String, String)> = vec![("seed001_points.csv".into(), csv)];
    // One chart per transport: throughput vs occupancy, a line per period.
    for &tr in &o.transports {
        let series: Vec<Series> = o
            .periods
            .iter()
            .map(|&period| Series {
                name: format!("period {}", fmt_period(period)),
                points: curve(points, "drop", tr, period, &o.occupancies),
            })
            .collect();
        files.push((
            format!("throughput_vs_occupancy_{}.svg", slug(tr.name())),
            line_chart(
                &format!("Seed 001: {} throughput vs occupancy (drop in the switch)", tr.name()),
                "occupancy (connected share of each period)",
                "throughput (Mbit/s)",
                &series,
            ),
        ));
        // Remedies at each period (side sweep).
        let studies = [
            "drop (short)",
            "hold",
            "pause",
            "hold_abort",
            "delay x10",
            "buffer /10",
            "buffer /10 hold",
            "sender link",
        ];
        let panels: Vec<Panel> = o
            .periods
            .iter()
            .map(|&period| Panel {
                y_label: format!("Mbit/s, period {}", fmt_period(period)),
                traces: studies
                    .iter()
                    .map(|s| {
                        Trace::Line(Series {
                            name: (*s).into(),
                            points: curve(points, s, tr, period, &o.side_occupancies),
                        })
                    })
                    .filter(|tr| matches!(tr, Trace::Line(s) if !s.points.is_empty()))
                    .collect(),
            })
            .collect();
        if panels.iter().any(|p| !p.traces.is_empty()) {
            files.push((
                format!("remedies_{}.svg", slug(tr.name())),
                Figure {
                    title: format!("Seed 001: {} — remedies and sensitivity", tr.name()),
                    x_label: "occupancy".into(),
                    x_range: Some((0.45, 1.0)),
                    panels,
                }
                .to_svg(),
            ));
        }
    }
    let refs: Vec<(&str, String)> = files.iter().map(|(n, c)| (n.as_str(), c.clone())).collect();
    tput_lab::report::write_files(&o.out_dir, &refs).map_err(|e| e.to_string())
}

fn slug(name: &str) -> String {
    name.to_lowercase().replace(' ', "_")
}

/// The mechanism: for the paper's point (1 ms, 89 %) and for each
/// transport's collapse point at 1 ms (the highest grid occupancy below its
/// threshold), a timeline of delivered Mbit/s per 10 ms, cwnd and the
/// timeouts with their consecutive count.
fn timelines(
    o: &Options,
    points: &[PointResult],
    progress: &mut impl FnMut(&str),
) -> Result<(String, Vec<PathBuf>, f64), String> {
    let period = Duration::from_millis(1);
    let mut text = String::from(
        "\nMechanism timelines (period 1 ms, seed 1): timeouts (max consecutive), the RTO/PTO gaps between consecutive ones\n",
    );
    let mut files = Vec::new();
    let mut cpu = 0.0;
    for &tr in &o.transports {
        let full = full_rate(points, "drop", tr);
        let th = threshold(&curve(points, "drop", tr, period, &o.occupancies), full);
        let mut occs = vec![0.89];
        let below = match th {
            Some(x) => o
                .occupancies
                .iter()
                .copied()
                .filter(|&y| y < x)
                .fold(f64::NAN, f64::max),
            None => o
                .occupancies
                .iter()
                .copied()
                .filter(|&y| y < 1.0)
                .fold(f64::NAN, f64::max),
        };
        if below.is_finite() && (below - 0.89).abs() > 1e-9 {
            occs.push(below);
        }
        for occ in occs {
            let mut p = o.base("timeline", tr, period, occ, 1);
            p.duration = o.timeline_duration;
            let (res, r, touts) = measure(&p)?;
            cpu += res.cpu_secs;
            progress(&format!("timeline {}: {:.1} CPU-s", p.label(), res.cpu_secs));
            let f = &r.flows[0];
            let delivered = Series {
                name: "delivered Mbit/s (10 ms)".into(),
                points: f
                    .intervals
                    .iter()
                    .map(|iv| (f.start_secs + iv.end_secs, iv.goodput_bps / 1e6))
                    .collect(),
            };
            let cwnd = Series {
                name: "cwnd (packets)".into(),
                points: f
                    .cc_trace
                    .iter()
                    .map(|c| (c.time_secs, c.cwnd_bytes as f64 / IP_PACKET as f64))
                    .collect(),
            };
            let consecutive = Series {
                name: "count of the latest timeout's run".into(),
                points: timeout_steps(&touts, p.duration.as_secs_f64()),
            };
            let cumulative = Series {
                name: "timeouts so far".into(),
                points: std::iter::once((0.0, 0.0))
                    .chain(touts.iter().enumerate().map(|(i, x)| (x.at_secs, (i + 1) as f64)))
                    .chain(std::iter::once((p.duration.as_secs_f64(), touts.len() as f64)))
                    .collect(),
            };
            let gaps: Vec<String> = touts
                .windows(2)
                .filter(|w| w[1].consecutive == w[0].consecutive + 1)
                .take(8)
                .map(|w| format!("{:.3}", w[1].at_secs - w[0].at_secs))
                .collect();
            let _ = writeln!(
                text,
                "  {:<13} occupancy {:.2}: {:.1} Mbit/s, {} timeouts (max {} in a row), longest idle {:.2} s; gaps between consecutive timeouts (s): [{}]",
                tr.name(),
                occ,
                res.throughput_mbps,
                res.timeouts,
                res.max_consecutive,
                res.longest_idle_secs,
                gaps.join(", ")
            );
            let name = format!("timeline_{}_{:.0}.svg", slug(tr.name()), occ * 100.0);
            let svg = Figure {
                title: format!("Seed 001: {}, 1 ms period, {:.0} % connected", tr.name(), occ * 100.0),
                x_label: "time (s)".into(),
                x_range: Some((0.0, p.duration.as_secs_f64())),
                panels: vec![
                    Panel {
                        y_label: "delivered (Mbit/s)".into(),
                        traces: vec![Trace::Line(delivered)],
                    },
                    Panel {
                        y_label: "cwnd (1500-byte packets)".into(),
                        traces: vec![Trace::Steps(cwnd)],
                    },
                    Panel {
                        y_label: if tr.is_tcp() { "RTOs".into() } else { "PTOs".into() },
                        traces: vec![Trace::Steps(consecutive), Trace::Steps(cumulative)],
                    },
                ],
            }
            .to_svg();
            let mut csv = String::from("time_s,event,value\n");
            for iv in &f.intervals {
                let _ = writeln!(
                    csv,
                    "{},delivered_mbps,{}",
                    f.start_secs + iv.end_secs,
                    iv.goodput_bps / 1e6
                );
            }
            for c in &f.cc_trace {
                let _ = writeln!(csv, "{},cwnd_bytes,{}", c.time_secs, c.cwnd_bytes);
            }
            for x in &touts {
                let _ = writeln!(csv, "{},timeout_consecutive,{}", x.at_secs, x.consecutive);
            }
            let csv_name = name.replace(".svg", ".csv");
            files.extend(write_files(&o.out_dir, &[(&name, svg), (&csv_name, csv)])?);
        }
    }
    Ok((text, files, cpu))
}

/// The consecutive-timeout count as steps: each timeout sets it to its own
/// count, which holds until the next timeout (a run of timeouts ends where
/// the next starts again at 1).
fn timeout_steps(t: &[Timeout], end: f64) -> Vec<(f64, f64)> {
    let mut v = vec![(0.0, 0.0)];
    v.extend(t.iter().map(|x| (x.at_secs, f64::from(x.consecutive))));
    v.push((end, v.last().map_or(0.0, |p| p.1)));
    v
}

fn write_files(dir: &Path, files: &[(&str, String)]) -> Result<Vec<PathBuf>, String> {
    tput_lab::report::write_files(dir, files).map_err(|e| e.to_string())
}
