//! Does the guarantee hold, and at what cost? The throughput-guarantee
//! controller's default mode (the loss floor, [`tput_cc::GuaranteeMode::Floor`])
//! beside the paper's rules (`mode=paper`; Yamanegi, Hasegawa, Murata,
//! "Congestion control mechanism of TCP for achieving predictable
//! throughput"), a NewReno flow in the same seat and the fixed window, on the
//! paper's dumbbell (`cargo bench -p tput-benches --bench guarantee`).
//!
//! # Set-up
//!
//! - Dumbbell: bottleneck 100 Mbit/s, 5 ms, DropTail 30 packets; access links
//!   1 Gbit/s, 2.5 ms; propagation RTT 20 ms; 1200-byte QUIC datagrams,
//!   1000-byte TCP segments. Every flow starts at a seeded instant in
//!   `[0, 100 ms)`; runs of 120 s (5 s in short mode).
//! - One tested flow with a target of 10 % or 20 % of the bottleneck
//!   (10 / 20 Mbit/s of *goodput*: the receiver judges verified payload
//!   over 1-s slots; the first slot holds the handshake and slow start).
//! - Tested variants: `default` (`guarantee:target=T`: floor mode, `A` from
//!   the simulator's oracle), `paper` (`mode=paper,eval=32rtt,slot=16rtt`,
//!   the reproduction's settings), `newreno` in the same seat, `fixed`
//!   (`cwnd = T * min_rtt`, never reduced), `default-inline` (`A` and `P`
//!   measured by the inline estimator instead of the oracle), and
//!   `tcp-default` / `tcp-paper` / `tcp-newreno`: the same over the
//!   simulator's TCP model with SACK recovery (RFC 6675), 200 ms minimum RTO;
//!   [`runs_against`] says which variant meets which competitors.
//! - Competitors, N = 1 ... 40 of one kind: QUIC NewReno, QUIC CUBIC, QUIC
//!   BBR (`bbr`: this workspace's draft-ietf-ccwg-bbr BBRv3, paced by the
//!   node at its own pacing rate), TCP Reno (the TCP model as ns-2 2.35's `Agent/TCP/Reno` with its defaults:
//!   Reno recovery, initial window 2, loss window 1, no delayed ACKs,
//!   Limited Transmit), TCP CUBIC (the same model with CUBIC and SACK) or
//!   TCP BBR (`bbr` over the same model with SACK, paced at its rate).
//!   The goal (0.95 of slots) is judged for each transport against its own
//!   kind; the cross cells (a TCP-model flow against paced QUIC flows) are
//!   measured too.
//! - Beside each success ratio: the tested flow's goodput, the competitors'
//!   mean goodput and Jain's index among them, the goodput utilisation
//!   (every flow's verified payload over 120 s against 100 Mbit/s) and the
//!   bottleneck's drop rate (DropTail drops per offered packet).
//! - The cost bound this bench judges against: each competitor loses at most
//!   `1.1 * (T - fair) / N` against the run with NewReno in the seat, `fair`
//!   being what that NewReno flow got.
//!
//! # Figures
//!
//! - `grid`: the above, 3 seeds.
//! - `fig7`: the paper's Fig. 7, five guarantee flows of T/5 each against N
//!   QUIC NewReno flows, independent or coordinated by one
//!   [`tput_cc::Aggregate`], in both modes; per-flow and aggregate success.
//! - `overbooked`: six flows asking 20 % each (120 % of the link) against ten
//!   QUIC NewReno flows: the breaker must hand the link back.
//! - `mechanism`: why the paper's rule misses at N = 30, 10 %: one traced run
//!   per mode (simulated where the figures are built, as the traces are not
//!   kept in plan results): which bound sets `k`, the slot `s`, the goal
//!   `g_i`, the window against the one the target needs, halvings per RTT.
//! - `live`: through the relay on 127.0.0.1 (100 Mbit/s, 10 ms each way, 30
//!   packets), one tested flow against ten QUIC connections for 60 s, judged
//!   as `tputctl send` judges it (run where the figures are built).
//! - `live-safety`: RFC 9743's safety cases live, through the same relay
//!   against ten NewReno connections for 60 s ([`live::safety_cases`]): a
//!   50 % target, a 120 % (infeasible) one, an overbooked link (20
//!   connections of 5 Mbit/s), and 10 Mbit/s through a capacity step (the
//!   relay's rate schedule: 100, then 15 Mbit/s over the middle third of
//!   the run, then 100); each run again with NewReno in the tested seat(s)
//!   as the baseline. Printed: each run's per-second goodput of the tested
//!   connections and of the competitors, and a summary
//!   (`live_safety.csv`; the series in `live_safety_per_second.csv`) of
//!   the competitors' mean and worst 2-s goodput against the seat run's,
//!   when the target was declared infeasible, and the relay's drops and
//!   queueing delay (run where the figures are built; wall-clock runs).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;
use std::time::Duration;

use serde::Serialize;
use tput_cc::units::Rate;
use tput_cc::{ControllerSpec, EvalSlot};
use tput_lab::plan::{Keep, PointResult};
use tput_lab::plot::{Series, line_chart};
use tput_lab::report::{csv, write_files};
use tput_lab::scenario::{
    AggregateResult, DelayedAck, FlowGroup, FlowResult, LinkSpec, Scenario, TcpSpec, TopologySpec,
};
use tput_netsim::Rng;
use tput_tcp::{Profile, Recovery};

use crate::repro::{Built, Measurements, Planned, Reproduction};
use tput_lab::report::Table;
use tput_lab::stats::mean_or_nan as mean;

pub mod live;
pub mod mechanism;
pub mod safety;

/// Bottleneck rate, bits per second.
const BOTTLENECK_BPS: u64 = 100_000_000;
/// QUIC datagram size, bytes.
const MTU: u16 = 1200;
/// Every figure name `TPUT_BENCH_FIGURES` accepts.
pub const FIGURES: [&str; 7] = [
    "grid",
    "fig7",
    "overbooked",
    "mechanism",
    "live",
    "safety",
    "live-safety",
];
/// Tested variants of the grid, in table order.
pub const VARIANTS: [&str; 8] = [
    "default",
    "paper",
    "newreno",
    "fixed",
    "default-inline",
    "tcp-default",
    "tcp-paper",
    "tcp-newreno",
];
/// Whether the grid runs `variant` against `competitor`: the QUIC
/// variants against every kind but TCP BBR, the fixed window against QUIC
/// NewReno and TCP Reno, the inline estimator against QUIC NewReno and
/// CUBIC, the TCP variants against TCP Reno, CUBIC and BBR and, as a cross
/// check, QUIC NewReno.
pub fn runs_against(variant: &str, competitor: &str) -> bool {
    match variant {
        "default" | "paper" | "newreno" => competitor != "tcp-bbr",
        "fixed" => matches!(competitor, "quic-newreno" | "tcp-reno"),
        "default-inline" => matches!(competitor, "quic-newreno" | "quic-cubic"),
        _ => matches!(competitor, "tcp-reno" | "tcp-cubic" | "tcp-bbr" | "quic-newreno"),
    }
}

/// Competitor kinds of the grid, in table order.
pub const COMPETITORS: [&str; 6] = [
    "quic-newreno",
    "quic-cubic",
    "quic-bbr",
    "tcp-reno",
    "tcp-cubic",
    "tcp-bbr",
];

/// The competitor kinds named in `list` (comma-separated, as
/// `TPUT_BENCH_COMPETITORS` gives them), in table order; an unknown name is
/// an error that lists the known ones.
pub fn competitors_from(list: &str) -> Result<Vec<&'static str>, String> {
    let wanted: Vec<&str> = list.split(',').map(str::trim).filter(|c| !c.is_empty()).collect();
    if let Some(bad) = wanted.iter().find(|w| !COMPETITORS.contains(w)) {
        return Err(format!(
            "unknown competitor {bad:?} (known: {})",
            COMPETITORS.join(", ")
        ));
    }
    if wanted.is_empty() {
        return Err(format!("no competitor named (known: {})", COMPETITORS.join(", ")));
    }
    Ok(COMPETITORS.into_iter().filter(|c| wanted.contains(c)).collect())
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Simulated time of a point.
    pub duration: Duration,
    /// Numbers of competing flows (the x axis).
    pub counts: Vec<u32>,
    /// Competitor kinds of the grid (a subset of [`COMPETITORS`], in its order).
    pub competitors: Vec<&'static str>,
    /// Targets, percent of the bottleneck.
    pub targets_pct: Vec<u32>,
    /// Seeds per point.
    pub seeds: Vec<u64>,
    /// Figures to run (see [`FIGURES`]).
    pub figures: Vec<String>,
    /// Duration of a live run.
    pub live_duration: Duration,
    /// Competing connections in a live run.
    pub live_competitors: u32,
    /// Tested connections of the `live-safety` figure's overbooked case
    /// (asking the link's rate together).
    pub live_overbooked: u32,
    /// The `safety` figure's size.
    pub safety: safety::SafetyOptions,
    /// Tested variants of the grid (a subset of [`VARIANTS`], in its order).
    pub variants: Vec<&'static str>,
    /// The TCP model's profile for every TCP flow of the grid, tested and
    /// competing (`tcp_spec`).
    pub tcp_profile: Profile,
}

impl Options {
    /// The full size: N in {1, 2, 5, 10, 15, 20, 30, 40}, 10 % and 20 %, 3 seeds, 120 s; live runs of 60 s.
    pub fn full() -> Self {
        Self {
            duration: Duration::from_secs(120),
            counts: vec![1, 2, 5, 10, 15, 20, 30, 40],
            competitors: COMPETITORS.to_vec(),
            targets_pct: vec![10, 20],
            seeds: vec![1, 2, 3],
            figures: FIGURES.iter().map(|f| f.to_string()).collect(),
            live_duration: Duration::from_secs(60),
            live_competitors: 10,
            live_overbooked: 20,
            safety: safety::SafetyOptions::full(),
            variants: VARIANTS.to_vec(),
            tcp_profile: Profile::Ns2,
        }
    }

    /// A smoke run of every figure: N in {1, 10}, one seed, 5 s; live runs
    /// of 6 s against 3 connections, 4 in the overbooked live case.
    pub fn short() -> Self {
        Self {
            duration: Duration::from_secs(5),
            counts: vec![1, 10],
            seeds: vec![1],
            live_duration: Duration::from_secs(6),
            live_competitors: 3,
            live_overbooked: 4,
            safety: safety::SafetyOptions::short(),
            ..Self::full()
        }
    }

    fn wants(&self, figure: &str) -> bool {
        self.figures.iter().any(|f| f == figure)
    }

    /// `self` with what the environment sets: `TPUT_BENCH_N` (the grid's,
    /// Fig. 7's and the cost tables' competitor counts, e.g. `30,40`),
    /// `TPUT_BENCH_VARIANTS` (the grid's tested variants, e.g.
    /// `tcp-default`; [`VARIANTS`]) and `TPUT_BENCH_TCP_PROFILE` (`ns2`,
    /// the default, or `linux`: the TCP model's profile for every TCP flow
    /// of the grid). A value that does not parse is a one-line error naming
    /// the variable.
    pub fn with_env(mut self, var: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        if let Some(v) = var("TPUT_BENCH_N") {
            self.counts = crate::env_counts(&v, "a number of competing flows")?;
        }
        if let Some(v) = var("TPUT_BENCH_VARIANTS") {
            let wanted: Vec<&str> = v.split(',').map(str::trim).filter(|x| !x.is_empty()).collect();
            if let Some(bad) = wanted.iter().find(|w| !VARIANTS.contains(w)) {
                return Err(format!(
                    "TPUT_BENCH_VARIANTS: unknown variant {bad:?} (known: {})",
                    VARIANTS.join(", ")
                ));
            }
            if wanted.is_empty() {
                return Err("TPUT_BENCH_VARIANTS: no variant named".into());
            }
            self.variants = VARIANTS.into_iter().filter(|v| wanted.contains(v)).collect();
        }
        if let Some(v) = var("TPUT_BENCH_TCP_PROFILE") {
            self.tcp_profile = crate::env_tcp_profile(&v)?;
        }
        Ok(self)
    }
}

/// One simulation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Point {
    /// `grid`, `fig7` or `overbooked`.
    pub figure: &'static str,
    /// The tested flow(s): one of [`VARIANTS`], or for `fig7`
    /// `default`/`paper` with `-aggregate` for the coordinated five.
    pub variant: String,
    /// One of [`COMPETITORS`].
    pub competitor: &'static str,
    /// Target of each tested flow, percent of the bottleneck (Fig. 7: the five flows' sum).
    pub target_pct: u32,
    /// Competing flows.
    pub n: u32,
    /// Seed.
    pub seed: u64,
    /// The `safety` figure's case ([`safety::Case::name`]); empty in the other figures.
    pub case: String,
}

/// What one simulation measured.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Measured {
    /// Mean success ratio of the tested flows (1-s slots).
    pub success: f64,
    /// Success of the tested flows judged as one (their summed throughput per slot).
    pub aggregate_success: f64,
    /// Mean goodput of a tested flow, Mbit/s over the run.
    pub tested_mbps: f64,
    /// Mean goodput of a competitor, Mbit/s over the run.
    pub competitor_mbps: f64,
    /// Jain's fairness index among the competitors.
    pub jain: f64,
    /// Every flow's verified payload over the run's duration, per bottleneck rate.
    pub goodput_utilisation: f64,
    /// Bottleneck DropTail drops per packet offered to it.
    pub drop_rate: f64,
    /// Interval records (1 s) that ended with a tested flow's controller
    /// declaring its target infeasible, summed over the tested flows.
    pub infeasible_intervals: usize,
    /// Flows whose transfer did not end cleanly (e.g. a starved TCP-model
    /// flow still backing off its retransmission timer when the drain ran
    /// out), as `flow N: error`. Their slots up to the end still count: the
    /// point is measured and the tables list these flows beside it.
    pub unfinished: Vec<String>,
    /// What harm needs of the run (the `safety` figure only).
    pub digest: Option<Box<tput_lab::harm::RunDigest>>,
}

/// The reproduction.
#[derive(Debug, Clone)]
pub struct Guarantee {
    /// What to run.
    pub options: Options,
}

fn spec(text: &str) -> ControllerSpec {
    text.parse()
        .unwrap_or_else(|e| panic!("built-in controller spec {text:?}: {e}"))
}

fn mbit(pct: f64) -> Rate {
    Rate::from_bits_per_sec((BOTTLENECK_BPS as f64 * pct / 100.0).round() as u64)
}

/// The TCP model with 1000-byte segments in `profile`: with
/// [`Profile::Ns2`] ns-2 2.35's defaults and the given recovery (no delayed
/// ACKs, Limited Transmit); with [`Profile::Linux`] the Linux profile as it
/// is (RACK-TLP over SACK, PRR, timestamps, 40 ms delayed ACKs, IW 10 and
/// HyStart++ on NewReno and CUBIC), whatever `recovery` says.
pub(crate) fn tcp_spec(recovery: Recovery, profile: Profile) -> TcpSpec {
    match profile {
        Profile::Linux => TcpSpec {
            profile: Some(profile.to_string()),
            segment: Some(1000),
            ..TcpSpec::default()
        },
        _ => TcpSpec {
            recovery: Some(recovery),
            segment: Some(1000),
            delayed_ack: Some(DelayedAck::Switch(false)),
            limited_transmit: Some(true),
            ..TcpSpec::default()
        },
    }
}

/// TCP Reno's controller spec in `profile`: `newreno:iw=2,lw=1` with
/// ns-2's defaults, `newreno` (Linux's `reno`, the profile's initial
/// window) with the Linux profile.
pub(crate) fn reno_cc(profile: Profile) -> &'static str {
    match profile {
        Profile::Linux => "newreno",
        _ => "newreno:iw=2,lw=1",
    }
}

/// A competitor of kind `competitor`, its TCP flows in `profile` (TCP Reno
/// with the Linux profile: `newreno` with the profile's initial window).
fn competitor(kind: &str, profile: Profile) -> FlowGroup {
    let reno = reno_cc(profile);
    match kind {
        "quic-newreno" => FlowGroup::new(spec("newreno")),
        "quic-cubic" => FlowGroup::new(spec("cubic")),
        "quic-bbr" => FlowGroup::new(spec("bbr")),
        "tcp-reno" => FlowGroup::new(spec(reno)).over_tcp(tcp_spec(Recovery::Reno, profile)),
        "tcp-cubic" => FlowGroup::new(spec("cubic")).over_tcp(tcp_spec(Recovery::Sack, profile)),
        "tcp-bbr" => FlowGroup::new(spec("bbr")).over_tcp(tcp_spec(Recovery::Sack, profile)),
        other => panic!("unknown competitor {other}"),
    }
}

/// The tested flow `variant` with a target of `pct` percent, judged over
/// 1-s slots; a TCP variant in `profile`.
fn tested(variant: &str, pct: f64, profile: Profile) -> FlowGroup {
    let t = mbit(pct);
    let paper = format!("guarantee:target={t},eval=32rtt,slot=16rtt,mode=paper");
    let g = match variant {
        "default" => FlowGroup::new(spec(&format!("guarantee:target={t}"))),
        "paper" => FlowGroup::new(spec(&paper)),
        "newreno" => FlowGroup::new(spec("newreno")),
        "fixed" => FlowGroup::new(spec(&format!("fixed:rate={t}"))),
        "default-inline" => FlowGroup::new(spec(&format!("guarantee:target={t},abw=inline"))),
        "tcp-default" => {
            FlowGroup::new(spec(&format!("guarantee:target={t}"))).over_tcp(tcp_spec(Recovery::Sack, profile))
        }
        "tcp-paper" => FlowGroup::new(spec(&paper)).over_tcp(tcp_spec(Recovery::Sack, profile)),
        "tcp-newreno" => FlowGroup::new(spec("newreno")).over_tcp(tcp_spec(Recovery::Sack, profile)),
        other => panic!("unknown variant {other}"),
    };
    let mut g = g.with_target(t);
    g.eval_slot = Some(EvalSlot::Time(Duration::from_secs(1)));
    g
}

/// The dumbbell with `tested` (its `count` flows one group each, or one
/// group if aggregated) and `n` competitors like `comp`, every group starting
/// at a seeded instant in `[0, 100 ms)`.
fn scenario(tested: FlowGroup, n: u32, comp: &FlowGroup, seed: u64, duration: Duration) -> Scenario {
    let mut rng = Rng::derive(seed, 0x9a4a_0000);
    let mut jitter = || Duration::from_nanos(rng.below(100_000_000));
    let start = jitter();
    let tested = tested.with_start_jitter(Duration::ZERO).starting(start);
    let mut flows = if tested.aggregate {
        vec![tested]
    } else {
        vec![tested.clone().times(1); tested.count as usize]
    };
    for _ in 0..n {
        flows.push(comp.clone().starting(jitter()).with_start_jitter(Duration::ZERO));
    }
    let link = |bps, delay, queue| LinkSpec::new(Rate::from_bits_per_sec(bps), delay).with_queue_packets(queue);
    let topology = TopologySpec::dumbbell(
        link(BOTTLENECK_BPS, Duration::from_millis(5), 30),
        link(1_000_000_000, Duration::from_micros(2500), 1000),
    );
    Scenario {
        name: Some("guarantee".into()),
        seed,
        mtu: MTU,
        interval: Duration::from_secs(1),
        ..Scenario::new(duration, topology, flows)
    }
}

/// How many tested flows (groups, or flows of group 0 if aggregated) a point has.
fn tested_flows(p: &Point) -> usize {
    match (p.figure, p.variant.as_str()) {
        ("fig7", _) => 5,
        ("overbooked", _) => 6,
        _ => 1,
    }
}

impl Guarantee {
    /// The number of simulations of each figure that runs any, as `(figure, count)`.
    pub fn plan_sizes(&self) -> Result<Vec<(&'static str, usize)>, String> {
        let mut sizes: Vec<(&'static str, usize)> = Vec::new();
        for p in self.points()? {
            match sizes.iter_mut().find(|(f, _)| *f == p.point.figure) {
                Some((_, n)) => *n += 1,
                None => sizes.push((p.point.figure, 1)),
            }
        }
        Ok(sizes)
    }

    fn measure_safety(&self, p: &Point, r: &PointResult) -> Result<Measured, String> {
        let case = safety::case_named(&p.case).ok_or_else(|| format!("unknown safety case {:?}", p.case))?;
        let d = self.options.safety.duration;
        let scenario = safety::scenario(&case, &p.variant, p.seed, d);
        let seat = safety::seat(&scenario);
        let result = crate::repro::kept_result(r)?;
        let tested = result.flows.iter().filter(|f| seat.contains(&f.group)).count();
        let each = f64::from(case.target_pct) / f64::from(case.flows);
        let mut m = measure_run(r, tested, d, mbit(each).bits_per_sec() as f64)?;
        let digest = tput_lab::harm::digest(&scenario, result, &seat).map_err(|e| e.to_string())?;
        m.goodput_utilisation = digest.goodput_utilisation;
        m.digest = Some(Box::new(digest));
        Ok(m)
    }

    fn planned(&self, p: Point) -> Planned<Point> {
        let o = &self.options;
        if p.figure == "safety" {
            let case = safety::case_named(&p.case).unwrap_or_else(|| panic!("unknown safety case {:?}", p.case));
            let scenario = safety::scenario(&case, &p.variant, p.seed, o.safety.duration);
            let labels = [
                ("figure", "safety".to_string()),
                ("case", p.case.clone()),
                ("variant", p.variant.clone()),
            ];
            let keep = Keep {
                result: true,
                intervals: true,
                queue: true,
                ..Keep::default()
            };
            return Planned::new(p, labels, scenario, keep);
        }
        let pct = f64::from(p.target_pct);
        let (group, comp) = match p.figure {
            "grid" => (
                tested(&p.variant, pct, o.tcp_profile),
                competitor(p.competitor, o.tcp_profile),
            ),
            "fig7" => {
                let (mode, aggregate) = match p.variant.strip_suffix("-aggregate") {
                    Some(m) => (m, true),
                    None => (p.variant.as_str(), false),
                };
                let mut g = tested(mode, pct / 5.0, o.tcp_profile).times(5);
                if aggregate {
                    g = g.aggregated();
                }
                (g, competitor(p.competitor, o.tcp_profile))
            }
            _ => (
                tested(&p.variant, pct, o.tcp_profile).times(6),
                competitor(p.competitor, o.tcp_profile),
            ),
        };
        let labels = [
            ("figure", p.figure.to_string()),
            ("variant", p.variant.clone()),
            ("competitor", p.competitor.to_string()),
            ("target_pct", p.target_pct.to_string()),
            ("n", p.n.to_string()),
        ];
        let scenario = scenario(group, p.n, &comp, p.seed, o.duration);
        Planned::new(p, labels, scenario, Keep::result())
    }
}

/// Measure a point's run: the first `tested` flows (in flow order) are the
/// tested ones. The run's infeasible intervals are counted from the
/// summary: a kept result drops the per-interval records, the summary keeps
/// each flow's count.
fn measure_run(p: &PointResult, tested: usize, duration: Duration, target_bps: f64) -> Result<Measured, String> {
    let r = crate::repro::kept_result(p)?;
    let unfinished = r
        .flows
        .iter()
        .filter(|f| !f.errors.is_empty())
        .map(|f| format!("flow {}: {}", f.flow, f.errors.join("; ")))
        .collect();
    let secs = duration.as_secs_f64();
    let mbps = |f: &FlowResult| f.bytes as f64 * 8.0 / secs / 1e6;
    let (t, c) = r.flows.split_at(tested.min(r.flows.len()));
    let mut ratios = Vec::new();
    for f in t {
        ratios.push(
            f.success_ratio
                .ok_or_else(|| format!("flow {} completed no evaluation slot", f.flow))?,
        );
    }
    let each: Vec<&FlowResult> = t.iter().collect();
    let aggregate = AggregateResult::judge(0, target_bps * tested as f64, &each)
        .success_ratio
        .unwrap_or(f64::NAN);
    let comp: Vec<f64> = c.iter().map(mbps).collect();
    let offered = r.bottleneck.delivered.packets + r.bottleneck.dropped_queue.packets;
    Ok(Measured {
        success: mean(ratios),
        aggregate_success: aggregate,
        tested_mbps: mean(t.iter().map(mbps)),
        competitor_mbps: mean(comp.iter().copied()),
        jain: tput_lab::stats::jain(&comp).unwrap_or(f64::NAN),
        goodput_utilisation: r.flows.iter().map(mbps).sum::<f64>() * 1e6 / BOTTLENECK_BPS as f64,
        drop_rate: r.bottleneck.dropped_queue.packets as f64 / offered.max(1) as f64,
        infeasible_intervals: p
            .summary
            .flows
            .iter()
            .take(tested)
            .map(|f| f.infeasible_intervals)
            .sum(),
        unfinished,
        digest: None,
    })
}

impl Reproduction for Guarantee {
    type Point = Point;
    type Measured = Measured;

    fn name(&self) -> &'static str {
        "guarantee"
    }

    fn points(&self) -> Result<Vec<Planned<Point>>, String> {
        let o = &self.options;
        crate::repro::check_figures(&o.figures, &FIGURES)?;
        let mut out = Vec::new();
        let mut add = |figure, variant: &str, competitor, target_pct, n, seed| {
            out.push(self.planned(Point {
                figure,
                variant: variant.to_string(),
                competitor,
                target_pct,
                n,
                seed,
                case: String::new(),
            }))
        };
        if o.wants("grid") {
            for comp in o.competitors.iter().copied() {
                for &pct in &o.targets_pct {
                    for v in o.variants.iter().copied().filter(|v| runs_against(v, comp)) {
                        for &n in &o.counts {
                            for &seed in &o.seeds {
                                add("grid", v, comp, pct, n, seed);
                            }
                        }
                    }
                }
            }
        }
        if o.wants("fig7") {
            for &pct in &o.targets_pct {
                for v in ["default", "default-aggregate", "paper", "paper-aggregate"] {
                    for &n in &o.counts {
                        for &seed in &o.seeds {
                            add("fig7", v, "quic-newreno", pct, n, seed);
                        }
                    }
                }
            }
        }
        if o.wants("overbooked") {
            for v in ["default", "paper", "newreno"] {
                for &seed in &o.seeds {
                    add("overbooked", v, "quic-newreno", 20, 10, seed);
                }
            }
        }
        if o.wants("safety") {
            for case in o.safety.cases() {
                for v in case.variants() {
                    for &seed in &o.safety.seeds {
                        out.push(self.planned(Point {
                            figure: "safety",
                            variant: v.to_string(),
                            competitor: case.competitor,
                            target_pct: case.target_pct,
                            n: case.n,
                            seed,
                            case: case.name.clone(),
                        }));
                    }
                }
            }
        }
        Ok(out)
    }

    fn label(&self, p: &Point) -> String {
        if p.figure == "safety" {
            return format!("safety {} {} seed {}", p.case, p.variant, p.seed);
        }
        format!(
            "{} {} {}% vs {} {} seed {}",
            p.figure, p.variant, p.target_pct, p.n, p.competitor, p.seed
        )
    }

    fn measure(&self, p: &Point, r: &PointResult) -> Result<Measured, String> {
        if p.figure == "safety" {
            return self.measure_safety(p, r);
        }
        let each = if p.figure == "fig7" {
            f64::from(p.target_pct) / 5.0
        } else {
            f64::from(p.target_pct)
        };
        measure_run(
            r,
            tested_flows(p),
            self.options.duration,
            mbit(each).bits_per_sec() as f64,
        )
    }

    fn progress(&self, m: &Measured) -> String {
        format!(
            "success {:.3}, tested {:.2} Mbit/s, competitors {:.2} Mbit/s",
            m.success, m.tested_mbps, m.competitor_mbps
        )
    }

    fn build(&self, out: &Path, measured: &Measurements<Point, Measured>) -> Result<Built, String> {
        let o = &self.options;
        let mut built = Built::default();
        let ok: Vec<(&Point, &Measured)> = measured
            .iter()
            .filter_map(|(p, m)| m.as_ref().ok().map(|m| (p, m)))
            .collect();
        if ["grid", "fig7", "overbooked"].iter().any(|f| o.wants(f)) {
            let _ = writeln!(
                built.text,
                "Guarantee: {} s runs, seeds {:?}, 1-s slots, targets in goodput, TCP model profile {} (docs/guarantee.md)",
                o.duration.as_secs(),
                o.seeds,
                o.tcp_profile
            );
        }
        let mut files: Vec<(String, String)> = Vec::new();
        if o.wants("grid") {
            grid_tables(o, &ok, &mut built.text, &mut files);
        }
        if o.wants("fig7") {
            fig7_tables(o, &ok, &mut built.text, &mut files);
        }
        if o.wants("overbooked") {
            overbooked_table(&ok, &mut built.text);
        }
        if o.wants("safety") {
            safety::tables(&o.safety, &ok, &mut built.text, &mut files);
        }
        let unfinished: Vec<String> = ok
            .iter()
            .flat_map(|(p, m)| m.unfinished.iter().map(move |u| format!("  {}: {u}", self.label(p))))
            .collect();
        if !unfinished.is_empty() {
            let _ = writeln!(
                built.text,
                "\nFlows that did not finish (measured up to the end of the run; a TCP-model flow starved by paced\n\
                 QUIC flows can still be backing off its retransmission timer when the drain ends):"
            );
            for u in &unfinished {
                let _ = writeln!(built.text, "{u}");
            }
        }
        if o.wants("mechanism") {
            match mechanism::traced(o.duration) {
                Ok(m) => {
                    built.text.push_str(&m.table());
                    files.extend(m.files());
                }
                Err(e) => {
                    built.failed = true;
                    let _ = writeln!(built.text, "\nmechanism: FAILED: {e}");
                }
            }
        }
        if o.wants("live") {
            let live = live::run(
                &live::TESTED,
                &live::COMPETITORS,
                o.live_duration,
                o.live_competitors,
                |l| eprintln!("{l}"),
            );
            match live {
                Ok(rows) => {
                    built.text.push_str(&live::table(&rows, o.live_duration));
                    files.push(("live.csv".into(), csv(rows.iter().cloned()).map_err(|e| e.to_string())?));
                    built.failed |= rows.iter().any(|r| r.error.is_some());
                }
                Err(e) => {
                    built.failed = true;
                    let _ = writeln!(built.text, "\nlive: FAILED: {e}");
                }
            }
        }
        if o.wants("live-safety") {
            let cases = live::safety_cases(o.live_duration, o.live_competitors, o.live_overbooked);
            let _ = writeln!(
                built.text,
                "\n== live-safety: through the relay on 127.0.0.1 (100 Mbit/s, 10 ms each way, 30 packets), {} s, \
                 against {} NewReno connections; each case with NewReno in the seat(s) after it ==",
                o.live_duration.as_secs(),
                o.live_competitors
            );
            match live::run_safety(&cases, |l| eprint!("[live-safety] {l}")) {
                Ok(rows) => {
                    for r in &rows {
                        built.text.push_str(&live::case_lines(r));
                    }
                    let summary = live::safety_table(&cases, &rows);
                    let _ = writeln!(
                        built.text,
                        "-- success and goodput of the tested connections (together); a competitor's mean goodput, against\n   \
                         the seat run's; the competitors' worst 2-s mean of their per-second sum (first and last second left\n   \
                         out), against the seat run's mean; relay queue drops per offered datagram, late drops (the relay\n   \
                         behind its schedule); wall-clock runs on a shared machine"
                    );
                    built.text.push_str(&summary.text());
                    files.push(("live_safety.csv".into(), summary.csv()));
                    files.push(("live_safety_per_second.csv".into(), live::per_second_table(&rows).csv()));
                    built.failed |= rows.iter().any(|r| r.error.is_some() || !r.verified);
                }
                Err(e) => {
                    built.failed = true;
                    let _ = writeln!(built.text, "\nlive-safety: FAILED: {e}");
                }
            }
        }
        let rows: Vec<PointRow> = measured
            .iter()
            .filter_map(|(p, m)| m.as_ref().ok().map(|m| PointRow::new(p, m)))
            .collect();
        files.push(("points.csv".into(), csv(rows).map_err(|e| e.to_string())?));
        let refs: Vec<(&str, String)> = files.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
        built.files = write_files(out, &refs).map_err(|e| e.to_string())?;
        Ok(built)
    }
}

/// One row of `points.csv`.
#[derive(Debug, Clone, Default, Serialize)]
struct PointRow {
    figure: String,
    case: String,
    variant: String,
    competitor: String,
    target_pct: u32,
    n: u32,
    seed: u64,
    success: f64,
    aggregate_success: f64,
    tested_mbps: f64,
    competitor_mbps: f64,
    jain: f64,
    goodput_utilisation: f64,
    drop_rate: f64,
    infeasible_intervals: usize,
}

impl PointRow {
    fn new(p: &Point, m: &Measured) -> Self {
        Self {
            figure: p.figure.into(),
            case: p.case.clone(),
            variant: p.variant.clone(),
            competitor: p.competitor.into(),
            target_pct: p.target_pct,
            n: p.n,
            seed: p.seed,
            success: m.success,
            aggregate_success: m.aggregate_success,
            tested_mbps: m.tested_mbps,
            competitor_mbps: m.competitor_mbps,
            jain: m.jain,
            goodput_utilisation: m.goodput_utilisation,
            drop_rate: m.drop_rate,
            infeasible_intervals: m.infeasible_intervals,
        }
    }
}

/// The measurements of one (figure, variant, competitor, target, n) over its seeds.
fn cell<'a>(
    ok: &'a [(&Point, &Measured)],
    figure: &str,
    variant: &str,
    comp: &str,
    pct: u32,
    n: u32,
) -> Vec<&'a Measured> {
    ok.iter()
        .filter(|(p, _)| {
            p.figure == figure && p.variant == variant && p.competitor == comp && p.target_pct == pct && p.n == n
        })
        .map(|(_, m)| *m)
        .collect()
}

fn avg(ms: &[&Measured], f: impl Fn(&Measured) -> f64) -> f64 {
    mean(ms.iter().map(|m| f(m)))
}

fn min_of(ms: &[&Measured], f: impl Fn(&Measured) -> f64) -> f64 {
    ms.iter().map(|m| f(m)).fold(f64::INFINITY, f64::min)
}

/// The success goal: 0.95 of slots at every N for the default mode
/// against NewReno and CUBIC, over QUIC and TCP with SACK.
const GOAL: f64 = 0.95;

fn grid_tables(o: &Options, ok: &[(&Point, &Measured)], text: &mut String, files: &mut Vec<(String, String)>) {
    let header = || {
        let t = Table::new().left("variant \\ N", 16);
        o.counts.iter().fold(t, |t, n| t.right(&n.to_string(), 11))
    };
    let mut misses = Vec::new();
    for comp in o.competitors.iter().copied() {
        for &pct in &o.targets_pct {
            let target = mbit(f64::from(pct)).bits_per_sec() as f64 / 1e6;
            let _ = writeln!(
                text,
                "\n== grid: success ratio, mean over seeds (min), target {target} Mbit/s ({pct} %), N competitors {comp} =="
            );
            let mut table = header();
            let mut series = Vec::new();
            for v in o.variants.iter().copied().filter(|v| runs_against(v, comp)) {
                let mut cells = vec![v.to_string()];
                let mut points = Vec::new();
                for &n in &o.counts {
                    let c = cell(ok, "grid", v, comp, pct, n);
                    let (m, lo) = (avg(&c, |m| m.success), min_of(&c, |m| m.success));
                    cells.push(format!("{m:.2} ({lo:.2})"));
                    points.push((f64::from(n), m));
                    // Each transport against its own kind: QUIC against QUIC
                    // NewReno and CUBIC, TCP-SACK against TCP Reno and CUBIC.
                    let judged = matches!(
                        (v, comp),
                        ("default", "quic-newreno" | "quic-cubic") | ("tcp-default", "tcp-reno" | "tcp-cubic")
                    );
                    if judged && lo < GOAL {
                        misses.push(format!("{v} vs {n} {comp} at {pct} %: {lo:.2}"));
                    }
                }
                table.row(cells);
                series.push(Series {
                    name: v.to_string(),
                    points,
                });
            }
            *text += &table.text();
            files.push((
                format!("success_{comp}_{pct}.svg"),
                line_chart(
                    &format!("Success at {target} Mbit/s vs N {comp} flows"),
                    "competing flows N",
                    "fraction of 1-s slots met",
                    &series,
                ),
            ));
            let run = |trio: [&str; 3]| trio.iter().all(|v| o.variants.contains(v));
            if runs_against("default", comp) && run(["default", "paper", "newreno"]) {
                cost_table(o, ok, comp, pct, ["default", "paper", "newreno"], text, files);
            }
            if comp.starts_with("tcp") && run(["tcp-default", "tcp-paper", "tcp-newreno"]) {
                cost_table(
                    o,
                    ok,
                    comp,
                    pct,
                    ["tcp-default", "tcp-paper", "tcp-newreno"],
                    text,
                    files,
                );
            }
        }
    }
    let _ = writeln!(
        text,
        "\ngoal: the default mode meets {GOAL} of slots at every N against NewReno and CUBIC of its own transport, over QUIC and TCP-SACK (worst seed): {}",
        if misses.is_empty() {
            "met".to_string()
        } else {
            format!("missed in {} cell(s): {}", misses.len(), misses.join("; "))
        }
    );
    let _ = writeln!(
        text,
        "fixed: `fixed:rate=TARGET`, the paper's baseline (a window of TARGET x min RTT, never reduced); it sends at\n\
         most TARGET x min RTT / RTT of QUIC bytes, and its goodput is at most {:.3} of that (QUIC's {} bytes of\n\
         overhead per {}-byte packet): it cannot meet a goodput target, so its 0.00 is by construction, not a bug.",
        1.0 - f64::from(tput_cc::QUIC_OVERHEAD) / f64::from(MTU),
        tput_cc::QUIC_OVERHEAD,
        MTU
    );
}

/// What the tested flow costs the others: against NewReno in the same seat.
fn cost_table(
    o: &Options,
    ok: &[(&Point, &Measured)],
    comp: &str,
    pct: u32,
    trio: [&str; 3],
    text: &mut String,
    files: &mut Vec<(String, String)>,
) {
    let target = mbit(f64::from(pct)).bits_per_sec() as f64 / 1e6;
    let _ = writeln!(
        text,
        "-- cost, means over seeds: tested flow and competitor goodput (Mbit/s) for {} / {} / {} in the seat;\n   \
         loss per competitor against the newreno seat, bound 1.1 * (target - fair) / N; Jain among competitors;\n   \
         goodput utilisation and drop % for {} / {}",
        trio[0], trio[1], trio[2], trio[0], trio[2]
    );
    let mut table = Table::new()
        .right("N", 4)
        .right("tested d/p/n", 20)
        .right("competitor d/p/n", 20)
        .right("loss vs bound", 15)
        .right("Jain d", 7)
        .right("util d/n", 13)
        .right("drop% d/n", 13);
    let (mut bound_line, mut loss_line, mut paper_line) = (Vec::new(), Vec::new(), Vec::new());
    for &n in &o.counts {
        let [d, p, r] = trio.map(|v| cell(ok, "grid", v, comp, pct, n));
        let fair = avg(&r, |m| m.tested_mbps);
        let loss = avg(&r, |m| m.competitor_mbps) - avg(&d, |m| m.competitor_mbps);
        let loss_paper = avg(&r, |m| m.competitor_mbps) - avg(&p, |m| m.competitor_mbps);
        let bound = (1.1 * (target - fair) / f64::from(n)).max(0.0);
        table.row([
            n.to_string(),
            format!(
                "{:.1}/{:.1}/{:.1}",
                avg(&d, |m| m.tested_mbps),
                avg(&p, |m| m.tested_mbps),
                fair
            ),
            format!(
                "{:.2}/{:.2}/{:.2}",
                avg(&d, |m| m.competitor_mbps),
                avg(&p, |m| m.competitor_mbps),
                avg(&r, |m| m.competitor_mbps)
            ),
            format!("{loss:.2}/{bound:.2}{}", if loss <= bound + 1e-9 { "" } else { " !" }),
            format!("{:.3}", avg(&d, |m| m.jain)),
            format!(
                "{:.3}/{:.3}",
                avg(&d, |m| m.goodput_utilisation),
                avg(&r, |m| m.goodput_utilisation)
            ),
            format!(
                "{:.2}/{:.2}",
                100.0 * avg(&d, |m| m.drop_rate),
                100.0 * avg(&r, |m| m.drop_rate)
            ),
        ]);
        let x = f64::from(n);
        bound_line.push((x, bound));
        loss_line.push((x, loss));
        paper_line.push((x, loss_paper));
    }
    *text += &table.text();
    files.push((
        format!("cost_{}_{comp}_{pct}.svg", trio[0]),
        line_chart(
            &format!("Loss per {comp} flow to a {target} Mbit/s guarantee"),
            "competing flows N",
            "loss per competitor vs NewReno seat, Mbit/s",
            &[
                Series {
                    name: trio[0].into(),
                    points: loss_line,
                },
                Series {
                    name: trio[1].into(),
                    points: paper_line,
                },
                Series {
                    name: "bound 1.1 (T - fair) / N".into(),
                    points: bound_line,
                },
            ],
        ),
    ));
}

fn fig7_tables(o: &Options, ok: &[(&Point, &Measured)], text: &mut String, files: &mut Vec<(String, String)>) {
    for &pct in &o.targets_pct {
        let each = mbit(f64::from(pct) / 5.0).bits_per_sec() as f64 / 1e6;
        let _ = writeln!(
            text,
            "\n== fig7: five flows of {each} Mbit/s each ({pct} % together) against N QUIC NewReno: \
             per-flow success / the five judged as one, competitor Mbit/s =="
        );
        let mut table = o.counts.iter().fold(Table::new().left("variant \\ N", 20), |t, n| {
            t.right(&n.to_string(), 17)
        });
        let mut series = Vec::new();
        for v in ["default", "default-aggregate", "paper", "paper-aggregate"] {
            let mut cells = vec![v.to_string()];
            let mut points = Vec::new();
            for &n in &o.counts {
                let c = cell(ok, "fig7", v, "quic-newreno", pct, n);
                cells.push(format!(
                    "{:.2}/{:.2} {:.2}",
                    avg(&c, |m| m.success),
                    avg(&c, |m| m.aggregate_success),
                    avg(&c, |m| m.competitor_mbps)
                ));
                points.push((f64::from(n), avg(&c, |m| m.success)));
            }
            table.row(cells);
            series.push(Series { name: v.into(), points });
        }
        *text += &table.text();
        files.push((
            format!("fig7_{pct}.svg"),
            line_chart(
                &format!("Five flows of {each} Mbit/s vs N QUIC NewReno"),
                "competing flows N",
                "mean per-flow fraction of 1-s slots met",
                &series,
            ),
        ));
    }
}

fn overbooked_table(ok: &[(&Point, &Measured)], text: &mut String) {
    let _ = writeln!(
        text,
        "\n== overbooked: six flows asking 20 Mbit/s each (120 % of the link) against 10 QUIC NewReno, means over seeds =="
    );
    let mut table = Table::new()
        .left("six flows", 10)
        .right("success", 9)
        .right("each Mbit/s", 13)
        .right("NewReno Mbit/s", 17)
        .right("drop %", 7)
        .right("infeasible intervals", 22);
    let mut rows = BTreeMap::new();
    for v in ["default", "paper", "newreno"] {
        let c = cell(ok, "overbooked", v, "quic-newreno", 20, 10);
        table.row([
            v.to_string(),
            format!("{:.2}", avg(&c, |m| m.success)),
            format!("{:.2}", avg(&c, |m| m.tested_mbps)),
            format!("{:.2}", avg(&c, |m| m.competitor_mbps)),
            format!("{:.2}", 100.0 * avg(&c, |m| m.drop_rate)),
            format!("{:.1}", avg(&c, |m| m.infeasible_intervals as f64)),
        ]);
        rows.insert(v, (avg(&c, |m| m.competitor_mbps), avg(&c, |m| m.drop_rate)));
    }
    *text += &table.text();
    if let (Some(d), Some(p)) = (rows.get("default"), rows.get("paper")) {
        let _ = writeln!(
            text,
            "goal: the NewReno flows get at least what they get beside the paper's mode ({:.2} vs {:.2} Mbit/s: {}), \
             with no more drops ({:.2} vs {:.2} %: {})",
            d.0,
            p.0,
            if d.0 >= p.0 { "met" } else { "missed" },
            100.0 * d.1,
            100.0 * p.1,
            if d.1 <= p.1 { "met" } else { "missed" }
        );
    }
}
