//! The response to loss and ECN: `inflight_longterm` while probing, the
//! short-term model (`bw_shortterm`, `inflight_shortterm`) otherwise, and
//! undoing a spurious recovery (draft-ietf-ccwg-bbr-06 §5.5.10, §5.5.11,
//! §5.6.4.4).

use std::time::Instant;

use super::{Bbr, BbrMode, INFINITE};
use crate::controller::min_window;
use crate::delivery_rate::LostPacket;

impl Bbr {
    /// `lost_bytes` were declared lost: §5.2.4, "On every packet loss event
    /// where the transport protocol marks some packet P as lost, the BBR
    /// algorithm calls HandleLostPacket(P)". The lost bytes are taken from
    /// the oldest send records, one `HandleLostPacket` per record.
    pub(super) fn on_lost_bytes(&mut self, now: Instant, lost_bytes: u64) {
        self.loss_events_in_round = self.loss_events_in_round.saturating_add(1);
        let mut left = lost_bytes;
        let mut first = true;
        while left > 0 {
            let Some(p) = self.sampler.lose_oldest(left) else { break };
            left -= p.size;
            self.handle_lost_packet(now, &p, std::mem::take(&mut first));
        }
        if left > 0 || lost_bytes == 0 {
            // Bytes no record covers still count as lost.
            self.sampler.note_lost(left);
            self.note_loss(first);
        }
    }

    /// An ECN congestion-experienced mark: §3.7 says "the congestion
    /// controller response MUST treat any CE marks as congestion" and leaves
    /// the response open. Ours: the loss of one SMSS sent as the newest
    /// packet of the ACK that reported the mark (see the departures on `Bbr`).
    pub(super) fn on_ce_mark(&mut self, now: Instant) {
        self.loss_events_in_round = self.loss_events_in_round.saturating_add(1);
        let mark = self.mss;
        let p = self.sampler.newest_acked_as_lost(mark);
        self.sampler.note_marked(mark);
        match p {
            Some(p) => {
                let p = LostPacket {
                    lost_since_sent: p.lost_since_sent.saturating_add(mark),
                    ..p
                };
                self.handle_lost_packet(now, &p, true);
            }
            None => self.note_loss(true),
        }
    }

    /// §5.6.4.4 `OnEnterRTO()` (persistent congestion, RFC 9002 §7.6):
    /// "BBR conservatively reduces C.cwnd to a value that will allow 1
    /// C.SMSS to be transmitted", no lower than RFC 9002's minimum window.
    pub(super) fn on_enter_rto(&mut self) {
        self.save_state_upon_loss(); // SaveCwnd() included
        self.cwnd = self.inflight().saturating_add(self.mss).max(min_window(self.mss));
    }

    /// §5.5.10.2 `IsInflightTooHigh()`: "RS.lost > RS.tx_in_flight *
    /// BBR.LossThresh" (every QUIC connection has selective ACKs).
    pub(super) fn is_inflight_too_high(&self, lost: u64, tx_in_flight: u64) -> bool {
        lost as f64 > tx_in_flight as f64 * self.config.loss_thresh
    }

    /// §5.5.10.2 `HandleInflightTooHigh()`: the probe put too much in
    /// flight; remember the level in `inflight_longterm` (no lower than
    /// `Beta` times the target, "to try to ensure that BBR does not react
    /// more dramatically than CUBIC's 0.7x multiplicative decrease factor").
    fn handle_inflight_too_high(&mut self, now: Instant, tx_in_flight: u64, is_app_limited: bool) {
        self.prev_probe_too_high = true;
        self.is_bw_probe_sample = false; // only react once per bw probe
        if !is_app_limited {
            let floor = self.target_inflight() as f64 * self.config.beta;
            self.inflight_longterm = tx_in_flight.max(floor as u64);
        }
        if self.state == BbrMode::ProbeBwUp {
            self.undo_state = Some(BbrMode::ProbeBwUp);
            self.start_probe_bw_down(now);
        }
    }

    /// §5.5.10.2 `NoteLoss()`. `SaveStateUponLoss` runs only for the first
    /// packet of a loss event (`may_save`): when a packet of the event has
    /// already ended a probe (`HandleInflightTooHigh` resets the congestion
    /// signals), the draft's pseudocode, run per packet, would save again and
    /// overwrite the undo state with the state after the response.
    fn note_loss(&mut self, may_save: bool) {
        if !self.is_loss_in_round {
            // first loss in this round trip
            self.loss_round_delivered = self.sampler.delivered();
            if may_save {
                self.save_state_upon_loss();
            }
        }
        self.is_loss_in_round = true;
    }

    /// §5.5.10.2 `HandleLostPacket(P)`: only samples from a bandwidth probe
    /// can lower `inflight_longterm`.
    fn handle_lost_packet(&mut self, now: Instant, p: &LostPacket, first_of_event: bool) {
        self.note_loss(first_of_event);
        if !self.is_bw_probe_sample {
            return; // not a packet sent while probing bandwidth
        }
        if self.is_inflight_too_high(p.lost_since_sent, p.tx_in_flight) {
            let tx_in_flight = self.inflight_at_loss(p);
            self.handle_inflight_too_high(now, tx_in_flight, p.is_app_limited);
        }
    }

    /// §5.5.10.2 `InflightAtLoss(P)`: "At what prefix of 'packet' P did
    /// losses exceed BBR.LossThresh?", solving
    /// `(lost_prev + lost_prefix) / (inflight_prev + lost_prefix) = LossThresh`.
    fn inflight_at_loss(&self, p: &LostPacket) -> u64 {
        let thresh = self.config.loss_thresh;
        let size = p.size as f64;
        // What was in flight, and lost, before this packet?
        let inflight_prev = (p.tx_in_flight as f64 - size).max(0.0);
        let lost_prev = p.lost_since_sent as f64 - size;
        let lost_prefix = (thresh * inflight_prev - lost_prev) / (1.0 - thresh);
        // At what C.inflight value did losses cross BBR.LossThresh?
        (inflight_prev + lost_prefix).clamp(0.0, super::MAX_VOLUME) as u64
    }

    /// §5.5.10.3 `UpdateLatestDeliverySignals()`, near the start of ACK
    /// processing: one-round maxima of the delivery rate and volume, and
    /// the loss round (which ends with the ACK of data sent after its
    /// first loss).
    pub(super) fn update_latest_delivery_signals(&mut self) {
        self.loss_round_start = false;
        self.bw_latest = self.bw_latest.max(self.rs.delivery_rate.unwrap_or(0.0));
        self.inflight_latest = self.inflight_latest.max(self.rs.delivered);
        if self.rs.prior_delivered.is_some_and(|p| p >= self.loss_round_delivered) {
            self.loss_round_delivered = self.sampler.delivered();
            self.loss_round_start = true;
        }
    }

    /// §5.5.10.3 `AdvanceLatestDeliverySignals()`, near the end of ACK processing.
    pub(super) fn advance_latest_delivery_signals(&mut self) {
        if self.loss_round_start {
            self.bw_latest = self.rs.delivery_rate.unwrap_or(0.0);
            self.inflight_latest = self.rs.delivered;
        }
    }

    /// §5.5.10.3 `ResetCongestionSignals()`.
    pub(super) fn reset_congestion_signals(&mut self) {
        self.is_loss_in_round = false;
        self.bw_latest = 0.0;
        self.inflight_latest = 0;
    }

    /// §5.5.10.3 `UpdateCongestionSignals()`, on every ACK.
    pub(super) fn update_congestion_signals(&mut self) {
        self.update_max_bw();
        if !self.loss_round_start {
            return; // wait until end of round trip
        }
        self.adapt_lower_bounds_from_congestion(); // once per round, adapt
        self.is_loss_in_round = false;
    }

    /// §5.5.10.3 `AdaptLowerBoundsFromCongestion()`: when not probing,
    /// "slowing down toward the latest delivery process".
    fn adapt_lower_bounds_from_congestion(&mut self) {
        if self.is_probing_bw() {
            return;
        }
        if self.is_loss_in_round {
            self.init_lower_bounds();
            self.loss_lower_bounds();
        }
    }

    /// §5.3.3.9 `IsProbingBW()`.
    fn is_probing_bw(&self) -> bool {
        matches!(
            self.state,
            BbrMode::Startup | BbrMode::ProbeBwRefill | BbrMode::ProbeBwUp
        )
    }

    /// §5.5.10.3 `InitLowerBounds()`: the first congestion episode in this cycle.
    fn init_lower_bounds(&mut self) {
        if self.bw_shortterm.is_infinite() {
            self.bw_shortterm = self.max_bw;
        }
        if self.inflight_shortterm == INFINITE {
            self.inflight_shortterm = self.cwnd;
        }
    }

    /// §5.5.10.3 `LossLowerBounds()`:
    /// `bw_shortterm = max(bw_latest, Beta * bw_shortterm)`,
    /// `inflight_shortterm = max(inflight_latest, Beta * inflight_shortterm)`.
    fn loss_lower_bounds(&mut self) {
        let beta = self.config.beta;
        self.bw_shortterm = self.bw_latest.max(beta * self.bw_shortterm);
        let scaled = (beta * self.inflight_shortterm as f64) as u64;
        self.inflight_shortterm = self.inflight_latest.max(scaled);
    }

    /// §5.5.10.3 `ResetShortTermModel()`.
    pub(super) fn reset_short_term_model(&mut self) {
        self.bw_shortterm = f64::INFINITY;
        self.inflight_shortterm = INFINITE;
    }

    /// §5.5.10.3 `BoundBWForModel()`: `BBR.bw = min(BBR.max_bw, BBR.bw_shortterm)`.
    pub(super) fn bound_bw_for_model(&mut self) {
        self.bw = self.max_bw.min(self.bw_shortterm);
    }

    /// §5.5.11.1 `SaveStateUponLoss()`.
    pub(super) fn save_state_upon_loss(&mut self) {
        self.save_cwnd();
        self.undo_state = None;
        self.undo_bw_shortterm = self.bw_shortterm;
        self.undo_inflight_shortterm = self.inflight_shortterm;
        self.undo_inflight_longterm = self.inflight_longterm;
    }

    /// §5.5.11.2 `HandleSpuriousLossDetection()`: restore the cwnd and the
    /// models saved when the loss episode began, and return to Startup or
    /// to a bandwidth probe if the loss ended one.
    pub(super) fn handle_spurious_loss_detection(&mut self) {
        self.restore_cwnd();
        self.is_loss_in_round = false;
        self.reset_full_bw();
        self.bw_shortterm = self.bw_shortterm.max(self.undo_bw_shortterm);
        self.inflight_shortterm = self.inflight_shortterm.max(self.undo_inflight_shortterm);
        self.inflight_longterm = self.inflight_longterm.max(self.undo_inflight_longterm);
        // If flow was probing bandwidth, return to that state:
        match self.undo_state {
            Some(BbrMode::Startup) if self.state != BbrMode::Startup => {
                self.full_bw_reached = false;
                if self.state != BbrMode::ProbeRtt {
                    self.enter_startup();
                }
            }
            Some(BbrMode::ProbeBwUp) if !matches!(self.state, BbrMode::ProbeBwUp | BbrMode::ProbeRtt) => {
                self.start_probe_bw_refill();
            }
            _ => {}
        }
        self.undo_state = None;
        // The undo ends the loss recovery episode (§5.6.4.4: "exiting loss
        // recovery ... because it executes an 'undo' event").
        self.recovery.reset();
    }
}
