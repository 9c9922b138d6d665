//! The round-trip estimator and the retransmission timer of RFC 6298.

use std::time::Duration;

use tput_cc::RttSample;
use tput_netsim::SimTime;

use crate::TcpConfig;

/// RFC 6298: `SRTT`, `RTTVAR`, the backoff, and the pending timeout.
#[derive(Debug, Clone)]
pub(super) struct RtoTimer {
    srtt: Option<Duration>,
    rttvar: Duration,
    latest: Duration,
    min: Option<Duration>,
    /// RFC 6298 §5.5's factor, kept until a valid sample (Karn).
    backoff: u32,
    deadline: Option<SimTime>,
}

impl RtoTimer {
    pub(super) fn new() -> Self {
        Self {
            srtt: None,
            rttvar: Duration::ZERO,
            latest: Duration::ZERO,
            min: None,
            backoff: 1,
            deadline: None,
        }
    }

    /// The current RTO, backoff included: RFC 6298 §2.1 before the first
    /// sample, `SRTT + max(G, 4 * RTTVAR)` after (§2.2–2.3), at least
    /// `min_rto` (§2.4), times the backoff (§5.5), at most `max_rto`.
    pub(super) fn rto(&self, cfg: &TcpConfig) -> Duration {
        let base = match self.srtt {
            None => cfg.initial_rto,
            Some(srtt) => srtt + cfg.granularity.max(4 * self.rttvar),
        };
        let base = base.max(cfg.min_rto);
        base.saturating_mul(self.backoff).min(cfg.max_rto)
    }

    /// An RTT measurement `r` (RFC 6298 §2.2–2.3).
    pub(super) fn sample(&mut self, r: Duration) {
        self.latest = r;
        self.min = Some(self.min.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                // §2.2: SRTT <- R, RTTVAR <- R/2.
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                // §2.3: RTTVAR <- 3/4 RTTVAR + 1/4 |SRTT - R'|, SRTT <- 7/8 SRTT + 1/8 R'.
                let diff = srtt.abs_diff(r);
                self.rttvar = (self.rttvar * 3 + diff) / 4;
                self.srtt = Some((srtt * 7 + r) / 8);
            }
        }
        // Karn: a valid sample ends the backoff (RFC 6298 §5.7 and note).
        self.backoff = 1;
    }

    /// RFC 6298 §5.5: "The host MUST set RTO <- RTO * 2 ("back off the
    /// timer")", here up to `max_backoff` times the unbacked RTO.
    pub(super) fn back_off(&mut self, max_backoff: u32) {
        self.backoff = (self.backoff.saturating_mul(2)).min(max_backoff);
    }

    /// (Re)start the timer so that it expires after the current RTO.
    pub(super) fn restart(&mut self, now: SimTime, cfg: &TcpConfig) {
        self.deadline = Some(now + self.rto(cfg));
    }

    /// RFC 6298 §5.2: everything is acknowledged, "turn off the
    /// retransmission timer".
    pub(super) fn stop(&mut self) {
        self.deadline = None;
    }

    /// When the pending timeout fires.
    pub(super) fn deadline(&self) -> Option<SimTime> {
        self.deadline
    }

    /// `SRTT`, once there is a sample.
    pub(super) fn srtt(&self) -> Option<Duration> {
        self.srtt
    }

    /// The smallest sample so far.
    pub(super) fn min_rtt(&self) -> Option<Duration> {
        self.min
    }

    /// The statistics as a controller hears them with an ACK.
    pub(super) fn rtt_sample(&self) -> RttSample {
        RttSample::new(
            self.latest,
            self.srtt.unwrap_or(self.latest),
            self.min.unwrap_or(self.latest),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rto_follows_rfc_6298() {
        let cfg = TcpConfig {
            min_rto: Duration::from_millis(1),
            ..TcpConfig::default()
        };
        let mut t = RtoTimer::new();
        assert_eq!(t.rto(&cfg), Duration::from_secs(1), "RFC 6298 §2.1");
        t.sample(Duration::from_millis(100));
        // SRTT = 100 ms, RTTVAR = 50 ms: RTO = 100 + 4 * 50.
        assert_eq!(t.rto(&cfg), Duration::from_millis(300));
        t.sample(Duration::from_millis(200));
        // RTTVAR = 3/4 * 50 + 1/4 * 100 = 62.5; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5.
        assert_eq!(t.rto(&cfg), Duration::from_micros(112_500 + 250_000));
        // §5.5 doubles it per timeout, up to the cap; a sample ends the backoff.
        t.back_off(64);
        t.back_off(64);
        assert_eq!(t.rto(&cfg), Duration::from_micros(4 * 362_500));
        t.sample(Duration::from_millis(112) + Duration::from_micros(500));
        assert!(t.rto(&cfg) < Duration::from_millis(400));
    }
}
