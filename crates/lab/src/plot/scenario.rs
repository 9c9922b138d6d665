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
        out.extend(band_point(x, values));
    }
    out
}

/// The mean, lowest and highest of the members' `values` at `x`; none
/// when no member has a value there.
fn band_point(x: f64, values: impl IntoIterator<Item = f64>) -> Option<BandPoint> {
    let (mut n, mut sum, mut min, mut max) = (0usize, 0.0, f64::INFINITY, f64::NEG_INFINITY);
    for v in values {
        n += 1;
        sum += v;
        min = min.min(v);
        max = max.max(v);
    }
    (n > 0).then(|| BandPoint {
        x,
        mean: sum / n as f64,
        min,
        max,
    })
}

/// Columns a step line is thinned to as its points are read: each keeps
/// its first, lowest, highest and last point, so the drawn line is the same
/// at pixel scale (the renderer thins again to its own columns).
const LINE_COLUMNS: usize = 2000;

/// What one pass over a member's points found.
#[derive(Debug, Clone, Copy)]
struct Span {
    /// Points, finite or not.
    all: usize,
    /// Finite points.
    finite: usize,
    /// The first and last finite x.
    first: f64,
    last: f64,
    /// Whether the finite points come in x order.
    ordered: bool,
}

impl Span {
    fn of(points: impl IntoIterator<Item = (f64, f64)>) -> Self {
        let mut s = Span {
            all: 0,
            finite: 0,
            first: f64::NAN,
            last: f64::NAN,
            ordered: true,
        };
        for (x, y) in points {
            s.all += 1;
            if !(x.is_finite() && y.is_finite()) {
                continue;
            }
            if s.finite == 0 {
                s.first = x;
            } else if x < s.last {
                s.ordered = false;
            }
            s.last = x;
            s.finite += 1;
        }
        s
    }
}

/// A column's first, lowest, highest and last point, each with its index.
type ColumnKeep = [(usize, (f64, f64)); 4];

/// `points` (finite, in x order, `span` of them) thinned to the first,
/// lowest, highest and last point of each of [`LINE_COLUMNS`] columns of
/// their x range, as they are read; fewer than four points a column are
/// kept as they are.
fn thin_steps(points: impl IntoIterator<Item = (f64, f64)>, span: &Span) -> Vec<(f64, f64)> {
    let finite = points.into_iter().filter(|(x, y)| x.is_finite() && y.is_finite());
    if span.finite <= 4 * LINE_COLUMNS || span.last <= span.first {
        return finite.collect();
    }
    let (x0, w) = (span.first, span.last - span.first);
    let column = |x: f64| {
        ((x - x0) / w * LINE_COLUMNS as f64)
            .floor()
            .clamp(0.0, LINE_COLUMNS as f64) as usize
    };
    let mut out = Vec::with_capacity(4 * LINE_COLUMNS + 4);
    // The current column's first, lowest, highest and last point, by index.
    let mut col: Option<(usize, ColumnKeep)> = None;
    let flush = |out: &mut Vec<(f64, f64)>, keep: ColumnKeep| {
        let mut keep = keep;
        keep.sort_unstable_by_key(|k| k.0);
        let mut last = usize::MAX;
        for (i, p) in keep {
            if i != last {
                out.push(p);
                last = i;
            }
        }
    };
    for (i, p) in finite.enumerate() {
        let c = column(p.0);
        match &mut col {
            Some((cur, keep)) if *cur == c => {
                if p.1 < keep[1].1.1 {
                    keep[1] = (i, p);
                }
                if p.1 > keep[2].1.1 {
                    keep[2] = (i, p);
                }
                keep[3] = (i, p);
            }
            _ => {
                if let Some((_, keep)) = col.take() {
                    flush(&mut out, keep);
                }
                col = Some((c, [(i, p); 4]));
            }
        }
    }
    if let Some((_, keep)) = col {
        flush(&mut out, keep);
    }
    out
}

/// [`band`] with `hold` over members read one at a time: each member's
/// value at every x position of the grid is taken as its points stream by,
/// so no member's points are held. The same points as [`band`] gives
/// (`spans` are the members' [`Span`]s, all ordered and non-empty).
fn band_held<I: IntoIterator<Item = (f64, f64)>>(members: &[(Span, &dyn Fn() -> I)]) -> Vec<BandPoint> {
    let lo = members.iter().map(|(s, _)| s.first).fold(f64::INFINITY, f64::min);
    let hi = members.iter().map(|(s, _)| s.last).fold(f64::NEG_INFINITY, f64::max);
    if lo.partial_cmp(&hi).is_none_or(|o| o == std::cmp::Ordering::Greater) {
        return Vec::new();
    }
    let xs: Vec<f64> = if hi == lo {
        vec![lo]
    } else {
        (0..=BAND_GRID)
            .map(|i| lo + (hi - lo) * i as f64 / BAND_GRID as f64)
            .collect()
    };
    // Each member's value at each x (None outside its first..=last point).
    let values: Vec<Vec<Option<f64>>> = members
        .iter()
        .map(|(span, points)| {
            let mut v = vec![None; xs.len()];
            let (mut j, mut cur) = (0, None);
            for (x, y) in points().into_iter().filter(|(x, y)| x.is_finite() && y.is_finite()) {
                while j < xs.len() && xs[j] < x {
                    v[j] = cur;
                    j += 1;
                }
                cur = Some(y);
            }
            while j < xs.len() && xs[j] <= span.last {
                v[j] = cur;
                j += 1;
            }
            v
        })
        .collect();
    let mut out = Vec::with_capacity(xs.len());
    for (i, &x) in xs.iter().enumerate() {
        out.extend(band_point(x, values.iter().filter_map(|m| m[i])));
    }
    out
}

/// The traces of a scenario chart: `values` gives each flow's points
/// (absolute time); tested flows (see [`tested_groups`]) become lines (steps
/// with `hold`), every other group a [`Band`] (a group of one flow: its line).
/// When the tested groups hold more than [`MAX_TESTED_LINES`] flows, those
/// groups are banded too. Flows and groups without points are left out.
///
/// With `hold`, the points are read as they come (`values` is called more
/// than once per flow): a step line keeps the first, lowest, highest and
/// last of its points in each of 2000 columns of its time span (a plot has
/// fewer pixels), and a band is computed member by member (the points of
/// [`band`]), so a long trace is never held whole.
pub fn group_traces<'a, I, F>(s: &Scenario, r: &'a ScenarioResult, hold: bool, values: F) -> Vec<Trace>
where
    I: IntoIterator<Item = (f64, f64)>,
    F: Fn(&'a FlowResult) -> I,
{
    let values = &values;
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
        let members: Vec<(&'a FlowResult, Span)> = r
            .flows
            .iter()
            .filter(|f| f.group == g)
            .map(|f| (f, Span::of(values(f))))
            .filter(|(_, span)| span.all > 0)
            .collect();
        let is_tested = tested[g];
        if members.is_empty() {
            continue;
        }
        let one_by_one = (is_tested && tested_flows <= MAX_TESTED_LINES) || members.len() == 1;
        if one_by_one {
            for (f, span) in members {
                let name = if is_tested {
                    format!("flow {}: {}", f.flow, f.cc)
                } else {
                    format!("group {g}: flow {}, {}", f.flow, f.cc)
                };
                let points = if hold && span.ordered {
                    thin_steps(values(f), &span)
                } else {
                    values(f).into_iter().collect()
                };
                traces.push((is_tested, line(Series { name, points })));
            }
        } else {
            let name = format!("group {g}: {} x {} (mean, min-max)", members.len(), group.cc);
            let points = if hold && members.iter().all(|(_, s)| s.ordered) {
                let readers: Vec<Box<dyn Fn() -> I + '_>> = members
                    .iter()
                    .map(|&(f, _)| Box::new(move || values(f)) as Box<dyn Fn() -> I + '_>)
                    .collect();
                let held: Vec<(Span, &dyn Fn() -> I)> = members
                    .iter()
                    .zip(&readers)
                    .filter(|((_, s), _)| s.finite > 0)
                    .map(|((_, s), r)| (*s, r.as_ref()))
                    .collect();
                band_held(&held)
            } else {
                let pts: Vec<Vec<(f64, f64)>> = members.iter().map(|(f, _)| values(f).into_iter().collect()).collect();
                band(&pts, hold)
            };
            traces.push((is_tested, Trace::Band(Band { name, points })));
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
    // The controller traces are read as they are drawn (see `group_traces`),
    // never decoded whole.
    let cwnd = group_traces(s, r, true, |f| -> Box<dyn Iterator<Item = (f64, f64)> + '_> {
        let stop = flow_end(s, r, f);
        if f.cc_trace.is_empty() {
            Box::new(
                f.intervals
                    .iter()
                    .map(move |i| (f.start_secs + i.end_secs, i.cwnd_bytes as f64 / mtu))
                    .filter(move |&(t, _)| t <= stop),
            )
        } else {
            Box::new(
                f.cc_trace
                    .iter()
                    .filter(move |c| c.time_secs <= stop)
                    .map(move |c| (c.time_secs, c.cwnd_bytes as f64 / mtu)),
            )
        }
    });
    let state = |field: fn(&crate::host::CcSample) -> Option<f64>| {
        group_traces(s, r, true, move |f| {
            let stop = flow_end(s, r, f);
            f.cc_trace
                .iter()
                .filter(move |c| c.time_secs <= stop)
                .filter_map(move |c| Some((c.time_secs, field(&c)?)))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A sawtooth with repeated x values, as a controller trace has.
    fn saw(n: usize, phase: usize, step: f64) -> Vec<(f64, f64)> {
        (0..n)
            .map(|i| (((i + phase) / 3) as f64 * step, ((i * 7 + phase) % 23) as f64))
            .collect()
    }

    #[test]
    fn a_held_band_read_member_by_member_is_the_band() {
        let members = [
            saw(5000, 0, 0.01),
            saw(3000, 5, 0.013),
            saw(1, 0, 1.0),
            saw(4000, 2, 0.002),
        ];
        let want = band(&members, true);
        let readers: Vec<_> = members.iter().map(|m| move || m.iter().copied()).collect();
        let held: Vec<(Span, &dyn Fn() -> _)> = readers.iter().map(|r| (Span::of(r()), r as &dyn Fn() -> _)).collect();
        let got = band_held(&held);
        assert_eq!(got.len(), BAND_GRID + 1);
        // Bit for bit.
        let bits = |b: &[BandPoint]| -> Vec<[u64; 4]> {
            b.iter()
                .map(|p| [p.x, p.mean, p.min, p.max].map(f64::to_bits))
                .collect()
        };
        assert_eq!(bits(&got), bits(&want));
    }

    #[test]
    fn a_step_line_is_thinned_to_its_columns_extremes() {
        let short = saw(100, 0, 0.01);
        assert_eq!(
            thin_steps(short.iter().copied(), &Span::of(short.iter().copied())),
            short
        );
        let long = saw(100_000, 0, 0.001);
        let span = Span::of(long.iter().copied());
        let thin = thin_steps(long.iter().copied(), &span);
        assert!(thin.len() <= 4 * LINE_COLUMNS + 4, "{}", thin.len());
        assert_eq!(thin.first(), long.first());
        assert_eq!(thin.last(), long.last());
        // Every column's lowest and highest value is still there.
        let column = |x: f64| ((x - span.first) / (span.last - span.first) * LINE_COLUMNS as f64).floor() as usize;
        let extremes = |pts: &[(f64, f64)]| {
            let mut m = std::collections::BTreeMap::new();
            for &(x, y) in pts {
                let e = m.entry(column(x)).or_insert((f64::INFINITY, f64::NEG_INFINITY));
                *e = (e.0.min(y), e.1.max(y));
            }
            m.into_iter()
                .map(|(c, (lo, hi))| (c, lo.to_bits(), hi.to_bits()))
                .collect::<Vec<_>>()
        };
        assert_eq!(extremes(&thin), extremes(&long));
        // In order, and a subset of the input.
        assert!(thin.windows(2).all(|w| w[0].0 <= w[1].0));
    }
}
