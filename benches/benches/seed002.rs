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
//! - `TPUT_BENCH_TCP_PROFILE=linux`: the TCP model's flows in the Linux
//!   profile (`tcp = { profile = "linux" }`: RACK-TLP over SACK, PRR,
//!   timestamps, 40 ms delayed ACKs, IW 10, HyStart++; go-back-N keeps its
//!   recovery; receive windows and segments as with `ns2`) instead of `ns2`
//!   (the default; `tput_benches::seed002::tcp_spec`);
//! - `TPUT_BENCH_TCP_ONLY=1`: only the TCP model's points of `rtt` and `ber`
//!   (the QUIC columns, bounds and plateaus then show `-`);
//! - `TPUT_BENCH_OUT=DIR`: write there instead of `target/repro/seed002`.
//!
//! Tables go to stdout and `target/repro/seed002/tables.txt`; CSV and SVG
//! files beside them (`cpu.csv`: each simulation's CPU seconds, local runs
//! only). Progress lines go to stderr.
//!
//! Arguments (after `--`), for running the simulations elsewhere, e.g. on a
//! cluster:
//!
//! - `--plan`: print the plan, one JSON object per simulation (the same
//!   simulations in the same order as a local run with the same
//!   environment), and exit: `cargo bench -p tput-benches --bench seed002 --
//!   --plan > seed002.jsonl`, then `tputctl sweep run seed002.jsonl --index
//!   N --out DIR` for every N (GNU parallel, a Slurm job array) or `--jobs K`;
//! - `--from DIR`: build the tables and figures from the results in `DIR`
//!   instead of simulating (with the same environment as `--plan`); a
//!   missing result or one of another plan is an error naming the point.
//!
//! The `rtt` and `ber` figures come from the plan alone. The `live` figure's
//! transfers are live (real sockets through the relay), not simulations: no
//! plan holds them, and `--from` runs them here as a local run does (leave
//! them out with `TPUT_BENCH_FIGURES=rtt,ber`).

use tput_benches::seed002::{Options, Seed002};

fn main() {
    tput_benches::repro::bench_main("seed002", |env| {
        let mut options = if env.short { Options::short() } else { Options::full() };
        if let Some(f) = &env.figures {
            options.figures = f.clone();
        }
        let options = options.with_env(|k| std::env::var(k).ok())?;
        Ok(Seed002 { options })
    })
}
