//! Seed 003 reproduced (R. Araki, TCP variants under power-saving link-rate
//! control: `W_min` of NewReno, CUBIC, Vegas and Compound TCP); see
//! `tput_benches::seed003` for the set-up.
//!
//! `cargo bench -p tput-benches --bench seed003` runs the full size. Environment:
//!
//! - `TPUT_BENCH_SHORT=1`: a smoke test of every figure (one seed, 4 s
//!   windows, 10 Mbit/s resolution, fewer x values);
//! - `TPUT_BENCH_JOBS=N`: worker threads (default: the available cores);
//! - `TPUT_BENCH_FIGURES=delay,flows`: only these (`delay`, `flows`, `size`,
//!   `buffer`, `iw`);
//! - `TPUT_BENCH_TRANSPORTS=tcp` or `quic`: only this transport;
//! - `TPUT_BENCH_OUT=DIR`: write there instead of `target/repro/seed003`.
//!
//! Tables go to stdout and `tables.txt`; CSV and SVG files beside them.
//! Progress lines go to stderr.
//!
//! Arguments (after `--`), for running the simulations elsewhere, e.g. on a
//! cluster. A search's next rate depends on its earlier results, so the
//! plan comes in rounds (the same rounds a local run makes; a few: the
//! first, then one per bisection step); every figure is built from them:
//!
//! - `--plan`: print the first round, one JSON object per simulation, and
//!   exit: `cargo bench -p tput-benches --bench seed003 -- --plan >
//!   r1.jsonl`, then `tputctl sweep run r1.jsonl --index N --out res/r1`
//!   for every N (GNU parallel, a Slurm job array) or `--jobs K`;
//! - `--plan --from DIR`: print the next round given the results in `DIR`
//!   and its subdirectories (`res`: write round k's results to `res/rk`);
//!   an empty plan (0 points) means that nothing is left to run;
//! - `--from DIR`: build the tables and figures from the results in `DIR`
//!   and its subdirectories instead of simulating (with the same
//!   environment as `--plan`); a simulation that is still needed is an
//!   error naming it. Results of other options are not used.

use std::time::Instant;

use tput_benches::Mode;
use tput_benches::seed003::{Options, plan, reproduce, reproduce_from};
use tput_lab::scenario::Transport;

fn main() {
    let mode = Mode::from_env("seed003");
    let env = tput_benches::BenchEnv::read("seed003");
    let mut o = if env.short {
        Options::short(env.out.clone())
    } else {
        Options::full(env.out.clone())
    };
    if let Some(jobs) = env.jobs {
        o.jobs = jobs;
    }
    let list = |v: String| -> Vec<String> {
        v.split(',')
            .map(|f| f.trim().to_string())
            .filter(|f| !f.is_empty())
            .collect()
    };
    if let Ok(figs) = std::env::var("TPUT_BENCH_FIGURES") {
        o.figures = list(figs);
    }
    if let Ok(t) = std::env::var("TPUT_BENCH_TRANSPORTS") {
        let mut ts = Vec::new();
        for name in list(t) {
            match name.as_str() {
                "tcp" => ts.push(Transport::Tcp),
                "quic" => ts.push(Transport::Quic),
                other => {
                    eprintln!("seed003: unknown transport `{other}` in TPUT_BENCH_TRANSPORTS (known: tcp, quic)");
                    std::process::exit(2);
                }
            }
        }
        o.transports = ts;
    }
    let from = match mode {
        Mode::Run => None,
        Mode::Plan => tput_benches::print_plan("seed003", plan(&o, None)),
        Mode::PlanFrom(dir) => tput_benches::print_plan("seed003", plan(&o, Some(&dir))),
        Mode::From(dir) => Some(dir),
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
                "{} searches from {} simulation results ({} failed searches)",
                report.searches.len(),
                report.runs,
                report.failures.len()
            );
            for f in &report.failures {
                println!("failed: {f}");
            }
            tput_benches::finish(&report.files, !report.failures.is_empty());
        }
        Ok(report) => {
            print!("{}", report.text);
            let wall = wall0.elapsed().as_secs_f64();
            let cpu = cpu0.zip(tput_benches::cpu_secs()).map(|(a, b)| b - a);
            println!(
                "{} searches, {} simulations ({} failed searches) on {} thread(s): wall {:.1} s, CPU {} s",
                report.searches.len(),
                report.runs,
                report.failures.len(),
                o.jobs,
                wall,
                cpu.map_or("?".into(), |c| format!("{c:.1}")),
            );
            for f in &report.failures {
                println!("failed: {f}");
            }
            tput_benches::finish(&report.files, !report.failures.is_empty());
        }
        Err(e) => {
            eprintln!("seed003: {e}");
            std::process::exit(2);
        }
    }
}
