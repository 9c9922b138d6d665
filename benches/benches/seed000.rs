//! Seed 000 reproduced (Figs. 4/5, 6, 7, the aggregate controller, Fig. 6
//! with the inline estimator); see `tput_benches::seed000` for the set-up.
//!
//! `cargo bench -p tput-benches --bench seed000` runs the full size (660
//! simulations of 120 s and the 20 s timeline; tens of minutes on two
//! cores). Environment:
//!
//! - `TPUT_BENCH_SHORT=1`: a smoke test of every figure (x in {1, 10}, one
//!   seed, 5 s points), well under a minute in a release build;
//! - `TPUT_BENCH_JOBS=N`: worker threads (default: the available cores);
//! - `TPUT_BENCH_FIGURES=fig6,fig7`: only these (`fig4`, `fig6`,
//!   `fig6-inline`, `fig6-eq45`, `fig7`, `fig6-tcp`; Fig. 6's guarantee curve
//!   is the baseline of the inline and eq. 4/5 variants);
//! - `TPUT_BENCH_OUT=DIR`: write there instead of `target/repro/seed000`.
//!
//! Tables go to stdout and `target/repro/seed000/tables.txt`; CSV and SVG
//! files beside them (`cpu.csv`: each simulation's CPU seconds, local runs
//! only). Progress lines go to stderr.
//!
//! Arguments (after `--`), for running the reproduction elsewhere, e.g. on a
//! cluster (every figure, the Fig. 4/5 timeline included, is built from the
//! plan's results):
//!
//! - `--plan`: print the plan, one JSON object per simulation (the same
//!   simulations in the same order as a local run with the same environment),
//!   and exit: `cargo bench -p tput-benches --bench seed000 -- --plan >
//!   seed000.jsonl`, then `tputctl sweep run seed000.jsonl --index N --out
//!   DIR` for every N (GNU parallel, a Slurm job array) or `--jobs K`;
//! - `--from DIR`: build the tables and figures from the results in `DIR`
//!   instead of simulating (with the same environment as `--plan`); a
//!   missing result or one of another plan is an error naming the point.

use std::time::Instant;

use tput_benches::Mode;
use tput_benches::seed000::{Options, plan, reproduce, reproduce_from};

fn main() {
    let mode = Mode::from_env("seed000");
    let env = tput_benches::BenchEnv::read("seed000");
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
        Mode::Plan => tput_benches::print_plan("seed000", plan(&o)),
        Mode::From(dir) => Some(dir),
        Mode::PlanFrom(_) => {
            eprintln!("seed000: --plan prints the whole plan in one round: give --plan or --from DIR");
            std::process::exit(2);
        }
    };
    let (cpu0, wall0) = (tput_benches::cpu_secs(), Instant::now());
    let report = match &from {
        Some(dir) => reproduce_from(&o, dir),
        None => reproduce(&o, |line| eprintln!("{line}")),
    };
    match report {
        Ok(report) if from.is_some() => {
            print!("{}", report.text);
            println!(
                "{} simulation results read ({} failed)",
                report.points.len() + report.failures.len() + usize::from(report.timeline.is_some()),
                report.failures.len()
            );
            tput_benches::finish(&report.files, !report.failures.is_empty());
        }
        Ok(report) => {
            print!("{}", report.text);
            let wall = wall0.elapsed().as_secs_f64();
            let cpu = cpu0.zip(tput_benches::cpu_secs()).map(|(a, b)| b - a);
            let sims: f64 = report.points.iter().map(|p| p.cpu_secs).sum::<f64>()
                + report.timeline.as_ref().map_or(0.0, |t| t.cpu_secs);
            println!(
                "{} simulations ({} failed) on {} thread(s): wall {:.1} s, CPU {} s (simulations alone {:.1} s)",
                report.points.len() + report.failures.len() + usize::from(report.timeline.is_some()),
                report.failures.len(),
                o.jobs,
                wall,
                cpu.map_or("?".into(), |c| format!("{c:.1}")),
                sims
            );
            tput_benches::finish(&report.files, !report.failures.is_empty());
        }
        Err(e) => {
            eprintln!("seed000: {e}");
            std::process::exit(2);
        }
    }
}
