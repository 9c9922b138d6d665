//! A deterministic discrete-event network simulator for congestion-control
//! experiments.
//!
//! - **Time** is virtual, in integer nanoseconds ([`SimTime`]); one event
//!   queue ordered by (time, insertion sequence), so a run is a pure function
//!   of its inputs and seed. [`SimTime::to_instant`] maps it onto
//!   `std::time::Instant` for sans-IO stacks such as quinn-proto.
//! - **Hosts** implement [`Host`]: take a datagram at `now`, give datagrams
//!   to send, report the next wake-up. Datagrams are [`bytes::Bytes`], moved,
//!   never copied, and tagged with a [`FlowId`].
//! - **Links** ([`LinkConfig`]) are unidirectional: rate, propagation delay,
//!   per-packet header overhead (28 B IPv4+UDP by default), a queue (DropTail
//!   by default, or CoDel, FQ-CoDel or RED with ECN marking: [`QueueDiscipline`];
//!   datagrams carry their [`Ecn`] codepoint end to end),
//!   and impairments: a periodic [`CutOff`] (modes in [`CutMode`], after
//!   Morokoshi and Yakoh's S-TDMA switch ("The effect of periodic data-link cut-offs on TCP throughput") and IEEE 802.3x PAUSE), a [`RateStep`] schedule
//!   (power-saving ports, Araki 2011) and [`RandomLoss`] (bit error rate, Miyake, Kato and Suzuki 1995).
//! - **Topologies**: [`Topology`] with static routes, and the [`Dumbbell`]
//!   (with per-pair access links), [`Chain`] and [`ParkingLot`] builders.
//! - **Traffic** helpers: [`FlowSchedule`], [`FileArrivals`], [`Pareto`],
//!   [`Exponential`], all from a seeded [`Rng`].
//! - **Metrics**: [`LinkStats`], [`FlowStats`], queue and delivered-bytes time
//!   series (serializable with the `serde` feature: rendering them is
//!   `tput-lab`'s job); a trace hash
//!   for determinism checks; the bandwidth oracle of Yamanegi, Hasegawa and Murata ([`OracleHandle`]).
//!
//! # Modules
//!
//! The items are re-exported at the crate root; the source is one file (or
//! directory) per job: `time` (virtual time), `queue` (the event queue),
//! `sim` (the event engine), `host` (the endpoint interface), `link` (link
//! configuration and impairments), `model` (one link as a sans-IO state
//! machine, and [`LinkRunner`] that drives it on a wall clock), `aqm/`
//! (queue disciplines), `delivery_trace` (trace-driven links), `topology`
//! (routes and the topology builders), `traffic` (schedules and file
//! arrivals), `rng` (the seeded generator and samplers), `metrics`
//! (counters and time series), `oracle` (the bandwidth oracle), `error`.
//!
//! # Serialization timing
//!
//! A packet of `n` wire bytes occupies a link of rate `r` for
//! `ceil(8n * 1e9 / r)` ns. Within a back-to-back run of packets the finish
//! times are computed from the start of the run (`start + ceil(total bits *
//! 1e9 / r)`), so rounding never accumulates: the k-th packet of a run
//! finishes within 1 ns of the exact real-valued time.
//!
//! # Example
//!
//! ```
//! use std::time::Duration;
//! use bytes::Bytes;
//! use tput_netsim::*;
//!
//! /// Sends `left` datagrams of 972 bytes at time zero.
//! struct Blaster { to: Addr, left: u32 }
//! impl Host for Blaster {
//!     fn on_datagram(&mut self, _: SimTime, _: Addr, _: FlowId, _: Ecn, _: Bytes) {}
//!     fn poll_transmit(&mut self, _: SimTime) -> Option<Datagram> {
//!         if self.left == 0 { return None; }
//!         self.left -= 1;
//!         Some(Datagram::new(self.to, 1, Bytes::from(vec![0u8; 972])))
//!     }
//!     fn poll_timeout(&mut self) -> Option<SimTime> { None }
//!     fn on_timeout(&mut self, _: SimTime) {}
//! }
//!
//! /// Counts what arrives.
//! #[derive(Default)]
//! struct Sink { bytes: u64, last: SimTime }
//! impl Host for Sink {
//!     fn on_datagram(&mut self, now: SimTime, _: Addr, _: FlowId, _: Ecn, p: Bytes) {
//!         self.bytes += p.len() as u64;
//!         self.last = now;
//!     }
//!     fn poll_transmit(&mut self, _: SimTime) -> Option<Datagram> { None }
//!     fn poll_timeout(&mut self) -> Option<SimTime> { None }
//!     fn on_timeout(&mut self, _: SimTime) {}
//! }
//!
//! // 8 Mbit/s, 5 ms, then 80 Mbit/s, 1 ms: 1000 wire bytes take 1 ms, then 0.1 ms.
//! let chain = Chain::build(&[
//!     LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::from_millis(5)),
//!     LinkConfig::new(Rate::from_mbit_per_sec(80), Duration::from_millis(1)),
//! ])?;
//! let (a, b) = (chain.nodes[0], chain.nodes[2]);
//! let mut sim = Simulator::new(chain.topology, 42);
//! let dst = Addr::new(b, 443);
//! sim.attach(Addr::new(a, 5000), Blaster { to: dst, left: 10 })?;
//! let sink = sim.attach(dst, Sink::default())?;
//! sim.run_for(Duration::from_secs(1));
//!
//! let first = sim.link_stats(chain.forward[0]);
//! assert_eq!(first.delivered.packets, 10);
//! assert_eq!(first.delivered.bytes, 10 * 1000);
//! let sink = sim.host::<Sink>(sink).unwrap();
//! assert_eq!(sink.bytes, 9720);
//! // Last packet: 10 ms on the first link + 5 ms + 0.1 ms + 1 ms.
//! assert_eq!(sink.last, SimTime::from_micros(16_100));
//! # Ok::<(), tput_netsim::Error>(())
//! ```

/// The crate README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;

mod aqm;
mod delivery_trace;
mod error;
mod host;
mod link;
mod metrics;
mod model;
mod oracle;
mod queue;
mod rate;
mod rng;
mod sim;
mod time;
mod topology;
mod traffic;

pub use aqm::{CodelConfig, FqCodelConfig, QueueDiscipline, RedConfig};
pub use delivery_trace::{DeliveryTrace, TRACE_PACKET_BYTES};
pub use error::Error;
pub use host::{Addr, Datagram, Ecn, FlowId, Host, HostId};
pub use link::{
    CutMode, CutOff, DEFAULT_OVERHEAD_BYTES, LinkConfig, PAUSE_MAX_FRAME_BYTES, QueueLimit, RandomLoss, RateStep,
    serialization_ns,
};
pub use metrics::{Counter, FlowQueueStats, FlowSample, FlowStats, FqCodelStats, LinkStats, Metrics, QueueSample};
pub use model::{Frame, LinkDriver, LinkEvent, LinkModel, LinkOutput, LinkRunner, LinkTrace, PacketTag, Verdict};
pub use oracle::OracleHandle;
pub use rate::Rate;
pub use rng::{Exponential, Pareto, Rng};
pub use sim::Simulator;
pub use time::SimTime;
pub use topology::{Chain, Dumbbell, DumbbellConfig, LinkId, NodeId, ParkingLot, ParkingLotPair, Topology};
pub use traffic::{FileArrivals, FlowAction, FlowEvent, FlowSchedule};
