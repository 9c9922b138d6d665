//! The `safety` figure: RFC 9743's evaluation of a new congestion
//! controller (BCP 133, §3 and §4: no congestion collapse, bounded harm to
//! standard flows, transient capacity changes, lower-layer loss, several
//! flows of the new kind, short-lived cross traffic, other algorithms)
//! applied to the guarantee, each case beside the same run with NewReno in
//! the guarantee's seat; harm as Ware, Mukerjee, Seshan, Sherry, "Beyond
//! Jain's Fairness Index: Setting the Bar for the Deployment of Congestion
//! Control Algorithms" (HotNets 2019) define it ([`tput_lab::harm`]).
//!
//! Rows, on the guarantee bench's dumbbell (100 Mbit/s, 5 ms, 20 ms RTT):
//!
//! - `a`: targets of 10, 20, 30, 40, 50 and 70 % of the link against 10 and
//!   30 QUIC NewReno and CUBIC flows, 30-packet and 2-BDP (417-packet) queues;
//! - `b`: infeasible targets, 120 % and 200 %, against 10 NewReno;
//! - `c`: a 10 % target against 30 NewReno while the link drops to 15 % or
//!   50 % for the middle third of the run and comes back, and while it
//!   steps up from 50 % to 100 % at half time;
//! - `d`: random loss of 0.1, 1 and 5 % on the bottleneck, a 10 % target
//!   against 10 NewReno;
//! - `e`: 20 guarantee flows booking 50, 80, 100 and 150 % of the link
//!   together, against 30 NewReno, independent and coordinated
//!   (`aggregate`);
//! - `f`: differing RTTs, on the same dumbbell with a 1-ms bottleneck (so
//!   that a 5-ms round trip exists) and per-group access links: a 10 % or
//!   30 % target (20 ms RTT) against 10 NewReno flows whose RTTs are spread
//!   geometrically from 5 to 200 ms, and a long-RTT guarantee flow (200 ms)
//!   with a 10 % or 30 % target against 10 NewReno flows at 20 ms;
//! - `g`: AQM bottlenecks with a 1000-packet limit, every flow with and
//!   without ECN: RED (ns-2's defaults) and CoDel (RFC 8289) with 10 % and
//!   30 % targets against 10 NewReno, FQ-CoDel (RFC 8290) with a 5 % target
//!   (below the per-flow share) against 10 NewReno and a 30 % target, three
//!   times the per-flow share, against 9 NewReno, which must end
//!   "infeasible" within 10 evaluation slots and harm nobody;
//! - `h`: a 10 % target against 10 NewReno and web-like file transfers (4
//!   sources of Pareto-sized files, mean 100 kB, shape 1.5, a file every
//!   200 ms on average each), with the files' completion times;
//! - `i`: 10 % and 30 % targets against 10 BBR flows (this workspace's BBRv3
//!   and quinn-proto's BBR).
//!
//! Every case runs with the default mode, `mode=paper` and NewReno in the
//! seat (an aggregated case's NewReno run is its independent twin's), seeds
//! 1-5, 60 s.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

use tput_cc::EvalSlot;
use tput_cc::units::Rate;
use tput_lab::harm::{Harm, RunDigest, harm};
use tput_lab::plot::{Series, line_chart};
use tput_lab::scenario::{FilesSpec, FlowGroup, LinkSpec, QueueKind, QueueSpec, RateChange, Scenario, TopologySpec};
use tput_netsim::Rng;

use super::{BOTTLENECK_BPS, MTU, Measured, Point, spec, tested};
use tput_lab::stats::mean_or_nan as mean;
use tput_tcp::Profile;

/// Every row [`cases`] knows, in table order.
pub const ROWS: [char; 9] = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'i'];
/// The competitors' round-trip times in row `f`'s mixed cases, ms:
/// geometric from 5 to 200.
pub const MIXED_RTTS_MS: [f64; 10] = [5.0, 7.5, 11.3, 17.0, 25.6, 38.5, 57.9, 87.1, 131.0, 200.0];
/// The queue limit of row `g`'s AQM bottlenecks, packets.
pub const AQM_LIMIT_PACKETS: u32 = 1000;
/// Variants of every case: the default mode, the paper's and NewReno in the seat.
pub const VARIANTS: [&str; 3] = ["default", "paper", "newreno"];
/// The 2-BDP queue: 2 x 100 Mbit/s x 20 ms in 1200-byte packets.
pub const TWO_BDP_PACKETS: u32 = 417;

/// The safety figure's size.
#[derive(Debug, Clone, PartialEq)]
pub struct SafetyOptions {
    /// Rows to run (a subset of [`ROWS`]).
    pub rows: Vec<char>,
    /// Seeds per case.
    pub seeds: Vec<u64>,
    /// Simulated time of a run.
    pub duration: Duration,
    /// One or two cases per row instead of all ([`cases`]'s short list).
    pub short: bool,
    /// Only the cases whose name contains one of these (all if empty).
    pub only: Vec<String>,
}

impl SafetyOptions {
    /// The full figure: every row, seeds 1-5, 60 s.
    pub fn full() -> Self {
        Self {
            rows: ROWS.to_vec(),
            seeds: (1..=5).collect(),
            duration: Duration::from_secs(60),
            short: false,
            only: Vec::new(),
        }
    }

    /// A smoke run: a case or two per row, seed 1, 15 s.
    pub fn short() -> Self {
        Self {
            rows: ROWS.to_vec(),
            seeds: vec![1],
            duration: Duration::from_secs(15),
            short: true,
            only: Vec::new(),
        }
    }

    /// Apply `TPUT_BENCH_SAFETY_ROWS` (e.g. `a,c`), `TPUT_BENCH_SAFETY_SEEDS`
    /// (a count: seeds 1..=N), `TPUT_BENCH_SAFETY_SECS` and
    /// `TPUT_BENCH_SAFETY_SHORT` (`1`: the short case list at the given size)
    /// and `TPUT_BENCH_SAFETY_CASES` (e.g. `30newreno-q30,c-drop`: only the
    /// cases whose name contains one of these), given as `get` returns them.
    pub fn with_env(mut self, get: impl Fn(&str) -> Option<String>) -> Result<Self, String> {
        if let Some(rows) = get("TPUT_BENCH_SAFETY_ROWS") {
            let mut wanted = Vec::new();
            for r in rows.split(',').map(str::trim).filter(|r| !r.is_empty()) {
                let c = r.chars().next().filter(|_| r.len() == 1);
                match c {
                    Some(c) if ROWS.contains(&c) => wanted.push(c),
                    _ => {
                        return Err(format!(
                            "TPUT_BENCH_SAFETY_ROWS: unknown row {r:?} (known: {})",
                            ROWS.iter().map(char::to_string).collect::<Vec<_>>().join(", ")
                        ));
                    }
                }
            }
            if wanted.is_empty() {
                return Err("TPUT_BENCH_SAFETY_ROWS: no row named".into());
            }
            self.rows = ROWS.into_iter().filter(|r| wanted.contains(r)).collect();
        }
        if let Some(n) = get("TPUT_BENCH_SAFETY_SEEDS") {
            let n: u64 = n
                .trim()
                .parse()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| format!("TPUT_BENCH_SAFETY_SEEDS: {n:?} is not a count of seeds >= 1"))?;
            self.seeds = (1..=n).collect();
        }
        if let Some(s) = get("TPUT_BENCH_SAFETY_SECS") {
            let secs: u64 = s
                .trim()
                .parse()
                .ok()
                .filter(|&s| s >= 3)
                .ok_or_else(|| format!("TPUT_BENCH_SAFETY_SECS: {s:?} is not a whole number of seconds >= 3"))?;
            self.duration = Duration::from_secs(secs);
        }
        if let Some(s) = get("TPUT_BENCH_SAFETY_SHORT") {
            self.short = s.trim() == "1";
        }
        if let Some(s) = get("TPUT_BENCH_SAFETY_CASES") {
            self.only = s
                .split(',')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect();
            if self.cases().is_empty() {
                return Err(format!(
                    "TPUT_BENCH_SAFETY_CASES: {s:?} matches no case of the rows asked for"
                ));
            }
        }
        Ok(self)
    }

    /// The cases to run: [`cases`] of the rows, filtered by [`only`](Self::only).
    pub fn cases(&self) -> Vec<Case> {
        cases(&self.rows, self.short)
            .into_iter()
            .filter(|c| self.only.is_empty() || self.only.iter().any(|o| c.name.contains(o.as_str())))
            .collect()
    }
}

/// One case of the figure: a set-up that every variant runs in turn.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Its row ([`ROWS`]).
    pub row: char,
    /// Its name in tables, labels and files (unique).
    pub name: String,
    /// The tested flows' targets together, percent of the link.
    pub target_pct: u32,
    /// Tested flows.
    pub flows: u32,
    /// Whether the tested flows are coordinated (`aggregate = true`).
    pub aggregate: bool,
    /// Competitor kind: `quic-newreno`, `quic-cubic`, `quic-bbr` or `quinn-bbr`.
    pub competitor: &'static str,
    /// Competing bulk flows.
    pub n: u32,
    /// Bottleneck queue, packets.
    pub queue: u32,
    /// Bottleneck rate changes: (fraction of the run, percent of the link).
    pub steps: Vec<(f64, u32)>,
    /// Random loss on the bottleneck, percent.
    pub loss_pct: Option<f64>,
    /// Web-like file sources beside the competitors.
    pub file_sources: u32,
    /// The bottleneck's one-way delay, ms (5 but in row `f`).
    pub bottleneck_delay_ms: f64,
    /// The tested flows' base round-trip time, ms, through access links of
    /// their own (`None`: the shared access links, 20 ms).
    pub seat_rtt_ms: Option<f64>,
    /// Each competitor's base round-trip time, ms (empty: the shared access links).
    pub competitor_rtts_ms: Vec<f64>,
    /// The bottleneck's queue discipline (`None`: DropTail).
    pub aqm: Option<QueueKind>,
    /// Every flow negotiates ECN and the queue marks instead of dropping.
    pub ecn: bool,
}

impl Case {
    fn new(row: char, name: String, target_pct: u32, competitor: &'static str, n: u32) -> Self {
        Case {
            row,
            name,
            target_pct,
            flows: 1,
            aggregate: false,
            competitor,
            n,
            queue: 30,
            steps: Vec::new(),
            loss_pct: None,
            file_sources: 0,
            bottleneck_delay_ms: 5.0,
            seat_rtt_ms: None,
            competitor_rtts_ms: Vec::new(),
            aqm: None,
            ecn: false,
        }
    }

    /// The case whose NewReno run this case's variants are compared with
    /// (itself, but for an aggregated case: its independent twin).
    pub fn baseline_name(&self) -> String {
        match self.name.strip_suffix("-aggregate") {
            Some(base) => base.to_string(),
            None => self.name.clone(),
        }
    }

    /// The variants that run this case.
    pub fn variants(&self) -> Vec<&'static str> {
        if self.aggregate {
            vec!["default", "paper"]
        } else {
            VARIANTS.to_vec()
        }
    }

    /// When the link reaches its full rate after running below it
    /// (seconds): the end of a drop, or a step up.
    pub fn recovery_at(&self, duration: Duration) -> Option<f64> {
        let first = self.steps.first()?;
        let last = self.steps.last()?;
        (first.1 < 100 && last.1 == 100).then_some(last.0 * duration.as_secs_f64())
    }
}

/// Every case of `rows`, in table order (`short`: a case or two per row).
pub fn cases(rows: &[char], short: bool) -> Vec<Case> {
    let mut out = Vec::new();
    for &row in rows {
        match row {
            'a' => {
                for comp in ["quic-newreno", "quic-cubic"] {
                    for n in [10, 30] {
                        for queue in [30, TWO_BDP_PACKETS] {
                            for pct in [10, 20, 30, 40, 50, 70] {
                                if short
                                    && !(comp == "quic-newreno" && n == 30 && queue == 30 && [10, 50].contains(&pct))
                                {
                                    continue;
                                }
                                let mut c = Case::new(row, format!("a-{pct}-{n}{}-q{queue}", &comp[5..]), pct, comp, n);
                                c.queue = queue;
                                out.push(c);
                            }
                        }
                    }
                }
            }
            'b' => {
                for pct in [120, 200] {
                    if !(short && pct == 200) {
                        out.push(Case::new(row, format!("b-{pct}-10newreno"), pct, "quic-newreno", 10));
                    }
                }
            }
            'c' => {
                for (name, steps) in [
                    ("c-drop15", vec![(1.0 / 3.0, 15), (2.0 / 3.0, 100)]),
                    ("c-drop50", vec![(1.0 / 3.0, 50), (2.0 / 3.0, 100)]),
                    ("c-up", vec![(0.0, 50), (0.5, 100)]),
                ] {
                    if short && name != "c-drop15" {
                        continue;
                    }
                    let mut c = Case::new(row, name.into(), 10, "quic-newreno", 30);
                    c.steps = steps;
                    out.push(c);
                }
            }
            'd' => {
                for loss in [0.1, 1.0, 5.0] {
                    if short && loss != 1.0 {
                        continue;
                    }
                    let mut c = Case::new(row, format!("d-loss{loss}"), 10, "quic-newreno", 10);
                    c.loss_pct = Some(loss);
                    out.push(c);
                }
            }
            'e' => {
                for pct in [50, 80, 100, 150] {
                    if short && pct != 100 {
                        continue;
                    }
                    for aggregate in [false, true] {
                        let mut c = Case::new(
                            row,
                            format!("e-{pct}-20flows{}", if aggregate { "-aggregate" } else { "" }),
                            pct,
                            "quic-newreno",
                            30,
                        );
                        c.flows = 20;
                        c.aggregate = aggregate;
                        out.push(c);
                    }
                }
            }
            'f' => {
                for (kind, pct) in [("rttmix", 10), ("rttmix", 30), ("seat200", 10), ("seat200", 30)] {
                    if short && pct != 10 {
                        continue;
                    }
                    let mut c = Case::new(row, format!("f-{pct}-{kind}"), pct, "quic-newreno", 10);
                    c.bottleneck_delay_ms = 1.0;
                    if kind == "rttmix" {
                        c.seat_rtt_ms = Some(20.0);
                        c.competitor_rtts_ms = MIXED_RTTS_MS.to_vec();
                    } else {
                        c.seat_rtt_ms = Some(200.0);
                        c.competitor_rtts_ms = vec![20.0; 10];
                    }
                    out.push(c);
                }
            }
            'g' => {
                let aqms = [
                    ("red", QueueKind::Red, 10, 10),
                    ("red", QueueKind::Red, 30, 10),
                    ("codel", QueueKind::Codel, 10, 10),
                    ("codel", QueueKind::Codel, 30, 10),
                    ("fqcodel", QueueKind::FqCodel, 5, 10),
                    ("fqcodel", QueueKind::FqCodel, 30, 9),
                ];
                for (name, kind, pct, n) in aqms {
                    for ecn in [false, true] {
                        if short && (ecn || !matches!((name, pct), ("codel", 10) | ("fqcodel", 30))) {
                            continue;
                        }
                        let mut c = Case::new(
                            row,
                            format!("g-{name}-{pct}-{n}newreno{}", if ecn { "-ecn" } else { "" }),
                            pct,
                            "quic-newreno",
                            n,
                        );
                        c.queue = AQM_LIMIT_PACKETS;
                        c.aqm = Some(kind);
                        c.ecn = ecn;
                        out.push(c);
                    }
                }
            }
            'h' => {
                let mut c = Case::new(row, "h-files".into(), 10, "quic-newreno", 10);
                c.file_sources = 4;
                out.push(c);
            }
            'i' => {
                for comp in ["quic-bbr", "quinn-bbr"] {
                    for pct in [10, 30] {
                        if short && (comp != "quic-bbr" || pct != 10) {
                            continue;
                        }
                        out.push(Case::new(
                            row,
                            format!("i-{pct}-10{}", comp.replace("quic-", "")),
                            pct,
                            comp,
                            10,
                        ));
                    }
                }
            }
            _ => {}
        }
    }
    out
}

/// A competitor of `kind`.
fn competitor(kind: &str) -> FlowGroup {
    match kind {
        "quic-cubic" => FlowGroup::new(spec("cubic")),
        "quic-bbr" => FlowGroup::new(spec("bbr")),
        "quinn-bbr" => FlowGroup::new(spec("bbr")).quinn(),
        _ => FlowGroup::new(spec("newreno")),
    }
}

/// The scenario of `case` run by `variant` for `seed`.
pub fn scenario(case: &Case, variant: &str, seed: u64, duration: Duration) -> Scenario {
    let mut rng = Rng::derive(seed, 0x9a4a_0000);
    let mut jitter = || Duration::from_nanos(rng.below(100_000_000));
    let each = f64::from(case.target_pct) / f64::from(case.flows);
    // A group's own access links for a base round-trip time of `rtt_ms`:
    // 2 x (bottleneck + 2 x access) one-way delays.
    let access_for = |rtt_ms: f64| {
        let one_way_ms = ((rtt_ms / 2.0 - case.bottleneck_delay_ms) / 2.0).max(0.0);
        LinkSpec::new(
            Rate::from_bits_per_sec(1_000_000_000),
            Duration::from_secs_f64(one_way_ms / 1e3),
        )
        .with_queue_packets(1000)
    };
    let mut g = tested(variant, each, Profile::Ns2).with_start_jitter(Duration::ZERO);
    if let Some(rtt) = case.seat_rtt_ms {
        g = g.with_access(access_for(rtt));
    }
    let mut flows = Vec::new();
    if case.aggregate && variant != "newreno" {
        g = g.times(case.flows).aggregated().starting(jitter());
        g.eval_slot = Some(EvalSlot::Time(Duration::from_secs(1)));
        flows.push(g);
    } else {
        for _ in 0..case.flows {
            flows.push(g.clone().starting(jitter()));
        }
    }
    let comp = competitor(case.competitor);
    for i in 0..case.n as usize {
        let mut c = comp.clone().starting(jitter()).with_start_jitter(Duration::ZERO);
        if let Some(&rtt) = case.competitor_rtts_ms.get(i) {
            c = c.with_access(access_for(rtt));
        }
        flows.push(c);
    }
    if case.file_sources > 0 {
        let mut f = FlowGroup::new(spec("newreno")).times(case.file_sources);
        f.files = Some(FilesSpec {
            mean_gap: Duration::from_millis(200),
            mean_size: 100_000,
            shape: 1.5,
            drain: Some(Duration::from_secs(5)),
        });
        flows.push(f);
    }
    let pct_rate = |pct: u32| Rate::from_bits_per_sec(BOTTLENECK_BPS * u64::from(pct) / 100);
    let mut bottleneck = LinkSpec::new(
        Rate::from_bits_per_sec(BOTTLENECK_BPS),
        Duration::from_secs_f64(case.bottleneck_delay_ms / 1e3),
    )
    .with_queue_packets(case.queue);
    if let Some(kind) = case.aqm {
        bottleneck = bottleneck.with_queue(QueueSpec {
            ecn: Some(case.ecn),
            ..QueueSpec::new(kind)
        });
    }
    if case.ecn {
        for f in &mut flows {
            f.ecn = true;
        }
    }
    for &(at, pct) in &case.steps {
        if at <= 0.0 {
            bottleneck.rate = pct_rate(pct);
        } else {
            bottleneck.rate_schedule.push(RateChange {
                at: Duration::from_secs_f64(at * duration.as_secs_f64()),
                rate: pct_rate(pct),
            });
        }
    }
    bottleneck.loss = case.loss_pct.map(|p| p / 100.0);
    let access =
        LinkSpec::new(Rate::from_bits_per_sec(1_000_000_000), Duration::from_micros(2500)).with_queue_packets(1000);
    Scenario {
        name: Some(format!("safety {}", case.name)),
        seed,
        mtu: MTU,
        interval: Duration::from_secs(1),
        ..Scenario::new(duration, TopologySpec::dumbbell(bottleneck, access), flows)
    }
}

/// The groups of a safety scenario in the tested seat: those with a target.
pub fn seat(s: &Scenario) -> Vec<usize> {
    s.flows
        .iter()
        .enumerate()
        .filter(|(_, g)| g.target.is_some())
        .map(|(i, _)| i)
        .collect()
}

/// The case named `name`, from every row's full list.
pub fn case_named(name: &str) -> Option<Case> {
    cases(&ROWS, false).into_iter().find(|c| c.name == name)
}

/// One (case, variant) over its seeds, with harm against NewReno in the seat.
#[derive(Debug, Clone, Default)]
struct Row {
    success: Vec<f64>,
    own_mbps: Vec<f64>,
    harms: Vec<Harm>,
    drop: Vec<f64>,
    util: Vec<f64>,
    p50_ms: Vec<f64>,
    p99_ms: Vec<f64>,
    infeasible_at: Vec<Option<f64>>,
    /// Per seed: the lowest competitor's goodput over its NewReno-seat goodput.
    worst_competitor: Vec<f64>,
    mark: Vec<f64>,
    recovery: Vec<Option<f64>>,
    after_over_target: Vec<f64>,
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NAN, f64::min)
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NAN, f64::max)
}

/// The lowest competitor's goodput in `tested` over its goodput in
/// `baseline` (the same flow beside NewReno in the seat); NaN without one.
fn worst_competitor(tested: &RunDigest, baseline: &RunDigest) -> f64 {
    tested
        .competitor_bps
        .iter()
        .zip(&baseline.competitor_bps)
        .filter(|(_, b)| **b > 0.0)
        .map(|(t, b)| t / b)
        .fold(f64::NAN, f64::min)
}

/// Seconds from `at` until the seat's goodput first reaches `target_bps`
/// in a whole second, and its mean afterwards over the target.
fn recovery(d: &RunDigest, at: f64, target_bps: f64) -> (Option<f64>, f64) {
    let from = at.ceil() as usize;
    let after: Vec<f64> = d.seconds.iter().skip(from).map(|s| s.seat_bps).collect();
    let first = after.iter().position(|&b| b >= target_bps);
    (
        first.map(|i| (from + i + 1) as f64 - at),
        mean(&after) / target_bps.max(1.0),
    )
}

/// The figure's tables and files from every point's measurement.
pub fn tables(o: &SafetyOptions, ok: &[(&Point, &Measured)], text: &mut String, files: &mut Vec<(String, String)>) {
    let found = |case: &str, variant: &str, seed: u64| {
        ok.iter()
            .find(|(p, _)| p.figure == "safety" && p.case == case && p.variant == variant && p.seed == seed)
            .and_then(|(_, m)| m.digest.as_deref().map(|d| (*m, d)))
    };
    let all = o.cases();
    let _ = writeln!(
        text,
        "\n== safety: RFC 9743 §3-4 cases on the dumbbell, {} s, seeds {:?}, beside NewReno in the seat ==\n\
         success: mean (min) over seeds; loss/expl: a competitor's mean goodput loss over what the target explains,\n\
         max(target - fair, 0) / N; worst 1 s / 2 s: the competitors' lowest share of their NewReno-seat goodput in\n\
         a window (min over seeds); worst comp: the lowest single competitor's share of its NewReno-seat goodput\n\
         (min over seeds); drops (overflow and AQM) and utilisation: tested (NewReno seat); CE: marked packets, %;\n\
         queue delay p50/p99: every packet's sojourn in the bottleneck queue (mean over seeds); infeasible: when\n\
         first declared (s of simulated time: the end of the first 1-s interval record that says so, not a count of\n\
         the controller's own 32-RTT evaluation slots; min-max over seeds that declared it, k/seeds); recovery:\n\
         seconds from capacity's return to the first whole second at the target (max over seeds), and the mean\n\
         goodput over the whole seconds from the return to the end of the run over the target (mean, then max over seeds).",
        o.duration.as_secs(),
        o.seeds
    );
    let mut table = tput_lab::report::Table::new()
        .left("case", 26)
        .left("variant", 8)
        .right("success", 12)
        .right("own Mb/s", 8)
        .right("loss/expl", 9)
        .right("w1s", 6)
        .right("w2s", 6)
        .right("worst comp", 10)
        .right("drop %", 13)
        .right("CE %", 6)
        .right("util", 13)
        .right("delay ms", 13)
        .right("infeasible", 10)
        .right("recovery", 19);
    let mut by_case: BTreeMap<(String, &'static str), Row> = BTreeMap::new();
    let mut row_letter = ' ';
    for case in &all {
        if case.row != row_letter {
            row_letter = case.row;
            table.note(format!("-- row {row_letter}"));
        }
        let target_bps = BOTTLENECK_BPS as f64 * f64::from(case.target_pct) / 100.0;
        for variant in case.variants() {
            let mut r = Row::default();
            for &seed in &o.seeds {
                let Some((m, d)) = found(&case.name, variant, seed) else {
                    continue;
                };
                r.success
                    .push(if case.aggregate { m.aggregate_success } else { m.success });
                r.own_mbps.push(d.seat_bps / 1e6);
                r.drop.push(d.drop_rate);
                r.mark.push(d.mark_rate);
                r.util.push(d.goodput_utilisation);
                r.p50_ms.push(d.queue_delay_p50_secs.map_or(f64::NAN, |x| x * 1e3));
                r.p99_ms.push(d.queue_delay_p99_secs.map_or(f64::NAN, |x| x * 1e3));
                r.infeasible_at.push(d.infeasible_at_secs);
                if let Some(at) = case.recovery_at(o.duration) {
                    let (rec, after) = recovery(d, at, target_bps);
                    r.recovery.push(rec);
                    r.after_over_target.push(after);
                }
                if let Some((_, b)) = found(&case.baseline_name(), "newreno", seed)
                    && let Ok(h) = harm(d, b)
                {
                    r.harms.push(h);
                    r.worst_competitor.push(worst_competitor(d, b));
                }
            }
            if r.success.is_empty() {
                table.note(format!("{:<26} {variant:<8} (no results)", case.name));
                continue;
            }
            let base: Vec<f64> = o
                .seeds
                .iter()
                .filter_map(|&s| found(&case.baseline_name(), "newreno", s))
                .map(|(_, b)| b.drop_rate)
                .collect();
            let base_util: Vec<f64> = o
                .seeds
                .iter()
                .filter_map(|&s| found(&case.baseline_name(), "newreno", s))
                .map(|(_, b)| b.goodput_utilisation)
                .collect();
            let lx: Vec<f64> = r.harms.iter().filter_map(|h| h.loss_over_explained).collect();
            let window = |secs: u32| -> Vec<f64> {
                r.harms
                    .iter()
                    .filter_map(|h| h.worst_windows.iter().find(|w| w.secs == secs).map(|w| w.share))
                    .collect()
            };
            let declared: Vec<f64> = r.infeasible_at.iter().filter_map(|x| *x).collect();
            let recovered: Vec<f64> = r.recovery.iter().filter_map(|x| *x).collect();
            let harmful = variant != "newreno" || case.aggregate;
            table.row([
                case.name.clone(),
                variant.to_string(),
                format!("{:.3} ({:.2})", mean(&r.success), min(&r.success)),
                format!("{:.2}", mean(&r.own_mbps)),
                if harmful && !lx.is_empty() {
                    format!("{:.2}", mean(&lx))
                } else {
                    "-".into()
                },
                if harmful {
                    format!("{:.2}", min(&window(1)))
                } else {
                    "-".into()
                },
                if harmful {
                    format!("{:.2}", min(&window(2)))
                } else {
                    "-".into()
                },
                if harmful && !r.worst_competitor.is_empty() {
                    format!("{:.2}", min(&r.worst_competitor))
                } else {
                    "-".into()
                },
                format!("{:.2} ({:.2})", 100.0 * mean(&r.drop), 100.0 * mean(&base)),
                format!("{:.2}", 100.0 * mean(&r.mark)),
                format!("{:.3} ({:.3})", mean(&r.util), mean(&base_util)),
                format!("{:.1}/{:.1}", mean(&r.p50_ms), mean(&r.p99_ms)),
                if declared.is_empty() {
                    "-".into()
                } else {
                    format!(
                        "{:.0}-{:.0} {}/{}",
                        min(&declared),
                        max(&declared),
                        declared.len(),
                        r.infeasible_at.len()
                    )
                },
                if r.recovery.is_empty() {
                    "-".into()
                } else {
                    let after = format!("{:.2}x ({:.2})", mean(&r.after_over_target), max(&r.after_over_target));
                    if recovered.len() < r.recovery.len() {
                        format!("never {after}")
                    } else {
                        format!("{:.0} s {after}", max(&recovered))
                    }
                },
            ]);
            by_case.insert((case.name.clone(), variant), r);
        }
    }
    *text += &table.text();
    files.extend(files_of(o, &all, &by_case));
    timeline(o, &found, files);
}

/// Success and harm against the target size (row `a`).
fn files_of(o: &SafetyOptions, all: &[Case], by_case: &BTreeMap<(String, &'static str), Row>) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let sets: Vec<(String, Vec<&Case>)> = {
        let mut m: BTreeMap<String, Vec<&Case>> = BTreeMap::new();
        for c in all.iter().filter(|c| c.row == 'a') {
            let key = c.name.splitn(3, '-').nth(2).unwrap_or("").to_string();
            m.entry(key).or_default().push(c);
        }
        m.into_iter().collect()
    };
    for (key, cs) in sets {
        let mut success = Vec::new();
        let mut harm_series = Vec::new();
        for v in VARIANTS {
            let pts: Vec<(f64, f64)> = cs
                .iter()
                .filter_map(|c| {
                    by_case
                        .get(&(c.name.clone(), v))
                        .map(|r| (f64::from(c.target_pct), min(&r.success)))
                })
                .collect();
            success.push(Series {
                name: format!("{v} (worst seed)"),
                points: pts,
            });
            if v != "newreno" {
                let pts: Vec<(f64, f64)> = cs
                    .iter()
                    .filter_map(|c| {
                        let r = by_case.get(&(c.name.clone(), v))?;
                        let lx: Vec<f64> = r.harms.iter().filter_map(|h| h.loss_over_explained).collect();
                        Some((f64::from(c.target_pct), mean(&lx)))
                    })
                    .collect();
                harm_series.push(Series {
                    name: format!("{v}: loss / explained"),
                    points: pts,
                });
                let pts: Vec<(f64, f64)> = cs
                    .iter()
                    .filter_map(|c| {
                        let r = by_case.get(&(c.name.clone(), v))?;
                        let share: Vec<f64> = r
                            .harms
                            .iter()
                            .map(|h| h.competitor_bps.tested / h.competitor_bps.baseline)
                            .collect();
                        Some((f64::from(c.target_pct), mean(&share)))
                    })
                    .collect();
                harm_series.push(Series {
                    name: format!("{v}: competitors' share of NewReno-seat goodput"),
                    points: pts,
                });
            }
        }
        harm_series.push(Series {
            name: "1.2 x explained".into(),
            points: cs.iter().map(|c| (f64::from(c.target_pct), 1.2)).collect(),
        });
        out.push((
            format!("safety_success_{key}.svg"),
            line_chart(
                &format!("Success against target size, {key} ({} s)", o.duration.as_secs()),
                "target, % of the link",
                "fraction of 1-s slots met, worst seed",
                &success,
            ),
        ));
        out.push((
            format!("safety_harm_{key}.svg"),
            line_chart(
                &format!("Harm against target size, {key}"),
                "target, % of the link",
                "ratio (mean over seeds)",
                &harm_series,
            ),
        ));
    }
    out
}

/// A run's measurement and digest by (case, variant, seed).
type Found<'m> = dyn Fn(&str, &str, u64) -> Option<(&'m Measured, &'m RunDigest)> + 'm;

/// The per-second time line of the capacity-drop case (`c-drop15`, the
/// first seed): the flow, the competitors (mean per flow, beside the
/// guarantee and beside NewReno in the seat), the floor, the capacity, the
/// breaker.
fn timeline<'m>(o: &SafetyOptions, found: &Found<'m>, files: &mut Vec<(String, String)>) {
    let Some(&seed) = o.seeds.first() else { return };
    let Some(case) = case_named("c-drop15") else { return };
    let Some((_, d)) = found(&case.name, "default", seed) else {
        return;
    };
    let base = found(&case.name, "newreno", seed).map(|(_, b)| b);
    let n = f64::from(case.n);
    let series = |f: &dyn Fn(&tput_lab::harm::Second) -> f64, of: &RunDigest| -> Vec<(f64, f64)> {
        of.seconds
            .iter()
            .enumerate()
            .map(|(i, s)| (i as f64 + 0.5, f(s)))
            .collect()
    };
    let target = f64::from(case.target_pct);
    let mut all = vec![
        Series {
            name: "guarantee flow".into(),
            points: series(&|s| s.seat_bps / 1e6, d),
        },
        Series {
            name: "floor rate".into(),
            points: series(&|s| s.floor_bps / 1e6, d),
        },
        Series {
            name: "competitor (mean) x 10".into(),
            points: series(&|s| 10.0 * s.competitors_bps / n / 1e6, d),
        },
        Series {
            name: "capacity / 10".into(),
            points: series(&|s| s.capacity_bps / 10e6, d),
        },
        Series {
            name: "breaker open (at the target)".into(),
            points: series(&|s| if s.breaker_open { target } else { 0.0 }, d),
        },
    ];
    if let Some(b) = base {
        all.insert(
            3,
            Series {
                name: "competitor beside NewReno seat x 10".into(),
                points: series(&|s| 10.0 * s.competitors_bps / n / 1e6, b),
            },
        );
    }
    files.push((
        "safety_timeline_c-drop15.svg".into(),
        line_chart(
            &format!(
                "Link at 15 % from {} to {} s, target 10 %, 30 NewReno, seed {seed}",
                (o.duration.as_secs_f64() / 3.0).round(),
                (2.0 * o.duration.as_secs_f64() / 3.0).round()
            ),
            "time, s",
            "Mbit/s",
            &all,
        ),
    ));
    let mut csv = crate::repro::Csv::new(&[
        "second",
        "flow_bps",
        "floor_bps",
        "competitors_bps",
        "competitors_newreno_seat_bps",
        "capacity_bps",
        "breaker_open",
    ]);
    for (i, s) in d.seconds.iter().enumerate() {
        let b = base
            .and_then(|b| b.seconds.get(i))
            .map_or(f64::NAN, |x| x.competitors_bps);
        crate::csv_row!(
            csv,
            i,
            s.seat_bps,
            s.floor_bps,
            s.competitors_bps,
            b,
            s.capacity_bps,
            s.breaker_open
        );
    }
    files.push(("safety_timeline_c-drop15.csv".into(), csv.finish()));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_sizes_and_names_are_as_documented() {
        let full = cases(&ROWS, false);
        let count = |row| full.iter().filter(|c| c.row == row).count();
        assert_eq!(
            [
                count('a'),
                count('b'),
                count('c'),
                count('d'),
                count('e'),
                count('f'),
                count('g'),
                count('h'),
                count('i')
            ],
            [48, 2, 3, 3, 8, 4, 12, 1, 4]
        );
        let names: std::collections::BTreeSet<_> = full.iter().map(|c| c.name.clone()).collect();
        assert_eq!(names.len(), full.len(), "unique names");
        assert!(names.contains("a-50-30newreno-q30") && names.contains("e-100-20flows-aggregate"));
        let runs: usize = full.iter().map(|c| c.variants().len()).sum();
        assert_eq!(
            runs,
            48 * 3 + 2 * 3 + 3 * 3 + 3 * 3 + 4 * 3 + 4 * 2 + 4 * 3 + 12 * 3 + 3 + 4 * 3
        );
        let short = cases(&ROWS, true);
        assert_eq!(short.len(), 2 + 1 + 1 + 1 + 2 + 2 + 2 + 1 + 1);
    }

    #[test]
    fn options_come_from_the_environment_or_a_one_line_error() {
        let env = |pairs: &'static [(&'static str, &'static str)]| {
            move |k: &str| pairs.iter().find(|(n, _)| *n == k).map(|(_, v)| v.to_string())
        };
        let o = SafetyOptions::full()
            .with_env(env(&[
                ("TPUT_BENCH_SAFETY_ROWS", "c,a"),
                ("TPUT_BENCH_SAFETY_SEEDS", "2"),
            ]))
            .unwrap();
        assert_eq!((o.rows, o.seeds), (vec!['a', 'c'], vec![1, 2]));
        let o = SafetyOptions::full()
            .with_env(env(&[("TPUT_BENCH_SAFETY_ROWS", "g,f")]))
            .unwrap();
        assert_eq!(o.rows, ['f', 'g']);
        let e = SafetyOptions::full()
            .with_env(env(&[("TPUT_BENCH_SAFETY_ROWS", "z")]))
            .unwrap_err();
        assert!(e.contains("unknown row \"z\""), "{e}");
        let e = SafetyOptions::full()
            .with_env(env(&[("TPUT_BENCH_SAFETY_SEEDS", "0")]))
            .unwrap_err();
        assert!(e.contains("TPUT_BENCH_SAFETY_SEEDS"), "{e}");
        let o = SafetyOptions::full()
            .with_env(env(&[("TPUT_BENCH_SAFETY_CASES", "30newreno-q30,c-drop")]))
            .unwrap();
        let names: Vec<String> = o.cases().into_iter().map(|c| c.name).collect();
        assert_eq!(names.len(), 6 + 2, "{names:?}");
        assert!(
            names
                .iter()
                .all(|n| n.contains("30newreno-q30") || n.starts_with("c-drop"))
        );
        let e = SafetyOptions::full()
            .with_env(env(&[("TPUT_BENCH_SAFETY_CASES", "nothing")]))
            .unwrap_err();
        assert!(e.contains("matches no case"), "{e}");
    }

    #[test]
    fn scenarios_put_the_seat_first_and_apply_the_case() {
        let d = Duration::from_secs(60);
        let c = case_named("c-drop15").unwrap();
        let s = scenario(&c, "default", 1, d);
        assert_eq!(seat(&s), [0]);
        assert_eq!(s.flows.len(), 31);
        let TopologySpec::Dumbbell { bottleneck, .. } = &s.topology else {
            panic!()
        };
        let steps: Vec<(f64, u64)> = bottleneck
            .rate_schedule
            .iter()
            .map(|r| (r.at.as_secs_f64(), r.rate.bits_per_sec()))
            .collect();
        assert_eq!(steps, [(20.0, 15_000_000), (40.0, 100_000_000)]);
        assert_eq!(c.recovery_at(d), Some(40.0));
        let up = case_named("c-up").unwrap();
        assert_eq!(up.recovery_at(d), Some(30.0), "the step up to the full link");
        let e = case_named("e-100-20flows-aggregate").unwrap();
        let s = scenario(&e, "default", 1, d);
        assert_eq!((s.flows.len(), s.flows[0].count, s.flows[0].aggregate), (31, 20, true));
        assert_eq!(seat(&s), [0]);
        assert_eq!(e.baseline_name(), "e-100-20flows");
        let s = scenario(&case_named("e-100-20flows").unwrap(), "newreno", 1, d);
        assert_eq!(seat(&s).len(), 20);
        assert_eq!(s.flows[0].target.unwrap().bits_per_sec(), 5_000_000);
        let h = scenario(&case_named("h-files").unwrap(), "paper", 1, d);
        assert!(h.flows.last().unwrap().files.is_some());
        assert_eq!(seat(&h), [0]);
        let q = scenario(&case_named("d-loss5").unwrap(), "newreno", 1, d);
        let TopologySpec::Dumbbell { bottleneck, .. } = &q.topology else {
            panic!()
        };
        assert_eq!(bottleneck.loss, Some(0.05));
    }

    /// The base round-trip time of group `g` of a dumbbell scenario, ms.
    fn rtt_ms(s: &Scenario, g: usize) -> f64 {
        let TopologySpec::Dumbbell { bottleneck, access, .. } = &s.topology else {
            panic!()
        };
        let a = s.flows[g].access.as_ref().unwrap_or(access);
        2.0 * (bottleneck.delay + 2 * a.delay).as_secs_f64() * 1e3
    }

    #[test]
    fn row_f_gives_each_group_its_round_trip_time() {
        let d = Duration::from_secs(60);
        let mix = scenario(&case_named("f-10-rttmix").unwrap(), "default", 1, d);
        assert_eq!(seat(&mix), [0]);
        assert!((rtt_ms(&mix, 0) - 20.0).abs() < 1e-9);
        let rtts: Vec<f64> = (1..=10).map(|g| rtt_ms(&mix, g)).collect();
        for (got, want) in rtts.iter().zip(MIXED_RTTS_MS) {
            assert!((got - want).abs() < 1e-6, "{rtts:?}");
        }
        let long = scenario(&case_named("f-30-seat200").unwrap(), "newreno", 2, d);
        assert!((rtt_ms(&long, 0) - 200.0).abs() < 1e-9);
        assert!((1..=10).all(|g| (rtt_ms(&long, g) - 20.0).abs() < 1e-9));
        assert_eq!(long.flows[0].target.unwrap().bits_per_sec(), 30_000_000);
    }

    #[test]
    fn row_g_sets_the_queue_discipline_and_ecn_on_every_flow() {
        let d = Duration::from_secs(60);
        let c = case_named("g-fqcodel-30-9newreno-ecn").unwrap();
        let s = scenario(&c, "paper", 1, d);
        let TopologySpec::Dumbbell { bottleneck, .. } = &s.topology else {
            panic!()
        };
        let q = bottleneck.queue.as_deref().unwrap();
        assert_eq!((q.kind, q.ecn), (QueueKind::FqCodel, Some(true)));
        assert_eq!(bottleneck.queue_packets, Some(AQM_LIMIT_PACKETS));
        assert_eq!(s.flows.len(), 10);
        assert!(s.flows.iter().all(|f| f.ecn));
        let plain = scenario(&case_named("g-red-10-10newreno").unwrap(), "default", 1, d);
        let TopologySpec::Dumbbell { bottleneck, .. } = &plain.topology else {
            panic!()
        };
        assert_eq!(
            bottleneck.queue.as_deref().map(|q| (q.kind, q.ecn)),
            Some((QueueKind::Red, Some(false)))
        );
        assert!(plain.flows.iter().all(|f| !f.ecn));
        // Every scenario of the figure passes the lab's validation.
        for c in cases(&ROWS, false).iter().filter(|c| "fg".contains(c.row)) {
            for v in c.variants() {
                tput_lab::scenario::validate(&scenario(c, v, 1, d)).unwrap_or_else(|e| panic!("{}: {e}", c.name));
            }
        }
    }
}
