//! Vegas: L. S. Brakmo and L. L. Peterson, "TCP Vegas: New Techniques for
//! Congestion Detection and Avoidance", SIGCOMM 1994 (journal version: IEEE
//! JSAC 13(8), 1995), on top of RFC 9002's QUIC loss recovery.
//!
//! The once-per-RTT structure follows the paper's description and Linux's
//! `tcp_vegas` (a round ends with the first ACK of a packet sent after the
//! previous round ended). Windows are in bytes; the paper's "packets"
//! (`alpha`, `beta`, `gamma`, `diff`, the +/-1 steps) are `max_datagram_size`
//! bytes.

use std::time::Instant;

use crate::controller::{
    Ack, AlgorithmState, Congestion, CongestionController, DelayRounds, RoundEnd, Snapshot, init_window, min_window,
};
use crate::error::ConfigError;
use crate::reno::{Growth, RenoCore, Window, WindowAdjustment};

/// Parameters of [`Vegas`], in packets (Brakmo & Peterson 1994 §3.2).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
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

// The negated comparisons in `validate` are deliberate: they also reject NaN.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
impl VegasConfig {
    /// Check the parameters.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.alpha >= 0.0) {
            return Err(ConfigError::new(
                "vegas",
                "alpha",
                format!("{} must be >= 0", self.alpha),
            ));
        }
        if !(self.alpha <= self.beta) {
            return Err(ConfigError::new(
                "vegas",
                "alpha",
                format!("{} must not exceed beta {}", self.alpha, self.beta),
            ));
        }
        if !(self.gamma >= 0.0) {
            return Err(ConfigError::new(
                "vegas",
                "gamma",
                format!("{} must be >= 0", self.gamma),
            ));
        }
        Ok(())
    }
}

/// Vegas congestion avoidance (Brakmo & Peterson 1994).
///
/// Once per round trip (§3.2) Vegas compares `Expected = cwnd / BaseRTT` with
/// `Actual = cwnd / RTT` and computes `diff = (Expected - Actual) * BaseRTT`,
/// the number of packets it keeps queued in the network:
///
/// - `BaseRTT` is the smallest RTT ever measured (the path's `min_rtt` and
///   every `latest_rtt` sample);
/// - `RTT` is the smallest RTT sample of the round just ended (as Linux
///   `tcp_vegas`, which uses the round's minimum to filter out delayed ACKs);
/// - `cwnd` is the window at the end of the round, so
///   `diff = cwnd * (RTT - BaseRTT) / RTT` packets.
///
/// Congestion avoidance (§3.2): `diff < alpha`: `cwnd += 1` packet;
/// `diff > beta`: `cwnd -= 1` packet; otherwise hold. Once per round.
///
/// Slow start (§3.3): "Vegas allows exponential growth only every other RTT.
/// In between, the congestion window stays fixed so a valid comparison of the
/// expected and actual rates can be made." In growth rounds `cwnd += acked`
/// per ACK (RFC 9002 §7.3.1); at the end of each fixed round, `diff > gamma`
/// switches to congestion avoidance. The paper does not say what the window
/// becomes then; like Linux we take `cwnd = min(cwnd, cwnd * BaseRTT / RTT + 1)`
/// packets, the window that would leave one packet queued, and set
/// `ssthresh = cwnd`. Slow start also ends, as in Reno, when `cwnd >= ssthresh`.
///
/// Loss and ECN (deviation): the paper pairs its decrease with its own
/// fine-grained retransmission mechanism (§3.1). QUIC detects loss with RFC
/// 9002 §6, the analogue of Reno's fast retransmit, so we reduce like Reno:
/// `ssthresh = cwnd / 2`, `cwnd = ssthresh` (RFC 9002 §7.3.2,
/// kLossReductionFactor; Linux `tcp_vegas` does the same via
/// `tcp_reno_ssthresh`). Like the paper (§3.1: only decrease "if the
/// retransmitted segment was previously sent after the last decrease"), this
/// happens at most once per round trip. Persistent congestion (the
/// retransmission-timeout analogue) collapses to RFC 9002's minimum window and
/// restarts slow start (§7.6.2). While in recovery and while
/// application-limited (RFC 9002 §7.8) the window does not grow; during
/// recovery Vegas's delay-based decrease is also suspended, so a round does
/// not compound the multiplicative decrease.
///
/// Slow start, the reduction, recovery and persistent congestion are the
/// classic core's (`reno.rs`); Vegas adds its rounds to it.
#[derive(Debug, Clone)]
pub struct Vegas {
    core: RenoCore<u64>,
    delay: VegasRounds,
}

/// What Vegas adds to the classic core: BaseRTT, the rounds and `diff`.
#[derive(Debug, Clone)]
struct VegasRounds {
    config: VegasConfig,
    /// BaseRTT and the once-per-RTT rounds (§3.2).
    rounds: DelayRounds,
    /// Slow start: whether the current round keeps the window fixed (§3.3).
    ss_hold: bool,
    /// `diff` of the last round, packets.
    diff: f64,
}

impl Vegas {
    /// A Vegas controller for a path with maximum datagram size `max_datagram_size` bytes.
    pub fn new(config: VegasConfig, max_datagram_size: u16) -> Self {
        let mss = u64::from(max_datagram_size);
        Self {
            core: RenoCore::new(mss),
            delay: VegasRounds {
                config,
                rounds: DelayRounds::default(),
                ss_hold: false,
                diff: 0.0,
            },
        }
    }
}

impl VegasRounds {
    /// The end of a round (§3.2, §3.3): compute `diff` and adjust the window.
    fn end_round(&mut self, end: RoundEnd, core: &mut RenoCore<u64>) {
        let app_limited = end.app_limited;
        let Some((base, rtt)) = end.rtts else {
            return;
        };
        let (base, rtt) = (base.as_secs_f64(), rtt.as_secs_f64());
        let mss = core.mss().max(1);
        let cwnd = core.cwnd();
        let cwnd_pkts = cwnd as f64 / mss as f64;
        // (Expected - Actual) * BaseRTT = cwnd * (RTT - BaseRTT) / RTT.
        // BaseRTT <= RTT by construction; the max guards the odd rest.
        let diff = (cwnd_pkts * (rtt - base) / rtt).max(0.0);
        self.diff = if diff.is_finite() { diff } else { 0.0 };
        if core.in_recovery() {
            return;
        }
        let min = core.min_window();
        if core.in_slow_start() {
            if self.ss_hold && self.diff > self.config.gamma {
                // §3.3: leave slow start; the window that keeps one packet
                // queued (Linux: `min(cwnd, target_cwnd + 1)`).
                let target = ((cwnd_pkts * base / rtt + 1.0) * mss as f64) as u64;
                let cwnd = cwnd.min(target).max(min);
                core.set_cwnd(cwnd);
                core.set_ssthresh(cwnd);
                self.ss_hold = false;
                return;
            }
            self.ss_hold = !self.ss_hold;
            return;
        }
        if self.diff > self.config.beta {
            let cwnd = cwnd.saturating_sub(mss).max(min);
            core.set_cwnd(cwnd);
            // Stay in congestion avoidance below the old threshold.
            core.set_ssthresh(core.ssthresh_raw().min(cwnd));
        } else if self.diff < self.config.alpha && !app_limited {
            core.set_cwnd((cwnd + mss).min(<u64 as Window>::CAP));
        }
    }
}

impl WindowAdjustment for VegasRounds {
    /// Congestion avoidance changes the window once per round, not per ACK.
    fn avoidance(&mut self, _now: Instant, _ack: &Ack, _cwnd: u64, _mss: u64) -> Growth<u64> {
        Growth::Hold
    }

    /// §3.2: BaseRTT, and the end of a round once per RTT (also in recovery
    /// and while application-limited).
    fn on_ack_seen(&mut self, now: Instant, ack: &Ack, core: &mut RenoCore<u64>) {
        if let Some(end) = self.rounds.on_ack(now, ack) {
            self.end_round(end, core);
        }
    }

    /// §3.3: slow start grows only every other round.
    fn holds_slow_start(&self) -> bool {
        self.ss_hold
    }

    fn on_persistent_congestion(&mut self, _cwnd: u64) {
        self.ss_hold = false;
    }
}

impl CongestionController for Vegas {
    fn on_ack(&mut self, now: Instant, ack: &Ack) {
        // §3.3 growth rounds: Reno's exponential increase, RFC 9002 §7.3.1.
        self.core.on_ack(now, ack, &mut self.delay);
    }

    fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        // Reno's halving (see the type's documentation for why); persistent
        // congestion: RFC 9002 §7.6.2 / Appendix B.8, minimum window, slow start.
        self.core.on_congestion_with(now, event, 0, &mut self.delay);
    }

    fn on_recovery_end(&mut self, _now: Instant) {
        self.core.end_recovery();
    }

    fn on_mtu_update(&mut self, max_datagram_size: u16) {
        self.core.on_mtu_update(max_datagram_size);
    }

    fn window(&self) -> u64 {
        self.core.cwnd().max(min_window(self.core.mss()))
    }

    fn initial_window(&self) -> u64 {
        init_window(self.core.mss())
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            cwnd_bytes: self.window(),
            ssthresh_bytes: self.core.ssthresh(),
            phase: self.core.phase(),
            state: AlgorithmState::Vegas {
                base_rtt_secs: self.delay.rounds.base_rtt().map_or(0.0, |d| d.as_secs_f64()),
                diff_packets: self.delay.diff,
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
    use crate::controller::Phase;
    use crate::testutil::*;
    use std::time::Duration;

    const BASE: Duration = Duration::from_millis(20);

    /// Vegas in congestion avoidance at `pkts` packets; the path's minimum RTT
    /// is `BASE` and ACKs arrive after `rtt`.
    fn in_ca(pkts: u64, rtt: Duration) -> Harness<Vegas> {
        let mut h = Harness::new(Vegas::new(VegasConfig::default(), DATAGRAM), rtt);
        h.min_rtt = Some(BASE);
        h.cc.core.set_cwnd(pkts * MSS);
        h.cc.core.set_ssthresh(pkts * MSS);
        h
    }

    fn diff(cc: &Vegas) -> f64 {
        match cc.snapshot().state {
            AlgorithmState::Vegas { diff_packets, .. } => diff_packets,
            s => panic!("{s:?}"),
        }
    }

    /// Window after each of `n` rounds, in packets.
    fn windows(h: &mut Harness<Vegas>, n: usize) -> Vec<u64> {
        (0..n)
            .map(|_| {
                h.round();
                h.cc.window() / MSS
            })
            .collect()
    }

    #[test]
    fn grows_one_packet_per_rtt_while_diff_below_alpha() {
        // RTT = BaseRTT: nothing queued, diff = 0 < alpha = 2.
        let mut h = in_ca(10, BASE);
        // The first round only measures; each later round adds one packet.
        assert_eq!(windows(&mut h, 5), [10, 11, 12, 13, 14]);
        assert_eq!(diff(&h.cc), 0.0);
        assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance);
        match h.cc.snapshot().state {
            AlgorithmState::Vegas { base_rtt_secs, .. } => assert_eq!(base_rtt_secs, 0.02),
            s => panic!("{s:?}"),
        }
    }

    #[test]
    fn shrinks_one_packet_per_rtt_while_diff_above_beta() {
        // RTT = 2 BaseRTT: diff = cwnd / 2 packets queued. From 12 packets
        // (diff 6) the window drops a packet per round until diff = 4 = beta.
        let mut h = in_ca(12, 2 * BASE);
        assert_eq!(windows(&mut h, 7), [12, 11, 10, 9, 8, 8, 8]);
        assert_eq!(diff(&h.cc), 4.0);
        assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance);
    }

    #[test]
    fn holds_while_diff_between_alpha_and_beta() {
        // RTT = 1.5 BaseRTT, 10 packets: diff = 10 * 10 / 30 = 3.33.
        let mut h = in_ca(10, Duration::from_millis(30));
        assert_eq!(windows(&mut h, 5), [10; 5]);
        assert!((diff(&h.cc) - 10.0 / 3.0).abs() < 1e-9);
    }

    #[test]
    fn slow_start_grows_every_other_rtt_and_leaves_when_diff_exceeds_gamma() {
        let mut h = Harness::new(Vegas::new(VegasConfig::default(), DATAGRAM), BASE);
        assert_eq!(windows(&mut h, 5), [20, 20, 40, 40, 80]);
        assert_eq!(h.cc.snapshot().phase, Phase::SlowStart);

        let mut h = Harness::new(Vegas::new(VegasConfig::default(), DATAGRAM), BASE);
        h.round(); // growth round: 10 -> 20 packets
        h.rtt = Duration::from_millis(25); // the window-fixed round sees a queue
        h.round();
        assert_eq!(h.cc.snapshot().phase, Phase::SlowStart);
        h.round(); // its end: diff = 20 * 5 / 25 = 4 > gamma = 1
        assert!((diff(&h.cc) - 4.0).abs() < 1e-9);
        // cwnd = min(cwnd, cwnd * BaseRTT / RTT + 1) = 20 * 20 / 25 + 1 = 17.
        assert_eq!(h.cc.window(), 17 * MSS);
        assert_eq!(h.cc.snapshot().ssthresh_bytes, Some(17 * MSS));
        assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance);
        // Now linear: diff = 17 * 5 / 25 = 3.4 is between alpha and beta.
        assert_eq!(windows(&mut h, 3), [17, 17, 17]);
    }

    #[test]
    fn loss_halves_once_per_rtt_and_persistent_congestion_restarts_slow_start() {
        let mut h = in_ca(20, BASE);
        h.round();
        let sent = h.now - BASE / 2;
        h.lose(sent, CongestionKind::Loss);
        h.lose(sent, CongestionKind::Loss);
        h.lose(h.now, CongestionKind::Ecn);
        assert_eq!(h.cc.window(), 10 * MSS);
        assert_eq!(h.cc.snapshot().phase, Phase::Recovery);
        // ECN from a later flight halves again.
        h.advance(BASE + Duration::from_millis(1));
        h.ack(MSS);
        assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance);
        let w = h.cc.window();
        h.lose(h.now - BASE / 4, CongestionKind::Ecn);
        assert_eq!(h.cc.window(), w / 2);
        h.lose(h.now, CongestionKind::PersistentCongestion);
        assert_eq!(h.cc.window(), 2 * MSS);
        assert_eq!(h.cc.snapshot().phase, Phase::SlowStart);
    }

    #[test]
    fn no_growth_while_app_limited() {
        let mut h = in_ca(10, BASE);
        h.app_limited = true;
        assert_eq!(windows(&mut h, 4), [10; 4]);
        let mut h = Harness::new(Vegas::new(VegasConfig::default(), DATAGRAM), BASE);
        h.app_limited = true;
        assert_eq!(windows(&mut h, 3), [10; 3]);
    }

    #[test]
    fn window_stays_above_minimum_with_odd_inputs() {
        let mut cc = Vegas::new(VegasConfig::default(), DATAGRAM);
        fuzz_odd_inputs(&mut cc, |cc| {
            assert!(cc.delay.diff.is_finite() && cc.delay.diff >= 0.0);
        });
    }
}
