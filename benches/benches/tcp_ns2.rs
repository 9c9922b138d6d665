//! The TCP model against ns-2 2.35 on the seed-000 dumbbell; see
//! `tput_benches::tcp_ns2` for what runs and what is compared.
//!
//! `cargo bench -p tput-benches --bench tcp_ns2` runs N = 1, 2, 5, 10, 20,
//! 30, 40 background flows plus a tagged one, Reno and NewReno, 3 seeds, 120 s,
//! on both sides (ns-2 only if `ns` is installed: `apt-get install ns2`; the
//! bench says so when it is not). Environment:
//!
//! - `TPUT_BENCH_SHORT=1`: N = 1 and 5, one seed, 10 s;
//! - `TPUT_BENCH_N=1,30`, `TPUT_BENCH_SEEDS=3` (seeds 1..=3),
//!   `TPUT_BENCH_VARIANTS=reno,newreno`, `TPUT_BENCH_DURATION=120` (seconds);
//! - `TPUT_BENCH_JOBS=N`: runs at a time (default 1);
//! - `TPUT_BENCH_OUT=DIR`: where `tcp_ns2.csv` goes (default
//!   `target/repro/tcp_ns2`).

use std::fmt::Write as _;
use std::path::PathBuf;
use std::time::Duration;

use tput_benches::tcp_ns2::{Case, Metrics, Windows, agrees, header, means, ns2_available, row, run_model, run_ns2};
use tput_lab::sweep::run_parallel;
use tput_lab::tcp::Recovery;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Ns2,
    Model(Windows),
}

impl Side {
    fn label(self) -> String {
        match self {
            Side::Ns2 => "ns-2 2.35".into(),
            Side::Model(w) => format!("model {}", w.name()),
        }
    }
}

fn env_list<T: std::str::FromStr>(key: &str) -> Option<Vec<T>> {
    let v = std::env::var(key).ok()?;
    Some(v.split(',').filter_map(|x| x.trim().parse().ok()).collect())
}

fn main() {
    let short = std::env::var_os("TPUT_BENCH_SHORT").is_some_and(|v| v == "1");
    let ns: Vec<u32> = env_list("TPUT_BENCH_N").unwrap_or(if short {
        vec![1, 5]
    } else {
        vec![1, 2, 5, 10, 20, 30, 40]
    });
    let seeds: u64 = std::env::var("TPUT_BENCH_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if short { 1 } else { 3 });
    let secs: u64 = std::env::var("TPUT_BENCH_DURATION")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(if short { 10 } else { 120 });
    let variants: Vec<Recovery> = env_list::<String>("TPUT_BENCH_VARIANTS")
        .unwrap_or_else(|| vec!["reno".into(), "newreno".into()])
        .iter()
        .filter_map(|v| match v.as_str() {
            "reno" => Some(Recovery::Reno),
            "newreno" => Some(Recovery::NewReno),
            _ => None,
        })
        .collect();
    let jobs: usize = std::env::var("TPUT_BENCH_JOBS")
        .ok()
        .and_then(|j| j.parse().ok())
        .unwrap_or(1);
    let out = std::env::var_os("TPUT_BENCH_OUT")
        .map(PathBuf::from)
        .unwrap_or_else(|| tput_benches::repro_dir().join("tcp_ns2"));
    let tcl = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("ns2/tcp_compare.tcl");
    let have_ns2 = ns2_available();
    if !have_ns2 {
        println!("ns-2 is not installed (no `ns` on the PATH; apt-get install ns2): the model's side only");
    }
    let mut sides = Vec::new();
    if have_ns2 {
        sides.push(Side::Ns2);
    }
    sides.push(Side::Model(Windows::Ns2));
    sides.push(Side::Model(Windows::Rfc9002));

    let mut runs = Vec::new();
    for &recovery in &variants {
        for &n in &ns {
            for seed in 1..=seeds {
                for &side in &sides {
                    let case = Case {
                        n_background: n,
                        seed,
                        recovery,
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
            Side::Ns2 => run_ns2(case, &tcl),
            Side::Model(w) => run_model(case, *w),
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
                case.recovery,
                case.n_background,
                case.seed,
                side.label()
            );
        },
    );

    let mut csv =
        String::from("recovery,n_background,seed,side,utilisation,jain,tagged_10,tagged_20,timeouts_per_flow_min\n");
    let mut table = format!(
        "TCP model vs ns-2 2.35: seed-000 dumbbell, N background + 1 tagged flow, 1000-byte segments, no delayed ACKs,\n\
         starts uniform in [0, 1) s, {secs} s, mean over {seeds} seed(s). util = bottleneck bytes sent / capacity;\n\
         >=10M / >=20M = tagged flow's fraction of 1-s slots at >= 10 / 20 Mbit/s; TO/f/m = timeouts per flow per minute.\n\
         agree (model iw2/lw1 vs ns-2): util within 0.03, Jain within 0.02, both slot fractions within 0.15, timeouts within 2x.\n"
    );
    let mut failures = 0;
    for &recovery in &variants {
        let _ = writeln!(table, "\n{recovery}");
        for &n in &ns {
            let _ = writeln!(table, "N = {n:<3} {}", header());
            let mut per_side: Vec<(Side, Vec<Metrics>)> = Vec::new();
            for &side in &sides {
                let ms: Vec<Metrics> = runs
                    .iter()
                    .zip(&results)
                    .filter(|((c, s), _)| c.recovery == recovery && c.n_background == n && *s == side)
                    .filter_map(|((c, _), r)| match r {
                        Ok(m) => {
                            let _ = writeln!(
                                csv,
                                "{recovery},{n},{},{},{},{},{},{},{}",
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
            let model = per_side.iter().find(|(s, _)| *s == Side::Model(Windows::Ns2));
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
    print!("{table}");
    if failures > 0 {
        println!("{failures} run(s) FAILED (see stderr)");
    }
    if std::fs::create_dir_all(&out).is_ok() {
        let _ = std::fs::write(out.join("tcp_ns2.csv"), &csv);
        let _ = std::fs::write(out.join("tables.txt"), &table);
        println!("wrote {}", out.join("tcp_ns2.csv").display());
    }
    if failures > 0 {
        std::process::exit(1);
    }
}
