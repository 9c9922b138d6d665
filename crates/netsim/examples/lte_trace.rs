//! Writes an LTE-like packet-delivery trace in Mahimahi's format to stdout:
//! one line per 1500-byte delivery opportunity, in milliseconds, from a
//! seeded Markov-modulated rate ([`tput_netsim::DeliveryTrace::markov`]).
//! Not a measurement of any network: a reproducible stand-in for one.
//!
//! ```sh
//! cargo run -p tput-netsim --example lte_trace -- SEED DURATION_MS > scenarios/traces/x.trace
//! ```
//!
//! The rate takes one of 2, 5, 10, 20 and 40 Mbit/s; every 200 ms it moves
//! one state down or up with probability 0.2 each (reflecting at the ends)
//! and otherwise stays. The shipped `scenarios/traces/lte-markov-*.trace`
//! were made with seeds 1 and 2 and 10000 ms.

use std::process::ExitCode;
use std::time::Duration;

use tput_netsim::{DeliveryTrace, Rate};

const RATES: [Rate; 5] = [
    Rate::from_mbit_per_sec(2),
    Rate::from_mbit_per_sec(5),
    Rate::from_mbit_per_sec(10),
    Rate::from_mbit_per_sec(20),
    Rate::from_mbit_per_sec(40),
];
const DWELL: Duration = Duration::from_millis(200);
const MOVE_PROB: f64 = 0.2;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parse = |i: usize, default: u64, what: &str| -> Result<u64, String> {
        args.get(i).map_or(Ok(default), |a| {
            a.parse().map_err(|_| format!("{what}: `{a}` is not a whole number"))
        })
    };
    let run = || -> Result<(), String> {
        if args.len() > 2 {
            return Err("usage: lte_trace [SEED [DURATION_MS]]".into());
        }
        let seed = parse(0, 1, "SEED")?;
        let duration_ms = parse(1, 10_000, "DURATION_MS")?;
        let trace = DeliveryTrace::markov(seed, Duration::from_millis(duration_ms), &RATES, DWELL, MOVE_PROB)
            .map_err(|e| e.to_string())?;
        eprintln!(
            "{} opportunities over {} ms: mean {:.2} Mbit/s",
            trace.opportunities().len(),
            trace.period_ms(),
            trace.mean_rate().bits_per_sec() as f64 / 1e6
        );
        print!("{}", trace.to_text());
        Ok(())
    };
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("lte_trace: {e}");
            ExitCode::from(2)
        }
    }
}
