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
//! Tables go to stdout and `tables.txt`; CSV and SVG files beside them.
//! Progress lines go to stderr.

use std::time::Instant;

use tput_benches::seed001::{Options, reproduce};

fn main() {
    let env = tput_benches::BenchEnv::read("seed001");
    let mut o = if env.short {
        Options::short(env.out.clone())
    } else {
        Options::full(env.out.clone())
    };
    if let Some(jobs) = env.jobs {
        o.jobs = jobs;
    }
    let (cpu0, wall0) = (tput_benches::cpu_secs(), Instant::now());
    match reproduce(&o, |line| eprintln!("{line}")) {
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
