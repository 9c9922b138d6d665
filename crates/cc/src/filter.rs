//! The windowed max filters of the crate's controllers and estimators.
//!
//! - [`WindowedMax`]: Kathleen Nichols' windowed running max (the algorithm
//!   draft-ietf-ccwg-bbr-06 §5.5.5 points to, and Linux's `lib/minmax.c`),
//!   over any clock: BBR's `extra_acked_filter` (timed in packet-timed
//!   rounds) and the inline estimator's rate and RTT filters (timed in
//!   [`Instant`]s).
//! - [`MaxBwFilter`]: BBR's two-slot `max_bw_filter`, one slot per ProbeBW
//!   cycle parity (§5.5.6).

use std::time::{Duration, Instant};

/// `BBR.max_bw_filter` (draft-ietf-ccwg-bbr-06 §5.5.3–§5.5.6): the maximum
/// delivery rate over the current and the previous ProbeBW cycle.
///
/// §2.11: `BBR.MaxBwFilterLen` is 2, "representing up to 2 ProbeBW cycles,
/// the current cycle and the previous full cycle", and §5.5.6: "Note that
/// BBR.cycle_count only needs to be tracked with a single bit, since the
/// BBR.max_bw_filter only needs to track samples from two time slots". So
/// the filter is one slot per cycle parity; advancing the cycle empties
/// the slot the new cycle writes to.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MaxBwFilter {
    /// The largest sample of the cycles with even and odd `cycle_count`.
    slots: [f64; 2],
    /// `BBR.cycle_count`.
    pub(crate) cycle_count: u64,
}

impl MaxBwFilter {
    /// `BBR.max_bw`.
    pub(crate) fn get(&self) -> f64 {
        self.slots[0].max(self.slots[1])
    }

    /// `UpdateWindowedMaxFilter(value=RS.delivery_rate, time=BBR.cycle_count)`.
    pub(crate) fn update(&mut self, rate: f64) {
        let slot = &mut self.slots[(self.cycle_count & 1) as usize];
        *slot = slot.max(rate);
    }

    /// `AdvanceMaxBwFilter()` (§5.5.6): `BBR.cycle_count++`.
    pub(crate) fn advance(&mut self) {
        self.cycle_count = self.cycle_count.wrapping_add(1);
        self.slots[(self.cycle_count & 1) as usize] = 0.0;
    }
}

/// The clock a [`WindowedMax`] is timed by: what an age is, and a fraction of one.
pub(crate) trait FilterClock: Copy + PartialEq {
    /// The length of a window and an age.
    type Span: Copy + PartialOrd;
    /// `self - earlier`, zero if `earlier` is later.
    fn since(self, earlier: Self) -> Self::Span;
    /// `span / divisor`.
    fn fraction(span: Self::Span, divisor: u32) -> Self::Span;
}

/// Virtual time in rounds (BBR's packet-timed round count).
impl FilterClock for u64 {
    type Span = u64;
    #[inline]
    fn since(self, earlier: Self) -> u64 {
        self.saturating_sub(earlier)
    }
    #[inline]
    fn fraction(span: u64, divisor: u32) -> u64 {
        span / u64::from(divisor)
    }
}

impl FilterClock for Instant {
    type Span = Duration;
    #[inline]
    fn since(self, earlier: Self) -> Duration {
        self.saturating_duration_since(earlier)
    }
    #[inline]
    fn fraction(span: Duration, divisor: u32) -> Duration {
        span / divisor
    }
}

/// A windowed running maximum of `V` over a clock `T`, after Kathleen
/// Nichols' algorithm (the one draft-ietf-ccwg-bbr-06 §5.5.5 points to, as
/// Linux's `lib/minmax.c` implements it): the best, second-best and
/// third-best samples of the window, each younger than the one before, so
/// that when the best expires the next one is already known. O(1), three
/// samples of state; the estimate only changes when a sample arrives.
/// A windowed minimum is the maximum of negated values.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WindowedMax<T, V> {
    /// `(time, value)`, best first; all equal after a reset; `None` before
    /// the first sample.
    samples: Option<[(T, V); 3]>,
}

impl<T, V> Default for WindowedMax<T, V> {
    fn default() -> Self {
        Self { samples: None }
    }
}

impl<T: FilterClock, V: Copy + PartialOrd> WindowedMax<T, V> {
    /// An empty filter.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// The current maximum, `None` before the first sample.
    pub(crate) fn get(&self) -> Option<V> {
        self.samples.map(|s| s[0].1)
    }

    /// Take `value` at `time`, with samples older than `window` expiring;
    /// returns the new maximum.
    pub(crate) fn update(&mut self, value: V, time: T, window: T::Span) -> V {
        let fresh = (time, value);
        let Some(s) = self.samples.as_mut() else {
            self.samples = Some([fresh; 3]);
            return value;
        };
        if value >= s[0].1 || time.since(s[2].0) > window {
            // A new best, or nothing in the window is younger than the
            // window itself: start over from this sample.
            *s = [fresh; 3];
            return value;
        }
        if value >= s[1].1 {
            s[1] = fresh;
            s[2] = fresh;
        } else if value >= s[2].1 {
            s[2] = fresh;
        }
        // Expire the best and promote the younger ones; keep the second and
        // third from being stale copies of the best after a quarter and a
        // half window, so that the successors stay spread over the window
        // (`minmax_subwin_update`).
        let age = time.since(s[0].0);
        if age > window {
            s[0] = s[1];
            s[1] = s[2];
            s[2] = fresh;
            if time.since(s[0].0) > window {
                s[0] = s[1];
                s[1] = s[2];
                s[2] = fresh;
            }
        } else if s[1].0 == s[0].0 && age > T::fraction(window, 4) {
            s[1] = fresh;
            s[2] = fresh;
        } else if s[2].0 == s[1].0 && age > T::fraction(window, 2) {
            s[2] = fresh;
        }
        s[0].1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_bw_remembers_the_current_and_previous_cycle() {
        let mut f = MaxBwFilter::default();
        f.update(10.0);
        f.update(7.0);
        assert_eq!(f.get(), 10.0);
        f.advance(); // cycle 1: the cycle-0 sample is still the previous cycle's
        f.update(5.0);
        assert_eq!(f.get(), 10.0);
        f.advance(); // cycle 2: cycle 0 is gone
        assert_eq!(f.get(), 5.0);
        f.update(6.0);
        assert_eq!(f.get(), 6.0);
        f.advance();
        f.advance();
        assert_eq!(f.get(), 0.0);
    }

    #[test]
    fn windowed_max_expires_samples_older_than_the_window() {
        let mut f = WindowedMax::<u64, u64>::new();
        assert_eq!(f.update(100, 0, 10), 100);
        assert_eq!(f.update(50, 3, 10), 100);
        assert_eq!(f.update(70, 6, 10), 100);
        assert_eq!(f.update(10, 10, 10), 100, "age 10 is still inside");
        // The best (time 0) expires at time 11; the next best in the window is 70.
        assert_eq!(f.update(10, 11, 10), 70);
        assert_eq!(f.update(10, 17, 10), 10, "70 (time 6) expired at 17");
        // A larger sample replaces everything at once.
        assert_eq!(f.update(500, 18, 10), 500);
        // A window of one round (BBR's Startup) forgets after one round.
        let mut g = WindowedMax::<u64, u64>::new();
        g.update(9, 1, 1);
        assert_eq!(g.update(3, 2, 1), 9);
        assert_eq!(g.update(3, 3, 1), 3);
        // Brute-force agreement with the true windowed max on a sawtooth:
        // the filter never overestimates, and it is exact whenever the true
        // max is one of the last three local records.
        let mut h = WindowedMax::<u64, u64>::new();
        let values: Vec<u64> = (0..200u64).map(|t| (t * 37) % 101).collect();
        for (t, &v) in values.iter().enumerate() {
            let t = t as u64;
            let got = h.update(v, t, 10);
            let lo = t.saturating_sub(10) as usize;
            let truth = values[lo..=t as usize].iter().copied().max().unwrap();
            assert!(got <= truth, "t {t}: {got} > {truth}");
            assert!(got >= v);
        }
    }
}
