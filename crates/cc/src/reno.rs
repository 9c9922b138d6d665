//! The Reno machinery shared by [`NewReno`](crate::NewReno) and
//! [`Guarantee`](crate::Guarantee): slow start, congestion avoidance, loss
//! recovery and persistent congestion as RFC 9002 §7 and Appendix B specify
//! them for QUIC (Iyengar, Swett, "QUIC Loss Detection and Congestion
//! Control", RFC 9002, 2021).
//!
//! [`RenoCore`] owns the window; the only thing a Reno variant changes is how
//! fast congestion avoidance grows, which it says through [`WindowAdjustment`]
//! (the split of neqo's `ClassicCongestionControl` and `WindowAdjustment`).

use crate::controller::{Ack, Congestion, CongestionKind, Phase, Recovery, initial_window, minimum_window};
use crate::hystart::{HyStart, Step};
use std::time::Instant;

/// Upper bound on the window, bytes: keeps arithmetic on it far from `u64::MAX`.
const MAX_WINDOW: u64 = 1_000_000_000_000_000;

/// How fast a Reno variant grows its window in congestion avoidance.
pub(crate) trait WindowAdjustment {
    /// Bytes that must be acknowledged in congestion avoidance for the window
    /// to grow by one maximum datagram size, given the current window `cwnd`.
    /// NewReno: `cwnd` (one datagram per window acknowledged, RFC 9002 §7.3.3).
    /// Must be at least 1; `u64::MAX` means no growth.
    fn bytes_for_increase(&self, cwnd: u64) -> u64;
}

/// How a Reno core counts acknowledgements towards growth.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(rename_all = "lowercase"))]
#[non_exhaustive]
pub enum Counting {
    /// Acknowledged bytes (RFC 9002 §7.3.1 and §7.3.3; RFC 3465's byte
    /// counting): slow start adds what was acked, congestion avoidance one
    /// maximum datagram size per window of acked bytes, in whole steps.
    #[default]
    Bytes,
    /// ACKs, as RFC 5681 §3.1 writes it and ns-2's `Agent/TCP` does: per ACK
    /// (an ACK batch, [`CongestionController::on_end_acks`](crate::CongestionController::on_end_acks)),
    /// slow start adds `min(N, SMSS)` and congestion avoidance
    /// `SMSS * SMSS / cwnd` (eq. 3), the remainder carried to the next ACK,
    /// so the window grows a little on every ACK and keeps its fraction
    /// across a reduction. With delayed ACKs it grows half as fast.
    Acks,
}

/// RFC 9002 §7.3.3: one maximum datagram size per congestion window acknowledged.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct OnePerWindow;

impl WindowAdjustment for OnePerWindow {
    #[inline]
    fn bytes_for_increase(&self, cwnd: u64) -> u64 {
        cwnd
    }
}

/// Window, threshold and recovery state of a Reno-style controller (RFC 9002
/// Appendix B.2 `congestion_window`, `ssthresh`, `congestion_recovery_start_time`).
#[derive(Debug, Clone)]
pub(crate) struct RenoCore {
    mss: u64,
    cwnd: u64,
    /// `u64::MAX` until the first reduction (RFC 9002 Appendix B.3: infinite).
    ssthresh: u64,
    /// Window after persistent congestion, packets (`kMinimumWindow` = 2 unless configured).
    loss_packets: u64,
    /// Bytes acked in congestion avoidance since the window last grew
    /// (with [`Counting::Acks`]: the remainder of `SMSS * SMSS`, below `cwnd`).
    acked_in_ca: u64,
    recovery: Recovery,
    counting: Counting,
    /// [`Counting::Acks`]: bytes of the current ACK batch that may grow the window.
    batch_bytes: u64,
    /// HyStart++ (RFC 9406) for the initial slow start, if enabled.
    hystart: Option<Box<HyStart>>,
}

impl RenoCore {
    /// The initial state for maximum datagram size `mss` (RFC 9002 Appendix B.3).
    pub(crate) fn new(mss: u64) -> Self {
        // kMinimumWindow (RFC 9002 §7.2) is two datagrams.
        Self::with_windows(mss, initial_window(mss), 2)
    }

    /// Starting from `initial` bytes and falling to `loss_packets` packets on
    /// persistent congestion (both at least one).
    pub(crate) fn with_windows(mss: u64, initial: u64, loss_packets: u64) -> Self {
        Self {
            mss,
            cwnd: initial.max(1),
            ssthresh: u64::MAX,
            loss_packets: loss_packets.max(1),
            acked_in_ca: 0,
            recovery: Recovery::default(),
            counting: Counting::Bytes,
            batch_bytes: 0,
            hystart: None,
        }
    }

    /// Leave the initial slow start by HyStart++ (RFC 9406) when `on`.
    pub(crate) fn with_hystart(mut self, on: bool) -> Self {
        self.hystart = on.then(Box::default);
        self
    }

    /// HyStart++ in the initial slow start (`ssthresh` still infinite, RFC
    /// 9406 §4.2): the bytes `ack` may grow the window by, or `None` once it
    /// ends slow start (`ssthresh = cwnd`).
    #[inline]
    fn hystart_growth(&mut self, ack: &Ack) -> Option<u64> {
        match self.hystart.as_deref_mut() {
            Some(h) if self.ssthresh == u64::MAX => match h.on_ack(ack, self.mss) {
                Step::Grow(bytes) => Some(bytes),
                Step::Exit => {
                    self.ssthresh = self.cwnd;
                    None
                }
            },
            _ => Some(ack.bytes),
        }
    }

    /// Count acknowledgements as `counting` says.
    pub(crate) fn with_counting(mut self, counting: Counting) -> Self {
        self.counting = counting;
        self
    }

    /// The congestion window, bytes; never below the minimum window.
    #[inline]
    pub(crate) fn window(&self) -> u64 {
        self.cwnd
    }

    /// The current maximum datagram size.
    #[inline]
    pub(crate) fn mss(&self) -> u64 {
        self.mss
    }

    /// The slow-start threshold, `None` while infinite.
    pub(crate) fn ssthresh(&self) -> Option<u64> {
        (self.ssthresh != u64::MAX).then_some(self.ssthresh)
    }

    /// The snapshot phase: recovery, slow start or congestion avoidance.
    pub(crate) fn phase(&self) -> Phase {
        HyStart::phase(self.hystart.as_deref(), self.recovery.phase(self.cwnd < self.ssthresh))
    }

    /// RFC 9002 Appendix B.5 `OnPacketAcked`: no growth for packets sent in
    /// the current recovery period (which an ACK of a later packet ends) nor
    /// while application-limited (§7.8); slow start adds the acked bytes
    /// (§7.3.1); congestion avoidance adds one maximum datagram size per
    /// `adjust.bytes_for_increase(cwnd)` bytes acknowledged (§7.3.3), counted
    /// without rounding loss as Linux's `tcp_cong_avoid_ai` does.
    #[inline]
    pub(crate) fn on_ack<A: WindowAdjustment>(&mut self, ack: &Ack, adjust: &A) {
        if self.recovery.on_ack(ack.sent) || ack.app_limited {
            return;
        }
        if self.counting == Counting::Acks {
            if self.cwnd < self.ssthresh && self.hystart_growth(ack).is_none() {
                return;
            }
            self.batch_bytes = self.batch_bytes.saturating_add(ack.bytes);
            return;
        }
        if self.cwnd < self.ssthresh {
            let Some(grow) = self.hystart_growth(ack) else {
                return;
            };
            self.cwnd = self.cwnd.saturating_add(grow).min(MAX_WINDOW);
            if self.cwnd >= self.ssthresh {
                // The bytes beyond ssthresh already count towards congestion avoidance.
                self.acked_in_ca = self.cwnd - self.ssthresh;
            }
        } else {
            self.acked_in_ca = self.acked_in_ca.saturating_add(ack.bytes);
            let per_mss = adjust.bytes_for_increase(self.cwnd);
            if self.acked_in_ca >= per_mss {
                // Usually one step; divide only when an ACK covers several.
                let steps = if self.acked_in_ca - per_mss < per_mss {
                    1
                } else {
                    self.acked_in_ca / per_mss
                };
                self.acked_in_ca -= steps * per_mss;
                self.cwnd = self.cwnd.saturating_add(steps.saturating_mul(self.mss)).min(MAX_WINDOW);
            }
        }
    }

    /// The end of an ACK batch: with [`Counting::Acks`], RFC 5681 §3.1's
    /// growth for one ACK: `cwnd += min(N, SMSS)` in slow start (eq. 2),
    /// `cwnd += SMSS * SMSS / cwnd` in congestion avoidance (eq. 3), exact in
    /// integers (the remainder waits in `acked_in_ca`). Nothing with bytes.
    #[inline]
    pub(crate) fn on_end_acks(&mut self) {
        let acked = std::mem::take(&mut self.batch_bytes);
        if acked == 0 || self.counting != Counting::Acks {
            return;
        }
        if self.cwnd < self.ssthresh {
            // RFC 5681 eq. 2; in HyStart++'s CSS a quarter of it (RFC 9406 §4.2).
            let n = acked.min(self.mss);
            let grow = self.hystart.as_deref().map_or(n, |h| h.growth(n, self.mss));
            self.cwnd = self.cwnd.saturating_add(grow).min(MAX_WINDOW);
        } else {
            let sum = self.acked_in_ca.saturating_add(self.mss.saturating_mul(self.mss));
            let grow = sum / self.cwnd;
            self.acked_in_ca = sum - grow * self.cwnd;
            self.cwnd = self.cwnd.saturating_add(grow).min(MAX_WINDOW);
        }
    }

    /// RFC 9002 Appendix B.6 `OnCongestionEvent` with `kLossReductionFactor`
    /// = 0.5, at most once per round trip, and Appendix B.8: persistent
    /// congestion collapses the window to `kMinimumWindow` (§7.6.2), or the
    /// configured loss window, and restarts slow start. ECN-CE marks reduce
    /// like loss (§7.1).
    pub(crate) fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        self.on_congestion_above(now, event, 0);
    }

    /// [`on_congestion`](Self::on_congestion) with a floor of `floor` bytes
    /// (the guarantee controller's default mode): with `halved = max(cwnd / 2,
    /// kMinimumWindow)`, a reduction sets `ssthresh = max(halved, floor)` and
    /// `cwnd = max(halved, min(cwnd, floor))`, so the window is never cut
    /// below the floor but never raised by a loss either (below the floor it
    /// keeps growing in slow start up to it).
    /// Persistent congestion still collapses the window (RFC 9002 §7.6.2);
    /// `ssthresh` keeps at least the floor. With `floor = 0` this is RFC
    /// 9002's rule exactly.
    pub(crate) fn on_congestion_above(&mut self, now: Instant, event: &Congestion, floor: u64) {
        if self.recovery.enter(now, event.sent) {
            let floor = floor.min(MAX_WINDOW);
            let halved = (self.cwnd / 2).max(minimum_window(self.mss));
            self.ssthresh = halved.max(floor);
            self.cwnd = halved.max(self.cwnd.min(floor));
            self.acked_in_ca = 0;
        }
        if event.kind == CongestionKind::PersistentCongestion {
            self.cwnd = self.loss_packets.saturating_mul(self.mss);
            self.ssthresh = self.ssthresh.max(floor.min(MAX_WINDOW));
            self.recovery.reset();
        }
    }

    /// The transport's fast recovery ended
    /// ([`CongestionController::on_recovery_end`](crate::CongestionController::on_recovery_end)).
    pub(crate) fn end_recovery(&mut self) {
        self.recovery.end();
    }

    /// A new maximum datagram size: the window is kept, but not below the
    /// new minimum window (RFC 9002 §7.2), or the loss window if smaller.
    pub(crate) fn on_mtu_update(&mut self, max_datagram_size: u16) {
        self.mss = u64::from(max_datagram_size);
        let floor = minimum_window(self.mss).min(self.loss_packets.saturating_mul(self.mss));
        self.cwnd = self.cwnd.max(floor);
    }
}

#[cfg(test)]
mod tests {
    use std::collections::{HashSet, VecDeque};
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use crate::bandwidth::{BandwidthSource, SharedBandwidth};
    use crate::controller::{Ack, Congestion, CongestionController, CongestionKind, Phase, RttSample};
    use crate::eval_slot::EvalSlot;
    use crate::guarantee::{Guarantee, GuaranteeConfig};
    use crate::newreno::{NewReno, NewRenoConfig};
    use crate::units::Rate;

    /// A guarantee controller whose slope is pinned at `k = k_min = 1`: with
    /// no available bandwidth (`A = 0`) and a physical bandwidth of 1 B/s,
    /// `k_max` (eqs. (4)/(5)) is below 1 in every state, so `k = k_min`.
    fn pinned_guarantee(mss: u64) -> Guarantee {
        let bw = SharedBandwidth::new();
        bw.set_available(0);
        bw.set_physical(8);
        let config = GuaranteeConfig {
            eval: EvalSlot::Rtts(4),
            slot_rtts: Some(2),
            ..GuaranteeConfig::paper(Rate::from_bytes_per_sec(10_000_000))
        };
        Guarantee::new(config, mss, Some(Arc::new(bw) as Arc<dyn BandwidthSource>))
    }

    #[test]
    fn guarantee_with_k_pinned_at_one_is_newreno() {
        let mut mss = 1200;
        let mut reno = NewReno::new(NewRenoConfig::default(), mss);
        let mut guarantee = pinned_guarantee(mss);
        let t0 = Instant::now();
        let mut now = t0;
        let mut flight: VecDeque<(Instant, u64)> = VecDeque::new();
        let mut min_rtt = Duration::MAX;
        let mut app_limited = false;
        let mut x: u64 = 0x2545_f491_4f6c_dd1d;
        let mut seen = HashSet::new();
        let mut kinds = HashSet::new();
        let mut ca_growths = 0;
        for step in 0..6000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // Keep the window full (the sender is window-limited unless app-limited).
            let in_flight: u64 = flight.iter().map(|&(_, b)| b).sum();
            if !app_limited && in_flight + mss <= reno.window() {
                let n = (reno.window() - in_flight) / mss;
                flight.extend((0..n).map(|_| (now, mss)));
            }
            let before = reno.window();
            let event = match x % 1000 {
                0..=14 => {
                    // Loss of the oldest packet in flight.
                    let (sent, bytes) = flight.pop_front().unwrap_or((now, mss));
                    Some(Congestion {
                        kind: CongestionKind::Loss,
                        sent,
                        lost_bytes: bytes,
                    })
                }
                15..=22 => Some(Congestion {
                    kind: CongestionKind::Ecn,
                    sent: flight.back().map_or(now, |&(t, _)| t),
                    lost_bytes: 0,
                }),
                23..=24 => {
                    let sent = flight.back().map_or(now, |&(t, _)| t);
                    flight.clear();
                    Some(Congestion {
                        kind: CongestionKind::PersistentCongestion,
                        sent,
                        lost_bytes: in_flight,
                    })
                }
                _ => None,
            };
            if step == 3000 {
                // The path MTU grows: a new maximum datagram size.
                mss = 1452;
                reno.on_mtu_update(1452);
                guarantee.on_mtu_update(1452);
                kinds.insert("mtu");
            } else if let Some(event) = event {
                kinds.insert(match event.kind {
                    CongestionKind::Loss => "loss",
                    CongestionKind::Ecn => "ecn",
                    CongestionKind::PersistentCongestion => "persistent",
                });
                now += Duration::from_micros(x >> 40 & 0xfff);
                reno.on_congestion(now, &event);
                guarantee.on_congestion(now, &event);
            } else if let Some((sent, bytes)) = flight.pop_front() {
                // RTT 20 to 27 ms; the ACK comes no earlier than the clock.
                let rtt = Duration::from_millis(20 + (x >> 20) % 8);
                now = now.max(sent + rtt);
                let latest = now - sent;
                min_rtt = min_rtt.min(latest);
                if step % 500 == 250 {
                    app_limited = !app_limited;
                }
                let ack = Ack {
                    sent,
                    bytes,
                    rtt: RttSample {
                        latest,
                        smoothed: Duration::from_millis(22),
                        min: min_rtt,
                    },
                    app_limited,
                };
                kinds.insert(if app_limited { "app-limited ack" } else { "ack" });
                let phase = reno.snapshot().phase;
                reno.on_ack(now, &ack);
                guarantee.on_ack(now, &ack);
                let remaining = flight.iter().map(|&(_, b)| b).sum();
                reno.on_end_acks(now, remaining, app_limited);
                guarantee.on_end_acks(now, remaining, app_limited);
                if phase == Phase::CongestionAvoidance && reno.window() > before {
                    ca_growths += 1;
                }
            } else {
                now += Duration::from_millis(1);
            }
            assert_eq!(guarantee.k(), 1.0, "step {step}");
            assert_eq!(guarantee.window(), reno.window(), "step {step}");
            let (g, r) = (guarantee.snapshot(), reno.snapshot());
            assert_eq!(
                (g.cwnd_bytes, g.ssthresh_bytes, g.phase),
                (r.cwnd_bytes, r.ssthresh_bytes, r.phase),
                "step {step}"
            );
            seen.insert(r.phase);
        }
        // The sequence exercised every event kind and every phase.
        for kind in ["ack", "app-limited ack", "loss", "ecn", "persistent", "mtu"] {
            assert!(kinds.contains(kind), "no {kind} event");
        }
        for phase in [Phase::SlowStart, Phase::CongestionAvoidance, Phase::Recovery] {
            assert!(seen.contains(&phase), "never in {phase:?}");
        }
        assert!(ca_growths > 20, "congestion avoidance grew only {ca_growths} times");
        assert!(guarantee.evaluations().0 > 0, "no evaluation slot ended");
    }

    /// Loss, an ACK inside recovery, the transport's end of recovery, a new loss.
    fn ends_recovery_when_told<C: CongestionController>(name: &str, cc: C) {
        use crate::testutil::{Harness, RTT};
        let mut h = Harness::new(cc, RTT);
        h.round();
        h.round();
        let sent = h.now - RTT / 2;
        h.lose(sent, CongestionKind::Loss);
        let w = h.cc.window();
        h.ack_sent_at(sent, 1200);
        assert_eq!(h.cc.snapshot().phase, Phase::Recovery, "{name}");
        assert_eq!(h.cc.window(), w, "{name}: no growth in recovery");
        h.cc.on_recovery_end(h.now);
        assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance, "{name}");
        // The next loss is a new reduction, whenever its packet was sent.
        h.lose(sent, CongestionKind::Loss);
        assert!(h.cc.window() < w, "{name}: {} after {w}", h.cc.window());
        assert_eq!(h.cc.snapshot().phase, Phase::Recovery, "{name}");
    }

    #[test]
    fn every_controller_with_a_recovery_period_ends_it_when_the_transport_says_so() {
        use crate::{Compound, CompoundConfig, Cubic, CubicConfig, Vegas, VegasConfig};
        ends_recovery_when_told("newreno", NewReno::new(NewRenoConfig::default(), 1200));
        ends_recovery_when_told("cubic", Cubic::new(CubicConfig::default(), 1200));
        ends_recovery_when_told("vegas", Vegas::new(VegasConfig::default(), 1200));
        ends_recovery_when_told("ctcp", Compound::new(CompoundConfig::default(), 1200));
        ends_recovery_when_told("guarantee", pinned_guarantee(1200));
    }

    #[test]
    fn a_slope_of_k_grows_k_datagrams_per_window() {
        // cwnd = ssthresh = 12_000 after a loss, then ten 1200-byte ACKs in
        // congestion avoidance. k = 1: one datagram after 12_000 bytes.
        // k = 2.5: one datagram per cwnd / 2.5 bytes, i.e. after 4 ACKs
        // (4_800 >= 12_000 / 2.5) and after 5 more (6_000 >= 13_200 / 2.5).
        use super::{OnePerWindow, RenoCore, WindowAdjustment};
        struct K(f64);
        impl WindowAdjustment for K {
            fn bytes_for_increase(&self, cwnd: u64) -> u64 {
                (cwnd as f64 / self.0).round() as u64
            }
        }
        let t0 = Instant::now();
        let rtt = RttSample::uniform(Duration::from_millis(20));
        let ack = |sent| Ack {
            sent,
            bytes: 1200,
            rtt,
            app_limited: false,
        };
        let mut a = RenoCore::new(1200);
        let mut b = RenoCore::new(1200);
        let mut loss_at = t0 + Duration::from_millis(1);
        for core in [&mut a, &mut b] {
            for _ in 0..10 {
                core.on_ack(&ack(t0), &OnePerWindow);
            }
            core.on_congestion(
                loss_at,
                &Congestion {
                    kind: CongestionKind::Loss,
                    sent: t0,
                    lost_bytes: 1200,
                },
            );
            assert_eq!((core.window(), core.ssthresh()), (12_000, Some(12_000)));
        }
        loss_at += Duration::from_millis(1);
        for _ in 0..10 {
            a.on_ack(&ack(loss_at), &OnePerWindow);
            b.on_ack(&ack(loss_at), &K(2.5));
        }
        assert_eq!(a.window(), 13_200);
        assert_eq!(b.window(), 14_400);
        assert_eq!(a.phase(), Phase::CongestionAvoidance);
    }
}
