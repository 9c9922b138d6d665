//! Pluggable congestion control for QUIC research: one sans-IO trait,
//! the controllers studied in the source papers, and a quinn-proto adapter.
//!
//! | spec | controller | follows |
//! |---|---|---|
//! | `newreno` | [`NewReno`] | RFC 9002 §7 |
//! | `cubic` | [`Cubic`] | RFC 9438 |
//! | `vegas` | [`Vegas`] | Brakmo & Peterson 1994 |
//! | `ctcp` | [`Compound`] | Tan et al. 2006 |
//! | `fixed:rate=R` | [`FixedWindow`] | Yamanegi et al.'s baseline |
//! | `guarantee:target=R` | [`Guarantee`] | Yamanegi, Hasegawa, Murata |
//! | `bbr` | [`Bbr`] | draft-ietf-ccwg-bbr-06 (BBRv3) |
//!
//! Without a bandwidth source (or with `abw=inline`) the guarantee controller
//! is wrapped in [`Estimating`], which measures `A` and `P` with the
//! [`InlineEstimator`] from the connection's own ACK stream. Several guarantee
//! controllers can pursue one aggregate target through an [`Aggregate`].
//!
//! Any controller can measure its delivery rate with a
//! [`DeliveryRateSampler`] (draft-ietf-ccwg-bbr-06 §4.1), as [`Bbr`] does.
//!
//! Controllers are named by [`ControllerSpec`] strings and listed by
//! [`registry`]. With the default `quinn` feature, [`QuinnFactory`] installs
//! any of them into quinn-proto (without it the crate has no QUIC dependency):
//!
//! ```
//! # #[cfg(feature = "quinn")] {
//! use std::sync::Arc;
//! use tput_cc::{ControllerSpec, QuinnFactory};
//!
//! let spec: ControllerSpec = "cubic".parse()?;
//! let mut transport = quinn_proto::TransportConfig::default();
//! transport.congestion_controller_factory(Arc::new(QuinnFactory::try_new(spec)?));
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Modules
//!
//! The items are re-exported at the crate root; the source is one file (or
//! directory) per job:
//!
//! - `controller`: the [`CongestionController`] trait, its events and
//!   [`Snapshot`];
//! - `reno`: the Reno core (phases, recovery, persistent congestion) shared
//!   by `newreno` and `guarantee`, with `hystart` (HyStart++);
//! - one module per algorithm: `newreno`, `cubic`, `vegas`, `compound`,
//!   `fixed`, `guarantee/` (with its floor, `guarantee/floor.rs`), `bbr/`
//!   (one file per part of the draft);
//! - `bandwidth` (where `A` and `P` come from), `estimator/` (the inline
//!   estimator), `delivery_rate` (delivery-rate samples), `aggregate` (one
//!   target for several connections), `eval_slot` (the evaluation slot);
//! - `spec/`: spec strings, their parser and the [`registry`]; [`units`]:
//!   rates, durations and sizes for people; `error`: parameter errors;
//! - `adapter` and `native` (feature `quinn`): controllers inside
//!   quinn-proto, and quinn-proto's own beside ours;
//! - `fuzz` (feature `fuzzing`, hidden): the parsers' fuzz harnesses.

/// The crate README's examples, compiled and run as doctests.
#[cfg(all(doctest, feature = "quinn"))]
#[doc = include_str!("../README.md")]
struct CrateReadmeDoctests;

#[cfg(feature = "quinn")]
mod adapter;
mod aggregate;
mod bandwidth;
mod bbr;
mod compound;
mod controller;
mod cubic;
mod delivery_rate;
mod error;
mod estimator;
mod eval_slot;
mod filter;
mod fixed;
// Fuzz harnesses for `fuzz/` and the corpus replay: not part of the API.
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzz;
mod guarantee;
mod hystart;
#[cfg(feature = "quinn")]
mod native;
mod newreno;
mod reno;
mod send_ring;
mod spec;
pub mod units;
mod vegas;

#[cfg(test)]
mod testutil;

#[cfg(feature = "quinn")]
pub use adapter::{
    BuildController, ConnectionProbes, ControllerProbe, ControllerSwitch, FactoryError, Pacing, QuinnController,
    QuinnFactory, SwitchSlot,
};
pub use aggregate::Aggregate;
pub use bandwidth::{BandwidthSource, SharedBandwidth};
pub use bbr::{Bbr, BbrConfig, BbrMode};
pub use compound::{Compound, CompoundConfig};
pub use controller::{
    Ack, AlgorithmState, Congestion, CongestionController, CongestionKind, Phase, RttSample, Snapshot, WindowUse,
    initial_window, minimum_window,
};
pub use cubic::{Cubic, CubicConfig};
pub use delivery_rate::{DeliveryRateSampler, LostPacket, RateSample};
pub use error::ConfigError;
pub use estimator::{Estimating, EstimatorConfig, InlineEstimator};
pub use eval_slot::{EvalSlot, EvalSlotError};
pub use fixed::{FixedConfig, FixedWindow};
pub use guarantee::{AbwSource, Guarantee, GuaranteeConfig, GuaranteeMode, QUIC_OVERHEAD};
#[cfg(feature = "quinn")]
pub use native::{NativeFactory, QuinnCc, QuinnCcError};
pub use newreno::{Counting, NewReno, NewRenoConfig};
pub use spec::{ControllerInfo, ControllerSpec, ParamInfo, SpecError, SpecErrorKind, registry};
pub use vegas::{Vegas, VegasConfig};
