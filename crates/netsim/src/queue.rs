//! The event queue: a 4-ary min-heap on (time, insertion sequence).
//!
//! A 4-ary heap has half the depth of a binary heap, and the four children
//! of a node share a cache line or two; popping (the simulator's hottest
//! operation) is markedly cheaper than with `std::collections::BinaryHeap`.

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

#[derive(Debug, Default)]
pub(crate) struct EventQueue {
    heap: Vec<Ev>,
}

const D: usize = 4;

impl EventQueue {
    pub fn with_capacity(n: usize) -> Self {
        EventQueue {
            heap: Vec::with_capacity(n),
        }
    }

    #[inline]
    pub fn len(&self) -> usize {
        self.heap.len()
    }

    #[inline]
    pub fn peek(&self) -> Option<&Ev> {
        self.heap.first()
    }

    #[inline]
    pub fn push(&mut self, ev: Ev) {
        let key = ev.key();
        let mut i = self.heap.len();
        self.heap.push(ev);
        while i > 0 {
            let parent = (i - 1) / D;
            if self.heap[parent].key() <= key {
                break;
            }
            self.heap[i] = self.heap[parent];
            i = parent;
        }
        self.heap[i] = ev;
    }

    #[inline]
    pub fn pop(&mut self) -> Option<Ev> {
        let last = self.heap.pop()?;
        if self.heap.is_empty() {
            return Some(last);
        }
        let top = self.heap[0];
        // Sift `last` down from the root.
        let n = self.heap.len();
        let key = last.key();
        let mut i = 0;
        loop {
            let first = i * D + 1;
            if first >= n {
                break;
            }
            let (best, best_key) = if first + D <= n {
                // All four children present: a branch-light tournament.
                let c = &self.heap[first..first + D];
                let (k0, k1, k2, k3) = (c[0].key(), c[1].key(), c[2].key(), c[3].key());
                let (a, ka) = if k1 < k0 { (1, k1) } else { (0, k0) };
                let (b, kb) = if k3 < k2 { (3, k3) } else { (2, k2) };
                if kb < ka { (first + b, kb) } else { (first + a, ka) }
            } else {
                let mut best = first;
                let mut best_key = self.heap[first].key();
                for c in first + 1..n {
                    let k = self.heap[c].key();
                    if k < best_key {
                        best = c;
                        best_key = k;
                    }
                }
                (best, best_key)
            };
            if key <= best_key {
                break;
            }
            self.heap[i] = self.heap[best];
            i = best;
        }
        self.heap[i] = last;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Rng;

    #[test]
    fn pops_in_time_then_sequence_order() {
        let mut q = EventQueue::with_capacity(4);
        let mut r = Rng::new(3);
        let mut seq = 0;
        let mut expect = Vec::new();
        for round in 0..50 {
            for _ in 0..(round % 7 + 1) {
                seq += 1;
                let time = 1000 * round + r.below(2000);
                q.push(Ev {
                    time,
                    seq,
                    id: 0,
                    aux: 0,
                });
                expect.push((time, seq));
            }
            // Interleave pops with pushes.
            if round % 3 == 0 {
                expect.sort_unstable();
                let e = q.pop().unwrap();
                assert_eq!((e.time, e.seq), expect.remove(0));
            }
        }
        expect.sort_unstable();
        let mut got = Vec::new();
        while let Some(e) = q.pop() {
            got.push((e.time, e.seq));
        }
        assert_eq!(got, expect);
        assert_eq!(q.len(), 0);
    }
}
