//! Seed 001 reproduced (Morokoshi & Yakoh, periodic data-link cut-offs vs
//! TCP throughput, and the paper's two remedies); see
//! `tput_benches::seed001` for the set-up.
//!
//! `cargo bench -p tput-benches --bench seed001` runs the full size: the
//! main sweep (4 periods x 12 occupancies x 3 phase seeds x 4 transports,
//! 10 s each; occupancy 1 once per period), the remedy, sensitivity and
//! placement sweeps (4 periods x 4 occupancies x 1 seed x 4 transports x 8
//! studies, 3 s each) and the mechanism timelines (10 s). Environment:
//!
//! - `TPUT_BENCH_SHORT=1`: a smoke test (2 s main runs, 4 occupancies, one
//!   seed, 1 s side runs at one occupancy);
//! - `TPUT_BENCH_JOBS=N`: worker threads (default: the available cores);
//! - `TPUT_BENCH_OUT=DIR`: write there instead of `target/repro/seed001`.
//!
//! Tables go to stdout and `tables.txt`; CSV and SVG files beside them
//! (`cpu.csv`: each sweep simulation's CPU seconds, local runs only).
//! Progress lines go to stderr.
//!
//! Arguments (after `--`), for running the sweeps elsewhere, e.g. on a
//! cluster:
//!
//! - `--plan`: print the plan, one JSON object per sweep simulation (the
//!   same simulations in the same order as a local run with the same
//!   environment; each counts its timeouts as it runs), and exit: `cargo
//!   bench -p tput-benches --bench seed001 -- --plan > seed001.jsonl`, then
//!   `tputctl sweep run seed001.jsonl --index N --out DIR` for every N (GNU
//!   parallel, a Slurm job array) or `--jobs K`;
//! - `--from DIR`: build the tables and figures from the results in `DIR`
//!   instead of simulating the sweeps (with the same environment as
//!   `--plan`); a missing result or one of another plan is an error naming
//!   the point.
//!
//! Every table and the sweep figures come from the plan. The mechanism
//! timelines (`timeline_*.svg`, a few simulations) need the controllers'
//! traces, which a point's result does not keep: `--from` runs them here, as
//! a local run does.

use std::time::Instant;

use tput_benches::Mode;
use tput_benches::seed001::{Options, plan, reproduce, reproduce_from};

fn main() {
    let mode = Mode::from_env("seed001");
    let env = tput_benches::BenchEnv::read("seed001");
    let mut o = if env.short {
        Options::short(env.out.clone())
    } else {
        Options::full(env.out.clone())
    };
    if let Some(jobs) = env.jobs {
        o.jobs = jobs;
    }
    let from = match mode {
        Mode::Run => None,
        Mode::Plan => tput_benches::print_plan("seed001", plan(&o)),
        Mode::From(dir) => Some(dir),
        Mode::PlanFrom(_) => {
            eprintln!("seed001: --plan prints the whole plan in one round: give --plan or --from DIR");
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
                "{} simulation results read ({} failed), timelines simulated here in {:.1} CPU-s",
                report.points.len() + report.failures.len(),
                report.failures.len(),
                report.timeline_cpu_secs
            );
            tput_benches::finish(&report.files, !report.failures.is_empty());
        }
        Ok(report) => {
            print!("{}", report.text);
            let wall = wall0.elapsed().as_secs_f64();
            let cpu = cpu0.zip(tput_benches::cpu_secs()).map(|(a, b)| b - a);
            let sims: f64 = report.points.iter().map(|p| p.cpu_secs).sum::<f64>() + report.timeline_cpu_secs;
            println!(
                "{} simulations ({} failed) on {} thread(s): wall {:.1} s, CPU {} s (simulations alone {:.1} s)",
                report.points.len() + report.failures.len(),
                report.failures.len(),
                o.jobs,
                wall,
                cpu.map_or("?".into(), |c| format!("{c:.1}")),
                sims
            );
            tput_benches::finish(&report.files, !report.failures.is_empty());
        }
        Err(e) => {
            eprintln!("seed001: {e}");
            std::process::exit(2);
        }
    }
}
