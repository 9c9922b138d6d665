//! Per-interval statistics and per-evaluation-slot success against a target.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tput_cc::Snapshot;

use crate::proto::Direction;

/// One reporting interval, as seen by the sender.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct IntervalStats {
    /// Start of the interval, seconds since the transfer began.
    pub start_secs: f64,
    /// End of the interval, seconds since the transfer began.
    pub end_secs: f64,
    /// Payload bytes handed to QUIC in the interval (sender) or received and verified (receiver).
    pub bytes: u64,
    /// `bytes * 8 / (end - start)`, bits per second.
    pub goodput_bps: f64,
    /// Congestion window at the end of the interval, bytes.
    pub cwnd_bytes: u64,
    /// Smoothed RTT at the end of the interval, milliseconds.
    pub srtt_ms: f64,
    /// Minimum RTT so far, milliseconds.
    pub min_rtt_ms: f64,
    /// Packets declared lost during the interval.
    pub lost_packets: u64,
    /// Congestion events (window reductions signalled) during the interval.
    pub congestion_events: u64,
    /// The controller's state at the end of the interval (sender side only).
    pub controller: Option<Snapshot>,
}

/// Throughput of one complete evaluation slot.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SlotStats {
    /// Slot number, from 0.
    pub index: u64,
    /// Start of the slot, seconds since the receiver saw the request.
    pub start_secs: f64,
    /// Payload bytes received in the slot.
    pub bytes: u64,
    /// Throughput over the slot, bits per second.
    pub throughput_bps: f64,
    /// Whether it reached the target.
    pub met: bool,
}

/// What the receiver measured; sent back to the sender after an upload.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReceiverReport {
    /// Payload bytes received and verified.
    pub bytes: u64,
    /// Seconds from the request to the last byte.
    pub duration_secs: f64,
    /// Payload bytes per reporting interval, measured on arrival.
    pub interval_bytes: Vec<u64>,
    /// Every complete evaluation slot (empty without a target).
    pub slots: Vec<SlotStats>,
    /// Fraction of complete slots that met the target, if there was a target
    /// and at least one complete slot.
    pub success_ratio: Option<f64>,
}

/// The result of one transfer, from the point of view of the node that ran it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransferOutcome {
    /// Which transfer (as returned when it was started; servers number them too).
    pub id: u64,
    /// Who sent the payload.
    pub direction: Direction,
    /// Whether this node sent the payload.
    pub local_sender: bool,
    /// The controller spec of this node's connection.
    pub cc: String,
    /// Payload bytes this node received and verified, or, as the sender, the
    /// bytes the receiver's report says it verified (without a report: the
    /// bytes written, which for a transfer for a duration may exceed what was
    /// sent before its time-up reset).
    pub bytes: u64,
    /// Seconds from connection start to the end of the transfer.
    pub elapsed_secs: f64,
    /// Sender-side interval records (empty on the receiving node).
    pub intervals: Vec<IntervalStats>,
    /// The receiver's measurements: the peer's report after an upload, this node's own when it received.
    pub receiver: Option<ReceiverReport>,
    /// Why the transfer failed, if it did.
    pub error: Option<String>,
}

impl TransferOutcome {
    /// Whether every byte arrived and verified and the connection ended cleanly.
    pub fn ok(&self) -> bool {
        self.error.is_none()
    }
}

/// Counts bytes into fixed-length time buckets from an origin.
#[derive(Debug, Clone)]
pub(crate) struct Buckets {
    origin: Instant,
    width: Duration,
    counts: Vec<u64>,
}

impl Buckets {
    pub(crate) fn new(origin: Instant, width: Duration) -> Self {
        Self {
            origin,
            width,
            counts: Vec::new(),
        }
    }

    pub(crate) fn add(&mut self, now: Instant, bytes: u64) {
        if self.width.is_zero() {
            return;
        }
        let i = (now.saturating_duration_since(self.origin).as_nanos() / self.width.as_nanos()) as usize;
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += bytes;
    }

    /// Buckets that ended at or before `end`; the rest are dropped.
    pub(crate) fn complete(&self, end: Instant) -> Vec<u64> {
        if self.width.is_zero() {
            return Vec::new();
        }
        let n = (end.saturating_duration_since(self.origin).as_nanos() / self.width.as_nanos()) as usize;
        let mut v = self.counts.clone();
        v.resize(n, 0);
        v
    }
}

/// The receiver's meter: interval and slot buckets from the request's arrival.
#[derive(Debug, Clone)]
pub(crate) struct ReceiveMeter {
    pub(crate) start: Instant,
    pub(crate) last: Instant,
    pub(crate) bytes: u64,
    intervals: Buckets,
    slots: Buckets,
    target_bps: u64,
}

impl ReceiveMeter {
    pub(crate) fn new(start: Instant, interval: Duration, eval_slot: Duration, target_bps: u64) -> Self {
        let slot = if target_bps > 0 { eval_slot } else { Duration::ZERO };
        Self {
            start,
            last: start,
            bytes: 0,
            intervals: Buckets::new(start, interval),
            slots: Buckets::new(start, slot),
            target_bps,
        }
    }

    pub(crate) fn add(&mut self, now: Instant, bytes: u64) {
        self.bytes += bytes;
        self.last = now;
        self.intervals.add(now, bytes);
        self.slots.add(now, bytes);
    }

    /// The report at `end`: complete slots only are judged.
    pub(crate) fn report(&self, end: Instant) -> ReceiverReport {
        let width = self.slots.width.as_secs_f64();
        let slots: Vec<SlotStats> = self
            .slots
            .complete(end)
            .into_iter()
            .enumerate()
            .map(|(i, bytes)| {
                let throughput_bps = bytes as f64 * 8.0 / width;
                SlotStats {
                    index: i as u64,
                    start_secs: i as f64 * width,
                    bytes,
                    throughput_bps,
                    met: throughput_bps >= self.target_bps as f64,
                }
            })
            .collect();
        let success_ratio =
            (!slots.is_empty()).then(|| slots.iter().filter(|s| s.met).count() as f64 / slots.len() as f64);
        let mut interval_bytes = self.intervals.complete(end);
        // The last, partial interval still counts its bytes.
        let counted: u64 = interval_bytes.iter().sum();
        if counted < self.bytes {
            interval_bytes.push(self.bytes - counted);
        }
        ReceiverReport {
            bytes: self.bytes,
            duration_secs: self.last.saturating_duration_since(self.start).as_secs_f64(),
            interval_bytes,
            slots,
            success_ratio,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_judged_only_when_complete() {
        let t0 = Instant::now();
        let mut m = ReceiveMeter::new(t0, Duration::from_millis(500), Duration::from_secs(1), 8_000_000);
        // 1 MB in slot 0 (exactly 8 Mbit/s: met), 0.5 MB in slot 1 (missed), some in slot 2 (incomplete).
        m.add(t0 + Duration::from_millis(100), 600_000);
        m.add(t0 + Duration::from_millis(900), 400_000);
        m.add(t0 + Duration::from_millis(1500), 500_000);
        m.add(t0 + Duration::from_millis(2100), 7);
        let r = m.report(t0 + Duration::from_millis(2500));
        assert_eq!(r.slots.len(), 2);
        assert!(r.slots[0].met && !r.slots[1].met);
        assert_eq!(r.slots[1].throughput_bps, 4_000_000.0);
        assert_eq!(r.success_ratio, Some(0.5));
        assert_eq!(r.bytes, 1_500_007);
        assert_eq!(r.interval_bytes, vec![600_000, 400_000, 0, 500_000, 7]);
        assert_eq!(r.interval_bytes.iter().sum::<u64>(), r.bytes);
    }

    #[test]
    fn no_target_no_slots() {
        let t0 = Instant::now();
        let mut m = ReceiveMeter::new(t0, Duration::from_secs(1), Duration::from_secs(1), 0);
        m.add(t0 + Duration::from_millis(1500), 10);
        let r = m.report(t0 + Duration::from_secs(3));
        assert!(r.slots.is_empty());
        assert_eq!(r.success_ratio, None);
    }
}
