//! Vegas (Brakmo & Peterson 1994).

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::controller::{Ack, Congestion, CongestionController, Snapshot};

/// Parameters of [`Vegas`], in packets (Brakmo & Peterson 1994 §3.2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VegasConfig {
    /// Grow while `diff < alpha` packets are queued, default 2.
    pub alpha: f64,
    /// Shrink while `diff > beta`, default 4.
    pub beta: f64,
    /// Leave slow start once `diff > gamma`, default 1.
    pub gamma: f64,
}

impl Default for VegasConfig {
    fn default() -> Self {
        Self {
            alpha: 2.0,
            beta: 4.0,
            gamma: 1.0,
        }
    }
}

impl VegasConfig {
    /// Check the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.alpha >= 0.0) {
            return Err(format!("alpha: {} must be >= 0", self.alpha));
        }
        if !(self.alpha <= self.beta) {
            return Err(format!("alpha: {} must not exceed beta {}", self.alpha, self.beta));
        }
        if !(self.gamma >= 0.0) {
            return Err(format!("gamma: {} must be >= 0", self.gamma));
        }
        Ok(())
    }
}

/// Vegas congestion avoidance (Brakmo & Peterson 1994).
#[derive(Debug, Clone)]
pub struct Vegas {
    config: VegasConfig,
    mss: u64,
}

impl Vegas {
    /// A CUBIC controller for a path with maximum datagram size `mss` bytes.
    pub fn new(config: VegasConfig, mss: u64) -> Self {
        Self { config, mss }
    }
}

impl CongestionController for Vegas {
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
