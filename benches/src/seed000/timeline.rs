//! Seed 000's Fig. 4/5: one guarantee flow against 1 -> 5 -> 30 NewReno flows.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tput_cc::AlgorithmState;
use tput_lab::plot::{Series, line_chart};
use tput_lab::scenario::{FlowResult, Scenario, ScenarioResult, run};

use super::{BOTTLENECK_BPS, MTU, check_errors, guarantee, mean, quic_reno, scenario, tested};
use crate::repro::{Csv, write_files};

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
}

/// Reno flows join at these instants (Fig. 4/5): 1 at 0 s, 4 more at 5 s, 25 more at 10 s.
pub(super) const PHASES: [(u32, u64); 3] = [(1, 0), (4, 5), (25, 10)];

/// The Fig. 4/5 scenario: `duration` long, with the paper's phases at
/// 0/5/10 s, 100 ms intervals.
pub(super) fn timeline_scenario(duration: Duration, seed: u64) -> Scenario {
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
    let r = run(&s, |_| {}).map_err(|e| e.to_string())?;
    check_errors(&r)?;
    Ok(timeline_of(&s, &r))
}

/// The timeline from the run `r` of `s` (a [`timeline_scenario`]).
pub(super) fn timeline_of(s: &Scenario, r: &ScenarioResult) -> Timeline {
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
    Timeline { samples, slots, phases }
}

impl Timeline {
    pub(super) fn table(&self) -> String {
        let mut t = String::new();
        let _ = writeln!(
            t,
            "Fig. 4/5: 1 guarantee flow (target 20% = 20 Mbit/s) vs NewReno 1 -> 5 -> 30 flows at 0/5/10 s\n\
             (Mbit/s: QUIC packet bytes delivered to the receivers per phase; success over the guarantee flow's\n\
             complete 32-RTT slots in the phase, judged on verified payload)"
        );
        let mut table = tput_lab::report::Table::new()
            .right("phase", 9)
            .right("reno", 6)
            .right("guarantee Mbit/s", 16)
            .right("Reno Mbit/s/flow", 18)
            .right("success", 8)
            .right("mean k", 7)
            .right("s at end", 8);
        for (i, p) in self.phases.iter().enumerate() {
            let reno: u32 = PHASES.iter().take(i + 1).map(|x| x.0).sum();
            table.row([
                format!("{:.0}-{:.0} s", p.0, p.1),
                reno.to_string(),
                format!("{:.1}", p.2),
                format!("{:.1}", p.3),
                format!("{:.2}", p.4),
                format!("{:.2}", p.5),
                p.6.to_string(),
            ]);
        }
        t += &table.text();
        let _ = writeln!(
            t,
            "Paper: with 1 Reno flow k stays at k_min = 1 (Reno-like, fair) and the target is met; with 5 the\n\
             guarantee flow grows faster and pushes Reno down; with 30, s shrinks from ~11 s on and the target is\n\
             \"almost\" met.\n"
        );
        t
    }

    pub(super) fn write(&self, dir: &Path) -> Result<Vec<PathBuf>, String> {
        let mut csv = Csv::new(&[
            "time_secs",
            "guarantee_cwnd_packets",
            "reno_cwnd_packets",
            "k",
            "slot_rtts",
        ]);
        for s in &self.samples {
            csv.row(&[s.t, s.guarantee_cwnd, s.reno_cwnd, s.k, s.s]);
        }
        let mut slots = Csv::new(&["start_secs", "length_secs", "throughput_ratio"]);
        for s in &self.slots {
            slots.row(&[s.0, s.1, s.2]);
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
            ("fig4_timeline.csv", csv.finish()),
            ("fig4_slots.csv", slots.finish()),
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
