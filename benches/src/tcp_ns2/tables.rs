//! The cross-check's tables, CSV files and window plot, part by part.

use std::path::{Path, PathBuf};

use tput_lab::plot::{Series, line_chart};
use tput_lab::report::Table;
use tput_lab::stats::{mean_min_max, mean_or_nan};
use tput_lab::sweep::run_parallel;

use super::reproduction::{BerSide, Options, Side};
use super::{
    BerCase, BerMetrics, CUT_STARTS, Case, CutCase, CutMetrics, Metrics, Model, agrees, mean_of, means,
    run_model_window, run_ns2_window, window_stats,
};
use crate::csv_row;
use crate::repro::{Csv, write_files};
use crate::seed001::{collapsed, threshold};

/// A part's text and the files it wrote.
type Part = Result<(String, Vec<PathBuf>), String>;

/// The dumbbell: per variant and N, the mean over seeds of each side, and
/// whether the model with ns-2's rules agrees with ns-2; every run in
/// `tcp_ns2.csv`.
pub(super) fn dumbbell(
    o: &Options,
    sides: &[Side],
    runs: &[(Case, Side, Result<Metrics, String>)],
    out: &Path,
) -> Part {
    let mut csv = Csv::new(&[
        "variant",
        "n_background",
        "seed",
        "side",
        "utilisation",
        "jain",
        "tagged_10",
        "tagged_20",
        "timeouts_per_flow_min",
    ]);
    let mut text = format!(
        "TCP model vs ns-2 2.35: seed-000 dumbbell, N background + 1 tagged flow, 1000-byte segments,\n\
         starts uniform in [0, 1) s, {} s, mean over {} seed(s). util = bottleneck bytes sent / capacity over the run;\n\
         >=10M / >=20M = tagged flow's fraction of 1-s slots at >= 10 / 20 Mbit/s; TO/f/m = timeouts per flow per minute.\n\
         agree (model ns-2 rules vs ns-2): util within 0.015, Jain within 0.02, both slot fractions within 0.10, timeouts within 1.5x.\n",
        o.duration.as_secs(),
        o.seeds
    );
    for &variant in &o.variants {
        text += &format!("\n{variant}\n");
        for &n in &o.ns {
            let mut t = Table::new()
                .left(&format!("N = {n}"), 34)
                .right("util", 6)
                .right("Jain", 6)
                .right(">=10M", 6)
                .right(">=20M", 6)
                .right("TO/f/m", 7);
            let mut per_side: Vec<(Side, Vec<Metrics>)> = Vec::new();
            for &side in sides {
                let ms: Vec<Metrics> = runs
                    .iter()
                    .filter(|(c, s, _)| c.variant == variant && c.n_background == n && *s == side)
                    .filter_map(|(c, _, m)| {
                        let m = m.as_ref().ok()?;
                        csv_row!(
                            csv,
                            variant,
                            n,
                            c.seed,
                            side.label(),
                            m.utilisation,
                            m.jain,
                            m.tagged_10,
                            m.tagged_20,
                            m.timeouts_per_flow_min
                        );
                        Some(m.clone())
                    })
                    .collect();
                t.row([
                    format!("        {}", side.label()),
                    format!("{:.3}", mean_of(&ms, |m| m.utilisation)),
                    format!("{:.3}", mean_of(&ms, |m| m.jain)),
                    format!("{:.2}", mean_of(&ms, |m| m.tagged_10)),
                    format!("{:.2}", mean_of(&ms, |m| m.tagged_20)),
                    format!("{:.2}", mean_of(&ms, |m| m.timeouts_per_flow_min)),
                ]);
                per_side.push((side, ms));
            }
            text += &t.text();
            let of = |side: Side| per_side.iter().find(|(s, _)| *s == side).map(|(_, ms)| ms);
            if let (Some(a), Some(b)) = (of(Side::Ns2), of(Side::Model(Model::Ns2)))
                && !a.is_empty()
                && !b.is_empty()
            {
                let ok = agrees(&means(b), &means(a));
                let mark = |b: bool| if b { "yes" } else { "NO" };
                text += &format!(
                    "        agree: util {} Jain {} slots {} timeouts {}\n",
                    mark(ok[0]),
                    mark(ok[1]),
                    mark(ok[2]),
                    mark(ok[3])
                );
            }
        }
    }
    let files = write_files(out, &[("tcp_ns2.csv", csv.finish())])?;
    Ok((text, files))
}

/// A run's metrics and the tagged flow's window (seconds, segments).
pub(super) type Traced = (Metrics, Vec<(f64, f64)>);

/// The window part's runs, each side's name with its metrics and window
/// trace: ns-2's (if `with_ns2`; its trace file goes under `scratch`) and
/// the model's in both settings, on `jobs` threads. The model's runs keep
/// the controller's trace, which a plan point does not: they run here.
pub(super) fn window_traces(
    case: &Case,
    with_ns2: bool,
    scripts: &Path,
    scratch: &Path,
    jobs: usize,
) -> Vec<(String, Result<Traced, String>)> {
    let sides: Vec<Side> = with_ns2
        .then_some(Side::Ns2)
        .into_iter()
        .chain([Side::Model(Model::Ns2), Side::Model(Model::Before)])
        .collect();
    let tcl = scripts.join("tcp_compare.tcl");
    let traces = run_parallel(
        &sides,
        jobs,
        |side| match side {
            Side::Ns2 => run_ns2_window(case, &tcl, scratch),
            Side::Model(m) => run_model_window(case, *m),
        },
        |_, side, r| {
            if let Err(e) = r {
                eprintln!("window trace {}: FAILED: {e}", side.label());
            }
        },
    );
    sides.iter().map(|s| s.label()).zip(traces).collect()
}

/// The tagged flow's window: halvings, timeouts, the median time from a
/// halving to the first growth, the mean window; `window.svg` (one second
/// of each trace). A failed trace is listed in `failures`.
pub(super) fn window(
    o: &Options,
    traces: Vec<(String, Result<Traced, String>)>,
    failures: &mut Vec<String>,
    out: &Path,
) -> Part {
    let (case, from, (x0, x1)) = o.window_case();
    let mut text = format!(
        "\nThe tagged flow's window: NewReno, N = {}, seed 1, {} s, from {from} s on (ns-2: traced cwnd_; the model: its controller)\n",
        case.n_background,
        case.duration.as_secs(),
    );
    let mut t = Table::new()
        .left("", 20)
        .right("halvings", 8)
        .right("to 1 seg", 8)
        .right("flat (ms)", 11)
        .right("mean cwnd", 9)
        .right("mean usable", 11)
        .right("util", 6);
    let mut series = Vec::new();
    for (name, r) in traces {
        let (m, trace) = match r {
            Ok(x) => x,
            Err(e) => {
                failures.push(format!("window trace {name}: {e}"));
                continue;
            }
        };
        let s = window_stats(&trace, from);
        t.row([
            name.clone(),
            s.halvings.to_string(),
            s.to_one.to_string(),
            format!("{:.1}", s.median_flat_secs * 1e3),
            format!("{:.2}", s.mean_cwnd),
            format!("{:.2}", s.mean_usable),
            format!("{:.3}", m.utilisation),
        ]);
        // A step line: each value holds until the next sample.
        let mut points = Vec::new();
        for w in trace.windows(2) {
            if w[1].0 < x0 || w[0].0 > x1 {
                continue;
            }
            points.push((w[0].0.max(x0), w[0].1));
            points.push((w[1].0.min(x1), w[0].1));
        }
        series.push(Series { name, points });
    }
    text += &t.text();
    let svg = line_chart(
        &format!("Tagged flow's window, NewReno, N = {}", case.n_background),
        "time (s)",
        "cwnd (segments)",
        &series,
    );
    let files = write_files(out, &[("window.svg", svg)])?;
    Ok((text, files))
}

/// The cut-off path: per min RTO and period, each side's mean goodput over
/// the start instants at every occupancy, and its collapse threshold; every
/// run in `cutoff.csv`.
pub(super) fn cutoff(
    o: &Options,
    sides: &[Side],
    runs: &[(CutCase, Side, Result<CutMetrics, String>)],
    out: &Path,
) -> Part {
    let cases = o.cut_cases();
    let mut csv = Csv::new(&[
        "min_rto_ms",
        "period_us",
        "occupancy",
        "start_us",
        "side",
        "goodput_mbps",
        "timeouts",
    ]);
    for (c, side, m) in runs {
        if let Ok(m) = m {
            csv_row!(
                csv,
                c.min_rto.as_secs_f64() * 1e3,
                c.period.as_micros(),
                c.occupancy,
                c.start.as_micros(),
                side.label(),
                format!("{:.3}", m.goodput_mbps),
                m.timeouts
            );
        }
    }
    let mean = |min_rto, period, occ: f64, side: Side, f: &dyn Fn(&CutMetrics) -> f64| {
        mean_or_nan(
            runs.iter()
                .filter(|(c, s, _)| c.min_rto == min_rto && c.period == period && c.occupancy == occ && *s == side)
                .filter_map(|(_, _, m)| m.as_ref().ok().map(f)),
        )
    };
    let duration = cases.first().map_or(0, |c| c.duration.as_secs());
    let mut text = format!(
        "\nSeed 001's path: 2 x 1 Gbit/s, 10 us, cut on the second hop (drop), one NewReno flow, 1000-byte segments, {duration} s;\n\
         mean goodput (Mbit/s) over {} start instants, [timeouts per run]; * = collapsed (below half of occupancy x the uncut goodput).\n\
         threshold = lowest occupancy from which on no point collapsed.\n",
        CUT_STARTS.len()
    );
    let mut curves: Vec<(std::time::Duration, std::time::Duration)> = Vec::new();
    for c in &cases {
        if !curves.contains(&(c.min_rto, c.period)) {
            curves.push((c.min_rto, c.period));
        }
    }
    let mut occupancies: Vec<f64> = Vec::new();
    for c in &cases {
        if !occupancies.contains(&c.occupancy) {
            occupancies.push(c.occupancy);
        }
    }
    for (min_rto, period) in curves {
        text += &format!(
            "\nmin RTO {} ms, period {} us\n",
            min_rto.as_secs_f64() * 1e3,
            period.as_micros()
        );
        let mut t = Table::new().left("occupancy", 18);
        for o in &occupancies {
            t = t.right(&o.to_string(), 11);
        }
        t = t.right("threshold", 10);
        for &side in sides {
            let full = mean(min_rto, period, 1.0, side, &|m| m.goodput_mbps);
            let mut cells = vec![side.label()];
            let mut curve = Vec::new();
            for &occ in &occupancies {
                let g = mean(min_rto, period, occ, side, &|m| m.goodput_mbps);
                let to = mean(min_rto, period, occ, side, &|m| m.timeouts as f64);
                curve.push((occ, g));
                let star = if occ < 1.0 && collapsed(g, occ, full) { "*" } else { " " };
                cells.push(format!("{g:>5.0}{star}[{to:>3.0}]"));
            }
            cells.push(threshold(&curve, full).map_or("none".to_string(), |t| t.to_string()));
            t.row(cells);
        }
        text += &t.text();
    }
    let files = write_files(out, &[("cutoff.csv", csv.finish())])?;
    Ok((text, files))
}

/// Seed 002's bit-error path: per RTT, each side's goodput (mean [min-max]
/// over the seeds), timeouts, retransmissions and errors per run, and the
/// Mathis bound; every run in `ber.csv`.
pub(super) fn ber(
    o: &Options,
    who: &[BerSide],
    runs: &[(BerCase, BerSide, Result<BerMetrics, String>)],
    out: &Path,
) -> Part {
    let cases = o.ber_cases();
    let mut csv = Csv::new(&[
        "rtt_ms",
        "seed",
        "side",
        "goodput_mbps",
        "timeouts",
        "retransmits",
        "errors",
    ]);
    for (c, w, m) in runs {
        if let Ok(m) = m {
            csv_row!(
                csv,
                c.rtt_ms,
                c.seed,
                w.label(),
                format!("{:.4}", m.goodput_mbps),
                m.timeouts,
                m.retransmits,
                m.errors
            );
        }
    }
    let (duration, warmup) = cases
        .first()
        .map_or((0, 0), |c| (c.duration.as_secs(), c.warmup.as_secs()));
    let seeds = cases.iter().map(|c| c.seed).max().unwrap_or(0);
    let mut text = format!(
        "\nSeed 002's bit-error path (36.864 Mbit/s, 2000-packet queue, 2 MiB window, 1228-byte packets, BER 1e-8),\n\
         goodput from {warmup} to {duration} s, mean [min-max] over {seeds} seeds, and per run: timeouts, retransmitted segments,\n\
         packets lost to bit errors. Mathis et al.'s 1.22 MSS / (RTT sqrt(p)) for reference.\n"
    );
    let mut t = Table::new()
        .left("RTT", 6)
        .left("", 16)
        .right("goodput (Mbit/s)", 22)
        .right("timeouts", 9)
        .right("rexmits", 9)
        .right("errors", 8);
    let mut rtts: Vec<u32> = cases.iter().map(|c| c.rtt_ms).collect();
    rtts.dedup();
    for rtt in rtts {
        let p = 1.0 - (1.0 - 1e-8f64).powf(1228.0 * 8.0);
        let mathis = 1.22 * 1188.0 * 8.0 / (f64::from(rtt) / 1e3 * p.sqrt()) / 1e6;
        for &w in who {
            let ms: Vec<&BerMetrics> = runs
                .iter()
                .filter(|(c, x, _)| c.rtt_ms == rtt && *x == w)
                .filter_map(|(_, _, m)| m.as_ref().ok())
                .collect();
            let g: Vec<f64> = ms.iter().map(|m| m.goodput_mbps).collect();
            let goodput = mean_min_max(&g).map_or("-".to_string(), |(m, lo, hi)| format!("{m:.2} [{lo:.2}-{hi:.2}]"));
            let per_run = |f: fn(&BerMetrics) -> u64| format!("{:.1}", mean_or_nan(ms.iter().map(|m| f(m) as f64)));
            t.row([
                format!("{rtt} ms"),
                w.label().to_string(),
                goodput,
                per_run(|m| m.timeouts),
                per_run(|m| m.retransmits),
                per_run(|m| m.errors),
            ]);
        }
        t.row([String::new(), "Mathis bound".into(), format!("{mathis:.2}")]);
    }
    text += &t.text();
    let files = write_files(out, &[("ber.csv", csv.finish())])?;
    Ok((text, files))
}
