//! BBR cross-check in the simulator: our BBRv3 against quinn-proto's BBR,
//! alone (1, 2, 10 flows) and beside CUBIC and NewReno, on a 100 Mbit/s,
//! 50 ms dumbbell with a 1-BDP and a 0.1-BDP buffer (`tput_benches::bbr_compare`
//! documents the cases and columns).
//!
//! `cargo bench -p tput-benches --bench bbr_compare`: 30 s per case.
//! Environment:
//!
//! - `TPUT_BENCH_SHORT=1`: 5 s per case (under a minute in all);
//! - `TPUT_BENCH_CASES=0.1 BDP`: only the cases whose name contains one of
//!   these (comma-separated), e.g. `1.0 BDP  10 x`;
//! - `TPUT_BENCH_JOBS=N`: worker threads (default: the available cores);
//! - `TPUT_BENCH_OUT=DIR`: write there instead of `target/repro/bbr_compare`.
//!
//! The table goes to stdout and `tables.txt`, the same as CSV to
//! `bbr_compare.csv` (`cpu.csv`: each simulation's CPU seconds, local runs
//! only). Progress lines go to stderr.
//!
//! Arguments (after `--`): `--plan` prints one JSON object per case (for
//! `tputctl sweep run FILE --index N --out DIR`) and exits; `--from DIR`
//! builds the table from those results instead of simulating (with the
//! same environment as `--plan`).

use tput_benches::bbr_compare::{BbrCompare, Options};

fn main() {
    tput_benches::repro::bench_main("bbr_compare", |env| {
        env.no_figures("it has cases: TPUT_BENCH_CASES")?;
        let options = if env.short { Options::short() } else { Options::full() };
        let filters: Vec<String> = std::env::var("TPUT_BENCH_CASES")
            .map(|f| {
                f.split(',')
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default();
        Ok(BbrCompare {
            options: options.only(&filters).map_err(|e| format!("TPUT_BENCH_CASES: {e}"))?,
        })
    })
}
