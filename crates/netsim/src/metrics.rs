//! Counters, time series and their CSV/JSON writers.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

use crate::{FlowId, LinkId};

/// A packet and byte count.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Counter {
    /// Packets.
    pub packets: u64,
    /// Bytes.
    pub bytes: u64,
}

impl Counter {
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
/// `offered = delivered + dropped_queue + dropped_cutoff + dropped_random
///  + queued + in_transmission + in_flight`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct LinkStats {
    /// The link.
    pub link: LinkId,
    /// Packets handed to the link.
    pub offered: Counter,
    /// Packets that reached the far end.
    pub delivered: Counter,
    /// Arrivals that found the DropTail queue full.
    pub dropped_queue: Counter,
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
}

impl LinkStats {
    /// Sum of all drop causes.
    pub fn dropped(&self) -> Counter {
        Counter {
            packets: self.dropped_queue.packets + self.dropped_cutoff.packets + self.dropped_random.packets,
            bytes: self.dropped_queue.bytes + self.dropped_cutoff.bytes + self.dropped_random.bytes,
        }
    }
}

/// A flow's counters. Bytes are datagram payload bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FlowStats {
    /// The flow.
    pub flow: FlowId,
    /// Datagrams sent by hosts.
    pub sent: Counter,
    /// Datagrams delivered to the destination host.
    pub delivered: Counter,
}

/// A sample of a watched link's queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// A sample of a flow's delivered payload bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
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

/// Everything the simulator measured, serializable as one JSON document.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
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

impl Metrics {
    /// Writes the whole snapshot as JSON.
    pub fn write_json<W: Write>(&self, w: W) -> io::Result<()> {
        serde_json::to_writer_pretty(w, self).map_err(io::Error::other)
    }
}

/// A row type with a fixed CSV header.
pub trait CsvRow {
    /// The header line (without newline).
    const HEADER: &'static str;
    /// Writes one row (with newline).
    fn write_row<W: Write>(&self, w: &mut W) -> io::Result<()>;
}

impl CsvRow for QueueSample {
    const HEADER: &'static str = "time_ns,link,packets,bytes";
    fn write_row<W: Write>(&self, w: &mut W) -> io::Result<()> {
        writeln!(w, "{},{},{},{}", self.time_ns, self.link.0, self.packets, self.bytes)
    }
}

impl CsvRow for FlowSample {
    const HEADER: &'static str = "time_ns,flow,delivered_bytes,interval_bytes";
    fn write_row<W: Write>(&self, w: &mut W) -> io::Result<()> {
        writeln!(
            w,
            "{},{},{},{}",
            self.time_ns, self.flow, self.delivered_bytes, self.interval_bytes
        )
    }
}

impl CsvRow for LinkStats {
    const HEADER: &'static str = "link,offered_packets,offered_bytes,delivered_packets,delivered_bytes,\
dropped_queue_packets,dropped_queue_bytes,dropped_cutoff_packets,dropped_cutoff_bytes,\
dropped_random_packets,dropped_random_bytes,queued_packets,queued_bytes,busy_ns,elapsed_ns,utilisation";
    fn write_row<W: Write>(&self, w: &mut W) -> io::Result<()> {
        writeln!(
            w,
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}",
            self.link.0,
            self.offered.packets,
            self.offered.bytes,
            self.delivered.packets,
            self.delivered.bytes,
            self.dropped_queue.packets,
            self.dropped_queue.bytes,
            self.dropped_cutoff.packets,
            self.dropped_cutoff.bytes,
            self.dropped_random.packets,
            self.dropped_random.bytes,
            self.queued.packets,
            self.queued.bytes,
            self.busy_ns,
            self.elapsed_ns,
            self.utilisation
        )
    }
}

impl CsvRow for FlowStats {
    const HEADER: &'static str = "flow,sent_packets,sent_bytes,delivered_packets,delivered_bytes";
    fn write_row<W: Write>(&self, w: &mut W) -> io::Result<()> {
        writeln!(
            w,
            "{},{},{},{},{}",
            self.flow, self.sent.packets, self.sent.bytes, self.delivered.packets, self.delivered.bytes
        )
    }
}

/// Writes `rows` as CSV: the header row, then one line per row.
pub fn to_csv<'a, R, W, I>(rows: I, mut w: W) -> io::Result<()>
where
    R: CsvRow + 'a,
    W: Write,
    I: IntoIterator<Item = &'a R>,
{
    writeln!(w, "{}", R::HEADER)?;
    for r in rows {
        r.write_row(&mut w)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_has_header_and_rows() {
        let rows = [
            FlowSample {
                time_ns: 10,
                flow: 1,
                delivered_bytes: 100,
                interval_bytes: 100,
            },
            FlowSample {
                time_ns: 20,
                flow: 1,
                delivered_bytes: 150,
                interval_bytes: 50,
            },
        ];
        let mut out = Vec::new();
        to_csv(&rows, &mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "time_ns,flow,delivered_bytes,interval_bytes\n10,1,100,100\n20,1,150,50\n"
        );
    }
}
