//! Tests of the charts: well-formed SVG, colours, legends, ticks, thinning,
//! bands and a scenario's charts.

use std::time::Duration;

use tput_netsim::{FlowSample, LinkStats, SimTime};

use super::render::{LEGEND_CHARS, LEGEND_LINES, OVERFLOW, bounds, nice_range, nice_ticks, thin, tick_label, wrap};
use super::scenario::BAND_GRID;
use super::*;
use crate::host::CcSample;
use crate::scenario::{FlowGroup, LinkSpec, TopologySpec};
use crate::scenario::{FlowResult, Scenario, ScenarioResult};

fn series(name: &str, points: &[(f64, f64)]) -> Series {
    Series {
        name: name.into(),
        points: points.to_vec(),
    }
}

/// Data lines drawn (width 2).
fn lines(svg: &str) -> usize {
    svg.matches("stroke-width=\"2\" points=").count()
}

/// Legend swatches of lines (width 3).
fn swatches(svg: &str) -> usize {
    svg.matches("stroke-width=\"3\" points=").count()
}

fn hex(c: RGBColor) -> String {
    format!("#{:02X}{:02X}{:02X}", c.0, c.1, c.2)
}

fn well_formed(svg: &str) {
    assert!(svg.starts_with("<svg"), "{svg}");
    assert!(svg.trim_end().ends_with("</svg>"), "{svg}");
    assert!(svg.contains("viewBox=\"0 0 1000 "), "{svg}");
    assert!(!svg.contains("NaN") && !svg.contains("inf"), "{svg}");
    assert!(!svg.contains("could not be drawn"), "{svg}");
    // Every tag opened is closed or self-closing, in order.
    let mut stack = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find('<') {
        rest = &rest[i + 1..];
        let end = rest.find('>').expect("unterminated tag");
        let tag = &rest[..end];
        let name = tag
            .trim_start_matches('/')
            .split(|c: char| c.is_whitespace() || c == '/')
            .next()
            .unwrap();
        if let Some(closing) = tag.strip_prefix('/') {
            assert_eq!(stack.pop(), Some(closing), "mismatched </{closing}>");
        } else if !tag.ends_with('/') {
            stack.push(name);
        }
        rest = &rest[end + 1..];
    }
    assert!(stack.is_empty(), "unclosed {stack:?}");
}

#[test]
fn draws_every_series_with_escaped_text() {
    let s = [
        series("guarantee <20Mbit/s>", &[(0.0, 1.0), (1.0, 19.5), (2.0, 21.0)]),
        series("reno & co", &[(0.0, 50.0), (1.0, 40.0), (2.0, 35.0)]),
        series("empty", &[]),
    ];
    let svg = line_chart("Fig. 4 throughput", "time (s)", "rate <Mbit/s>", &s);
    well_formed(&svg);
    assert!(svg.contains("guarantee &lt;20Mbit/s&gt;"), "{svg}");
    assert!(svg.contains("reno &amp; co"));
    assert!(svg.contains(">empty<") || svg.contains(">\nempty\n<"), "{svg}");
    assert!(svg.contains("Fig. 4 throughput"));
    assert!(svg.contains("rate &lt;Mbit/s&gt;"));
    assert!(svg.contains("time (s)"));
    assert_eq!(lines(&svg), 2);
    assert_eq!(swatches(&svg), 3);
    assert!(svg.contains(&hex(PALETTE[0])) && svg.contains(&hex(PALETTE[1])));
    assert!(!svg.contains("more (grey)"));
    assert_eq!(
        line_chart("Fig. 4 throughput", "time (s)", "rate <Mbit/s>", &s),
        svg,
        "deterministic"
    );
}

#[test]
fn degenerate_inputs_do_not_panic() {
    let cases: Vec<Vec<Series>> = vec![
        vec![],
        vec![series("empty", &[])],
        vec![series("one", &[(3.0, 7.0)])],
        vec![series("zero", &[(0.0, 0.0)])],
        vec![series("flat", &[(1.0, 5.0), (2.0, 5.0), (3.0, 5.0)])],
        vec![series("vertical", &[(2.0, 1.0), (2.0, 3.0)])],
        vec![series("negative flat", &[(0.0, -4.0), (1.0, -4.0)])],
        vec![series(
            "nan",
            &[
                (f64::NAN, 1.0),
                (1.0, f64::INFINITY),
                (2.0, 3.0),
                (f64::NEG_INFINITY, 0.0),
                (3.0, 4.0),
            ],
        )],
        vec![series("only nan", &[(f64::NAN, f64::NAN)])],
        vec![series("huge", &[(0.0, -f64::MAX), (1.0, f64::MAX)])],
        vec![series("tiny", &[(0.0, 1e-300), (1e-300, 2e-300)])],
        vec![series("big", &[(0.0, 1e12), (1.0, 3e12)])],
        vec![series("offset", &[(1e15, 1.0), (1e15 + 1.0, 2.0)])],
        vec![series("bell\u{7}", &[(0.0, 1.0), (1.0, 2.0)])],
    ];
    for s in &cases {
        let svg = line_chart("t", "x", "y", s);
        well_formed(&svg);
        let drawn = s
            .iter()
            .filter(|s| s.points.iter().filter(|(x, y)| x.is_finite() && y.is_finite()).count() > 1)
            .count();
        assert_eq!(lines(&svg), drawn, "{svg}");
        assert_eq!(swatches(&svg), s.len(), "{svg}");
    }
    assert!(
        line_chart("t", "x", "y", &cases[2]).contains("<circle"),
        "a lone point is marked"
    );
    assert!(line_chart("t", "x", "y", &cases[0]).contains("no data"));
    assert!(line_chart("t", "x", "y", &cases[8]).contains("no data"));
    // Steps and bands with degenerate input.
    for pts in [vec![], vec![(1.0, 2.0)], vec![(f64::NAN, 1.0), (1.0, 1.0), (2.0, 1.0)]] {
        let svg = Figure {
            title: "t".into(),
            x_label: "x".into(),
            x_range: Some((0.0, 3.0)),
            panels: vec![
                Panel {
                    y_label: "a".into(),
                    traces: vec![Trace::Steps(series("s", &pts))],
                },
                Panel {
                    y_label: "b".into(),
                    traces: vec![Trace::Band(Band {
                        name: "b".into(),
                        points: pts
                            .iter()
                            .map(|&(x, y)| BandPoint {
                                x,
                                mean: y,
                                min: y,
                                max: f64::NAN,
                            })
                            .collect(),
                    })],
                },
            ],
        }
        .to_svg();
        well_formed(&svg);
    }
}

#[test]
fn the_legend_never_repeats_a_colour() {
    let s: Vec<Series> = (0..15)
        .map(|i| series(&format!("flow {i}"), &[(0.0, i as f64), (1.0, i as f64 + 1.0)]))
        .collect();
    let svg = line_chart("many", "x", "y", &s);
    well_formed(&svg);
    assert_eq!(lines(&svg), 15);
    assert_eq!(swatches(&svg), PALETTE.len() + 1);
    assert!(svg.contains("+5 more (grey)"), "{svg}");
    assert!(svg.contains("flow 9") && !svg.contains("flow 10<") && !svg.contains(">flow 10"));
    for c in PALETTE {
        // Once on its line, once in the legend: no colour serves two names.
        assert_eq!(svg.matches(&format!("stroke=\"{}\"", hex(c))).count(), 2, "{}", hex(c));
    }
    let distinct: std::collections::BTreeSet<String> = PALETTE.iter().map(|&c| hex(c)).collect();
    assert_eq!(distinct.len(), PALETTE.len());
    assert!(!distinct.contains(&hex(OVERFLOW)));
    assert_eq!(svg.matches(&format!("stroke=\"{}\"", hex(OVERFLOW))).count(), 5 + 1);
}

#[test]
fn one_name_one_colour_across_panels() {
    let f = Figure {
        title: "t".into(),
        x_label: "x".into(),
        x_range: None,
        panels: vec![
            Panel {
                y_label: "a".into(),
                traces: vec![Trace::Line(series("g", &[(0.0, 1.0), (1.0, 2.0)]))],
            },
            Panel {
                y_label: "b".into(),
                traces: vec![
                    Trace::Line(series("h", &[(0.0, 1.0), (1.0, 2.0)])),
                    Trace::Line(series("g", &[(0.0, 3.0), (1.0, 2.0)])),
                ],
            },
        ],
    };
    let svg = f.to_svg();
    well_formed(&svg);
    assert_eq!(svg.matches(&format!("stroke=\"{}\"", hex(PALETTE[0]))).count(), 3);
    assert_eq!(svg.matches(&format!("stroke=\"{}\"", hex(PALETTE[1]))).count(), 2);
}

#[test]
fn long_names_wrap_over_three_lines_at_most() {
    assert_eq!(wrap("short"), ["short"]);
    assert_eq!(
        wrap("flow 1: guarantee:target=20Mbit/s,eval=32rtt,slot=16rtt"),
        ["flow 1: guarantee:", "target=20Mbit/s,", "eval=32rtt,slot=16rtt"]
    );
    let w = wrap("group 2: 30 x guarantee:target=20Mbit/s,eval=32rtt,slot=16rtt (mean, min-max)");
    assert_eq!(w.len(), LEGEND_LINES);
    assert_eq!(w[0], "group 2: 30 x guarantee:");
    assert!(w.iter().all(|l| l.chars().count() <= LEGEND_CHARS), "{w:?}");
    assert!(w[2].ends_with('…'));
    assert_eq!(wrap("x".repeat(30).as_str())[0].len(), LEGEND_CHARS);
}

#[test]
fn thinning_keeps_the_extremes_of_each_column() {
    let pts: Vec<(f64, f64)> = (0..10_000).map(|i| (i as f64 / 100.0, (i % 7) as f64)).collect();
    let t = thin(&pts, 0.0, 100.0, 100);
    assert!(t.len() <= 400, "{}", t.len());
    assert_eq!(t.first(), pts.first());
    assert_eq!(t.last(), pts.last());
    assert!(t.windows(2).all(|w| w[0].0 <= w[1].0));
    let (lo, hi) = t
        .iter()
        .fold((f64::MAX, f64::MIN), |(a, b), p| (a.min(p.1), b.max(p.1)));
    assert_eq!((lo, hi), (0.0, 6.0));
    let short = &pts[..10];
    assert_eq!(thin(short, 0.0, 100.0, 100), short);
}

#[test]
fn ticks_are_nice() {
    assert_eq!(nice_ticks(0.0, 97.0, 5), vec![0.0, 20.0, 40.0, 60.0, 80.0, 100.0]);
    assert_eq!(nice_ticks(0.0, 15.0, 5), vec![0.0, 5.0, 10.0, 15.0]);
    assert_eq!(nice_ticks(-3.0, 7.0, 5), vec![-4.0, -2.0, 0.0, 2.0, 4.0, 6.0, 8.0]);
    assert!(nice_ticks(1.0, 1.0, 5).is_empty());
    assert!(nice_ticks(0.0, f64::INFINITY, 5).is_empty());
    assert!(nice_ticks(f64::NAN, 1.0, 5).is_empty());
    assert_eq!(nice_range(0.0, 97.0), (0.0, 100.0));
    assert_eq!(bounds([40.0, 97.0].into_iter(), true), (0.0, 97.0));
    assert_eq!(bounds([5.0, 5.0].into_iter(), false), (4.5, 5.5));
    assert_eq!(bounds(std::iter::empty(), true), (0.0, 1.0));
    assert_eq!(tick_label(&0.6000000000000001), "0.6");
    assert_eq!(tick_label(&-0.0), "0");
    assert_eq!(tick_label(&20.0), "20");
    assert_eq!(tick_label(&1.25e8), "1.25e8");
    assert_eq!(tick_label(&2e-6), "2e-6");
}

#[test]
fn bands_are_the_mean_min_and_max_of_the_members() {
    let a = vec![(1.0, 10.0), (2.0, 20.0), (3.0, 30.0)];
    let b = vec![(1.0, 2.0), (2.0, 4.0), (f64::NAN, 9.0)];
    let c = vec![(2.0, 60.0)];
    let got = band(&[a.clone(), b.clone(), c, Vec::new()], false);
    let p = |x, mean, min, max| BandPoint { x, mean, min, max };
    assert_eq!(
        got,
        [
            p(1.0, 6.0, 2.0, 10.0),
            p(2.0, 28.0, 4.0, 60.0),
            p(3.0, 30.0, 30.0, 30.0)
        ]
    );
    assert!(band(&[], false).is_empty());
    // Held values: a member counts from its first point to its last.
    let steps = band(&[vec![(0.0, 4.0), (10.0, 8.0)], vec![(5.0, 2.0), (10.0, 2.0)]], true);
    assert_eq!(steps.len(), BAND_GRID + 1);
    assert_eq!(steps[0], p(0.0, 4.0, 4.0, 4.0));
    let mid = steps.iter().find(|q| q.x == 6.0).unwrap();
    assert_eq!(*mid, p(6.0, 3.0, 2.0, 4.0));
    assert_eq!(*steps.last().unwrap(), p(10.0, 5.0, 2.0, 8.0));
    assert_eq!(band(&[vec![(3.0, 1.0)]], true), [p(3.0, 1.0, 1.0, 1.0)]);
}

fn flow(flow: u32, group: usize, cc: &str, start_secs: f64, trace: &[(f64, u64)]) -> FlowResult {
    FlowResult {
        cc: cc.into(),
        start_secs,
        cc_trace: trace
            .iter()
            .map(|&(t, cwnd)| CcSample {
                time_secs: t,
                cwnd_bytes: cwnd,
                ssthresh_bytes: None,
                k: cc.starts_with("guarantee").then_some(cwnd as f64 / 1000.0),
                slot_rtts: cc.starts_with("guarantee").then_some(16),
                ..CcSample::default()
            })
            .collect(),
        ..crate::fixtures::empty_flow(flow, group)
    }
}

/// A scenario of 10 s: one guarantee flow with a target, one lone NewReno
/// flow, three NewReno flows from 2 s; and a result made by hand.
fn hand_made() -> (Scenario, ScenarioResult) {
    let link = LinkSpec::new("10Mbit/s".parse().unwrap(), Duration::from_millis(5));
    let mut s = Scenario::new(
        Duration::from_secs(10),
        TopologySpec::dumbbell(link.clone(), link),
        vec![
            FlowGroup::new("guarantee:target=2Mbit/s".parse().unwrap()).with_target("2Mbit/s".parse().unwrap()),
            FlowGroup::new("newreno".parse().unwrap()),
            FlowGroup::new("newreno".parse().unwrap())
                .times(3)
                .starting(Duration::from_secs(2)),
        ],
    );
    s.interval = Duration::from_secs(1);
    let flows = vec![
        flow(1, 0, "guarantee:target=2Mbit/s", 0.0, &[(0.1, 12_000), (5.0, 24_000)]),
        flow(2, 1, "newreno", 0.0, &[(0.1, 12_000)]),
        flow(3, 2, "newreno", 2.0, &[(2.1, 12_000), (4.0, 36_000)]),
        flow(4, 2, "newreno", 2.0, &[(2.1, 24_000)]),
        flow(5, 2, "newreno", 2.0, &[]),
    ];
    // Delivered: flow f moves f * 125 kB per second (f Mbit/s), sampled
    // every second over the whole run (zeros before a start count not).
    let mut delivered = Vec::new();
    for t in 1..=10u64 {
        for f in 1..=5u32 {
            let bytes = if f >= 3 && t <= 2 { 0 } else { u64::from(f) * 125_000 };
            delivered.push(FlowSample::new(SimTime::from_secs(t), f, 0, bytes));
        }
    }
    let r = ScenarioResult {
        name: None,
        flows,
        bottleneck: LinkStats::default(),
        links: Vec::new(),
        queue: Vec::new(),
        delivered,
        trace_hash: 0,
        link_packets: 0,
        events_processed: 0,
        simulated_secs: 15.0,
        aggregates: Vec::new(),
        window: Default::default(),
        hops: Vec::new(),
        headline: Default::default(),
    };
    (s, r)
}

#[test]
fn tested_flows_are_lines_and_other_groups_bands() {
    let (s, r) = hand_made();
    assert_eq!(tested_groups(&s), [true, false, false]);
    let mbps = |f: &FlowResult| -> Vec<(f64, f64)> {
        r.delivered
            .iter()
            .filter(|x| x.flow == f.flow && x.time_ns as f64 / 1e9 > f.start_secs)
            .map(|x| (x.time_ns as f64 / 1e9, x.interval_bytes as f64 * 8.0 / 1e6))
            .collect()
    };
    let t = group_traces(&s, &r, false, mbps);
    let names: Vec<&str> = t.iter().map(Trace::name).collect();
    assert_eq!(
        names,
        [
            "flow 1: guarantee:target=2Mbit/s",
            "group 1: flow 2, newreno",
            "group 2: 3 x newreno (mean, min-max)"
        ]
    );
    assert!(matches!(&t[0], Trace::Line(l) if l.points.len() == 10 && l.points[0] == (1.0, 1.0)));
    let Trace::Band(b) = &t[2] else { panic!("{t:?}") };
    // From 3 s on (the first interval after the start): 3, 4, 5 Mbit/s.
    assert_eq!(b.points.len(), 8);
    assert_eq!(
        b.points[0],
        BandPoint {
            x: 3.0,
            mean: 4.0,
            min: 3.0,
            max: 5.0
        }
    );

    // Without a target the first group is the tested one; a flow without points is left out.
    let mut s2 = s.clone();
    s2.flows[0].target = None;
    assert_eq!(tested_groups(&s2), [true, false, false]);
    let cw = group_traces(&s2, &r, true, |f| {
        f.cc_trace.iter().map(|c| (c.time_secs, c.cwnd_bytes as f64))
    });
    assert!(matches!(&cw[0], Trace::Steps(_)));
    let Trace::Band(b) = &cw[2] else { panic!("{cw:?}") };
    let at = |x: f64| b.points.iter().find(|p| (p.x - x).abs() < 1e-9).copied().unwrap();
    // Flow 3 holds 12 kB until 4 s; flow 4 has one point: it counts only at 2.1 s.
    assert_eq!(
        at(2.1),
        BandPoint {
            x: 2.1,
            mean: 18_000.0,
            min: 12_000.0,
            max: 24_000.0
        }
    );
    assert_eq!(at(4.0).mean, 36_000.0);

    // Too many tested flows: the tested group is banded too.
    let mut s3 = s.clone();
    s3.flows[2].target = s3.flows[0].target;
    s3.flows[2].count = MAX_TESTED_LINES as u32;
    let mut r3 = r.clone();
    for i in 0..(MAX_TESTED_LINES as u32 - 3) {
        r3.flows.push(flow(6 + i, 2, "newreno", 2.0, &[(3.0, 1)]));
    }
    let t3 = group_traces(&s3, &r3, false, mbps);
    assert!(t3.iter().any(|t| matches!(t, Trace::Band(_))));
}

#[test]
fn scenario_charts_draw_on_absolute_time() {
    let (s, r) = hand_made();
    let c = scenario_charts(&s, &r);
    for svg in [&c.throughput, &c.cwnd, &c.k, &c.queue] {
        well_formed(svg);
    }
    assert!(c.throughput.contains("group 2: 3 x newreno"));
    assert!(c.cwnd.contains("packets of 1200 B"));
    assert!(c.k.contains("k (packets per RTT)") && c.k.contains("s (RTTs)"));
    assert!(c.k.contains("flow 1: guarantee:") && c.k.contains("target=2Mbit/s"));
    assert!(!c.k.contains("newreno"), "only guarantee flows have k");
    assert!(c.queue.contains("no data"));
    assert_eq!(scenario_charts(&s, &r), c, "deterministic");
}
