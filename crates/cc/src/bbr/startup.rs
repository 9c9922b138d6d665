//! Startup and Drain (draft-ietf-ccwg-bbr-06 §5.3.1, §5.3.2), and the
//! full-pipe estimator that ends Startup and ProbeBW_UP (§5.3.1.2).

use std::time::Instant;

use super::{Bbr, BbrMode};

/// §5.3.1.2: "if BBR counts several (three) non-application-limited rounds
/// where attempts to significantly increase the delivery rate actually
/// result in little increase (less than 25 percent)".
const FULL_BW_GROWTH: f64 = 1.25;
/// The "three" rounds of the same sentence.
const FULL_BW_ROUNDS: u32 = 3;
/// §5.3.1.3: "There are at least BBRStartupFullLossCnt=6 discontiguous
/// sequence ranges lost in that round trip."
const STARTUP_FULL_LOSS_COUNT: u32 = 6;

impl Bbr {
    /// §5.3.1.1 `EnterStartup()`.
    pub(super) fn enter_startup(&mut self) {
        self.set_state(BbrMode::Startup);
    }

    /// §5.3.1.2 `ResetFullBW()`.
    pub(super) fn reset_full_bw(&mut self) {
        self.full_bw = 0.0;
        self.full_bw_count = 0;
        self.full_bw_now = false;
    }

    /// §5.3.1.2 `CheckFullBWReached()`, on every ACK.
    pub(super) fn check_full_bw_reached(&mut self) {
        if self.full_bw_now || !self.round_start || self.rs.is_app_limited {
            return; // no need to check for a full pipe now
        }
        let rate = self.rs.delivery_rate.unwrap_or(0.0);
        if rate >= self.full_bw * FULL_BW_GROWTH {
            self.reset_full_bw(); // bw is still growing, so reset
            self.full_bw = rate; // record new baseline bw
            return;
        }
        self.full_bw_count += 1; // another round w/o much growth
        self.full_bw_now = self.full_bw_count >= FULL_BW_ROUNDS;
        if self.full_bw_now {
            self.full_bw_reached = true;
        }
    }

    /// §5.3.1.1 `CheckStartupDone()`.
    pub(super) fn check_startup_done(&mut self) {
        self.check_startup_high_loss();
        if self.state == BbrMode::Startup && self.full_bw_reached {
            self.enter_drain();
        }
    }

    /// §5.3.1.3 `CheckStartupHighLoss()`, which the draft gives in prose:
    /// Startup ends on loss when, at the end of a round trip, "the
    /// connection has been in fast recovery for at least one full
    /// packet-timed round trip", "the loss rate over the time scale of a
    /// single full round trip exceeds BBR.LossThresh" (`IsInflightTooHigh()`
    /// on this ACK's sample, whose packet was sent a round ago), and "there
    /// are at least BBRStartupFullLossCnt=6 discontiguous sequence ranges
    /// lost in that round trip" (loss events here; see the departures on `Bbr`).
    fn check_startup_high_loss(&mut self) {
        if self.state != BbrMode::Startup || self.full_bw_reached || !self.loss_round_start {
            return;
        }
        let events = std::mem::take(&mut self.loss_events_in_round);
        // RFC 9002's recovery period ends with the ACK of a packet sent after
        // it began, which is the very ACK that ends the loss round: read
        // InLossRecovery() as it was when this ACK arrived.
        let recovering_a_round = self.recovery_open_at_ack && self.round_count > self.recovery_round;
        if recovering_a_round
            && events >= STARTUP_FULL_LOSS_COUNT
            && self.is_inflight_too_high(self.rs.lost, self.rs.tx_in_flight)
        {
            // "First, it sets BBR.undo_state = Startup ... Second, it sets
            // BBR.full_bw_reached = true. Then it sets BBR.inflight_longterm
            // to ... max(BBR.bdp, BBR.inflight_latest)".
            self.undo_state = Some(BbrMode::Startup);
            self.full_bw_reached = true;
            self.full_bw_now = true;
            self.inflight_longterm = self.bdp().max(self.inflight_latest);
        }
    }

    /// §5.3.2 `EnterDrain()`.
    pub(super) fn enter_drain(&mut self) {
        self.set_state(BbrMode::Drain); // pace slowly, maintain cwnd
        self.drain_start_round = self.round_count;
    }

    /// §5.3.2 `CheckDrainDone()`: "In Drain, when the amount of data in
    /// flight is less than or equal to the estimated BDP ... BBR exits Drain
    /// and enters ProbeBW ... BBR enters ProbeBW after 3 round-trips"
    /// otherwise.
    pub(super) fn check_drain_done(&mut self, now: Instant) {
        if self.state == BbrMode::Drain
            && (self.inflight() <= self.inflight_with_gain(self.bw, 1.0)
                || self.round_count > self.drain_start_round + 3)
        {
            self.enter_probe_bw(now);
        }
    }
}
