//! The throughput-guarantee controller of seed 000 (Yamanegi, Hasegawa, Murata).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::bandwidth::BandwidthSource;
use crate::controller::{Ack, Congestion, CongestionController, Snapshot};
use crate::units::Rate;

/// Length of the evaluation slot `t` (seed 000 §Inputs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum EvalLength {
    /// `d` RTTs directly; a power of two, at least 2.
    Rtts(u32),
    /// A duration; `d = t / min_rtt`, rounded as documented on [`Guarantee`].
    Time(Duration),
}

/// Parameters of [`Guarantee`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GuaranteeConfig {
    /// Target throughput `bw`.
    pub target: Rate,
    /// Evaluation slot length; default 32 RTTs (the paper's `d = 32`).
    pub eval: EvalLength,
    /// Initial control slot `s` in RTTs; default `d / 2`.
    pub slot_rtts: Option<u32>,
    /// Lower clamp `k_min` of the slope; default 1 (never slower than Reno).
    pub k_min: f64,
    /// The factor on `cwnd` in `k_max = A*srtt - kmax_cwnd*cwnd`; default 2
    /// (the digest's choice between the paper's eqs. (4)/(5) and its summary).
    pub kmax_cwnd: f64,
    /// Physical bandwidth `P`, used when the bandwidth source does not report one.
    pub physical: Option<Rate>,
}

impl GuaranteeConfig {
    /// The paper's defaults for a target of `target`.
    pub fn new(target: Rate) -> Self {
        Self {
            target,
            eval: EvalLength::Rtts(32),
            slot_rtts: None,
            k_min: 1.0,
            kmax_cwnd: 2.0,
            physical: None,
        }
    }

    /// Check the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if self.target.bits_per_sec() == 0 {
            return Err("target: must be positive".into());
        }
        match self.eval {
            EvalLength::Rtts(d) if d < 2 || !d.is_power_of_two() => {
                return Err(format!("eval: {d}rtt must be a power of two >= 2"));
            }
            EvalLength::Time(t) if t.is_zero() => return Err("eval: must be positive".into()),
            _ => {}
        }
        if let Some(s) = self.slot_rtts {
            if s < 2 || !s.is_power_of_two() {
                return Err(format!("slot: {s}rtt must be a power of two >= 2"));
            }
            if let EvalLength::Rtts(d) = self.eval
                && s > d
            {
                return Err(format!("slot: {s}rtt must not exceed eval {d}rtt"));
            }
        }
        if !(self.k_min >= 0.0 && self.k_min.is_finite()) {
            return Err(format!("k_min: {} must be >= 0", self.k_min));
        }
        if !(self.kmax_cwnd >= 0.0 && self.kmax_cwnd.is_finite()) {
            return Err(format!("kmax_cwnd: {} must be >= 0", self.kmax_cwnd));
        }
        if self.physical.is_some_and(|p| p.bits_per_sec() == 0) {
            return Err("physical: must be positive".into());
        }
        Ok(())
    }
}

/// The throughput-guarantee controller.
#[derive(Debug, Clone)]
pub struct Guarantee {
    config: GuaranteeConfig,
    mss: u64,
    bandwidth: Option<Arc<dyn BandwidthSource>>,
}

impl Guarantee {
    /// A guarantee controller reading `A` and `P` from `bandwidth`.
    pub fn new(config: GuaranteeConfig, mss: u64, bandwidth: Option<Arc<dyn BandwidthSource>>) -> Self {
        Self { config, mss, bandwidth }
    }
}

impl CongestionController for Guarantee {
    fn on_ack(&mut self, _now: Instant, _ack: &Ack) {
        let _ = (&self.config, &self.bandwidth);
        todo!("helper")
    }
    fn on_congestion(&mut self, _now: Instant, _event: &Congestion) {
        todo!("helper")
    }
    fn on_mtu_update(&mut self, max_datagram_size: u16) {
        self.mss = u64::from(max_datagram_size);
    }
    fn window(&self) -> u64 {
        todo!("helper")
    }
    fn initial_window(&self) -> u64 {
        crate::controller::initial_window(self.mss)
    }
    fn snapshot(&self) -> Snapshot {
        todo!("helper")
    }
    fn clone_box(&self) -> Box<dyn CongestionController> {
        Box::new(self.clone())
    }
}
