//! CoDel, "Controlled Delay Active Queue Management", RFC 8289 (Nichols,
//! Jacobson, McGregor, Iyengar, 2018), following the pseudocode of its §5
//! and, for ECN, the reference implementation in Linux that RFC 8289 §6
//! points to (`include/net/codel_impl.h`): a marked packet is sent in
//! place of a drop, and ends the dropping loop.

use super::{DropCause, Fifo, Limits, Out, try_mark};
use crate::CodelConfig;
use crate::model::Frame;
use crate::time::duration_to_nanos;

/// CoDel's parameters in nanoseconds.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Params {
    pub target: u64,
    pub interval: u64,
    pub ecn: bool,
}

impl Params {
    pub fn new(target: std::time::Duration, interval: std::time::Duration, ecn: bool) -> Self {
        Params {
            target: duration_to_nanos(target),
            interval: duration_to_nanos(interval),
            ecn,
        }
    }
}

/// CoDel's per-queue state (RFC 8289 §5.1: `first_above_time_`,
/// `drop_next_`, `count_`, `lastcount_`, `dropping_`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Vars {
    /// When the sojourn time will have been above target for an interval
    /// (0: it is below target).
    first_above_time: u64,
    /// When the next drop is due while dropping.
    drop_next: u64,
    /// Drops (or marks) since the dropping state was entered.
    pub count: u32,
    lastcount: u32,
    pub dropping: bool,
}

/// RFC 8289 §5.5 `control_law`: `t + interval / sqrt(count)`. IEEE 754
/// square roots are correctly rounded, so the result is the same on every
/// platform.
#[inline]
pub(crate) fn control_law(t: u64, interval: u64, count: u32) -> u64 {
    t + (interval as f64 / (count.max(1) as f64).sqrt()) as u64
}

impl Vars {
    /// RFC 8289 §5.3 `dodequeue`: takes the head of `q` and says whether
    /// CoDel may drop it (the sojourn time has stayed above target for at
    /// least an interval). `maxpacket` is the largest packet seen: below one
    /// packet's worth of backlog CoDel never drops.
    #[inline]
    fn dodequeue<P>(&mut self, now: u64, p: &Params, q: &mut Fifo<P>, maxpacket: u64) -> (Option<Frame<P>>, bool) {
        let Some(f) = q.pop() else {
            self.first_above_time = 0;
            return (None, false);
        };
        let sojourn = now.saturating_sub(f.enqueued);
        if sojourn < p.target || q.bytes <= maxpacket {
            // Went below target: stay below for at least an interval.
            self.first_above_time = 0;
            return (Some(f), false);
        }
        let mut ok_to_drop = false;
        if self.first_above_time == 0 {
            self.first_above_time = now + p.interval;
        } else if now >= self.first_above_time {
            ok_to_drop = true;
        }
        (Some(f), ok_to_drop)
    }

    /// RFC 8289 §5.4 `dequeue`, with ECN: the next packet of `q` at `now`,
    /// after the drops CoDel decides.
    pub fn dequeue<P>(
        &mut self,
        now: u64,
        p: &Params,
        q: &mut Fifo<P>,
        maxpacket: u64,
        out: &mut impl Out<P>,
    ) -> Option<Frame<P>> {
        let (mut f, mut ok_to_drop) = self.dodequeue(now, p, q, maxpacket);
        let Some(mut pkt) = f.take() else {
            // An empty queue leaves the dropping state.
            self.dropping = false;
            return None;
        };
        if self.dropping {
            if !ok_to_drop {
                // Sojourn time below target: leave the dropping state.
                self.dropping = false;
            }
            // Time for the next drop (possibly several, RFC 8289 §5.4).
            while self.dropping && now >= self.drop_next {
                self.count = self.count.wrapping_add(1);
                if try_mark(p.ecn, &mut pkt, out) {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                    return Some(pkt);
                }
                out.dropped(pkt, DropCause::Aqm);
                (f, ok_to_drop) = self.dodequeue(now, p, q, maxpacket);
                match f.take() {
                    None => {
                        self.dropping = false;
                        return None;
                    }
                    Some(next) => pkt = next,
                }
                if !ok_to_drop {
                    self.dropping = false;
                } else {
                    self.drop_next = control_law(self.drop_next, p.interval, self.count);
                }
            }
        } else if ok_to_drop {
            // Enter the dropping state: drop (or mark) this packet.
            if !try_mark(p.ecn, &mut pkt, out) {
                out.dropped(pkt, DropCause::Aqm);
                let (next, _) = self.dodequeue(now, p, q, maxpacket);
                match next {
                    Some(n) => pkt = n,
                    None => {
                        // Nothing left to send; the state is still entered
                        // (RFC 8289 §5.4 sets `dropping_` regardless).
                        self.enter(now, p);
                        return None;
                    }
                }
            }
            self.enter(now, p);
        }
        Some(pkt)
    }

    /// The dropping state begins at `now` (RFC 8289 §5.4): if it was left
    /// only recently, resume near the old drop rate.
    fn enter(&mut self, now: u64, p: &Params) {
        self.dropping = true;
        let delta = self.count.wrapping_sub(self.lastcount);
        self.count = if delta > 1 && now.saturating_sub(self.drop_next) < 16 * p.interval {
            delta
        } else {
            1
        };
        self.lastcount = self.count;
        self.drop_next = control_law(now, p.interval, self.count);
    }
}

/// A single CoDel queue (RFC 8289) under the link's limit.
#[derive(Debug)]
pub(crate) struct Codel<P> {
    params: Params,
    vars: Vars,
    q: Fifo<P>,
    maxpacket: u64,
    limits: Limits,
}

impl<P> Codel<P> {
    pub fn new(c: &CodelConfig, limits: Limits) -> Self {
        Codel {
            params: Params::new(c.target, c.interval, c.ecn),
            vars: Vars::default(),
            q: Fifo::default(),
            maxpacket: 0,
            limits,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.q.q.is_empty()
    }

    pub fn front_wire(&self) -> Option<u64> {
        self.q.q.front().map(|f| f.wire)
    }

    /// RFC 8289 §5.2: time-stamp and enqueue; an arrival into a full queue is
    /// dropped (tail drop, as Linux's `codel` at its `limit`).
    pub fn enqueue(&mut self, now: u64, mut f: Frame<P>) -> Result<(), (Frame<P>, DropCause)> {
        if self.limits.exceeded(self.q.q.len() as u64 + 1, self.q.bytes + f.wire) {
            return Err((f, DropCause::Overflow));
        }
        self.maxpacket = self.maxpacket.max(f.wire);
        f.enqueued = now;
        self.q.push(f);
        Ok(())
    }

    pub fn dequeue(&mut self, now: u64, out: &mut impl Out<P>) -> Option<Frame<P>> {
        self.vars.dequeue(now, &self.params, &mut self.q, self.maxpacket, out)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::super::testutil::{Record, frame};
    use super::*;
    use crate::Ecn;

    const MS: u64 = 1_000_000;

    fn codel(ecn: bool) -> Codel<u32> {
        Codel::new(
            &CodelConfig::default().with_ecn(ecn),
            Limits {
                packets: 10_000,
                bytes: u64::MAX,
            },
        )
    }

    /// A link of one 1000-byte packet per ms fed two packets per ms: the
    /// queue (and sojourn time) grows without bound. Returns the times of
    /// CoDel's drops (or marks) over `until`.
    fn overload(ecn: Ecn, until: u64) -> (Vec<u64>, Record, u32) {
        let mut c = codel(ecn.is_ect());
        let mut rec = Record::default();
        let mut events = Vec::new();
        let mut item = 0;
        let mut t = 0;
        while t < until {
            for _ in 0..2 {
                c.enqueue(t, frame(item, 1000, 0, ecn, t)).unwrap();
                item += 1;
            }
            let (d0, m0) = (rec.dropped.len(), rec.marked);
            c.dequeue(t, &mut rec);
            if rec.dropped.len() > d0 || rec.marked > m0 {
                events.push(t);
            }
            t += MS;
        }
        (events, rec, c.vars.count)
    }

    #[test]
    fn starts_after_an_interval_above_target_and_spaces_drops_by_the_control_law() {
        let (times, rec, count) = overload(Ecn::NotEct, 1000 * MS);
        // The sojourn time passes 5 ms at about 5 ms (one packet in, one
        // extra queued per ms); the first drop comes one interval later.
        let first = times[0];
        assert!((100 * MS..=110 * MS).contains(&first), "first drop at {first}");
        assert!(rec.dropped.iter().all(|d| d.1 == DropCause::Aqm));
        assert_eq!(rec.marked, 0);
        // Drop k+1 follows drop k by interval / sqrt(k) (rounded to the
        // 1 ms dequeue grid).
        for (k, w) in times.windows(2).enumerate().take(20) {
            let expect = 100.0 / ((k + 1) as f64).sqrt();
            let gap = (w[1] - w[0]) as f64 / MS as f64;
            assert!((gap - expect).abs() <= 1.0, "gap {k}: {gap} ms, expected {expect}");
        }
        assert!(count as usize >= times.len().min(20));
    }

    #[test]
    fn ect_packets_are_marked_not_dropped() {
        let (times, rec, _) = overload(Ecn::Ect0, 1000 * MS);
        assert!(rec.dropped.is_empty());
        assert!(rec.marked > 10, "{} marks", rec.marked);
        assert_eq!(times.len() as u64, rec.marked);
        assert!((100 * MS..=110 * MS).contains(&times[0]));
        // Not-ECT packets are dropped even with ECN on.
        let mut c = codel(true);
        let mut rec = Record::default();
        for t in 0..300 {
            let now = t * MS;
            c.enqueue(now, frame(t as u32, 1000, 0, Ecn::NotEct, now)).unwrap();
            c.enqueue(now, frame(t as u32, 1000, 0, Ecn::NotEct, now)).unwrap();
            c.dequeue(now, &mut rec);
        }
        assert!(!rec.dropped.is_empty() && rec.marked == 0);
    }

    #[test]
    fn below_target_never_drops_and_leaves_dropping_state() {
        // One packet per ms in, one out: no standing queue.
        let mut c = codel(false);
        let mut rec = Record::default();
        for t in 0..1000 {
            let now = t * MS;
            c.enqueue(now, frame(t as u32, 1000, 0, Ecn::NotEct, now)).unwrap();
            assert_eq!(c.dequeue(now, &mut rec).map(|f| f.item), Some(t as u32));
        }
        assert!(rec.dropped.is_empty());
        // Full queue: the limit drops the arrival.
        let mut c = Codel::new(
            &CodelConfig::default().with_target(Duration::from_millis(1)),
            Limits {
                packets: 2,
                bytes: u64::MAX,
            },
        );
        c.enqueue(0, frame(0, 1000, 0, Ecn::NotEct, 0)).unwrap();
        c.enqueue(0, frame(1, 1000, 0, Ecn::NotEct, 0)).unwrap();
        assert_eq!(
            c.enqueue(0, frame(2, 1000, 0, Ecn::NotEct, 0)).unwrap_err().1,
            DropCause::Overflow
        );
    }

    #[test]
    fn control_law_is_interval_over_sqrt_count() {
        assert_eq!(control_law(0, 100 * MS, 1), 100 * MS);
        assert_eq!(control_law(10, 100 * MS, 4), 10 + 50 * MS);
    }
}
