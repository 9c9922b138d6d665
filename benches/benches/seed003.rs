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
//!
//! Arguments (after `--`), for running the simulations elsewhere, e.g. on a
//! cluster. A search's next rate depends on its earlier results, so the
//! plan comes in rounds (the same rounds a local run makes; a few: the
//! first, then one per bisection step); every figure is built from them:
//!
//! - `--plan`: print the first round, one JSON object per simulation, and
//!   exit: `cargo bench -p tput-benches --bench seed003 -- --plan >
//!   r1.jsonl`, then `tputctl sweep run r1.jsonl --index N --out res/r1`
//!   for every N (GNU parallel, a Slurm job array) or `--jobs K`;
//! - `--plan --from DIR`: print the next round given the results in `DIR`
//!   and its subdirectories (`res`: write round k's results to `res/rk`);
//!   an empty plan (0 points) means that nothing is left to run;
//! - `--from DIR`: build the tables and figures from the results in `DIR`
//!   and its subdirectories instead of simulating (with the same
//!   environment as `--plan`); a simulation that is still needed is an
//!   error naming it. Results of other options are not used.

use tput_benches::seed003::{Options, Seed003};
use tput_lab::scenario::Transport;

fn main() {
    tput_benches::repro::bench_main("seed003", |env| {
        let mut options = if env.short { Options::short() } else { Options::full() };
        if let Some(f) = &env.figures {
            options.figures = f.clone();
        }
        if let Ok(t) = std::env::var("TPUT_BENCH_TRANSPORTS") {
            let mut ts = Vec::new();
            for name in t.split(',').map(str::trim).filter(|n| !n.is_empty()) {
                match name {
                    "tcp" => ts.push(Transport::Tcp),
                    "quic" => ts.push(Transport::Quic),
                    other => {
                        return Err(format!(
                            "unknown transport `{other}` in TPUT_BENCH_TRANSPORTS (known: tcp, quic)"
                        ));
                    }
                }
            }
            options.transports = ts;
        }
        Ok(Seed003 { options })
    })
}
