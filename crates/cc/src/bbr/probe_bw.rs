//! The ProbeBW cycle: DOWN, CRUISE, REFILL, UP (draft-ietf-ccwg-bbr-06
//! §5.3.3, pseudocode in §5.3.3.8.3 and §5.3.3.9).

use std::time::{Duration, Instant};

use super::{AckPhase, Bbr, BbrMode, INFINITE};

/// `RaiseInflightLongtermSlope()`: `bw_probe_up_rounds` stops at 30.
const MAX_PROBE_UP_ROUNDS: u32 = 30;
/// §5.3.3.8.2: "T_reno_bound = pick_randomly_either({62, 63})"; the
/// pseudocode draws 0 or 1 into `rounds_since_probe_up` and caps at 63.
const MAX_RENO_ROUNDS: u64 = 63;
/// §5.3.3.8.2: "T_bbr = uniformly randomly distributed between 2 and 3 secs".
const PROBE_WAIT_BASE: Duration = Duration::from_secs(2);

impl Bbr {
    /// §5.3.3.9 `EnterProbeBW()`.
    pub(super) fn enter_probe_bw(&mut self, now: Instant) {
        self.cwnd_gain = self.config.cwnd_gain;
        self.start_probe_bw_down(now);
    }

    /// §5.3.3.9 `StartProbeBW_DOWN()`.
    pub(super) fn start_probe_bw_down(&mut self, now: Instant) {
        self.reset_congestion_signals();
        self.probe_up_acked_per_inc = INFINITE; // not growing inflight_longterm
        self.pick_probe_wait(now);
        self.cycle_stamp = Some(now); // start wall clock
        self.ack_phase = AckPhase::ProbeStopping;
        self.start_round();
        self.set_state(BbrMode::ProbeBwDown);
    }

    /// §5.3.3.9 `StartProbeBW_CRUISE()`.
    pub(super) fn start_probe_bw_cruise(&mut self) {
        self.set_state(BbrMode::ProbeBwCruise);
    }

    /// §5.3.3.9 `StartProbeBW_REFILL()`: "BBR first resets the short-term
    /// model parameters ... This is the key moment in the BBR time scale
    /// strategy" (§5.3.3.3).
    pub(super) fn start_probe_bw_refill(&mut self) {
        self.reset_short_term_model();
        self.bw_probe_up_rounds = 0;
        self.bw_probe_up_acked = 0;
        self.prev_probe_precautionary = false;
        self.ack_phase = AckPhase::Refilling;
        self.start_round();
        self.set_state(BbrMode::ProbeBwRefill);
    }

    /// §5.3.3.9 `StartProbeBW_UP()`.
    fn start_probe_bw_up(&mut self) {
        self.ack_phase = AckPhase::ProbeStarting;
        self.start_round();
        self.reset_full_bw();
        self.full_bw = self.rs.delivery_rate.unwrap_or(0.0);
        self.set_state(BbrMode::ProbeBwUp);
        self.raise_inflight_longterm_slope();
    }

    /// §5.3.3.9 `UpdateProbeBWCyclePhase()`, on every ACK. Each arm is a
    /// case of the draft's `switch`, kept in its shape (a guard would hide
    /// that `IsTimeToGoDown()` can reset the full-pipe estimator).
    #[allow(clippy::collapsible_match)]
    pub(super) fn update_probe_bw_cycle_phase(&mut self, now: Instant) {
        if !self.full_bw_reached {
            return; // only handling steady-state behavior here
        }
        if self.adapt_long_term_model() {
            return; // already decided state transition
        }
        match self.state {
            BbrMode::ProbeBwDown => {
                if self.is_time_to_probe_bw(now) {
                    return; // already decided state transition
                }
                if self.is_time_to_cruise() {
                    self.start_probe_bw_cruise();
                }
            }
            BbrMode::ProbeBwCruise => {
                self.is_time_to_probe_bw(now);
            }
            BbrMode::ProbeBwRefill => {
                // After one round of REFILL, start UP.
                if self.round_start {
                    self.is_bw_probe_sample = true;
                    self.start_probe_bw_up();
                }
            }
            BbrMode::ProbeBwUp => {
                if self.is_time_to_go_down() {
                    self.prev_probe_too_high = false; // no high loss (yet)
                    self.start_probe_bw_down(now);
                }
            }
            _ => {} // only handling ProbeBW states here
        }
    }

    /// §5.3.3.8.3 `IsTimeToProbeBW()`: from DOWN or CRUISE to REFILL?
    fn is_time_to_probe_bw(&mut self, now: Instant) -> bool {
        if self.has_elapsed_in_phase(now, self.bw_probe_wait) || self.is_reno_coexistence_probe_time() {
            self.start_probe_bw_refill();
            return true;
        }
        false
    }

    /// §5.3.3.8.3 `PickProbeWait()`: a random 0 or 1 round head start and a
    /// wall-clock wait of 2 to 3 s.
    pub(super) fn pick_probe_wait(&mut self, now: Instant) {
        self.rounds_since_probe_up = u64::from(self.random_unit(now) >= 0.5);
        let extra = self.random_unit(now);
        self.bw_probe_wait = PROBE_WAIT_BASE + Duration::from_secs_f64(extra);
    }

    /// §5.3.3.8.3 `IsRenoCoexistenceProbeTime()`. `TargetInflight()` is in
    /// bytes in this document but compared with a number of rounds: it is
    /// taken in packets here, as the bound on Reno's probing interval it
    /// stands for ("T_reno = min(reno_bdp, T_reno_bound) round trips",
    /// with BDPs counted in packets in §5.3.3.8.1).
    fn is_reno_coexistence_probe_time(&self) -> bool {
        let reno_rounds = self.target_inflight() / self.mss;
        let rounds = reno_rounds.min(MAX_RENO_ROUNDS);
        self.rounds_since_probe_up >= rounds
    }

    /// §5.3.3.9 `HasElapsedInPhase()`: `Now() > BBR.cycle_stamp + interval`.
    fn has_elapsed_in_phase(&self, now: Instant, interval: Duration) -> bool {
        self.cycle_stamp
            .is_some_and(|stamp| now.saturating_duration_since(stamp) > interval)
    }

    /// §5.3.3.9 `IsTimeToCruise()`: from DOWN to CRUISE?
    fn is_time_to_cruise(&self) -> bool {
        let inflight = self.inflight();
        if inflight > self.inflight_with_headroom() {
            return false; // not enough headroom
        }
        if inflight > self.inflight_with_gain(self.max_bw, 1.0) {
            return false; // C.inflight > estimated BDP
        }
        true
    }

    /// §5.3.3.9 `IsTimeToGoDown()`: from UP to DOWN?
    ///
    /// "C.inflight reaches the risky BBR.inflight_longterm level" (§5.3.3.7)
    /// is judged on the data in flight when this ACK arrived, within one
    /// SMSS: a window-limited sender stops a packet short of its window
    /// (quinn sends only while `in_flight + segment < window`), and after
    /// the ACK the flight is one packet lower still. Linux BBRv3 likewise
    /// uses the flight before the ACK (`rs->prior_in_flight`).
    fn is_time_to_go_down(&mut self) -> bool {
        // Precautionary Bandwidth Probing: Deceleration (§5.3.3.6).
        if self.prev_probe_too_high && self.prior_inflight.saturating_add(self.mss) >= self.inflight_longterm {
            self.prev_probe_precautionary = true;
            return true;
        }
        if self.is_cwnd_limited() && self.cwnd >= self.inflight_longterm {
            // bw is limited by inflight_longterm: "the flow cannot fully
            // explore the available bandwidth, and so it resets the 'full
            // pipe' estimator" (§5.3.3.7).
            self.reset_full_bw();
            self.full_bw = self.rs.delivery_rate.unwrap_or(0.0);
        } else if self.full_bw_now {
            return true; // we estimate we've fully used path bw
        }
        false
    }

    /// §5.3.3.9 `RaiseInflightLongtermSlope()`: in UP, `inflight_longterm`
    /// grows by 1, 2, 4, ... SMSS per round, spread over the round.
    fn raise_inflight_longterm_slope(&mut self) {
        let growth_this_round = 1u64 << self.bw_probe_up_rounds;
        self.bw_probe_up_rounds = (self.bw_probe_up_rounds + 1).min(MAX_PROBE_UP_ROUNDS);
        self.probe_up_acked_per_inc = (self.cwnd / growth_this_round).max(self.mss);
    }

    /// §5.3.3.9 `ProbeInflightLongtermUpward()`.
    fn probe_inflight_longterm_upward(&mut self) {
        if !self.is_cwnd_limited() || self.cwnd < self.inflight_longterm {
            return; // not fully using inflight_longterm, so don't grow it
        }
        self.bw_probe_up_acked = self.bw_probe_up_acked.saturating_add(self.rs.newly_acked);
        if self.bw_probe_up_acked >= self.probe_up_acked_per_inc {
            let delta = self.bw_probe_up_acked / self.probe_up_acked_per_inc;
            self.bw_probe_up_acked -= delta * self.probe_up_acked_per_inc;
            self.inflight_longterm = self
                .inflight_longterm
                .saturating_add(delta.saturating_mul(self.mss))
                .min(super::MAX_VOLUME as u64);
        }
        if self.round_start {
            self.raise_inflight_longterm_slope();
        }
    }

    /// §5.3.3.9 `AdaptLongTermModel()`: track the ACK phase, advance the
    /// `max_bw` window and raise `inflight_longterm`. Returns true if it
    /// decided a state transition.
    fn adapt_long_term_model(&mut self) -> bool {
        if self.ack_phase == AckPhase::ProbeStarting && self.round_start {
            // starting to get bw probing samples
            self.ack_phase = AckPhase::ProbeFeedback;
        }
        if self.ack_phase == AckPhase::ProbeStopping && self.round_start {
            // end of samples from bw probing phase
            self.is_bw_probe_sample = false;
            self.ack_phase = AckPhase::Init;
            if self.state.is_probe_bw() && !self.rs.is_app_limited {
                // §5.5.6 `AdvanceMaxBwFilter()`; the new window's maximum
                // holds from now on.
                self.max_bw_filter.advance();
                self.max_bw = self.max_bw_filter.get();
            }
            // Precautionary Bandwidth Probing: Acceleration (§5.3.3.6).
            if self.state.is_probe_bw() && self.prev_probe_precautionary && !self.prev_probe_too_high {
                self.start_probe_bw_refill();
                return true;
            }
        }
        if !self.is_inflight_too_high(self.rs.lost, self.rs.tx_in_flight) {
            // Loss rate is safe. Adjust upper bounds upward.
            if self.inflight_longterm == INFINITE {
                return false; // no upper bounds to raise
            }
            if self.rs.tx_in_flight > self.inflight_longterm {
                self.inflight_longterm = self.rs.tx_in_flight;
            }
            if self.state == BbrMode::ProbeBwUp {
                self.probe_inflight_longterm_upward();
            }
        }
        false
    }
}
