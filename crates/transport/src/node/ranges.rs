//! A set of byte ranges: which payload offsets a receiver has counted.

use std::ops::Range;

/// Disjoint, non-adjacent ranges of offsets, kept merged.
///
/// The receiver reads a stream out of order (RFC 9000 §2.2) and counts each
/// payload byte once, when it first arrives: the set says which bytes are
/// counted already, so a byte handed over twice is never counted twice.
///
/// The ranges sit in a vector sorted by start: a stream's holes are few
/// (lost packets not yet repaired), so finding the ranges a chunk meets is
/// a short binary search, and in-order data replaces only the last range
/// (no node to remove and insert again, as a map cost on every chunk).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct RangeSet {
    /// `(start, end)` of each range (end exclusive), in order of start.
    ranges: Vec<(u64, u64)>,
    /// Offsets in the set.
    len: u64,
}

impl RangeSet {
    /// Add `range`; `new` is called, in order, with every part of it that
    /// was not in the set before.
    pub(super) fn insert(&mut self, range: Range<u64>, mut new: impl FnMut(Range<u64>)) {
        if range.is_empty() {
            return;
        }
        let (start, end) = (range.start, range.end);
        // The ranges that overlap or touch `range`: `i..j` (ends are in
        // order too, the ranges being disjoint).
        let i = self.ranges.partition_point(|&(_, e)| e < start);
        let j = self.ranges.partition_point(|&(s, _)| s <= end);
        // Everything below `cursor` in `range` is accounted for.
        let mut cursor = start;
        let (mut lo, mut hi) = (start, end);
        for &(s, e) in &self.ranges[i..j] {
            if s > cursor {
                self.len += s - cursor;
                new(cursor..s);
            }
            cursor = cursor.max(e);
            lo = lo.min(s);
            hi = hi.max(e);
        }
        if cursor < end {
            self.len += end - cursor;
            new(cursor..end);
        }
        self.ranges.splice(i..j, [(lo, hi)]);
    }

    /// How many offsets the set holds.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// The end of the range that starts at 0 (0 if there is none): every
    /// offset below it is in the set.
    pub(super) fn prefix(&self) -> u64 {
        match self.ranges.first() {
            Some(&(0, end)) => end,
            _ => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn add(set: &mut RangeSet, r: Range<u64>) -> Vec<Range<u64>> {
        let mut new = Vec::new();
        set.insert(r, |n| new.push(n));
        new
    }

    #[test]
    fn a_byte_counts_once_whatever_the_order_and_overlap() {
        let mut s = RangeSet::default();
        assert_eq!(add(&mut s, 10..20), vec![10..20]);
        assert_eq!(add(&mut s, 10..20), Vec::<Range<u64>>::new());
        assert_eq!(add(&mut s, 30..40), vec![30..40]);
        assert_eq!(s.prefix(), 0);
        // Spans both ranges and the holes around them.
        assert_eq!(add(&mut s, 5..45), vec![5..10, 20..30, 40..45]);
        assert_eq!(s.len(), 40);
        assert_eq!(add(&mut s, 0..5), vec![0..5]);
        assert_eq!(s.prefix(), 45);
        assert_eq!(s.ranges.len(), 1);
        // Adjacent ranges merge; an empty range changes nothing.
        assert_eq!(add(&mut s, 45..50), vec![45..50]);
        assert_eq!(add(&mut s, 60..60), Vec::<Range<u64>>::new());
        assert_eq!(s.ranges.len(), 1);
        assert_eq!((s.len(), s.prefix()), (50, 50));
        // Inside one range.
        assert_eq!(add(&mut s, 12..13), Vec::<Range<u64>>::new());
    }

    #[test]
    fn the_count_matches_a_byte_map_on_random_ranges() {
        let mut s = RangeSet::default();
        let mut seen = vec![false; 4096];
        let mut x = 0x1234_5678_9abc_def0_u64;
        for _ in 0..2000 {
            x = crate::pattern::splitmix64(x);
            let start = x % 4000;
            let end = start + (x >> 32) % 96;
            let mut counted = 0;
            s.insert(start..end, |n| {
                for i in n.clone() {
                    assert!(!seen[i as usize], "{i} counted twice");
                    seen[i as usize] = true;
                }
                counted += n.end - n.start;
            });
            assert!(counted <= end - start);
            assert_eq!(s.len(), seen.iter().filter(|&&b| b).count() as u64);
            assert_eq!(s.prefix(), seen.iter().take_while(|&&b| b).count() as u64);
            assert_merged(&s);
        }
    }

    /// The ranges stay sorted, disjoint and apart (adjacent ones merged).
    fn assert_merged(s: &RangeSet) {
        for w in s.ranges.windows(2) {
            assert!(w[0].0 < w[0].1 && w[0].1 < w[1].0, "not merged: {:?}", s.ranges);
        }
    }

    /// A stream as a receiver sees it: chunks mostly in order, some lost and
    /// repaired later (holes behind the last range, filled in any order),
    /// some duplicated, some reaching past the end: what is counted agrees
    /// with a byte map.
    #[test]
    fn in_order_growth_with_repaired_holes_matches_a_byte_map() {
        let mut s = RangeSet::default();
        let mut seen = vec![false; 64 * 1024];
        let mut lost: Vec<u64> = Vec::new();
        let mut x = 0x0bad_cafe_u64;
        let mut add_counted = |s: &mut RangeSet, r: Range<u64>| {
            s.insert(r, |n| {
                for i in n {
                    assert!(!seen[i as usize], "{i} counted twice");
                    seen[i as usize] = true;
                }
            });
        };
        for k in 0..50u64 {
            x = crate::pattern::splitmix64(x);
            let at = k * 1200;
            match x % 8 {
                0 => lost.push(at),
                1 if !lost.is_empty() => {
                    let r = lost.remove((x >> 8) as usize % lost.len());
                    add_counted(&mut s, r..r + 1200);
                    add_counted(&mut s, at..at + 1200);
                }
                2 => {
                    add_counted(&mut s, at..at + 1200);
                    add_counted(&mut s, at + 600..at + 1800);
                }
                _ => add_counted(&mut s, at..at + 1200),
            }
            assert_merged(&s);
        }
        for r in lost.drain(..).rev() {
            add_counted(&mut s, r..r + 1200);
            assert_merged(&s);
        }
        // Past every chunk (a duplicate may have reached 600 bytes beyond).
        add_counted(&mut s, 0..61_000);
        assert_eq!(s.ranges, vec![(0, 61_000)]);
        assert_eq!((s.len(), s.prefix()), (61_000, 61_000));
    }
}
