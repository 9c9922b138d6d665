//! Virtual time.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};
use std::time::{Duration, Instant};

/// A point in virtual time: integer nanoseconds since the start of the run.
///
/// Durations are plain [`std::time::Duration`]s; adding one saturates at
/// [`SimTime::MAX`] instead of overflowing.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(transparent))]
pub struct SimTime(u64);

impl SimTime {
    /// The start of every run.
    pub const ZERO: SimTime = SimTime(0);
    /// The far future (about 584 years); used as "never".
    pub const MAX: SimTime = SimTime(u64::MAX);

    /// `ns` nanoseconds after the start.
    pub const fn from_nanos(ns: u64) -> Self {
        SimTime(ns)
    }

    /// `us` microseconds after the start (saturating).
    pub const fn from_micros(us: u64) -> Self {
        SimTime(us.saturating_mul(1_000))
    }

    /// `ms` milliseconds after the start (saturating).
    pub const fn from_millis(ms: u64) -> Self {
        SimTime(ms.saturating_mul(1_000_000))
    }

    /// `s` seconds after the start (saturating).
    pub const fn from_secs(s: u64) -> Self {
        SimTime(s.saturating_mul(1_000_000_000))
    }

    /// The time `d` after the start (saturating).
    pub fn from_duration(d: Duration) -> Self {
        SimTime(duration_to_nanos(d))
    }

    /// Nanoseconds since the start.
    pub const fn as_nanos(self) -> u64 {
        self.0
    }

    /// Time since the start as a `Duration`.
    pub const fn as_duration(self) -> Duration {
        Duration::from_nanos(self.0)
    }

    /// Seconds since the start as a float (for reports and plots).
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 * 1e-9
    }

    /// Maps virtual time onto a real `Instant`: `epoch + (self - ZERO)`.
    ///
    /// quinn-proto takes `now: Instant` everywhere and never reads the clock
    /// itself (only qlog's default start time reads it, and callers can set
    /// that), so a host
    /// that wraps a quinn-proto endpoint picks one `epoch` (e.g.
    /// `Instant::now()` at set-up) and passes `now.to_instant(epoch)`.
    pub fn to_instant(self, epoch: Instant) -> Instant {
        epoch + self.as_duration()
    }

    /// The inverse of [`SimTime::to_instant`]; instants before `epoch` map to
    /// [`SimTime::ZERO`]. Used to turn a quinn-proto `poll_timeout()` back into
    /// virtual time.
    pub fn from_instant(instant: Instant, epoch: Instant) -> Self {
        SimTime::from_duration(instant.saturating_duration_since(epoch))
    }

    /// `self - earlier`, or zero if `earlier` is later.
    pub fn saturating_duration_since(self, earlier: SimTime) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }

    /// `self + d`, or `None` on overflow.
    pub fn checked_add(self, d: Duration) -> Option<SimTime> {
        u64::try_from(d.as_nanos())
            .ok()
            .and_then(|n| self.0.checked_add(n))
            .map(SimTime)
    }
}

/// Nanoseconds in `d`, saturating at `u64::MAX`.
pub(crate) fn duration_to_nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Add<Duration> for SimTime {
    type Output = SimTime;
    fn add(self, d: Duration) -> SimTime {
        SimTime(self.0.saturating_add(duration_to_nanos(d)))
    }
}

impl AddAssign<Duration> for SimTime {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub for SimTime {
    type Output = Duration;
    /// Saturating: `a - b` is zero when `b > a`.
    fn sub(self, rhs: SimTime) -> Duration {
        self.saturating_duration_since(rhs)
    }
}

impl fmt::Display for SimTime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{:09}s", self.0 / 1_000_000_000, self.0 % 1_000_000_000)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_and_instant_mapping() {
        let t = SimTime::from_millis(1500);
        assert_eq!(t.as_nanos(), 1_500_000_000);
        assert_eq!(t + Duration::from_micros(1), SimTime::from_nanos(1_500_001_000));
        assert_eq!(t - SimTime::from_secs(1), Duration::from_millis(500));
        assert_eq!(SimTime::from_secs(1) - t, Duration::ZERO);
        assert_eq!(SimTime::MAX + Duration::from_secs(1), SimTime::MAX);
        assert_eq!(t.to_string(), "1.500000000s");
        let epoch = Instant::now();
        assert_eq!(SimTime::from_instant(t.to_instant(epoch), epoch), t);
    }
}
