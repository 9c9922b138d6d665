//! A scenario run's charts: tested flows as lines, other groups as bands.

use super::{Band, BandPoint, Figure, Panel, Series, Trace};
use crate::scenario::{FlowResult, Scenario, ScenarioResult};

/// The charts of a simulated run.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioCharts {
    /// Delivered throughput over time: tested flows, other groups' means and ranges.
    pub throughput: String,
    /// Congestion window over time (from the controller traces), grouped likewise.
    pub cwnd: String,
    /// The guarantee controllers' `k` and `s` over time (two panels).
    pub k: String,
    /// Bottleneck queue length over time.
    pub queue: String,
}

/// Most flows drawn one by one; tested groups with more flows in all are drawn as bands too.
pub const MAX_TESTED_LINES: usize = 6;

/// Points of a [`Band`] over step-wise series: this many x positions.
pub(super) const BAND_GRID: usize = 1000;

/// Which groups of `s` are tested: those with a `target`, or else the first.
pub fn tested_groups(s: &Scenario) -> Vec<bool> {
    let any = s.flows.iter().any(|g| g.target.is_some());
    s.flows
        .iter()
        .enumerate()
        .map(|(i, g)| if any { g.target.is_some() } else { i == 0 })
        .collect()
}

/// A group's mean, smallest and largest value at each x.
///
/// Without `hold`, the x positions are those the members share (each x
/// where at least one member has a point; members without a point exactly
/// there do not count). With `hold` (step-wise series such as a window),
/// 1000 evenly spaced positions span the members' points, and a member counts
/// at x from its first point to its last, with the value of its last point
/// at or before x. Non-finite points are skipped.
pub fn band(members: &[Vec<(f64, f64)>], hold: bool) -> Vec<BandPoint> {
    let members: Vec<Vec<(f64, f64)>> = members
        .iter()
        .map(|m| {
            let mut m: Vec<(f64, f64)> = m
                .iter()
                .copied()
                .filter(|(x, y)| x.is_finite() && y.is_finite())
                .collect();
            m.sort_by(|a, b| a.0.total_cmp(&b.0));
            m
        })
        .filter(|m| !m.is_empty())
        .collect();
    let xs: Vec<f64> = if hold {
        let lo = members.iter().map(|m| m[0].0).fold(f64::INFINITY, f64::min);
        let hi = members
            .iter()
            .map(|m| m[m.len() - 1].0)
            .fold(f64::NEG_INFINITY, f64::max);
        if lo.partial_cmp(&hi).is_none_or(|o| o == std::cmp::Ordering::Greater) {
            return Vec::new();
        }
        if hi == lo {
            vec![lo]
        } else {
            (0..=BAND_GRID)
                .map(|i| lo + (hi - lo) * i as f64 / BAND_GRID as f64)
                .collect()
        }
    } else {
        let mut xs: Vec<f64> = members.iter().flatten().map(|p| p.0).collect();
        xs.sort_by(f64::total_cmp);
        xs.dedup();
        xs
    };
    let mut out = Vec::with_capacity(xs.len());
    for x in xs {
        let values = members.iter().filter_map(|m| {
            let i = m.partition_point(|p| p.0 <= x);
            if hold {
                (i > 0 && x <= m[m.len() - 1].0).then(|| m[i - 1].1)
            } else {
                (i > 0 && m[i - 1].0 == x).then(|| m[i - 1].1)
            }
        });
        let (mut n, mut sum, mut min, mut max) = (0usize, 0.0, f64::INFINITY, f64::NEG_INFINITY);
        for v in values {
            n += 1;
            sum += v;
            min = min.min(v);
            max = max.max(v);
        }
        if n > 0 {
            out.push(BandPoint {
                x,
                mean: sum / n as f64,
                min,
                max,
            });
        }
    }
    out
}

/// The traces of a scenario chart: `values` gives each flow's points
/// (absolute time); tested flows (see [`tested_groups`]) become lines (steps
/// with `hold`), every other group a [`Band`] (a group of one flow: its line).
/// When the tested groups hold more than [`MAX_TESTED_LINES`] flows, those
/// groups are banded too. Flows and groups without points are left out.
pub fn group_traces(
    s: &Scenario,
    r: &ScenarioResult,
    hold: bool,
    values: impl Fn(&FlowResult) -> Vec<(f64, f64)>,
) -> Vec<Trace> {
    let tested = tested_groups(s);
    let tested_flows = r.flows.iter().filter(|f| tested.get(f.group) == Some(&true)).count();
    let line = |series: Series| {
        if hold {
            Trace::Steps(series)
        } else {
            Trace::Line(series)
        }
    };
    let mut traces = Vec::new();
    for (g, group) in s.flows.iter().enumerate() {
        let members: Vec<(&FlowResult, Vec<(f64, f64)>)> = r
            .flows
            .iter()
            .filter(|f| f.group == g)
            .map(|f| (f, values(f)))
            .filter(|(_, p)| !p.is_empty())
            .collect();
        let is_tested = tested[g];
        if members.is_empty() {
            continue;
        }
        let one_by_one = (is_tested && tested_flows <= MAX_TESTED_LINES) || members.len() == 1;
        if one_by_one {
            for (f, points) in members {
                let name = if is_tested {
                    format!("flow {}: {}", f.flow, f.cc)
                } else {
                    format!("group {g}: flow {}, {}", f.flow, f.cc)
                };
                traces.push((is_tested, line(Series { name, points })));
            }
        } else {
            let pts: Vec<Vec<(f64, f64)>> = members.iter().map(|(_, p)| p.clone()).collect();
            traces.push((
                is_tested,
                Trace::Band(Band {
                    name: format!("group {g}: {} x {} (mean, min-max)", members.len(), group.cc),
                    points: band(&pts, hold),
                }),
            ));
        }
    }
    // Tested flows first: they take the first colours and lead the legend.
    traces.sort_by_key(|(tested, _)| !tested);
    traces.into_iter().map(|(_, t)| t).collect()
}

/// When `f`'s sending ends, seconds: its group's `stop` (or the scenario's
/// end); for byte-count transfers, the end of the simulation.
fn flow_end(s: &Scenario, r: &ScenarioResult, f: &FlowResult) -> f64 {
    match s.flows.get(f.group) {
        Some(g) if g.bytes.is_none() => g.stop.unwrap_or(s.duration).as_secs_f64(),
        _ => r.simulated_secs,
    }
}

/// The charts `tputctl sim` draws for a run, on the scenario's absolute time
/// axis (from 0 to its duration, or to the end of the simulation when a
/// byte-count flow ran longer). Throughput is each flow's delivered bytes per
/// interval from its start to its end; the window and `k`/`s` come from the
/// controller traces ([`FlowResult::cc_trace`]; the interval records for a
/// flow without one); see [`group_traces`] for what is a line and what a band.
pub fn scenario_charts(s: &Scenario, r: &ScenarioResult) -> ScenarioCharts {
    let interval = s.interval.as_secs_f64();
    let mtu = f64::from(s.mtu);
    let end = r
        .flows
        .iter()
        .map(|f| flow_end(s, r, f))
        .fold(s.duration.as_secs_f64(), f64::max);
    let x_range = Some((0.0, end));
    let time = "time (s)";
    let throughput = group_traces(s, r, false, |f| {
        let stop = flow_end(s, r, f) + 1e-9;
        let mut pts: Vec<(f64, f64)> = r
            .delivered
            .iter()
            .filter(|x| x.flow == f.flow)
            .map(|x| (x.time_ns as f64 / 1e9, x.interval_bytes as f64 * 8.0 / interval / 1e6))
            .filter(|&(t, _)| t > f.start_secs && t <= stop)
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        pts
    });
    let cwnd = group_traces(s, r, true, |f| {
        let stop = flow_end(s, r, f);
        if f.cc_trace.is_empty() {
            f.intervals
                .iter()
                .map(|i| (f.start_secs + i.end_secs, i.cwnd_bytes as f64 / mtu))
                .filter(|&(t, _)| t <= stop)
                .collect()
        } else {
            f.cc_trace
                .iter()
                .filter(|c| c.time_secs <= stop)
                .map(|c| (c.time_secs, c.cwnd_bytes as f64 / mtu))
                .collect()
        }
    });
    let state = |field: fn(&crate::host::CcSample) -> Option<f64>| {
        group_traces(s, r, true, move |f| {
            let stop = flow_end(s, r, f);
            f.cc_trace
                .iter()
                .filter(|c| c.time_secs <= stop)
                .filter_map(|c| Some((c.time_secs, field(&c)?)))
                .collect()
        })
    };
    let k_traces = state(|c| c.k);
    let s_traces = state(|c| c.slot_rtts.map(f64::from));
    let queue = vec![Trace::Line(Series {
        name: "bottleneck queue".into(),
        points: r
            .queue
            .iter()
            .map(|x| (x.time_ns as f64 / 1e9, x.packets as f64))
            .filter(|&(t, _)| t <= end + 1e-9)
            .collect(),
    })];
    let figure = |title: &str, panels: Vec<Panel>| {
        Figure {
            title: title.into(),
            x_label: time.into(),
            x_range,
            panels,
        }
        .to_svg()
    };
    let panel = |y_label: &str, traces: Vec<Trace>| Panel {
        y_label: y_label.into(),
        traces,
    };
    ScenarioCharts {
        throughput: figure("Delivered throughput", vec![panel("Mbit/s", throughput)]),
        cwnd: figure(
            "Congestion window",
            vec![panel(&format!("packets of {} B", s.mtu), cwnd)],
        ),
        k: figure(
            "Guarantee controller: slope k and control slot s",
            vec![panel("k (packets per RTT)", k_traces), panel("s (RTTs)", s_traces)],
        ),
        queue: figure(
            &if r.hops.len() > 1 {
                format!(
                    "Queue of hop {} of {} ({})",
                    r.headline.hop,
                    r.hops.len(),
                    r.headline.why.describe()
                )
            } else {
                "Bottleneck queue".into()
            },
            vec![panel(
                &format!(
                    "packets (sampled every {})",
                    tput_cc::units::format_duration(s.interval)
                ),
                queue,
            )],
        ),
    }
}
