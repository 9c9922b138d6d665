//! Shared helpers for the benchmarks, and the paper reproductions.
//!
//! - [`seed000`]: Yamanegi, Hasegawa, Murata, "Congestion control for a
//!   guaranteed (predictable) throughput" — Figs. 4/5, 6 and 7, the aggregate
//!   controller and Fig. 6 with the inline estimator
//!   (`cargo bench -p tput-benches --bench seed000`).
//! - [`tcp_ns2`]: the simulator's TCP model against ns-2 2.35 on the seed-000
//!   dumbbell (`cargo bench -p tput-benches --bench tcp_ns2`), and its CPU
//!   time and memory against ns-2's (`--bench tcp_cpu`).
//! - [`seed003`]: R. Araki, TCP variants under power-saving link-rate
//!   control — `W_min` of NewReno, CUBIC, Vegas and Compound TCP vs delay,
//!   flows and file size, for the TCP model and QUIC
//!   (`cargo bench -p tput-benches --bench seed003`).

pub mod seed000;
pub mod seed003;
pub mod tcp_ns2;

use std::path::PathBuf;

/// CPU seconds used so far by this process, threads that have exited
/// included: `/proc/self/stat` utime + stime (100 Hz ticks, so +-10 ms);
/// `None` off Linux.
pub fn cpu_secs() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // Fields after the `(comm)`: state is field 3, utime 14 and stime 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: u64 = f.get(11)?.parse::<u64>().ok()? + f.get(12)?.parse::<u64>().ok()?;
    Some(ticks as f64 / 100.0)
}

/// CPU seconds used so far by the calling thread (`/proc/thread-self/schedstat`,
/// nanoseconds); `None` off Linux.
pub fn thread_cpu_secs() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    Some(text.split_whitespace().next()?.parse::<u64>().ok()? as f64 / 1e9)
}

/// Where reproductions write their files: `$CARGO_TARGET_DIR/repro`, else the
/// workspace's `target/repro`.
pub fn repro_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target"))
        .join("repro")
}
