//! Per-interval statistics and per-evaluation-slot success against a target.
//!
//! The records here ([`IntervalStats`], [`SlotStats`], [`ReceiverReport`],
//! [`SenderReport`], [`TransferOutcome`]) are meant for CSV columns and JSON
//! (the protocol's report frames, `tputctl --json`): a field that holds a
//! number of some unit carries the unit in its name (`_secs`: seconds,
//! `_ms`: milliseconds, `_bps`: bits per second, `_bytes`: bytes), so that
//! the column says what it holds. They are `#[non_exhaustive]`: a field may
//! be added in a minor release; outside this crate start from `default()`
//! (or [`TransferOutcome::new`]) and set the fields.

use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tput_cc::Snapshot;
use tput_cc::units::Rate;

use crate::failure::TransferError;
use crate::proto::Direction;

/// One reporting interval of the sender, with the payload the receiver got in it.
///
/// The sender cuts time into intervals of the requested length from the
/// moment it starts sending (`start_secs` and `end_secs` count from there);
/// the receiver cuts its own from the moment it has the request: the server
/// when the request arrives (upload), the client when it sends it
/// (download). Record `i` pairs the sender's interval `i` (its window,
/// RTT, losses, controller state) with the receiver's interval `i` (`bytes`).
/// The receiver's intervals start one one-way delay after the sender's for
/// an upload, so they hold what the sender sent in the same interval, give or
/// take queueing; for a download they start one one-way delay before the
/// sender's, so they hold what the sender sent one RTT earlier.
///
/// A record is complete, and reported, once the receiver's count for its
/// interval has arrived: about one RTT after the interval ends. The last
/// record ends when sending ends and waits for the receiver's report.
///
/// A CSV/JSON record: unit suffixes name the units (see the module
/// documentation); [`Default`] is an empty interval at 0 s.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct IntervalStats {
    /// Start of the interval, seconds since the sender began sending.
    pub start_secs: f64,
    /// End of the interval, seconds since the sender began sending.
    pub end_secs: f64,
    /// New payload bytes that arrived at the receiver, and were verified,
    /// in its interval of the same number: each byte counts once, when it
    /// first arrives, whether or not an earlier byte is still missing (a
    /// retransmission that fills a hole counts its own bytes, not those
    /// held behind it), so no interval shows more than the path delivered
    /// in it. The last record also counts every later arrival, so the
    /// records add up to the receiver's total.
    pub bytes: u64,
    /// `bytes * 8 / (end_secs - start_secs)`, bits per second.
    pub goodput_bps: f64,
    /// Payload bytes the sender wrote into QUIC's stream in the interval
    /// (QUIC buffers up to a stream window of them, so this is bursty).
    pub written_bytes: u64,
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
    /// The sending controller's state at the end of the interval.
    pub controller: Option<Snapshot>,
}

impl IntervalStats {
    /// Set `bytes` and the goodput it gives over the interval.
    pub(crate) fn deliver(&mut self, bytes: u64) {
        self.bytes = bytes;
        let secs = self.end_secs - self.start_secs;
        self.goodput_bps = if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 };
    }
}

/// Throughput of one complete evaluation slot (a CSV/JSON record: unit
/// suffixes name the units).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
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

impl SlotStats {
    /// Judge consecutive complete slots of `width` holding `bytes[i]` bytes
    /// each against `target`; returns the slots and the fraction that
    /// met the target (`None` without slots).
    pub fn judge(bytes: &[u64], width: Duration, target: Rate) -> (Vec<SlotStats>, Option<f64>) {
        let target_bps = target.bits_per_sec() as f64;
        let w = width.as_secs_f64();
        let slots: Vec<SlotStats> = bytes
            .iter()
            .enumerate()
            .map(|(i, &bytes)| {
                let throughput_bps = bytes as f64 * 8.0 / w;
                SlotStats {
                    index: i as u64,
                    start_secs: i as f64 * w,
                    bytes,
                    throughput_bps,
                    met: throughput_bps >= target_bps,
                }
            })
            .collect();
        let ratio = (!slots.is_empty()).then(|| slots.iter().filter(|s| s.met).count() as f64 / slots.len() as f64);
        (slots, ratio)
    }
}

/// What the receiver measured; sent back to the sender after an upload (a
/// JSON record: unit suffixes name the units).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct ReceiverReport {
    /// Payload bytes received and verified.
    pub bytes: u64,
    /// Seconds from the request to the last byte.
    pub duration_secs: f64,
    /// New payload bytes per reporting interval, counted at their first
    /// arrival (out-of-order arrivals included; see [`IntervalStats::bytes`]).
    pub interval_bytes: Vec<u64>,
    /// Every complete evaluation slot (empty without a target).
    pub slots: Vec<SlotStats>,
    /// Fraction of complete slots that met the target, if there was a target
    /// and at least one complete slot.
    pub success_ratio: Option<f64>,
    /// CPU seconds (user and system) the receiver's process used from the
    /// request to this report, as iperf3 reports them; `None` where the node
    /// has no CPU clock (the simulator). The whole process counts, so parallel
    /// transfers each see the total.
    pub cpu_secs: Option<f64>,
}

/// What the sender says about itself (a JSON record: unit suffixes name
/// the units).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct SenderReport {
    /// Spec of the controller that sent the payload.
    pub cc: String,
    /// Payload bytes written into QUIC's stream (for a transfer for a
    /// duration, more than were sent before the time-up reset).
    pub written_bytes: u64,
    /// CPU seconds (user and system) the sender's process used from the
    /// request to this report; `None` without a CPU clock.
    pub cpu_secs: Option<f64>,
}

/// The result of one transfer, from the point of view of the node that ran it.
///
/// A JSON record (`tputctl --json`): unit suffixes name the units, and
/// [`error`](Self::error) is written as its one-line text (or `null`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[non_exhaustive]
pub struct TransferOutcome {
    /// Which transfer (as returned when it was started; servers number them too).
    pub id: u64,
    /// Who sent the payload.
    pub direction: Direction,
    /// Whether this node sent the payload.
    pub local_sender: bool,
    /// Spec of the controller that sends the payload: this node's for an
    /// upload's client and a download's server, the peer's otherwise (as the
    /// request named it, or as the sender's report confirms it).
    pub cc: String,
    /// Payload bytes this node received and verified, or, as the sender, the
    /// bytes the receiver's report says it verified (without a report: the
    /// bytes written, which for a transfer for a duration may exceed what was
    /// sent before its time-up reset).
    pub bytes: u64,
    /// Seconds from connection start to the end of the transfer.
    pub elapsed_secs: f64,
    /// The sender's interval records, on both ends of a download (the server
    /// sends them to the client) and on the client of an upload; empty on the
    /// server of an upload.
    pub intervals: Vec<IntervalStats>,
    /// The receiver's measurements: the peer's report when this node sent,
    /// this node's own when it received.
    pub receiver: Option<ReceiverReport>,
    /// The sender's report: this node's own when it sent, the server's on
    /// the client of a download; `None` on the server of an upload.
    pub sender: Option<SenderReport>,
    /// CPU seconds (user and system) this node's process used during the
    /// transfer (from the request to the end); `None` without a CPU clock.
    pub cpu_secs: Option<f64>,
    /// The largest UDP payload, bytes, this node's path MTU discovery had
    /// validated toward the peer when the transfer ended (quinn-proto's
    /// `current_mtu`; [`NodeConfig::max_mtu`](crate::NodeConfig::max_mtu)
    /// bounds it).
    pub path_mtu: u16,
    /// Why the transfer failed, if it did (in JSON: its text).
    #[serde(serialize_with = "error_text")]
    pub error: Option<TransferError>,
}

/// A [`TransferError`] as its one-line text in JSON.
fn error_text<S: serde::Serializer>(error: &Option<TransferError>, s: S) -> Result<S::Ok, S::Error> {
    match error {
        Some(e) => s.collect_str(e),
        None => s.serialize_none(),
    }
}

impl TransferOutcome {
    /// The outcome of transfer `id` with no bytes, records, reports or
    /// error yet, after no time, on a path of QUIC's minimum MTU (1200
    /// bytes); set the other fields as needed.
    pub fn new(id: u64, direction: Direction, local_sender: bool, cc: impl Into<String>) -> Self {
        Self {
            id,
            direction,
            local_sender,
            cc: cc.into(),
            bytes: 0,
            elapsed_secs: 0.0,
            intervals: Vec::new(),
            receiver: None,
            sender: None,
            cpu_secs: None,
            path_mtu: 1200,
            error: None,
        }
    }

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
    target: Rate,
}

impl ReceiveMeter {
    /// `target`: `None` (or a rate of zero) judges no slots.
    pub(crate) fn new(start: Instant, interval: Duration, eval_slot: Duration, target: Option<Rate>) -> Self {
        let target = target.unwrap_or(Rate::from_bits_per_sec(0));
        let slot = if target.bits_per_sec() > 0 {
            eval_slot
        } else {
            Duration::ZERO
        };
        Self {
            start,
            last: start,
            bytes: 0,
            intervals: Buckets::new(start, interval),
            slots: Buckets::new(start, slot),
            target,
        }
    }

    /// Length of a reporting interval (zero: none).
    pub(crate) fn interval(&self) -> Duration {
        self.intervals.width
    }

    /// Bytes of reporting interval `i` so far (final once it has ended).
    pub(crate) fn interval_bytes(&self, i: usize) -> u64 {
        self.intervals.counts.get(i).copied().unwrap_or(0)
    }

    pub(crate) fn add(&mut self, now: Instant, bytes: u64) {
        self.bytes += bytes;
        self.last = now;
        self.intervals.add(now, bytes);
        self.slots.add(now, bytes);
    }

    /// The report at `end`: complete slots only are judged.
    pub(crate) fn report(&self, end: Instant, cpu_secs: Option<f64>) -> ReceiverReport {
        let (slots, success_ratio) = SlotStats::judge(&self.slots.complete(end), self.slots.width, self.target);
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
            cpu_secs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_are_judged_only_when_complete() {
        let t0 = Instant::now();
        let mut m = ReceiveMeter::new(
            t0,
            Duration::from_millis(500),
            Duration::from_secs(1),
            Some(Rate::from_bits_per_sec(8_000_000)),
        );
        // 1 MB in slot 0 (exactly 8 Mbit/s: met), 0.5 MB in slot 1 (missed), some in slot 2 (incomplete).
        m.add(t0 + Duration::from_millis(100), 600_000);
        m.add(t0 + Duration::from_millis(900), 400_000);
        m.add(t0 + Duration::from_millis(1500), 500_000);
        m.add(t0 + Duration::from_millis(2100), 7);
        let r = m.report(t0 + Duration::from_millis(2500), None);
        assert_eq!(r.slots.len(), 2);
        assert!(r.slots[0].met && !r.slots[1].met);
        assert_eq!(r.slots[1].throughput_bps, 4_000_000.0);
        assert_eq!(r.success_ratio, Some(0.5));
        assert_eq!(r.bytes, 1_500_007);
        assert_eq!(r.interval_bytes, vec![600_000, 400_000, 0, 500_000, 7]);
        assert_eq!(r.interval_bytes.iter().sum::<u64>(), r.bytes);
        assert_eq!(m.interval_bytes(3), 500_000);
        assert_eq!(m.interval_bytes(9), 0);
    }

    #[test]
    fn no_target_no_slots() {
        let t0 = Instant::now();
        let mut m = ReceiveMeter::new(t0, Duration::from_secs(1), Duration::from_secs(1), None);
        m.add(t0 + Duration::from_millis(1500), 10);
        let r = m.report(t0 + Duration::from_secs(3), Some(1.0));
        assert!(r.slots.is_empty());
        assert_eq!(r.success_ratio, None);
        assert_eq!(r.cpu_secs, Some(1.0));
    }

    #[test]
    fn an_outcomes_error_is_written_to_json_as_its_text() {
        let mut o = TransferOutcome::new(3, Direction::Upload, true, "cubic");
        let json: serde_json::Value = serde_json::to_value(&o).unwrap();
        assert!(json["error"].is_null());
        assert_eq!(json["path_mtu"], 1200);
        o.error = Some(TransferError::Corrupt { offset: 12 });
        let json: serde_json::Value = serde_json::to_value(&o).unwrap();
        assert_eq!(json["error"], "payload byte 12 does not match the pattern");
        assert!(!o.ok());
    }

    #[test]
    fn records_with_snapshots_read_back() {
        use tput_cc::ControllerSpec;
        for spec in [
            "newreno",
            "cubic",
            "vegas",
            "ctcp",
            "fixed:rate=1Gbit/s",
            "guarantee:target=1Mbit/s",
        ] {
            let snap = spec.parse::<ControllerSpec>().unwrap().build(1200).snapshot();
            let mut rec = IntervalStats {
                start_secs: 1.0,
                end_secs: 1.5,
                bytes: 0,
                goodput_bps: 0.0,
                written_bytes: 10,
                cwnd_bytes: 12_000,
                srtt_ms: 20.0,
                min_rtt_ms: 10.0,
                lost_packets: 1,
                congestion_events: 1,
                controller: Some(snap),
            };
            rec.deliver(1000);
            assert_eq!(rec.goodput_bps, 16_000.0);
            let json = serde_json::to_string(&rec).unwrap();
            let back: IntervalStats = serde_json::from_str(&json).unwrap();
            assert_eq!(back, rec, "{spec}");
        }
    }
}
