//! Compound TCP: K. Tan, J. Song, Q. Zhang, M. Sridharan, "A Compound TCP
//! Approach for High-speed and Long Distance Networks", IEEE INFOCOM 2006
//! (also draft-sridharan-tcpm-ctcp), on top of RFC 9002's QUIC loss recovery.
//!
//! Windows are in bytes; the paper's packets are `max_datagram_size` bytes,
//! so `win^k`, `gamma` and `diff` are evaluated in packets and converted back.
//!
//! Transcendental functions (`pow`) come from the `libm` crate, not `std`:
//! `std` calls the platform's C library, whose results may differ in the last
//! bits between machines; `libm` gives bit-identical results on every target,
//! so one scenario and seed give the same bytes on x86_64 and aarch64.

use std::time::Instant;

use crate::controller::{
    Ack, AlgorithmState, Congestion, CongestionController, DelayRounds, RoundEnd, Snapshot, init_window, min_window,
};
use crate::error::ConfigError;
use crate::reno::{Growth, RenoCore, Window, WindowAdjustment};

/// Parameters of [`Compound`] (Tan et al. 2006 §3; defaults from the paper).
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct CompoundConfig {
    /// `alpha` of the binomial increase `win += alpha * win^k`, default 0.125.
    pub alpha: f64,
    /// Multiplicative decrease `beta`, default 0.5.
    pub beta: f64,
    /// Exponent `k`, default 0.75.
    pub k: f64,
    /// `gamma`: queued packets above which dwnd shrinks, default 30.
    pub gamma: f64,
    /// `zeta`: dwnd decrease per packet of diff, default 1.
    pub zeta: f64,
}

impl Default for CompoundConfig {
    fn default() -> Self {
        Self {
            alpha: 0.125,
            beta: 0.5,
            k: 0.75,
            gamma: 30.0,
            zeta: 1.0,
        }
    }
}

// The negated comparisons in `validate` are deliberate: they also reject NaN.
#[allow(clippy::neg_cmp_op_on_partial_ord)]
impl CompoundConfig {
    /// Check the parameters.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if !(self.alpha > 0.0) {
            return Err(ConfigError::new(
                "ctcp",
                "alpha",
                format!("{} must be positive", self.alpha),
            ));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(ConfigError::new(
                "ctcp",
                "beta",
                format!("{} must be in (0, 1)", self.beta),
            ));
        }
        if !(self.k > 0.0 && self.k < 1.0) {
            return Err(ConfigError::new("ctcp", "k", format!("{} must be in (0, 1)", self.k)));
        }
        if !(self.gamma >= 0.0) {
            return Err(ConfigError::new(
                "ctcp",
                "gamma",
                format!("{} must be >= 0", self.gamma),
            ));
        }
        if !(self.zeta >= 0.0) {
            return Err(ConfigError::new("ctcp", "zeta", format!("{} must be >= 0", self.zeta)));
        }
        Ok(())
    }
}

/// Windows are capped here (2^53 bytes) so that they stay finite whatever the inputs.
const MAX_WINDOW: f64 = <f64 as Window>::CAP;

/// Compound TCP: a loss-based window `cwnd` plus a delay-based window `dwnd`;
/// the sender may have `win = cwnd + dwnd` bytes in flight (§3 of the paper;
/// the receiver window `awnd` of `min(cwnd + dwnd, awnd)` is QUIC flow
/// control's business, not ours).
///
/// - `cwnd` is Reno's (§3.1): slow start `cwnd += acked` below `ssthresh`
///   (RFC 9002 §7.3.1); in congestion avoidance `cwnd += 1 / win` packets per
///   acked packet, i.e. `mss * acked / win` bytes, so that `win` as a whole
///   grows by one packet per RTT from `cwnd` alone.
/// - `dwnd` (§3.2) changes once per round (a round ends with the first ACK of
///   a packet sent after the previous round ended, as in Vegas), from
///   `diff = (win / BaseRTT - win / RTT) * BaseRTT` packets, where `BaseRTT`
///   is the smallest RTT seen, `RTT` the smallest sample of the round and
///   `win` the window at the round's end:
///   - `diff < gamma`: `dwnd += max(alpha * win^k - 1, 0)` (packets), so that
///     with `cwnd`'s packet `win` grows by `alpha * win^k` per RTT;
///   - `diff >= gamma`: `dwnd = max(dwnd - zeta * diff, 0)`.
/// - Loss or ECN, at most once per round trip (RFC 9002 §7.3.2):
///   `dwnd = max(win * (1 - beta) - cwnd / 2, 0)`, `cwnd = cwnd / 2`, so that
///   `win` becomes `max(win * (1 - beta), cwnd / 2)`. The paper does not set
///   `ssthresh`; we use Reno's, the halved `cwnd`, so congestion avoidance
///   resumes at once. `cwnd` never drops below RFC 9002's minimum window.
/// - Persistent congestion (the retransmission-timeout analogue, RFC 9002
///   §7.6.2): `cwnd = kMinimumWindow`, `dwnd = 0`, slow start.
/// - `dwnd` stays 0 in slow start (the paper: the delay-based component
///   only acts in congestion avoidance) and does not change during recovery.
///   While application-limited (RFC 9002 §7.8) neither window grows; `dwnd`
///   may still shrink on a queue.
///
/// `cwnd`'s slow start, reduction, recovery and persistent congestion are
/// the classic core's (`reno.rs`); Compound adds `dwnd` to it.
#[derive(Debug, Clone)]
pub struct Compound {
    /// The loss-based window `cwnd`, bytes, and its `ssthresh`.
    core: RenoCore<f64>,
    delay: DelayWindow,
}

/// What Compound adds to the classic core: the delay-based window.
#[derive(Debug, Clone)]
struct DelayWindow {
    config: CompoundConfig,
    /// The delay-based window `dwnd`, bytes.
    dwnd: f64,
    /// BaseRTT and the once-per-RTT rounds (§3.2).
    rounds: DelayRounds,
    /// `diff` of the last round, packets.
    diff: f64,
}

impl Compound {
    /// A Compound TCP controller for a path with maximum datagram size `max_datagram_size` bytes.
    pub fn new(config: CompoundConfig, max_datagram_size: u16) -> Self {
        let mss = u64::from(max_datagram_size);
        Self {
            core: RenoCore::new(mss),
            delay: DelayWindow {
                config,
                dwnd: 0.0,
                rounds: DelayRounds::default(),
                diff: 0.0,
            },
        }
    }
}

impl DelayWindow {
    /// The end of a round: `diff` and the `dwnd` control law (§3.2).
    fn end_round(&mut self, end: RoundEnd, core: &RenoCore<f64>) {
        let app_limited = end.app_limited;
        let Some((base, rtt)) = end.rtts else {
            return;
        };
        let (base, rtt) = (base.as_secs_f64(), rtt.as_secs_f64());
        let mss = core.mss().max(1) as f64;
        let cwnd = core.cwnd();
        let win = (cwnd + self.dwnd) / mss;
        // (win / BaseRTT - win / RTT) * BaseRTT = win * (RTT - BaseRTT) / RTT.
        let diff = (win * (rtt - base) / rtt).max(0.0);
        self.diff = if diff.is_finite() { diff } else { 0.0 };
        if core.in_recovery() || core.in_slow_start() {
            return;
        }
        let c = &self.config;
        if self.diff < c.gamma {
            if !app_limited {
                let step = (c.alpha * libm::pow(win, c.k) - 1.0).max(0.0) * mss;
                self.dwnd = (self.dwnd + step).min(MAX_WINDOW - cwnd).max(0.0);
            }
        } else {
            self.dwnd = (self.dwnd - c.zeta * self.diff * mss).max(0.0);
        }
    }
}

impl WindowAdjustment<f64> for DelayWindow {
    /// §3.1: `cwnd += 1 / (cwnd + dwnd)` packets per acked packet. (In slow
    /// start `dwnd` is always 0: only a reduction or this round law make it
    /// positive, and both leave `cwnd >= ssthresh`.)
    fn avoidance(&mut self, _now: Instant, ack: &Ack, cwnd: f64, mss: u64) -> Growth<f64> {
        let next = (cwnd + mss.max(1) as f64 * ack.bytes as f64 / (cwnd + self.dwnd).max(1.0)).min(MAX_WINDOW);
        self.dwnd = self.dwnd.min(MAX_WINDOW - next);
        Growth::To(next)
    }

    /// §3.2: BaseRTT, and the end of a round once per RTT (also in recovery
    /// and while application-limited).
    fn on_ack_seen(&mut self, now: Instant, ack: &Ack, core: &mut RenoCore<f64>) {
        if let Some(end) = self.rounds.on_ack(now, ack) {
            self.end_round(end, core);
        }
    }

    /// §3.2: `dwnd = (win (1 - beta) - cwnd / 2)^+`, and Reno's `cwnd / 2`
    /// (never below the minimum window) as `cwnd` and `ssthresh`.
    fn reduce(&mut self, cwnd: f64, mss: u64, _floor: f64) -> (f64, f64) {
        let win = cwnd + self.dwnd;
        let halved = (cwnd / 2.0).max(min_window(mss) as f64);
        self.dwnd = (win * (1.0 - self.config.beta) - halved).max(0.0);
        (halved, halved)
    }

    /// RFC 9002 §7.6.2 / Appendix B.8: minimum window, slow start, no `dwnd`.
    fn on_persistent_congestion(&mut self, _cwnd: f64) {
        self.dwnd = 0.0;
    }
}

impl CongestionController for Compound {
    fn on_ack(&mut self, now: Instant, ack: &Ack) {
        self.core.on_ack(now, ack, &mut self.delay);
    }

    fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        self.core.on_congestion_with(now, event, 0.0, &mut self.delay);
    }

    fn on_recovery_end(&mut self, _now: Instant) {
        self.core.end_recovery();
    }

    fn on_mtu_update(&mut self, max_datagram_size: u16) {
        self.core.on_mtu_update(max_datagram_size);
    }

    fn window(&self) -> u64 {
        // `as` saturates; both parts are finite and their sum is capped.
        ((self.core.cwnd() + self.delay.dwnd) as u64).max(min_window(self.core.mss()))
    }

    fn initial_window(&self) -> u64 {
        init_window(self.core.mss())
    }

    fn snapshot(&self) -> Snapshot {
        Snapshot {
            cwnd_bytes: self.window(),
            ssthresh_bytes: self.core.ssthresh(),
            phase: self.core.phase(),
            state: AlgorithmState::Compound {
                cwnd_bytes: self.core.cwnd() as u64,
                dwnd_bytes: self.delay.dwnd as u64,
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
    const PKT: f64 = MSS as f64;

    /// Compound in congestion avoidance at `cwnd` packets; the path's minimum
    /// RTT is `BASE`, ACKs arrive after `rtt`; one round has been measured.
    fn in_ca(cfg: CompoundConfig, cwnd: u64, rtt: Duration) -> Harness<Compound> {
        let mut h = Harness::new(Compound::new(cfg, DATAGRAM), rtt);
        h.min_rtt = Some(BASE);
        h.cc.core.set_cwnd((cwnd * MSS) as f64);
        h.cc.core.set_ssthresh(h.cc.core.cwnd());
        h.round(); // starts the first round and collects its RTT samples
        h
    }

    #[test]
    fn dwnd_grows_by_the_binomial_law_without_queueing() {
        let mut h = in_ca(CompoundConfig::default(), 20, BASE);
        // Make the window at the round's end a round 100 packets.
        h.cc.core.set_cwnd(60.0 * PKT);
        h.cc.delay.dwnd = 40.0 * PKT;
        let acked_before = h.acked_total;
        h.round();
        // By hand: win = 100, alpha * win^k - 1 = 0.125 * 100^0.75 - 1
        // = 0.125 * 31.6228 - 1 = 2.9528 packets.
        let step = 0.125 * 100f64.powf(0.75) - 1.0;
        assert!((step - 2.952_847_075).abs() < 1e-6);
        assert!(
            (h.cc.delay.dwnd - (40.0 + step) * PKT).abs() < 1e-6,
            "{}",
            h.cc.delay.dwnd
        );
        // Over the same round cwnd gained 1/win packets per acked packet (win
        // is 102.95 packets once the round's first ACK has grown dwnd), so a
        // full window of ACKs adds one packet and win grows by alpha * win^k.
        let acked = (h.acked_total - acked_before) as f64 / PKT;
        let gained = h.cc.core.cwnd() / PKT - 60.0;
        let win = 100.0 + step;
        assert!(gained > acked / (win + 1.0) && gained <= acked / win, "{gained}");
        match h.cc.snapshot().state {
            AlgorithmState::Compound {
                cwnd_bytes,
                dwnd_bytes,
                diff_packets,
            } => {
                assert_eq!(diff_packets, 0.0);
                assert_eq!(cwnd_bytes, h.cc.core.cwnd() as u64);
                assert_eq!(dwnd_bytes, h.cc.delay.dwnd as u64);
            }
            s => panic!("{s:?}"),
        }
        assert_eq!(h.cc.snapshot().cwnd_bytes, h.cc.window());
        // Small windows: alpha * win^k < 1 leaves dwnd alone (the ^+ of §3.2).
        let mut h = in_ca(CompoundConfig::default(), 10, BASE);
        h.round();
        assert_eq!(h.cc.delay.dwnd, 0.0);
    }

    #[test]
    fn dwnd_shrinks_by_zeta_diff_once_delay_builds() {
        // RTT = 32 ms over BaseRTT = 20 ms, win = 100 packets:
        // diff = 100 * 12 / 32 = 37.5 >= gamma = 30.
        let mut h = in_ca(CompoundConfig::default(), 20, Duration::from_millis(32));
        h.cc.core.set_cwnd(50.0 * PKT);
        h.cc.delay.dwnd = 50.0 * PKT;
        h.round();
        let diff = match h.cc.snapshot().state {
            AlgorithmState::Compound { diff_packets, .. } => diff_packets,
            s => panic!("{s:?}"),
        };
        assert!((diff - 37.5).abs() < 1e-9);
        assert!((h.cc.delay.dwnd - 12.5 * PKT).abs() < 1e-6, "{}", h.cc.delay.dwnd);
        // zeta scales the decrease.
        let cfg = CompoundConfig {
            zeta: 0.5,
            ..CompoundConfig::default()
        };
        let mut h = in_ca(cfg, 20, Duration::from_millis(32));
        h.cc.core.set_cwnd(50.0 * PKT);
        h.cc.delay.dwnd = 50.0 * PKT;
        h.round();
        assert!((h.cc.delay.dwnd - (50.0 - 0.5 * 37.5) * PKT).abs() < 1e-6);
        // Below gamma dwnd still grows although packets are queued.
        let mut h = in_ca(CompoundConfig::default(), 20, Duration::from_millis(25));
        h.cc.core.set_cwnd(50.0 * PKT);
        h.cc.delay.dwnd = 50.0 * PKT;
        h.round(); // diff = 100 * 5 / 25 = 20 < 30
        assert!(h.cc.delay.dwnd > 52.0 * PKT);
    }

    #[test]
    fn loss_cuts_total_window_by_beta_and_sets_dwnd_per_formula() {
        for (beta, cwnd, dwnd, want_cwnd, want_dwnd) in [
            // win = 100: dwnd = 100 * 0.5 - 30 = 20, win -> 50 = win * (1 - beta).
            (0.5, 60.0, 40.0, 30.0, 20.0),
            // beta = 0.3: dwnd = 100 * 0.7 - 30 = 40, win -> 70.
            (0.3, 60.0, 40.0, 30.0, 40.0),
            // dwnd would be negative: win -> cwnd / 2 alone.
            (0.8, 100.0, 0.0, 50.0, 0.0),
        ] {
            let cfg = CompoundConfig {
                beta,
                ..CompoundConfig::default()
            };
            let mut h = in_ca(cfg, 20, BASE);
            h.cc.core.set_cwnd(cwnd * PKT);
            h.cc.delay.dwnd = dwnd * PKT;
            let sent = h.now - BASE / 2;
            h.lose(sent, CongestionKind::Loss);
            h.lose(sent, CongestionKind::Loss); // same flight: once per RTT
            h.lose(h.now, CongestionKind::Ecn);
            assert!((h.cc.core.cwnd() - want_cwnd * PKT).abs() < 1e-6, "{beta}");
            assert!((h.cc.delay.dwnd - want_dwnd * PKT).abs() < 1e-6, "{beta}");
            assert_eq!(h.cc.window(), ((want_cwnd + want_dwnd) * PKT) as u64);
            assert_eq!(h.cc.snapshot().cwnd_bytes, h.cc.window());
            assert_eq!(h.cc.snapshot().ssthresh_bytes, Some((want_cwnd * PKT) as u64));
            assert_eq!(h.cc.snapshot().phase, Phase::Recovery);
        }
    }

    #[test]
    fn slow_start_is_renos_and_keeps_dwnd_zero() {
        let mut h = Harness::new(Compound::new(CompoundConfig::default(), DATAGRAM), BASE);
        for w in [24_000, 48_000, 96_000, 192_000] {
            h.round();
            assert_eq!(h.cc.window(), w);
            assert_eq!(h.cc.delay.dwnd, 0.0);
        }
        assert_eq!(h.cc.snapshot().phase, Phase::SlowStart);
    }

    #[test]
    fn persistent_congestion_collapses_both_windows() {
        let mut h = in_ca(CompoundConfig::default(), 60, BASE);
        h.cc.delay.dwnd = 40.0 * PKT;
        h.lose(h.now, CongestionKind::PersistentCongestion);
        assert_eq!(h.cc.window(), 2 * MSS);
        assert_eq!(h.cc.delay.dwnd, 0.0);
        assert_eq!(h.cc.snapshot().phase, Phase::SlowStart);
        h.flight.clear();
        h.advance(BASE);
        h.round();
        assert_eq!(h.cc.window(), 4 * MSS);
    }

    #[test]
    fn no_growth_while_app_limited() {
        let mut h = in_ca(CompoundConfig::default(), 60, BASE);
        h.cc.delay.dwnd = 40.0 * PKT;
        let w = h.cc.window();
        h.app_limited = true;
        for _ in 0..5 {
            h.round();
        }
        assert_eq!(h.cc.window(), w);
    }

    #[test]
    fn window_stays_finite_and_above_minimum_with_odd_inputs() {
        let mut cc = Compound::new(CompoundConfig::default(), DATAGRAM);
        fuzz_odd_inputs(&mut cc, |cc| {
            assert!(cc.core.cwnd().is_finite() && cc.delay.dwnd.is_finite() && cc.delay.dwnd >= 0.0);
            assert!(cc.delay.diff.is_finite() && cc.delay.diff >= 0.0);
        });
    }
}
