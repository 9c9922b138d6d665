//! Seed 003's tables, CSV and figures from the searches' results.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use tput_lab::plot::{Band, BandPoint, Figure, Panel, Series, Trace};
use tput_lab::report::Table;
use tput_lab::scenario::Transport;
use tput_lab::stats::mean_min_max;

use super::{FigureSpec, Options, Report, Search, Setup, Work, passes, transport_name};
use crate::csv_row;
use crate::repro::Csv;

/// The tables (`tables.txt`) and files (name, contents) of every figure.
pub(super) fn tables(o: &Options, w: &Work, report: &Report) -> (String, Vec<(String, String)>) {
    let figs = &w.figs;
    let seed0 = o.seeds[0];
    let find = |s: &Setup| -> Vec<&Search> {
        report
            .searches
            .iter()
            .filter(|(x, _)| x == s)
            .map(|(_, r)| r)
            .filter(|r| r.error.is_none())
            .collect()
    };

    let mut text = String::new();
    let _ = writeln!(
        text,
        "Seed 003 (R. Araki, TCP variants under power-saving link-rate control): W_min = smallest rate with \
         D_e <= 1.1 x D_e(100 Mbit/s), no file lost; resolution {} Mbit/s; {} seed(s); mean [min-max]",
        o.resolution_mbps,
        o.seeds.len()
    );
    let mut files: Vec<(String, String)> = Vec::new();
    let mut csv = Csv::new(&[
        "figure",
        "transport",
        "curve",
        "x",
        "setup",
        "seed",
        "wmin_mbps",
        "de100_s",
        "de100_transfer_s",
        "files100",
        "lost100",
    ]);
    let mut pts_csv = Csv::new(&[
        "source",
        "setup",
        "seed",
        "rate_mbps",
        "overloaded",
        "pass",
        "de_s",
        "de_transfer_s",
        "de_ratio",
        "started",
        "completed",
        "refused",
        "failed",
        "unfinished",
    ]);
    let search_points = report
        .searches
        .iter()
        .flat_map(|(s, r)| r.points.iter().map(move |p| ("search", s, r, p)));
    let curve_points = report.curves.iter().filter_map(|(s, p)| {
        let r = find(s).into_iter().find(|r| r.seed == seed0)?;
        Some(("curve", s, r, p))
    });
    for (source, s, r, p) in search_points.chain(curve_points) {
        csv_row!(
            pts_csv,
            source,
            s.key(),
            r.seed,
            p.rate_mbps,
            p.overloaded,
            p.pass || (source == "curve" && passes(p, &r.reference)),
            format!("{:.6}", p.de()),
            format!("{:.6}", p.de_transfer()),
            format!("{:.4}", p.de() / r.reference.de()),
            p.files.started,
            p.files.completed(),
            p.files.refused,
            p.files.failed,
            p.files.unfinished
        );
    }
    for f in figs {
        let _ = writeln!(text, "\n== {} ==", f.title);
        let xs = figure_xs(f);
        let mut panels = Vec::new();
        for &t in &o.transports {
            let x_name = match f.x_label {
                "flows" => "flows",
                "mean file size (Mbit)" => "size (Mbit)",
                _ => "delay (ms)",
            };
            let mut table = xs
                .iter()
                .fold(Table::new().left(transport_name(t), 6).left(x_name, 22), |table, x| {
                    table.right(&x.to_string(), 17)
                });
            let mut traces = Vec::new();
            for (_, c) in f.curves.iter().filter(|(ct, _)| *ct == t) {
                let mut cells = vec![String::new(), c.name.clone()];
                let mut band = Band {
                    name: c.name.clone(),
                    points: Vec::new(),
                };
                for x in &xs {
                    let Some((_, s)) = c.setups.iter().find(|(sx, _)| sx == x) else {
                        cells.push("-".into());
                        continue;
                    };
                    let rs = find(s);
                    for r in &rs {
                        csv_row!(
                            csv,
                            f.name,
                            transport_name(t),
                            c.name,
                            x,
                            s.key(),
                            r.seed,
                            r.wmin_mbps,
                            format!("{:.6}", r.reference.de()),
                            format!("{:.6}", r.reference.de_transfer()),
                            r.reference.files.completed(),
                            r.reference.files.lost()
                        );
                    }
                    let w: Vec<f64> = rs.iter().map(|r| r.wmin_mbps).collect();
                    let Some((mean, min, max)) = mean_min_max(&w) else {
                        cells.push("failed".into());
                        continue;
                    };
                    cells.push(format!("{mean:.0} [{min:.0}-{max:.0}]"));
                    band.points.push(BandPoint { x: *x, mean, min, max });
                }
                table.row(cells);
                traces.push(Trace::Band(band));
            }
            text += &table.text();
            panels.push(Panel {
                y_label: format!("W_min (Mbit/s), {}", transport_label(t)),
                traces,
            });
        }
        let fig = Figure {
            title: format!("Seed 003: {}", f.title),
            x_label: f.x_label.into(),
            x_range: None,
            panels,
        };
        files.push((format!("{}.svg", f.name), fig.to_svg()));
        // D_e vs rate for one configuration of the figure: the first x's
        // setups of each curve, seed of the first search.
        let mut panels = Vec::new();
        let mut which = String::new();
        for &t in &o.transports {
            let mut traces = Vec::new();
            for (_, c) in f.curves.iter().filter(|(ct, _)| *ct == t) {
                let Some((x, s)) = c.setups.iter().find(|(x, _)| *x == pick_x(f.name, &xs)) else {
                    continue;
                };
                which = match f.x_label {
                    "flows" => format!("{x} flows"),
                    "mean file size (Mbit)" => format!("{x} Mbit files"),
                    _ => format!("{x} ms"),
                };
                let Some(r) = find(s).into_iter().find(|r| r.seed == seed0) else {
                    continue;
                };
                let extra = report.curves.iter().filter(|(x, _)| x == s).map(|(_, p)| p);
                let mut pts: Vec<(f64, f64)> = r
                    .points
                    .iter()
                    .filter(|p| !p.overloaded)
                    .chain(extra)
                    .map(|p| (p.rate_mbps, p.de() / r.reference.de()))
                    .collect();
                pts.sort_by(|a, b| a.0.total_cmp(&b.0));
                pts.dedup_by(|a, b| a.0 == b.0);
                traces.push(Trace::Line(Series {
                    name: c.name.clone(),
                    points: pts,
                }));
            }
            traces.push(Trace::Line(Series {
                name: "1.1 x D_e(100)".into(),
                points: vec![(10.0, 1.1), (100.0, 1.1)],
            }));
            panels.push(Panel {
                y_label: format!("D_e / D_e(100), {}", transport_label(t)),
                traces,
            });
        }
        let fig = Figure {
            title: format!("Seed 003: D_e vs rate, {} ({which}, seed {seed0})", f.name),
            x_label: "bottleneck rate (Mbit/s)".into(),
            x_range: Some((10.0, 100.0)),
            panels,
        };
        files.push((format!("{}-de.svg", f.name), fig.to_svg()));
    }
    text.push_str(&reference_table(report, o));
    text.push_str(&claims(report, o));
    files.push(("wmin.csv".into(), csv.finish()));
    files.push(("points.csv".into(), pts_csv.finish()));
    (text, files)
}

/// Every x of a figure, in order.
pub(super) fn figure_xs(f: &FigureSpec) -> Vec<f64> {
    let mut v: Vec<f64> = f
        .curves
        .iter()
        .flat_map(|(_, c)| c.setups.iter().map(|(x, _)| *x))
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// The x of a figure whose `D_e`-vs-rate curves are drawn.
pub(super) fn pick_x(fig: &str, xs: &[f64]) -> f64 {
    let prefer = match fig {
        "size" => 10.0,
        "flows-short" | "flows-long" => 5.0,
        _ => 10.0,
    };
    if xs.contains(&prefer) { prefer } else { xs[0] }
}

fn transport_label(t: Transport) -> &'static str {
    match t {
        Transport::Tcp => "TCP model",
        Transport::Quic => "QUIC",
    }
}

/// The reference runs: D_e at 100 Mbit/s (from creation) and the transfer
/// time, and the files, per configuration of the paper's point (5 flows, 5 Mbit).
fn reference_table(report: &Report, o: &Options) -> String {
    let mut t = String::from(
        "\n== D_e at 100 Mbit/s (mean over seeds): file time from creation at the sender (D_e) / transfer time from the \
         first arrival; files completed, lost (refused+failed+unfinished) at the reference and, over all runs of the search ==\n",
    );
    let mut by: BTreeMap<String, Vec<&Search>> = BTreeMap::new();
    for (s, r) in &report.searches {
        if r.error.is_none() {
            by.entry(s.key()).or_default().push(r);
        }
    }
    let mut table = Table::new()
        .left("configuration", 44)
        .right("D_e (s)", 9)
        .right("transfer(s)", 11)
        .right("files", 8)
        .right("lost", 6)
        .right("lost(all)", 11)
        .right("wmin", 10);
    for (k, rs) in by {
        let n = rs.len() as f64;
        let de = rs.iter().map(|r| r.reference.de()).sum::<f64>() / n;
        let tot = rs.iter().map(|r| r.reference.de_transfer()).sum::<f64>() / n;
        let files: usize = rs.iter().map(|r| r.reference.files.completed()).sum();
        let lost: u64 = rs.iter().map(|r| r.reference.files.lost()).sum();
        let lost_all: u64 = rs.iter().flat_map(|r| r.points.iter()).map(|p| p.files.lost()).sum();
        let w: Vec<f64> = rs.iter().map(|r| r.wmin_mbps).collect();
        let (m, lo, hi) = mean_min_max(&w).unwrap_or((f64::NAN, f64::NAN, f64::NAN));
        table.row([
            k.to_string(),
            format!("{de:.3}"),
            format!("{tot:.3}"),
            files.to_string(),
            lost.to_string(),
            lost_all.to_string(),
            format!("{m:.0} [{lo:.0}-{hi:.0}]"),
        ]);
    }
    t += &table.text();
    let _ = o;
    t
}

/// Mean W_min of `setup` over its seeds.
fn wmin_of(report: &Report, s: &Setup) -> Option<f64> {
    let w: Vec<f64> = report
        .searches
        .iter()
        .filter(|(x, r)| x == s && r.error.is_none())
        .map(|(_, r)| r.wmin_mbps)
        .collect();
    tput_lab::stats::mean(w)
}

/// The paper's claims beside what we measured.
fn claims(report: &Report, o: &Options) -> String {
    let mut t = String::from("\n== The paper's claims beside the measurements (mean W_min over seeds, Mbit/s) ==\n");
    for &tr in &o.transports {
        let name = transport_label(tr);
        let w = |cc: &str, flows: u32, delay: f64, size: f64| {
            wmin_of(
                report,
                &Setup {
                    flows,
                    size_mbit: size,
                    ..Setup::paper(tr, cc, delay)
                },
            )
        };
        let fmt = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.0}"));
        let _ = writeln!(t, "-- {name} --");
        let _ = writeln!(
            t,
            "NewReno, 1 flow, 10 ms, 10 Mbit files at 1 s (10 Mbit/s): paper 60; measured {}",
            fmt(w("newreno", 1, 10.0, 10.0))
        );
        let sizes: Vec<String> = o
            .sizes_mbit
            .iter()
            .map(|&m| format!("{m} Mbit: {}", fmt(w("newreno", 1, 10.0, m))))
            .collect();
        let _ = writeln!(
            t,
            "NewReno, 1 flow, 10 ms: W_min independent of the file size at equal load: {}",
            sizes.join(", ")
        );
        for &d in &o.delays_ms {
            let mut row: Vec<(String, f64)> = o
                .controllers
                .iter()
                .filter_map(|cc| w(cc, 5, d, 5.0).map(|v| (cc.clone(), v)))
                .collect();
            row.sort_by(|a, b| a.1.total_cmp(&b.1));
            let expect = if d <= 10.0 { "vegas, ctcp" } else { "cubic, ctcp" };
            let _ = writeln!(
                t,
                "5 flows, 5 Mbit, {d} ms: paper's least-rate pair {expect}; measured order {}",
                row.iter()
                    .map(|(c, v)| format!("{c} {v:.0}"))
                    .collect::<Vec<_>>()
                    .join(" < ")
            );
        }
        for &n in &o.flows {
            if n < 2 || !o.flows_delays_ms.contains(&100.0) {
                continue;
            }
            let mut row: Vec<(String, f64)> = o
                .controllers
                .iter()
                .filter_map(|cc| w(cc, n, 100.0, 5.0).map(|v| (cc.clone(), v)))
                .collect();
            row.sort_by(|a, b| a.1.total_cmp(&b.1));
            let _ = writeln!(
                t,
                "{n} flows, 100 ms: paper's best cubic, ctcp; measured order {}",
                row.iter()
                    .map(|(c, v)| format!("{c} {v:.0}"))
                    .collect::<Vec<_>>()
                    .join(" < ")
            );
        }
        for &m in &o.sizes_mbit {
            let mut row: Vec<(String, f64)> = o
                .controllers
                .iter()
                .filter_map(|cc| w(cc, 1, 10.0, m).map(|v| (cc.clone(), v)))
                .collect();
            row.sort_by(|a, b| a.1.total_cmp(&b.1));
            let _ = writeln!(
                t,
                "{m} Mbit files (1 flow, 10 ms): paper: small files favour cubic, large ctcp; measured order {}",
                row.iter()
                    .map(|(c, v)| format!("{c} {v:.0}"))
                    .collect::<Vec<_>>()
                    .join(" < ")
            );
        }
    }
    t
}
