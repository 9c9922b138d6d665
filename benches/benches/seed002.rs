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
//! files beside them. Progress lines go to stderr.

use std::time::Instant;

use tput_benches::seed002::{Options, reproduce};

fn main() {
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
    let (cpu0, wall0) = (tput_benches::cpu_secs(), Instant::now());
    match reproduce(&o, |line| eprintln!("{line}")) {
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
