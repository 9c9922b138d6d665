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
//! - `TPUT_BENCH_N=10,30`: the x axis (numbers of Reno flows) instead of
//!   1, 2, 5, 10, 15, 20, 25, 30, 35, 40;
//! - `TPUT_BENCH_TCP_PROFILE=linux`: `fig6-tcp`'s TCP-model flows (the
//!   guarantee flow over TCP and the TCP competitors) in the Linux profile
//!   (`tcp = { profile = "linux" }`, 1000-byte segments: RACK-TLP over
//!   SACK, PRR, timestamps, 40 ms delayed ACKs, IW 10, HyStart++; the
//!   competitors run `newreno`) instead of `ns2` (the default: ns-2 2.35's
//!   `Agent/TCP/Reno` with its defaults);
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

use tput_benches::seed000::{Options, Seed000};

fn main() {
    tput_benches::repro::bench_main("seed000", |env| {
        let mut options = if env.short { Options::short() } else { Options::full() };
        if let Some(f) = &env.figures {
            options.figures = f.clone();
        }
        let options = options.with_env(|k| std::env::var(k).ok())?;
        Ok(Seed000 { options })
    })
}
