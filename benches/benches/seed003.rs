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

use std::time::Instant;

use tput_benches::seed003::{Options, reproduce};
use tput_lab::scenario::Transport;

fn main() {
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
    let (cpu0, wall0) = (tput_benches::cpu_secs(), Instant::now());
    match reproduce(&o, |line| eprintln!("{line}")) {
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
