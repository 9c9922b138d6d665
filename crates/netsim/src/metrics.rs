//! Counters and time series (serializable with the `serde` feature;
//! rendering is `tput-lab`'s job).
//!
//! These are records: their fields are public for reading, and times and
//! durations in them are integer nanoseconds with the unit in the field's
//! name (`time_ns`, `busy_ns`), the form their CSV and JSON columns take.
//! The structs are `#[non_exhaustive]` (a counter may be added): start from
//! `Default` and set fields, or use [`Counter::new`].

use crate::{FlowId, LinkId, SimTime};

/// A packet and byte count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Counter {
    /// Packets.
    pub packets: u64,
    /// Bytes.
    pub bytes: u64,
}

impl Counter {
    /// `packets` packets of `bytes` bytes in all.
    pub const fn new(packets: u64, bytes: u64) -> Self {
        Counter { packets, bytes }
    }

    #[inline]
    pub(crate) fn add(&mut self, bytes: u64) {
        self.packets += 1;
        self.bytes += bytes;
    }

    #[inline]
    pub(crate) fn sub(&mut self, bytes: u64) {
        self.packets -= 1;
        self.bytes -= bytes;
    }
}

/// A link's counters. Bytes are wire bytes (payload + header overhead).
///
/// Conservation, at every instant:
/// `offered = delivered + dropped_queue + dropped_aqm + dropped_cutoff
///  + dropped_random + queued + in_transmission + in_flight`.
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct LinkStats {
    /// The link.
    pub link: LinkId,
    /// Packets handed to the link.
    pub offered: Counter,
    /// Packets that reached the far end.
    pub delivered: Counter,
    /// Overflow drops: arrivals that found the queue full (with FQ-CoDel,
    /// packets of the fattest flow dropped to make room).
    pub dropped_queue: Counter,
    /// Drops decided by the queue discipline's AQM (CoDel's control law,
    /// RED's probability), apart from overflow; 0 with DropTail.
    #[cfg_attr(feature = "serde", serde(default))]
    pub dropped_aqm: Counter,
    /// Packets the queue discipline marked CE instead of dropping them.
    #[cfg_attr(feature = "serde", serde(default))]
    pub marked: Counter,
    /// Median time packets waited in the queue before their transmission
    /// started, in ns (0 before the first; within 6.25 %: a log-linear
    /// histogram).
    #[cfg_attr(feature = "serde", serde(default))]
    pub sojourn_p50_ns: u64,
    /// 99th percentile of the same, in ns.
    #[cfg_attr(feature = "serde", serde(default))]
    pub sojourn_p99_ns: u64,
    /// Lost to a cut-off (arrivals in `drop` mode, packets on the wire when a
    /// cut began).
    pub dropped_cutoff: Counter,
    /// Lost to bit errors or random packet loss.
    pub dropped_random: Counter,
    /// Waiting in the queue now.
    pub queued: Counter,
    /// Being serialized now (0 or 1 packet).
    pub in_transmission: Counter,
    /// Serialized, propagating now.
    pub in_flight: Counter,
    /// Nanoseconds the transmitter has spent serializing (lost packets
    /// included, aborted ones up to the abort).
    pub busy_ns: u64,
    /// Nanoseconds since the start of the run.
    pub elapsed_ns: u64,
    /// `busy_ns / elapsed_ns` (0 at time 0).
    pub utilisation: f64,
    /// The most packets and the most bytes the queue has held so far (each
    /// its own maximum): the queue's high-water mark.
    #[cfg_attr(feature = "serde", serde(default))]
    pub queued_max: Counter,
    /// FQ-CoDel's scheduler and flow-queue counters (RFC 8290), on an
    /// FQ-CoDel link only.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub fq_codel: Option<FqCodelStats>,
}

/// What an FQ-CoDel link's scheduler did (RFC 8290 §4), since the start of
/// the run.
///
/// A flow queue is on the list of new flows, on the list of old flows, or
/// on neither (§4.1-4.2). An arrival into a queue on neither list makes it
/// a new flow (`new_flow_entries`, the sparse-flow optimisation of §4.4:
/// its packets go before the old flows'); a new flow that spends its
/// quantum moves to the old list (`new_to_old`); a new flow found empty
/// moves to the old list when that list is not empty
/// (`emptied_new_to_old`), and otherwise, like an old flow found empty,
/// leaves the lists (`left_lists`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct FqCodelStats {
    /// Flow queues that have held at least one packet.
    pub flow_queues_used: u64,
    /// Arrivals that made their queue a new flow (it was on no list).
    pub new_flow_entries: u64,
    /// New flows moved to the old list for having spent their quantum.
    pub new_to_old: u64,
    /// New flows found empty and moved to the old list.
    pub emptied_new_to_old: u64,
    /// Flows found empty that left the lists.
    pub left_lists: u64,
    /// Packets sent from a flow on the new list.
    pub served_new: u64,
    /// Packets sent from a flow on the old list.
    pub served_old: u64,
    /// The flow queues that took the most packets (at most 8), most first
    /// (ties: the lower index first).
    pub busiest: Vec<FlowQueueStats>,
}

/// One FQ-CoDel flow queue's counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct FlowQueueStats {
    /// The queue's index (the flow hash modulo the number of queues).
    pub index: u32,
    /// Packets (and wire bytes) that entered it.
    pub enqueued: Counter,
    /// Packets its CoDel dropped.
    pub dropped_aqm: u64,
    /// Packets its CoDel marked CE.
    pub marked: u64,
    /// Packets dropped from it because the link's queue was full (it was
    /// the fattest flow, RFC 8290 §4.1.2).
    pub dropped_overflow: u64,
    /// Times an arrival made it a new flow.
    pub new_entries: u64,
    /// The most packets and the most bytes it has held (each its own
    /// maximum).
    pub max_backlog: Counter,
}

impl LinkStats {
    /// Sum of all drop causes.
    pub fn dropped(&self) -> Counter {
        Counter {
            packets: self.dropped_queue.packets
                + self.dropped_aqm.packets
                + self.dropped_cutoff.packets
                + self.dropped_random.packets,
            bytes: self.dropped_queue.bytes
                + self.dropped_aqm.bytes
                + self.dropped_cutoff.bytes
                + self.dropped_random.bytes,
        }
    }
}

/// A flow's counters. Bytes are datagram payload bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct FlowStats {
    /// The flow.
    pub flow: FlowId,
    /// Datagrams sent by hosts.
    pub sent: Counter,
    /// Datagrams delivered to the destination host.
    pub delivered: Counter,
}

/// A sample of a watched link's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct QueueSample {
    /// Sample time in nanoseconds.
    pub time_ns: u64,
    /// The link.
    pub link: LinkId,
    /// Waiting packets.
    pub packets: u64,
    /// Waiting wire bytes.
    pub bytes: u64,
}

impl QueueSample {
    /// `queued` waiting in `link`'s queue at `at`.
    pub fn new(at: SimTime, link: LinkId, queued: Counter) -> Self {
        QueueSample {
            time_ns: at.as_nanos(),
            link,
            packets: queued.packets,
            bytes: queued.bytes,
        }
    }
}

/// A sample of a flow's delivered payload bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct FlowSample {
    /// Sample time in nanoseconds.
    pub time_ns: u64,
    /// The flow.
    pub flow: FlowId,
    /// Delivered payload bytes since the start.
    pub delivered_bytes: u64,
    /// Delivered payload bytes since the previous sample.
    pub interval_bytes: u64,
}

impl FlowSample {
    /// `flow` has had `delivered_bytes` delivered by `at`,
    /// `interval_bytes` of them since the previous sample.
    pub fn new(at: SimTime, flow: FlowId, delivered_bytes: u64, interval_bytes: u64) -> Self {
        FlowSample {
            time_ns: at.as_nanos(),
            flow,
            delivered_bytes,
            interval_bytes,
        }
    }
}

/// Everything the simulator measured (one JSON document with the `serde`
/// feature).
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct Metrics {
    /// Time of the snapshot in nanoseconds.
    pub time_ns: u64,
    /// Per link, indexed by link id.
    pub links: Vec<LinkStats>,
    /// Per flow, by ascending flow id.
    pub flows: Vec<FlowStats>,
    /// Queue samples of watched links, in time order.
    pub queue_samples: Vec<QueueSample>,
    /// Per-flow delivered bytes, in time order then flow order.
    pub flow_samples: Vec<FlowSample>,
    /// Datagrams with no route to their destination, or addressed to the
    /// sender's own node.
    pub unroutable: u64,
    /// Datagrams that reached their node but found no host on the port.
    pub no_listener: u64,
}
