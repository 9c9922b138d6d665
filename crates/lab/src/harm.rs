//! Harm: what the flows in a tested seat cost everyone else, measured
//! against the same scenario with NewReno in that seat.
//!
//! RFC 9743 (BCP 133) §3 asks of a new congestion controller that its harm
//! to standard flows be bounded; Ware, Mukerjee, Seshan and Sherry, "Beyond
//! Jain's Fairness Index: Setting the Bar for the Deployment of Congestion
//! Control Algorithms" (HotNets 2019) define harm the way it is measured
//! here: a metric (goodput, drops, queueing delay) of the *other* flows
//! beside the new algorithm, compared with the same metric beside the
//! deployed one (NewReno) in the same seat, everything else unchanged.
//!
//! A run is first reduced to a [`RunDigest`] (what harm needs of it: per
//! competitor goodput, 1-s bins, drops, utilisation, queueing delay, file
//! completion times); [`harm`] compares the digests of the two runs. The
//! queueing delay is every packet's sojourn time in the bottleneck's queue
//! over the measured window (the link's per-packet counters,
//! [`LinkStats::sojourn_p50_ns`](tput_netsim::LinkStats::sojourn_p50_ns) and
//! `sojourn_p99_ns`, within 6.25 %), not the queue's periodic samples: a
//! 1-s sample misses the bursts that make the 99th percentile. Drops are
//! the queue's overflow and AQM drops; CE marks are counted apart.
//!
//! ```
//! use tput_lab::harm::{baseline_twin, compare, seat_groups};
//! use tput_lab::scenario::{run, Scenario};
//!
//! let s = Scenario::from_toml_str(r#"
//!     duration = "3s"
//!     [topology]
//!     kind = "dumbbell"
//!     bottleneck = { rate = "20Mbit/s", delay = "5ms", queue_packets = 30 }
//!     access = { rate = "1Gbit/s", delay = "1ms" }
//!     [[flows]]
//!     cc = "guarantee:target=8Mbit/s"
//!     target = "8Mbit/s"
//!     [[flows]]
//!     cc = "newreno"
//!     count = 2
//! "#)?;
//! let seat = seat_groups(&s);
//! assert_eq!(seat, [0]);
//! let tested = run(&s, |_| {})?;
//! let baseline = run(&baseline_twin(&s, &seat), |_| {})?;
//! let h = compare(&s, &tested, &baseline, &seat)?;
//! assert_eq!(h.competitors, 2);
//! println!("{}", h.table());
//! # Ok::<(), tput_lab::Error>(())
//! ```

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use tput_cc::{AlgorithmState, ControllerSpec};
use tput_transport::IntervalStats;

use crate::Error;
use crate::scenario::{FlowResult, LinkSpec, Scenario, ScenarioResult, TopologySpec};
use crate::stats::percentile;

/// The groups of `scenario` in the tested seat: those whose controller is
/// the throughput guarantee.
pub fn seat_groups(scenario: &Scenario) -> Vec<usize> {
    scenario
        .flows
        .iter()
        .enumerate()
        .filter(|(_, g)| matches!(g.cc, ControllerSpec::Guarantee(_)))
        .map(|(i, _)| i)
        .collect()
}

/// `scenario` with NewReno in the seat: the groups `seat` run `newreno`
/// (not aggregated: NewReno flows have nothing to coordinate), with the
/// same targets, evaluation slots, start times and transport; everything
/// else is unchanged, so the other flows see the same seeds.
pub fn baseline_twin(scenario: &Scenario, seat: &[usize]) -> Scenario {
    let mut twin = scenario.clone();
    for &g in seat {
        if let Some(group) = twin.flows.get_mut(g) {
            group.cc = ControllerSpec::NewReno(Default::default());
            group.aggregate = false;
        }
    }
    twin
}

/// The spec of the link the run's headline figures come from: a
/// dumbbell's bottleneck, or the hop of a chain or a parking lot that the
/// run chose ([`ScenarioResult::headline`]).
fn bottleneck<'a>(scenario: &'a Scenario, result: &ScenarioResult) -> Option<&'a LinkSpec> {
    match &scenario.topology {
        TopologySpec::Dumbbell { bottleneck, .. } => Some(bottleneck),
        TopologySpec::Chain { hops, .. } | TopologySpec::ParkingLot { hops, .. } => hops.get(result.headline.hop),
    }
}

/// The bottleneck's rate at `t` seconds, bits per second (its rate schedule applied).
fn rate_at(link: &LinkSpec, t: f64) -> f64 {
    let mut rate = link.rate.bits_per_sec() as f64;
    for step in &link.rate_schedule {
        if step.at.as_secs_f64() <= t {
            rate = step.rate.bits_per_sec() as f64;
        }
    }
    rate
}

/// The bottleneck's capacity over `[0, end)`, bits (its rate schedule integrated).
fn capacity_bits(link: &LinkSpec, end: f64) -> f64 {
    let mut edges: Vec<f64> = link
        .rate_schedule
        .iter()
        .map(|s| s.at.as_secs_f64())
        .filter(|&t| t > 0.0 && t < end)
        .collect();
    edges.insert(0, 0.0);
    edges.push(end);
    edges.windows(2).map(|w| rate_at(link, w[0]) * (w[1] - w[0])).sum()
}

/// One second of a run (absolute simulated time `[second, second + 1)`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Second {
    /// The seat's goodput in this second (its flows summed), bits per second.
    pub seat_bps: f64,
    /// The competitors' goodput in this second, summed, bits per second.
    pub competitors_bps: f64,
    /// The seat's floor rate at the end of its last interval record ending in
    /// this second: floor window * 8 / smoothed RTT, summed over the seat's
    /// guarantee flows, bits per second (0 without a floor).
    pub floor_bps: f64,
    /// Whether a seat flow's breaker was open at the end of such a record.
    pub breaker_open: bool,
    /// The bottleneck's rate at the start of this second, bits per second.
    pub capacity_bps: f64,
}

/// What harm needs of one run. Goodput is over the measured window
/// (`[0, duration)`): the bytes of a flow's interval records within it
/// (each record's spread evenly over its span) over the duration; for a
/// flow without records (a file workload), every verified byte.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunDigest {
    /// Flows in the seat.
    pub seat_flows: usize,
    /// The seat's goodput (its flows summed), bits per second.
    pub seat_bps: f64,
    /// The sum of the seat's targets, bits per second (0 without targets).
    pub target_bps: f64,
    /// Each competitor's goodput, bits per second, in flow order.
    pub competitor_bps: Vec<f64>,
    /// Every complete second of the window, from the flows' interval
    /// records (empty if the result keeps none).
    pub seconds: Vec<Second>,
    /// Bottleneck queue drops (overflow and AQM) per packet offered to it.
    pub drop_rate: f64,
    /// Packets the bottleneck's queue discipline marked CE, per packet
    /// offered to it (0 without ECN).
    #[serde(default)]
    pub mark_rate: f64,
    /// Every flow's goodput over the bottleneck's capacity in the window.
    pub goodput_utilisation: f64,
    /// The median time a packet waited in the bottleneck's queue over the
    /// window (per-packet sojourn times), seconds; `None` if no packet
    /// reached the bottleneck.
    pub queue_delay_p50_secs: Option<f64>,
    /// The 99th percentile of the same, seconds.
    pub queue_delay_p99_secs: Option<f64>,
    /// Completion times of the competitors' files (file workloads), seconds.
    pub file_times_secs: Vec<f64>,
    /// When a seat flow first declared its target infeasible: the end of
    /// the first interval record whose controller said so, seconds of
    /// simulated time.
    pub infeasible_at_secs: Option<f64>,
}

/// Spread the records of a flow that started at `start` over 1-s bins.
fn bin_goodput(records: &[IntervalStats], start: f64, bins: &mut [f64]) {
    for r in records {
        let (a, b) = (start + r.start_secs, start + r.end_secs);
        if b <= a {
            continue;
        }
        let bits = r.bytes as f64 * 8.0;
        let mut s = a.floor().max(0.0) as usize;
        while s < bins.len() && (s as f64) < b {
            let overlap = b.min(s as f64 + 1.0) - a.max(s as f64);
            if overlap > 0.0 {
                bins[s] += bits * overlap / (b - a);
            }
            s += 1;
        }
    }
}

/// The bits of a flow's records (it started at `start`) that fall within
/// `[0, end)`, each record's spread evenly over its span.
fn window_bits(records: &[IntervalStats], start: f64, end: f64) -> f64 {
    records
        .iter()
        .map(|r| {
            let (a, b) = (start + r.start_secs, start + r.end_secs);
            if b <= a {
                return 0.0;
            }
            let overlap = (b.min(end) - a.max(0.0)).max(0.0);
            r.bytes as f64 * 8.0 * overlap / (b - a)
        })
        .sum()
}

/// Reduce `result`, a run of `scenario`, to what harm needs; `seat` names
/// the groups in the tested seat ([`seat_groups`]).
pub fn digest(scenario: &Scenario, result: &ScenarioResult, seat: &[usize]) -> Result<RunDigest, Error> {
    let link = bottleneck(scenario, result).ok_or_else(|| Error::Invalid("the topology has no bottleneck".into()))?;
    let end = scenario.duration.as_secs_f64();
    if end <= 0.0 {
        return Err(Error::Invalid("the scenario's duration is 0".into()));
    }
    let in_seat = |f: &FlowResult| seat.contains(&f.group);
    // Within the window: the interval records' bytes in [0, end) where the
    // flow has records, else every byte (file workloads keep none).
    let goodput = |f: &FlowResult| {
        if f.intervals.is_empty() {
            f.bytes as f64 * 8.0 / end
        } else {
            window_bits(&f.intervals, f.start_secs, end) / end
        }
    };
    let seat_flows: Vec<&FlowResult> = result.flows.iter().filter(|f| in_seat(f)).collect();
    let competitors: Vec<&FlowResult> = result.flows.iter().filter(|f| !in_seat(f)).collect();
    let target_bps = seat
        .iter()
        .filter_map(|&g| scenario.flows.get(g))
        .map(|g| {
            let spec = match &g.cc {
                ControllerSpec::Guarantee(c) => Some(c.target),
                _ => None,
            };
            g.target.or(spec).map_or(0.0, |t| t.bits_per_sec() as f64) * f64::from(g.count)
        })
        .sum();
    let n = end.floor() as usize;
    let mut seconds: Vec<Second> = (0..n)
        .map(|s| Second {
            capacity_bps: rate_at(link, s as f64),
            ..Second::default()
        })
        .collect();
    let mut infeasible_at_secs: Option<f64> = None;
    let has_records = result.flows.iter().any(|f| !f.intervals.is_empty());
    if has_records {
        let mut seat_bins = vec![0.0; n];
        let mut comp_bins = vec![0.0; n];
        for f in &result.flows {
            let bins = if in_seat(f) { &mut seat_bins } else { &mut comp_bins };
            bin_goodput(&f.intervals, f.start_secs, bins);
        }
        for (s, (a, b)) in seconds.iter_mut().zip(seat_bins.into_iter().zip(comp_bins)) {
            s.seat_bps = a;
            s.competitors_bps = b;
        }
        for f in &seat_flows {
            let mut last: Option<usize> = None;
            for r in &f.intervals {
                let t = f.start_secs + r.end_secs;
                if crate::live::infeasible(r) && infeasible_at_secs.is_none_or(|x| t < x) {
                    infeasible_at_secs = Some(t);
                }
                let bin = t.ceil() as usize;
                // The state at the end of the last record that ends within the second.
                let Some(i) = bin.checked_sub(1).filter(|&i| i < n) else {
                    continue;
                };
                if last != Some(i) {
                    last = Some(i);
                    if let Some(AlgorithmState::Guarantee { floor_bytes, .. }) = r.controller.as_ref().map(|c| &c.state)
                        && r.srtt_ms > 0.0
                    {
                        seconds[i].floor_bps += *floor_bytes as f64 * 8.0 / (r.srtt_ms / 1e3);
                    }
                    seconds[i].breaker_open |= crate::live::breaker_open(r);
                }
            }
        }
    } else {
        seconds.clear();
    }
    let w = &result.window.bottleneck;
    let offered = w.offered.packets.max(1);
    // Per-packet sojourn times over the window (the link's histogram).
    let sojourn = |ns: u64| (w.offered.packets > 0).then_some(ns as f64 / 1e9);
    let capacity = capacity_bits(link, end);
    Ok(RunDigest {
        seat_flows: seat_flows.len(),
        seat_bps: seat_flows.iter().map(|f| goodput(f)).sum(),
        target_bps,
        competitor_bps: competitors.iter().map(|f| goodput(f)).collect(),
        seconds,
        drop_rate: (w.dropped_queue.packets + w.dropped_aqm.packets) as f64 / offered as f64,
        mark_rate: w.marked.packets as f64 / offered as f64,
        goodput_utilisation: if capacity > 0.0 {
            result.flows.iter().map(goodput).sum::<f64>() * end / capacity
        } else {
            0.0
        },
        queue_delay_p50_secs: sojourn(w.sojourn_p50_ns),
        queue_delay_p99_secs: sojourn(w.sojourn_p99_ns),
        file_times_secs: competitors.iter().flat_map(|f| f.file_times.iter().copied()).collect(),
        infeasible_at_secs,
    })
}

/// One metric beside the tested seat and beside NewReno in it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Compared {
    /// With the tested controller in the seat.
    pub tested: f64,
    /// With NewReno in the seat.
    pub baseline: f64,
}

impl Compared {
    /// `tested - baseline`.
    pub fn increase(&self) -> f64 {
        self.tested - self.baseline
    }

    fn of(tested: Option<f64>, baseline: Option<f64>) -> Option<Compared> {
        Some(Compared {
            tested: tested?,
            baseline: baseline?,
        })
    }
}

/// The competitors' worst window of a given length.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct WorstWindow {
    /// The window's length, seconds.
    pub secs: u32,
    /// Its start, seconds of simulated time.
    pub start_secs: f64,
    /// The competitors' goodput in it (summed) over their goodput in the
    /// same window beside NewReno in the seat.
    pub share: f64,
}

/// What the seat cost the others (see the [module](self) documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Harm {
    /// Competing flows.
    pub competitors: usize,
    /// The sum of the seat's targets, bits per second (0 without targets).
    pub target_bps: f64,
    /// The seat's goodput: tested, and NewReno's (its fair share).
    pub seat_bps: Compared,
    /// A competitor's mean goodput, bits per second.
    pub competitor_bps: Compared,
    /// Mean goodput a competitor lost to the tested seat, bits per second
    /// (negative: it gained).
    pub loss_per_competitor_bps: f64,
    /// The largest loss of one competitor, bits per second.
    pub worst_competitor_loss_bps: f64,
    /// What the target explains per competitor: `max(target - fair, 0) / N`,
    /// `fair` being NewReno's goodput in the seat, bits per second.
    pub explained_by_target_bps: f64,
    /// What the seat's extra goodput explains per competitor:
    /// `max(seat - fair, 0) / N`, bits per second.
    pub explained_by_seat_bps: f64,
    /// `loss_per_competitor / explained_by_target` (`None` when the target explains nothing).
    pub loss_over_explained: Option<f64>,
    /// Bottleneck queue drops (overflow and AQM) per offered packet.
    pub drop_rate: Compared,
    /// Bottleneck CE marks per offered packet.
    pub mark_rate: Compared,
    /// Goodput utilisation of the bottleneck.
    pub goodput_utilisation: Compared,
    /// Median queueing delay at the bottleneck (per-packet sojourn), seconds
    /// (`None` if no packet reached it).
    pub queue_delay_p50_secs: Option<Compared>,
    /// 99th percentile of the same, seconds.
    pub queue_delay_p99_secs: Option<Compared>,
    /// The competitors' worst 1-s and 2-s windows (none without interval records).
    pub worst_windows: Vec<WorstWindow>,
    /// Median completion time of the competitors' files, seconds.
    pub file_time_p50_secs: Option<Compared>,
    /// 99th percentile of the same, seconds.
    pub file_time_p99_secs: Option<Compared>,
}

/// Window lengths of [`Harm::worst_windows`], seconds.
pub const WINDOWS_SECS: [u32; 2] = [1, 2];

/// The competitors' worst `len`-second window: the smallest share of
/// their baseline goodput, over windows where the baseline has some.
pub fn worst_window(tested: &[Second], baseline: &[Second], len: u32) -> Option<WorstWindow> {
    let len = len.max(1) as usize;
    let n = tested.len().min(baseline.len());
    (0..(n + 1).saturating_sub(len))
        .filter_map(|s| {
            let t: f64 = tested[s..s + len].iter().map(|x| x.competitors_bps).sum();
            let b: f64 = baseline[s..s + len].iter().map(|x| x.competitors_bps).sum();
            (b > 0.0).then(|| WorstWindow {
                secs: len as u32,
                start_secs: s as f64,
                share: t / b,
            })
        })
        .min_by(|a, b| a.share.total_cmp(&b.share))
}

/// Compare the run with the tested seat (`tested`) against the one with
/// NewReno in it (`baseline`); an error if they do not have the same
/// competitors.
pub fn harm(tested: &RunDigest, baseline: &RunDigest) -> Result<Harm, Error> {
    let n = tested.competitor_bps.len();
    if n != baseline.competitor_bps.len() {
        return Err(Error::Invalid(format!(
            "harm: {n} competitors beside the tested seat, {} beside NewReno: not twins",
            baseline.competitor_bps.len()
        )));
    }
    let losses: Vec<f64> = tested
        .competitor_bps
        .iter()
        .zip(&baseline.competitor_bps)
        .map(|(t, b)| b - t)
        .collect();
    let mean = |v: &[f64]| crate::stats::mean(v.iter().copied()).unwrap_or(0.0);
    let per = |x: f64| if n > 0 { (x.max(0.0)) / n as f64 } else { 0.0 };
    let fair = baseline.seat_bps;
    let loss = mean(&losses);
    let explained_by_target_bps = per(tested.target_bps - fair);
    let files = |d: &RunDigest, q| percentile(&d.file_times_secs, q);
    Ok(Harm {
        competitors: n,
        target_bps: tested.target_bps,
        seat_bps: Compared {
            tested: tested.seat_bps,
            baseline: fair,
        },
        competitor_bps: Compared {
            tested: mean(&tested.competitor_bps),
            baseline: mean(&baseline.competitor_bps),
        },
        loss_per_competitor_bps: loss,
        worst_competitor_loss_bps: losses.iter().copied().fold(f64::NEG_INFINITY, f64::max).max(loss),
        explained_by_target_bps,
        explained_by_seat_bps: per(tested.seat_bps - fair),
        loss_over_explained: (explained_by_target_bps > 0.0).then(|| loss / explained_by_target_bps),
        drop_rate: Compared {
            tested: tested.drop_rate,
            baseline: baseline.drop_rate,
        },
        mark_rate: Compared {
            tested: tested.mark_rate,
            baseline: baseline.mark_rate,
        },
        goodput_utilisation: Compared {
            tested: tested.goodput_utilisation,
            baseline: baseline.goodput_utilisation,
        },
        queue_delay_p50_secs: Compared::of(tested.queue_delay_p50_secs, baseline.queue_delay_p50_secs),
        queue_delay_p99_secs: Compared::of(tested.queue_delay_p99_secs, baseline.queue_delay_p99_secs),
        worst_windows: WINDOWS_SECS
            .iter()
            .filter_map(|&w| worst_window(&tested.seconds, &baseline.seconds, w))
            .collect(),
        file_time_p50_secs: Compared::of(files(tested, 0.5), files(baseline, 0.5)),
        file_time_p99_secs: Compared::of(files(tested, 0.99), files(baseline, 0.99)),
    })
}

/// [`digest`] both runs of `scenario` (the tested one, and its
/// [`baseline_twin`]'s) and compare them with [`harm`].
pub fn compare(
    scenario: &Scenario,
    tested: &ScenarioResult,
    baseline: &ScenarioResult,
    seat: &[usize],
) -> Result<Harm, Error> {
    harm(&digest(scenario, tested, seat)?, &digest(scenario, baseline, seat)?)
}

impl Harm {
    /// The harm table `tputctl sim --harm` prints: one line per metric,
    /// beside the tested seat and beside NewReno in it.
    pub fn table(&self) -> String {
        let mb = |x: f64| format!("{:.2}", x / 1e6);
        let pct = |x: f64| format!("{:.2} %", 100.0 * x);
        let ms = |x: f64| format!("{:.2} ms", 1e3 * x);
        let secs = |x: f64| format!("{x:.2} s");
        let mut t = String::new();
        let _ = writeln!(
            t,
            "harm (RFC 9743 §3; Ware et al., HotNets 2019): {} competitor(s), beside the tested seat and beside NewReno in it",
            self.competitors
        );
        let _ = writeln!(
            t,
            "  {:<34} {:>14} {:>14} {:>14}",
            "metric", "tested", "newreno seat", "increase"
        );
        let mut row = |name: &str, c: Compared, f: &dyn Fn(f64) -> String| {
            let _ = writeln!(
                t,
                "  {name:<34} {:>14} {:>14} {:>14}",
                f(c.tested),
                f(c.baseline),
                f(c.increase())
            );
        };
        row("seat goodput, Mbit/s", self.seat_bps, &mb);
        row("competitor goodput (mean), Mbit/s", self.competitor_bps, &mb);
        row("bottleneck drops", self.drop_rate, &pct);
        if self.mark_rate.tested > 0.0 || self.mark_rate.baseline > 0.0 {
            row("bottleneck CE marks", self.mark_rate, &pct);
        }
        row("goodput utilisation", self.goodput_utilisation, &pct);
        if let Some(c) = self.queue_delay_p50_secs {
            row("queueing delay p50 (per packet)", c, &ms);
        }
        if let Some(c) = self.queue_delay_p99_secs {
            row("queueing delay p99 (per packet)", c, &ms);
        }
        if let Some(c) = self.file_time_p50_secs {
            row("competitors' file time p50", c, &secs);
        }
        if let Some(c) = self.file_time_p99_secs {
            row("competitors' file time p99", c, &secs);
        }
        let _ = writeln!(
            t,
            "  loss per competitor {} Mbit/s (worst {}); the target explains {} Mbit/s{}, the seat's extra goodput {}",
            mb(self.loss_per_competitor_bps),
            mb(self.worst_competitor_loss_bps),
            mb(self.explained_by_target_bps),
            self.loss_over_explained
                .map_or(String::new(), |r| format!(" (loss {r:.2}x that)")),
            mb(self.explained_by_seat_bps)
        );
        for w in &self.worst_windows {
            let _ = writeln!(
                t,
                "  competitors' worst {}-s window: {:.2} of their goodput beside NewReno (from {:.0} s)",
                w.secs, w.share, w.start_secs
            );
        }
        t
    }
}

#[cfg(test)]
mod tests;
