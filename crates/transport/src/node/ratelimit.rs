//! The sender's application rate limit (`-b`): a token bucket whose debt is
//! bounded and paid back at a paced rate.

use std::time::{Duration, Instant};

/// Depth of the bucket, as time at the rate: the most written at once. It
/// must exceed the time between the driver's wake-ups, or what is earned
/// meanwhile overflows faster than the paced catch-up returns it: with 2 ms,
/// `tputctl loopback -b 100M` on a 2-core machine at load 29 reached only
/// 79-87 Mbit/s (with 10 ms, 99.7-100.2).
pub(super) const BURST: Duration = Duration::from_millis(10);

/// Smallest depth of the bucket, bytes (a low rate still writes whole
/// datagrams' worth at once).
pub(super) const MIN_BURST: u64 = 4096;

/// The most the limiter owes the sender, as time at the rate: what a stall
/// longer than this would have earned is forgone.
pub(super) const MAX_DEBT: Duration = Duration::from_millis(100);

/// How fast a debt is paid back: on top of the rate, at most the rate
/// again, so the sender catches up at no more than twice its rate.
pub(super) const CATCH_UP: f64 = 1.0;

/// A token bucket at `rate` bytes per second, `burst` bytes deep.
///
/// An application that writes at a fixed rate leaves its congestion window
/// unused, and RFC 9002 §7.8 does not let a window that is not used grow.
/// The limiter must then not turn a pause of its own driver (a CPU stall, a
/// late timer) into a burst: a limit counted from the start of the transfer
/// (`sent <= rate * elapsed`) writes the whole backlog at once after a
/// stall, the sender is window-limited for that burst, and the window grows
/// each time; on a loaded machine it ended near 1 MB at 100 Mbit/s on
/// loopback. Here the bucket holds at most [`BURST`] of the rate (bursts
/// stay small, in the spirit of RFC 9002 §7.7's pacing), what it cannot
/// hold becomes a debt of at most [`MAX_DEBT`] of the rate, and the debt is
/// paid back paced, at most [`CATCH_UP`] times the rate on top of the rate.
/// So the average rate holds across short stalls, no write is larger than
/// the bucket, and the sender never writes faster than twice its rate.
#[derive(Debug, Clone)]
pub(super) struct RateLimiter {
    /// Bytes per second.
    rate: f64,
    /// Depth of the bucket, bytes.
    burst: f64,
    /// Largest debt, bytes.
    max_debt: f64,
    /// Bytes that may be written now.
    tokens: f64,
    /// Bytes earned that did not fit in the bucket, owed to the sender.
    debt: f64,
    /// When `tokens` and `debt` were brought up to date.
    last: Instant,
}

impl RateLimiter {
    /// A limiter at `rate_bps` bits per second, full at `now`.
    pub(super) fn new(rate_bps: u64, now: Instant) -> Self {
        // Bytes in `d` at the rate, exactly.
        let at_rate = |d: Duration| (u128::from(rate_bps) * d.as_nanos() / 8_000_000_000) as f64;
        let burst = at_rate(BURST).max(MIN_BURST as f64);
        Self {
            rate: rate_bps as f64 / 8.0,
            burst,
            max_debt: at_rate(MAX_DEBT),
            tokens: burst,
            debt: 0.0,
            last: now,
        }
    }

    /// Bring the bucket up to `now`.
    fn refill(&mut self, now: Instant) {
        let dt = now.saturating_duration_since(self.last).as_secs_f64();
        if dt <= 0.0 {
            return;
        }
        self.last = now;
        let earned = self.rate * dt;
        let repaid = self.debt.min(CATCH_UP * earned);
        self.debt -= repaid;
        self.tokens += earned + repaid;
        if self.tokens > self.burst {
            self.debt = (self.debt + self.tokens - self.burst).min(self.max_debt);
            self.tokens = self.burst;
        }
    }

    /// Bytes the sender may write at `now`.
    pub(super) fn allowance(&mut self, now: Instant) -> u64 {
        self.refill(now);
        // Rounding: the wake-up of `ready_at` finds its bytes whole.
        (self.tokens + 1e-6) as u64
    }

    /// The sender wrote (or took to write) `bytes`.
    pub(super) fn spend(&mut self, bytes: u64) {
        self.tokens = (self.tokens - bytes as f64).max(0.0);
    }

    /// The size worth waking up for: a quarter of the bucket (so a late
    /// wake-up still finds room in it), or `chunk` if smaller.
    pub(super) fn quantum(&self, chunk: u64) -> u64 {
        ((self.burst / 4.0) as u64).min(chunk).max(1)
    }

    /// When the bucket will hold `want` bytes (at most its depth), if the
    /// sender writes nothing before.
    pub(super) fn ready_at(&self, want: u64) -> Option<Instant> {
        let deficit = (want as f64).min(self.burst) - self.tokens;
        if deficit <= 0.0 {
            return Some(self.last);
        }
        // The bucket fills at the rate, plus the debt's repayment while it lasts.
        let secs = if self.debt * (1.0 + CATCH_UP) >= CATCH_UP * deficit {
            deficit / ((1.0 + CATCH_UP) * self.rate)
        } else {
            (deficit - self.debt) / self.rate
        };
        // Rounded up: a wake-up is never before its bytes are there.
        let wait = Duration::try_from_secs_f64(secs).ok()?;
        self.last.checked_add(wait + Duration::from_nanos(1))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RATE_BPS: u64 = 100_000_000;
    const RATE: f64 = RATE_BPS as f64 / 8.0;

    /// Drives a limiter on virtual time: a sender that writes whatever it
    /// may every `step`, except while stalled.
    struct Run {
        l: RateLimiter,
        t0: Instant,
        sent: u64,
    }

    impl Run {
        fn new() -> Self {
            let t0 = Instant::now();
            Self {
                l: RateLimiter::new(RATE_BPS, t0),
                t0,
                sent: 0,
            }
        }

        /// Writes what is allowed at `at`; returns it.
        fn write(&mut self, at: Duration) -> u64 {
            let n = self.l.allowance(self.t0 + at);
            self.l.spend(n);
            self.sent += n;
            n
        }
    }

    #[test]
    fn a_steady_sender_gets_the_rate_and_no_more() {
        let mut r = Run::new();
        let step = Duration::from_micros(500);
        for i in 1..=2000 {
            r.write(step * i);
            let elapsed = (step * i).as_secs_f64();
            // Never ahead of the schedule by more than one bucket.
            assert!(r.sent as f64 <= RATE * elapsed + r.l.burst + 1.0, "{i}");
        }
        let expected = RATE * 1.0 + r.l.burst;
        assert!((r.sent as f64 - expected).abs() <= 2000.0, "{} vs {expected}", r.sent);
    }

    #[test]
    fn after_a_stall_the_backlog_is_paid_back_paced_and_bounded() {
        let mut r = Run::new();
        let step = Duration::from_micros(100);
        let mut t = Duration::ZERO;
        for _ in 0..100 {
            t += step;
            r.write(t);
        }
        let before = r.sent;
        // A 50 ms stall (within `MAX_DEBT`): the first write after it is
        // one bucket, not the 625 kB the stall earned.
        t += Duration::from_millis(50);
        let first = r.write(t);
        assert!(first as f64 <= r.l.burst + 1.0, "{first} bytes at once after the stall");
        assert!(r.l.debt > 0.0 && r.l.debt <= r.l.max_debt);
        // Then no faster than twice the rate, until the debt is paid.
        let mut caught_up = None;
        for i in 1..=2000 {
            t += step;
            let n = r.write(t);
            assert!(
                n as f64 <= 2.0 * RATE * step.as_secs_f64() + 1.0,
                "{n} bytes in one step"
            );
            if caught_up.is_none() && r.l.debt == 0.0 {
                caught_up = Some(i);
            }
        }
        // Paid back in full: the average rate held across the stall
        // (10 ms + 50 ms + 200 ms at the rate, plus the first bucket).
        let caught_up = caught_up.expect("the debt is paid back");
        assert!(caught_up > 200 && caught_up < 600, "{caught_up} steps");
        let expected = RATE * t.as_secs_f64() + r.l.burst;
        assert!((r.sent as f64 - expected).abs() <= 2000.0, "{} vs {expected}", r.sent);
        assert!(r.sent > before);
    }

    #[test]
    fn a_long_stall_is_forgiven_beyond_the_debt_bound() {
        let mut r = Run::new();
        r.write(Duration::ZERO);
        // One second stalled earns 12.5 MB at 100 Mbit/s; at most
        // `MAX_DEBT` of it is owed.
        let t = Duration::from_secs(1);
        let first = r.write(t);
        assert!(first as f64 <= r.l.burst + 1.0);
        assert_eq!(r.l.debt, r.l.max_debt);
        assert_eq!(r.l.max_debt, 1_250_000.0);
        // What the sender writes over the next second: the rate, plus the
        // bounded debt, never the whole backlog.
        let mut extra = 0;
        for i in 1..=10_000 {
            extra += r.write(t + Duration::from_micros(100) * i);
        }
        let bound = RATE * (1.0 + MAX_DEBT.as_secs_f64()) + 1.0;
        assert!(extra as f64 <= bound, "{extra} > {bound}");
        assert!(
            extra as f64 >= RATE * (1.0 + MAX_DEBT.as_secs_f64()) - 2000.0,
            "{extra}"
        );
    }

    #[test]
    fn the_wake_up_is_when_the_bytes_are_there() {
        let t0 = Instant::now();
        let mut l = RateLimiter::new(RATE_BPS, t0);
        let full = l.allowance(t0);
        l.spend(full);
        let q = l.quantum(64 * 1024);
        let at = l.ready_at(q).unwrap();
        // A quarter of 10 ms of 100 Mbit/s is 31.25 kB, below a 64 KiB chunk.
        assert_eq!(q, 31_250);
        assert!((at - t0).abs_diff(Duration::from_micros(2500)) < Duration::from_micros(1));
        assert!(at > t0);
        assert!(l.allowance(at) >= q - 1);
        // With a debt the bucket fills twice as fast.
        let mut l = RateLimiter::new(RATE_BPS, t0);
        l.spend(full);
        let later = t0 + Duration::from_millis(20);
        let got = l.allowance(later);
        l.spend(got);
        let at = l.ready_at(q).unwrap();
        assert!((at - later).abs_diff(Duration::from_micros(1250)) < Duration::from_micros(1));
        assert!(l.allowance(at) >= q - 1);
    }
}
