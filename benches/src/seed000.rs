//! Seed 000 reproduced: K. Yamanegi, G. Hasegawa, M. Murata, "Congestion
//! control mechanism of TCP for achieving predictable throughput" (see
//! docs/papers.md), with real QUIC (quinn-proto, TLS 1.3) in the
//! discrete-event simulator.
//!
//! # Set-up (the paper's ns-2 set-up, with the choices this reproduction makes)
//!
//! - Dumbbell: bottleneck 100 Mbit/s, 5 ms, DropTail 30 packets; every access
//!   link 1 Gbit/s, 2.5 ms (queue 1000 packets). Propagation RTT 20 ms.
//! - Packets: QUIC's minimum, 1200-byte UDP payloads (1228 bytes on the wire
//!   with the simulator's 28-byte IP/UDP overhead), for every flow; the paper's
//!   are 1000 bytes. Targets are percentages of the bottleneck: 10% = 10 Mbit/s,
//!   20% = 20 Mbit/s, Fig. 7's 2% / 4% = 2 / 4 Mbit/s per flow (all counted in
//!   UDP payload bits, of which QUIC's own headers and the transfer's framing
//!   are not goodput: the receiver judges verified payload bytes only).
//! - Guarantee controller: `guarantee:target=T,eval=32rtt,slot=16rtt` (d = 32,
//!   initial s = 16), `A` and `P` from the simulator's oracle (`A = P - rate of
//!   the other flows` over a 100 ms window), `k_max = A*srtt - 2*cwnd`.
//! - Success: the *receiver* judges every flow alike over evaluation slots of
//!   32 RTTs (the RTT measured in the handshake, ~20 ms, so slots of ~0.65 s;
//!   the paper writes "~1 s"), counting only complete slots; the success ratio
//!   is the fraction of slots whose verified payload throughput reached the
//!   target. Plain NewReno (`newreno`) and the fixed window
//!   (`fixed:rate=T`, `cwnd = T * min RTT`, never reduced) are judged the same
//!   way (the paper's baselines). Fig. 7's five flows use slots of 32 x the
//!   20 ms propagation RTT = 640 ms instead, one length for all five, so that
//!   they can also be judged as one (slot by slot).
//! - Reno flows: NewReno (RFC 9002), each on its own access pair. Each Reno
//!   flow, and the tested flow(s) together, start at a random instant in
//!   `[0, 100 ms)` drawn from the seed, so seeds differ in their phase;
//!   everything else is deterministic per seed.
//! - Fig. 6 / 7 points run 120 s simulated (plus the runner's 5 s drain, in
//!   which nothing is judged: a transfer ends at 120 s).
//!
//! # Figures
//!
//! - Fig. 4/5 ([`timeline`]): one guarantee flow at 20% against 1 NewReno
//!   flow from 0 s, 5 from 5 s, 30 from 10 s: cwnd of the guarantee flow and of
//!   one Reno flow, the guarantee flow's per-evaluation-slot throughput as a
//!   fraction of the bottleneck, and `s` (and `k`) over time.
//! - Fig. 6: x = Reno flows, y = success ratio; targets 10% and 20%; guarantee,
//!   NewReno, fixed window; mean and spread over the seeds.
//! - Fig. 6 with `abw=inline`: the guarantee controller measuring `A` and `P`
//!   itself ([`tput_cc::InlineEstimator`]) instead of reading the oracle.
//! - Fig. 6 with `kmax_cwnd=1` (`fig6-eq45`): `k_max = A*srtt - cwnd` as the
//!   paper's eqs. (4)/(5) print it, against the summary's `2*cwnd` that we
//!   make the default: the inconsistency's effect, measured.
//! - Fig. 7: five guarantee flows with 2% / 4% each. The paper's y is the mean
//!   of the five flows' success ratios; we also judge the five as one
//!   (aggregate throughput per slot against the aggregate target) and run the
//!   same five coordinated by one [`tput_cc::Aggregate`].
//! - Fig. 6 over TCP (`fig6-tcp`): the 2 x 2 of {guarantee flow over QUIC,
//!   over the simulator's TCP model} x {competitors QUIC NewReno, TCP Reno as
//!   ns-2 2.35's `Agent/TCP/Reno` with its defaults} (the TCP model with
//!   1000-byte segments, `recovery = "reno"`, no delayed ACKs, `min_rto`
//!   200 ms, Limited Transmit and `newreno:iw=2,lw=1`), all
//!   four judged over 640 ms slots (the TCP model has no handshake RTT), with
//!   the bottleneck's idle fraction per point: whether the paper's curves,
//!   measured against ns-2's TCP, come back when the competitors are TCP
//!   instead of QUIC.
//!
//!   The full run (3 seeds, 120 s, x = 1 ... 40) says no. Mean success over
//!   x >= 15 at 10%: QUIC vs QUIC NewReno 0.09, QUIC vs TCP Reno 0.40, TCP
//!   vs QUIC NewReno 0.00, TCP vs TCP Reno 0.10 (at x = 40: 0.02, 0.23,
//!   0.00, 0.00); at 20% all four are low from x = 10 on, as in the paper.
//!   TCP Reno competitors leave the bottleneck idle 10-15% of the time (QUIC
//!   NewReno competitors: under 3% from x = 15 on), and that spare capacity
//!   is what the QUIC guarantee flow gains against them. Over the TCP model
//!   with Reno recovery the guarantee flow does worse than over QUIC: its
//!   large windows lose several segments per window, Reno resends one per
//!   fast recovery, and the rest ends in timeouts (10%, x = 30, seed 1: 42
//!   timeouts, 55 fast retransmits, 0.6 Mbit/s; the same flow with
//!   `recovery = "sack"`: no timeout, 9.7 Mbit/s, success 0.28). Against
//!   QUIC NewReno a TCP-model flow loses even as plain NewReno (one
//!   competitor: 16 against 60 Mbit/s, 23 timeouts in 30 s; with SACK 24
//!   against 59 Mbit/s and no timeout), so that cell says more about the two
//!   transports than about the controller (see below for why). What remains
//!   different from the paper: its guarantee flow keeps a high success ratio
//!   at 10% with many Reno flows; none of the four cells does (best: 0.23 at
//!   x = 40).
//!
//! # Why a TCP-model NewReno flow loses to a QUIC NewReno flow
//!
//! One TCP-model NewReno flow (NewReno recovery, min RTO 200 ms, the
//! model's defaults otherwise) against one QUIC NewReno flow on this
//! dumbbell for 30 s, means over seeds 1-3, the TCP flow's segment size,
//! `pacing` and `delayed_ack` varied one at a time (`[flows.tcp] pacing`
//! paces at Linux's 2x / 1.2x of cwnd/SRTT; `delayed_ack = true` acknowledges
//! every second segment, as QUIC's receiver does):
//!
//! ```text
//! queue  segment  pacing  delack  | TCP Mbit/s (FR, TO)  | QUIC Mbit/s | util
//! 30     1000B    off     off     |  23.1 (40.0, 1.3)    |  58.6       | 0.854
//! 30     1000B    on      off     |  33.2 (24.7, 1.0)    |  47.9       | 0.848
//! 30     1000B    off     on      |  19.7 (45.3, 1.0)    |  62.9       | 0.865
//! 30     1000B    on      on      |  42.1 (20.0, 1.0)    |  39.8       | 0.855
//! 30     1188B    off     off     |  44.3 (22.3, 1.3)    |  36.0       | 0.835
//! 30     1188B    on      on      |  59.6 (16.0, 1.0)    |  25.3       | 0.881
//! 300    1000B    off     off     |  30.9 (12.3, 1.7)    |  63.9       | 0.993
//! 300    1000B    on      off     |  32.9 (10.7, 1.0)    |  62.1       | 0.994
//! 300    1188B    off     off     |  41.7 ( 9.0, 1.7)    |  52.8       | 0.986
//! 300    1188B    on      on      |  58.0 ( 5.3, 1.0)    |  37.6       | 0.994
//! ```
//!
//! (FR, TO: the TCP flow's fast retransmits and timeouts per run.) The
//! first cause is the packet size: both controllers add one datagram size
//! per window of acknowledged bytes, and the 30-packet queue counts packets,
//! so QUIC's 1228-byte packets against the model's 1040-byte ones give QUIC
//! a larger step and the same share of queue slots: with 1188-byte segments
//! (1228 bytes on the wire, the same packets) the unpaced TCP flow gets 44
//! against QUIC's 36 Mbit/s. Pacing is the second: unpaced, the TCP flow's
//! windows leave in line-rate bursts into the 30-packet queue and lose
//! more (40 fast retransmits against 25 paced); paced, it gets 33 instead
//! of 23 Mbit/s with 1000-byte segments. With a 300-packet queue pacing
//! matters little (31 -> 33) and the packet size still does (31 -> 42). The
//! ACK frequency (QUIC's receiver acknowledges every second packet) alone
//! does not help the unpaced TCP flow (larger bursts per ACK) and helps the
//! paced one. The earlier "16 against 60" (and its 23 timeouts) was the
//! model before it ended the controller's recovery with fast recovery and
//! restarted its timer on a fast retransmit; the comparison was measured with
//! `tputctl sim` on this scenario:
//!
//! ```toml
//! duration = "30s"
//! seed = 1                     # 1, 2, 3
//! [topology]
//! kind = "dumbbell"
//! bottleneck = { rate = "100Mbit/s", delay = "5ms", queue_packets = 30 }
//! access = { rate = "1Gbit/s", delay = "2.5ms", queue_packets = 1000 }
//! [[flows]]
//! cc = "newreno"
//! transport = "tcp"
//! tcp = { recovery = "newreno", segment = "1000B", min_rto = "200ms", pacing = false, delayed_ack = false }
//! [[flows]]
//! cc = "newreno"
//! ```
//!
//! Points run in parallel on [`Options::jobs`] threads; each point is one
//! single-threaded, deterministic simulation, and results are reported in a
//! fixed order, so the output does not depend on scheduling.
//!
//! # As a plan
//!
//! Every simulation, the Fig. 4/5 timeline included, is a point of
//! [`plan`] (a `tput_lab::plan` plan whose points keep their per-flow
//! results): a local run ([`reproduce`]) runs those points and builds the
//! figures from their results as read back from JSON; [`reproduce_from`]
//! builds the same tables and files from results that `tputctl sweep run`
//! wrote anywhere (all but `cpu.csv`, the local run's CPU times). The
//! bench's flags: `--plan` prints the plan, `--from DIR` builds from `DIR`
//! (see `benches/benches/seed000.rs`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use tput_cc::{AlgorithmState, ControllerSpec, units::Rate};
use tput_lab::plot::{Series, line_chart};
use tput_lab::sweep::run_parallel;
use tput_netsim::Rng;
use tput_transport::EvalSlot;

use crate::{Ran, run_point, thread_cpu_secs};
use tput_lab::plan::Keep;
use tput_lab::scenario::{
    AggregateResult, DelayedAck, FlowGroup, FlowResult, LinkSpec, Scenario, ScenarioResult, TcpSpec, TopologySpec, run,
};
use tput_lab::tcp::Recovery;

/// Bottleneck rate, bits per second.
const BOTTLENECK_BPS: u64 = 100_000_000;
/// Datagram size (UDP payload), bytes.
const MTU: u16 = 1200;

/// What to run and where to write it.
#[derive(Debug, Clone)]
pub struct Options {
    /// Output directory for CSV and SVG files.
    pub out_dir: PathBuf,
    /// Worker threads.
    pub jobs: usize,
    /// Simulated time of a Fig. 6 / 7 point.
    pub point_duration: Duration,
    /// Simulated time of the Fig. 4/5 timeline.
    pub timeline_duration: Duration,
    /// x axis: numbers of Reno flows.
    pub reno_counts: Vec<u32>,
    /// Targets, percent of the bottleneck (aggregate targets in Fig. 7).
    pub targets_pct: Vec<u32>,
    /// Seeds per point.
    pub seeds: Vec<u64>,
    /// Figures to run, by name: see [`FIGURES`].
    pub figures: Vec<String>,
}

/// Every figure name [`Options::figures`] accepts.
pub const FIGURES: [&str; 6] = ["fig4", "fig6", "fig6-inline", "fig6-eq45", "fig7", "fig6-tcp"];

impl Options {
    /// The issue's full size: x in {1, 2, 5, 10, 15, 20, 25, 30, 35, 40},
    /// targets 10% and 20%, 3 seeds, 120 s per point, a 20 s timeline.
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            out_dir,
            jobs: tput_lab::sweep::default_jobs(),
            point_duration: Duration::from_secs(120),
            timeline_duration: Duration::from_secs(20),
            reno_counts: vec![1, 2, 5, 10, 15, 20, 25, 30, 35, 40],
            targets_pct: vec![10, 20],
            seeds: vec![1, 2, 3],
            figures: FIGURES.iter().map(|s| s.to_string()).collect(),
        }
    }

    /// A smoke test of every figure: x in {1, 10}, one seed, 5 s points, a
    /// 12 s timeline (all three phases).
    pub fn short(out_dir: PathBuf) -> Self {
        Self {
            point_duration: Duration::from_secs(5),
            timeline_duration: Duration::from_secs(12),
            reno_counts: vec![1, 10],
            seeds: vec![1],
            ..Self::full(out_dir)
        }
    }

    fn wants(&self, figure: &str) -> bool {
        self.figures.iter().any(|f| f == figure)
    }
}

/// One simulation of Fig. 6 or 7: a tested group against `n_reno` NewReno flows.
#[derive(Debug, Clone)]
struct Point {
    figure: &'static str,
    variant: &'static str,
    target_pct: u32,
    n_reno: u32,
    seed: u64,
    scenario: Scenario,
}

/// What a point measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// Figure (`fig6`, `fig6-inline`, `fig6-eq45`, `fig7`).
    pub figure: &'static str,
    /// Controller variant.
    pub variant: &'static str,
    /// Target, percent of the bottleneck (aggregate for Fig. 7).
    pub target_pct: u32,
    /// Reno flows.
    pub n_reno: u32,
    /// Seed.
    pub seed: u64,
    /// Mean of the tested flows' success ratios (the paper's y).
    pub success: f64,
    /// Success of the tested flows judged as one (equals `success` for one flow).
    pub aggregate_success: f64,
    /// Goodput of the tested flows together, Mbit/s.
    pub tested_mbps: f64,
    /// Mean goodput of one Reno flow, Mbit/s.
    pub reno_mbps: f64,
    /// Bottleneck utilisation: busy fraction of the point's duration (the
    /// drain after it left out).
    pub utilisation: f64,
    /// Fraction of the point's duration the bottleneck sent nothing.
    pub idle: f64,
    /// TCP flows whose transfer had not finished by the end of the drain.
    pub unfinished_tcp: u32,
    /// CPU seconds of the simulation (the thread's).
    pub cpu_secs: f64,
}

fn link(rate_bps: u64, delay: Duration, queue_packets: u32) -> LinkSpec {
    LinkSpec::new(Rate::from_bits_per_sec(rate_bps), delay).with_queue_packets(queue_packets)
}

fn spec(text: &str) -> ControllerSpec {
    text.parse()
        .unwrap_or_else(|e| panic!("built-in controller spec {text:?}: {e}"))
}

fn mbit(pct_of_bottleneck: f64) -> Rate {
    Rate::from_bits_per_sec((BOTTLENECK_BPS as f64 * pct_of_bottleneck / 100.0).round() as u64)
}

/// The paper's guarantee controller (`mode=paper`) for a target of `pct` percent, plus `extra` keys.
fn guarantee(pct: f64, extra: &str) -> ControllerSpec {
    spec(&format!(
        "guarantee:target={},eval=32rtt,slot=16rtt,mode=paper{extra}",
        mbit(pct)
    ))
}

/// Variants of the Fig. 6 guarantee flow compared with the oracle-fed default:
/// (figure, variant, extra spec keys, table title, column, what the difference
/// means, plot title).
const FIG6_VARIANTS: [(&str, &str, &str, &str, &str, &str, &str); 2] = [
    (
        "fig6-inline",
        "guarantee (inline A)",
        ",abw=inline",
        "Fig. 6 with the inline estimator (A and P measured from the ACK stream)",
        "inline A",
        "Success lost by measuring A instead of knowing it",
        "Fig. 6, oracle vs inline A",
    ),
    (
        "fig6-eq45",
        "guarantee (k_max - 1*cwnd)",
        ",kmax_cwnd=1",
        "Fig. 6 with k_max = A*srtt - cwnd (eqs. 4/5 as printed; default 2*cwnd)",
        "1*cwnd",
        "Success lost with 1*cwnd instead of 2*cwnd (negative: gained)",
        "Fig. 6, k_max with 1*cwnd",
    ),
];

/// The competing Reno flows of seed 000's figures: QUIC NewReno.
fn quic_reno() -> FlowGroup {
    FlowGroup::new(spec("newreno"))
}

/// Fig. 6 over TCP: the TCP model as ns-2 2.35's `Agent/TCP/Reno` with its
/// defaults (1000-byte segments, initial window 2, loss window 1, `minrto_`
/// 200 ms, no delayed ACKs, Limited Transmit as `singledup_`), the paper's
/// competitors.
fn tcp_spec() -> TcpSpec {
    TcpSpec {
        recovery: Some(Recovery::Reno),
        segment: Some(1000),
        delayed_ack: Some(DelayedAck::Switch(false)),
        limited_transmit: Some(true),
        ..TcpSpec::default()
    }
}

/// A TCP Reno competitor with ns-2's defaults (see [`tcp_spec`]).
fn tcp_reno() -> FlowGroup {
    FlowGroup::new(spec("newreno:iw=2,lw=1")).over_tcp(tcp_spec())
}

/// Who competes in a `fig6-tcp` cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Competitor {
    /// QUIC NewReno ([`quic_reno`]).
    Quic,
    /// The TCP model as ns-2's Reno ([`tcp_reno`]).
    Tcp,
}

/// The 2 x 2 of `fig6-tcp`: (variant, guarantee flow over the TCP model,
/// competitors).
const FIG6_TCP_CELLS: [(&str, bool, Competitor); 4] = [
    ("QUIC vs QUIC NewReno", false, Competitor::Quic),
    ("QUIC vs TCP Reno", false, Competitor::Tcp),
    ("TCP vs QUIC NewReno", true, Competitor::Quic),
    ("TCP vs TCP Reno", true, Competitor::Tcp),
];

/// Evaluation slot of every `fig6-tcp` cell: 32 x the 20 ms propagation RTT.
const FIG6_TCP_SLOT: Duration = Duration::from_millis(640);

/// Seed 000's dumbbell with `tested` and `reno` (count, start) flows like
/// `competitor`, one group each, every group starting at a seeded random
/// instant in `[0, 100 ms)` after its `start`. The tested flows start
/// together: one group if `tested.aggregate` (the coordinator spans a group),
/// else groups `0..tested.count` of one flow each.
fn scenario(
    tested: FlowGroup,
    reno: &[(u32, Duration)],
    competitor: &FlowGroup,
    seed: u64,
    duration: Duration,
) -> Scenario {
    let mut rng = Rng::derive(seed, 0x5eed_0000);
    let mut jitter = || Duration::from_nanos(rng.below(100_000_000));
    let start = tested.start.unwrap_or_default() + jitter();
    // The jitter is drawn here (the scenario's own default jitter is off) so
    // that the tested flows can start together.
    let tested = tested.with_start_jitter(Duration::ZERO);
    let mut flows = if tested.aggregate {
        vec![tested.clone().starting(start)]
    } else {
        vec![tested.clone().times(1).starting(start); tested.count as usize]
    };
    for &(count, start) in reno {
        for _ in 0..count {
            flows.push(
                competitor
                    .clone()
                    .starting(start + jitter())
                    .with_start_jitter(Duration::ZERO),
            );
        }
    }
    let topology = TopologySpec::dumbbell(
        link(BOTTLENECK_BPS, Duration::from_millis(5), 30),
        link(1_000_000_000, Duration::from_micros(2500), 1000),
    );
    Scenario {
        name: Some("seed000".into()),
        seed,
        mtu: MTU,
        interval: Duration::from_secs(1),
        ..Scenario::new(duration, topology, flows)
    }
}

/// A tested group: `count` flows of `cc`, each judged against `pct` percent
/// over evaluation slots of 32 RTTs: 32 handshake RTTs for one flow; for
/// several, 32 x the 20 ms propagation RTT = 640 ms, so that their slots
/// have one length and can be summed slot by slot (handshake RTTs differ by
/// a few ms between flows).
fn tested(cc: ControllerSpec, count: u32, pct: f64) -> FlowGroup {
    let mut g = FlowGroup::new(cc).times(count).with_target(mbit(pct));
    g.eval_slot = Some(if count == 1 {
        EvalSlot::Rtts(32)
    } else {
        EvalSlot::Time(Duration::from_millis(640))
    });
    g
}

/// Every simulation `o` asks for, in the order they run and are reported:
/// the Fig. 4/5 timeline first (figure `fig4`), then the Fig. 6/7 points.
fn points(o: &Options) -> Vec<Point> {
    let mut out = Vec::new();
    if o.wants("fig4") {
        let seed = o.seeds.first().copied().unwrap_or(1);
        out.push(Point {
            figure: "fig4",
            variant: "timeline",
            target_pct: 20,
            n_reno: PHASES.iter().map(|p| p.0).sum(),
            seed,
            scenario: timeline_scenario(o.timeline_duration, seed),
        });
    }
    let mut add_vs = |figure: &'static str,
                      variant: &'static str,
                      pct: u32,
                      n: u32,
                      seed: u64,
                      g: FlowGroup,
                      competitor: &FlowGroup| {
        out.push(Point {
            figure,
            variant,
            target_pct: pct,
            n_reno: n,
            seed,
            scenario: scenario(g, &[(n, Duration::ZERO)], competitor, seed, o.point_duration),
        });
    };
    let quic = quic_reno();
    let tcp = tcp_reno();
    for &pct in &o.targets_pct {
        let p = f64::from(pct);
        for &n in &o.reno_counts {
            for &seed in &o.seeds {
                let mut add = |figure, variant, pct, n, seed, g| add_vs(figure, variant, pct, n, seed, g, &quic);
                if o.wants("fig6") {
                    add("fig6", "guarantee", pct, n, seed, tested(guarantee(p, ""), 1, p));
                    add("fig6", "newreno", pct, n, seed, tested(spec("newreno"), 1, p));
                    let fixed = spec(&format!("fixed:rate={}", mbit(p)));
                    add("fig6", "fixed", pct, n, seed, tested(fixed, 1, p));
                }
                for (fig, variant, extra, ..) in FIG6_VARIANTS {
                    if o.wants(fig) {
                        add(fig, variant, pct, n, seed, tested(guarantee(p, extra), 1, p));
                    }
                }
                if o.wants("fig7") {
                    let each = p / 5.0;
                    add(
                        "fig7",
                        "5 independent",
                        pct,
                        n,
                        seed,
                        tested(guarantee(each, ""), 5, each),
                    );
                    let coordinated = tested(guarantee(each, ""), 5, each).aggregated();
                    add("fig7", "5 coordinated", pct, n, seed, coordinated);
                }
                if o.wants("fig6-tcp") {
                    for (variant, over_tcp, competitor) in FIG6_TCP_CELLS {
                        let mut g = tested(guarantee(p, ""), 1, p);
                        // One slot length for all four cells: the TCP model
                        // has no handshake RTT to count slots in.
                        g.eval_slot = Some(EvalSlot::Time(FIG6_TCP_SLOT));
                        if over_tcp {
                            g = g.over_tcp(tcp_spec());
                        }
                        let c = if competitor == Competitor::Tcp { &tcp } else { &quic };
                        add_vs("fig6-tcp", variant, pct, n, seed, g, c);
                    }
                }
            }
        }
    }
    out
}

/// What one point of the plan measured: a Fig. 6/7 point or the timeline.
#[derive(Debug, Clone)]
enum Measured {
    Point(PointResult),
    Timeline(Timeline),
}

/// Build what `p` measured from its run's result `r` (`cpu_secs`: the
/// simulation's CPU time, 0 when unknown): the one place where a local run
/// and results collected from elsewhere become figures.
fn measured(p: &Point, r: &ScenarioResult, cpu_secs: f64) -> Result<Measured, String> {
    check_errors(r)?;
    if p.figure == "fig4" {
        return Ok(Measured::Timeline(timeline_of(&p.scenario, r, cpu_secs)));
    }
    measure(p, r, cpu_secs).map(Measured::Point)
}

fn measure(p: &Point, r: &ScenarioResult, cpu_secs: f64) -> Result<PointResult, String> {
    let secs = p.scenario.duration.as_secs_f64();
    // Over the measured window, the point's duration: the drain is not in it.
    let utilisation = r.window.bottleneck.utilisation;
    let idle = (1.0 - utilisation).max(0.0);
    let tested: Vec<_> = r.flows.iter().filter(|f| is_tested(p, f.group)).collect();
    let reno: Vec<_> = r.flows.iter().filter(|f| !is_tested(p, f.group)).collect();
    let mut ratios = Vec::new();
    for f in &tested {
        ratios.push(
            f.success_ratio
                .ok_or_else(|| format!("flow {} completed no evaluation slot", f.flow))?,
        );
    }
    let target = mbit(f64::from(p.target_pct)).bits_per_sec() as f64;
    let aggregate = AggregateResult::judge(0, target, &tested)
        .success_ratio
        .ok_or("the tested flows have no common evaluation slot")?;
    Ok(PointResult {
        figure: p.figure,
        variant: p.variant,
        target_pct: p.target_pct,
        n_reno: p.n_reno,
        seed: p.seed,
        success: mean(&ratios),
        aggregate_success: aggregate,
        tested_mbps: tested.iter().map(|f| f.bytes as f64 * 8.0 / secs / 1e6).sum(),
        reno_mbps: mean(
            &reno
                .iter()
                .map(|f| f.bytes as f64 * 8.0 / secs / 1e6)
                .collect::<Vec<_>>(),
        ),
        utilisation,
        idle,
        unfinished_tcp: r.flows.iter().filter(|f| unfinished_tcp(f)).count() as u32,
        cpu_secs,
    })
}

/// Group 0 (and, for independent Fig. 7 flows, groups 0..5) is tested.
fn is_tested(p: &Point, group: usize) -> bool {
    let tested_groups = if p.variant == "5 independent" { 5 } else { 1 };
    group < tested_groups
}

/// A TCP flow whose only error is a transfer that had not finished by the
/// end of the drain (its last segments still unacknowledged: waiting out a
/// backed-off retransmission timer, or recovering losses one per round trip
/// with Reno): its slots up to the end of the run are judged like any
/// other's, so the point stands (counted in [`PointResult::unfinished_tcp`]).
fn unfinished_tcp(f: &FlowResult) -> bool {
    f.tcp.is_some() && f.errors.len() == 1 && f.errors[0].contains("did not finish within the drain time")
}

fn check_errors(r: &ScenarioResult) -> Result<(), String> {
    match r.flows.iter().find(|f| !f.errors.is_empty() && !unfinished_tcp(f)) {
        Some(f) => Err(format!("flow {} failed: {}", f.flow, f.errors.join("; "))),
        None => Ok(()),
    }
}

fn mean(v: &[f64]) -> f64 {
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

impl Point {
    /// The point's name in progress lines, errors and failures.
    fn label(&self) -> String {
        if self.figure == "fig4" {
            format!("fig4 timeline seed {}", self.seed)
        } else {
            format!(
                "{} {} {}% n={} seed {}",
                self.figure, self.variant, self.target_pct, self.n_reno, self.seed
            )
        }
    }
}

/// Every point of `o` and the plan that runs them (same order): each plan
/// point is labelled with its figure, variant, target and Reno flows (its
/// seed is the point's own `seed`), and keeps the per-flow results its figure is built from (the timeline
/// also its interval records and delivered-bytes samples).
fn planned(o: &Options) -> Result<(Vec<Point>, Vec<tput_lab::plan::Point>), String> {
    for f in &o.figures {
        if !FIGURES.contains(&f.as_str()) {
            return Err(format!("unknown figure {f:?}; known: {}", FIGURES.join(", ")));
        }
    }
    let pts = points(o);
    let items = pts
        .iter()
        .map(|p| {
            let labels = [
                ("figure", p.figure.to_string()),
                ("variant", p.variant.to_string()),
                ("target_pct", p.target_pct.to_string()),
                ("n_reno", p.n_reno.to_string()),
            ]
            .map(|(k, v)| (k.to_string(), v))
            .into();
            let keep = if p.figure == "fig4" {
                Keep {
                    intervals: true,
                    delivered: true,
                    ..Keep::result()
                }
            } else {
                Keep::result()
            };
            (labels, p.scenario.clone(), keep)
        })
        .collect();
    let plan = tput_lab::plan::plan_scenarios(items).map_err(|e| e.to_string())?;
    Ok((pts, plan))
}

/// The plan of the simulations `o` asks for, in the order a local run runs
/// them: what `--plan` prints, for `tputctl sweep run FILE --index N --out
/// DIR` to run anywhere and [`reproduce_from`] to build the figures from.
pub fn plan(o: &Options) -> Result<Vec<tput_lab::plan::Point>, String> {
    planned(o).map(|(_, plan)| plan)
}

/// What one plan point gave: its measurement from its kept result.
fn measured_of(p: &Point, ran: Ran) -> Result<Measured, String> {
    let (r, cpu) = ran?;
    let result = r
        .result
        .as_ref()
        .ok_or("the point's result keeps no per-flow results (not from this bench's plan)")?;
    measured(p, result, cpu)
}

/// One progress line for a finished point.
fn progress_line(p: &Point, m: &Result<Measured, String>) -> String {
    match m {
        Ok(Measured::Point(x)) => format!(
            "{}: success {:.3} (aggregate {:.3}), idle {:.3}, {} TCP flow(s) unfinished, in {:.1} CPU-s",
            p.label(),
            x.success,
            x.aggregate_success,
            x.idle,
            x.unfinished_tcp,
            x.cpu_secs
        ),
        Ok(Measured::Timeline(t)) => format!("{}: {:.1} CPU-s", p.label(), t.cpu_secs),
        Err(e) => format!("{}: FAILED: {e}", p.label()),
    }
}

/// Everything a run produced.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The tables, as printed.
    pub text: String,
    /// Every point's result, in a fixed order.
    pub points: Vec<PointResult>,
    /// Points that failed, with the reason.
    pub failures: Vec<String>,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// The Fig. 4/5 timeline, if run.
    pub timeline: Option<Timeline>,
}

/// Run the reproductions `o` asks for; `progress` gets one line per finished
/// simulation. The simulations are the points of [`plan`], run here on
/// [`Options::jobs`] threads, each read back as a collector would read a
/// file of `tputctl sweep run`: a local run and [`reproduce_from`] build
/// the figures from the same numbers.
pub fn reproduce(o: &Options, mut progress: impl FnMut(&str) + Send) -> Result<Report, String> {
    let (pts, plan) = planned(o)?;
    let total = plan.len();
    let ran = run_parallel(&plan, o.jobs, run_point, |done, p, r| {
        let m = r.clone().and_then(|ran| measured_of(&pts[p.index], Ok(ran)));
        progress(&format!("[{done}/{total}] {}", progress_line(&pts[p.index], &m)));
    });
    build(o, &pts, ran, true)
}

/// Build the tables and figures of `o` from the point results in `dir`
/// (what `tputctl sweep run` wrote for the points of [`plan`] with the same
/// options), without simulating: the same files as [`reproduce`], but for
/// `cpu.csv`. A missing result, or results of another plan (other options,
/// figures or `TPUT_BENCH_SHORT`), is a one-line error naming the point.
pub fn reproduce_from(o: &Options, dir: &Path) -> Result<Report, String> {
    let (pts, plan) = planned(o)?;
    let ran = crate::plan_results(dir, &plan, |i| pts[i].label())?;
    build(o, &pts, ran.into_iter().map(|r| Ok((r, 0.0))).collect(), false)
}

/// Turn the points' results into the report, tables and files; `local`:
/// the results come from this process, with CPU times (written to `cpu.csv`).
fn build(o: &Options, pts: &[Point], ran: Vec<Ran>, local: bool) -> Result<Report, String> {
    std::fs::create_dir_all(&o.out_dir).map_err(|e| format!("creating {}: {e}", o.out_dir.display()))?;
    let mut report = Report::default();
    let mut cpu = String::from("figure,variant,target_pct,n_reno,seed,cpu_secs\n");
    for (p, r) in pts.iter().zip(ran) {
        if let Ok((_, secs)) = &r {
            let _ = writeln!(
                cpu,
                "{},{},{},{},{},{secs}",
                p.figure, p.variant, p.target_pct, p.n_reno, p.seed
            );
        }
        match measured_of(p, r) {
            Ok(Measured::Point(x)) => report.points.push(x),
            Ok(Measured::Timeline(t)) => {
                report.text.push_str(&t.table());
                report.files.extend(t.write(&o.out_dir)?);
                report.timeline = Some(t);
            }
            Err(e) => report.failures.push(format!("{}: {e}", p.label())),
        }
    }
    if !report.points.is_empty() {
        report.text.push_str(&tables(o, &report.points));
        report.files.extend(write_points(o, &report.points)?);
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

// ---- Fig. 4/5 ---------------------------------------------------------------

/// One 100 ms sample of the Fig. 4/5 run (sender-side statistics).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// End of the interval, seconds since the scenario started.
    pub t: f64,
    /// Window of the guarantee flow, 1200-byte packets.
    pub guarantee_cwnd: f64,
    /// Window of the first NewReno flow, packets.
    pub reno_cwnd: f64,
    /// The guarantee controller's slope `k`.
    pub k: f64,
    /// Its control slot `s`, RTTs.
    pub s: f64,
}

/// The Fig. 4/5 run: one sample per 100 ms of the sender-side statistics.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Samples, in time order.
    pub samples: Vec<Sample>,
    /// `(slot start s, slot length s, throughput / bottleneck)` of the guarantee flow.
    pub slots: Vec<(f64, f64, f64)>,
    /// Per phase (1, 5, 30 Reno flows): `(from, to, guarantee Mbit/s, Reno Mbit/s per flow, success, mean k, s at the end)`.
    pub phases: Vec<(f64, f64, f64, f64, f64, f64, f64)>,
    /// CPU seconds of the run.
    pub cpu_secs: f64,
}

/// Reno flows join at these instants (Fig. 4/5): 1 at 0 s, 4 more at 5 s, 25 more at 10 s.
const PHASES: [(u32, u64); 3] = [(1, 0), (4, 5), (25, 10)];

/// The Fig. 4/5 scenario: `duration` long, with the paper's phases at
/// 0/5/10 s, 100 ms intervals.
fn timeline_scenario(duration: Duration, seed: u64) -> Scenario {
    let reno: Vec<(u32, Duration)> = PHASES
        .iter()
        .map(|&(n, at)| (n, Duration::from_secs(at)))
        .filter(|&(_, at)| at < duration)
        .collect();
    let mut s = scenario(
        tested(guarantee(20.0, ""), 1, 20.0),
        &reno,
        &quic_reno(),
        seed,
        duration,
    );
    s.interval = Duration::from_millis(100);
    s
}

/// Run the Fig. 4/5 timeline for `duration` (the paper's phases at 0/5/10 s).
pub fn timeline(duration: Duration, seed: u64) -> Result<Timeline, String> {
    let s = timeline_scenario(duration, seed);
    let (cpu0, wall0) = (thread_cpu_secs(), Instant::now());
    let r = run(&s, |_| {}).map_err(|e| e.to_string())?;
    let cpu = cpu0
        .zip(thread_cpu_secs())
        .map_or(wall0.elapsed().as_secs_f64(), |(a, b)| b - a);
    check_errors(&r)?;
    Ok(timeline_of(&s, &r, cpu))
}

/// The timeline from the run `r` of `s` (a [`timeline_scenario`]).
fn timeline_of(s: &Scenario, r: &ScenarioResult, cpu_secs: f64) -> Timeline {
    let duration = s.duration;
    let g = &r.flows[0];
    let reno1 = &r.flows[1];
    // Interval and slot times count from each transfer's start.
    let start_of = |f: &FlowResult| s.flows[f.group].start.unwrap_or_default().as_secs_f64();
    let offset = start_of(g);
    let mss = f64::from(MTU);
    let reno_at: Vec<(f64, f64)> = reno1
        .intervals
        .iter()
        .map(|x| (start_of(reno1) + x.end_secs, x.cwnd_bytes as f64 / mss))
        .collect();
    let mut samples = Vec::new();
    for iv in &g.intervals {
        let (k, slot) = match iv.controller.as_ref().map(|c| &c.state) {
            Some(AlgorithmState::Guarantee { k, slot_rtts, .. }) => (*k, f64::from(*slot_rtts)),
            _ => (f64::NAN, f64::NAN),
        };
        let t = offset + iv.end_secs;
        // The Reno flow's sample nearest in time (the flows start apart).
        let reno_cwnd = reno_at
            .iter()
            .min_by(|a, b| (a.0 - t).abs().total_cmp(&(b.0 - t).abs()))
            .map_or(f64::NAN, |x| x.1);
        samples.push(Sample {
            t,
            guarantee_cwnd: iv.cwnd_bytes as f64 / mss,
            reno_cwnd,
            k,
            s: slot,
        });
    }
    // A slot's length: the gap to the next slot's start (all are equal), or
    // for the last one that of the one before (or bytes / throughput).
    let slot_len = |i: usize| -> f64 {
        let sl = &g.slots;
        match (sl.get(i + 1), i.checked_sub(1).and_then(|j| sl.get(j))) {
            (Some(next), _) => next.start_secs - sl[i].start_secs,
            (None, Some(prev)) => sl[i].start_secs - prev.start_secs,
            (None, None) if sl[i].throughput_bps > 0.0 => sl[i].bytes as f64 * 8.0 / sl[i].throughput_bps,
            (None, None) => f64::NAN,
        }
    };
    let slots: Vec<(f64, f64, f64)> = g
        .slots
        .iter()
        .enumerate()
        .map(|(i, sl)| {
            (
                offset + sl.start_secs,
                slot_len(i),
                sl.throughput_bps / BOTTLENECK_BPS as f64,
            )
        })
        .collect();
    let end = duration.as_secs_f64();
    let bounds: Vec<f64> = PHASES.iter().map(|&(_, at)| at as f64).filter(|&at| at < end).collect();
    let mut phases = Vec::new();
    for (i, &from) in bounds.iter().enumerate() {
        let to = bounds.get(i + 1).copied().unwrap_or(end);
        let in_phase = |t: f64| t > from && t <= to;
        // Bytes the network delivered to the flow's receiver (the simulator's
        // per-flow samples, in scenario time), not bytes written into QUIC.
        let bytes_in = |f: &FlowResult| -> f64 {
            r.delivered
                .iter()
                .filter(|d| d.flow == f.flow && in_phase(d.time_ns as f64 / 1e9))
                .map(|d| d.interval_bytes as f64)
                .sum()
        };
        let g_mbps = bytes_in(g) * 8.0 / (to - from) / 1e6;
        let renos: Vec<f64> = r.flows[1..]
            .iter()
            .filter(|f| start_of(f) < to)
            .map(|f| bytes_in(f) * 8.0 / (to - from) / 1e6)
            .collect();
        let judged: Vec<&(f64, f64, f64)> = slots
            .iter()
            .filter(|sl| sl.0 >= from && sl.0 + sl.1 <= to + 1e-9)
            .collect();
        let met = judged.iter().filter(|sl| sl.2 >= 0.2).count();
        let ks: Vec<f64> = samples.iter().filter(|x| in_phase(x.t)).map(|x| x.k).collect();
        let s_end = samples.iter().rfind(|x| in_phase(x.t)).map_or(f64::NAN, |x| x.s);
        phases.push((
            from,
            to,
            g_mbps,
            mean(&renos),
            if judged.is_empty() {
                f64::NAN
            } else {
                met as f64 / judged.len() as f64
            },
            mean(&ks),
            s_end,
        ));
    }
    Timeline {
        samples,
        slots,
        phases,
        cpu_secs,
    }
}

impl Timeline {
    fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "Fig. 4/5: 1 guarantee flow (target 20% = 20 Mbit/s) vs NewReno 1 -> 5 -> 30 flows at 0/5/10 s\n\
             (Mbit/s: QUIC packet bytes delivered to the receivers per phase; success over the guarantee flow's\n\
             complete 32-RTT slots in the phase, judged on verified payload)"
        );
        let _ = writeln!(
            t,
            "{:>9} {:>6} {:>16} {:>18} {:>8} {:>7} {:>8}",
            "phase", "reno", "guarantee Mbit/s", "Reno Mbit/s/flow", "success", "mean k", "s at end"
        );
        for (i, p) in self.phases.iter().enumerate() {
            let reno: u32 = PHASES.iter().take(i + 1).map(|x| x.0).sum();
            let _ = writeln!(
                t,
                "{:>9} {:>6} {:>16.1} {:>18.1} {:>8.2} {:>7.2} {:>8}",
                format!("{:.0}-{:.0} s", p.0, p.1),
                reno,
                p.2,
                p.3,
                p.4,
                p.5,
                p.6
            );
        }
        let _ = writeln!(
            t,
            "Paper: with 1 Reno flow k stays at k_min = 1 (Reno-like, fair) and the target is met; with 5 the\n\
             guarantee flow grows faster and pushes Reno down; with 30, s shrinks from ~11 s on and the target is\n\
             \"almost\" met.\n"
        );
        t
    }

    fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, String> {
        let mut csv = String::from("time_secs,guarantee_cwnd_packets,reno_cwnd_packets,k,slot_rtts\n");
        for s in &self.samples {
            let _ = writeln!(csv, "{},{},{},{},{}", s.t, s.guarantee_cwnd, s.reno_cwnd, s.k, s.s);
        }
        let mut slots = String::from("start_secs,length_secs,throughput_ratio\n");
        for s in &self.slots {
            let _ = writeln!(slots, "{},{},{}", s.0, s.1, s.2);
        }
        let series = |name: &str, f: fn(&Sample) -> f64| Series {
            name: name.into(),
            points: self.samples.iter().map(|s| (s.t, f(s))).collect(),
        };
        let ratio = Series {
            name: "guarantee flow".into(),
            // A step per slot: its throughput ratio from start to end.
            points: self.slots.iter().flat_map(|s| [(s.0, s.2), (s.0 + s.1, s.2)]).collect(),
        };
        let end = self.samples.last().map_or(0.0, |s| s.t);
        let target = Series {
            name: "target 0.2".into(),
            points: vec![(0.0, 0.2), (end, 0.2)],
        };
        let files = [
            ("fig4_timeline.csv", csv),
            ("fig4_slots.csv", slots),
            (
                "fig4_cwnd.svg",
                line_chart(
                    "Fig. 4: congestion window",
                    "time (s)",
                    "cwnd (1200-byte packets)",
                    &[
                        series("guarantee", |s| s.guarantee_cwnd),
                        series("one NewReno flow", |s| s.reno_cwnd),
                    ],
                ),
            ),
            (
                "fig4_throughput_ratio.svg",
                line_chart(
                    "Fig. 4: throughput per evaluation slot / bottleneck",
                    "time (s)",
                    "ratio",
                    &[ratio, target],
                ),
            ),
            (
                "fig5_slot.svg",
                line_chart(
                    "Fig. 5: control slot s and slope k",
                    "time (s)",
                    "RTTs / packets per RTT",
                    &[series("s (RTTs)", |s| s.s), series("k", |s| s.k)],
                ),
            ),
        ];
        write_files(dir, &files)
    }
}

fn write_files(dir: &Path, files: &[(&str, String)]) -> Result<Vec<PathBuf>, String> {
    tput_lab::report::write_files(dir, files).map_err(|e| e.to_string())
}

// ---- Fig. 6 / 7 tables ------------------------------------------------------

/// Mean, min and max of `field` over the seeds of one (figure, variant, target, n).
fn stats(
    points: &[PointResult],
    key: (&str, &str, u32, u32),
    field: fn(&PointResult) -> f64,
) -> Option<(f64, f64, f64)> {
    let v: Vec<f64> = points
        .iter()
        .filter(|p| (p.figure, p.variant, p.target_pct, p.n_reno) == key)
        .map(field)
        .collect();
    if v.is_empty() {
        return None;
    }
    let min = v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some((mean(&v), min, max))
}

fn cell(s: Option<(f64, f64, f64)>) -> String {
    match s {
        Some((m, lo, hi)) if (hi - lo).abs() < 5e-4 => format!("{m:.2}"),
        Some((m, lo, hi)) => format!("{m:.2} [{lo:.2},{hi:.2}]"),
        None => "-".into(),
    }
}

/// Columns of one table: (header, figure, variant, field).
type Column = (&'static str, &'static str, &'static str, fn(&PointResult) -> f64);

fn success(p: &PointResult) -> f64 {
    p.success
}
fn aggregate_success(p: &PointResult) -> f64 {
    p.aggregate_success
}
fn tested_mbps(p: &PointResult) -> f64 {
    p.tested_mbps
}
fn idle(p: &PointResult) -> f64 {
    p.idle
}

fn table(o: &Options, points: &[PointResult], title: &str, pct: u32, columns: &[Column]) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "{title}");
    let _ = write!(t, "{:>6}", "n_reno");
    for c in columns {
        let _ = write!(t, " {:>22}", c.0);
    }
    let _ = writeln!(t);
    for &n in &o.reno_counts {
        let _ = write!(t, "{n:>6}");
        for &(_, fig, variant, field) in columns {
            let _ = write!(t, " {:>22}", cell(stats(points, (fig, variant, pct, n), field)));
        }
        let _ = writeln!(t);
    }
    t
}

fn tables(o: &Options, points: &[PointResult]) -> String {
    let mut t = String::new();
    let seeds = o.seeds.len();
    let secs = o.point_duration.as_secs_f64();
    let note = format!("mean [min,max] over {seeds} seed(s), {secs:.0} s per point");
    let has = |fig: &str| points.iter().any(|p| p.figure == fig);
    for &pct in &o.targets_pct {
        if has("fig6") {
            t.push_str(&table(
                o,
                points,
                &format!("Fig. 6, target {pct}%: success ratio (32-RTT slots), {note}"),
                pct,
                &[
                    ("guarantee", "fig6", "guarantee", success),
                    ("newreno", "fig6", "newreno", success),
                    ("fixed", "fig6", "fixed", success),
                    ("guarantee Mbit/s", "fig6", "guarantee", tested_mbps),
                ],
            ));
            let _ = writeln!(
                t,
                "Paper: {}\n",
                if pct == 10 {
                    "at 10% the controller holds a high fraction even with many Reno flows and beats both Reno and the fixed window"
                } else {
                    "at 20% the controller's success drops sharply from ~15 Reno flows on (a limit of the method)"
                }
            );
        }
        for (fig, variant, _, title, column, lost_what, _) in FIG6_VARIANTS {
            if !has(fig) {
                continue;
            }
            t.push_str(&table(
                o,
                points,
                &format!("{title}, target {pct}%: success ratio, {note}"),
                pct,
                &[
                    ("default (oracle A)", "fig6", "guarantee", success),
                    (column, fig, variant, success),
                    ("Mbit/s", fig, variant, tested_mbps),
                ],
            ));
            let lost: Vec<f64> = o
                .reno_counts
                .iter()
                .filter_map(|&n| {
                    let a = stats(points, ("fig6", "guarantee", pct, n), success)?.0;
                    let b = stats(points, (fig, variant, pct, n), success)?.0;
                    Some(a - b)
                })
                .collect();
            if lost.is_empty() {
                t.push('\n');
            } else {
                let _ = writeln!(
                    t,
                    "{lost_what}: mean {:.3} over the x axis (max {:.3}, min {:.3})\n",
                    mean(&lost),
                    lost.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    lost.iter().copied().fold(f64::INFINITY, f64::min)
                );
            }
        }
        if has("fig6-tcp") {
            let columns: Vec<Column> = FIG6_TCP_CELLS
                .iter()
                .map(|&(v, ..)| -> Column { (v, "fig6-tcp", v, success) })
                .collect();
            t.push_str(&table(
                o,
                points,
                &format!(
                    "Fig. 6 over TCP, target {pct}%: success ratio of the guarantee flow (640 ms slots), {note}\n\
                     (guarantee flow over QUIC or the TCP model vs QUIC NewReno or TCP Reno with ns-2's defaults)"
                ),
                pct,
                &columns,
            ));
            let idle: Vec<Column> = FIG6_TCP_CELLS
                .iter()
                .map(|&(v, ..)| -> Column { (v, "fig6-tcp", v, idle) })
                .collect();
            t.push_str(&table(
                o,
                points,
                &format!("Fig. 6 over TCP, target {pct}%: idle fraction of the bottleneck, {note}"),
                pct,
                &idle,
            ));
            let _ = writeln!(
                t,
                "Paper (ns-2, TCP Reno competitors): {}",
                if pct == 10 {
                    "at 10% the controller keeps a high success ratio even with many Reno flows"
                } else {
                    "at 20% success drops sharply from ~15 Reno flows on"
                }
            );
            t.push_str(&fig6_tcp_note(o, points, pct));
        }
        if has("fig7") {
            t.push_str(&table(
                o,
                points,
                &format!(
                    "Fig. 7, 5 guarantee flows at {}% each (aggregate {pct}%): success ratio, {note}\n\
                     (per-flow = the paper's mean of the five; aggregate = the five judged as one)",
                    f64::from(pct) / 5.0
                ),
                pct,
                &[
                    ("independent per-flow", "fig7", "5 independent", success),
                    ("independent aggregate", "fig7", "5 independent", aggregate_success),
                    ("coordinated aggregate", "fig7", "5 coordinated", aggregate_success),
                    ("coordinated per-flow", "fig7", "5 coordinated", success),
                    ("Fig. 6 single flow", "fig6", "guarantee", success),
                ],
            ));
            let _ = writeln!(
                t,
                "Paper: success clearly lower than Fig. 6 for the same aggregate (all five size k_max from the same A).\n\
                 Issue: the coordinated five (aggregate) should reach at least the single flow of Fig. 6.\n"
            );
        }
    }
    t
}

/// The closing note of `fig6-tcp` at `pct`: each cell's mean success and
/// idle fraction with many competitors (x >= 15), and whether the paper's
/// curve comes back with TCP Reno competitors.
fn fig6_tcp_note(o: &Options, points: &[PointResult], pct: u32) -> String {
    let many: Vec<u32> = o.reno_counts.iter().copied().filter(|&n| n >= 15).collect();
    let over_many = |variant: &str, field: fn(&PointResult) -> f64| {
        let v: Vec<f64> = many
            .iter()
            .filter_map(|&n| stats(points, ("fig6-tcp", variant, pct, n), field).map(|s| s.0))
            .collect();
        (!v.is_empty()).then(|| mean(&v))
    };
    let mut t = String::new();
    if many.is_empty() {
        let _ = writeln!(t, "(no x >= 15 in this run: no verdict)\n");
        return t;
    }
    let _ = writeln!(t, "Mean over x >= 15 Reno flows:");
    for (variant, ..) in FIG6_TCP_CELLS {
        if let (Some(sx), Some(ix)) = (over_many(variant, success), over_many(variant, idle)) {
            let _ = writeln!(t, "  {variant:<22} success {sx:.2}, bottleneck idle {ix:.3}");
        }
    }
    let tcp = over_many(FIG6_TCP_CELLS[3].0, success);
    let quic = over_many(FIG6_TCP_CELLS[0].0, success);
    if let (Some(tcp), Some(quic)) = (tcp, quic) {
        let back = if pct == 10 { tcp >= 0.8 } else { tcp < 0.5 };
        let _ = writeln!(
            t,
            "Verdict at {pct}%: with TCP Reno competitors and the guarantee flow over TCP the paper's curve {} \
             (success {tcp:.2} over x >= 15 against {quic:.2} in the all-QUIC cell; the paper's curve is {}).\n",
            if back { "comes back" } else { "does not come back" },
            if pct == 10 {
                "high (>= 0.8 read as high)"
            } else {
                "low from ~15 flows on"
            }
        );
        let _ = writeln!(
            t,
            "Over the TCP model the guarantee flow recovers with Reno (one resent segment per fast recovery): \
             several losses in one of its large windows end in a timeout, which `QUIC vs TCP Reno` does not suffer.\n"
        );
    }
    t
}

fn write_points(o: &Options, points: &[PointResult]) -> Result<Vec<PathBuf>, String> {
    let mut csv = String::from(
        "figure,variant,target_pct,n_reno,seed,success,aggregate_success,tested_mbps,reno_mbps_per_flow,utilisation,idle,unfinished_tcp\n",
    );
    for p in points {
        let _ = writeln!(
            csv,
            "{},{},{},{},{},{},{},{},{},{},{},{}",
            p.figure,
            p.variant,
            p.target_pct,
            p.n_reno,
            p.seed,
            p.success,
            p.aggregate_success,
            p.tested_mbps,
            p.reno_mbps,
            p.utilisation,
            p.idle,
            p.unfinished_tcp
        );
    }
    let mut files = vec![("points.csv".to_string(), csv)];
    let curve = |fig: &str, variant: &str, pct: u32, field: fn(&PointResult) -> f64, name: &str| Series {
        name: name.into(),
        points: o
            .reno_counts
            .iter()
            .filter_map(|&n| Some((f64::from(n), stats(points, (fig, variant, pct, n), field)?.0)))
            .collect(),
    };
    for &pct in &o.targets_pct {
        // (file, title, the figure whose points it needs, curves)
        let mut plots: Vec<(String, &str, &str, Vec<Series>)> = Vec::new();
        plots.push((
            format!("fig6_{pct}pct.svg"),
            "Fig. 6",
            "fig6",
            vec![
                curve("fig6", "guarantee", pct, success, "guarantee"),
                curve("fig6", "newreno", pct, success, "NewReno"),
                curve("fig6", "fixed", pct, success, "fixed window"),
            ],
        ));
        for (fig, variant, _, _, column, _, title) in FIG6_VARIANTS {
            plots.push((
                format!("{}_{pct}pct.svg", fig.replace('-', "_")),
                title,
                fig,
                vec![
                    curve("fig6", "guarantee", pct, success, "oracle A, 2*cwnd"),
                    curve(fig, variant, pct, success, column),
                ],
            ));
        }
        plots.push((
            format!("fig7_{pct}pct.svg"),
            "Fig. 7",
            "fig7",
            vec![
                curve("fig7", "5 independent", pct, success, "5 indep., per flow"),
                curve("fig7", "5 independent", pct, aggregate_success, "5 indep., aggregate"),
                curve("fig7", "5 coordinated", pct, aggregate_success, "5 coord., aggregate"),
                curve("fig6", "guarantee", pct, success, "1 flow (Fig. 6)"),
            ],
        ));
        plots.push((
            format!("fig6_tcp_{pct}pct.svg"),
            "Fig. 6 over TCP",
            "fig6-tcp",
            FIG6_TCP_CELLS
                .iter()
                .map(|&(v, ..)| curve("fig6-tcp", v, pct, success, v))
                .collect(),
        ));
        for (name, title, needs, series) in plots {
            if points.iter().any(|p| p.figure == needs && p.target_pct == pct) {
                let svg = line_chart(
                    &format!("{title}: target {pct}% of the bottleneck"),
                    "NewReno flows",
                    "success ratio",
                    &series,
                );
                files.push((name, svg));
            }
        }
        let mut summary = String::from("figure,variant,target_pct,n_reno,mean,min,max\n");
        for (fig, variant) in [
            ("fig6", "guarantee"),
            ("fig6", "newreno"),
            ("fig6", "fixed"),
            (FIG6_VARIANTS[0].0, FIG6_VARIANTS[0].1),
            (FIG6_VARIANTS[1].0, FIG6_VARIANTS[1].1),
            ("fig7", "5 independent"),
            ("fig7", "5 coordinated"),
            ("fig6-tcp", FIG6_TCP_CELLS[0].0),
            ("fig6-tcp", FIG6_TCP_CELLS[1].0),
            ("fig6-tcp", FIG6_TCP_CELLS[2].0),
            ("fig6-tcp", FIG6_TCP_CELLS[3].0),
        ] {
            for &n in &o.reno_counts {
                if let Some((m, lo, hi)) = stats(points, (fig, variant, pct, n), success) {
                    let _ = writeln!(summary, "{fig},{variant},{pct},{n},{m},{lo},{hi}");
                }
            }
        }
        files.push((format!("summary_{pct}pct.csv"), summary));
    }
    let refs: Vec<(&str, String)> = files.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
    write_files(&o.out_dir, &refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(variant: &'static str, n_reno: u32, success: f64, idle: f64) -> PointResult {
        PointResult {
            figure: "fig6-tcp",
            variant,
            target_pct: 10,
            n_reno,
            seed: 1,
            success,
            aggregate_success: success,
            tested_mbps: 0.0,
            reno_mbps: 0.0,
            utilisation: 1.0 - idle,
            idle,
            unfinished_tcp: 0,
            cpu_secs: 0.0,
        }
    }

    #[test]
    fn the_fig6_tcp_note_averages_over_many_flows_and_gives_a_verdict() {
        let o = Options {
            reno_counts: vec![10, 15, 20],
            ..Options::short(std::env::temp_dir())
        };
        let mut points = Vec::new();
        for (variant, ..) in FIG6_TCP_CELLS {
            points.push(point(variant, 10, 1.0, 0.5));
            points.push(point(variant, 15, 0.9, 0.1));
            points.push(point(variant, 20, 0.7, 0.2));
        }
        let note = fig6_tcp_note(&o, &points, 10);
        let line = format!("{:<22} success 0.80, bottleneck idle 0.150", "TCP vs TCP Reno");
        assert!(note.contains(&line), "{note}");
        assert!(
            note.contains("comes back (success 0.80 over x >= 15 against 0.80"),
            "{note}"
        );
        points.retain(|p| !(p.variant == "TCP vs TCP Reno" && p.n_reno == 20));
        points.push(point("TCP vs TCP Reno", 20, 0.1, 0.2));
        let note = fig6_tcp_note(&o, &points, 10);
        assert!(note.contains("does not come back (success 0.50"), "{note}");
    }
}
