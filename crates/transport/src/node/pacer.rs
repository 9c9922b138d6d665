//! The node's pacer: a token bucket that releases a connection's datagrams
//! no faster than its controller's pacing rate, for controllers that report
//! one ([`CongestionController::pacing_rate`](tput_cc::CongestionController::pacing_rate)).
//!
//! quinn-proto 0.11 paces every connection itself, at 1.25 x cwnd / srtt
//! from the window alone, and has no hook through which a controller could
//! set the rate. So the node holds back its calls to quinn-proto's
//! `poll_transmit` instead: a datagram is built (and stamped with its send
//! time, which the RTT and delivery-rate samples are taken from) only when
//! the bucket holds a full datagram's worth of tokens, and the moment it
//! will is a node timer ([`Node::poll_timeout`](super::Node::poll_timeout)),
//! so the UDP loop and the simulator host both wake for it. quinn-proto's
//! own pacer still runs beneath; a controller's rate below it (BBR's, about
//! the bottleneck rate against quinn's 2.5 x with BBR's cwnd of 2 BDP) is
//! the one that binds.
//!
//! RFC 9002 §7.7 asks senders to pace or to limit bursts and leaves the
//! pacer open; the bucket is the usual one. Its depth, the burst sent back
//! to back after an idle period (the "idle restart": a sender that was
//! quiet gets no more than that), is the controller's send quantum when it
//! reports one (BBR's `C.send_quantum`, draft-ietf-ccwg-bbr-06 §5.6.3), and
//! otherwise the draft's rule for it: one millisecond at the pacing rate,
//! at most 64 KBytes and at least two full datagrams (so a datagram can
//! always go and low rates keep 2 x MSS bursts).
//!
//! Tokens are counted exactly, in bytes x 10^9 (byte-nanoseconds per
//! second), so the release times are whole nanoseconds and a wake-up at
//! the release time always finds the datagram's tokens there: no rounding
//! makes a simulation spin or drift.

use std::time::{Duration, Instant};

/// `SEND_QUANTUM_TIME` of draft-ietf-ccwg-bbr-06 §5.6.3: the burst is one
/// millisecond's worth at the pacing rate...
const QUANTUM_TIME: Duration = Duration::from_millis(1);
/// ...at most 64 KBytes (§5.6.3).
const MAX_QUANTUM: u64 = 64 * 1024;
/// Nanoseconds per second: tokens are bytes scaled by this.
const NANOS: u128 = 1_000_000_000;

/// What the controller asks of the pacer right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PacingRate {
    /// Bytes per second, positive.
    pub(crate) rate: u64,
    /// The controller's send quantum, bytes, if it reports one.
    pub(crate) quantum: Option<u64>,
}

impl PacingRate {
    /// The bucket's depth, bytes, for datagrams of up to `mtu` bytes (see
    /// the module's documentation).
    pub(crate) fn burst(&self, mtu: u64) -> u64 {
        let quantum = self.quantum.unwrap_or_else(|| {
            let per_quantum = u128::from(self.rate) * QUANTUM_TIME.as_nanos() / NANOS;
            u64::try_from(per_quantum).unwrap_or(u64::MAX).min(MAX_QUANTUM)
        });
        quantum.max(2 * mtu)
    }
}

/// A token bucket in virtual or real time: every call carries `now`.
#[derive(Debug, Clone, Default)]
pub(crate) struct Pacer {
    /// Tokens, in bytes x [`NANOS`].
    tokens: u128,
    /// When the tokens were last brought up to date; `None` before the
    /// first use (the bucket starts full).
    last: Option<Instant>,
    /// The release time last handed out ([`ready_at`](Self::ready_at)),
    /// until the next refill.
    due: Option<Instant>,
}

impl Pacer {
    /// Bring the bucket up to `now` at `pacing` and return the bytes it
    /// lets go at once, for datagrams of up to `mtu` bytes.
    ///
    /// A wake-up later than the release time the pacer asked for (a live
    /// timer's granularity: tokio's is a millisecond, the draft's send
    /// quantum at most one) keeps the tokens of the delay, up to one bucket
    /// more: otherwise every late timer would cost the sender the rest of
    /// its rate. In the simulator timers are exact and this never applies.
    pub(crate) fn available(&mut self, now: Instant, pacing: PacingRate, mtu: u64) -> u64 {
        let depth = u128::from(pacing.burst(mtu)) * NANOS;
        let rate = u128::from(pacing.rate);
        let late = self
            .due
            .take()
            .map_or(0, |due| now.saturating_duration_since(due).as_nanos());
        let cap = depth + late.saturating_mul(rate).min(depth);
        self.tokens = match self.last {
            None => depth,
            Some(last) => {
                let elapsed = now.saturating_duration_since(last).as_nanos();
                self.tokens.saturating_add(elapsed.saturating_mul(rate)).min(cap)
            }
        };
        // A clock that went back (never in the simulator) refills nothing.
        self.last = Some(self.last.map_or(now, |l| l.max(now)));
        u64::try_from(self.tokens / NANOS).unwrap_or(u64::MAX)
    }

    /// `bytes` went out.
    pub(crate) fn spend(&mut self, bytes: u64) {
        self.tokens = self.tokens.saturating_sub(u128::from(bytes) * NANOS);
    }

    /// When the bucket next holds `bytes` at `rate` bytes per second, given
    /// that it was last brought up to date by [`available`](Self::available).
    pub(crate) fn ready_at(&mut self, bytes: u64, rate: u64) -> Option<Instant> {
        let last = self.last?;
        let missing = (u128::from(bytes) * NANOS).saturating_sub(self.tokens);
        let nanos = missing.div_ceil(u128::from(rate.max(1)));
        self.due = last.checked_add(Duration::from_nanos(u64::try_from(nanos).ok()?));
        self.due
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MTU: u64 = 1200;

    /// Send `mtu`-byte datagrams from `start` whenever the bucket lets one
    /// go, waking exactly at its release times; the send times.
    fn run(pacer: &mut Pacer, start: Instant, pacing: PacingRate, n: usize) -> Vec<Instant> {
        let mut now = start;
        let mut sent = Vec::new();
        while sent.len() < n {
            if pacer.available(now, pacing, MTU) >= MTU {
                pacer.spend(MTU);
                sent.push(now);
            } else {
                let next = pacer.ready_at(MTU, pacing.rate).expect("a release time");
                assert!(next > now, "a release time lies ahead");
                now = next;
            }
        }
        sent
    }

    #[test]
    fn releases_at_the_rate_after_the_burst() {
        // 1.2 MB/s: one 1200-byte datagram per millisecond; quantum 3 datagrams.
        let pacing = PacingRate {
            rate: 1_200_000,
            quantum: Some(3 * MTU),
        };
        let t0 = Instant::now();
        let mut p = Pacer::default();
        let sent = run(&mut p, t0, pacing, 13);
        // The full bucket goes at once...
        assert!(sent[..3].iter().all(|&t| t == t0), "{sent:?}");
        // ...then exactly one datagram per millisecond.
        for (i, t) in sent[3..].iter().enumerate() {
            assert_eq!(*t - t0, Duration::from_millis(1 + i as u64), "datagram {}", i + 3);
        }
        // 13 datagrams in 10 ms: 3 in the burst, then the rate.
        assert_eq!(*sent.last().unwrap() - t0, Duration::from_millis(10));
    }

    #[test]
    fn an_idle_sender_restarts_with_one_burst_only() {
        let pacing = PacingRate {
            rate: 1_200_000,
            quantum: Some(4 * MTU),
        };
        let t0 = Instant::now();
        let mut p = Pacer::default();
        run(&mut p, t0, pacing, 10);
        // Idle for a second: a thousand datagrams' worth of time, but the
        // bucket holds four.
        let later = t0 + Duration::from_secs(1);
        assert_eq!(p.available(later, pacing, MTU), 4 * MTU);
        let sent = run(&mut p, later, pacing, 6);
        assert_eq!(sent.iter().filter(|&&t| t == later).count(), 4, "{sent:?}");
        assert_eq!(sent[4] - later, Duration::from_millis(1));
        assert_eq!(sent[5] - later, Duration::from_millis(2));
    }

    #[test]
    fn a_late_wake_up_keeps_the_tokens_of_the_delay() {
        let pacing = PacingRate {
            rate: 1_200_000,
            quantum: Some(2 * MTU),
        };
        let t0 = Instant::now();
        let mut p = Pacer::default();
        run(&mut p, t0, pacing, 2);
        let due = p.ready_at(MTU, pacing.rate).unwrap();
        assert_eq!(due - t0, Duration::from_millis(1));
        // The timer fires 1.5 ms late: the datagram due plus the 1.5 ms of
        // tokens (3000 bytes), where a bucket holds 2400.
        let late = due + Duration::from_micros(1500);
        assert_eq!(p.available(late, pacing, MTU), MTU + 1800);
        // Only a late wake-up for a release time counts: a long idle
        // period fills one bucket.
        p.spend(MTU + 1800);
        assert_eq!(p.available(late + Duration::from_secs(1), pacing, MTU), 2 * MTU);
        // And the extra is one bucket at most.
        p.spend(2 * MTU);
        let due = p.ready_at(MTU, pacing.rate).unwrap();
        assert_eq!(p.available(due + Duration::from_secs(1), pacing, MTU), 4 * MTU);
    }

    #[test]
    fn the_burst_follows_the_draft_without_a_quantum() {
        // 1 ms at 100 Mbit/s = 12 500 bytes (§5.6.3), above 2 x MSS.
        let fast = PacingRate {
            rate: 12_500_000,
            quantum: None,
        };
        assert_eq!(fast.burst(MTU), 12_500);
        // At most 64 KBytes.
        let faster = PacingRate {
            rate: 10_000_000_000,
            quantum: None,
        };
        assert_eq!(faster.burst(MTU), 64 * 1024);
        // At low rates two full datagrams, however small the quantum.
        let slow = PacingRate {
            rate: 10_000,
            quantum: None,
        };
        assert_eq!(slow.burst(MTU), 2 * MTU);
        let tiny_quantum = PacingRate {
            rate: 10_000,
            quantum: Some(10),
        };
        assert_eq!(tiny_quantum.burst(MTU), 2 * MTU);
    }

    #[test]
    fn release_times_are_exact_at_odd_rates() {
        // 7 bytes per second: 1200 bytes take 171.428... s, rounded up to
        // the nanosecond; at that instant the datagram's tokens are there.
        let pacing = PacingRate { rate: 7, quantum: None };
        let t0 = Instant::now();
        let mut p = Pacer::default();
        let sent = run(&mut p, t0, pacing, 4);
        let gap = Duration::from_nanos((1200 * NANOS).div_ceil(7) as u64);
        assert_eq!(sent[2] - t0, gap);
        // The next gap is shorter by the tokens the rounding left over, never longer.
        assert!(sent[3] - sent[2] <= gap);
        assert!(sent[3] - sent[2] >= gap - Duration::from_nanos(1));
    }
}
