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

use tput_benches::seed001::{Options, Seed001};

fn main() {
    tput_benches::repro::bench_main("seed001", |env| {
        let options = if env.short { Options::short() } else { Options::full() };
        Ok(Seed001 { options })
    })
}
