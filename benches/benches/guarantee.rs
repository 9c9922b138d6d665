//! Does the throughput guarantee hold, and at what cost? See
//! `tput_benches::guarantee` for the set-up and docs/guarantee.md for the
//! measured figures.
//!
//! `cargo bench -p tput-benches --bench guarantee` runs the full size (about
//! 1 700 simulations of 120 s, then two traced runs, six live runs of 60 s
//! and the eight of `live-safety`; an hour or more on two cores). Environment:
//!
//! - `TPUT_BENCH_SHORT=1`: every figure at toy size (N in {1, 10}, one seed,
//!   5 s points, live runs of 6 s against 3 connections, 4 overbooked);
//! - `TPUT_BENCH_JOBS=N`: worker threads (default: the available cores);
//! - `TPUT_BENCH_FIGURES=grid,live`: only these (`grid`, `fig7`,
//!   `overbooked`, `mechanism`, `live`, `safety`, `live-safety`);
//! - `TPUT_BENCH_COMPETITORS=quic-bbr,quic-newreno`: the grid against only
//!   these kinds (`quic-newreno`, `quic-cubic`, `quic-bbr`, `tcp-reno`,
//!   `tcp-cubic`, `tcp-bbr`);
//! - `TPUT_BENCH_N=30,40`: the competitor counts of `grid`, `fig7` and
//!   `overbooked` instead of 1, 2, 5, 10, 15, 20, 30, 40;
//! - `TPUT_BENCH_VARIANTS=tcp-default`: the grid's tested variants, of
//!   `default`, `paper`, `newreno`, `fixed`, `default-inline`,
//!   `tcp-default`, `tcp-paper`, `tcp-newreno` (a cost table needs its
//!   three: `default,paper,newreno` or `tcp-default,tcp-paper,tcp-newreno`);
//! - `TPUT_BENCH_TCP_PROFILE=linux`: every TCP-model flow of the grid,
//!   tested and competing, in the Linux profile (`tcp = { profile =
//!   "linux" }`, 1000-byte segments: RACK-TLP over SACK, PRR, timestamps,
//!   40 ms delayed ACKs, IW 10 and HyStart++; TCP Reno competitors then run
//!   `newreno`) instead of `ns2` (the default: ns-2 2.35's defaults, SACK
//!   or Reno recovery, no delayed ACKs, Limited Transmit);
//! - `TPUT_BENCH_OUT=DIR`: write there instead of `target/repro/guarantee`;
//! - the `safety` figure (RFC 9743's evaluation, `tput_benches::guarantee::safety`;
//!   1 255 runs of 60 s at full size, 38 of 15 s in short mode):
//!   `TPUT_BENCH_SAFETY_ROWS=a,c` (rows `a`-`i`),
//!   `TPUT_BENCH_SAFETY_SEEDS=N` (seeds 1..=N, default 5),
//!   `TPUT_BENCH_SAFETY_SECS=S` (default 60), `TPUT_BENCH_SAFETY_SHORT=1`
//!   (a case or two per row at the size given) and
//!   `TPUT_BENCH_SAFETY_CASES=30newreno-q30,c-drop` (only the cases whose
//!   name contains one of these).
//!
//! The number of simulations of each figure is printed to stderr first.
//!
//! Arguments (after `--`): `--plan` prints the simulations of `grid`, `fig7`
//! and `overbooked` as plan points for `tputctl sweep run`; `--from DIR`
//! builds the tables and figures from their results (the `mechanism`,
//! `live` and `live-safety` figures run where `--from` runs).

use tput_benches::guarantee::{Guarantee, Options};

fn main() {
    tput_benches::repro::bench_main("guarantee", |env| {
        let mut options = if env.short { Options::short() } else { Options::full() };
        if let Some(f) = &env.figures {
            options.figures = f.clone();
        }
        if let Ok(list) = std::env::var("TPUT_BENCH_COMPETITORS") {
            options.competitors =
                tput_benches::guarantee::competitors_from(&list).map_err(|e| format!("TPUT_BENCH_COMPETITORS: {e}"))?;
        }
        options.safety = options.safety.with_env(|k| std::env::var(k).ok())?;
        let options = options.with_env(|k| std::env::var(k).ok())?;
        let g = Guarantee { options };
        let sizes = g.plan_sizes()?;
        eprintln!(
            "guarantee: plan of {} simulations ({})",
            sizes.iter().map(|(_, n)| n).sum::<usize>(),
            sizes
                .iter()
                .map(|(f, n)| format!("{f} {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        );
        Ok(g)
    })
}
