//! CUBIC (RFC 9438).

use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::controller::{Ack, Congestion, CongestionController, Snapshot};

/// Parameters of [`Cubic`] (RFC 9438 §4).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CubicConfig {
    /// Multiplicative decrease factor `beta_cubic` (§4.6), default 0.7.
    pub beta: f64,
    /// Cubic scaling constant `C` in packets/s^3 (§4.2), default 0.4.
    pub c: f64,
    /// Fast convergence (§4.7), default on.
    pub fast_convergence: bool,
    /// The Reno-friendly region (§4.3), default on.
    pub reno_friendly: bool,
}

impl Default for CubicConfig {
    fn default() -> Self {
        Self {
            beta: 0.7,
            c: 0.4,
            fast_convergence: true,
            reno_friendly: true,
        }
    }
}

impl CubicConfig {
    /// Check the parameters.
    pub fn validate(&self) -> Result<(), String> {
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(format!("beta: {} must be in (0, 1)", self.beta));
        }
        if !(self.c > 0.0 && self.c.is_finite()) {
            return Err(format!("c: {} must be positive", self.c));
        }
        Ok(())
    }
}

/// CUBIC congestion control (RFC 9438).
#[derive(Debug, Clone)]
pub struct Cubic {
    config: CubicConfig,
    mss: u64,
}

impl Cubic {
    /// A CUBIC controller for a path with maximum datagram size `mss` bytes.
    pub fn new(config: CubicConfig, mss: u64) -> Self {
        Self { config, mss }
    }
}

impl CongestionController for Cubic {
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
