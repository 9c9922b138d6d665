//! The loss floor of the guarantee controller's default mode, and its breaker.
//!
//! # Why the paper's rule misses its target under load
//!
//! The paper keeps Reno's loss response ("on loss, behave as Reno", §2.4) and
//! only steepens the growth after it. Against many Reno flows on a small
//! DropTail queue the flow is halved several times per slot; each halving
//! leaves it below the window its target needs (`bw * srtt`) for a round trip
//! or two, and the slope `k` wins back the window but not that time. Traced at
//! 30 competing NewReno flows and a 10 % target, the window's time-weighted
//! mean sat just under what the target needs and the flow met its target in
//! a few percent of slots (docs/guarantee.md has the trace).
//!
//! # The floor
//!
//! On a loss (or ECN mark) the window falls to
//! `max(cwnd * 0.5, floor)` instead of `cwnd * 0.5`, with
//! `floor = f * bw * srtt` (bytes; `srtt` the latest smoothed RTT). It never
//! *raises* the window on a loss: `cwnd` becomes `min(cwnd, max(cwnd / 2,
//! floor))`, and `ssthresh` becomes `max(cwnd / 2, floor)`, so a window below
//! the floor keeps growing in slow start up to it. Persistent congestion (the
//! RFC 9002 §7.6 analogue of a retransmission timeout) still collapses the
//! window to the minimum (RFC 9002 §7.6.2, RFC 6298 §5.5); only `ssthresh`
//! keeps the floor, so slow start climbs back to it.
//!
//! The factor `f` is adapted once per evaluation slot from the flow's *own*
//! slot throughput `x` (no `A`, no `P`: it behaves the same live and in the
//! simulator), toward a throughput of `(1 + margin) * bw`:
//!
//! - a slot that missed `bw`: `f <- min(max(f * (1 + margin) * bw / x, 1), 2)`
//!   (at least 1: a floor of the whole target window at once);
//! - a slot that met it: `f <- max(f * sqrt((1 + margin) * bw / x), f - 0.02)`,
//!   in `[0.5, 2]`: half the correction, and down by at most 0.02 a slot.
//!
//! The slow way down matters where the target is close to the flow's fair
//! share: there one lucky slot far above the target would otherwise lower
//! the floor enough for the next slot to miss (measured: the success ratio
//! at 10 Mbit/s against 10 NewReno flows on a 100 Mbit/s link rose from
//! 0.94 to 0.99 with it, and its mean rate from 11.5 to 11.8 Mbit/s).
//!
//! When the target is easy (the flow's fair share well above it), `x` stays
//! above `(1 + margin) * bw`, `f` sinks to 0.5 and the floor (half the target
//! window) never binds: the flow is the paper's controller, which with a slot
//! goal it already meets runs at `k = k_min`, i.e. Reno. The floor engages only
//! as the target comes at risk.
//!
//! # The breaker
//!
//! A target the path cannot carry (an overbooked link) would make the floor a
//! window that never yields. After [`Floor::TRIP_AFTER`] consecutive
//! evaluation slots that missed `bw` with the floor engaged, the breaker
//! trips: the floor is dropped, the slope is held at `k_min` (plain Reno), and
//! the controller reports the target *infeasible*. It retries after an off
//! period of [`Floor::FIRST_BACKOFF`] evaluation slots, doubled at every trip
//! that follows a retry without success, up to [`Floor::MAX_BACKOFF`]. A slot
//! that meets the target, engaged or not, clears the verdict and resets the
//! back-off.

use std::time::Duration;

/// The floor factor `f`, the breaker and the infeasibility verdict.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Floor {
    /// `f`, in `[MIN_FACTOR, MAX_FACTOR]`.
    factor: f64,
    /// The throughput `f` steers toward is `(1 + margin) * bw`.
    margin: f64,
    /// Consecutive evaluation slots that missed `bw` with the floor engaged.
    misses: u32,
    /// Evaluation slots left with the floor off (0: engaged).
    off_slots: u32,
    /// The next off period, evaluation slots.
    backoff: u32,
    /// The breaker tripped and no slot has met the target since.
    infeasible: bool,
    /// How often the breaker tripped.
    trips: u64,
}

impl Floor {
    /// Consecutive missed evaluation slots that trip the breaker.
    pub(crate) const TRIP_AFTER: u32 = 3;
    /// The first off period, evaluation slots.
    pub(crate) const FIRST_BACKOFF: u32 = 8;
    /// The longest off period, evaluation slots.
    pub(crate) const MAX_BACKOFF: u32 = 64;
    /// Smallest `f`: a floor of half the target's window.
    pub(crate) const MIN_FACTOR: f64 = 0.5;
    /// Largest `f`: twice the target's window.
    pub(crate) const MAX_FACTOR: f64 = 2.0;
    /// `f` after a missed slot is at least this.
    const ENGAGE_FACTOR: f64 = 1.0;
    /// The most a met slot lowers `f`.
    pub(crate) const MAX_STEP_DOWN: f64 = 0.02;

    /// A floor steering toward `(1 + margin) * bw`, starting at `f = 1`.
    pub(crate) fn new(margin: f64) -> Self {
        Self {
            factor: Self::ENGAGE_FACTOR,
            margin,
            misses: 0,
            off_slots: 0,
            backoff: Self::FIRST_BACKOFF,
            infeasible: false,
            trips: 0,
        }
    }

    /// Whether the floor applies (the breaker has not tripped, or its off period is over).
    pub(crate) fn engaged(&self) -> bool {
        self.off_slots == 0
    }

    /// `f`.
    pub(crate) fn factor(&self) -> f64 {
        self.factor
    }

    /// Whether the controller declares its target infeasible.
    pub(crate) fn infeasible(&self) -> bool {
        self.infeasible
    }

    /// How often the breaker has tripped.
    pub(crate) fn trips(&self) -> u64 {
        self.trips
    }

    /// The floor rate `f * bw`, bytes per second; 0 while the breaker is open.
    pub(crate) fn rate(&self, bw: f64) -> f64 {
        if self.engaged() { self.factor * bw } else { 0.0 }
    }

    /// The floor window for a floor rate of `rate` bytes per second and a
    /// smoothed RTT `srtt`, bytes.
    pub(crate) fn window(rate: f64, srtt: Duration) -> u64 {
        let w = rate * srtt.as_secs_f64();
        if w.is_finite() && w > 0.0 { w as u64 } else { 0 }
    }

    /// An evaluation slot ended with throughput `x` against the target `bw`
    /// (both bytes per second, in the same units).
    pub(crate) fn on_evaluation_end(&mut self, x: f64, bw: f64) {
        let met = x >= bw;
        if met {
            self.infeasible = false;
            self.misses = 0;
            self.backoff = Self::FIRST_BACKOFF;
            self.off_slots = 0;
        }
        if !self.engaged() {
            self.off_slots -= 1;
            return;
        }
        let want = (1.0 + self.margin) * bw;
        // x = 0 (nothing delivered): the largest correction.
        let ratio = if x > 0.0 { want / x } else { f64::INFINITY };
        if met {
            self.factor = (self.factor * ratio.sqrt()).max(self.factor - Self::MAX_STEP_DOWN);
        } else {
            self.factor = (self.factor * ratio).max(Self::ENGAGE_FACTOR);
            self.misses += 1;
        }
        self.factor = if self.factor.is_finite() {
            self.factor.clamp(Self::MIN_FACTOR, Self::MAX_FACTOR)
        } else {
            Self::MAX_FACTOR
        };
        if self.misses >= Self::TRIP_AFTER {
            self.misses = 0;
            self.off_slots = self.backoff;
            self.backoff = (self.backoff * 2).min(Self::MAX_BACKOFF);
            self.infeasible = true;
            self.trips += 1;
            // A retry starts from the whole target window.
            self.factor = Self::ENGAGE_FACTOR;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BW: f64 = 1_000_000.0;

    #[test]
    fn a_miss_engages_at_least_the_target_window_and_corrects_in_full() {
        let mut f = Floor::new(0.1);
        f.factor = 0.5;
        f.on_evaluation_end(0.9 * BW, BW); // 1.1 / 0.9 * 0.5 = 0.61 -> at least 1
        assert_eq!(f.factor(), 1.0);
        f.on_evaluation_end(0.5 * BW, BW); // 1.0 * 2.2
        assert_eq!(f.factor(), 2.0);
        assert!(f.engaged() && !f.infeasible());
    }

    #[test]
    fn met_slots_correct_by_half_toward_the_margin_at_most_a_step_down() {
        // Far above the margin: sqrt(1.1 / 4.4) = 0.5 would halve f; one step only.
        let mut f = Floor::new(0.1);
        f.on_evaluation_end(4.4 * BW, BW);
        assert_eq!(f.factor(), 1.0 - Floor::MAX_STEP_DOWN);
        // A little above it: the half correction is the smaller step.
        let mut f = Floor::new(0.1);
        f.on_evaluation_end(1.1 * 1.0201 * BW, BW); // sqrt(1 / 1.0201) = 0.990...
        assert!((f.factor() - 1.0 / 1.01).abs() < 1e-12, "{}", f.factor());
        // Met but below the margin: f rises by half the correction.
        // x = 1.017 bw, f * sqrt(1.1 / 1.017) = 1.04.
        let mut f = Floor::new(0.1);
        f.on_evaluation_end(1.1 * BW / 1.0816, BW);
        assert!((f.factor() - 1.04).abs() < 1e-12);
        assert_eq!(f.misses, 0);
        // x = 0.909 bw missed.
        let mut f = Floor::new(0.1);
        f.on_evaluation_end(1.1 * BW / 1.21, BW);
        assert_eq!(f.misses, 1);
        // Down to the minimum, never below.
        let mut f = Floor::new(0.1);
        for _ in 0..100 {
            f.on_evaluation_end(10.0 * BW, BW);
        }
        assert_eq!(f.factor(), Floor::MIN_FACTOR);
    }

    #[test]
    fn the_breaker_trips_backs_off_and_retries() {
        let mut f = Floor::new(0.1);
        for _ in 0..Floor::TRIP_AFTER - 1 {
            f.on_evaluation_end(0.5 * BW, BW);
            assert!(f.engaged());
        }
        f.on_evaluation_end(0.5 * BW, BW);
        assert!(!f.engaged() && f.infeasible());
        assert_eq!((f.trips(), f.rate(BW)), (1, 0.0));
        assert_eq!(Floor::window(f.rate(BW), Duration::from_millis(20)), 0);
        for _ in 0..Floor::FIRST_BACKOFF - 1 {
            f.on_evaluation_end(0.5 * BW, BW);
            assert!(!f.engaged());
        }
        f.on_evaluation_end(0.5 * BW, BW);
        assert!(f.engaged() && f.infeasible(), "retry");
        assert_eq!(f.factor(), 1.0);
        // The retry fails: twice the off period.
        for _ in 0..Floor::TRIP_AFTER {
            f.on_evaluation_end(0.5 * BW, BW);
        }
        assert_eq!((f.trips(), f.off_slots), (2, 2 * Floor::FIRST_BACKOFF));
        // A met slot while off ends the verdict and the off period.
        f.on_evaluation_end(1.5 * BW, BW);
        assert!(f.engaged() && !f.infeasible());
        assert_eq!(f.backoff, Floor::FIRST_BACKOFF);
    }

    #[test]
    fn the_back_off_is_capped() {
        let mut f = Floor::new(0.1);
        for _ in 0..1000 {
            f.on_evaluation_end(0.0, BW);
        }
        assert!(f.backoff <= Floor::MAX_BACKOFF && f.factor().is_finite());
        assert_eq!(f.backoff, Floor::MAX_BACKOFF);
    }

    #[test]
    fn the_window_is_rate_times_srtt() {
        assert_eq!(Floor::window(1_000_000.0, Duration::from_millis(20)), 20_000);
        assert_eq!(Floor::window(f64::NAN, Duration::from_millis(20)), 0);
        assert_eq!(Floor::window(f64::INFINITY, Duration::from_millis(20)), 0);
    }
}
