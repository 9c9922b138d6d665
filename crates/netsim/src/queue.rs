//! The event queue: events in (time, insertion sequence) order.

#[derive(Clone, Copy, Debug)]
pub(crate) struct Ev {
    pub time: u64,
    /// Insertion sequence number; unique, so it breaks every tie.
    pub seq: u64,
    pub id: u32,
    /// Low 8 bits: the event kind; the rest: a kind-specific argument.
    pub aux: u32,
}

impl Ev {
    #[inline(always)]
    fn key(&self) -> u128 {
        (self.time as u128) << 64 | self.seq as u128
    }
}

/// A radix heap (Ahuja, Mehlhorn, Orlin, Tarjan, "Faster algorithms for
/// the shortest path problem", J. ACM 37(2), 1990) on the 128-bit key
/// `time << 64 | seq`.
///
/// A discrete-event simulation only ever schedules at or after the event
/// it is processing, and every key is unique, so the keys handed to the
/// queue never fall below the last one taken out: the condition under which
/// a radix heap is an exact priority queue. An event waits in the bucket of
/// the highest bit in which its key differs from that last key; taking the
/// minimum out of the lowest non-empty bucket and spreading the rest of
/// that bucket over lower buckets moves each event at most once per bit, and
/// in practice a few times in all. Against the 4-ary heap it replaced, a
/// push is a bit scan and a vector push instead of a sift-up, and the pops
/// touch far less memory; the order is the same, event for event (the trace
/// hashes of every shipped scenario did not change).
#[derive(Debug)]
pub(crate) struct EventQueue {
    /// Bucket `b` holds the events whose key first differs from `last` in
    /// bit `b` (counting from the least significant). A fixed-size array:
    /// `bucket_of` is at most 127, so indexing it needs no bounds check.
    buckets: Box<[Vec<Ev>; 128]>,
    /// Bit `b` is set when bucket `b` is not empty.
    occupied: u128,
    /// The key of the last event taken out (0 before the first).
    last: u128,
    len: usize,
}

impl Default for EventQueue {
    fn default() -> Self {
        Self::with_capacity(0)
    }
}

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        let mut buckets: Box<[Vec<Ev>; 128]> = Box::new(std::array::from_fn(|_| Vec::new()));
        // Events scheduled within a few microseconds of each other meet in
        // the low time buckets; give the usual first ones some room.
        for b in buckets.iter_mut().skip(64).take(32) {
            b.reserve(n / 32);
        }
        EventQueue {
            buckets,
            occupied: 0,
            last: 0,
            len: 0,
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.len
    }

    #[inline(always)]
    fn bucket_of(&self, key: u128) -> usize {
        // `key > last` for every queued key, so the difference has a set bit.
        (127 - (key ^ self.last).leading_zeros() as usize) & 127
    }

    /// The earliest event, without taking it out (a scan of one bucket).
    pub fn peek(&self) -> Option<&Ev> {
        if self.occupied == 0 {
            return None;
        }
        let b = self.occupied.trailing_zeros() as usize & 127;
        self.buckets[b].iter().min_by_key(|e| e.key())
    }

    #[inline]
    pub fn push(&mut self, ev: Ev) {
        let key = ev.key();
        debug_assert!(key > self.last, "an event scheduled before the last one taken out");
        let b = self.bucket_of(key);
        self.buckets[b].push(ev);
        self.occupied |= 1 << b;
        self.len += 1;
    }

    /// Takes out the earliest event if it is due at or before `time`.
    #[inline]
    pub fn pop_due(&mut self, time: u64) -> Option<Ev> {
        if self.occupied == 0 {
            return None;
        }
        let b = self.occupied.trailing_zeros() as usize & 127;
        let bucket = &mut self.buckets[b];
        let mut at = 0;
        let mut min = bucket[0].key();
        for (i, e) in bucket.iter().enumerate().skip(1) {
            let k = e.key();
            if k < min {
                min = k;
                at = i;
            }
        }
        if (min >> 64) as u64 > time {
            return None;
        }
        let ev = bucket.swap_remove(at);
        self.len -= 1;
        self.last = min;
        if bucket.is_empty() {
            self.occupied &= !(1 << b);
            return Some(ev);
        }
        // Spread the rest of the bucket over lower buckets: each of them now
        // first differs from the new `last` below bit `b`.
        let mut rest = std::mem::take(&mut self.buckets[b]);
        self.occupied &= !(1 << b);
        for e in rest.drain(..) {
            let to = self.bucket_of(e.key());
            self.buckets[to].push(e);
            self.occupied |= 1 << to;
        }
        self.buckets[b] = rest;
        Some(ev)
    }

    /// Takes out the earliest event.
    #[cfg(test)]
    pub fn pop(&mut self) -> Option<Ev> {
        self.pop_due(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    fn ev(time: u64, seq: u64) -> Ev {
        Ev {
            time,
            seq,
            id: seq as u32,
            aux: 0,
        }
    }

    /// Used as a simulation uses it (nothing scheduled before the event
    /// being processed), the queue gives the same order as a binary heap on
    /// (time, seq): over many random schedules, with ties in time, bursts,
    /// far-future events and `pop_due` bounds that stop short.
    #[test]
    fn pops_in_time_then_sequence_order() {
        for seed in 0..40 {
            let mut r = Rng::new(seed);
            let mut q = EventQueue::with_capacity(64);
            let mut reference = BinaryHeap::new();
            let mut seq = 0;
            let mut now = 0;
            for step in 0..3000 {
                for _ in 0..r.below(4) {
                    seq += 1;
                    let delay = match r.below(10) {
                        0 => 0,
                        1 => r.below(1 << 40),
                        2..=4 => r.below(1000),
                        _ => r.below(10_000_000),
                    };
                    q.push(ev(now + delay, seq));
                    reference.push(Reverse((now + delay, seq)));
                }
                assert_eq!(q.len(), reference.len());
                assert_eq!(q.peek().map(|e| (e.time, e.seq)), reference.peek().map(|r| r.0));
                // Sometimes a bound before the next event: nothing comes out.
                let bound = if step % 7 == 0 { now } else { u64::MAX };
                let expect = reference.peek().filter(|r| r.0.0 <= bound).map(|r| r.0);
                let got = q.pop_due(bound).map(|e| (e.time, e.seq));
                assert_eq!(got, expect, "seed {seed} step {step}");
                if let Some((t, _)) = got {
                    reference.pop();
                    now = t;
                }
            }
            let mut rest = Vec::new();
            while let Some(e) = q.pop() {
                rest.push((e.time, e.seq));
            }
            let expect: Vec<(u64, u64)> = std::iter::from_fn(|| reference.pop().map(|r| r.0)).collect();
            assert_eq!(rest, expect);
            assert_eq!(q.len(), 0);
            assert!(q.peek().is_none());
        }
    }
}
