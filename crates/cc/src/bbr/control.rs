//! The control parameters: pacing rate, send quantum and congestion window
//! (draft-ietf-ccwg-bbr-06 §5.6).

use std::time::Duration;

use super::{Bbr, BbrMode, INFINITE, MAX_VOLUME};

/// §2.9.2 / §5.6.4.3: `BBR.MinPipeCwnd` is 4 SMSS.
const MIN_PIPE_PACKETS: u64 = 4;
/// §5.6.3: `C.send_quantum = C.pacing_rate * 1ms`, at most 64 KBytes.
const SEND_QUANTUM_TIME: Duration = Duration::from_millis(1);
/// §5.6.3's 64 KBytes.
const MAX_SEND_QUANTUM: u64 = 64 * 1024;
/// §5.6.2 `InitPacingRate()`: "C.srtt ? C.srtt : 1ms".
const DEFAULT_SRTT: Duration = Duration::from_millis(1);

impl Bbr {
    /// `BBR.MinPipeCwnd`.
    pub(super) fn min_pipe_cwnd(&self) -> u64 {
        MIN_PIPE_PACKETS * self.mss
    }

    /// §5.6.2 `InitPacingRate()`: `StartupPacingGain * InitialCwnd / srtt`.
    pub(super) fn init_pacing_rate(&mut self) {
        let srtt = self.srtt.filter(|d| !d.is_zero()).unwrap_or(DEFAULT_SRTT);
        self.has_seen_rtt = self.srtt.is_some();
        let nominal_bandwidth = self.initial_cwnd as f64 / srtt.as_secs_f64();
        self.pacing_rate = self.config.startup_gain * nominal_bandwidth;
    }

    /// §5.6.2 `SetPacingRateWithGain()`: `gain * bw * (100 - margin) / 100`,
    /// taken once the pipe has been filled, or earlier when it is higher
    /// ("this prevents the pacing rate from being reduced when the connection
    /// has only seen application-limited bandwidth samples"). A zero rate
    /// (no bandwidth sample at all) leaves the rate as it is.
    pub(super) fn set_pacing_rate_with_gain(&mut self, gain: f64) {
        let rate = gain * self.bw * (100.0 - self.config.pacing_margin) / 100.0;
        if rate > 0.0 && (self.full_bw_reached || rate > self.pacing_rate) {
            self.pacing_rate = rate;
        }
    }

    /// §5.6.2 `SetPacingRate()`.
    pub(super) fn set_pacing_rate(&mut self) {
        self.set_pacing_rate_with_gain(self.pacing_gain);
    }

    /// §5.6.3 `SetSendQuantum()`: a millisecond at the pacing rate, within
    /// `[2 SMSS, 64 KBytes]`.
    pub(super) fn set_send_quantum(&mut self) {
        let quantum = (self.pacing_rate * SEND_QUANTUM_TIME.as_secs_f64()).min(MAX_SEND_QUANTUM as f64) as u64;
        self.send_quantum = quantum.max(2 * self.mss);
    }

    /// §5.6.4.2 `BDPMultiple(gain)` with an explicit bandwidth: `gain * bw *
    /// min_rtt`, or `C.InitialCwnd` before any RTT sample.
    fn bdp_multiple(&self, bw: f64, gain: f64) -> f64 {
        match self.min_rtt {
            None => self.initial_cwnd as f64,
            Some(rtt) => (gain * bw * rtt.as_secs_f64()).min(MAX_VOLUME),
        }
    }

    /// `BBR.bdp = BBR.bw * BBR.min_rtt` (§2.9.2), bytes.
    pub(super) fn bdp(&self) -> u64 {
        self.bdp_multiple(self.bw, 1.0) as u64
    }

    /// §5.6.4.2 `QuantizationBudget()`: room for the offload budget (QUIC:
    /// one send quantum, §5.5.8.2), `MinPipeCwnd`, and 2 SMSS more in UP.
    fn quantization_budget(&self, inflight_cap: f64) -> u64 {
        let offload_budget = self.send_quantum;
        let mut cap = (inflight_cap as u64).max(offload_budget).max(self.min_pipe_cwnd());
        if self.state == BbrMode::ProbeBwUp {
            cap = cap.saturating_add(2 * self.mss);
        }
        cap
    }

    /// §5.6.4.2 `Inflight(gain)`, with the bandwidth explicit (the draft
    /// writes both `Inflight(1.0)`, at `BBR.bw`, and `Inflight(BBR.max_bw,
    /// 1.0)`).
    pub(super) fn inflight_with_gain(&self, bw: f64, gain: f64) -> u64 {
        self.quantization_budget(self.bdp_multiple(bw, gain))
    }

    /// §5.6.4.2 `UpdateMaxInflight()`.
    fn update_max_inflight(&mut self) {
        let inflight_cap = self.bdp_multiple(self.bw, self.cwnd_gain) + self.extra_acked as f64;
        self.max_inflight = self.quantization_budget(inflight_cap);
    }

    /// §5.3.3.8.3 `TargetInflight()`: "Our estimated BDP, unless congestion
    /// cut C.cwnd."
    pub(super) fn target_inflight(&self) -> u64 {
        self.bdp().min(self.cwnd)
    }

    /// §5.3.3.9 `InflightWithHeadroom()`: leave `Headroom` of
    /// `inflight_longterm` (at least one SMSS) free for other flows.
    pub(super) fn inflight_with_headroom(&self) -> u64 {
        if self.inflight_longterm == INFINITE {
            return INFINITE;
        }
        let headroom = (self.config.headroom * self.inflight_longterm as f64).max(self.mss as f64) as u64;
        self.inflight_longterm
            .saturating_sub(headroom)
            .max(self.min_pipe_cwnd())
    }

    /// §5.6.4.5 `ProbeRTTCwnd()`.
    pub(super) fn probe_rtt_cwnd(&self) -> u64 {
        (self.bdp_multiple(self.bw, self.config.probe_rtt_gain) as u64).max(self.min_pipe_cwnd())
    }

    /// §5.6.4.4 `SaveCwnd()`: remember "the last-known good C.cwnd (the
    /// latest C.cwnd unmodulated by loss recovery or ProbeRTT)".
    pub(super) fn save_cwnd(&mut self) {
        if !self.recovery.is_open() && self.state != BbrMode::ProbeRtt {
            self.prior_cwnd = self.cwnd;
        } else {
            self.prior_cwnd = self.prior_cwnd.max(self.cwnd);
        }
    }

    /// §5.6.4.4 `RestoreCwnd()`.
    pub(super) fn restore_cwnd(&mut self) {
        self.cwnd = self.cwnd.max(self.prior_cwnd);
    }

    /// §5.6.4.6 `SetCwnd()`: cut to `max_inflight` at once, grow toward it
    /// by at most the data acknowledged.
    pub(super) fn set_cwnd(&mut self) {
        self.update_max_inflight();
        let acked = self.rs.newly_acked;
        if self.full_bw_reached {
            self.cwnd = self.cwnd.saturating_add(acked).min(self.max_inflight);
        } else if self.cwnd < self.max_inflight || self.sampler.delivered() < self.initial_cwnd {
            self.cwnd = self.cwnd.saturating_add(acked);
        }
        self.cwnd = self.cwnd.max(self.min_pipe_cwnd()).min(MAX_VOLUME as u64);
        self.bound_cwnd_for_probe_rtt();
        self.bound_cwnd_for_model();
    }

    /// §5.6.4.5 `BoundCwndForProbeRTT()`.
    fn bound_cwnd_for_probe_rtt(&mut self) {
        if self.state == BbrMode::ProbeRtt {
            self.cwnd = self.cwnd.min(self.probe_rtt_cwnd());
        }
    }

    /// §5.6.4.7 `BoundCwndForModel()`: the "Volume Cap" column of §5.6.1.
    fn bound_cwnd_for_model(&mut self) {
        let mut cap = INFINITE;
        if self.state.is_probe_bw() && self.state != BbrMode::ProbeBwCruise {
            cap = self.inflight_longterm;
        } else if matches!(self.state, BbrMode::ProbeRtt | BbrMode::ProbeBwCruise) {
            cap = self.inflight_with_headroom();
        }
        // apply inflight_shortterm (possibly infinite):
        cap = cap.min(self.inflight_shortterm).max(self.min_pipe_cwnd());
        self.cwnd = self.cwnd.min(cap);
    }
}
