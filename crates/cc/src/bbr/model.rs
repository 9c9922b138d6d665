//! The network path model: packet-timed rounds, `max_bw` and the ACK
//! aggregation estimate (draft-ietf-ccwg-bbr-06 §5.5.1–§5.5.6, §5.5.9).

use std::time::Instant;

use super::Bbr;

/// `BBR.ExtraAckedFilterLen` (§2.12): 10 packet-timed round trips.
const EXTRA_ACKED_FILTER_LEN: u64 = 10;

impl Bbr {
    /// §5.5.1 `StartRound()`.
    pub(super) fn start_round(&mut self) {
        self.next_round_delivered = self.sampler.delivered();
    }

    /// §5.5.1 `UpdateRound()`: a round trip ends with the ACK of a packet
    /// sent after the previous round ended (`P.delivered` is
    /// `RS.prior_delivered`, the newest acknowledged packet's).
    fn update_round(&mut self) {
        match self.rs.prior_delivered {
            Some(p) if p >= self.next_round_delivered => {
                self.start_round();
                self.round_count += 1;
                self.rounds_since_probe_up += 1;
                self.round_start = true;
                // `C.is_cwnd_limited` looks back one round.
                self.cwnd_limited_prev = std::mem::take(&mut self.cwnd_limited_now);
            }
            _ => self.round_start = false,
        }
    }

    /// §5.5.5 `UpdateMaxBw()`: application-limited samples count only when
    /// they exceed the estimate (§5.5.4: "the estimator does use
    /// application-limited samples if the measured delivery rate happens to
    /// be larger than the current BBR.max_bw estimate").
    pub(super) fn update_max_bw(&mut self) {
        self.update_round();
        if let Some(rate) = self.rs.delivery_rate
            && rate > 0.0
            && (rate >= self.max_bw || !self.rs.is_app_limited)
        {
            self.max_bw_filter.update(rate);
            self.max_bw = self.max_bw_filter.get();
        }
    }

    /// §5.5.9 `UpdateACKAggregation()`: data acknowledged beyond what
    /// `BBR.bw` would have delivered since the aggregation interval began,
    /// max-filtered over 10 rounds (1 in Startup).
    pub(super) fn update_ack_aggregation(&mut self, now: Instant) {
        let start = *self.extra_acked_interval_start.get_or_insert(now);
        let interval = now.saturating_duration_since(start).as_secs_f64();
        let mut expected = self.bw * interval;
        // Reset interval if ACK rate is below expected rate:
        if self.extra_acked_delivered as f64 <= expected {
            self.extra_acked_delivered = 0;
            self.extra_acked_interval_start = Some(now);
            expected = 0.0;
        }
        self.extra_acked_delivered = self.extra_acked_delivered.saturating_add(self.rs.newly_acked);
        let extra = (self.extra_acked_delivered as f64 - expected).max(0.0);
        let extra = (extra as u64).min(self.cwnd);
        let filter_len = if self.full_bw_reached {
            EXTRA_ACKED_FILTER_LEN
        } else {
            1 // in Startup, just remember 1 round
        };
        self.extra_acked = self.extra_acked_filter.update(extra, self.round_count, filter_len);
    }
}
