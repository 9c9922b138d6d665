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
//!   `TPUT_BENCH_TCP_PROFILE=linux` runs the TCP-model flows of the 2 x 2
//!   in the TCP model's Linux profile instead (RACK-TLP, PRR, timestamps,
//!   40 ms delayed ACKs, IW 10, HyStart++; the competitors `newreno`);
//!   docs/seed000.md has both profiles' cells at x = 10 and 30, 3 seeds.
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
//! Each point is one single-threaded, deterministic simulation, and results
//! are reported in a fixed order, so the output does not depend on
//! scheduling.
//!
//! # As a plan
//!
//! [`Seed000`] is a [`Reproduction`]: every simulation, the Fig. 4/5
//! timeline included, is a point of its plan (points that keep their
//! per-flow results), and [`crate::repro`] runs it here, prints it
//! (`--plan`) or builds the figures from results run elsewhere (`--from
//! DIR`; see `benches/benches/seed000.rs`).

use std::path::Path;
use std::time::Duration;

use tput_cc::{ControllerSpec, units::Rate};
use tput_netsim::Rng;
use tput_transport::EvalSlot;

use crate::repro::{Built, Measurements, Planned, Reproduction};
use tput_lab::plan::Keep;
use tput_lab::scenario::{
    AggregateResult, FlowGroup, FlowResult, LinkSpec, Scenario, ScenarioResult, TcpSpec, TopologySpec,
};
use tput_tcp::{Profile, Recovery};

mod tables;
mod timeline;

use timeline::{PHASES, timeline_scenario};
pub use timeline::{Sample, Timeline, timeline};

/// Bottleneck rate, bits per second.
const BOTTLENECK_BPS: u64 = 100_000_000;
/// Datagram size (UDP payload), bytes.
const MTU: u16 = 1200;

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
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
    /// The TCP model's profile in `fig6-tcp`, for the guarantee flow over
    /// TCP and the TCP competitors (`tcp_spec`).
    pub tcp_profile: Profile,
}

/// Every figure name [`Options::figures`] accepts.
pub const FIGURES: [&str; 6] = ["fig4", "fig6", "fig6-inline", "fig6-eq45", "fig7", "fig6-tcp"];

impl Options {
    /// The full size: x in {1, 2, 5, 10, 15, 20, 25, 30, 35, 40},
    /// targets 10% and 20%, 3 seeds, 120 s per point, a 20 s timeline.
    pub fn full() -> Self {
        Self {
            point_duration: Duration::from_secs(120),
            timeline_duration: Duration::from_secs(20),
            reno_counts: vec![1, 2, 5, 10, 15, 20, 25, 30, 35, 40],
            targets_pct: vec![10, 20],
            seeds: vec![1, 2, 3],
            figures: FIGURES.iter().map(|s| s.to_string()).collect(),
            tcp_profile: Profile::Ns2,
        }
    }

    /// A smoke test of every figure: x in {1, 10}, one seed, 5 s points, a
    /// 12 s timeline (all three phases).
    pub fn short() -> Self {
        Self {
            point_duration: Duration::from_secs(5),
            timeline_duration: Duration::from_secs(12),
            reno_counts: vec![1, 10],
            seeds: vec![1],
            ..Self::full()
        }
    }

    fn wants(&self, figure: &str) -> bool {
        self.figures.iter().any(|f| f == figure)
    }

    /// `self` with what the environment sets: `TPUT_BENCH_N` (the x axis,
    /// numbers of Reno flows, e.g. `10,30`) and `TPUT_BENCH_TCP_PROFILE`
    /// (`ns2`, the default, or `linux`: the TCP model's profile in
    /// `fig6-tcp`). A value that does not parse is a one-line error naming
    /// the variable.
    pub fn with_env(mut self, var: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        if let Some(v) = var("TPUT_BENCH_N") {
            self.reno_counts = crate::env_counts(&v, "a number of Reno flows")?;
        }
        if let Some(v) = var("TPUT_BENCH_TCP_PROFILE") {
            self.tcp_profile = crate::env_tcp_profile(&v)?;
        }
        Ok(self)
    }
}

/// One simulation of Fig. 6 or 7 (a tested group against `n_reno` NewReno
/// flows), or the Fig. 4/5 timeline.
#[derive(Debug, Clone)]
pub struct Point {
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

/// Fig. 6 over TCP: with [`Profile::Ns2`] the TCP model as ns-2 2.35's
/// `Agent/TCP/Reno` with its defaults (1000-byte segments, initial window
/// 2, loss window 1, `minrto_` 200 ms, no delayed ACKs, Limited Transmit as
/// `singledup_`), the paper's competitors; with [`Profile::Linux`] the
/// Linux profile with 1000-byte segments (RACK-TLP over SACK, PRR,
/// timestamps, 40 ms delayed ACKs, IW 10 and HyStart++ on NewReno).
fn tcp_spec(profile: Profile) -> TcpSpec {
    crate::guarantee::tcp_spec(Recovery::Reno, profile)
}

/// A TCP Reno competitor in `profile` (see [`tcp_spec`]): `newreno:iw=2,lw=1`
/// with ns-2's defaults, `newreno` (Linux's `reno`) with the Linux profile.
fn tcp_reno(profile: Profile) -> FlowGroup {
    FlowGroup::new(spec(crate::guarantee::reno_cc(profile))).over_tcp(tcp_spec(profile))
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
    let tcp = tcp_reno(o.tcp_profile);
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
                            g = g.over_tcp(tcp_spec(o.tcp_profile));
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
pub enum Measured {
    /// A Fig. 6/7 point.
    Point(PointResult),
    /// The Fig. 4/5 timeline.
    Timeline(Timeline),
}

/// Build what `p` measured from its run's result `r`: the one place where a
/// local run and results collected from elsewhere become figures.
fn measured(p: &Point, r: &ScenarioResult) -> Result<Measured, String> {
    check_errors(r)?;
    if p.figure == "fig4" {
        return Ok(Measured::Timeline(timeline::timeline_of(&p.scenario, r)));
    }
    measure(p, r).map(Measured::Point)
}

fn measure(p: &Point, r: &ScenarioResult) -> Result<PointResult, String> {
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
        reno_mbps: mean(reno.iter().map(|f| f.bytes as f64 * 8.0 / secs / 1e6)),
        utilisation,
        idle,
        unfinished_tcp: r.flows.iter().filter(|f| unfinished_tcp(f)).count() as u32,
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

use tput_lab::stats::mean_or_nan as mean;

/// Seed 000's reproduction: the figures [`Options`] asks for.
#[derive(Debug, Clone)]
pub struct Seed000 {
    /// What to run.
    pub options: Options,
}

impl Reproduction for Seed000 {
    type Point = Point;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "seed000"
    }

    /// Every point of the options, each labelled with its figure, variant,
    /// target and Reno flows (its seed is the point's own `seed`), keeping
    /// the per-flow results its figure is built from (the timeline also its
    /// interval records and delivered-bytes samples).
    fn points(&self) -> Result<Vec<Planned<Point>>, String> {
        let o = &self.options;
        crate::repro::check_figures(&o.figures, &FIGURES)?;
        Ok(points(o)
            .into_iter()
            .map(|p| {
                let labels = [
                    ("figure", p.figure.to_string()),
                    ("variant", p.variant.to_string()),
                    ("target_pct", p.target_pct.to_string()),
                    ("n_reno", p.n_reno.to_string()),
                ];
                let keep = if p.figure == "fig4" {
                    Keep {
                        intervals: true,
                        delivered: true,
                        ..Keep::result()
                    }
                } else {
                    Keep::result()
                };
                Planned::new(p.clone(), labels, p.scenario, keep)
            })
            .collect())
    }

    fn label(&self, p: &Point) -> String {
        if p.figure == "fig4" {
            format!("fig4 timeline seed {}", p.seed)
        } else {
            format!(
                "{} {} {}% n={} seed {}",
                p.figure, p.variant, p.target_pct, p.n_reno, p.seed
            )
        }
    }

    fn measure(&self, p: &Point, r: &tput_lab::plan::PointResult) -> Result<Measured, String> {
        let result = crate::repro::kept_result(r)?;
        measured(p, result)
    }

    fn progress(&self, m: &Measured) -> String {
        match m {
            Measured::Point(x) => format!(
                "success {:.3} (aggregate {:.3}), idle {:.3}, {} TCP flow(s) unfinished",
                x.success, x.aggregate_success, x.idle, x.unfinished_tcp,
            ),
            Measured::Timeline(t) => format!("{} samples", t.samples.len()),
        }
    }

    /// The timeline's table and files (its point comes first), then the
    /// Fig. 6/7 tables and files.
    fn build(&self, out: &Path, measured: &Measurements<Point, Measured>) -> Result<Built, String> {
        let o = &self.options;
        let mut built = Built::default();
        let mut points = Vec::new();
        for (_, m) in measured {
            match m {
                Ok(Measured::Point(x)) => points.push(x.clone()),
                Ok(Measured::Timeline(t)) => {
                    built.text.push_str(&t.table());
                    built.files.extend(t.write(out)?);
                }
                Err(_) => {}
            }
        }
        if !points.is_empty() {
            built.text.push_str(&tables::tables(o, &points));
            built.files.extend(tables::write_points(o, out, &points)?);
        }
        Ok(built)
    }
}
