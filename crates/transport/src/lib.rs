//! QUIC transfers on quinn-proto with the `tput-cc` controllers, through one
//! sans-IO [`Node`] that any driver can run: real UDP sockets ([`udp`]) or a
//! simulator (the `tput-lab` crate hosts it in `tput-netsim`'s virtual time).
//! This crate knows nothing of the simulator.
//!
//! - [`Node`]: a quinn-proto endpoint, its connections and the transfer
//!   protocol (described in the `proto` module's source); every byte is generated from a keyed
//!   [`Pattern`] and verified by the receiver.
//! - [`udp`]: the tokio back end (real time).
//!
//! # Modules
//!
//! - `node/`: the sans-IO [`Node`] (endpoint, connections, the transfer
//!   protocol's state machines, the pacer), configured by [`NodeConfig`],
//!   [`TransferSpec`] and [`ServerLimits`];
//! - [`udp`] (feature `udp`, on by default): the tokio driver;
//! - `proto` (hidden): the wire format of the transfer protocol;
//! - `tls`: identities, certificates and trust ([`Identity`],
//!   [`ServerTrust`]); `null_keys`: packet protection that costs nothing,
//!   for simulated connections (feature `sim`);
//! - `pattern`: the keyed payload every byte is checked against;
//! - `stats`: interval records, slot verdicts and the transfer outcome;
//!   `stall`: stall probes of a sender whose packets go unacknowledged;
//! - [`usage`]: CPU time and peak memory of this process;
//! - `error`: the typed errors;
//! - `pair` (feature `test-support`): `Pair`, two nodes
//!   joined in memory, for tests;
//! - `fuzz` (feature `fuzzing`, hidden): fuzz harnesses of the decoders
//!   and of a server node.

/// The crate README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;

mod error;
// Fuzz harnesses for `fuzz/` and the corpus replay: not part of the API.
mod failure;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz;
mod node;
mod null_keys;
#[cfg(feature = "test-support")]
mod pair;
mod pattern;
// The wire format is public only for tests and fuzzing that craft raw
// requests and frames (the `fuzz` module, tput-lab's seed corpus
// example, this crate's `tests/protocol.rs`); it is no part of the API a
// user builds on and may change with the protocol version, so it is left
// out of the documentation. Its module documentation describes the protocol.
#[doc(hidden)]
pub mod proto;
mod stall;
mod stats;
mod tls;
#[cfg(feature = "udp")]
pub mod udp;
pub mod usage;

pub use error::{
    AppBuffersError, ConfigError, Error, FrameError, PemFile, ProtocolError, RequestError, TlsError, TlsStep,
};
pub use failure::{End, TransferError, TransferStream, Violation};
#[cfg(feature = "sim")]
pub use node::{BufferPool, SimOptions};
pub use node::{
    CLOSE_CORRUPT, CLOSE_PROTOCOL_ERROR, CLOSE_TIMED_OUT, CpuClock, EcnCounts, Node, NodeConfig, NodeEvent, Outgoing,
    Refusal, SenderController, ServerLimits, TransferSpec,
};
#[cfg(feature = "test-support")]
pub use pair::{CLIENT_ADDR, Link, LinkStats, Offer, Pair, PairEnd, RawEnd, SERVER_ADDR};
pub use pattern::Pattern;
pub use proto::{AppBuffers, Direction};
pub use stats::{IntervalStats, ReceiverReport, SenderReport, SlotStats, TransferOutcome};
pub use tls::{ALPN, ClientAuth, Fingerprint, Identity, ServerTrust};
pub use tput_cc::EvalSlot;
