//! Seed 000's Fig. 6/7 tables, their CSV and their plots.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use tput_lab::plot::{Series, line_chart};
use tput_lab::report::Table;

use super::{FIG6_TCP_CELLS, FIG6_VARIANTS, Options, PointResult, mean};
use crate::csv_row;
use crate::repro::{Csv, write_files};

/// Mean, min and max of `field` over the seeds of one (figure, variant, target, n).
fn stats(
    points: &[PointResult],
    key: (&str, &str, u32, u32),
    field: fn(&PointResult) -> f64,
) -> Option<(f64, f64, f64)> {
    let v: Vec<f64> = points
        .iter()
        .filter(|p| (p.figure, p.variant, p.target_pct, p.n_reno) == key)
        .map(field)
        .collect();
    tput_lab::stats::mean_min_max(&v)
}

fn cell(s: Option<(f64, f64, f64)>) -> String {
    match s {
        Some((m, lo, hi)) if (hi - lo).abs() < 5e-4 => format!("{m:.2}"),
        Some((m, lo, hi)) => format!("{m:.2} [{lo:.2},{hi:.2}]"),
        None => "-".into(),
    }
}

/// Columns of one table: (header, figure, variant, field).
type Column = (&'static str, &'static str, &'static str, fn(&PointResult) -> f64);

fn success(p: &PointResult) -> f64 {
    p.success
}
fn aggregate_success(p: &PointResult) -> f64 {
    p.aggregate_success
}
fn tested_mbps(p: &PointResult) -> f64 {
    p.tested_mbps
}
fn idle(p: &PointResult) -> f64 {
    p.idle
}

fn table(o: &Options, points: &[PointResult], title: &str, pct: u32, columns: &[Column]) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "{title}");
    let mut table = columns
        .iter()
        .fold(Table::new().right("n_reno", 6), |table, c| table.right(c.0, 22));
    for &n in &o.reno_counts {
        let cells = columns
            .iter()
            .map(|&(_, fig, variant, field)| cell(stats(points, (fig, variant, pct, n), field)));
        table.row(std::iter::once(n.to_string()).chain(cells));
    }
    t += &table.text();
    t
}

pub(super) fn tables(o: &Options, points: &[PointResult]) -> String {
    let mut t = String::new();
    let seeds = o.seeds.len();
    let secs = o.point_duration.as_secs_f64();
    let note = format!("mean [min,max] over {seeds} seed(s), {secs:.0} s per point");
    let has = |fig: &str| points.iter().any(|p| p.figure == fig);
    for &pct in &o.targets_pct {
        if has("fig6") {
            t.push_str(&table(
                o,
                points,
                &format!("Fig. 6, target {pct}%: success ratio (32-RTT slots), {note}"),
                pct,
                &[
                    ("guarantee", "fig6", "guarantee", success),
                    ("newreno", "fig6", "newreno", success),
                    ("fixed", "fig6", "fixed", success),
                    ("guarantee Mbit/s", "fig6", "guarantee", tested_mbps),
                ],
            ));
            let _ = writeln!(
                t,
                "Paper: {}\n",
                if pct == 10 {
                    "at 10% the controller holds a high fraction even with many Reno flows and beats both Reno and the fixed window"
                } else {
                    "at 20% the controller's success drops sharply from ~15 Reno flows on (a limit of the method)"
                }
            );
        }
        for (fig, variant, _, title, column, lost_what, _) in FIG6_VARIANTS {
            if !has(fig) {
                continue;
            }
            t.push_str(&table(
                o,
                points,
                &format!("{title}, target {pct}%: success ratio, {note}"),
                pct,
                &[
                    ("default (oracle A)", "fig6", "guarantee", success),
                    (column, fig, variant, success),
                    ("Mbit/s", fig, variant, tested_mbps),
                ],
            ));
            let lost: Vec<f64> = o
                .reno_counts
                .iter()
                .filter_map(|&n| {
                    let a = stats(points, ("fig6", "guarantee", pct, n), success)?.0;
                    let b = stats(points, (fig, variant, pct, n), success)?.0;
                    Some(a - b)
                })
                .collect();
            if lost.is_empty() {
                t.push('\n');
            } else {
                let _ = writeln!(
                    t,
                    "{lost_what}: mean {:.3} over the x axis (max {:.3}, min {:.3})\n",
                    mean(&lost),
                    lost.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                    lost.iter().copied().fold(f64::INFINITY, f64::min)
                );
            }
        }
        if has("fig6-tcp") {
            let columns: Vec<Column> = FIG6_TCP_CELLS
                .iter()
                .map(|&(v, ..)| -> Column { (v, "fig6-tcp", v, success) })
                .collect();
            t.push_str(&table(
                o,
                points,
                &format!(
                    "Fig. 6 over TCP, target {pct}%: success ratio of the guarantee flow (640 ms slots), {note}\n\
                     (guarantee flow over QUIC or the TCP model vs QUIC NewReno or TCP Reno; TCP model profile {}{})",
                    o.tcp_profile,
                    match o.tcp_profile {
                        tput_tcp::Profile::Linux => ": RACK-TLP, PRR, timestamps, 40 ms delayed ACKs, IW 10, HyStart++",
                        _ => ", ns-2's defaults",
                    }
                ),
                pct,
                &columns,
            ));
            let idle: Vec<Column> = FIG6_TCP_CELLS
                .iter()
                .map(|&(v, ..)| -> Column { (v, "fig6-tcp", v, idle) })
                .collect();
            t.push_str(&table(
                o,
                points,
                &format!("Fig. 6 over TCP, target {pct}%: idle fraction of the bottleneck, {note}"),
                pct,
                &idle,
            ));
            let _ = writeln!(
                t,
                "Paper (ns-2, TCP Reno competitors): {}",
                if pct == 10 {
                    "at 10% the controller keeps a high success ratio even with many Reno flows"
                } else {
                    "at 20% success drops sharply from ~15 Reno flows on"
                }
            );
            t.push_str(&fig6_tcp_note(o, points, pct));
        }
        if has("fig7") {
            t.push_str(&table(
                o,
                points,
                &format!(
                    "Fig. 7, 5 guarantee flows at {}% each (aggregate {pct}%): success ratio, {note}\n\
                     (per-flow = the paper's mean of the five; aggregate = the five judged as one)",
                    f64::from(pct) / 5.0
                ),
                pct,
                &[
                    ("independent per-flow", "fig7", "5 independent", success),
                    ("independent aggregate", "fig7", "5 independent", aggregate_success),
                    ("coordinated aggregate", "fig7", "5 coordinated", aggregate_success),
                    ("coordinated per-flow", "fig7", "5 coordinated", success),
                    ("Fig. 6 single flow", "fig6", "guarantee", success),
                ],
            ));
            let _ = writeln!(
                t,
                "Paper: success clearly lower than Fig. 6 for the same aggregate (all five size k_max from the same A).\n\
                 Expected here: the coordinated five (aggregate) should reach at least the single flow of Fig. 6.\n"
            );
        }
    }
    t
}

/// The closing note of `fig6-tcp` at `pct`: each cell's mean success and
/// idle fraction with many competitors (x >= 15), and whether the paper's
/// curve comes back with TCP Reno competitors.
fn fig6_tcp_note(o: &Options, points: &[PointResult], pct: u32) -> String {
    let many: Vec<u32> = o.reno_counts.iter().copied().filter(|&n| n >= 15).collect();
    let over_many = |variant: &str, field: fn(&PointResult) -> f64| {
        let v: Vec<f64> = many
            .iter()
            .filter_map(|&n| stats(points, ("fig6-tcp", variant, pct, n), field).map(|s| s.0))
            .collect();
        (!v.is_empty()).then(|| mean(&v))
    };
    let mut t = String::new();
    if many.is_empty() {
        let _ = writeln!(t, "(no x >= 15 in this run: no verdict)\n");
        return t;
    }
    let _ = writeln!(t, "Mean over x >= 15 Reno flows:");
    for (variant, ..) in FIG6_TCP_CELLS {
        if let (Some(sx), Some(ix)) = (over_many(variant, success), over_many(variant, idle)) {
            let _ = writeln!(t, "  {variant:<22} success {sx:.2}, bottleneck idle {ix:.3}");
        }
    }
    let tcp = over_many(FIG6_TCP_CELLS[3].0, success);
    let quic = over_many(FIG6_TCP_CELLS[0].0, success);
    if let (Some(tcp), Some(quic)) = (tcp, quic) {
        let back = if pct == 10 { tcp >= 0.8 } else { tcp < 0.5 };
        let _ = writeln!(
            t,
            "Verdict at {pct}%: with TCP Reno competitors and the guarantee flow over TCP the paper's curve {} \
             (success {tcp:.2} over x >= 15 against {quic:.2} in the all-QUIC cell; the paper's curve is {}).\n",
            if back { "comes back" } else { "does not come back" },
            if pct == 10 {
                "high (>= 0.8 read as high)"
            } else {
                "low from ~15 flows on"
            }
        );
        if o.tcp_profile == tput_tcp::Profile::Ns2 {
            let _ = writeln!(
                t,
                "Over the TCP model the guarantee flow recovers with Reno (one resent segment per fast recovery): \
             several losses in one of its large windows end in a timeout, which `QUIC vs TCP Reno` does not suffer.\n"
            );
        }
    }
    t
}

pub(super) fn write_points(o: &Options, out: &Path, points: &[PointResult]) -> Result<Vec<PathBuf>, String> {
    let mut csv = Csv::new(&[
        "figure",
        "variant",
        "target_pct",
        "n_reno",
        "seed",
        "success",
        "aggregate_success",
        "tested_mbps",
        "reno_mbps_per_flow",
        "utilisation",
        "idle",
        "unfinished_tcp",
    ]);
    for p in points {
        csv_row!(
            csv,
            p.figure,
            p.variant,
            p.target_pct,
            p.n_reno,
            p.seed,
            p.success,
            p.aggregate_success,
            p.tested_mbps,
            p.reno_mbps,
            p.utilisation,
            p.idle,
            p.unfinished_tcp
        );
    }
    let mut files = vec![("points.csv".to_string(), csv.finish())];
    let curve = |fig: &str, variant: &str, pct: u32, field: fn(&PointResult) -> f64, name: &str| Series {
        name: name.into(),
        points: o
            .reno_counts
            .iter()
            .filter_map(|&n| Some((f64::from(n), stats(points, (fig, variant, pct, n), field)?.0)))
            .collect(),
    };
    for &pct in &o.targets_pct {
        // (file, title, the figure whose points it needs, curves)
        let mut plots: Vec<(String, &str, &str, Vec<Series>)> = Vec::new();
        plots.push((
            format!("fig6_{pct}pct.svg"),
            "Fig. 6",
            "fig6",
            vec![
                curve("fig6", "guarantee", pct, success, "guarantee"),
                curve("fig6", "newreno", pct, success, "NewReno"),
                curve("fig6", "fixed", pct, success, "fixed window"),
            ],
        ));
        for (fig, variant, _, _, column, _, title) in FIG6_VARIANTS {
            plots.push((
                format!("{}_{pct}pct.svg", fig.replace('-', "_")),
                title,
                fig,
                vec![
                    curve("fig6", "guarantee", pct, success, "oracle A, 2*cwnd"),
                    curve(fig, variant, pct, success, column),
                ],
            ));
        }
        plots.push((
            format!("fig7_{pct}pct.svg"),
            "Fig. 7",
            "fig7",
            vec![
                curve("fig7", "5 independent", pct, success, "5 indep., per flow"),
                curve("fig7", "5 independent", pct, aggregate_success, "5 indep., aggregate"),
                curve("fig7", "5 coordinated", pct, aggregate_success, "5 coord., aggregate"),
                curve("fig6", "guarantee", pct, success, "1 flow (Fig. 6)"),
            ],
        ));
        plots.push((
            format!("fig6_tcp_{pct}pct.svg"),
            "Fig. 6 over TCP",
            "fig6-tcp",
            FIG6_TCP_CELLS
                .iter()
                .map(|&(v, ..)| curve("fig6-tcp", v, pct, success, v))
                .collect(),
        ));
        for (name, title, needs, series) in plots {
            if points.iter().any(|p| p.figure == needs && p.target_pct == pct) {
                let svg = line_chart(
                    &format!("{title}: target {pct}% of the bottleneck"),
                    "NewReno flows",
                    "success ratio",
                    &series,
                );
                files.push((name, svg));
            }
        }
        let mut summary = Csv::new(&["figure", "variant", "target_pct", "n_reno", "mean", "min", "max"]);
        for (fig, variant) in [
            ("fig6", "guarantee"),
            ("fig6", "newreno"),
            ("fig6", "fixed"),
            (FIG6_VARIANTS[0].0, FIG6_VARIANTS[0].1),
            (FIG6_VARIANTS[1].0, FIG6_VARIANTS[1].1),
            ("fig7", "5 independent"),
            ("fig7", "5 coordinated"),
            ("fig6-tcp", FIG6_TCP_CELLS[0].0),
            ("fig6-tcp", FIG6_TCP_CELLS[1].0),
            ("fig6-tcp", FIG6_TCP_CELLS[2].0),
            ("fig6-tcp", FIG6_TCP_CELLS[3].0),
        ] {
            for &n in &o.reno_counts {
                if let Some((m, lo, hi)) = stats(points, (fig, variant, pct, n), success) {
                    csv_row!(summary, fig, variant, pct, n, m, lo, hi);
                }
            }
        }
        files.push((format!("summary_{pct}pct.csv"), summary.finish()));
    }
    write_files(out, &files)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(variant: &'static str, n_reno: u32, success: f64, idle: f64) -> PointResult {
        PointResult {
            figure: "fig6-tcp",
            variant,
            target_pct: 10,
            n_reno,
            seed: 1,
            success,
            aggregate_success: success,
            tested_mbps: 0.0,
            reno_mbps: 0.0,
            utilisation: 1.0 - idle,
            idle,
            unfinished_tcp: 0,
        }
    }

    #[test]
    fn the_fig6_tcp_note_averages_over_many_flows_and_gives_a_verdict() {
        let o = Options {
            reno_counts: vec![10, 15, 20],
            ..Options::short()
        };
        let mut points = Vec::new();
        for (variant, ..) in FIG6_TCP_CELLS {
            points.push(point(variant, 10, 1.0, 0.5));
            points.push(point(variant, 15, 0.9, 0.1));
            points.push(point(variant, 20, 0.7, 0.2));
        }
        let note = fig6_tcp_note(&o, &points, 10);
        let line = format!("{:<22} success 0.80, bottleneck idle 0.150", "TCP vs TCP Reno");
        assert!(note.contains(&line), "{note}");
        assert!(
            note.contains("comes back (success 0.80 over x >= 15 against 0.80"),
            "{note}"
        );
        points.retain(|p| !(p.variant == "TCP vs TCP Reno" && p.n_reno == 20));
        points.push(point("TCP vs TCP Reno", 20, 0.1, 0.2));
        let note = fig6_tcp_note(&o, &points, 10);
        assert!(note.contains("does not come back (success 0.50"), "{note}");
    }
}
