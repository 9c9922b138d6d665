//! The relay's counters, and the histograms its percentiles come from.

use serde::Serialize;
use tput_netsim::Counter;

#[cfg(doc)]
use super::{OVERLOAD_LAG, Relay};

/// One direction's counters. Bytes are wire bytes (payload plus the link's
/// overhead). `offered` = `delivered` + the four drops + what is still in
/// the link.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DirectionStats {
    /// Datagrams handed to the link.
    pub offered: Counter,
    /// Datagrams that left the link and were sent on.
    pub delivered: Counter,
    /// Arrivals that found the queue full (overflow).
    pub dropped_queue: Counter,
    /// Dropped by the queue discipline's AQM (CoDel, RED; 0 with DropTail).
    pub dropped_aqm: Counter,
    /// Marked CE by the queue discipline instead of dropped: only
    /// ECN-capable datagrams (`offered_ecn_capable`) on a discipline with
    /// ECN marking on (`aqm.ecn`). Each leaves the relay with CE in its IP
    /// header.
    pub marked: Counter,
    /// Lost to a cut-off.
    pub dropped_cutoff: Counter,
    /// Lost to random loss.
    pub dropped_random: Counter,
    /// Dropped because the relay could not keep up (a departure more than
    /// [`OVERLOAD_LAG`] late, or the operating system refused to send).
    pub dropped_overload: Counter,
    /// The most packets and the most bytes the queue has held.
    pub queue_high_water: Counter,
    /// The link's configured rate now, in bits per second (what the link
    /// spec or its rate schedule says, not what was carried: that is
    /// `delivered_bps`).
    #[serde(rename = "link_rate_bps")]
    pub rate_bps: u64,
    /// Seconds this direction carried traffic: from the offer of the first
    /// datagram it delivered to the departure of the last.
    pub active_secs: f64,
    /// What this direction delivered, bits per second of wire bytes over
    /// `active_secs` (0 before two deliveries).
    pub delivered_bps: f64,
    /// How late departures left, in microseconds: the 50th, 99th
    /// percentile and the maximum.
    pub late_p50_us: f64,
    /// 99th percentile.
    pub late_p99_us: f64,
    /// Maximum.
    pub late_max_us: f64,
    /// Queueing delay of the delivered datagrams, in milliseconds: the
    /// time from the offer to the start of its transmission, computed as
    /// the datagram's time in the link less the propagation delay and its
    /// own serialization at the link's rate when it arrived (a rate step
    /// while it waited moves it by the difference). The 50th percentile,
    /// in 10-µs buckets (the upper edge), as a share of datagrams, not of time.
    pub queue_delay_p50_ms: f64,
    /// 99th percentile.
    pub queue_delay_p99_ms: f64,
    /// Datagrams offered whose IP header said ECN-capable (ECT(0), ECT(1) or
    /// CE): what an ECN queue may mark instead of dropping.
    pub offered_ecn_capable: Counter,
    /// The same per client address, in the order the clients appeared
    /// (FQ-CoDel gives each its own queue).
    pub flows: Vec<FlowStats>,
}

/// One client's datagrams in one direction (from it on the forward link,
/// to it on the reverse one). Bytes are wire bytes.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct FlowStats {
    /// The client's address and port.
    pub client: String,
    /// Datagrams handed to the link.
    pub offered: Counter,
    /// Of those, ECN-capable (ECT(0), ECT(1) or CE on arrival).
    pub offered_ecn_capable: Counter,
    /// Datagrams sent on.
    pub delivered: Counter,
    /// Delivered datagrams the link marked CE.
    pub marked: Counter,
    /// What was delivered, bits per second of wire bytes from the offer of
    /// the first delivered datagram to the departure of the last.
    pub delivered_bps: f64,
    /// Queueing delay of the delivered datagrams, as the direction's
    /// `queue_delay_p50_ms` but in 100-µs buckets: the 50th percentile.
    pub queue_delay_p50_ms: f64,
    /// 99th percentile.
    pub queue_delay_p99_ms: f64,
}

/// The relay's counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RelayStats {
    /// Seconds since the relay started.
    pub elapsed_secs: f64,
    /// Client addresses seen.
    pub clients: usize,
    /// Clients to the server.
    pub forward: DirectionStats,
    /// The server to its clients.
    pub reverse: DirectionStats,
    /// Times the relay moved its clients to new upstream ports (NAT
    /// rebinding, [`Relay::rebind_every`]).
    pub rebinds: u64,
}

/// Durations in fixed-width buckets (the last one holds everything
/// longer), for percentiles.
#[derive(Debug, Clone)]
pub(super) struct Histogram {
    bucket_ns: u64,
    buckets: Vec<u64>,
    pub(super) count: u64,
    pub(super) max_ns: u64,
}

impl Histogram {
    /// `buckets` buckets of `bucket_ns` each.
    fn new(bucket_ns: u64, buckets: usize) -> Self {
        Histogram {
            bucket_ns,
            buckets: vec![0; buckets],
            count: 0,
            max_ns: 0,
        }
    }

    /// Lateness of departures: 1-µs buckets up to 20 ms.
    pub(super) fn lateness() -> Self {
        Self::new(1_000, 20_001)
    }

    /// Queueing delay: 10-µs buckets up to 2 s.
    pub(super) fn queueing() -> Self {
        Self::new(10_000, 200_001)
    }

    /// One client's queueing delay: 100-µs buckets up to 2 s (160 KB each).
    pub(super) fn flow_queueing() -> Self {
        Self::new(100_000, 20_001)
    }

    pub(super) fn record(&mut self, ns: u64) {
        let i = ((ns / self.bucket_ns) as usize).min(self.buckets.len() - 1);
        self.buckets[i] += 1;
        self.count += 1;
        self.max_ns = self.max_ns.max(ns);
    }

    /// The upper edge of the bucket holding quantile `q` (never more than
    /// the maximum), in nanoseconds; 0 when empty.
    fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return ((i as u64 + 1) * self.bucket_ns).min(self.max_ns);
            }
        }
        self.max_ns
    }

    pub(super) fn quantile_us(&self, q: f64) -> f64 {
        self.quantile_ns(q) as f64 / 1e3
    }

    pub(super) fn quantile_ms(&self, q: f64) -> f64 {
        self.quantile_ns(q) as f64 / 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lateness_quantiles() {
        let mut l = Histogram::lateness();
        for i in 0..100 {
            l.record(i * 1000 + 500);
        }
        assert_eq!(l.quantile_us(0.5), 50.0);
        assert_eq!(l.quantile_us(0.99), 99.0);
        assert_eq!(l.max_ns, 99_500);
    }
}
