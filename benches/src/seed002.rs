//! Seed 002 reproduced: Y. Miyake, T. Kato, K. Suzuki, "Implementation of
//! high speed transport protocol as user level library and its evaluation"
//! (1995; see docs/papers.md): a user-level transport over UDP with several
//! application buffers in flight against window-limited kernel TCP. Our
//! user-level transport is QUIC itself (quinn-proto, TLS 1.3); the kernel
//! TCP is the simulator's TCP model.
//!
//! # Set-up
//!
//! - Path: sender host -> 140 Mbit/s access link -> 36.864 Mbit/s
//!   bottleneck (the paper's effective DS-3 rate) -> 140 Mbit/s access link
//!   -> receiver. The whole round-trip propagation delay sits on the
//!   bottleneck (half each way; the access links have none), RTT 0 to
//!   200 ms. The bottleneck's DropTail queue holds 750 packets, one
//!   bandwidth-delay product at 200 ms (36.864 Mbit/s x 200 ms = 921.6 kB
//!   = 750 packets of 1228 bytes). The reverse direction has the same rate
//!   and delay and no impairment: ACKs never see bit errors.
//! - Packets: 1200-byte UDP payloads, 1228 bytes on the wire with the
//!   simulator's 28-byte IP/UDP overhead; the TCP model sends 1188-byte
//!   segments, which with its 12-byte header make the same 1228-byte packets.
//!   At a bit error rate `b` a packet is lost with `p = 1 - (1 - b)^(1228*8)`:
//!   9.8e-5 at 1e-8, 9.8e-4 at 1e-7.
//! - The paper's application buffers: up to N = 1, 2, 4, 8 buffers of
//!   512 KiB in flight, each a QUIC stream; a new one opens only when an
//!   earlier one is fully acknowledged (scenario keys `buffers`,
//!   `buffer_size`; `tputctl send --buffers N --buffer-size 512KiB`).
//!   Controllers CUBIC and NewReno (RFC 9438, RFC 9002 §7).
//! - Kernel TCP: the TCP model with NewReno recovery, no SACK, a 53 KiB
//!   (54 272-byte) receive window and no window scaling (`tcp.receive_window`,
//!   `tcp.window_scaling = false`), no delayed ACKs, controller `newreno`.
//! - Throughput: verified payload (goodput) per second, measured over the
//!   sender's interval records after a warm-up (slow start excluded), so
//!   that the curves are the steady state the analytic bounds describe.
//!
//! # Figures
//!
//! - `rtt`: goodput against RTT for QUIC CUBIC and NewReno with N buffers
//!   and for the 53 KiB TCP, absolute and normalised to each curve's
//!   zero-RTT value, with the analytic curves `min(R, N B / (B/R + RTT))`
//!   (a buffer is reusable one RTT after its last byte left) and
//!   `min(R_tcp, W / RTT)`, R being the measured zero-RTT plateau.
//! - `ber`: goodput against RTT at bit error rates 1e-8 and 1e-7, all with
//!   NewReno: QUIC with 4 buffers (selective repeat), the TCP model with SACK
//!   (selective repeat) and with go-back-N, both with a 2 MiB receive
//!   window = the 4 x 512 KiB of the QUIC buffers. Its bottleneck queue
//!   holds 2000 packets, more than that window, so that no flow overflows
//!   it by its window alone (QUIC and the TCP model with SACK never do;
//!   go-back-N does at RTTs below 113 ms: its resends join their
//!   still-queued originals). With the 750-packet queue
//!   of the `rtt` figure the slow-start overshoot of the 2 MiB window drops
//!   hundreds of packets at once, and the recovery from that burst, not the
//!   bit errors, decided the long-RTT points (a full run gave 500 queue
//!   drops against 4-8 bit errors per flow at 150-200 ms, BER 1e-8).
//! - `live`: the RTT sweep with real UDP sockets on 127.0.0.1: a QUIC server,
//!   the relay of `tputctl relay` emulating the bottleneck (same rate, delay,
//!   queue) and a client sending with N buffers (CUBIC), every transfer
//!   verified, against the simulated point.
//!
//! # What the full run shows (and what it does not)
//!
//! Deterministic simulated numbers (60 s points, the first 10 s left out):
//!
//! - With 4 or 8 buffers both controllers stay at their zero-RTT plateau,
//!   34.9-35.0 Mbit/s of goodput (the link's 36.864 Mbit/s less IP/UDP/QUIC
//!   headers), at every RTT from 0 to 200 ms (lowest point 99% of the
//!   plateau): the paper's "~32 Mbit/s at every RTT", whose lower level was
//!   its 1995 hosts' limit, not the link's.
//! - One buffer decays as `B / (B/R + RTT)`: 19.1 Mbit/s at 100 ms, 11.6 at
//!   200 ms (bound 13.1; the measured curve lies within 0.2% of the bound
//!   up to 150 ms and 11% under it at 200 ms). Two buffers stay flat up to
//!   RTT = B/R = 120 ms and then follow `2B / (B/R + RTT)` (26.2 Mbit/s at
//!   200 ms): the paper saw the drop past ~125 ms. CUBIC and NewReno give
//!   the same numbers for 1 and 2 buffers: the application, not the
//!   controller, limits the flow and nothing is lost.
//! - The 53 KiB TCP without window scaling reaches 35.7 Mbit/s at zero
//!   delay (the paper: 26.78, a host limit) and follows `W / RTT` (within
//!   5%) from 13 ms on: 4.3 Mbit/s at 100 ms, 2.1 at 200 ms, 6% of its peak.
//! - Bit errors (4 buffers, NewReno everywhere, 2000-packet queue): at
//!   1e-8 (p = 9.8e-5) all three are alike up to 100 ms and follow the
//!   NewReno loss bound `1.22 MSS / (RTT sqrt(p))` (Mathis et al. 1997):
//!   the controller's halving per loss, not the recovery scheme, sets the
//!   rate. Beyond 100 ms one seed's run (the figure) puts go-back-N a little
//!   above SACK (GBN/SACK 1.06 at 200 ms, QUIC 1.16 above SACK), but over ten
//!   seeds the TCP model's SACK, its go-back-N and ns-2 2.35's
//!   `Agent/TCP/Sack1` on the same path agree within their seeds' spread
//!   (`cargo bench -p tput-benches --bench tcp_ns2`, part `ber`, 60 s
//!   measured from 10 s; mean [min-max] Mbit/s):
//!
//!   ```text
//!   RTT     ns-2 Sack1           model SACK           model go-back-N      Mathis
//!   50 ms   26.44 [24.45-30.52]  24.59 [18.57-30.89]  24.71 [19.11-30.64]  23.40
//!   100 ms  15.10 [12.28-20.40]  12.89 [10.11-17.14]  13.13 [10.57-16.76]  11.70
//!   150 ms  10.52 [7.76-13.99]    9.63 [7.24-15.37]    9.74 [7.16-14.99]    7.80
//!   200 ms   8.33 [5.76-12.61]    7.95 [5.75-14.58]    8.07 [5.92-14.22]    5.85
//!   ```
//!
//!   (0.3-0.5 timeouts per run on every side; SACK resends 65-98 segments
//!   per run, go-back-N 1800-2500, ns-2 15-60, for 6-16 bit errors.) So at
//!   one error per several seconds, selective repeat and go-back-N reach the
//!   same rate in TCP: the paper's advantage of selective repeat at long
//!   delay is not reproduced (nor is it in ns-2); at 1e-7 SACK is ahead by
//!   up to 8% at long RTTs (GBN/SACK 0.92 at 200 ms), the paper's direction.
//!
//!   Before two fixes to the model, SACK fell well below go-back-N beyond
//!   100 ms (ten seeds: 7.04 against 9.74 Mbit/s at 150 ms, 5.24 against 7.42
//!   at 200 ms, 3-4 timeouts per run), the opposite of the paper. The
//!   trace showed why: (1) the sender never told its controller that the
//!   2 MiB receive window, not the congestion window, limited it, so the
//!   controller's window grew to 14 000 segments; a loss halved that to
//!   7 000, still above the receive window, so the flow kept its whole
//!   window in flight and a standing queue of several hundred ms; (2) on
//!   entering recovery SACK resent the first hole only once `pipe` had
//!   fallen below the halved window, half a round trip later, so the
//!   retransmission waited longer than the RTO (RTO 471 ms against a
//!   470 ms smoothed RTT) and timed out; after the timeout SACK resent every
//!   segment its scoreboard had not seen SACKed. Now an ACK while the
//!   congestion window has room that the receive window keeps unused counts
//!   as application-limited for the controller (RFC 9002 §7.8; ns-2 halves
//!   `min(cwnd_, window_)`), and the first hole is resent at once (RFC 6675
//!   §5 step 4.3), as ns-2's Sack1 does.
//!
//! # The paper's other mechanisms
//!
//! - Rate control, `send rate = cwnd / srtt`, enforced by spacing packets:
//!   quinn-proto always paces, at 1.25 x cwnd / srtt (it cannot be turned
//!   off), while the paper measured with its rate control off. Pacing
//!   spreads each window over about 0.8 RTT instead of sending it at the
//!   hosts' 140 Mbit/s into the 36.864 Mbit/s bottleneck, so the queue sees
//!   at most a 1.25x overload instead of 3.8x bursts. In our runs one
//!   buffer never overflows the 750-packet queue (0 drops at every RTT),
//!   two buffers only at 0 ms (where 1 MiB exceeds the path's bandwidth-
//!   delay product plus the queue), four and eight at every RTT (100-2300
//!   drops per 60 s: their windows exceed what the path holds): the drops
//!   come from the window, not from bursts at the rate step. What pacing
//!   changes in the paper's numbers was not measured (no unpaced QUIC
//!   exists to compare with).
//! - Several UDP sockets per connection (to get past 64 KB kernel socket
//!   buffers) and zero-copy scatter/gather I/O are I/O techniques of 1995
//!   hosts. Our live path uses one UDP socket per endpoint with large
//!   socket buffers, GSO (up to 10 datagrams per `sendmsg`) and GRO on
//!   receive; the simulator has no I/O cost at all. The live figure
//!   therefore measures whether the same node code reaches the emulated
//!   link's rate on loopback, not host I/O cost: at 36.864 Mbit/s it does
//!   whenever the relay gets its CPU.
//!
//! # Live against simulated
//!
//! A full run on a shared 2-core machine (1-minute load average 8-10 from
//! other builds): 24 of the 27 live points lie within 10% of the simulated
//! ones (the largest difference among the 16 points where the relay kept
//! its schedule: 8.8%, one buffer at 150 and 200 ms, where the live curve
//! is 3-9% low throughout: each buffer's hand-over costs the live path a
//! little more than the simulator). The others lost datagrams because the
//! relay, starved of CPU, fell more than 25 ms behind its schedule ("late"
//! drops, a loss the simulated link never has): at 125 and 175 ms with one
//! buffer and 175 ms with four they cost 23-25%. A first run with this
//! bench's own tests and builds competing for the CPU had hundreds of late
//! drops at most points and fell to 1-3 Mbit/s at 150-200 ms (CUBIC left
//! slow start early on those losses). The table prints the late drops and
//! the load average per point.
//!
//! The full bench (255 simulations of 60 s, 27 live transfers of 12 s)
//! took 612 s of wall time on that machine (CPU 324 s; live part 351 s).
//!
//! Simulated points run in parallel on [`Options::jobs`] threads, each one
//! deterministic; live points run one at a time after them.
//!
//! # As a plan
//!
//! Every simulation is a point of [`plan`] (a `tput_lab::plan` plan whose
//! points keep their flow's interval records): a local run ([`reproduce`])
//! runs those points and builds the `rtt` and `ber` figures from their
//! results as read back from JSON; [`reproduce_from`] builds the same
//! tables and files from results that `tputctl sweep run` wrote anywhere
//! (all but `cpu.csv`, the local run's CPU times). The `live` figure's
//! transfers are real sockets, not simulations: they are in no plan and
//! always run where the figures are built. The bench's flags: `--plan`,
//! `--from DIR` (see `benches/benches/seed002.rs`).

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::sync::mpsc as std_mpsc;
use std::time::{Duration, Instant};

use tput_cc::{ControllerSpec, units::Rate};
use tput_lab::plan::Keep;
use tput_lab::plot::{Series, line_chart};
use tput_lab::relay::RelayLinks;
use tput_lab::scenario::{DelayedAck, FlowGroup, LinkSpec, Scenario, ScenarioResult, TcpSpec, TopologySpec};
use tput_lab::sweep::run_parallel;
use tput_lab::tcp::Recovery;
use tput_transport::{AppBuffers, Identity, IntervalStats, NodeConfig, ServerTrust, TransferSpec, udp};

use crate::{Ran, run_point};

/// The paper's bottleneck: DS-3 as seen through ATM, bits per second.
pub const BOTTLENECK_BPS: u64 = 36_864_000;
/// The hosts' links, bits per second.
pub const ACCESS_BPS: u64 = 140_000_000;
/// Bottleneck queue, packets: one bandwidth-delay product at 200 ms.
pub const QUEUE_PACKETS: u32 = 750;
/// Bottleneck queue of the `ber` figure, packets: more than the 2 MiB
/// window of its flows (about 1830 QUIC packets), so that every loss there
/// is a bit error and none a queue overflow.
pub const BER_QUEUE_PACKETS: u32 = 2000;
/// UDP payload of every QUIC packet, bytes.
pub const MTU: u16 = 1200;
/// Bytes on the wire per packet (payload + 28 bytes of IP/UDP).
pub const WIRE_BYTES: u64 = 1228;
/// TCP model segment: with its 12-byte header, the same wire size.
pub const TCP_SEGMENT: u64 = WIRE_BYTES - 28 - 12;
/// The paper's application buffer, read as 512 KiB.
pub const BUFFER_BYTES: u64 = 512 * 1024;
/// The paper's kernel TCP socket buffer, read as 53 KiB.
pub const TCP_WINDOW: u64 = 53 * 1024;
/// Figures this module knows.
pub const FIGURES: [&str; 3] = ["rtt", "ber", "live"];

/// What to run and where to write it.
#[derive(Debug, Clone)]
pub struct Options {
    /// Output directory.
    pub out_dir: PathBuf,
    /// Worker threads for simulated points.
    pub jobs: usize,
    /// Simulated time of a point.
    pub duration: Duration,
    /// Start of the measured part of a simulated point.
    pub warmup: Duration,
    /// RTTs of the `rtt` and `ber` figures, milliseconds.
    pub rtts_ms: Vec<u32>,
    /// Numbers of buffers of the `rtt` figure.
    pub buffers: Vec<u32>,
    /// Bit error rates of the `ber` figure.
    pub bers: Vec<f64>,
    /// RTTs of the live sweep, milliseconds (a subset of `rtts_ms` to be compared).
    pub live_rtts_ms: Vec<u32>,
    /// Numbers of buffers of the live sweep (CUBIC).
    pub live_buffers: Vec<u32>,
    /// Length of a live transfer.
    pub live_duration: Duration,
    /// Start of the measured part of a live transfer.
    pub live_warmup: Duration,
    /// Seed of every simulation.
    pub seed: u64,
    /// Figures to run (empty: all).
    pub figures: Vec<String>,
}

impl Options {
    /// The full size: RTT every 12.5 ms (rounded to whole ms) from 0 to
    /// 200 ms, 60 s points (10 s warm-up); live every 25 ms, N = 1, 2, 4,
    /// 12 s transfers (3 s warm-up).
    pub fn full(out_dir: PathBuf) -> Self {
        Self {
            out_dir,
            jobs: tput_lab::sweep::default_jobs(),
            duration: Duration::from_secs(60),
            warmup: Duration::from_secs(10),
            rtts_ms: (0..=16u32).map(|i| (i * 25).div_ceil(2)).collect(),
            buffers: vec![1, 2, 4, 8],
            bers: vec![1e-8, 1e-7],
            live_rtts_ms: (0..=8).map(|i| i * 25).collect(),
            live_buffers: vec![1, 2, 4],
            live_duration: Duration::from_secs(12),
            live_warmup: Duration::from_secs(3),
            seed: 1,
            figures: Vec::new(),
        }
    }

    /// A smoke test of every figure: RTT 0, 100, 200 ms, 8 s points (2 s
    /// warm-up), live N = 4 only with 5 s transfers.
    pub fn short(out_dir: PathBuf) -> Self {
        Self {
            duration: Duration::from_secs(8),
            warmup: Duration::from_secs(2),
            rtts_ms: vec![0, 100, 200],
            live_rtts_ms: vec![0, 100, 200],
            live_buffers: vec![4],
            live_duration: Duration::from_secs(5),
            live_warmup: Duration::from_secs(2),
            ..Self::full(out_dir)
        }
    }

    fn wants(&self, figure: &str) -> bool {
        self.figures.is_empty() || self.figures.iter().any(|f| f == figure)
    }
}

/// What a simulated or live point measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// QUIC with `n` application buffers; `cubic` else NewReno.
    Quic {
        /// CUBIC (else NewReno).
        cubic: bool,
        /// Buffers in flight.
        n: u32,
    },
    /// The TCP model: 53 KiB window, no scaling, NewReno recovery, no SACK.
    TcpWindowLimited,
    /// The TCP model with SACK and a 2 MiB window.
    TcpSack,
    /// The TCP model with go-back-N and a 2 MiB window.
    TcpGbn,
}

impl Variant {
    /// The label of tables and legends.
    pub fn label(&self) -> String {
        match self {
            Variant::Quic { cubic, n } => format!("QUIC {} N={n}", if *cubic { "CUBIC" } else { "NewReno" }),
            Variant::TcpWindowLimited => "TCP 53KiB NewReno".into(),
            Variant::TcpSack => "TCP SACK".into(),
            Variant::TcpGbn => "TCP go-back-N".into(),
        }
    }
}

/// One simulated point.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    /// `rtt` or `ber`.
    pub figure: &'static str,
    /// What runs.
    pub variant: Variant,
    /// Round-trip propagation delay, ms.
    pub rtt_ms: u32,
    /// Bit error rate of the bottleneck (forward direction only).
    pub ber: f64,
}

/// What one point measured.
#[derive(Debug, Clone, PartialEq)]
pub struct PointResult {
    /// The point.
    pub point: Point,
    /// Steady goodput after the warm-up, Mbit/s.
    pub mbps: f64,
    /// Verified payload bytes of the whole run.
    pub bytes: u64,
    /// Packets the bottleneck dropped at random (bit errors).
    pub random_drops: u64,
    /// Packets the bottleneck's queue dropped.
    pub queue_drops: u64,
    /// CPU seconds of the simulation.
    pub cpu_secs: f64,
}

fn spec(text: &str) -> ControllerSpec {
    text.parse()
        .unwrap_or_else(|e| panic!("built-in controller spec {text:?}: {e}"))
}

/// The paper's path at `rtt_ms` with bit error rate `ber` (see the module docs).
pub fn scenario(p: &Point, o: &Options) -> Scenario {
    let half = Duration::from_micros(u64::from(p.rtt_ms) * 500);
    let queue = if p.figure == "ber" {
        BER_QUEUE_PACKETS
    } else {
        QUEUE_PACKETS
    };
    let mut bottleneck = LinkSpec::new(Rate::from_bits_per_sec(BOTTLENECK_BPS), half).with_queue_packets(queue);
    if p.ber > 0.0 {
        bottleneck.ber = Some(p.ber);
    }
    let access = LinkSpec::new(Rate::from_bits_per_sec(ACCESS_BPS), Duration::ZERO).with_queue_packets(1000);
    let tcp = |recovery: Recovery, sack: bool, window: u64, scaling: bool| TcpSpec {
        recovery: Some(recovery),
        sack: Some(sack),
        receive_window: Some(window),
        window_scaling: Some(scaling),
        segment: Some(TCP_SEGMENT),
        delayed_ack: Some(DelayedAck::Switch(false)),
        ..TcpSpec::default()
    };
    let flow = match p.variant {
        Variant::Quic { cubic, n } => {
            FlowGroup::new(spec(if cubic { "cubic" } else { "newreno" })).with_buffers(n, BUFFER_BYTES)
        }
        Variant::TcpWindowLimited => {
            FlowGroup::new(spec("newreno")).over_tcp(tcp(Recovery::NewReno, false, TCP_WINDOW, false))
        }
        Variant::TcpSack => FlowGroup::new(spec("newreno")).over_tcp(tcp(Recovery::Sack, true, 4 * BUFFER_BYTES, true)),
        Variant::TcpGbn => FlowGroup::new(spec("newreno")).over_tcp(tcp(Recovery::Gbn, false, 4 * BUFFER_BYTES, true)),
    }
    .with_start_jitter(Duration::ZERO);
    let mut s = Scenario::new(o.duration, TopologySpec::dumbbell(bottleneck, access), vec![flow]);
    s.name = Some(format!(
        "seed002 {} {} rtt={}ms ber={}",
        p.figure,
        p.variant.label(),
        p.rtt_ms,
        p.ber
    ));
    s.seed = o.seed;
    s.mtu = MTU;
    s
}

/// Goodput of the records that start at or after `warmup`, Mbit/s. The
/// last record is left out: it ends when the sender's time is up and takes
/// everything the receiver verified after that (the data still in flight
/// and queued), so it would overstate the rate.
pub fn steady_mbps(intervals: &[IntervalStats], warmup: Duration) -> f64 {
    let w = warmup.as_secs_f64();
    let full = &intervals[..intervals.len().saturating_sub(1)];
    let kept: Vec<_> = full.iter().filter(|i| i.start_secs >= w - 1e-9).collect();
    let (Some(first), Some(last)) = (kept.first(), kept.last()) else {
        return f64::NAN;
    };
    let secs = last.end_secs - first.start_secs;
    if secs <= 0.0 {
        return f64::NAN;
    }
    kept.iter().map(|i| i.bytes as f64).sum::<f64>() * 8.0 / secs / 1e6
}

/// What `p` measured, from its run's result `r` (`cpu`: the simulation's
/// CPU seconds, 0 when unknown): the one place where a local run and
/// results collected from elsewhere become figures.
fn measure(p: &Point, o: &Options, r: &ScenarioResult, cpu: f64) -> Result<PointResult, String> {
    let f = r.flows.first().ok_or("no flow")?;
    // A timed TCP flow may still be recovering its last segments when the
    // drain ends; its steady part is measured all the same.
    let real = f
        .errors
        .iter()
        .find(|e| !(f.tcp.is_some() && e.contains("did not finish within the drain time")));
    if let Some(e) = real {
        return Err(format!("flow failed: {e}"));
    }
    // The records cover the sending time only: the last one ends at the
    // transfer's end (the drain is not counted).
    let intervals: Vec<IntervalStats> = f
        .intervals
        .iter()
        .filter(|i| i.end_secs <= o.duration.as_secs_f64() + 1e-9)
        .cloned()
        .collect();
    Ok(PointResult {
        point: p.clone(),
        mbps: steady_mbps(&intervals, o.warmup),
        bytes: f.bytes,
        random_drops: r.bottleneck.dropped_random.packets,
        queue_drops: r.bottleneck.dropped_queue.packets,
        cpu_secs: cpu,
    })
}

fn points(o: &Options) -> Vec<Point> {
    let mut v = Vec::new();
    if o.wants("rtt") || o.wants("live") {
        for &rtt_ms in &o.rtts_ms {
            for cubic in [true, false] {
                for &n in &o.buffers {
                    v.push(Point {
                        figure: "rtt",
                        variant: Variant::Quic { cubic, n },
                        rtt_ms,
                        ber: 0.0,
                    });
                }
            }
            v.push(Point {
                figure: "rtt",
                variant: Variant::TcpWindowLimited,
                rtt_ms,
                ber: 0.0,
            });
        }
    }
    if o.wants("ber") {
        for &ber in &o.bers {
            for &rtt_ms in &o.rtts_ms {
                for variant in [Variant::Quic { cubic: false, n: 4 }, Variant::TcpSack, Variant::TcpGbn] {
                    v.push(Point {
                        figure: "ber",
                        variant,
                        rtt_ms,
                        ber,
                    });
                }
            }
        }
    }
    v
}

/// One live transfer through the relay.
#[derive(Debug, Clone, PartialEq)]
pub struct LivePoint {
    /// Round-trip delay of the emulated link, ms.
    pub rtt_ms: u32,
    /// Buffers in flight (CUBIC).
    pub n: u32,
    /// Steady goodput after the warm-up, Mbit/s (NaN if the transfer failed).
    pub mbps: f64,
    /// Payload bytes the receiver verified.
    pub verified_bytes: u64,
    /// The transfer's error, if any.
    pub error: Option<String>,
    /// The relay's drops in the forward direction: queue, overload (late).
    pub drops: (u64, u64),
    /// Smallest RTT the sender measured, ms.
    pub min_rtt_ms: f64,
    /// The machine's 1-minute load average when the transfer started
    /// (`/proc/loadavg`; NaN elsewhere).
    pub load: f64,
}

/// The 1-minute load average, NaN off Linux.
fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

/// Everything a run produced.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// The tables, as printed.
    pub text: String,
    /// Every simulated point, in a fixed order.
    pub points: Vec<PointResult>,
    /// Live points, in order.
    pub live: Vec<LivePoint>,
    /// Points that failed, with the reason.
    pub failures: Vec<String>,
    /// Files written.
    pub files: Vec<PathBuf>,
    /// Wall seconds of the live sweep.
    pub live_secs: f64,
}

impl Point {
    /// The point's name in progress lines, errors and failures.
    fn label(&self) -> String {
        format!(
            "{} {} rtt={}ms ber={:e}",
            self.figure,
            self.variant.label(),
            self.rtt_ms,
            self.ber
        )
    }
}

/// Every simulated point of `o` and the plan that runs them (same order),
/// each plan point labelled with its figure, variant, RTT and bit error
/// rate, and keeping its flow's interval records (the goodput is measured
/// from them).
fn planned(o: &Options) -> Result<(Vec<Point>, Vec<tput_lab::plan::Point>), String> {
    for f in &o.figures {
        if !FIGURES.contains(&f.as_str()) {
            return Err(format!("unknown figure {f:?}; known: {}", FIGURES.join(", ")));
        }
    }
    if o.warmup >= o.duration || o.live_warmup >= o.live_duration {
        return Err("the warm-up must be shorter than the run".into());
    }
    let pts = points(o);
    let keep = Keep {
        intervals: true,
        ..Keep::result()
    };
    let items = pts
        .iter()
        .map(|p| {
            let labels = [
                ("figure", p.figure.to_string()),
                ("variant", p.variant.label()),
                ("rtt_ms", p.rtt_ms.to_string()),
                ("ber", format!("{:e}", p.ber)),
            ]
            .map(|(k, v)| (k.to_string(), v))
            .into();
            (labels, scenario(p, o), keep.clone())
        })
        .collect();
    let plan = tput_lab::plan::plan_scenarios(items).map_err(|e| e.to_string())?;
    Ok((pts, plan))
}

/// The plan of the simulations `o` asks for, in the order a local run runs
/// them: what `--plan` prints, for `tputctl sweep run FILE --index N --out
/// DIR` to run anywhere and [`reproduce_from`] to build the figures from.
/// The live transfers are not in it: they run where the figures are built.
pub fn plan(o: &Options) -> Result<Vec<tput_lab::plan::Point>, String> {
    planned(o).map(|(_, plan)| plan)
}

/// What one plan point gave.
fn measured_of(p: &Point, o: &Options, ran: Ran) -> Result<PointResult, String> {
    let (r, cpu) = ran?;
    let result = r
        .result
        .as_ref()
        .ok_or("the point's result keeps no per-flow results (not from this bench's plan)")?;
    measure(p, o, result, cpu)
}

/// Run the figures `o` asks for; `progress` gets one line per finished
/// point. The simulations are the points of [`plan`], run here on
/// [`Options::jobs`] threads and read back as a collector reads a file of
/// `tputctl sweep run`; the live transfers run after them.
pub fn reproduce(o: &Options, mut progress: impl FnMut(&str) + Send) -> Result<Report, String> {
    let (pts, plan) = planned(o)?;
    let total = plan.len();
    let ran = run_parallel(&plan, o.jobs, run_point, |done, p, r| {
        let pt = &pts[p.index];
        let line = match r.clone().and_then(|ran| measured_of(pt, o, Ok(ran))) {
            Ok(x) => format!(
                "{}: {:.2} Mbit/s, drops {} queue {} random, {:.1} CPU-s",
                pt.label(),
                x.mbps,
                x.queue_drops,
                x.random_drops,
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
/// options) instead of simulating: the same files as [`reproduce`] but for
/// `cpu.csv`. The live transfers (figure `live`), which no plan holds, run
/// here as in a local run. A missing result, or results of another plan, is
/// a one-line error naming the point.
pub fn reproduce_from(o: &Options, dir: &std::path::Path, progress: impl FnMut(&str) + Send) -> Result<Report, String> {
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
    let mut cpu = String::from("figure,variant,rtt_ms,ber,cpu_secs\n");
    for (p, r) in pts.iter().zip(ran) {
        if let Ok((_, secs)) = &r {
            let _ = writeln!(
                cpu,
                "{},{},{},{:e},{secs}",
                p.figure,
                p.variant.label(),
                p.rtt_ms,
                p.ber
            );
        }
        match measured_of(p, o, r) {
            Ok(x) => report.points.push(x),
            Err(e) => report.failures.push(format!("{}: {e}", p.label())),
        }
    }
    if o.wants("live") {
        let t = Instant::now();
        report.live = live_sweep(o, &mut progress)?;
        report.live_secs = t.elapsed().as_secs_f64();
        for l in &report.live {
            if let Some(e) = &l.error {
                report.failures.push(format!("live rtt={}ms N={}: {e}", l.rtt_ms, l.n));
            }
        }
    }
    let mut files: Vec<(String, String)> = Vec::new();
    if o.wants("rtt") {
        report.text.push_str(&rtt_tables(o, &report.points));
        files.extend(rtt_files(o, &report.points));
    }
    if o.wants("ber") {
        report.text.push_str(&ber_table(o, &report.points));
        files.extend(ber_files(o, &report.points));
    }
    if o.wants("live") {
        report.text.push_str(&live_table(o, &report.points, &report.live));
        files.extend(live_files(o, &report.points, &report.live));
    }
    if !report.failures.is_empty() {
        let _ = writeln!(report.text, "\nFAILED points:");
        for f in &report.failures {
            let _ = writeln!(report.text, "  {f}");
        }
    }
    if local {
        files.push(("cpu.csv".into(), cpu));
    }
    files.push(("tables.txt".into(), report.text.clone()));
    for (name, body) in files {
        let path = o.out_dir.join(&name);
        std::fs::write(&path, body).map_err(|e| format!("writing {}: {e}", path.display()))?;
        report.files.push(path);
    }
    Ok(report)
}

// ---- the analytic curves ---------------------------------------------------

/// The N-buffer bound (the paper's own arithmetic): a buffer of `b` bytes
/// is written in `b / R` and reusable one RTT after its last byte, so `n`
/// buffers carry `n b` bytes per `b / R + RTT`, at most `R`. Bits per second.
pub fn buffers_bound(n: u32, b: u64, plateau_bps: f64, rtt_secs: f64) -> f64 {
    let bits = b as f64 * 8.0;
    (f64::from(n) * bits / (bits / plateau_bps + rtt_secs)).min(plateau_bps)
}

/// The window bound of a window-limited TCP: `min(R, W / RTT)`, bits per second.
pub fn window_bound(window: u64, plateau_bps: f64, rtt_secs: f64) -> f64 {
    if rtt_secs <= 0.0 {
        return plateau_bps;
    }
    (window as f64 * 8.0 / rtt_secs).min(plateau_bps)
}

// ---- tables and files --------------------------------------------------------

fn find<'a>(points: &'a [PointResult], figure: &str, v: Variant, rtt: u32, ber: f64) -> Option<&'a PointResult> {
    points
        .iter()
        .find(|p| p.point.figure == figure && p.point.variant == v && p.point.rtt_ms == rtt && p.point.ber == ber)
}

fn rtt_variants(o: &Options) -> Vec<Variant> {
    let mut v: Vec<Variant> = Vec::new();
    for cubic in [true, false] {
        for &n in &o.buffers {
            v.push(Variant::Quic { cubic, n });
        }
    }
    v.push(Variant::TcpWindowLimited);
    v
}

/// A curve's zero-RTT (smallest RTT) value, Mbit/s.
fn plateau(points: &[PointResult], o: &Options, v: Variant) -> Option<f64> {
    let rtt = *o.rtts_ms.iter().min()?;
    find(points, "rtt", v, rtt, 0.0).map(|p| p.mbps)
}

/// The QUIC plateau `R` of the analytic curves: the best zero-RTT value of
/// the controller's curves.
fn quic_plateau(points: &[PointResult], o: &Options, cubic: bool) -> Option<f64> {
    o.buffers
        .iter()
        .filter_map(|&n| plateau(points, o, Variant::Quic { cubic, n }))
        .fold(None, |a: Option<f64>, x| Some(a.map_or(x, |a| a.max(x))))
}

fn cell(x: Option<f64>, prec: usize) -> String {
    match x {
        Some(v) if v.is_finite() => format!("{v:.prec$}"),
        _ => "-".into(),
    }
}

fn rtt_tables(o: &Options, points: &[PointResult]) -> String {
    let vars = rtt_variants(o);
    let mut t = String::new();
    let _ = writeln!(
        t,
        "\n== Throughput vs RTT (simulated): 36.864 Mbit/s bottleneck, {}-packet queue, {} KiB buffers, goodput after {} s of {} s, Mbit/s ==",
        QUEUE_PACKETS,
        BUFFER_BYTES / 1024,
        o.warmup.as_secs(),
        o.duration.as_secs()
    );
    for normalised in [false, true] {
        if normalised {
            let _ = writeln!(t, "\n-- the same, normalised to each curve's zero-RTT value --");
        }
        let _ = write!(t, "{:>7}", "RTT ms");
        for v in &vars {
            let l = v.label().replace("QUIC ", "").replace("NewReno", "NR");
            let _ = write!(t, " {:>12}", l);
        }
        if !normalised {
            let _ = write!(t, " {:>10} {:>10} {:>10}", "bound N=1", "bound N=2", "TCP bound");
        }
        let _ = writeln!(t);
        let r_cubic = quic_plateau(points, o, true);
        let r_tcp = plateau(points, o, Variant::TcpWindowLimited);
        for &rtt in &o.rtts_ms {
            let _ = write!(t, "{rtt:>7}");
            for &v in &vars {
                let x = find(points, "rtt", v, rtt, 0.0).map(|p| p.mbps);
                let x = if normalised {
                    x.zip(plateau(points, o, v)).map(|(a, b)| a / b)
                } else {
                    x
                };
                let _ = write!(t, " {:>12}", cell(x, if normalised { 3 } else { 2 }));
            }
            if !normalised {
                let s = f64::from(rtt) / 1e3;
                let b1 = r_cubic.map(|r| buffers_bound(1, BUFFER_BYTES, r * 1e6, s) / 1e6);
                let b2 = r_cubic.map(|r| buffers_bound(2, BUFFER_BYTES, r * 1e6, s) / 1e6);
                let bt = r_tcp.map(|r| window_bound(TCP_WINDOW, r * 1e6, s) / 1e6);
                let _ = write!(t, " {:>10} {:>10} {:>10}", cell(b1, 2), cell(b2, 2), cell(bt, 2));
            }
            let _ = writeln!(t);
        }
    }
    let _ = writeln!(
        t,
        "(bounds: R = the best zero-RTT CUBIC value for N buffers, min(R, N B/(B/R + RTT)); TCP: min(R_tcp, 53 KiB x 8 / RTT))"
    );
    t.push_str(&paper_comparison(o, points));
    t
}

/// The normalised value of `v` at `rtt`.
fn norm(points: &[PointResult], o: &Options, v: Variant, rtt: u32) -> Option<f64> {
    let x = find(points, "rtt", v, rtt, 0.0)?.mbps;
    Some(x / plateau(points, o, v)?)
}

/// The largest RTT up to which `v` stays at 95% of its plateau or more.
fn knee(points: &[PointResult], o: &Options, v: Variant) -> Option<u32> {
    let mut last = None;
    for &rtt in &o.rtts_ms {
        if norm(points, o, v, rtt)? >= 0.95 {
            last = Some(rtt);
        } else {
            break;
        }
    }
    last
}

fn paper_comparison(o: &Options, points: &[PointResult]) -> String {
    let mut t = String::new();
    let max_rtt = *o.rtts_ms.iter().max().unwrap_or(&0);
    let _ = writeln!(t, "\n-- beside the paper's claims (Miyake, Kato, Suzuki 1995) --");
    for cubic in [true, false] {
        let cc = if cubic { "CUBIC" } else { "NewReno" };
        let r = quic_plateau(points, o, cubic);
        for n in [4u32, 8] {
            let v = Variant::Quic { cubic, n };
            let lows: Vec<f64> = o.rtts_ms.iter().filter_map(|&x| norm(points, o, v, x)).collect();
            if lows.is_empty() {
                continue;
            }
            let min = lows.iter().copied().fold(f64::INFINITY, f64::min);
            let _ = writeln!(
                t,
                "{cc} N={n}: paper ~32 Mbit/s at every RTT 0-200 ms; ours {} Mbit/s at 0 ms, lowest {:.0}% of it over 0-{max_rtt} ms: {}",
                cell(plateau(points, o, v), 2),
                min * 100.0,
                if min >= 0.9 {
                    "flat, agrees"
                } else {
                    "not flat, differs"
                }
            );
        }
        let v1 = Variant::Quic { cubic, n: 1 };
        if let (Some(x), Some(r)) = (find(points, "rtt", v1, max_rtt, 0.0), r) {
            let _ = writeln!(
                t,
                "{cc} N=1: paper decays with RTT; ours {:.2} Mbit/s at {max_rtt} ms ({:.0}% of its 0-ms value), bound B/(B/R+RTT) = {:.2}",
                x.mbps,
                norm(points, o, v1, max_rtt).unwrap_or(f64::NAN) * 100.0,
                buffers_bound(1, BUFFER_BYTES, r * 1e6, f64::from(max_rtt) / 1e3) / 1e6
            );
        }
        let v2 = Variant::Quic { cubic, n: 2 };
        if let Some(r) = r
            && plateau(points, o, v2).is_some()
        {
            let _ = writeln!(
                t,
                "{cc} N=2: paper drops past ~125 ms; ours stays >= 95% up to {} ms, bound's knee B/R = {:.0} ms",
                knee(points, o, v2).map_or("-".into(), |k| k.to_string()),
                BUFFER_BYTES as f64 * 8.0 / (r * 1e6) * 1e3
            );
        }
    }
    let v = Variant::TcpWindowLimited;
    if let (Some(p0), Some(x)) = (plateau(points, o, v), find(points, "rtt", v, max_rtt, 0.0)) {
        let _ = writeln!(
            t,
            "TCP 53 KiB: paper 26.78 Mbit/s at 0 ms, falls steeply; ours {p0:.2} Mbit/s at 0 ms, {:.2} at {max_rtt} ms ({:.0}%), bound 53 KiB x 8 / RTT = {:.2}",
            x.mbps,
            x.mbps / p0 * 100.0,
            window_bound(TCP_WINDOW, p0 * 1e6, f64::from(max_rtt) / 1e3) / 1e6
        );
    }
    t
}

fn fine_rtts(o: &Options) -> Vec<f64> {
    let max = f64::from(*o.rtts_ms.iter().max().unwrap_or(&200));
    (0..=((max / 2.5) as u32)).map(|i| f64::from(i) * 2.5).collect()
}

fn rtt_files(o: &Options, points: &[PointResult]) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut csv =
        String::from("figure,variant,cc,buffers,rtt_ms,ber,goodput_mbps,normalised,bytes,queue_drops,random_drops\n");
    for p in points {
        let (cc, n) = match p.point.variant {
            Variant::Quic { cubic, n } => (if cubic { "cubic" } else { "newreno" }, n.to_string()),
            _ => ("newreno", String::new()),
        };
        let nv = if p.point.figure == "rtt" {
            norm(points, o, p.point.variant, p.point.rtt_ms)
        } else {
            None
        };
        let _ = writeln!(
            csv,
            "{},{},{cc},{n},{},{:e},{:.4},{},{},{},{}",
            p.point.figure,
            p.point.variant.label(),
            p.point.rtt_ms,
            p.point.ber,
            p.mbps,
            nv.map_or(String::new(), |x| format!("{x:.4}")),
            p.bytes,
            p.queue_drops,
            p.random_drops
        );
    }
    files.push(("points.csv".into(), csv));
    for cubic in [true, false] {
        let cc = if cubic { "CUBIC" } else { "NewReno" };
        let mut series = Vec::new();
        for &n in &o.buffers {
            let v = Variant::Quic { cubic, n };
            series.push(measured(points, o, v, false, &v.label()));
        }
        series.push(measured(
            points,
            o,
            Variant::TcpWindowLimited,
            false,
            "TCP 53 KiB (model)",
        ));
        if let Some(r) = quic_plateau(points, o, cubic) {
            for n in [1u32, 2, 4] {
                series.push(Series {
                    name: format!("bound N={n}{}", if n == 4 { ",8" } else { "" }),
                    points: fine_rtts(o)
                        .into_iter()
                        .map(|x| (x, buffers_bound(n, BUFFER_BYTES, r * 1e6, x / 1e3) / 1e6))
                        .collect(),
                });
            }
        }
        if let Some(r) = plateau(points, o, Variant::TcpWindowLimited) {
            series.push(Series {
                name: "bound 53 KiB x 8 / RTT".into(),
                points: fine_rtts(o)
                    .into_iter()
                    .filter(|&x| x > 0.0)
                    .map(|x| (x, window_bound(TCP_WINDOW, r * 1e6, x / 1e3) / 1e6))
                    .collect(),
            });
        }
        files.push((
            format!("rtt_{}.svg", cc.to_lowercase()),
            line_chart(
                &format!("Goodput vs RTT: QUIC {cc}, N x 512 KiB; TCP 53 KiB (sim.)"),
                "RTT (ms)",
                "goodput (Mbit/s)",
                &series,
            ),
        ));
    }
    let series: Vec<Series> = rtt_variants(o)
        .into_iter()
        .map(|v| measured(points, o, v, true, &v.label()))
        .collect();
    files.push((
        "rtt_normalised.svg".into(),
        line_chart(
            "Goodput vs RTT, normalised to each curve's 0-ms value (sim.)",
            "RTT (ms)",
            "goodput / goodput at 0 ms",
            &series,
        ),
    ));
    files
}

fn measured(points: &[PointResult], o: &Options, v: Variant, normalised: bool, name: &str) -> Series {
    Series {
        name: name.into(),
        points: o
            .rtts_ms
            .iter()
            .filter_map(|&rtt| {
                let y = if normalised {
                    norm(points, o, v, rtt)?
                } else {
                    find(points, "rtt", v, rtt, 0.0)?.mbps
                };
                Some((f64::from(rtt), y))
            })
            .collect(),
    }
}

/// What the controller's reaction to random loss allows, bits per second:
/// the NewReno/Reno steady state `1.22 MSS / (RTT sqrt(p))` (M. Mathis,
/// J. Semke, J. Mahdavi, T. Ott, "The macroscopic behavior of the TCP
/// congestion avoidance algorithm", CCR 27(3), 1997, eq. 3), with the TCP
/// model's segment as MSS and the propagation RTT, at most the bottleneck
/// rate. A recovery scheme cannot beat it; it can only lose more.
pub fn loss_bound(ber: f64, rtt_secs: f64) -> f64 {
    let r = BOTTLENECK_BPS as f64;
    if rtt_secs <= 0.0 {
        return r;
    }
    (1.22 * TCP_SEGMENT as f64 * 8.0 / (rtt_secs * packet_loss(ber).sqrt())).min(r)
}

/// Packet loss probability of a `WIRE_BYTES` packet at bit error rate `ber`.
pub fn packet_loss(ber: f64) -> f64 {
    1.0 - (1.0 - ber).powf(WIRE_BYTES as f64 * 8.0)
}

const BER_VARIANTS: [Variant; 3] = [Variant::Quic { cubic: false, n: 4 }, Variant::TcpSack, Variant::TcpGbn];

fn ber_table(o: &Options, points: &[PointResult]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "\n== Throughput vs RTT with random bit errors (simulated), NewReno everywhere, Mbit/s ==\n\
         (1228-byte packets; errors on the data direction only, ACKs see none; QUIC with 4 x 512 KiB buffers,\n\
         TCP model with a 2 MiB window = 4 x 512 KiB; a 2000-packet queue, more than the window (queue drops in\n\
         points.csv: QUIC and TCP SACK none; TCP go-back-N below 113 ms, its resends joining their queued originals); GBN/SACK = go-back-N over selective repeat in the same model; drops = bit errors per flow;\n\
         NR bound = 1.22 MSS / (RTT sqrt(p)), Mathis et al. 1997: what NewReno's halving per loss allows)"
    );
    for &ber in &o.bers {
        let _ = writeln!(t, "\nBER {ber:e}: packet loss p = {:.2e}", packet_loss(ber));
        let _ = writeln!(
            t,
            "{:>7} {:>12} {:>12} {:>12} {:>9} {:>9} {:>14} {:>9}",
            "RTT ms", "QUIC SR", "TCP SACK", "TCP GBN", "GBN/SACK", "QUIC/SACK", "drops Q/S/G", "NR bound"
        );
        for &rtt in &o.rtts_ms {
            let get = |v| find(points, "ber", v, rtt, ber);
            let [q, s, g] = BER_VARIANTS.map(get);
            let ratio = |a: Option<&PointResult>, b: Option<&PointResult>| a.zip(b).map(|(a, b)| a.mbps / b.mbps);
            let drops = [q, s, g].map(|x| x.map_or("-".into(), |p| p.random_drops.to_string()));
            let _ = writeln!(
                t,
                "{rtt:>7} {:>12} {:>12} {:>12} {:>9} {:>9} {:>14} {:>9}",
                cell(q.map(|p| p.mbps), 2),
                cell(s.map(|p| p.mbps), 2),
                cell(g.map(|p| p.mbps), 2),
                cell(ratio(g, s), 3),
                cell(ratio(q, s), 3),
                drops.join("/"),
                cell(Some(loss_bound(ber, f64::from(rtt) / 1e3) / 1e6), 2)
            );
        }
        let lo = *o.rtts_ms.iter().min().unwrap_or(&0);
        let hi = *o.rtts_ms.iter().max().unwrap_or(&0);
        let r = |rtt| {
            find(points, "ber", Variant::TcpGbn, rtt, ber)
                .zip(find(points, "ber", Variant::TcpSack, rtt, ber))
                .map(|(g, s)| g.mbps / s.mbps)
        };
        if let (Some(a), Some(b)) = (r(lo), r(hi)) {
            let _ = writeln!(
                t,
                "paper (at BER 1e-8): selective beats go-back-N as the delay grows, alike at small delay; ours GBN/SACK {a:.2} at {lo} ms, {b:.2} at {hi} ms: {}",
                if b < a - 0.05 && a > 0.9 {
                    "agrees"
                } else if b > a + 0.05 {
                    "differs (go-back-N does better at long delay)"
                } else {
                    "differs (no difference here)"
                }
            );
        }
    }
    t
}

fn ber_files(o: &Options, points: &[PointResult]) -> Vec<(String, String)> {
    let mut series = Vec::new();
    for &ber in &o.bers {
        for v in BER_VARIANTS {
            series.push(Series {
                name: format!("{} BER {ber:e}", v.label().replace("QUIC NewReno N=4", "QUIC SR 4 buf")),
                points: o
                    .rtts_ms
                    .iter()
                    .filter_map(|&rtt| Some((f64::from(rtt), find(points, "ber", v, rtt, ber)?.mbps)))
                    .collect(),
            });
        }
    }
    for &ber in &o.bers {
        series.push(Series {
            name: format!("NewReno loss bound BER {ber:e}"),
            points: fine_rtts(o)
                .into_iter()
                .map(|x| (x, loss_bound(ber, x / 1e3) / 1e6))
                .collect(),
        });
    }
    vec![(
        "ber.svg".into(),
        line_chart(
            "Bit errors: selective repeat vs go-back-N (NewReno, sim.)",
            "RTT (ms)",
            "goodput (Mbit/s)",
            &series,
        ),
    )]
}

// ---- live ------------------------------------------------------------------

fn rt() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting a runtime: {e}"))
}

fn live_node_config() -> NodeConfig {
    NodeConfig {
        idle_timeout: Duration::from_secs(10),
        mtu: MTU,
        mtu_discovery: false,
        ..NodeConfig::default()
    }
}

/// A QUIC server on its own thread for the rest of the process (what
/// `tputctl serve` runs).
fn start_server() -> Result<(SocketAddr, Identity), String> {
    let id = Identity::self_signed(&["localhost"]).map_err(|e| e.to_string())?;
    let served = id.clone();
    let (tx, rx) = std_mpsc::channel();
    std::thread::spawn(move || {
        let rt = match rt() {
            Ok(rt) => rt,
            Err(e) => {
                let _ = tx.send(Err(e));
                return;
            }
        };
        rt.block_on(async move {
            let socket = match udp::bind_server("127.0.0.1:0".parse().expect("an address")).await {
                Ok(s) => s,
                Err(e) => {
                    let _ = tx.send(Err(e.to_string()));
                    return;
                }
            };
            let _ = tx.send(socket.local_addr().map_err(|e| e.to_string()));
            let _ = udp::serve(&socket, &served, live_node_config(), |_, _| ControlFlow::Continue(())).await;
        });
    });
    let addr = rx
        .recv_timeout(Duration::from_secs(10))
        .map_err(|_| "the server did not start".to_string())??;
    Ok((addr, id))
}

/// The relay of `tputctl relay` emulating the bottleneck at `rtt_ms` (half each way).
fn start_relay(to: SocketAddr, rtt_ms: u32, seed: u64) -> Result<crate::LiveRelay, String> {
    let link = LinkSpec::new(
        Rate::from_bits_per_sec(BOTTLENECK_BPS),
        Duration::from_micros(u64::from(rtt_ms) * 500),
    )
    .with_queue_packets(QUEUE_PACKETS);
    crate::LiveRelay::start(
        to,
        RelayLinks {
            forward: link,
            reverse: None,
        },
        seed,
    )
}

fn live_sweep(o: &Options, progress: &mut impl FnMut(&str)) -> Result<Vec<LivePoint>, String> {
    let (server, id) = start_server()?;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let mut out = Vec::new();
    let total = o.live_rtts_ms.len() * o.live_buffers.len();
    for &rtt_ms in &o.live_rtts_ms {
        for &n in &o.live_buffers {
            let load = load_average();
            let relay = start_relay(server, rtt_ms, o.seed)?;
            let mut spec = TransferSpec::upload(0, spec("cubic"));
            spec.bytes = None;
            spec.duration = Some(o.live_duration);
            spec.interval = Duration::from_secs(1);
            spec.buffers = Some(AppBuffers {
                count: n,
                size: BUFFER_BYTES,
            });
            let limit = o.live_duration + Duration::from_secs(30);
            let outcome = rt()?.block_on(async {
                tokio::time::timeout(
                    limit,
                    udp::transfer(
                        relay.addr,
                        "localhost",
                        &trust,
                        live_node_config(),
                        vec![spec],
                        |_, _| {},
                    ),
                )
                .await
            });
            let stats = relay.finish()?;
            let p = match outcome {
                Err(_) => LivePoint {
                    rtt_ms,
                    n,
                    mbps: f64::NAN,
                    verified_bytes: 0,
                    error: Some(format!("no result within {} s", limit.as_secs())),
                    drops: (0, 0),
                    min_rtt_ms: f64::NAN,
                    load,
                },
                Ok(Err(e)) => LivePoint {
                    rtt_ms,
                    n,
                    mbps: f64::NAN,
                    verified_bytes: 0,
                    error: Some(e.to_string()),
                    drops: (0, 0),
                    min_rtt_ms: f64::NAN,
                    load,
                },
                Ok(Ok(v)) => {
                    let o1 = v.into_iter().next().ok_or("no transfer outcome")?;
                    let verified = o1.receiver.as_ref().map_or(0, |r| r.bytes);
                    let error = o1.error.clone().or_else(|| {
                        (verified == 0 || verified != o1.bytes)
                            .then(|| format!("receiver verified {verified} of {} bytes", o1.bytes))
                    });
                    LivePoint {
                        rtt_ms,
                        n,
                        mbps: steady_mbps(&o1.intervals, o.live_warmup),
                        verified_bytes: verified,
                        error,
                        drops: (
                            stats.forward.dropped_queue.packets,
                            stats.forward.dropped_overload.packets,
                        ),
                        min_rtt_ms: o1.intervals.iter().map(|i| i.min_rtt_ms).fold(f64::INFINITY, f64::min),
                        load,
                    }
                }
            };
            progress(&format!(
                "[live {}/{total}] rtt={rtt_ms}ms N={n}: {:.2} Mbit/s, {} bytes verified, drops queue {} overload {}{}",
                out.len() + 1,
                p.mbps,
                p.verified_bytes,
                p.drops.0,
                p.drops.1,
                p.error.as_ref().map_or(String::new(), |e| format!(", FAILED: {e}"))
            ));
            out.push(p);
        }
    }
    Ok(out)
}

fn live_table(o: &Options, points: &[PointResult], live: &[LivePoint]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "\n== Live vs simulated: QUIC CUBIC with N x 512 KiB buffers through the relay on 127.0.0.1, goodput after {} s of {} s (simulated: {} s of {} s), Mbit/s ==",
        o.live_warmup.as_secs(),
        o.live_duration.as_secs(),
        o.warmup.as_secs(),
        o.duration.as_secs()
    );
    let _ = writeln!(
        t,
        "{:>7} {:>3} {:>9} {:>9} {:>8} {:>10} {:>13} {:>14} {:>6}",
        "RTT ms", "N", "live", "sim", "diff %", "min RTT", "verified MB", "drops q/late", "load"
    );
    let mut worst: Option<f64> = None;
    let mut worst_clean: Option<f64> = None;
    for l in live {
        let sim = find(points, "rtt", Variant::Quic { cubic: true, n: l.n }, l.rtt_ms, 0.0).map(|p| p.mbps);
        let diff = sim.map(|s| (l.mbps - s) / s * 100.0).filter(|d| d.is_finite());
        if let Some(d) = diff {
            worst = Some(worst.map_or(d.abs(), |w: f64| w.max(d.abs())));
            if l.drops.1 == 0 {
                worst_clean = Some(worst_clean.map_or(d.abs(), |w: f64| w.max(d.abs())));
            }
        }
        let _ = writeln!(
            t,
            "{:>7} {:>3} {:>9} {:>9} {:>8} {:>10} {:>13} {:>14} {:>6}{}",
            l.rtt_ms,
            l.n,
            cell(Some(l.mbps), 2),
            cell(sim, 2),
            cell(diff, 1),
            cell(Some(l.min_rtt_ms), 1),
            format!("{:.1}", l.verified_bytes as f64 / 1e6),
            format!("{}/{}", l.drops.0, l.drops.1),
            cell(Some(l.load), 1),
            l.error.as_ref().map_or(String::new(), |e| format!("  FAILED: {e}"))
        );
    }
    if let Some(w) = worst {
        let _ = writeln!(
            t,
            "largest |live - sim| / sim: {w:.1}% (goal: within 10% at every RTT): {}",
            if w <= 10.0 { "met" } else { "not met" }
        );
        let _ = writeln!(
            t,
            "among the points where the relay kept up (no late drop): {}\n\
             (late = departures the relay dropped because it ran more than 25 ms behind its schedule, i.e. was\n\
             starved of CPU: a loss the simulated link does not have. load = the 1-minute load average at the start.)",
            worst_clean.map_or("none".into(), |w| format!("largest difference {w:.1}%"))
        );
    }
    t
}

fn live_files(o: &Options, points: &[PointResult], live: &[LivePoint]) -> Vec<(String, String)> {
    let mut csv = String::from(
        "rtt_ms,buffers,live_mbps,sim_mbps,diff_pct,min_rtt_ms,verified_bytes,queue_drops,late_drops,error\n",
    );
    let mut series = Vec::new();
    for &n in &o.live_buffers {
        let v = Variant::Quic { cubic: true, n };
        series.push(measured(points, o, v, false, &format!("simulated N={n}")));
        series.push(Series {
            name: format!("live N={n}"),
            points: live
                .iter()
                .filter(|l| l.n == n)
                .map(|l| (f64::from(l.rtt_ms), l.mbps))
                .collect(),
        });
    }
    for l in live {
        let sim = find(points, "rtt", Variant::Quic { cubic: true, n: l.n }, l.rtt_ms, 0.0).map(|p| p.mbps);
        let _ = writeln!(
            csv,
            "{},{},{:.4},{},{},{:.2},{},{},{},{}",
            l.rtt_ms,
            l.n,
            l.mbps,
            sim.map_or(String::new(), |s| format!("{s:.4}")),
            sim.map_or(String::new(), |s| format!("{:.2}", (l.mbps - s) / s * 100.0)),
            l.min_rtt_ms,
            l.verified_bytes,
            l.drops.0,
            l.drops.1,
            l.error.as_deref().unwrap_or("").replace(',', ";")
        );
    }
    vec![
        ("live.csv".into(), csv),
        (
            "live.svg".into(),
            line_chart(
                "QUIC CUBIC, N x 512 KiB: live (relay) vs simulated",
                "RTT (ms)",
                "goodput (Mbit/s)",
                &series,
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_follow_the_papers_arithmetic() {
        let r = 32e6;
        // One buffer at 200 ms: B / (B/R + RTT), about 12.7 Mbit/s.
        let one = buffers_bound(1, BUFFER_BYTES, r, 0.2) / 1e6;
        assert!((one - 12.7).abs() < 0.1, "{one}");
        // Two buffers stay at R up to RTT = B/R (131 ms at 32 Mbit/s).
        assert_eq!(buffers_bound(2, BUFFER_BYTES, r, 0.130), r);
        assert!(buffers_bound(2, BUFFER_BYTES, r, 0.135) < r);
        assert_eq!(buffers_bound(4, BUFFER_BYTES, r, 0.2), r);
        assert_eq!(window_bound(TCP_WINDOW, r, 0.0), r);
        let tcp = window_bound(TCP_WINDOW, r, 0.1) / 1e6;
        assert!((tcp - 4.342).abs() < 0.01, "{tcp}");
        let p = packet_loss(1e-8);
        assert!((p - 9.8e-5).abs() < 0.1e-5, "{p}");
    }
}
