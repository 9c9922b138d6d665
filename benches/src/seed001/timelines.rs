//! Seed 001's mechanism timelines: simulations with controller traces, run
//! where the tables are built.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tput_lab::plot::{Figure, Panel, Series, Trace};

use super::tables::{curve, full_rate, slug, threshold};
use super::{IP_PACKET, Options, PointResult, measure};
use crate::repro::{Csv, write_files};
use crate::seed001_timeouts::Timeout;

/// The mechanism: for the paper's point (1 ms, 89 %) and for each
/// transport's collapse point at 1 ms (the highest grid occupancy below its
/// threshold), a timeline of delivered Mbit/s per 10 ms, cwnd and the
/// timeouts with their consecutive count.
pub(super) fn timelines(
    o: &Options,
    out: &Path,
    points: &[PointResult],
    mut progress: impl FnMut(&str),
) -> Result<(String, Vec<PathBuf>), String> {
    let period = Duration::from_millis(1);
    let mut text = String::from(
        "\nMechanism timelines (period 1 ms, seed 1): timeouts (max consecutive), the RTO/PTO gaps between consecutive ones\n",
    );
    let mut files = Vec::new();
    for &tr in &o.transports {
        let full = full_rate(points, "drop", tr);
        let th = threshold(&curve(points, "drop", tr, period, &o.occupancies), full);
        let mut occs = vec![0.89];
        let below = match th {
            Some(x) => o
                .occupancies
                .iter()
                .copied()
                .filter(|&y| y < x)
                .fold(f64::NAN, f64::max),
            None => o
                .occupancies
                .iter()
                .copied()
                .filter(|&y| y < 1.0)
                .fold(f64::NAN, f64::max),
        };
        if below.is_finite() && (below - 0.89).abs() > 1e-9 {
            occs.push(below);
        }
        for occ in occs {
            let mut p = o.base("timeline", tr, period, occ, 1);
            p.duration = o.timeline_duration;
            let (res, r, touts) = measure(&p)?;
            progress(&format!("timeline {}: {:.1} CPU-s", p.label(), res.cpu_secs));
            let f = &r.flows[0];
            let delivered = Series {
                name: "delivered Mbit/s (10 ms)".into(),
                points: f
                    .intervals
                    .iter()
                    .map(|iv| (f.start_secs + iv.end_secs, iv.goodput_bps / 1e6))
                    .collect(),
            };
            let cwnd = Series {
                name: "cwnd (packets)".into(),
                points: f
                    .cc_trace
                    .iter()
                    .map(|c| (c.time_secs, c.cwnd_bytes as f64 / IP_PACKET as f64))
                    .collect(),
            };
            let consecutive = Series {
                name: "count of the latest timeout's run".into(),
                points: timeout_steps(&touts, p.duration.as_secs_f64()),
            };
            let cumulative = Series {
                name: "timeouts so far".into(),
                points: std::iter::once((0.0, 0.0))
                    .chain(touts.iter().enumerate().map(|(i, x)| (x.at_secs, (i + 1) as f64)))
                    .chain(std::iter::once((p.duration.as_secs_f64(), touts.len() as f64)))
                    .collect(),
            };
            let gaps: Vec<String> = touts
                .windows(2)
                .filter(|w| w[1].consecutive == w[0].consecutive + 1)
                .take(8)
                .map(|w| format!("{:.3}", w[1].at_secs - w[0].at_secs))
                .collect();
            let _ = writeln!(
                text,
                "  {:<13} occupancy {:.2}: {:.1} Mbit/s, {} timeouts (max {} in a row), longest idle {:.2} s; gaps between consecutive timeouts (s): [{}]",
                tr.name(),
                occ,
                res.throughput_mbps,
                res.timeouts,
                res.max_consecutive,
                res.longest_idle_secs,
                gaps.join(", ")
            );
            let name = format!("timeline_{}_{:.0}.svg", slug(tr.name()), occ * 100.0);
            let svg = Figure {
                title: format!("Seed 001: {}, 1 ms period, {:.0} % connected", tr.name(), occ * 100.0),
                x_label: "time (s)".into(),
                x_range: Some((0.0, p.duration.as_secs_f64())),
                panels: vec![
                    Panel {
                        y_label: "delivered (Mbit/s)".into(),
                        traces: vec![Trace::Line(delivered)],
                    },
                    Panel {
                        y_label: "cwnd (1500-byte packets)".into(),
                        traces: vec![Trace::Steps(cwnd)],
                    },
                    Panel {
                        y_label: if tr.is_tcp() { "RTOs".into() } else { "PTOs".into() },
                        traces: vec![Trace::Steps(consecutive), Trace::Steps(cumulative)],
                    },
                ],
            }
            .to_svg();
            let mut csv = Csv::new(&["time_s", "event", "value"]);
            for iv in &f.intervals {
                crate::csv_row!(csv, f.start_secs + iv.end_secs, "delivered_mbps", iv.goodput_bps / 1e6);
            }
            for c in &f.cc_trace {
                crate::csv_row!(csv, c.time_secs, "cwnd_bytes", c.cwnd_bytes);
            }
            for x in &touts {
                crate::csv_row!(csv, x.at_secs, "timeout_consecutive", x.consecutive);
            }
            let csv_name = name.replace(".svg", ".csv");
            files.extend(write_files(out, &[(name, svg), (csv_name, csv.finish())])?);
        }
    }
    Ok((text, files))
}

/// The consecutive-timeout count as steps: each timeout sets it to its own
/// count, which holds until the next timeout (a run of timeouts ends where
/// the next starts again at 1).
fn timeout_steps(t: &[Timeout], end: f64) -> Vec<(f64, f64)> {
    let mut v = vec![(0.0, 0.0)];
    v.extend(t.iter().map(|x| (x.at_secs, f64::from(x.consecutive))));
    v.push((end, v.last().map_or(0.0, |p| p.1)));
    v
}
