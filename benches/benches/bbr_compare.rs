//! BBR cross-check in the simulator: our BBRv3 against quinn-proto's BBR,
//! alone (1, 2, 10 flows) and beside CUBIC and NewReno, on a 100 Mbit/s,
//! 50 ms dumbbell with a 1-BDP and a 0.1-BDP buffer (`tput_benches::bbr_compare`
//! documents the cases and columns).
//!
//! `cargo bench -p tput-benches --bench bbr_compare [-- FILTER]`: 30 s per
//! case; `TPUT_BENCH_SHORT=1` runs 5 s per case (under a minute in all).
//! `FILTER`, e.g. `0.1 BDP`, runs only the cases whose name contains it.

use std::time::{Duration, Instant};

use tput_benches::bbr_compare::{Row, cases, run_case, table};

fn main() {
    let short = std::env::var_os("TPUT_BENCH_SHORT").is_some_and(|v| v == "1");
    let secs = if short { 5 } else { 30 };
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let started = Instant::now();
    let mut rows: Vec<Row> = Vec::new();
    for case in cases() {
        let name = case.name();
        if !(filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str()))) {
            continue;
        }
        match run_case(&case, Duration::from_secs(secs)) {
            Ok(row) => rows.push(row),
            Err(e) => {
                eprintln!("bbr_compare: {e}");
                std::process::exit(1);
            }
        }
    }
    println!(
        "100 Mbit/s, 50 ms RTT dumbbell, {secs} s per case ({:.1} s wall)\n",
        started.elapsed().as_secs_f64()
    );
    print!("{}", table(&rows));
}
