//! Seed 002 reproduced (throughput vs RTT with N application buffers, with
//! bit errors, and live through the relay); see `tput_benches::seed002` for
//! the set-up.
//!
//! `cargo bench -p tput-benches --bench seed002` runs the full size (255
//! simulations of 60 s and 27 live transfers of 12 s; its run time on two
//! cores is printed at the end). Environment:
//!
//! - `TPUT_BENCH_SHORT=1`: a smoke test of every figure (RTT 0, 100,
//!   200 ms, 8 s points, three 5 s live transfers);
//! - `TPUT_BENCH_JOBS=N`: worker threads of the simulations (default: the
//!   available cores; the live transfers run one at a time);
//! - `TPUT_BENCH_FIGURES=rtt,ber,live`: only these (`live` also runs the
//!   simulated RTT points it is compared with);
//! - `TPUT_BENCH_OUT=DIR`: write there instead of `target/repro/seed002`.
//!
//! Tables go to stdout and `target/repro/seed002/tables.txt`; CSV and SVG
//! files beside them (`cpu.csv`: each simulation's CPU seconds, local runs
//! only). Progress lines go to stderr.
//!
//! Arguments (after `--`), for running the simulations elsewhere, e.g. on a
//! cluster:
//!
//! - `--plan`: print the plan, one JSON object per simulation (the same
//!   simulations in the same order as a local run with the same
//!   environment), and exit: `cargo bench -p tput-benches --bench seed002 --
//!   --plan > seed002.jsonl`, then `tputctl sweep run seed002.jsonl --index
//!   N --out DIR` for every N (GNU parallel, a Slurm job array) or `--jobs K`;
//! - `--from DIR`: build the tables and figures from the results in `DIR`
//!   instead of simulating (with the same environment as `--plan`); a
//!   missing result or one of another plan is an error naming the point.
//!
//! The `rtt` and `ber` figures come from the plan alone. The `live` figure's
//! transfers are live (real sockets through the relay), not simulations: no
//! plan holds them, and `--from` runs them here as a local run does (leave
//! them out with `TPUT_BENCH_FIGURES=rtt,ber`).

use std::time::Instant;

use tput_benches::Mode;
use tput_benches::seed002::{Options, plan, reproduce, reproduce_from};

fn main() {
    let mode = Mode::from_env("seed002");
    let env = tput_benches::BenchEnv::read("seed002");
    let mut o = if env.short {
        Options::short(env.out.clone())
    } else {
        Options::full(env.out.clone())
    };
    if let Some(jobs) = env.jobs {
        o.jobs = jobs;
    }
    if let Some(figures) = env.figures {
        o.figures = figures;
    }
    let from = match mode {
        Mode::Run => None,
        Mode::Plan => tput_benches::print_plan("seed002", plan(&o)),
        Mode::From(dir) => Some(dir),
        Mode::PlanFrom(_) => {
            eprintln!("seed002: --plan prints the whole plan in one round: give --plan or --from DIR");
            std::process::exit(2);
        }
    };
    let (cpu0, wall0) = (tput_benches::cpu_secs(), Instant::now());
    let report = match &from {
        Some(dir) => reproduce_from(&o, dir, |line| eprintln!("{line}")),
        None => reproduce(&o, |line| eprintln!("{line}")),
    };
    match report {
        Ok(report) if from.is_some() => {
            print!("{}", report.text);
            println!(
                "{} simulation results read and {} live transfers ({} failed): wall {:.1} s",
                report.points.len(),
                report.live.len(),
                report.failures.len(),
                wall0.elapsed().as_secs_f64()
            );
            tput_benches::finish(&report.files, !report.failures.is_empty());
        }
        Ok(report) => {
            print!("{}", report.text);
            let wall = wall0.elapsed().as_secs_f64();
            let cpu = cpu0.zip(tput_benches::cpu_secs()).map(|(a, b)| b - a);
            let sims: f64 = report.points.iter().map(|p| p.cpu_secs).sum();
            println!(
                "{} simulations and {} live transfers ({} failed) on {} thread(s): wall {:.1} s (live {:.1} s), CPU {} s (simulations alone {:.1} s)",
                report.points.len(),
                report.live.len(),
                report.failures.len(),
                o.jobs,
                wall,
                report.live_secs,
                cpu.map_or("?".into(), |c| format!("{c:.1}")),
                sims
            );
            tput_benches::finish(&report.files, !report.failures.is_empty());
        }
        Err(e) => {
            eprintln!("seed002: {e}");
            std::process::exit(2);
        }
    }
}
