//! A set of byte ranges: which payload offsets a receiver has counted.

use std::collections::BTreeMap;
use std::ops::Range;

/// Disjoint, non-adjacent ranges of offsets, kept merged.
///
/// The receiver reads a stream out of order (RFC 9000 §2.2) and counts each
/// payload byte once, when it first arrives: the set says which bytes are
/// counted already, so a byte handed over twice is never counted twice.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct RangeSet {
    /// Start of each range to its end (exclusive).
    ranges: BTreeMap<u64, u64>,
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
        let (mut lo, mut hi) = (range.start, range.end);
        // Everything below `cursor` in `range` is accounted for.
        let mut cursor = range.start;
        if let Some((&s, &e)) = self.ranges.range(..=range.start).next_back()
            && e >= range.start
        {
            lo = s;
            hi = hi.max(e);
            cursor = cursor.max(e);
            self.ranges.remove(&s);
        }
        while let Some((&s, &e)) = self.ranges.range(range.start..=range.end).next() {
            if s > cursor {
                self.len += s - cursor;
                new(cursor..s);
            }
            cursor = cursor.max(e);
            hi = hi.max(e);
            self.ranges.remove(&s);
        }
        if cursor < range.end {
            self.len += range.end - cursor;
            new(cursor..range.end);
        }
        self.ranges.insert(lo, hi);
    }

    /// How many offsets the set holds.
    pub(super) fn len(&self) -> u64 {
        self.len
    }

    /// The end of the range that starts at 0 (0 if there is none): every
    /// offset below it is in the set.
    pub(super) fn prefix(&self) -> u64 {
        match self.ranges.first_key_value() {
            Some((0, &end)) => end,
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
        }
    }
}
