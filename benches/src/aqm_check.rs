//! The queue disciplines cross-checked: netsim's RED against ns-2's
//! `Queue/RED`, its CoDel and FQ-CoDel against ns-3's `CoDelQueueDisc` and
//! `FqCoDelQueueDisc`, TCP against TCP on both sides (`cargo bench -p
//! tput-benches --bench aqm_check`).
//!
//! # RED (ns-2 2.35)
//!
//! The seed-000 dumbbell of [`crate::tcp_ns2`] (bottleneck 100 Mbit/s, 5 ms,
//! 30 packets; access 1 Gbit/s, 2.5 ms), its bottleneck a RED queue with
//! ns-2's parameters set explicitly on both sides ([`red_queue`]: thresholds
//! 5 and 15 packets, `max_p` 0.1, weight 0.002, gentle, `wait`, packet mode,
//! mean packet 1040 wire bytes, drops and no ECN), N background flows and a
//! tagged one, 1000-byte segments, starts uniform in `[0, 1)` s: ns-2's
//! `Agent/TCP/Sack1` with `Agent/TCPSink/Sack1` (`benches/ns2/red_compare.tcl`)
//! against the TCP model with SACK recovery and ns-2's rules
//! ([`crate::tcp_ns2::Model::Ns2`]). Compared: utilisation, loss rate,
//! drops, the mean of the queue sampled every 10 ms (waiting packets),
//! Jain's index and the tagged and smallest flow's share of a fair share.
//!
//! # CoDel and FQ-CoDel (ns-3)
//!
//! A dumbbell with a 20 Mbit/s bottleneck of 20 ms and 1 Gbit/s access links
//! of 2.5 ms (a 50 ms RTT), the bottleneck's discipline CoDel or FQ-CoDel
//! (target 5 ms, interval 100 ms, limit 1000 packets, no ECN: the TCP model
//! sends Not-ECT, so both sides drop; FQ-CoDel with 1024 flows and a quantum
//! of 1514 bytes), 1228-byte packets (1188-byte segments and 40 bytes of
//! headers), SACK, an initial window of 10, an ACK per segment, a minimum
//! RTO of 200 ms and PRR on both sides, flows starting uniformly in
//! `[0, 1)` s: 1 and 10 NewReno flows, and one CUBIC (HyStart off) beside one
//! BBR (ns-3's `TcpBbr` is BBRv1, ours BBRv3: the pair is compared for what
//! the queue does to it, not for the controllers' sameness). ns-3's side is
//! `benches/ns3/aqm_compare.py`. Compared: utilisation, the queue's sojourn
//! time p50 and p99 (every packet's, over the run), AQM and overflow drops,
//! marks, Jain's index and CUBIC's share.
//!
//! Each figure is the mean over seeds; a difference is within its
//! [`Tolerance`] when `|ours - reference| <= max(abs, rel * |reference|)`.
//! The reference runs are the bench's own (on its threads) when `ns` and
//! Python's `ns` module are installed; each run's raw output is kept under
//! `OUT/ref/`, and `TPUT_BENCH_REUSE_REF=1` reads it back instead of running
//! it again.
//!
//! # Outcome
//!
//! docs/scenarios.md ("Cross-check against ns-2 and ns-3") has the tables:
//! RED agrees with ns-2 in every figure at 2, 11 and 31 flows; CoDel with
//! 10 NewReno flows agrees with ns-3 in every figure; the one-flow p99
//! differs by the start-up transient, the CUBIC+BBR pair by the BBR versions
//! (ns-3's BBRv1, our BBRv3), and FQ-CoDel with 10 NewReno flows keeps a
//! longer standing queue and a busier link than ns-3's because ns-3's PRR
//! (`TcpPrrRecovery::DoRecovery`) counts a SACKed duplicate ACK's segment
//! twice (RFC 6937 §3 counts it once): its senders keep sending one segment
//! per ACK for the first half of a recovery, so a flow queue stays above
//! target for CoDel's second drop an interval later. `--rfc-prr` in the
//! ns-3 script counts it once and removes the difference.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use tput_cc::units::Rate;
use tput_lab::plan::{Keep, PointResult};
use tput_lab::scenario::{
    DelayedAck, FlowGroup, LinkSpec, QueueKind, QueueSpec, Scenario, ScenarioResult, TcpSpec, TopologySpec,
};
use tput_lab::stats::jain;
use tput_lab::sweep::run_parallel;
use tput_tcp::Recovery;

use crate::repro::{Built, Csv, Measurements, Planned, Reproduction, kept_result, write_files};
use crate::tcp_ns2::{self, Model, Variant};

/// The CoDel / FQ-CoDel dumbbell's bottleneck rate, bits per second.
pub const NS3_RATE_BPS: u64 = 20_000_000;
/// Its segment payload (1228 bytes on the wire).
pub const NS3_SEGMENT: u64 = 1188;
/// The queue limit of the CoDel / FQ-CoDel bottleneck, packets.
pub const NS3_LIMIT: u32 = 1000;

/// The queue disciplines compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Aqm {
    /// RED, against ns-2.
    Red,
    /// CoDel, against ns-3.
    Codel,
    /// FQ-CoDel, against ns-3.
    FqCodel,
}

impl Aqm {
    /// Every part, in order.
    pub const ALL: [Aqm; 3] = [Aqm::Red, Aqm::Codel, Aqm::FqCodel];

    /// The part's name (`TPUT_BENCH_PARTS`, tables, the ns-3 script's argument).
    pub fn name(self) -> &'static str {
        match self {
            Aqm::Red => "red",
            Aqm::Codel => "codel",
            Aqm::FqCodel => "fq_codel",
        }
    }

    fn reference(self) -> &'static str {
        match self {
            Aqm::Red => "ns-2",
            Aqm::Codel | Aqm::FqCodel => "ns-3",
        }
    }
}

/// Who sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Flows {
    /// RED's dumbbell: a tagged SACK flow and `background` more.
    Sack {
        /// Background flows.
        background: u32,
    },
    /// `n` NewReno flows.
    NewReno(u32),
    /// One CUBIC flow (first) beside one BBR flow.
    CubicBbr,
}

impl Flows {
    /// The name in tables, and for ns-3 its mix argument.
    pub fn name(self) -> String {
        match self {
            Flows::Sack { background } => format!("1+{background} sack"),
            Flows::NewReno(n) => format!("{n}newreno"),
            Flows::CubicBbr => "cubic+bbr".into(),
        }
    }

    /// The number of flows.
    pub fn count(self) -> usize {
        match self {
            Flows::Sack { background } => background as usize + 1,
            Flows::NewReno(n) => n as usize,
            Flows::CubicBbr => 2,
        }
    }
}

/// One run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Case {
    /// The discipline.
    pub aqm: Aqm,
    /// The flows.
    pub flows: Flows,
    /// Seed of the start instants (each side draws its own).
    pub seed: u64,
    /// Simulated seconds.
    pub secs: u64,
}

impl Case {
    fn label(&self) -> String {
        format!(
            "{} {} seed {} {} s",
            self.aqm.name(),
            self.flows.name(),
            self.seed,
            self.secs
        )
    }

    /// The reference's raw output file under `OUT/ref/`.
    fn ref_file(&self) -> String {
        match self.flows {
            Flows::Sack { background } => format!("ns2-red-n{background}-s{}-{}s.txt", self.seed, self.secs),
            f => format!("ns3-{}-{}-s{}-{}s.txt", self.aqm.name(), f.name(), self.seed, self.secs),
        }
    }
}

/// What one run measured (either side).
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// The bottleneck transmitter's busy time over the run.
    pub utilisation: f64,
    /// Packets the bottleneck sent.
    pub sent: u64,
    /// Drops by the discipline's AQM (RED's early and forced drops, CoDel's
    /// control law); ns-2's RED: every drop (it does not split them).
    pub aqm_drops: u64,
    /// Overflow drops (a full queue; FQ-CoDel's drops from the fattest flow).
    pub overflow_drops: u64,
    /// CE marks.
    pub marks: u64,
    /// Mean waiting packets, sampled every 10 ms (RED).
    pub mean_queue: Option<f64>,
    /// ns-2's mean of RED's own average `ave_` at the same samples.
    pub red_ave: Option<f64>,
    /// Queue sojourn time p50, ms (CoDel, FQ-CoDel).
    pub sojourn_p50_ms: Option<f64>,
    /// The same, p99.
    pub sojourn_p99_ms: Option<f64>,
    /// Payload bytes delivered per flow, in flow order.
    pub bytes: Vec<u64>,
}

impl Metrics {
    /// Every drop.
    pub fn drops(&self) -> u64 {
        self.aqm_drops + self.overflow_drops
    }

    /// Drops over packets offered to the bottleneck, percent.
    pub fn loss_pct(&self) -> f64 {
        let offered = self.sent + self.drops();
        if offered == 0 {
            0.0
        } else {
            100.0 * self.drops() as f64 / offered as f64
        }
    }

    /// Jain's index over the flows' bytes.
    pub fn jain(&self) -> f64 {
        jain(&self.bytes.iter().map(|&b| b as f64).collect::<Vec<_>>()).unwrap_or(0.0)
    }

    /// Flow `i`'s bytes over the mean flow's (1: a fair share).
    pub fn share(&self, i: usize) -> f64 {
        let total: u64 = self.bytes.iter().sum();
        if total == 0 {
            return 0.0;
        }
        self.bytes.get(i).copied().unwrap_or(0) as f64 * self.bytes.len() as f64 / total as f64
    }

    /// The smallest flow's share of a fair share.
    pub fn min_share(&self) -> f64 {
        (0..self.bytes.len())
            .map(|i| self.share(i))
            .fold(f64::INFINITY, f64::min)
    }
}

/// RED's parameters on both sides (ns-2's, set explicitly in `red_compare.tcl`).
pub fn red_queue() -> QueueSpec {
    QueueSpec {
        min_th: Some(5.0),
        max_th: Some(15.0),
        max_p: Some(0.1),
        weight: Some(0.002),
        gentle: Some(true),
        bytes: Some(false),
        mean_packet: Some(1040),
        wait: Some(true),
        ecn: Some(false),
        ..QueueSpec::new(QueueKind::Red)
    }
}

/// CoDel's or FQ-CoDel's parameters on both sides.
pub fn codel_queue(aqm: Aqm) -> QueueSpec {
    let mut q = QueueSpec {
        target: Some(Duration::from_millis(5)),
        interval: Some(Duration::from_millis(100)),
        ecn: Some(false),
        ..QueueSpec::new(QueueKind::Codel)
    };
    if aqm == Aqm::FqCodel {
        q.kind = QueueKind::FqCodel;
        q.quantum = Some(1514);
        q.flows = Some(1024);
    }
    q
}

/// The TCP model's parameters against ns-3 (see the module docs).
pub fn ns3_tcp() -> TcpSpec {
    TcpSpec {
        recovery: Some(Recovery::Sack),
        sack: Some(true),
        prr: Some(true),
        segment: Some(NS3_SEGMENT),
        delayed_ack: Some(DelayedAck::Switch(false)),
        min_rto: Some(Duration::from_millis(200)),
        limited_transmit: Some(true),
        timestamps: Some(false),
        ..TcpSpec::default()
    }
}

/// Our scenario for `case`.
pub fn scenario(case: &Case) -> Scenario {
    match case.flows {
        Flows::Sack { background } => {
            let c = tcp_ns2::Case {
                n_background: background,
                seed: case.seed,
                variant: Variant::Sack,
                duration: Duration::from_secs(case.secs),
            };
            let mut s = tcp_ns2::scenario(&c, Model::Ns2);
            if let TopologySpec::Dumbbell { bottleneck, .. } = &mut s.topology {
                *bottleneck = bottleneck.clone().with_queue(red_queue());
            }
            s.name = Some("aqm-check-red".into());
            s.interval = Duration::from_millis(10);
            s
        }
        flows => {
            let group = |spec: &str, n: u32| {
                FlowGroup::new(spec.parse().expect("built-in spec"))
                    .over_tcp(ns3_tcp())
                    .times(n)
                    .with_start_jitter(Duration::from_secs(1))
            };
            let groups = match flows {
                Flows::NewReno(n) => vec![group("newreno", n)],
                _ => vec![group("cubic:hystart=false", 1), group("bbr", 1)],
            };
            let bottleneck = LinkSpec::new(Rate::from_bits_per_sec(NS3_RATE_BPS), Duration::from_millis(20))
                .with_queue_packets(NS3_LIMIT)
                .with_queue(codel_queue(case.aqm));
            let access = LinkSpec::new(Rate::from_bits_per_sec(1_000_000_000), Duration::from_micros(2500))
                .with_queue_packets(10_000);
            Scenario {
                name: Some(format!("aqm-check-{}", case.aqm.name())),
                seed: case.seed,
                ..Scenario::new(
                    Duration::from_secs(case.secs),
                    TopologySpec::dumbbell(bottleneck, access),
                    groups,
                )
            }
        }
    }
}

/// What our run `r` of `case` measured.
pub fn metrics(case: &Case, r: &ScenarioResult) -> Result<Metrics, String> {
    let b = &r.window.bottleneck;
    let secs = case.secs as f64;
    let mean_queue = match case.aqm {
        Aqm::Red => {
            let samples: Vec<f64> = r
                .queue
                .iter()
                .filter(|q| q.time_ns as f64 / 1e9 < secs)
                .map(|q| q.packets as f64)
                .collect();
            if samples.is_empty() {
                return Err("no queue samples".into());
            }
            Some(samples.iter().sum::<f64>() / samples.len() as f64)
        }
        _ => None,
    };
    let ms = |ns: u64| (case.aqm != Aqm::Red).then_some(ns as f64 / 1e6);
    Ok(Metrics {
        utilisation: b.busy_ns as f64 / (secs * 1e9),
        sent: b.delivered.packets + b.dropped_random.packets,
        aqm_drops: b.dropped_aqm.packets,
        overflow_drops: b.dropped_queue.packets,
        marks: b.marked.packets,
        mean_queue,
        red_ave: None,
        sojourn_p50_ms: ms(b.sojourn_p50_ns),
        sojourn_p99_ms: ms(b.sojourn_p99_ns),
        bytes: r.flows.iter().map(|f| f.bytes).collect(),
    })
}

/// One line of a reference's output: its first word and a reader of its
/// `i`th field as a number, which names the line when it is not one.
fn fields(line: &str) -> (Option<&str>, impl Fn(usize) -> Result<f64, String> + '_) {
    let f: Vec<&str> = line.split_whitespace().collect();
    let tag = f.first().copied();
    let num = move |i: usize| -> Result<f64, String> {
        f.get(i)
            .and_then(|s| s.parse::<f64>().ok())
            .ok_or_else(|| format!("bad reference line {line:?} (field {i})"))
    };
    (tag, num)
}

/// Parse `red_compare.tcl`'s output for `n_flows` flows.
pub fn parse_ns2_red(out: &str, n_flows: usize) -> Result<Metrics, String> {
    let mut bytes = vec![None; n_flows];
    let (mut queue, mut bottleneck) = (None, None);
    for line in out.lines() {
        let (tag, num) = fields(line);
        match tag {
            Some("flow") => {
                let i = num(1)? as usize;
                *bytes.get_mut(i).ok_or_else(|| format!("flow {i} of {n_flows}"))? = Some(num(2)? as u64);
            }
            Some("queue") => queue = Some((num(2)?, num(3)?)),
            Some("bottleneck") => bottleneck = Some((num(1)?, num(2)?, num(3)?, num(5)?)),
            _ => {}
        }
    }
    let (departed_bytes, sent, drops, secs) = bottleneck.ok_or("no bottleneck line in ns-2's output")?;
    let (mean_queue, ave) = queue.ok_or("no queue line in ns-2's output")?;
    let bytes = bytes
        .into_iter()
        .enumerate()
        .map(|(i, b)| b.ok_or_else(|| format!("no flow {i} line in ns-2's output")))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Metrics {
        utilisation: departed_bytes * 8.0 / (tcp_ns2::BOTTLENECK_BPS as f64 * secs),
        sent: sent as u64,
        aqm_drops: drops as u64,
        overflow_drops: 0,
        marks: 0,
        mean_queue: Some(mean_queue),
        red_ave: Some(ave),
        sojourn_p50_ms: None,
        sojourn_p99_ms: None,
        bytes,
    })
}

/// Parse `aqm_compare.py`'s `result` record for `n_flows` flows.
pub fn parse_ns3(out: &str, n_flows: usize) -> Result<Metrics, String> {
    let line = out
        .lines()
        .find(|l| l.starts_with("result "))
        .ok_or("no result line in ns-3's output")?;
    let (_, num) = fields(line);
    let n = line.split_whitespace().count();
    if n != 12 + n_flows {
        return Err(format!(
            "ns-3's result has {} flows, expected {n_flows}",
            n.saturating_sub(12)
        ));
    }
    Ok(Metrics {
        utilisation: num(5)?,
        sojourn_p50_ms: Some(num(6)?),
        sojourn_p99_ms: Some(num(7)?),
        aqm_drops: num(8)? as u64,
        overflow_drops: num(9)? as u64,
        marks: num(10)? as u64,
        sent: num(11)? as u64,
        mean_queue: None,
        red_ave: None,
        bytes: (0..n_flows)
            .map(|i| num(12 + i).map(|b| b as u64))
            .collect::<Result<_, _>>()?,
    })
}

/// How far ours may be from the reference: `max(abs, rel * |reference|)`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Tolerance {
    /// Absolute, in the metric's unit.
    pub abs: f64,
    /// Relative to the reference.
    pub rel: f64,
}

impl Tolerance {
    /// The allowed difference at `reference`.
    pub fn allowed(self, reference: f64) -> f64 {
        self.abs.max(self.rel * reference.abs())
    }
}

/// A compared figure: its name, how it is read from a run, its tolerance.
pub struct Figure {
    /// Name in tables and CSV.
    pub name: &'static str,
    /// The value of one run, if the run has it.
    pub value: fn(&Metrics) -> Option<f64>,
    /// The tolerance.
    pub tolerance: Tolerance,
}

const fn tol(abs: f64, rel: f64) -> Tolerance {
    Tolerance { abs, rel }
}

/// The figures compared for `flows` (a figure of no meaning, such as Jain's
/// index of one flow, is left out).
pub fn figures(aqm: Aqm, flows: Flows) -> Vec<Figure> {
    let f = |name, value, tolerance| Figure { name, value, tolerance };
    let mut out = vec![f("utilisation", |m: &Metrics| Some(m.utilisation), tol(0.02, 0.0))];
    if aqm == Aqm::Red {
        out.push(f("loss %", |m| Some(m.loss_pct()), tol(0.05, 0.25)));
        out.push(f("mean queue pkts", |m| m.mean_queue, tol(0.5, 0.25)));
    } else {
        out.push(f("sojourn p50 ms", |m| m.sojourn_p50_ms, tol(1.0, 0.25)));
        out.push(f("sojourn p99 ms", |m| m.sojourn_p99_ms, tol(3.0, 0.25)));
        out.push(f("aqm drops", |m| Some(m.aqm_drops as f64), tol(10.0, 0.3)));
        out.push(f("overflow drops", |m| Some(m.overflow_drops as f64), tol(10.0, 0.5)));
        out.push(f("marks", |m| Some(m.marks as f64), tol(0.0, 0.0)));
    }
    match flows {
        Flows::Sack { .. } => {
            out.push(f("jain", |m| Some(m.jain()), tol(0.03, 0.0)));
            out.push(f("tagged share", |m| Some(m.share(0)), tol(0.15, 0.0)));
            out.push(f("min share", |m| Some(m.min_share()), tol(0.15, 0.0)));
        }
        Flows::NewReno(n) if n > 1 => {
            out.push(f("jain", |m| Some(m.jain()), tol(0.03, 0.0)));
            out.push(f("min share", |m| Some(m.min_share()), tol(0.15, 0.0)));
        }
        Flows::NewReno(_) => {}
        Flows::CubicBbr => out.push(f("cubic share", |m| Some(m.share(0) / 2.0), tol(0.1, 0.0))),
    }
    out
}

/// One row of a comparison.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// Part and case (`red 1+10 sack`).
    pub case: String,
    /// The figure's name.
    pub figure: &'static str,
    /// Ours, mean over seeds.
    pub ours: f64,
    /// The reference's, mean over seeds, and its smallest and largest seed.
    pub reference: Option<(f64, f64, f64)>,
    /// The allowed difference.
    pub allowed: f64,
}

impl Row {
    /// Ours minus the reference.
    pub fn diff(&self) -> Option<f64> {
        self.reference.map(|(r, _, _)| self.ours - r)
    }

    /// Whether the difference is within the tolerance.
    pub fn within(&self) -> Option<bool> {
        self.diff().map(|d| d.abs() <= self.allowed + 1e-12)
    }
}

/// The comparison rows of one case from its runs on both sides.
pub fn rows(aqm: Aqm, flows: Flows, ours: &[&Metrics], reference: &[&Metrics]) -> Vec<Row> {
    let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
    figures(aqm, flows)
        .into_iter()
        .filter_map(|fig| {
            let o: Vec<f64> = ours.iter().filter_map(|m| (fig.value)(m)).collect();
            if o.is_empty() {
                return None;
            }
            let r: Vec<f64> = reference.iter().filter_map(|m| (fig.value)(m)).collect();
            let reference = (!r.is_empty()).then(|| {
                let (lo, hi) = r
                    .iter()
                    .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
                (mean(&r), lo, hi)
            });
            Some(Row {
                case: format!("{} {}", aqm.name(), flows.name()),
                figure: fig.name,
                ours: mean(&o),
                allowed: fig.tolerance.allowed(reference.map_or(mean(&o), |r| r.0)),
                reference,
            })
        })
        .collect()
}

/// The bench's settings.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// Parts run.
    pub parts: Vec<Aqm>,
    /// Background flows of RED's dumbbell.
    pub red_background: Vec<u32>,
    /// Seeds 1..=seeds.
    pub seeds: u64,
    /// Simulated seconds per run.
    pub secs: u64,
    /// Worker threads for the reference runs.
    pub jobs: usize,
    /// Read references' raw output back from `OUT/ref/` when present.
    pub reuse: bool,
    /// Run the references (ns-2, ns-3) where installed; off: our side only.
    pub references: bool,
}

impl Options {
    /// The full run: RED with 1, 10 and 30 background flows, 3 seeds, 60 s.
    pub fn full() -> Self {
        Options {
            parts: Aqm::ALL.to_vec(),
            red_background: vec![1, 10, 30],
            seeds: 3,
            secs: 60,
            jobs: 1,
            reuse: false,
            references: true,
        }
    }

    /// The smoke run: RED with 1 and 10 background flows, 1 seed, 10 s.
    pub fn short() -> Self {
        Options {
            red_background: vec![1, 10],
            seeds: 1,
            secs: 10,
            ..Options::full()
        }
    }

    /// With `TPUT_BENCH_PARTS`, `TPUT_BENCH_SEEDS`, `TPUT_BENCH_DURATION`
    /// and `TPUT_BENCH_REUSE_REF` read through `var`; a bad value is a
    /// one-line error naming the variable.
    pub fn with_env(mut self, var: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        if let Some(v) = var("TPUT_BENCH_PARTS") {
            self.parts =
                v.split(',')
                    .map(|p| {
                        Aqm::ALL.into_iter().find(|a| a.name() == p.trim()).ok_or_else(|| {
                            format!("TPUT_BENCH_PARTS: unknown part {p:?} (known: red, codel, fq_codel)")
                        })
                    })
                    .collect::<Result<_, _>>()?;
        }
        let positive = |k: &str, v: String| match v.trim().parse::<u64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{k}: `{v}` is not a positive whole number")),
        };
        if let Some(v) = var("TPUT_BENCH_SEEDS") {
            self.seeds = positive("TPUT_BENCH_SEEDS", v)?;
        }
        if let Some(v) = var("TPUT_BENCH_DURATION") {
            self.secs = positive("TPUT_BENCH_DURATION", v)?;
        }
        if let Some(v) = var("TPUT_BENCH_REUSE_REF") {
            self.reuse = match v.trim() {
                "1" => true,
                "" | "0" => false,
                _ => return Err(format!("TPUT_BENCH_REUSE_REF: `{v}` is neither 1 nor 0")),
            };
        }
        Ok(self)
    }

    /// Every case, in order.
    pub fn cases(&self) -> Vec<Case> {
        let mut out = Vec::new();
        for &aqm in &self.parts {
            let flows: Vec<Flows> = match aqm {
                Aqm::Red => self
                    .red_background
                    .iter()
                    .map(|&background| Flows::Sack { background })
                    .collect(),
                _ => vec![Flows::NewReno(1), Flows::NewReno(10), Flows::CubicBbr],
            };
            for f in flows {
                for seed in 1..=self.seeds {
                    out.push(Case {
                        aqm,
                        flows: f,
                        seed,
                        secs: self.secs,
                    });
                }
            }
        }
        out
    }
}

/// Whether ns-2 (`ns`) is on the `PATH`.
pub fn ns2_available() -> bool {
    tcp_ns2::ns2_available()
}

/// Whether Python finds ns-3's bindings (the `ns` module of `pip install ns3`).
pub fn ns3_available() -> bool {
    Command::new("python3")
        .args([
            "-c",
            "import importlib.util, sys; sys.exit(importlib.util.find_spec('ns') is None)",
        ])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The cross-check as a reproduction.
#[derive(Debug, Clone)]
pub struct AqmCheck {
    /// Settings.
    pub options: Options,
    /// `benches/` of this source tree (its `ns2/` and `ns3/` scripts).
    pub scripts: PathBuf,
}

impl AqmCheck {
    /// The cross-check with `options`, the scripts from this source tree.
    pub fn new(options: Options) -> Self {
        AqmCheck {
            options,
            scripts: PathBuf::from(env!("CARGO_MANIFEST_DIR")),
        }
    }

    /// The reference's raw output for `case`: read back from `dir` when
    /// reusing and present, else run (and kept in `dir`).
    fn reference_output(&self, case: &Case, dir: &Path) -> Result<String, String> {
        let file = dir.join(case.ref_file());
        if self.options.reuse
            && let Ok(text) = std::fs::read_to_string(&file)
        {
            return Ok(text);
        }
        let mut cmd = match case.flows {
            Flows::Sack { background } => {
                let mut c = Command::new("ns");
                c.arg(self.scripts.join("ns2/red_compare.tcl"))
                    .arg(background.to_string())
                    .arg(case.seed.to_string())
                    .arg(case.secs.to_string());
                c
            }
            flows => {
                let mut c = Command::new("python3");
                c.arg(self.scripts.join("ns3/aqm_compare.py"))
                    .arg(case.aqm.name())
                    .arg(flows.name())
                    .arg(case.seed.to_string())
                    .arg(case.secs.to_string());
                c
            }
        };
        let out = cmd
            .output()
            .map_err(|e| format!("running {}: {e}", case.aqm.reference()))?;
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!(
                "{} failed: {}",
                case.aqm.reference(),
                err.lines().last().unwrap_or("(no message)")
            ));
        }
        std::fs::write(&file, &text).map_err(|e| format!("writing {}: {e}", file.display()))?;
        Ok(text)
    }

    fn reference(&self, case: &Case, dir: &Path) -> Result<Metrics, String> {
        let text = self.reference_output(case, dir)?;
        match case.flows {
            Flows::Sack { .. } => parse_ns2_red(&text, case.flows.count()),
            _ => parse_ns3(&text, case.flows.count()),
        }
    }
}

fn fmt(x: f64) -> String {
    if x == 0.0 || x.abs() >= 100.0 {
        format!("{x:.0}")
    } else if x.abs() >= 1.0 {
        format!("{x:.2}")
    } else {
        format!("{x:.3}")
    }
}

/// The tables of `rows` as text, and as CSV.
pub fn render(rows: &[Row]) -> (String, String) {
    let mut text = String::new();
    let mut csv = Csv::new(&[
        "case",
        "figure",
        "ours",
        "reference",
        "reference_min",
        "reference_max",
        "difference",
        "tolerance",
        "within",
    ]);
    let mut last = String::new();
    for r in rows {
        if r.case != last {
            text += &format!(
                "\n{:<22} {:<16} {:>9} {:>9} {:>19} {:>9} {:>9} {:>6}\n",
                r.case, "figure", "ours", "reference", "(seeds' range)", "diff", "tolerance", "within"
            );
            last.clone_from(&r.case);
        }
        let (reference, range) = match r.reference {
            Some((m, lo, hi)) => (fmt(m), format!("({} - {})", fmt(lo), fmt(hi))),
            None => ("-".into(), String::new()),
        };
        let within = match r.within() {
            Some(true) => "yes",
            Some(false) => "NO",
            None => "-",
        };
        let diff = r.diff().map_or("-".into(), fmt);
        text += &format!(
            "{:<22} {:<16} {:>9} {:>9} {:>19} {:>9} {:>9} {:>6}\n",
            "",
            r.figure,
            fmt(r.ours),
            reference,
            range,
            diff,
            format!("±{}", fmt(r.allowed)),
            within
        );
        let (m, lo, hi) = r.reference.map_or((f64::NAN, f64::NAN, f64::NAN), |x| x);
        crate::csv_row!(
            csv,
            r.case,
            r.figure,
            r.ours,
            m,
            lo,
            hi,
            r.diff().unwrap_or(f64::NAN),
            r.allowed,
            within
        );
    }
    (text, csv.finish())
}

impl Reproduction for AqmCheck {
    type Point = Case;
    type Measured = Metrics;

    fn name(&self) -> &'static str {
        "aqm_check"
    }

    fn points(&self) -> Result<Vec<Planned<Case>>, String> {
        Ok(self
            .options
            .cases()
            .into_iter()
            .map(|c| {
                let mut keep = Keep::result();
                keep.queue = c.aqm == Aqm::Red;
                let labels = [
                    ("aqm", c.aqm.name().to_string()),
                    ("flows", c.flows.name()),
                    ("seed", c.seed.to_string()),
                    ("secs", c.secs.to_string()),
                ];
                Planned::new(c, labels, scenario(&c), keep)
            })
            .collect())
    }

    fn label(&self, c: &Case) -> String {
        c.label()
    }

    fn measure(&self, c: &Case, r: &PointResult) -> Result<Metrics, String> {
        metrics(c, kept_result(r)?)
    }

    fn progress(&self, m: &Metrics) -> String {
        progress(m)
    }

    fn build(&self, out: &Path, measured: &Measurements<Case, Metrics>) -> Result<Built, String> {
        let mut built = Built::default();
        let refs_on = self.options.references;
        let (ns2, ns3) = (refs_on && ns2_available(), refs_on && ns3_available());
        if !refs_on {
            built.text += "references off: our side only\n";
        } else if !ns2 && self.options.parts.contains(&Aqm::Red) {
            built.text +=
                "ns-2 is not installed (no `ns` on the PATH; apt-get install ns2): RED's reference is skipped\n";
        }
        let wants_ns3 = self.options.parts.iter().any(|&a| a != Aqm::Red);
        if refs_on && !ns3 && wants_ns3 {
            built.text += "ns-3's Python bindings are not installed (pip install ns3): CoDel's and FQ-CoDel's reference is skipped\n";
        }
        let dir = out.join("ref");
        std::fs::create_dir_all(&dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
        let cases: Vec<Case> = measured
            .iter()
            .map(|(c, _)| *c)
            .filter(|c| if c.aqm == Aqm::Red { ns2 } else { ns3 })
            .collect();
        let total = cases.len();
        let refs = run_parallel(
            &cases,
            self.options.jobs,
            |c| self.reference(c, &dir),
            |done, c, m| {
                let what = m.as_ref().map_or_else(|e| format!("FAILED: {e}"), progress);
                eprintln!("[{} {done}/{total}] {}: {what}", c.aqm.reference(), c.label());
            },
        );
        let mut runs = Csv::new(&[
            "aqm",
            "flows",
            "seed",
            "side",
            "utilisation",
            "loss_pct",
            "aqm_drops",
            "overflow_drops",
            "marks",
            "mean_queue",
            "red_ave",
            "sojourn_p50_ms",
            "sojourn_p99_ms",
            "jain",
            "share0",
        ]);
        let opt = |x: Option<f64>| x.map_or(String::new(), |v| v.to_string());
        let mut run_row = |c: &Case, side: &str, m: &Metrics| {
            crate::csv_row!(
                runs,
                c.aqm.name(),
                c.flows.name(),
                c.seed,
                side,
                m.utilisation,
                m.loss_pct(),
                m.aqm_drops,
                m.overflow_drops,
                m.marks,
                opt(m.mean_queue),
                opt(m.red_ave),
                opt(m.sojourn_p50_ms),
                opt(m.sojourn_p99_ms),
                m.jain(),
                m.share(0)
            );
        };
        for (c, m) in measured {
            if let Ok(m) = m {
                run_row(c, "ours", m);
            }
        }
        for (c, m) in cases.iter().zip(&refs) {
            match m {
                Ok(m) => run_row(c, c.aqm.reference(), m),
                Err(e) => built
                    .failures
                    .push(format!("{} ({}): {e}", c.label(), c.aqm.reference())),
            }
        }
        // One group of rows per (part, flows), in the cases' order.
        let mut keys: Vec<(Aqm, Flows)> = Vec::new();
        for (c, _) in measured {
            if !keys.contains(&(c.aqm, c.flows)) {
                keys.push((c.aqm, c.flows));
            }
        }
        let mut all = Vec::new();
        for (aqm, flows) in keys {
            let ours: Vec<&Metrics> = measured
                .iter()
                .filter(|(c, _)| c.aqm == aqm && c.flows == flows)
                .filter_map(|(_, m)| m.as_ref().ok())
                .collect();
            let reference: Vec<&Metrics> = cases
                .iter()
                .zip(&refs)
                .filter(|(c, _)| c.aqm == aqm && c.flows == flows)
                .filter_map(|(_, m)| m.as_ref().ok())
                .collect();
            if !ours.is_empty() {
                all.extend(rows(aqm, flows, &ours, &reference));
            }
        }
        let (text, csv) = render(&all);
        let o = &self.options;
        built.text += &format!(
            "Queue disciplines against ns-2 (RED) and ns-3 (CoDel, FQ-CoDel): {} seed(s), {} s each; \
             means over seeds, within = |diff| <= tolerance\n",
            o.seeds, o.secs
        );
        built.text += &text;
        let outside = all.iter().filter(|r| r.within() == Some(false)).count();
        let compared = all.iter().filter(|r| r.within().is_some()).count();
        built.text += &format!("\n{compared} figures compared, {outside} beyond their tolerance\n");
        built.files = write_files(out, &[("aqm_check.csv", csv), ("runs.csv", runs.finish())])?;
        Ok(built)
    }
}

fn progress(m: &Metrics) -> String {
    let mut s = format!(
        "util {:.3}, loss {:.3} %, drops {} aqm + {} overflow",
        m.utilisation,
        m.loss_pct(),
        m.aqm_drops,
        m.overflow_drops
    );
    if let Some(q) = m.mean_queue {
        s += &format!(", mean queue {q:.2} pkts");
    }
    if let (Some(a), Some(b)) = (m.sojourn_p50_ms, m.sojourn_p99_ms) {
        s += &format!(", sojourn p50 {a:.2} / p99 {b:.2} ms");
    }
    s + &format!(", jain {:.3}", m.jain())
}

#[cfg(test)]
mod tests {
    use super::*;

    const NS2: &str = "start 0 0.1\nstart 1 0.7\nflow 0 6000000 1 10\nflow 1 2000000 0 3\n\
                       queue 1999 3.81 3.85\nbottleneck 210317560 202239 1168 203409 20\n";
    const NS3: &str = "[runStaticInitializersOnce]: noise\n\
                       result codel cubic+bbr 1 60 0.93 1.5 20.25 120 0 0 91000 3000000 1000000\n";

    #[test]
    fn reads_ns2_red_output() {
        let m = parse_ns2_red(NS2, 2).unwrap();
        assert!((m.utilisation - 210317560.0 * 8.0 / 2e9).abs() < 1e-12);
        assert_eq!((m.sent, m.aqm_drops), (202239, 1168));
        assert_eq!(m.mean_queue, Some(3.81));
        assert_eq!(m.bytes, [6_000_000, 2_000_000]);
        assert!((m.share(0) - 1.5).abs() < 1e-12);
        assert!((m.loss_pct() - 100.0 * 1168.0 / (202239.0 + 1168.0)).abs() < 1e-9);
        // A missing flow, a bad number, no bottleneck: each named.
        assert!(parse_ns2_red(NS2, 3).unwrap_err().contains("no flow 2"));
        assert!(
            parse_ns2_red(&NS2.replace("1168", "x"), 2)
                .unwrap_err()
                .contains("bottleneck")
        );
        assert!(
            parse_ns2_red("flow 0 1 0 0\n", 1)
                .unwrap_err()
                .contains("no bottleneck")
        );
    }

    #[test]
    fn reads_ns3_output() {
        let m = parse_ns3(NS3, 2).unwrap();
        assert_eq!((m.sojourn_p50_ms, m.sojourn_p99_ms), (Some(1.5), Some(20.25)));
        assert_eq!((m.aqm_drops, m.overflow_drops, m.marks, m.sent), (120, 0, 0, 91000));
        assert!((m.share(0) / 2.0 - 0.75).abs() < 1e-12);
        assert!(parse_ns3(NS3, 3).unwrap_err().contains("2 flows, expected 3"));
        assert!(parse_ns3("nothing\n", 1).unwrap_err().contains("no result line"));
    }

    #[test]
    fn rows_judge_the_mean_against_the_tolerance() {
        let a = parse_ns3(NS3, 2).unwrap();
        let mut b = a.clone();
        b.utilisation = 0.90;
        b.aqm_drops = 200;
        let r = rows(Aqm::Codel, Flows::CubicBbr, &[&b], &[&a, &a]);
        let util = r.iter().find(|r| r.figure == "utilisation").unwrap();
        assert_eq!(util.within(), Some(false), "{util:?}");
        // 200 against 120: 80 > max(10, 0.3 * 120).
        let drops = r.iter().find(|r| r.figure == "aqm drops").unwrap();
        assert_eq!((drops.diff(), drops.within()), (Some(80.0), Some(false)));
        let share = r.iter().find(|r| r.figure == "cubic share").unwrap();
        assert_eq!(share.within(), Some(true));
        assert!(r.iter().all(|r| r.figure != "jain"), "one flow of each: no Jain row");
        let (text, csv) = render(&r);
        assert!(text.contains("NO") && csv.lines().count() == r.len() + 1, "{text}");
    }

    #[test]
    fn options_read_the_environment_or_name_the_bad_value() {
        let env = |k: &'static str, v: &'static str| move |x: &str| (x == k).then(|| v.to_string());
        let o = Options::short().with_env(env("TPUT_BENCH_PARTS", "codel,red")).unwrap();
        assert_eq!(o.parts, [Aqm::Codel, Aqm::Red]);
        assert_eq!(o.cases().len(), 3 + 2);
        let e = Options::full().with_env(env("TPUT_BENCH_PARTS", "pie")).unwrap_err();
        assert!(e.starts_with("TPUT_BENCH_PARTS"), "{e}");
        let e = Options::full().with_env(env("TPUT_BENCH_SEEDS", "0")).unwrap_err();
        assert!(e.starts_with("TPUT_BENCH_SEEDS"), "{e}");
    }
}
