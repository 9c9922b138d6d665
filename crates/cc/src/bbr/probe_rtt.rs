//! `BBR.min_rtt`, ProbeRTT and restarting from idle (draft-ietf-ccwg-bbr-06
//! §5.3.4, §5.4, §5.5.7).

use std::time::{Duration, Instant};

use super::{AckPhase, Bbr, BbrMode};

/// `Now() > stamp + interval`, computed without adding to an `Instant`
/// (so that no configured interval can overflow it).
fn expired(now: Instant, stamp: Option<Instant>, interval: Duration) -> bool {
    stamp.is_some_and(|s| now.saturating_duration_since(s) > interval)
}

impl Bbr {
    /// §5.3.4.3 `UpdateMinRTT()`: the ProbeRTT filter keeps the smallest RTT
    /// of the last `ProbeRTTInterval`, and `min_rtt` takes it when it is
    /// lower or when `min_rtt` is older than `MinRTTFilterLen`.
    pub(super) fn update_min_rtt(&mut self, now: Instant) {
        self.probe_rtt_expired = expired(now, self.probe_rtt_min_stamp, self.config.probe_rtt_interval);
        if let Some(rtt) = self.rs.rtt
            && (self.probe_rtt_min_delay.is_none_or(|d| rtt < d) || self.probe_rtt_expired)
        {
            self.probe_rtt_min_delay = Some(rtt);
            self.probe_rtt_min_stamp = Some(now);
        }
        let min_rtt_expired = expired(now, self.min_rtt_stamp, self.config.min_rtt_window);
        if let Some(delay) = self.probe_rtt_min_delay
            && (self.min_rtt.is_none_or(|m| delay < m) || min_rtt_expired)
        {
            self.min_rtt = Some(delay);
            self.min_rtt_stamp = self.probe_rtt_min_stamp;
        }
    }

    /// §5.3.4.3 `CheckProbeRTT()`: "In any state other than ProbeRTT itself,
    /// if the BBR.probe_rtt_min_delay estimate has not been updated ... for
    /// more than BBR.ProbeRTTInterval = 5 seconds, then BBR enters ProbeRTT".
    pub(super) fn check_probe_rtt(&mut self, now: Instant) {
        if self.state != BbrMode::ProbeRtt && self.probe_rtt_expired && !self.idle_restart {
            self.enter_probe_rtt();
            self.save_cwnd();
            self.probe_rtt_done_stamp = None;
            self.ack_phase = AckPhase::ProbeStopping;
            self.start_round();
        }
        if self.state == BbrMode::ProbeRtt {
            self.handle_probe_rtt(now);
        }
        if self.rs.delivered > 0 {
            self.idle_restart = false;
        }
    }

    /// §5.3.4.3 `EnterProbeRTT()`.
    fn enter_probe_rtt(&mut self) {
        self.set_state(BbrMode::ProbeRtt);
    }

    /// §5.3.4.3 `HandleProbeRTT()`: once inflight is down to
    /// `ProbeRTTCwnd()`, wait `ProbeRTTDuration` and a round trip.
    fn handle_probe_rtt(&mut self, now: Instant) {
        // Ignore low rate samples during ProbeRTT:
        self.sampler.mark_app_limited();
        if self.probe_rtt_done_stamp.is_none() && self.inflight() <= self.probe_rtt_cwnd() {
            // Wait for at least ProbeRTTDuration to elapse (the stamp is
            // when the wait began; done once ProbeRTTDuration has passed):
            self.probe_rtt_done_stamp = Some(now);
            // Wait for at least one round to elapse:
            self.probe_rtt_round_done = false;
            self.start_round();
        } else if self.probe_rtt_done_stamp.is_some() {
            if self.round_start {
                self.probe_rtt_round_done = true;
            }
            if self.probe_rtt_round_done {
                self.check_probe_rtt_done(now);
            }
        }
    }

    /// §5.3.4.3 `CheckProbeRTTDone()`.
    fn check_probe_rtt_done(&mut self, now: Instant) {
        if expired(now, self.probe_rtt_done_stamp, self.config.probe_rtt_duration) {
            // schedule next ProbeRTT:
            self.probe_rtt_min_stamp = Some(now);
            self.restore_cwnd();
            self.exit_probe_rtt(now);
        }
    }

    /// §5.3.4.4 `ExitProbeRTT()`: back to ProbeBW, "starting the cycle at
    /// ProbeBW_DOWN() ... the connection can proceed immediately to
    /// ProbeBW_CRUISE", or to Startup if the pipe was never filled.
    fn exit_probe_rtt(&mut self, now: Instant) {
        self.reset_short_term_model();
        if self.full_bw_reached {
            self.start_probe_bw_down(now);
            self.start_probe_bw_cruise();
        } else {
            self.enter_startup();
        }
    }

    /// §5.4.1 `HandleRestartFromIdle()`, before each transmission.
    pub(super) fn handle_restart_from_idle(&mut self, now: Instant) {
        if self.inflight() == 0 && self.sampler.is_app_limited() {
            self.idle_restart = true;
            self.extra_acked_interval_start = Some(now);
            if self.state.is_probe_bw() {
                self.set_pacing_rate_with_gain(1.0);
            } else if self.state == BbrMode::ProbeRtt {
                self.check_probe_rtt_done(now);
            }
        }
    }
}
