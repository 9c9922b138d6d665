//! The fixed-window baseline of Yamanegi, Hasegawa and Murata (Fig. 6): `cwnd = bw * min_rtt`,
//! never reduced on loss.

use std::time::{Duration, Instant};

use crate::controller::{
    Ack, AlgorithmState, Congestion, CongestionController, Phase, Snapshot, init_window, min_window,
};
use crate::error::ConfigError;
use crate::units::Rate;

/// Parameters of [`FixedWindow`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct FixedConfig {
    /// The rate the window is sized for.
    pub rate: Rate,
}

impl FixedConfig {
    /// A window sized for `rate`.
    pub fn new(rate: Rate) -> Self {
        Self { rate }
    }
    /// Check the parameters.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.rate.bits_per_sec() == 0 {
            Err(ConfigError::new("fixed", "rate", "must be positive"))
        } else {
            Ok(())
        }
    }
}

/// A window of `rate * min_rtt` bytes that ignores every congestion signal.
///
/// The paper sizes it with the smallest RTT seen (`srtt_min`, Fig. 6);
/// we use the path's minimum RTT sample, which is what QUIC exposes. Until the
/// first RTT sample the window is RFC 9002's initial window. It never falls
/// below the RFC 9002 minimum window of two datagrams.
#[derive(Debug, Clone)]
pub struct FixedWindow {
    rate: Rate,
    mss: u64,
    min_rtt: Option<Duration>,
    cwnd: u64,
}

impl FixedWindow {
    /// A fixed-window controller for a path with maximum datagram size `max_datagram_size` bytes.
    pub fn new(config: FixedConfig, max_datagram_size: u16) -> Self {
        let mss = u64::from(max_datagram_size);
        Self {
            rate: config.rate,
            mss,
            min_rtt: None,
            cwnd: init_window(mss),
        }
    }

    fn resize(&mut self) {
        if let Some(rtt) = self.min_rtt {
            let bytes = self.rate.bits_per_sec() as u128 * rtt.as_nanos() / 8_000_000_000;
            self.cwnd = u64::try_from(bytes).unwrap_or(u64::MAX).max(min_window(self.mss));
        }
    }
}

impl CongestionController for FixedWindow {
    fn on_ack(&mut self, _now: Instant, ack: &Ack) {
        let min = ack.rtt.min.min(ack.rtt.latest);
        if min > Duration::ZERO && self.min_rtt.is_none_or(|m| min < m) {
            self.min_rtt = Some(min);
            self.resize();
        }
    }

    fn on_congestion(&mut self, _now: Instant, _event: &Congestion) {}

    fn on_mtu_update(&mut self, max_datagram_size: u16) {
        self.mss = u64::from(max_datagram_size);
        self.cwnd = self.cwnd.max(min_window(self.mss));
    }

    fn window(&self) -> u64 {
        self.cwnd
    }

    fn initial_window(&self) -> u64 {
        init_window(self.mss)
    }

    fn pacing_rate(&self) -> Option<u64> {
        Some(self.rate.bits_per_sec() / 8)
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            cwnd_bytes: self.cwnd,
            ssthresh_bytes: None,
            phase: Phase::Fixed,
            state: AlgorithmState::Fixed {
                rate_bytes_per_sec: self.rate.bytes_per_sec(),
            },
        }
    }

    fn clone_box(&self) -> Box<dyn CongestionController> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::CongestionKind;
    use crate::testutil::*;

    #[test]
    fn window_is_rate_times_min_rtt_and_ignores_loss() {
        let cfg = FixedConfig {
            rate: "20Mbit/s".parse().unwrap(),
        };
        let mut h = Harness::new(FixedWindow::new(cfg, DATAGRAM), Duration::from_millis(20));
        assert_eq!(h.cc.window(), 12_000); // initial window before any RTT sample
        h.ack(MSS);
        assert_eq!(h.cc.window(), 50_000); // 2.5 MB/s * 20 ms
        for kind in [
            CongestionKind::Loss,
            CongestionKind::PersistentCongestion,
            CongestionKind::Ecn,
        ] {
            h.lose(h.now, kind);
            assert_eq!(h.cc.window(), 50_000);
        }
        h.rtt = Duration::from_millis(10);
        h.ack(MSS);
        assert_eq!(h.cc.window(), 25_000); // a smaller min RTT shrinks it
        h.rtt = Duration::from_millis(40);
        h.ack(MSS);
        assert_eq!(h.cc.window(), 25_000); // a larger RTT does not
        assert_eq!(h.cc.pacing_rate(), Some(2_500_000));
    }
}
