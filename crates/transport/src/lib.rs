//! QUIC transfers on quinn-proto with the `tput-cc` controllers, through one
//! sans-IO [`Node`] that any driver can run: real UDP sockets ([`udp`]) or a
//! simulator (the `tput-lab` crate hosts it in `tput-netsim`'s virtual time).
//! This crate knows nothing of the simulator.
//!
//! - [`Node`]: a quinn-proto endpoint, its connections and the transfer
//!   protocol (described in the `proto` module's source); every byte is generated from a keyed
//!   [`Pattern`] and verified by the receiver.
//! - [`udp`]: the tokio back end (real time).

/// The crate README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;

mod error;
mod failure;
mod node;
mod null_keys;
#[cfg(feature = "test-support")]
mod pair;
mod pattern;
// The wire format is public only for tests and fuzzing that craft raw
// requests and frames (tput-lab's `fuzz` module and its seed corpus
// example, this crate's `tests/protocol.rs`); it is no part of the API a
// user builds on and may change with the protocol version, so it is left
// out of the documentation. Its module documentation describes the protocol.
#[doc(hidden)]
pub mod proto;
mod stall;
mod stats;
mod tls;
pub mod udp;
pub mod usage;

pub use error::{
    AppBuffersError, ConfigError, Error, FrameError, PemFile, ProtocolError, RequestError, TlsError, TlsStep,
};
pub use failure::{End, TransferError, TransferStream, Violation};
#[cfg(feature = "sim")]
pub use node::{BufferPool, SimOptions};
pub use node::{
    CLOSE_CORRUPT, CLOSE_PROTOCOL_ERROR, CLOSE_TIMED_OUT, CpuClock, Node, NodeConfig, NodeEvent, Outgoing, Refusal,
    SenderController, ServerLimits, TransferSpec,
};
#[cfg(feature = "test-support")]
pub use pair::Pair;
pub use pattern::Pattern;
pub use proto::{AppBuffers, Direction};
pub use stats::{IntervalStats, ReceiverReport, SenderReport, SlotStats, TransferOutcome};
pub use tls::{ALPN, ClientAuth, Fingerprint, Identity, ServerTrust};
pub use tput_cc::EvalSlot;
