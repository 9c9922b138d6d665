//! The queue disciplines against ns-2 and ns-3: netsim's RED against ns-2's
//! `Queue/RED` on the seed-000 dumbbell, its CoDel and FQ-CoDel against
//! ns-3's `CoDelQueueDisc` and `FqCoDelQueueDisc` with 1 and 10 NewReno flows
//! and a CUBIC/BBR pair, the TCP model against ns-2's and ns-3's TCP; see
//! `tput_benches::aqm_check` for the paths, what is compared and the
//! tolerances.
//!
//! `cargo bench -p tput-benches --bench aqm_check` runs our side, then each
//! reference when it is installed (and says so when it is not):
//!
//! - ns-2 2.35: `apt-get install ns2` (the `ns` binary; script
//!   `benches/ns2/red_compare.tcl`);
//! - ns-3: `pip install ns3` (its Python bindings, `from ns import ns`;
//!   measured with 3.44; script `benches/ns3/aqm_compare.py`, tens of
//!   seconds per 60-s run).
//!
//! It prints one table per case (ours, the reference, the difference, the
//! tolerance, within or not) and writes `aqm_check.csv` (the table),
//! `runs.csv` (every run of both sides), `tables.txt` and the references'
//! raw output (`ref/`) to `TPUT_BENCH_OUT` (default `target/repro/aqm_check`).
//!
//! Environment (a value that does not parse is a one-line error):
//!
//! - `TPUT_BENCH_SHORT=1`: RED with 1 and 10 background flows, 1 seed, 10 s;
//! - `TPUT_BENCH_PARTS=red,codel,fq_codel` (default all three);
//! - `TPUT_BENCH_SEEDS=3` (seeds 1..=3), `TPUT_BENCH_DURATION=60` (seconds);
//! - `TPUT_BENCH_JOBS=N`: worker threads (default: the available cores);
//! - `TPUT_BENCH_REUSE_REF=1`: read a reference run's raw output back from
//!   `ref/` when it is there instead of running it again.
//!
//! Arguments (after `--`): `--plan` prints our simulations as plan points
//! (for `tputctl sweep run FILE --index N --out DIR`) and exits; `--from DIR`
//! builds the tables from those results. The reference runs are not plan
//! points: the bench makes them itself either way.

use tput_benches::aqm_check::{AqmCheck, Options};

fn main() {
    tput_benches::repro::bench_main("aqm_check", |env| {
        env.no_figures("it has parts: TPUT_BENCH_PARTS")?;
        let mut options = if env.short { Options::short() } else { Options::full() };
        options.jobs = env.jobs.unwrap_or_else(tput_lab::sweep::default_jobs);
        Ok(AqmCheck::new(options.with_env(|k| std::env::var(k).ok())?))
    })
}
