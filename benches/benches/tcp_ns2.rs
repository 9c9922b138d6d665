//! The TCP model against ns-2 2.35 on the seed-000 dumbbell and on seed
//! 001's cut-off path; see `tput_benches::tcp_ns2` for what runs and what is
//! compared.
//!
//! `cargo bench -p tput-benches --bench tcp_ns2` runs three parts (ns-2 only
//! if `ns` is installed: `apt-get install ns2`; the bench says so when it is
//! not), each with ns-2, the model with ns-2's rules and the model as it was
//! before them (`tput_benches::tcp_ns2::Model`):
//!
//! - `dumbbell`: N = 1, 2, 5, 10, 20, 30, 40 background flows plus a tagged
//!   one, Reno, NewReno, SACK and NewReno with delayed ACKs, 3 seeds, 120 s;
//! - `window`: the tagged flow's window at N = 40, NewReno, seed 1, 120 s:
//!   halvings, timeouts, the median time from a halving to the first growth,
//!   the mean window, and `window.svg` (one second of each trace);
//! - `cutoff`: one NewReno flow on the cut-off path for 10 s, periods 100 us,
//!   1 ms and 10 ms, occupancies 0.5 to 1, min RTO 200 ms (which locks the
//!   RTOs to the 1 ms and 100 us periods) and 206.18 ms, each point from 5
//!   start instants; mean goodput and the collapse threshold per curve;
//! - `ber`: seed 002's bit-error path (BER 1e-8, RTT 50 to 200 ms, 10 seeds,
//!   60 s, measured from 10 s): ns-2's `Agent/TCP/Sack1` against the model's
//!   SACK and go-back-N as seed 002 runs them.
//!
//! Environment:
//!
//! - `TPUT_BENCH_SHORT=1`: N = 1 and 5, one seed, 10 s; the cut-off part at
//!   1 ms only, occupancies 0.9, 0.97 and 1, 2 s; the bit-error part at
//!   200 ms, 2 seeds, 20 s;
//! - `TPUT_BENCH_PARTS=dumbbell,window,cutoff,ber` (default all);
//! - `TPUT_BENCH_N=1,30`, `TPUT_BENCH_SEEDS=3` (seeds 1..=3),
//!   `TPUT_BENCH_VARIANTS=reno,newreno,sack,delack`,
//!   `TPUT_BENCH_DURATION=120` (seconds, the dumbbell);
//! - `TPUT_BENCH_JOBS=N`: runs at a time (default 1);
//! - `TPUT_BENCH_OUT=DIR`: where the CSV files, `tables.txt` and
//!   `window.svg` go (default `target/repro/tcp_ns2`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tput_benches::seed001::threshold;
use tput_benches::tcp_ns2::{
    BerCase, BerMetrics, CUT_STARTS, Case, CutCase, CutMetrics, Metrics, Model, Variant, agrees, header, means,
    ns2_available, row, run_ber_model, run_ber_ns2, run_cut_model, run_cut_ns2, run_model, run_model_window, run_ns2,
    run_ns2_window, window_stats,
};
use tput_lab::plot::{Series, line_chart};
use tput_lab::sweep::run_parallel;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Ns2,
    Model(Model),
}

impl Side {
    fn label(self) -> String {
        match self {
            Side::Ns2 => "ns-2 2.35".into(),
            Side::Model(m) => m.name().into(),
        }
    }
}

fn env_list<T: std::str::FromStr>(key: &str) -> Option<Vec<T>> {
    let v = std::env::var(key).ok()?;
    Some(v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
}

fn env_num<T: std::str::FromStr>(key: &str) -> Option<T> {
    std::env::var(key).ok().and_then(|s| s.parse().ok())
}

fn main() {
    let short = std::env::var_os("TPUT_BENCH_SHORT").is_some_and(|v| v == "1");
    let parts: Vec<String> =
        env_list("TPUT_BENCH_PARTS").unwrap_or_else(|| vec!["dumbbell".into(), "window".into(), "cutoff".into()]);
    let jobs: usize = env_num("TPUT_BENCH_JOBS").unwrap_or(1);
    let out = std::env::var_os("TPUT_BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| tput_benches::repro_dir().join("tcp_ns2"));
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ns2");
    let have_ns2 = ns2_available();
    if !have_ns2 {
        println!("ns-2 is not installed (no `ns` on the PATH; apt-get install ns2): the model's side only");
    }
    let mut sides = Vec::new();
    if have_ns2 {
        sides.push(Side::Ns2);
    }
    sides.push(Side::Model(Model::Ns2));
    sides.push(Side::Model(Model::Before));
    let _ = std::fs::create_dir_all(&out);
    let mut tables = String::new();
    let mut failures = 0;
    for part in &parts {
        let (text, failed) = match part.as_str() {
            "dumbbell" => dumbbell(short, jobs, &sides, &dir.join("tcp_compare.tcl"), &out),
            "window" => window(short, have_ns2, &dir.join("tcp_compare.tcl"), &out),
            "cutoff" => cutoff(short, jobs, &sides, &dir.join("cutoff_compare.tcl"), &out),
            "ber" => ber(short, jobs, have_ns2, &dir.join("ber_compare.tcl"), &out),
            other => {
                eprintln!("unknown part {other:?} (dumbbell, window, cutoff, ber)");
                std::process::exit(2);
            }
        };
        print!("{text}");
        tables += &text;
        failures += failed;
    }
    if failures > 0 {
        println!("{failures} run(s) FAILED (see stderr)");
    }
    let _ = std::fs::write(out.join("tables.txt"), &tables);
    println!("wrote {}", out.display());
    if failures > 0 {
        std::process::exit(1);
    }
}

/// The dumbbell: every variant, N and seed on every side.
fn dumbbell(short: bool, jobs: usize, sides: &[Side], tcl: &Path, out: &Path) -> (String, usize) {
    let ns: Vec<u32> = env_list("TPUT_BENCH_N").unwrap_or(if short {
        vec![1, 5]
    } else {
        vec![1, 2, 5, 10, 20, 30, 40]
    });
    let seeds: u64 = env_num("TPUT_BENCH_SEEDS").unwrap_or(if short { 1 } else { 3 });
    let secs: u64 = env_num("TPUT_BENCH_DURATION").unwrap_or(if short { 10 } else { 120 });
    let variants: Vec<Variant> = env_list::<String>("TPUT_BENCH_VARIANTS")
        .map(|v| v.iter().filter_map(|x| Variant::parse(x)).collect())
        .unwrap_or_else(|| Variant::ALL.to_vec());
    let mut runs = Vec::new();
    for &variant in &variants {
        for &n in &ns {
            for seed in 1..=seeds {
                for &side in sides {
                    let case = Case {
                        n_background: n,
                        seed,
                        variant,
                        duration: Duration::from_secs(secs),
                    };
                    runs.push((case, side));
                }
            }
        }
    }
    let total = runs.len();
    let results: Vec<Result<Metrics, String>> = run_parallel(
        &runs,
        jobs,
        |(case, side)| match side {
            Side::Ns2 => run_ns2(case, tcl),
            Side::Model(m) => run_model(case, *m),
        },
        |done, (case, side), r| {
            let what = match r {
                Ok(m) => format!(
                    "util {:.3} Jain {:.3} >=10M {:.2} >=20M {:.2} TO/flow/min {:.2}",
                    m.utilisation, m.jain, m.tagged_10, m.tagged_20, m.timeouts_per_flow_min
                ),
                Err(e) => format!("FAILED: {e}"),
            };
            eprintln!(
                "[{done}/{total}] {} N={} seed {} {}: {what}",
                case.variant,
                case.n_background,
                case.seed,
                side.label()
            );
        },
    );

    let mut csv =
        String::from("variant,n_background,seed,side,utilisation,jain,tagged_10,tagged_20,timeouts_per_flow_min\n");
    let mut table = format!(
        "TCP model vs ns-2 2.35: seed-000 dumbbell, N background + 1 tagged flow, 1000-byte segments,\n\
         starts uniform in [0, 1) s, {secs} s, mean over {seeds} seed(s). util = bottleneck bytes sent / capacity over the run;\n\
         >=10M / >=20M = tagged flow's fraction of 1-s slots at >= 10 / 20 Mbit/s; TO/f/m = timeouts per flow per minute.\n\
         agree (model ns-2 rules vs ns-2): util within 0.015, Jain within 0.02, both slot fractions within 0.10, timeouts within 1.5x.\n"
    );
    let mut failures = 0;
    for &variant in &variants {
        let _ = writeln!(table, "\n{variant}");
        for &n in &ns {
            let _ = writeln!(table, "N = {n:<3} {}", header());
            let mut per_side: Vec<(Side, Vec<Metrics>)> = Vec::new();
            for &side in sides {
                let ms: Vec<Metrics> = runs
                    .iter()
                    .zip(&results)
                    .filter(|((c, s), _)| c.variant == variant && c.n_background == n && *s == side)
                    .filter_map(|((c, _), r)| match r {
                        Ok(m) => {
                            let _ = writeln!(
                                csv,
                                "{variant},{n},{},{},{},{},{},{},{}",
                                c.seed,
                                side.label(),
                                m.utilisation,
                                m.jain,
                                m.tagged_10,
                                m.tagged_20,
                                m.timeouts_per_flow_min
                            );
                            Some(m.clone())
                        }
                        Err(_) => {
                            failures += 1;
                            None
                        }
                    })
                    .collect();
                let _ = writeln!(table, "        {}", row(&side.label(), &ms));
                per_side.push((side, ms));
            }
            let ns2 = per_side.iter().find(|(s, _)| *s == Side::Ns2);
            let model = per_side.iter().find(|(s, _)| *s == Side::Model(Model::Ns2));
            if let (Some((_, a)), Some((_, b))) = (ns2, model)
                && !a.is_empty()
                && !b.is_empty()
            {
                let ok = agrees(&means(b), &means(a));
                let mark = |b: bool| if b { "yes" } else { "NO" };
                let _ = writeln!(
                    table,
                    "        agree: util {} Jain {} slots {} timeouts {}",
                    mark(ok[0]),
                    mark(ok[1]),
                    mark(ok[2]),
                    mark(ok[3])
                );
            }
        }
    }
    let _ = std::fs::write(out.join("tcp_ns2.csv"), &csv);
    (table, failures)
}

/// A run's metrics and the tagged flow's window (seconds, segments).
type Traced = (Metrics, Vec<(f64, f64)>);

/// The tagged flow's window at N = 40 (N = 5 in short mode), NewReno, seed 1.
fn window(short: bool, have_ns2: bool, tcl: &Path, out: &Path) -> (String, usize) {
    let case = Case {
        n_background: if short { 5 } else { 40 },
        seed: 1,
        variant: Variant::NewReno,
        duration: Duration::from_secs(if short { 10 } else { 120 }),
    };
    let from = if short { 2.0 } else { 5.0 };
    let mut traces: Vec<(String, Result<Traced, String>)> = Vec::new();
    if have_ns2 {
        traces.push(("ns-2 2.35".into(), run_ns2_window(&case, tcl, out)));
    }
    for m in [Model::Ns2, Model::Before] {
        traces.push((m.name().into(), run_model_window(&case, m)));
    }
    let mut table = format!(
        "\nThe tagged flow's window: NewReno, N = {}, seed 1, {} s, from {from} s on (ns-2: traced cwnd_; the model: its controller)\n\
         {:<20} {:>8} {:>8} {:>11} {:>9} {:>11} {:>6}\n",
        case.n_background,
        case.duration.as_secs(),
        "",
        "halvings",
        "to 1 seg",
        "flat (ms)",
        "mean cwnd",
        "mean usable",
        "util"
    );
    let mut failures = 0;
    let mut series = Vec::new();
    // One second in the middle of the run, where every side is in steady state.
    let (x0, x1) = if short { (6.0, 7.0) } else { (60.0, 61.0) };
    for (name, r) in &traces {
        match r {
            Ok((m, t)) => {
                let s = window_stats(t, from);
                let _ = writeln!(
                    table,
                    "{name:<20} {:>8} {:>8} {:>11.1} {:>9.2} {:>11.2} {:>6.3}",
                    s.halvings,
                    s.to_one,
                    s.median_flat_secs * 1e3,
                    s.mean_cwnd,
                    s.mean_usable,
                    m.utilisation
                );
                // A step line: each value holds until the next sample.
                let mut points = Vec::new();
                for w in t.windows(2) {
                    if w[1].0 < x0 || w[0].0 > x1 {
                        continue;
                    }
                    points.push((w[0].0.max(x0), w[0].1));
                    points.push((w[1].0.min(x1), w[0].1));
                }
                series.push(Series {
                    name: name.clone(),
                    points,
                });
            }
            Err(e) => {
                eprintln!("window trace {name}: FAILED: {e}");
                failures += 1;
            }
        }
    }
    let svg = line_chart(
        &format!("Tagged flow's window, NewReno, N = {}", case.n_background),
        "time (s)",
        "cwnd (segments)",
        &series,
    );
    let _ = std::fs::write(out.join("window.svg"), svg);
    (table, failures)
}

/// The cut-off path: every period, occupancy, min RTO and start on every side.
fn cutoff(short: bool, jobs: usize, sides: &[Side], tcl: &Path, out: &Path) -> (String, usize) {
    let periods: Vec<Duration> = if short {
        vec![Duration::from_millis(1)]
    } else {
        vec![
            Duration::from_micros(100),
            Duration::from_millis(1),
            Duration::from_millis(10),
        ]
    };
    let occupancies: Vec<f64> = if short {
        vec![0.9, 0.97, 1.0]
    } else {
        vec![0.5, 0.7, 0.85, 0.9, 0.95, 0.97, 0.98, 0.99, 1.0]
    };
    let min_rtos = [Duration::from_millis(200), Duration::from_micros(206_180)];
    let duration = Duration::from_secs(if short { 2 } else { 10 });
    let mut runs = Vec::new();
    for &min_rto in &min_rtos {
        for &period in &periods {
            for &occupancy in &occupancies {
                for &f in &CUT_STARTS {
                    for &side in sides {
                        let c = CutCase {
                            period,
                            occupancy,
                            min_rto,
                            start: period.mul_f64(f),
                            duration,
                        };
                        runs.push((c, side));
                    }
                }
            }
        }
    }
    let total = runs.len();
    let results: Vec<Result<CutMetrics, String>> = run_parallel(
        &runs,
        jobs,
        |(c, side)| match side {
            Side::Ns2 => run_cut_ns2(c, tcl),
            Side::Model(m) => run_cut_model(c, *m),
        },
        |done, (c, side), r| {
            let what = match r {
                Ok(m) => format!("{:.1} Mbit/s, {} timeouts", m.goodput_mbps, m.timeouts),
                Err(e) => format!("FAILED: {e}"),
            };
            eprintln!(
                "[{done}/{total}] cut-off {:?} occ {} min RTO {:?} start {:?} {}: {what}",
                c.period,
                c.occupancy,
                c.min_rto,
                c.start,
                side.label()
            );
        },
    );
    let mut failures = 0;
    let mut csv = String::from("min_rto_ms,period_us,occupancy,start_us,side,goodput_mbps,timeouts\n");
    for ((c, side), r) in runs.iter().zip(&results) {
        match r {
            Ok(m) => {
                let _ = writeln!(
                    csv,
                    "{},{},{},{},{},{:.3},{}",
                    c.min_rto.as_secs_f64() * 1e3,
                    c.period.as_micros(),
                    c.occupancy,
                    c.start.as_micros(),
                    side.label(),
                    m.goodput_mbps,
                    m.timeouts
                );
            }
            Err(_) => failures += 1,
        }
    }
    let _ = std::fs::write(out.join("cutoff.csv"), &csv);
    let mean = |min_rto: Duration, period: Duration, occ: f64, side: Side, f: &dyn Fn(&CutMetrics) -> f64| {
        let v: Vec<f64> = runs
            .iter()
            .zip(&results)
            .filter(|((c, s), _)| c.min_rto == min_rto && c.period == period && c.occupancy == occ && *s == side)
            .filter_map(|(_, r)| r.as_ref().ok().map(f))
            .collect();
        if v.is_empty() {
            f64::NAN
        } else {
            v.iter().sum::<f64>() / v.len() as f64
        }
    };
    let mut table = format!(
        "\nSeed 001's path: 2 x 1 Gbit/s, 10 us, cut on the second hop (drop), one NewReno flow, 1000-byte segments, {} s;\n\
         mean goodput (Mbit/s) over {} start instants, [timeouts per run]; * = collapsed (below half of occupancy x the uncut goodput).\n\
         threshold = lowest occupancy from which on no point collapsed.\n",
        duration.as_secs(),
        CUT_STARTS.len()
    );
    for &min_rto in &min_rtos {
        for &period in &periods {
            let _ = writeln!(
                table,
                "\nmin RTO {} ms, period {} us",
                min_rto.as_secs_f64() * 1e3,
                period.as_micros()
            );
            let _ = write!(table, "{:<18}", "occupancy");
            for &o in &occupancies {
                let _ = write!(table, " {:>11}", o);
            }
            let _ = writeln!(table, "  threshold");
            for &side in sides {
                let full = mean(min_rto, period, 1.0, side, &|m| m.goodput_mbps);
                let _ = write!(table, "{:<18}", side.label());
                let mut curve = Vec::new();
                for &o in &occupancies {
                    let g = mean(min_rto, period, o, side, &|m| m.goodput_mbps);
                    let to = mean(min_rto, period, o, side, &|m| m.timeouts as f64);
                    curve.push((o, g));
                    let star = if o < 1.0 && tput_benches::seed001::collapsed(g, o, full) {
                        "*"
                    } else {
                        " "
                    };
                    let _ = write!(table, " {g:>5.0}{star}[{to:>3.0}]");
                }
                let th = threshold(&curve, full).map_or("none".to_string(), |t| t.to_string());
                let _ = writeln!(table, "  {th}");
            }
        }
    }
    (table, failures)
}

/// Seed 002's bit-error path: ns-2's Sack1 against the model's SACK and go-back-N.
fn ber(short: bool, jobs: usize, have_ns2: bool, tcl: &Path, out: &Path) -> (String, usize) {
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    enum Who {
        Ns2,
        Sack,
        Gbn,
    }
    let label = |w: Who| match w {
        Who::Ns2 => "ns-2 Sack1",
        Who::Sack => "model SACK",
        Who::Gbn => "model go-back-N",
    };
    let rtts: Vec<u32> = if short { vec![200] } else { vec![50, 100, 150, 200] };
    let seeds: u64 = if short { 2 } else { 10 };
    let (duration, warmup) = if short { (20, 5) } else { (60, 10) };
    let mut who = vec![Who::Sack, Who::Gbn];
    if have_ns2 {
        who.insert(0, Who::Ns2);
    }
    let mut runs = Vec::new();
    for &rtt_ms in &rtts {
        for seed in 1..=seeds {
            for &w in &who {
                let c = BerCase {
                    rtt_ms,
                    ber: 1e-8,
                    seed,
                    duration: Duration::from_secs(duration),
                    warmup: Duration::from_secs(warmup),
                };
                runs.push((c, w));
            }
        }
    }
    let total = runs.len();
    let results: Vec<Result<BerMetrics, String>> = run_parallel(
        &runs,
        jobs,
        |(c, w)| match w {
            Who::Ns2 => run_ber_ns2(c, tcl),
            Who::Sack => run_ber_model(c, false),
            Who::Gbn => run_ber_model(c, true),
        },
        |done, (c, w), r| {
            let what = match r {
                Ok(m) => format!(
                    "{:.2} Mbit/s, {} timeouts, {} retransmits, {} errors",
                    m.goodput_mbps, m.timeouts, m.retransmits, m.errors
                ),
                Err(e) => format!("FAILED: {e}"),
            };
            eprintln!(
                "[{done}/{total}] ber rtt {} ms seed {} {}: {what}",
                c.rtt_ms,
                c.seed,
                label(*w)
            );
        },
    );
    let mut failures = 0;
    let mut csv = String::from("rtt_ms,seed,side,goodput_mbps,timeouts,retransmits,errors\n");
    for ((c, w), r) in runs.iter().zip(&results) {
        match r {
            Ok(m) => {
                let _ = writeln!(
                    csv,
                    "{},{},{},{:.4},{},{},{}",
                    c.rtt_ms,
                    c.seed,
                    label(*w),
                    m.goodput_mbps,
                    m.timeouts,
                    m.retransmits,
                    m.errors
                );
            }
            Err(_) => failures += 1,
        }
    }
    let _ = std::fs::write(out.join("ber.csv"), &csv);
    let mut table = format!(
        "\nSeed 002's bit-error path (36.864 Mbit/s, 2000-packet queue, 2 MiB window, 1228-byte packets, BER 1e-8),\n\
         goodput from {warmup} to {duration} s, mean [min-max] over {seeds} seeds, and per run: timeouts, retransmitted segments,\n\
         packets lost to bit errors. Mathis et al.'s 1.22 MSS / (RTT sqrt(p)) for reference.\n\
         {:<6} {:<16} {:>22} {:>9} {:>9} {:>8}\n",
        "RTT", "", "goodput (Mbit/s)", "timeouts", "rexmits", "errors"
    );
    for &rtt in &rtts {
        let p = 1.0 - (1.0 - 1e-8f64).powf(1228.0 * 8.0);
        let mathis = 1.22 * 1188.0 * 8.0 / (f64::from(rtt) / 1e3 * p.sqrt()) / 1e6;
        for &w in &who {
            let ms: Vec<&BerMetrics> = runs
                .iter()
                .zip(&results)
                .filter(|((c, x), _)| c.rtt_ms == rtt && *x == w)
                .filter_map(|(_, r)| r.as_ref().ok())
                .collect();
            let n = ms.len().max(1) as f64;
            let g: Vec<f64> = ms.iter().map(|m| m.goodput_mbps).collect();
            let lo = g.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = g.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let _ = writeln!(
                table,
                "{:<6} {:<16} {:>22} {:>9.1} {:>9.1} {:>8.1}",
                format!("{rtt} ms"),
                label(w),
                format!("{:.2} [{lo:.2}-{hi:.2}]", g.iter().sum::<f64>() / n),
                ms.iter().map(|m| m.timeouts as f64).sum::<f64>() / n,
                ms.iter().map(|m| m.retransmits as f64).sum::<f64>() / n,
                ms.iter().map(|m| m.errors as f64).sum::<f64>() / n,
            );
        }
        let _ = writeln!(table, "{:<6} {:<16} {:>22.2}", "", "Mathis bound", mathis);
    }
    (table, failures)
}
