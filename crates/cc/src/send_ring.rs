//! The per-send delivery state of draft-ietf-ccwg-bbr-06 §4.1.2.1.2
//! (`P.delivered`, `P.delivered_time`, `P.first_send_time`) and the one
//! bounded ring, ordered by send time, that keeps it until the data is
//! acknowledged: the [`DeliveryRateSampler`](crate::DeliveryRateSampler)
//! (and with it BBR) and the [`InlineEstimator`](crate::InlineEstimator)
//! both take their delivery-rate samples from it.

use std::collections::VecDeque;
use std::time::Instant;

/// The connection's delivery state when data was sent (§4.1.2.1.2 `P.*`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct SendRecord {
    /// `P.send_time`: the first send made under this state.
    pub(crate) send_time: Instant,
    /// `P.delivered`: bytes delivered when it was sent.
    pub(crate) delivered: u64,
    /// `P.delivered_time`.
    pub(crate) delivered_time: Instant,
    /// `P.first_send_time`.
    pub(crate) first_send_time: Instant,
}

/// A record the ring can hold: a [`SendRecord`] and whatever its owner adds.
pub(crate) trait Sent: Copy {
    /// The delivery state at send time.
    fn record(&self) -> &SendRecord;
}

impl Sent for SendRecord {
    #[inline]
    fn record(&self) -> &SendRecord {
        self
    }
}

/// Send records, oldest first, in send order, at most `limit` of them.
///
/// What happens at the limit is the owner's choice: refuse new records
/// ([`is_full`](Self::is_full)) or drop the oldest ([`push`](Self::push)
/// returns it).
#[derive(Debug)]
pub(crate) struct SendRing<R> {
    records: VecDeque<R>,
    limit: usize,
}

impl<R: Clone> Clone for SendRing<R> {
    /// Keeps the storage allocated as the original has it, so that a clone
    /// does not allocate on its first sends either.
    fn clone(&self) -> Self {
        let mut records = VecDeque::with_capacity(self.records.capacity());
        records.extend(self.records.iter().cloned());
        Self {
            records,
            limit: self.limit,
        }
    }
}

impl<R: Sent> SendRing<R> {
    /// An empty ring of at most `limit` records, with storage for `reserve`
    /// of them allocated now.
    pub(crate) fn new(limit: usize, reserve: usize) -> Self {
        Self {
            records: VecDeque::with_capacity(reserve.min(limit)),
            limit,
        }
    }

    /// Records held.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.records.len()
    }

    /// No record held.
    #[inline]
    pub(crate) fn is_empty(&self) -> bool {
        self.records.is_empty()
    }

    /// As many records as the limit.
    #[inline]
    pub(crate) fn is_full(&self) -> bool {
        self.records.len() >= self.limit
    }

    /// Append the newest record; beyond the limit the oldest is dropped and
    /// returned.
    #[inline]
    pub(crate) fn push(&mut self, record: R) -> Option<R> {
        self.records.push_back(record);
        if self.records.len() > self.limit {
            self.records.pop_front()
        } else {
            None
        }
    }

    /// The records, oldest first.
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = &R> {
        self.records.iter()
    }

    /// The oldest record.
    #[cfg(test)]
    pub(crate) fn oldest(&self) -> Option<&R> {
        self.records.front()
    }

    /// The oldest record, to change.
    #[inline]
    pub(crate) fn oldest_mut(&mut self) -> Option<&mut R> {
        self.records.front_mut()
    }

    /// Drop the oldest record.
    #[inline]
    pub(crate) fn pop_oldest(&mut self) -> Option<R> {
        self.records.pop_front()
    }

    /// The newest record, to change.
    #[inline]
    pub(crate) fn newest_mut(&mut self) -> Option<&mut R> {
        self.records.back_mut()
    }

    /// The newest record.
    #[inline]
    pub(crate) fn newest(&self) -> Option<&R> {
        self.records.back()
    }

    /// The index of the record sent at exactly `sent`. ACKs come mostly in
    /// send order, so the oldest record is tried first, then a binary search
    /// (the records are in send order).
    #[inline]
    pub(crate) fn position(&self, sent: Instant) -> Option<usize> {
        match self.records.front() {
            Some(r) if r.record().send_time == sent => Some(0),
            _ => self.records.binary_search_by(|r| r.record().send_time.cmp(&sent)).ok(),
        }
    }

    /// The record at `index`.
    #[inline]
    pub(crate) fn get_mut(&mut self, index: usize) -> Option<&mut R> {
        self.records.get_mut(index)
    }

    /// Remove the record at `index`.
    #[inline]
    pub(crate) fn remove(&mut self, index: usize) -> Option<R> {
        self.records.remove(index)
    }

    /// The latest record sent at or before `sent`, after dropping the older
    /// ones: for a sender whose ACKs come in send order, no later ACK can
    /// need them. `None` when every record is younger than `sent`.
    #[inline]
    pub(crate) fn latest_at_or_before(&mut self, sent: Instant) -> Option<&R> {
        while self.records.len() >= 2 && self.records[1].record().send_time <= sent {
            self.records.pop_front();
        }
        self.records.front().filter(|r| r.record().send_time <= sent)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn at(t0: Instant, ms: u64) -> SendRecord {
        let t = t0 + Duration::from_millis(ms);
        SendRecord {
            send_time: t,
            delivered: ms,
            delivered_time: t,
            first_send_time: t,
        }
    }

    #[test]
    fn finds_records_by_send_time_and_drops_the_oldest_beyond_the_limit() {
        let t0 = Instant::now();
        let mut ring = SendRing::new(3, 3);
        for ms in [0, 10, 20] {
            assert!(ring.push(at(t0, ms)).is_none());
        }
        assert!(ring.is_full());
        assert_eq!(ring.position(t0 + Duration::from_millis(20)), Some(2));
        assert_eq!(ring.position(t0 + Duration::from_millis(15)), None);
        let dropped = ring.push(at(t0, 30)).expect("over the limit");
        assert_eq!(dropped.delivered, 0);
        assert_eq!(ring.len(), 3);
        assert_eq!(ring.oldest().map(|r| r.delivered), Some(10));
        assert_eq!(ring.newest().map(|r| r.delivered), Some(30));
        assert_eq!(ring.position(t0 + Duration::from_millis(10)), Some(0));
    }

    #[test]
    fn latest_at_or_before_discards_what_no_later_ack_needs() {
        let t0 = Instant::now();
        let mut ring = SendRing::new(8, 0);
        for ms in [0, 10, 20, 30] {
            ring.push(at(t0, ms));
        }
        assert!(ring.latest_at_or_before(t0 - Duration::from_millis(1)).is_none());
        let r = ring.latest_at_or_before(t0 + Duration::from_millis(25)).copied();
        assert_eq!(r.map(|r| r.delivered), Some(20));
        assert_eq!(ring.len(), 2, "the records of 0 and 10 ms are gone");
        let clone = ring.clone();
        assert_eq!(clone.len(), 2);
    }
}
