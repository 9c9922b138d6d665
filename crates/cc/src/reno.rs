//! The classic congestion-control core shared by every loss-window
//! controller: [`NewReno`](crate::NewReno), [`Guarantee`](crate::Guarantee),
//! [`Cubic`](crate::Cubic), [`Vegas`](crate::Vegas) and
//! [`Compound`](crate::Compound). It runs slow start (with HyStart++ if
//! enabled), the once-per-round-trip reduction, loss recovery and persistent
//! congestion as RFC 9002 §7 and Appendix B specify them for QUIC (Iyengar,
//! Swett, "QUIC Loss Detection and Congestion Control", RFC 9002, 2021).
//!
//! [`RenoCore`] owns the window, `ssthresh` and the recovery period; what a
//! controller changes (how congestion avoidance grows, how far a congestion
//! event reduces, what else it tracks per ACK) it says through
//! [`WindowAdjustment`]: the split of neqo's `ClassicCongestionControl` and
//! `WindowAdjustment`, which hosts CUBIC the same way. Windows are `u64`
//! bytes for the Reno family and Vegas, `f64` bytes for CUBIC and Compound
//! TCP, whose per-ACK increments are fractions of a byte ([`Window`]).

use std::fmt;
use std::time::Instant;

use crate::controller::{Ack, Congestion, CongestionKind, Phase, Recovery, init_window, min_window};
use crate::hystart::{HyStart, Step};

/// The arithmetic a window is kept in: whole bytes (`u64`) or bytes with a
/// fraction (`f64`, exact up to 2^53).
pub(crate) trait Window: Copy + PartialOrd + fmt::Debug {
    /// `ssthresh` before the first reduction (RFC 9002 Appendix B.3: infinite).
    const INFINITE: Self;
    /// The largest window: keeps arithmetic on it far from overflow.
    const CAP: Self;
    /// No bytes.
    const ZERO: Self;
    /// `bytes` as a window.
    fn from_bytes(bytes: u64) -> Self;
    /// The whole bytes of the window (`as` saturates for `f64`).
    fn bytes(self) -> u64;
    /// `self + bytes`, at most [`CAP`](Self::CAP).
    fn grow(self, bytes: u64) -> Self;
    /// Half of the window (whole bytes rounded down for `u64`).
    fn half(self) -> Self;
    /// The larger of the two.
    fn at_least(self, other: Self) -> Self;
    /// The smaller of the two.
    fn at_most(self, other: Self) -> Self;
    /// `self - other` in whole bytes, zero if `other` is larger.
    fn bytes_above(self, other: Self) -> u64;
    /// `Some(bytes)` unless infinite.
    fn finite(self) -> Option<u64>;
}

impl Window for u64 {
    const INFINITE: Self = u64::MAX;
    const CAP: Self = 1_000_000_000_000_000;
    const ZERO: Self = 0;
    #[inline]
    fn from_bytes(bytes: u64) -> Self {
        bytes
    }
    #[inline]
    fn bytes(self) -> u64 {
        self
    }
    #[inline]
    fn grow(self, bytes: u64) -> Self {
        self.saturating_add(bytes).min(Self::CAP)
    }
    #[inline]
    fn half(self) -> Self {
        self / 2
    }
    #[inline]
    fn at_least(self, other: Self) -> Self {
        Ord::max(self, other)
    }
    #[inline]
    fn at_most(self, other: Self) -> Self {
        Ord::min(self, other)
    }
    #[inline]
    fn bytes_above(self, other: Self) -> u64 {
        self.saturating_sub(other)
    }
    #[inline]
    fn finite(self) -> Option<u64> {
        (self != Self::INFINITE).then_some(self)
    }
}

impl Window for f64 {
    const INFINITE: Self = f64::INFINITY;
    const CAP: Self = 9_007_199_254_740_992.0;
    const ZERO: Self = 0.0;
    #[inline]
    fn from_bytes(bytes: u64) -> Self {
        bytes as f64
    }
    #[inline]
    fn bytes(self) -> u64 {
        self as u64
    }
    #[inline]
    fn grow(self, bytes: u64) -> Self {
        (self + bytes as f64).min(Self::CAP)
    }
    #[inline]
    fn half(self) -> Self {
        self / 2.0
    }
    #[inline]
    fn at_least(self, other: Self) -> Self {
        f64::max(self, other)
    }
    #[inline]
    fn at_most(self, other: Self) -> Self {
        f64::min(self, other)
    }
    #[inline]
    fn bytes_above(self, other: Self) -> u64 {
        (self - other).max(0.0) as u64
    }
    #[inline]
    fn finite(self) -> Option<u64> {
        self.is_finite().then_some(self as u64)
    }
}

/// What one ACK in congestion avoidance does to the window.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Growth<W> {
    /// Grow one maximum datagram size per this many acknowledged bytes,
    /// counted by the core across ACKs without rounding loss (as Linux's
    /// `tcp_cong_avoid_ai`). NewReno: `cwnd` (RFC 9002 §7.3.3). At least 1;
    /// `u64::MAX` means no growth.
    PerMss(u64),
    /// The window becomes this (CUBIC, Compound TCP).
    To(W),
    /// No growth on this ACK (Vegas grows once per round instead).
    Hold,
}

/// What a controller on the classic core changes about it. Every hook but
/// [`avoidance`](Self::avoidance) defaults to the Reno behaviour.
pub(crate) trait WindowAdjustment<W: Window = u64> {
    /// Congestion avoidance for one acknowledged packet, with the window
    /// `cwnd` and maximum datagram size `mss`.
    fn avoidance(&mut self, now: Instant, ack: &Ack, cwnd: W, mss: u64) -> Growth<W>;

    /// Every ACK, after the recovery bookkeeping and before any growth, also
    /// in recovery and while application-limited: the delay-based
    /// controllers' once-per-round step, which may change the core's window.
    #[inline]
    fn on_ack_seen(&mut self, now: Instant, ack: &Ack, core: &mut RenoCore<W>) {
        let _ = (now, ack, core);
    }

    /// An ACK outside recovery while application-limited: no growth (RFC
    /// 9002 §7.8).
    #[inline]
    fn on_app_limited(&mut self, now: Instant) {
        let _ = now;
    }

    /// An ACK that may grow the window (outside recovery, not
    /// application-limited), before slow start or congestion avoidance.
    #[inline]
    fn on_growth_ack(&mut self, now: Instant) {
        let _ = now;
    }

    /// Whether slow start keeps the window fixed on this ACK (Vegas's
    /// every-other-round slow start).
    #[inline]
    fn holds_slow_start(&self) -> bool {
        false
    }

    /// A congestion event that starts a recovery period: the new
    /// `(ssthresh, cwnd)` for window `cwnd`, maximum datagram size `mss` and
    /// the controller's `floor`. Reno (RFC 9002 Appendix B.6,
    /// `kLossReductionFactor` = 0.5): with `halved = max(cwnd / 2,
    /// kMinimumWindow)`, `(max(halved, floor), max(halved, min(cwnd, floor)))`.
    #[inline]
    fn reduce(&mut self, cwnd: W, mss: u64, floor: W) -> (W, W) {
        let halved = cwnd.half().at_least(W::from_bytes(min_window(mss)));
        (halved.at_least(floor), halved.at_least(cwnd.at_most(floor)))
    }

    /// Persistent congestion collapsed the window to `cwnd` (RFC 9002
    /// §7.6.2).
    #[inline]
    fn on_persistent_congestion(&mut self, cwnd: W) {
        let _ = cwnd;
    }
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
    fn avoidance(&mut self, _now: Instant, _ack: &Ack, cwnd: u64, _mss: u64) -> Growth<u64> {
        Growth::PerMss(cwnd)
    }
}

/// Window, threshold and recovery state of a classic controller (RFC 9002
/// Appendix B.2 `congestion_window`, `ssthresh`, `congestion_recovery_start_time`).
#[derive(Debug, Clone)]
pub(crate) struct RenoCore<W: Window = u64> {
    mss: u64,
    cwnd: W,
    /// [`Window::INFINITE`] until the first reduction (RFC 9002 Appendix B.3).
    ssthresh: W,
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

impl<W: Window> RenoCore<W> {
    /// The initial state for maximum datagram size `mss` (RFC 9002 Appendix B.3).
    pub(crate) fn new(mss: u64) -> Self {
        // kMinimumWindow (RFC 9002 §7.2) is two datagrams.
        Self::with_windows(mss, init_window(mss), 2)
    }

    /// Starting from `initial` bytes and falling to `loss_packets` packets on
    /// persistent congestion (both at least one).
    pub(crate) fn with_windows(mss: u64, initial: u64, loss_packets: u64) -> Self {
        Self {
            mss,
            cwnd: W::from_bytes(initial.max(1)),
            ssthresh: W::INFINITE,
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
            Some(h) if self.ssthresh == W::INFINITE => match h.on_ack(ack, self.mss) {
                Step::Grow(bytes) => Some(bytes),
                Step::Exit => {
                    // "enter congestion avoidance by setting the ssthresh to the current cwnd"
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

    /// The congestion window as kept, bytes.
    #[inline]
    pub(crate) fn cwnd(&self) -> W {
        self.cwnd
    }

    /// Set the congestion window (a delay-based controller's round, a test).
    #[inline]
    pub(crate) fn set_cwnd(&mut self, cwnd: W) {
        self.cwnd = cwnd;
    }

    /// The slow-start threshold as kept ([`Window::INFINITE`] before the first reduction).
    #[inline]
    pub(crate) fn ssthresh_raw(&self) -> W {
        self.ssthresh
    }

    /// Set the slow-start threshold (a delay-based controller's round, a test).
    #[inline]
    pub(crate) fn set_ssthresh(&mut self, ssthresh: W) {
        self.ssthresh = ssthresh;
    }

    /// Whether the window is below `ssthresh`.
    #[inline]
    pub(crate) fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// Whether the current recovery period is still open.
    #[inline]
    pub(crate) fn in_recovery(&self) -> bool {
        self.recovery.is_open()
    }

    /// The minimum window (RFC 9002 §7.2) for the current maximum datagram size.
    #[inline]
    pub(crate) fn min_window(&self) -> W {
        W::from_bytes(min_window(self.mss))
    }

    /// The current maximum datagram size.
    #[inline]
    pub(crate) fn mss(&self) -> u64 {
        self.mss
    }

    /// The slow-start threshold in whole bytes, `None` while infinite.
    pub(crate) fn ssthresh(&self) -> Option<u64> {
        self.ssthresh.finite()
    }

    /// The snapshot phase: recovery, slow start or congestion avoidance.
    pub(crate) fn phase(&self) -> Phase {
        HyStart::phase(self.hystart.as_deref(), self.recovery.phase(self.in_slow_start()))
    }

    /// RFC 9002 Appendix B.5 `OnPacketAcked`: no growth for packets sent in
    /// the current recovery period (which an ACK of a later packet ends) nor
    /// while application-limited (§7.8); slow start adds the acked bytes
    /// (§7.3.1); congestion avoidance grows as `adjust` says (§7.3.3 for
    /// NewReno: one maximum datagram size per `cwnd` bytes acknowledged).
    #[inline]
    pub(crate) fn on_ack<A: WindowAdjustment<W>>(&mut self, now: Instant, ack: &Ack, adjust: &mut A) {
        let inside_recovery = self.recovery.on_ack(ack.sent);
        adjust.on_ack_seen(now, ack, self);
        if inside_recovery {
            return;
        }
        if ack.app_limited {
            adjust.on_app_limited(now);
            return;
        }
        adjust.on_growth_ack(now);
        if self.counting == Counting::Acks {
            if self.in_slow_start() && self.hystart_growth(ack).is_none() {
                return;
            }
            self.batch_bytes = self.batch_bytes.saturating_add(ack.bytes);
            return;
        }
        if self.in_slow_start() {
            if adjust.holds_slow_start() {
                return;
            }
            let Some(grow) = self.hystart_growth(ack) else {
                return;
            };
            self.cwnd = self.cwnd.grow(grow);
            if self.cwnd >= self.ssthresh {
                // The bytes beyond ssthresh already count towards congestion avoidance.
                self.acked_in_ca = self.cwnd.bytes_above(self.ssthresh);
            }
            return;
        }
        match adjust.avoidance(now, ack, self.cwnd, self.mss) {
            Growth::PerMss(per_mss) => {
                self.acked_in_ca = self.acked_in_ca.saturating_add(ack.bytes);
                if self.acked_in_ca >= per_mss {
                    // Usually one step; divide only when an ACK covers several.
                    let steps = if self.acked_in_ca - per_mss < per_mss {
                        1
                    } else {
                        self.acked_in_ca / per_mss
                    };
                    self.acked_in_ca -= steps * per_mss;
                    self.cwnd = self.cwnd.grow(steps.saturating_mul(self.mss));
                }
            }
            Growth::To(cwnd) => self.cwnd = cwnd.at_most(W::CAP),
            Growth::Hold => {}
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
        if self.in_slow_start() {
            // RFC 5681 eq. 2; in HyStart++'s CSS a quarter of it (RFC 9406 §4.2).
            let n = acked.min(self.mss);
            let grow = self.hystart.as_deref().map_or(n, |h| h.growth(n, self.mss));
            self.cwnd = self.cwnd.grow(grow);
        } else {
            let cwnd = self.cwnd.bytes().max(1);
            let sum = self.acked_in_ca.saturating_add(self.mss.saturating_mul(self.mss));
            let grow = sum / cwnd;
            self.acked_in_ca = sum - grow * cwnd;
            self.cwnd = self.cwnd.grow(grow);
        }
    }

    /// RFC 9002 Appendix B.6 `OnCongestionEvent` with `kLossReductionFactor`
    /// = 0.5, at most once per round trip, and Appendix B.8: persistent
    /// congestion collapses the window to `kMinimumWindow` (§7.6.2), or the
    /// configured loss window, and restarts slow start. ECN-CE marks reduce
    /// like loss (§7.1).
    pub(crate) fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        self.on_congestion_above(now, event, W::ZERO);
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
    pub(crate) fn on_congestion_above(&mut self, now: Instant, event: &Congestion, floor: W) {
        self.on_congestion_with(now, event, floor, &mut Halving);
    }

    /// A congestion event, reduced as `adjust` says (at most once per round
    /// trip, RFC 9002 §7.3.2), with `floor` as in
    /// [`on_congestion_above`](Self::on_congestion_above).
    pub(crate) fn on_congestion_with<A: WindowAdjustment<W>>(
        &mut self,
        now: Instant,
        event: &Congestion,
        floor: W,
        adjust: &mut A,
    ) {
        let floor = floor.at_most(W::CAP);
        if self.recovery.enter(now, event.sent) {
            let (ssthresh, cwnd) = adjust.reduce(self.cwnd, self.mss, floor);
            self.ssthresh = ssthresh;
            self.cwnd = cwnd;
            self.acked_in_ca = 0;
        }
        if event.kind == CongestionKind::PersistentCongestion {
            self.cwnd = W::from_bytes(self.loss_packets.saturating_mul(self.mss));
            self.ssthresh = self.ssthresh.at_least(floor);
            adjust.on_persistent_congestion(self.cwnd);
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
        let floor = min_window(self.mss).min(self.loss_packets.saturating_mul(self.mss));
        self.cwnd = self.cwnd.at_least(W::from_bytes(floor));
    }
}

impl RenoCore<u64> {
    /// The congestion window, bytes.
    #[inline]
    pub(crate) fn window(&self) -> u64 {
        self.cwnd
    }
}

/// Reno's reduction with the adjustment's defaults, for
/// [`RenoCore::on_congestion_above`].
struct Halving;

impl<W: Window> WindowAdjustment<W> for Halving {
    fn avoidance(&mut self, _now: Instant, _ack: &Ack, _cwnd: W, _mss: u64) -> Growth<W> {
        Growth::Hold
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
    fn pinned_guarantee(mss: u16) -> Guarantee {
        let bw = SharedBandwidth::new();
        bw.set_available(Rate::from_bits_per_sec(0));
        bw.set_physical(Rate::from_bytes_per_sec(1));
        let config = GuaranteeConfig {
            eval: EvalSlot::Rtts(4),
            slot_rtts: Some(2),
            ..GuaranteeConfig::paper(Rate::from_bytes_per_sec(10_000_000))
        };
        Guarantee::new(config, mss, Some(Arc::new(bw) as Arc<dyn BandwidthSource>))
    }

    #[test]
    fn guarantee_with_k_pinned_at_one_is_newreno() {
        let mut mss: u64 = 1200;
        let mut reno = NewReno::new(NewRenoConfig::default(), 1200);
        let mut guarantee = pinned_guarantee(1200);
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
    fn slow_start_stops_at_the_window_cap_in_both_arithmetics() {
        use super::{OnePerWindow, RenoCore, Window};
        let t0 = Instant::now();
        let ack = Ack {
            sent: t0,
            bytes: 1_000_000,
            rtt: RttSample::uniform(Duration::from_millis(20)),
            app_limited: false,
        };
        let mut whole = RenoCore::<u64>::new(1200);
        whole.set_cwnd(<u64 as Window>::CAP - 10);
        whole.on_ack(t0, &ack, &mut OnePerWindow);
        assert_eq!(whole.window(), 1_000_000_000_000_000);
        let mut fraction = RenoCore::<f64>::new(1200);
        fraction.set_cwnd(<f64 as Window>::CAP - 10.0);
        fraction.on_ack(t0, &ack, &mut super::Halving);
        assert_eq!(fraction.cwnd(), 9_007_199_254_740_992.0);
        assert_eq!(fraction.phase(), Phase::SlowStart);
    }

    #[test]
    fn a_slope_of_k_grows_k_datagrams_per_window() {
        // cwnd = ssthresh = 12_000 after a loss, then ten 1200-byte ACKs in
        // congestion avoidance. k = 1: one datagram after 12_000 bytes.
        // k = 2.5: one datagram per cwnd / 2.5 bytes, i.e. after 4 ACKs
        // (4_800 >= 12_000 / 2.5) and after 5 more (6_000 >= 13_200 / 2.5).
        use super::{Growth, OnePerWindow, RenoCore, WindowAdjustment};
        struct K(f64);
        impl WindowAdjustment for K {
            fn avoidance(&mut self, _: Instant, _: &Ack, cwnd: u64, _: u64) -> Growth<u64> {
                Growth::PerMss((cwnd as f64 / self.0).round() as u64)
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
        let mut a = RenoCore::<u64>::new(1200);
        let mut b = RenoCore::<u64>::new(1200);
        let mut loss_at = t0 + Duration::from_millis(1);
        for core in [&mut a, &mut b] {
            for _ in 0..10 {
                core.on_ack(t0, &ack(t0), &mut OnePerWindow);
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
            a.on_ack(loss_at, &ack(loss_at), &mut OnePerWindow);
            b.on_ack(loss_at, &ack(loss_at), &mut K(2.5));
        }
        assert_eq!(a.window(), 13_200);
        assert_eq!(b.window(), 14_400);
        assert_eq!(a.phase(), Phase::CongestionAvoidance);
    }
}
