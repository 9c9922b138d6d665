//! Seed 001's tables and sweep figures.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tput_lab::plot::{Figure, Panel, Series, Trace, line_chart};

use super::{Options, PointResult, TCP_SEGMENT, Transport, fmt_period, link_bound_mbps, payload_of};
use crate::repro::{Csv, write_files};
use tput_lab::stats::mean_or_nan as mean;

/// Mean of the points of (study, transport, period, occupancy).
fn cell<'a>(points: &'a [PointResult], study: &str, t: Transport, period: Duration, occ: f64) -> Vec<&'a PointResult> {
    points
        .iter()
        .filter(|r| {
            r.point.study == study
                && r.point.transport == t
                && r.point.period == period
                && (r.point.occupancy - occ).abs() < 1e-9
        })
        .collect()
}

/// Whether throughput `tput` at `occ` has collapsed: below half of what the
/// link itself would let through at that occupancy with the uncut run's
/// efficiency (`full` = the transport's throughput at occupancy 1).
pub fn collapsed(tput: f64, occ: f64, full: f64) -> bool {
    tput < 0.5 * occ * full
}

/// The collapse threshold of one curve: the lowest occupancy of `occs`
/// (ascending) from which on no point has collapsed ([`collapsed`]).
/// `Some(lowest)` if nothing collapsed, `None` if even the highest
/// occupancy below 1 collapsed.
pub fn threshold(curve: &[(f64, f64)], full: f64) -> Option<f64> {
    let mut th = None;
    for &(occ, tput) in curve.iter().rev() {
        if occ >= 1.0 {
            continue;
        }
        if collapsed(tput, occ, full) {
            break;
        }
        th = Some(occ);
    }
    th
}

pub(super) fn curve(
    points: &[PointResult],
    study: &str,
    t: Transport,
    period: Duration,
    occs: &[f64],
) -> Vec<(f64, f64)> {
    occs.iter()
        .filter_map(|&o| {
            let c = cell(points, study, t, period, o);
            (!c.is_empty()).then(|| (o, mean(c.iter().map(|r| r.throughput_mbps))))
        })
        .collect()
}

/// Throughput at occupancy 1 of `t` in `study` (any period: nothing is cut).
pub(super) fn full_rate(points: &[PointResult], study: &str, t: Transport) -> f64 {
    mean(
        points
            .iter()
            .filter(|r| r.point.study == study && r.point.transport == t && r.point.occupancy >= 1.0)
            .map(|r| r.throughput_mbps),
    )
}

/// An occupancy with as many decimals as it needs (0.5 -> "0.50", 0.995 -> "0.995").
fn fmt_occ(x: f64) -> String {
    let two = format!("{x:.2}");
    if (two.parse::<f64>().unwrap_or(x) - x).abs() < 1e-9 {
        two
    } else {
        format!("{x:.3}")
    }
}

pub(super) fn tables(o: &Options, points: &[PointResult]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "Seed 001 (Morokoshi & Yakoh, periodic data-link cut-off vs TCP throughput)\n\
         Set-up: sender -> switch -> receiver, 1 Gbit/s links, 10 us propagation per hop (our choice; the paper gives none),\n\
         switch buffer 1000 packets and sender queue 1000 packets (our choice), 1500-byte IP packets (12 us on the wire),\n\
         the cut in the switch on what it forwards (drop: arrivals discarded, the frame on the wire lost); TCP model min RTO 200 ms,\n\
         initial RTO 1 s, the retransmission timer restarted by a fast retransmit (as ns-2 and Linux), no delayed ACKs; QUIC = quinn-proto. Main sweep {} s runs, {} phase seed(s); throughput = verified payload / run time.\n\
         QUIC timeouts = quinn-proto \"PTO fired\" events (probe timeouts, RFC 9002 6.2), TCP timeouts = RTO expiries.\n",
        o.duration.as_secs_f64(),
        o.seeds.len()
    );
    // Throughput vs occupancy, the main figure as a table.
    let _ = writeln!(
        t,
        "Throughput vs occupancy (Mbit/s, mean over seeds; [link bound] = what whole 1500-byte frames in the connected intervals allow)"
    );
    for &period in &o.periods {
        let mut table = o.occupancies.iter().fold(
            tput_lab::report::Table::new().left(&format!("period {:>6} occ:", fmt_period(period)), 19),
            |table, &occ| table.right(&fmt_occ(occ), 7),
        );
        for &tr in &o.transports {
            let mut cells = vec![format!("  {}", tr.name())];
            for &occ in &o.occupancies {
                let c = cell(points, "drop", tr, period, occ);
                cells.push(format!("{:.1}", mean(c.iter().map(|r| r.throughput_mbps))));
            }
            table.row(cells);
        }
        let bound = o
            .occupancies
            .iter()
            .map(|&occ| format!("{:.1}", link_bound_mbps(period, occ, TCP_SEGMENT)));
        table.row(std::iter::once("  [link bound TCP]".to_string()).chain(bound));
        t += &table.text();
    }
    // Threshold table beside the paper's claims.
    let _ = writeln!(
        t,
        "\nCollapse threshold (lowest occupancy from which on throughput >= half of occupancy x the uncut throughput)\n\
         Paper: for every period throughput collapses below a threshold; the threshold is lowest (most tolerant) at 1 ms."
    );
    let _ = write!(t, "{:<17}", "transport");
    for &period in &o.periods {
        let _ = write!(t, " | {:>14}", fmt_period(period));
    }
    let _ = writeln!(t, " | most tolerant");
    for &tr in &o.transports {
        let full = full_rate(points, "drop", tr);
        let _ = write!(t, "{:<17}", tr.name());
        let mut best: Option<(f64, Vec<Duration>)> = None;
        for &period in &o.periods {
            let th = threshold(&curve(points, "drop", tr, period, &o.occupancies), full);
            let link_th = threshold(
                &o.occupancies
                    .iter()
                    .map(|&x| (x, link_bound_mbps(period, x, payload_of(tr))))
                    .collect::<Vec<_>>(),
                link_bound_mbps(period, 1.0, payload_of(tr)),
            );
            let tag = if th.is_some() && th == link_th || th.is_none() && link_th.is_none() {
                " L"
            } else {
                ""
            };
            let s = match th {
                None => "none".to_string(),
                Some(x) => fmt_occ(x),
            };
            let _ = write!(t, " | {:>14}", format!("{s}{tag}"));
            match (th, &mut best) {
                (Some(x), Some((b, ps))) if (x - *b).abs() < 1e-9 => ps.push(period),
                (Some(x), Some((b, _))) if x > *b => {}
                (Some(x), _) => best = Some((x, vec![period])),
                (None, _) => {}
            }
        }
        let _ = writeln!(
            t,
            " | {}",
            best.map_or("-".into(), |(x, ps)| {
                let names: Vec<String> = ps.iter().map(|p| fmt_period(*p)).collect();
                format!("{} ({})", names.join(" = "), fmt_occ(x))
            })
        );
    }
    let _ = writeln!(
        t,
        "(none = collapsed at every occupancy < 1 in the grid; L = the link's own bound has the same threshold: a link limit,\n\
         not the transport's; at 10 us a 12 us frame never fits a connected interval, so nothing passes below occupancy 1.)"
    );
    // Mechanism: timeouts and idle gaps in the main sweep.
    let _ = writeln!(
        t,
        "\nTimeouts and the longest idle gap (main sweep, mean over seeds: timeouts / max consecutive / longest idle s)"
    );
    for &period in &o.periods {
        let _ = writeln!(t, "period {}", fmt_period(period));
        for &tr in &o.transports {
            let _ = write!(t, "  {:<14}", tr.name());
            for &occ in &o.occupancies {
                let c = cell(points, "drop", tr, period, occ);
                if c.is_empty() {
                    continue;
                }
                let _ = write!(
                    t,
                    " {}:{:.0}/{:.0}/{:.2}",
                    fmt_occ(occ),
                    mean(c.iter().map(|r| f64::from(r.timeouts))),
                    mean(c.iter().map(|r| f64::from(r.max_consecutive))),
                    mean(c.iter().map(|r| r.longest_idle_secs))
                );
            }
            let _ = writeln!(t);
        }
    }
    let fails: Vec<_> = points.iter().filter(|r| !r.handshake_ok).collect();
    let _ = writeln!(
        t,
        "QUIC runs whose handshake never completed (counted as 0 Mbit/s): {}",
        fails.len()
    );
    // Remedies and sensitivity.
    let studies: Vec<&str> = {
        let mut s: Vec<&str> = points.iter().map(|r| r.point.study).filter(|s| *s != "drop").collect();
        s.dedup();
        let mut seen = Vec::new();
        for x in s {
            if !seen.contains(&x) {
                seen.push(x);
            }
        }
        seen
    };
    if !studies.is_empty() {
        let _ = writeln!(
            t,
            "\nRemedies and sensitivity ({} s runs, {} seed(s)): Mbit/s | switch queue high-water (packets) | sender queue high-water | added delay ms",
            o.side_duration.as_secs_f64(),
            o.side_seeds.len()
        );
        let _ = writeln!(
            t,
            "(drop (short) = the paper's drop mode at this run length; delay x10 = 100 us per hop; buffer /10 = switch buffer 100 packets;\n sender link = the cut on the sender's own link instead of the switch)"
        );
        for &period in &o.periods {
            let _ = writeln!(t, "period {}", fmt_period(period));
            for &tr in &o.transports {
                for study in &studies {
                    let _ = write!(t, "  {:<13} {:<16}", tr.name(), study);
                    for &occ in &o.side_occupancies {
                        let c = cell(points, study, tr, period, occ);
                        if c.is_empty() {
                            continue;
                        }
                        let _ = write!(
                            t,
                            " {occ:.2}: {:>6.1} |{:>4.0} |{:>4.0} |{:>5.2}",
                            mean(c.iter().map(|r| r.throughput_mbps)),
                            mean(c.iter().map(|r| r.switch_hw_packets as f64)),
                            mean(c.iter().map(|r| r.sender_hw_packets as f64)),
                            mean(c.iter().map(|r| r.added_delay_ms)),
                        );
                    }
                    let _ = writeln!(t);
                }
            }
        }
    }
    t
}

pub(super) fn write_sweep(o: &Options, out: &Path, points: &[PointResult]) -> Result<Vec<PathBuf>, String> {
    let mut csv = Csv::new(&[
        "study",
        "transport",
        "period_us",
        "occupancy",
        "seed",
        "mode",
        "placement",
        "delay_us",
        "switch_queue",
        "duration_s",
        "throughput_mbps",
        "link_bound_mbps",
        "handshake_ok",
        "timeouts",
        "max_consecutive_timeouts",
        "longest_idle_s",
        "switch_hw_packets",
        "sender_hw_packets",
        "added_delay_ms",
        "cut_losses",
    ]);
    for r in points {
        let p = &r.point;
        crate::csv_row!(
            csv,
            p.study,
            p.transport.name(),
            p.period.as_micros(),
            p.occupancy,
            p.seed,
            format!("{:?}", p.mode),
            format!("{:?}", p.placement),
            p.delay.as_micros(),
            p.switch_queue,
            p.duration.as_secs_f64(),
            format!("{:.3}", r.throughput_mbps),
            format!("{:.3}", link_bound_mbps(p.period, p.occupancy, payload_of(p.transport))),
            r.handshake_ok,
            r.timeouts,
            r.max_consecutive,
            format!("{:.3}", r.longest_idle_secs),
            r.switch_hw_packets,
            r.sender_hw_packets,
            format!("{:.4}", r.added_delay_ms),
            r.cut_losses
        );
    }
    let mut files: Vec<(String, String)> = vec![("seed001_points.csv".into(), csv.finish())];
    // One chart per transport: throughput vs occupancy, a line per period.
    for &tr in &o.transports {
        let series: Vec<Series> = o
            .periods
            .iter()
            .map(|&period| Series {
                name: format!("period {}", fmt_period(period)),
                points: curve(points, "drop", tr, period, &o.occupancies),
            })
            .collect();
        files.push((
            format!("throughput_vs_occupancy_{}.svg", slug(tr.name())),
            line_chart(
                &format!("Seed 001: {} throughput vs occupancy (drop in the switch)", tr.name()),
                "occupancy (connected share of each period)",
                "throughput (Mbit/s)",
                &series,
            ),
        ));
        // Remedies at each period (side sweep).
        let studies = [
            "drop (short)",
            "hold",
            "pause",
            "hold_abort",
            "delay x10",
            "buffer /10",
            "buffer /10 hold",
            "sender link",
        ];
        let panels: Vec<Panel> = o
            .periods
            .iter()
            .map(|&period| Panel {
                y_label: format!("Mbit/s, period {}", fmt_period(period)),
                traces: studies
                    .iter()
                    .map(|s| {
                        Trace::Line(Series {
                            name: (*s).into(),
                            points: curve(points, s, tr, period, &o.side_occupancies),
                        })
                    })
                    .filter(|tr| matches!(tr, Trace::Line(s) if !s.points.is_empty()))
                    .collect(),
            })
            .collect();
        if panels.iter().any(|p| !p.traces.is_empty()) {
            files.push((
                format!("remedies_{}.svg", slug(tr.name())),
                Figure {
                    title: format!("Seed 001: {} — remedies and sensitivity", tr.name()),
                    x_label: "occupancy".into(),
                    x_range: Some((0.45, 1.0)),
                    panels,
                }
                .to_svg(),
            ));
        }
    }
    write_files(out, &files)
}

pub(super) fn slug(name: &str) -> String {
    name.to_lowercase().replace(' ', "_")
}
