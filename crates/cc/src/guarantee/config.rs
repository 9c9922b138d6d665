//! The guarantee controller's configuration: the target, the slot lengths,
//! the mode, where `A` and `P` come from (spec keys of `guarantee:`).

use crate::error::ConfigError;
use crate::eval_slot::EvalSlot;
use crate::units::Rate;

/// Where a [`Guarantee`](super::Guarantee) built from a spec gets `A` and `P` from (spec key `abw`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum AbwSource {
    /// The bandwidth source the builder passes (e.g. a simulator's oracle); if
    /// none is passed, the [`InlineEstimator`](crate::InlineEstimator).
    #[default]
    Auto,
    /// Always the [`InlineEstimator`](crate::InlineEstimator), even if a source is passed.
    Inline,
}

/// Which rules a [`Guarantee`](super::Guarantee) follows on loss (spec key `mode`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "snake_case"))]
#[non_exhaustive]
pub enum GuaranteeMode {
    /// The default: the paper's slope, and a loss response that never cuts
    /// below the window the target needs, with a breaker for infeasible
    /// targets (see [`Guarantee`](super::Guarantee), "Floor").
    #[default]
    Floor,
    /// The paper's rules exactly (§2): Reno's halving on loss.
    Paper,
}

/// Parameters of [`Guarantee`](super::Guarantee).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct GuaranteeConfig {
    /// Target throughput `bw`. In [`GuaranteeMode::Floor`] it counts the
    /// goodput the receiver sees (see [`overhead`](Self::overhead)); in
    /// [`GuaranteeMode::Paper`], acknowledged bytes, as the paper counts packets.
    pub target: Rate,
    /// Evaluation slot length; default 32 RTTs (the paper's `d = 32`).
    pub eval: EvalSlot,
    /// Initial control slot `s` in RTTs; default `d / 2`.
    pub slot_rtts: Option<u32>,
    /// Lower clamp `k_min` of the slope; default 1 (never slower than Reno).
    pub k_min: f64,
    /// The factor on `cwnd` in `k_max = A*srtt - kmax_cwnd*cwnd`; default 2
    /// (the paper's summary; eqs. (4)/(5) as printed use 1).
    pub kmax_cwnd: f64,
    /// Physical bandwidth `P`, used when the bandwidth source does not report one
    /// (and given to the inline estimator, whose own `P` estimate it replaces).
    pub physical: Option<Rate>,
    /// Where `A` and `P` come from when built by [`ControllerSpec`](crate::ControllerSpec); default `auto`.
    #[cfg_attr(feature = "serde", serde(default))]
    pub abw: AbwSource,
    /// The loss response: the floor (default) or the paper's.
    #[cfg_attr(feature = "serde", serde(default))]
    pub mode: GuaranteeMode,
    /// Floor mode: the floor steers the slot throughput toward `(1 + margin) * bw`; default 0.1.
    #[cfg_attr(feature = "serde", serde(default = "default_margin"))]
    pub margin: f64,
    /// Bytes of each acknowledged packet that are not goodput (headers,
    /// framing), so that the target counts what the receiver sees: the
    /// controller aims at `bw * mss / (mss - overhead)` acknowledged bytes.
    /// `None`: [`QUIC_OVERHEAD`] in floor mode, 0 in paper mode. A transport
    /// whose acknowledged bytes are payload (the simulator's TCP model) sets 0.
    #[cfg_attr(feature = "serde", serde(default))]
    pub overhead: Option<u32>,
}

/// The floor mode's default margin.
fn default_margin() -> f64 {
    0.1
}

/// Bytes of a full QUIC 1-RTT packet carrying one STREAM frame that are not
/// stream payload, as quinn-proto builds them (RFC 9000 §17.3.1, §19.8):
/// 1 flag byte, an 8-byte destination connection ID, a 2-byte packet number,
/// the 16-byte AEAD tag (RFC 9001 §5.3), and the frame's type, stream ID,
/// 4-byte offset and 2-byte length: 1 + 8 + 2 + 16 + 1 + 1 + 4 + 2.
pub const QUIC_OVERHEAD: u32 = 35;

impl GuaranteeConfig {
    /// The default (floor) mode with the paper's slot parameters, for a target of `target`.
    pub fn new(target: Rate) -> Self {
        Self {
            target,
            eval: EvalSlot::Rtts(32),
            slot_rtts: None,
            k_min: 1.0,
            kmax_cwnd: 2.0,
            physical: None,
            abw: AbwSource::Auto,
            mode: GuaranteeMode::Floor,
            margin: default_margin(),
            overhead: None,
        }
    }

    /// The paper's controller (§2 exactly) for a target of `target`.
    pub fn paper(target: Rate) -> Self {
        Self {
            mode: GuaranteeMode::Paper,
            ..Self::new(target)
        }
    }

    /// [`overhead`](Self::overhead) with its mode default resolved.
    pub fn overhead_bytes(&self) -> u32 {
        self.overhead.unwrap_or(match self.mode {
            GuaranteeMode::Floor => QUIC_OVERHEAD,
            GuaranteeMode::Paper => 0,
        })
    }

    /// Check the parameters.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.target.bits_per_sec() == 0 {
            return Err(ConfigError::new("guarantee", "target", "must be positive"));
        }
        match self.eval {
            EvalSlot::Rtts(d) if d < 2 || !d.is_power_of_two() => {
                return Err(ConfigError::new(
                    "guarantee",
                    "eval",
                    format!("{d}rtt must be a power of two >= 2"),
                ));
            }
            EvalSlot::Time(t) if t.is_zero() => return Err(ConfigError::new("guarantee", "eval", "must be positive")),
            _ => {}
        }
        if let Some(s) = self.slot_rtts {
            if s < 2 || !s.is_power_of_two() {
                return Err(ConfigError::new(
                    "guarantee",
                    "slot",
                    format!("{s}rtt must be a power of two >= 2"),
                ));
            }
            if let EvalSlot::Rtts(d) = self.eval
                && s > d
            {
                return Err(ConfigError::new(
                    "guarantee",
                    "slot",
                    format!("{s}rtt must not exceed eval {d}rtt"),
                ));
            }
        }
        if !(self.k_min >= 0.0 && self.k_min.is_finite()) {
            return Err(ConfigError::new(
                "guarantee",
                "k_min",
                format!("{} must be >= 0", self.k_min),
            ));
        }
        if !(self.kmax_cwnd >= 0.0 && self.kmax_cwnd.is_finite()) {
            return Err(ConfigError::new(
                "guarantee",
                "kmax_cwnd",
                format!("{} must be >= 0", self.kmax_cwnd),
            ));
        }
        if self.physical.is_some_and(|p| p.bits_per_sec() == 0) {
            return Err(ConfigError::new("guarantee", "physical", "must be positive"));
        }
        if !(self.margin >= 0.0 && self.margin <= 1.0) {
            return Err(ConfigError::new(
                "guarantee",
                "margin",
                format!("{} must be in [0, 1]", self.margin),
            ));
        }
        if self.overhead.is_some_and(|o| o >= 1200) {
            return Err(ConfigError::new(
                "guarantee",
                "overhead",
                format!(
                    "{} bytes must be below QUIC's smallest datagram (1200 bytes)",
                    self.overhead.unwrap_or(0)
                ),
            ));
        }
        Ok(())
    }
}
