//! HyStart++ (RFC 9406) beside plain slow start on a large-BDP, deep-buffer
//! path: one flow, 100 Mbit/s, 100 ms RTT, a DropTail queue of two
//! bandwidth-delay products, NewReno and CUBIC over QUIC and over the TCP
//! model (SACK recovery), with `hystart=false` and `hystart=true`.
//!
//! `cargo bench -p tput-benches --bench hystart`: 10 s per run (8 runs,
//! well under a minute); `TPUT_BENCH_SHORT=1`: 3 s per run;
//! `TPUT_BENCH_JOBS=N`: worker threads (default: the available cores);
//! `TPUT_BENCH_OUT=DIR` (default `target/repro/hystart`): `tables.txt`,
//! `hystart.csv`. On the reproduction framework (`tput_benches::hystart`):
//! `-- --plan` prints the runs as plan points, `-- --from DIR` builds the
//! table from their results.
//!
//! Columns: when the flow left standard slow start (the end of the first
//! 100-ms interval whose record shows another phase or a finite ssthresh),
//! when it first lost a packet, packets lost in the run, the largest window,
//! when the delivered rate first reached 90 % of the link (an interval's
//! goodput), and the mean goodput over the run. QUIC flows get a 4 MiB
//! receive window (3.4 BDP): quinn-proto's default (about 1 BDP here) would
//! hide slow start's overshoot, and with much more, plain slow start's
//! losses leave quinn-proto 0.11's receiver more than its 1024 gaps in one
//! stream, which it treats as an error and closes the connection.

use std::time::Duration;

use tput_benches::hystart::Hystart;

fn main() {
    tput_benches::repro::bench_main("hystart", |env| {
        env.no_figures("it has one table")?;
        Ok(Hystart {
            duration: Duration::from_secs(if env.short { 3 } else { 10 }),
        })
    })
}
