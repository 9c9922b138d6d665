//! Compound TCP (Tan, Song, Zhang, Sridharan 2006).

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::controller::{Ack, Congestion, CongestionController, Snapshot};

/// Parameters of [`Compound`] (Tan et al. 2006 §3; defaults from the paper).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompoundConfig {
    /// `alpha` of the binomial increase `win += alpha * win^k`, default 0.125.
    pub alpha: f64,
    /// Multiplicative decrease `beta`, default 0.5.
    pub beta: f64,
    /// Exponent `k`, default 0.75.
    pub k: f64,
    /// `gamma`: queued packets above which dwnd shrinks, default 30.
    pub gamma: f64,
    /// `zeta`: dwnd decrease per packet of diff, default 1.
    pub zeta: f64,
}

impl Default for CompoundConfig {
    fn default() -> Self {
        Self {
            alpha: 0.125,
            beta: 0.5,
            k: 0.75,
            gamma: 30.0,
            zeta: 1.0,
        }
    }
}

impl CompoundConfig {
    /// Check the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha > 0.0) {
            return Err(format!("alpha: {} must be positive", self.alpha));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!("beta: {} must be in (0, 1)", self.beta));
        }
        if !(self.k > 0.0 && self.k < 1.0) {
            return Err(format!("k: {} must be in (0, 1)", self.k));
        }
        if !(self.gamma >= 0.0) {
            return Err(format!("gamma: {} must be >= 0", self.gamma));
        }
        if !(self.zeta >= 0.0) {
            return Err(format!("zeta: {} must be >= 0", self.zeta));
        }
        Ok(())
    }
}

/// Compound TCP.
#[derive(Debug, Clone)]
pub struct Compound {
    config: CompoundConfig,
    mss: u64,
}

impl Compound {
    /// A CUBIC controller for a path with maximum datagram size `mss` bytes.
    pub fn new(config: CompoundConfig, mss: u64) -> Self {
        Self { config, mss }
    }
}

impl CongestionController for Compound {
    fn on_ack(&mut self, _now: Instant, _ack: &Ack) {
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
        let _ = &self.config;
        todo!("helper")
    }
    fn clone_box(&self) -> Box<dyn CongestionController> {
        Box::new(self.clone())
    }
}
