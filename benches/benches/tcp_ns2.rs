//! The TCP model against ns-2 2.35 on the seed-000 dumbbell, on seed 001's
//! cut-off path and on seed 002's bit-error path; see
//! `tput_benches::tcp_ns2` for what runs and what is compared.
//!
//! `cargo bench -p tput-benches --bench tcp_ns2` runs four parts (ns-2 only
//! if `ns` is installed: `apt-get install ns2`; the bench says so when it is
//! not), each with ns-2, the model with ns-2's rules and the model as it was
//! before them (`tput_benches::tcp_ns2::Model`):
//!
//! - `dumbbell`: N = 1, 2, 5, 10, 20, 30, 40 background flows plus a tagged
//!   one, Reno, NewReno, SACK and NewReno with delayed ACKs, 3 seeds, 120 s;
//! - `window`: the tagged flow's window at N = 40, NewReno, seed 1, 120 s:
//!   halvings, timeouts, the median time from a halving to the first growth,
//!   the mean window, and `window.svg` (one second of each trace);
//! - `cutoff`: one NewReno flow on the cut-off path for 10 s, periods 100 us,
//!   1 ms and 10 ms, occupancies 0.5 to 1, min RTO 200 ms (which locks the
//!   RTOs to the 1 ms and 100 us periods) and 206.18 ms, each point from 5
//!   start instants; mean goodput and the collapse threshold per curve;
//! - `ber`: seed 002's bit-error path (BER 1e-8, RTT 50 to 200 ms, 10 seeds,
//!   60 s, measured from 10 s): ns-2's `Agent/TCP/Sack1` against the model's
//!   SACK and go-back-N as seed 002 runs them.
//!
//! Environment (a value that does not parse is a one-line error):
//!
//! - `TPUT_BENCH_SHORT=1`: N = 1 and 5, one seed, 10 s; the window at N = 5
//!   for 10 s; the cut-off part at 1 ms only, occupancies 0.9, 0.97 and 1,
//!   2 s; the bit-error part at 200 ms, 2 seeds, 20 s;
//! - `TPUT_BENCH_PARTS=dumbbell,window,cutoff,ber` (default all four);
//! - `TPUT_BENCH_N=1,30`, `TPUT_BENCH_SEEDS=3` (seeds 1..=3),
//!   `TPUT_BENCH_VARIANTS=reno,newreno,sack,delack`,
//!   `TPUT_BENCH_DURATION=120` (seconds, the dumbbell);
//! - `TPUT_BENCH_JOBS=N`: worker threads (default: the available cores);
//! - `TPUT_BENCH_OUT=DIR`: where `tables.txt`, the CSV files and
//!   `window.svg` go (default `target/repro/tcp_ns2`).
//!
//! Arguments (after `--`): `--plan` prints the model's simulations of the
//! dumbbell, cut-off and bit-error parts, one JSON object each (for
//! `tputctl sweep run FILE --index N --out DIR`), and exits; `--from DIR`
//! builds the tables from those results instead of simulating them (with
//! the same environment as `--plan`). ns-2's runs and the window part's
//! (which needs the model's controller trace) are not plan points: the
//! bench makes them itself either way.

use tput_benches::tcp_ns2::{Options, TcpNs2};

fn main() {
    tput_benches::repro::bench_main("tcp_ns2", |env| {
        env.no_figures("it has parts: TPUT_BENCH_PARTS")?;
        let mut options = if env.short { Options::short() } else { Options::full() };
        options.jobs = env.jobs.unwrap_or_else(tput_lab::sweep::default_jobs);
        Ok(TcpNs2::new(options.with_env(|k| std::env::var(k).ok())?))
    })
}
