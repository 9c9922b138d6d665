//! Experiments: everything between the building blocks (`tput-cc`,
//! `tput-netsim`, `tput-transport`) and the people who run them (`tputctl`,
//! the reproductions in `tput-benches`).
//!
//! Modules:
//!
//! - [`scenario`]: the scenario schema (TOML/JSON, every key documented in
//!   `docs/scenarios.md`), its validation and [`scenario::run`], which runs
//!   real QUIC connections in virtual time; same scenario and seed, same
//!   result, bit for bit.
//! - [`host`]: [`QuicHost`](host::QuicHost), the simulator host of the
//!   transport's sans-IO node, and the bandwidth oracle as a controller input.
//! - [`files`]: file-transfer workloads: the accounting of every file and
//!   the TCP model's file hosts.
//! - [`report`]: what a run produced, rendered: the summary, tables, CSV,
//!   JSON and SVG files that `tputctl sim` writes.
//! - [`harm`]: what a flow costs the others: harm against NewReno in the
//!   same seat, per second and per flow.
//! - [`stats`]: the small statistics every report uses (mean, Jain's index,
//!   percentiles).
//! - [`plot`]: the SVG charts.
//! - [`sweep`]: running many independent points on all cores, in a fixed
//!   output order.
//! - [`plan`]: sweeps as data: points that run anywhere, results merged.
//! - [`timeouts`]: counting QUIC's probe timeouts and the TCP model's
//!   retransmission timeouts of a run.
//! - [`live`]: the live tooling. Always: live transfers rendered (the
//!   end-of-run summary, the `--json` document and the text lines of
//!   `tputctl send`). With the `live` feature, the parts that bind sockets:
//!   `live::relay` (the UDP relay through simulated links), `live::faults`
//!   (the live fault table) and `live::spawn_server`.
//! - `fuzz` (feature `fuzzing`, hidden): the fuzz harnesses of the scenario
//!   and link-list parsers that `fuzz/` runs under libFuzzer and the test
//!   suite replays over the corpus.
//!
//! # Example
//!
//! ```
//! use tput_lab::scenario::{run, Scenario};
//!
//! let scenario = Scenario::from_toml_str(r#"
//!     duration = "2s"
//!     [topology]
//!     kind = "dumbbell"
//!     bottleneck = { rate = "20Mbit/s", delay = "10ms", queue_packets = 50 }
//!     access = { rate = "1Gbit/s", delay = "1ms" }
//!     [[flows]]
//!     cc = "cubic"
//!     [[flows]]
//!     cc = "vegas"
//! "#)?;
//! let result = run(&scenario, |_| {})?;
//! assert_eq!(result.flows.len(), 2);
//! assert!(result.flows.iter().all(|f| f.errors.is_empty() && f.bytes > 0));
//! # Ok::<(), tput_lab::Error>(())
//! ```

/// The README's Rust examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
struct ReadmeDoctests;

pub mod files;
#[cfg(test)]
mod fixtures;
// Fuzz harnesses for `fuzz/` and the corpus replay: not part of the API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz;
pub mod harm;
pub mod host;
pub mod live;
pub mod plan;
pub mod plot;
pub mod report;
pub mod scenario;
pub mod stats;
pub mod sweep;
pub mod timeouts;

/// What can go wrong in an experiment.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The scenario (or another input) is invalid: the message names the bad value.
    #[error("{0}")]
    Invalid(String),
    /// The run itself failed (the transport could not be set up, a file could not be written).
    #[error("{0}")]
    Run(String),
}

impl Error {
    /// Whether the input was at fault (as opposed to the run).
    pub fn is_invalid(&self) -> bool {
        matches!(self, Error::Invalid(_))
    }
}

impl From<tput_transport::Error> for Error {
    fn from(e: tput_transport::Error) -> Self {
        match e {
            tput_transport::Error::Config(m) => Error::Invalid(m.to_string()),
            other => Error::Run(other.to_string()),
        }
    }
}
