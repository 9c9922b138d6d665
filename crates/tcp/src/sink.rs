//! The receiving half: cumulative ACKs, SACK blocks, delayed ACKs, ECN-Echo.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;
use tput_netsim::{Addr, Datagram, Ecn, FlowId, Host, SimTime};

use crate::wire::{AckPacket, DataPacket, PATTERN_PERIOD, decode_data, encode_ack, pattern};
use crate::{MAX_SACK_BLOCKS, TcpConfig};

/// What a sink measured.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct SinkReport {
    /// Payload bytes delivered in order (goodput).
    pub bytes: u64,
    /// From the first segment's arrival to the last in-order delivery.
    pub active: Duration,
    /// In-order bytes per interval from the first arrival, or from the
    /// origin [`TcpSink::with_interval_origin`] sets (the last one partial).
    pub interval_bytes: Vec<u64>,
    /// In-order bytes per complete evaluation slot from the first arrival
    /// (empty without slots), for the caller to judge against a target.
    pub slot_bytes: Vec<u64>,
    /// ACKs sent.
    pub acks_sent: u64,
    /// Data segments received (duplicates included).
    pub segments_received: u64,
    /// Segments that arrived entirely below the cumulative ACK.
    pub duplicates: u64,
    /// Segments that failed the payload check or were malformed (always 0 in a correct run).
    pub corrupt: u64,
    /// Segments that arrived marked CE ([`TcpConfig::ecn`]; counted only
    /// with ECN on).
    pub ce_received: u64,
    /// ACKs sent with ECE set.
    pub ece_sent: u64,
}

/// The receiving half: cumulative ACKs, optional SACK blocks and delayed ACKs.
#[derive(Debug)]
pub struct TcpSink {
    cfg: TcpConfig,
    rcv_nxt: u64,
    /// RFC 7323 §4.3 `Last.ACK.sent`: the cumulative ACK last sent.
    last_ack_sent: u64,
    /// RFC 7323 §4.3 `TS.Recent`: the timestamp the next ACK echoes.
    ts_recent: Option<u64>,
    /// RFC 3168 §6.1.3: a CE mark arrived and no CWR since; every ACK
    /// carries ECE meanwhile.
    ece: bool,
    /// Out-of-order data above `rcv_nxt`: start -> end, merged.
    ooo: BTreeMap<u64, u64>,
    /// Starts of recently received out-of-order segments, newest first (RFC 2018 §4).
    recent: VecDeque<u64>,
    peer: Option<(Addr, FlowId)>,
    out: VecDeque<Datagram>,
    unacked: u32,
    ack_deadline: Option<SimTime>,
    first: Option<SimTime>,
    last: Option<SimTime>,
    interval: Duration,
    /// Where interval 0 begins: the sender's start, so that interval `i`
    /// here is the sender's interval `i`; `None`: the first arrival.
    interval_origin: Option<SimTime>,
    interval_counts: Vec<u64>,
    slot: Duration,
    slot_counts: Vec<u64>,
    report: SinkReport,
    delivered_log: Option<Vec<u8>>,
}

impl TcpSink {
    /// A sink with `cfg`'s ACK policy; it counts in-order bytes per
    /// `interval` (zero: no intervals) and per evaluation `slot` (`None`: no
    /// slots).
    pub fn new(cfg: TcpConfig, interval: Duration, slot: Option<Duration>) -> Self {
        Self {
            cfg,
            rcv_nxt: 0,
            last_ack_sent: 0,
            ts_recent: None,
            ece: false,
            ooo: BTreeMap::new(),
            recent: VecDeque::new(),
            peer: None,
            out: VecDeque::new(),
            unacked: 0,
            ack_deadline: None,
            first: None,
            last: None,
            interval,
            interval_origin: None,
            interval_counts: Vec::new(),
            slot: slot.unwrap_or_default(),
            slot_counts: Vec::new(),
            report: SinkReport::default(),
            delivered_log: None,
        }
    }

    /// Count intervals from `origin` (the sender's start, where its interval
    /// records begin) instead of from the first arrival, so that the
    /// sender's record `i` and this count `i` cover the same time: a flow
    /// whose first window was lost would otherwise have its bytes shifted by
    /// its whole back-off.
    pub fn with_interval_origin(mut self, origin: SimTime) -> Self {
        self.interval_origin = Some(origin);
        self
    }

    /// Keep a copy of every byte delivered in order (for tests).
    pub fn record_delivery(&mut self) {
        self.delivered_log = Some(Vec::new());
    }

    /// The bytes delivered in order, if [`record_delivery`](Self::record_delivery) was called.
    pub fn delivered_log(&self) -> Option<&[u8]> {
        self.delivered_log.as_deref()
    }

    /// Bytes delivered in order so far.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    /// The report: slots complete by the last delivery are counted.
    pub fn report(&self) -> SinkReport {
        let mut r = self.report.clone();
        r.bytes = self.rcv_nxt;
        let (Some(first), Some(last)) = (self.first, self.last) else {
            return r;
        };
        let active = last.saturating_duration_since(first);
        r.active = active;
        r.interval_bytes = self.interval_counts.clone();
        if !self.slot.is_zero() {
            let n = (active.as_nanos() / self.slot.as_nanos()) as usize;
            r.slot_bytes = self.slot_counts.clone();
            r.slot_bytes.resize(n, 0);
        }
        r
    }

    fn count(&mut self, now: SimTime, bytes: u64) {
        let first = *self.first.get_or_insert(now);
        self.last = Some(now);
        let since_origin = now
            .saturating_duration_since(self.interval_origin.unwrap_or(first))
            .as_nanos();
        let since = now.saturating_duration_since(first).as_nanos();
        for (width, counts, since) in [
            (self.interval, &mut self.interval_counts, since_origin),
            (self.slot, &mut self.slot_counts, since),
        ] {
            if width.is_zero() {
                continue;
            }
            let i = (since / width.as_nanos()) as usize;
            if counts.len() <= i {
                counts.resize(i + 1, 0);
            }
            counts[i] += bytes;
        }
    }

    fn sack_blocks(&self) -> Vec<(u64, u64)> {
        let mut blocks: Vec<(u64, u64)> = Vec::with_capacity(MAX_SACK_BLOCKS);
        for &s in &self.recent {
            if blocks.len() == MAX_SACK_BLOCKS {
                break;
            }
            if let Some((&b, &e)) = self.ooo.range(..=s).next_back()
                && e > s
                && !blocks.contains(&(b, e))
            {
                blocks.push((b, e));
            }
        }
        blocks
    }

    fn ack_now(&mut self, dup: bool) {
        let Some((dst, flow)) = self.peer else { return };
        let a = AckPacket {
            ack: self.rcv_nxt,
            dup,
            ece: self.ece,
            rwnd: self.cfg.receive_window,
            sack: if self.cfg.sack { self.sack_blocks() } else { Vec::new() },
            tsecr: if self.cfg.timestamps { self.ts_recent } else { None },
        };
        self.last_ack_sent = self.rcv_nxt;
        self.out.push_back(Datagram::new(dst, flow, encode_ack(&a)));
        self.report.acks_sent += 1;
        self.report.ece_sent += u64::from(self.ece);
        self.unacked = 0;
        self.ack_deadline = None;
    }

    /// RFC 3168 §6.1.3 on every arrival (with ECN on): "After receiving a
    /// CWR packet, acknowledgments for subsequent non-CE data packets do not
    /// have the ECE flag set"; a CE packet sets it "in every subsequent ACK
    /// packet" until then, and a CWR packet that is itself CE leaves it set
    /// (the CWR is taken first, the mark after).
    fn on_codepoint(&mut self, ecn: Ecn, cwr: bool) {
        if !self.cfg.ecn {
            return;
        }
        if cwr {
            self.ece = false;
        }
        if ecn == Ecn::Ce {
            self.ece = true;
            self.report.ce_received += 1;
        }
    }

    fn on_segment(&mut self, now: SimTime, seq: u64, tsval: Option<u64>, data: &[u8]) {
        let len = data.len() as u64;
        let end = seq + len;
        if len == 0 || data != pattern(seq, data.len()) {
            self.report.corrupt += 1;
            return;
        }
        // RFC 7323 §4.3 (2): "If SEG.TSval >= TS.Recent and SEG.SEQ <=
        // Last.ACK.sent, then SEG.TSval is copied to TS.Recent": the echo
        // is of the segment that advanced the window, so a delayed or
        // out-of-order ACK's sample covers the whole wait.
        if let Some(ts) = tsval
            && seq <= self.last_ack_sent
            && self.ts_recent.is_none_or(|r| ts >= r)
        {
            self.ts_recent = Some(ts);
        }
        self.report.segments_received += 1;
        if end <= self.rcv_nxt {
            self.report.duplicates += 1;
            self.ack_now(true);
            return;
        }
        if seq > self.rcv_nxt {
            if end > self.rcv_nxt + self.cfg.receive_window {
                return; // beyond the advertised window
            }
            // Out of order: keep it, ACK at once (RFC 5681 §4.2).
            self.insert(seq, end);
            self.recent.retain(|&s| s != seq);
            self.recent.push_front(seq);
            self.recent.truncate(4 * MAX_SACK_BLOCKS);
            self.first.get_or_insert(now);
            self.ack_now(false);
            return;
        }
        let filled_gap = !self.ooo.is_empty();
        let old = self.rcv_nxt;
        let new_data = &data[(old - seq) as usize..];
        if let Some(log) = &mut self.delivered_log {
            log.extend_from_slice(new_data);
        }
        self.rcv_nxt = end;
        // Out-of-order data now in sequence.
        while let Some((&b, &e)) = self.ooo.first_key_value() {
            if b > self.rcv_nxt {
                break;
            }
            self.ooo.pop_first();
            if e > self.rcv_nxt {
                if let Some(log) = &mut self.delivered_log {
                    log.extend((self.rcv_nxt..e).map(|i| (i % PATTERN_PERIOD) as u8));
                }
                self.rcv_nxt = e;
            }
        }
        let rcv_nxt = self.rcv_nxt;
        if !self.recent.is_empty() {
            self.recent.retain(|&s| s >= rcv_nxt);
        }
        self.count(now, self.rcv_nxt - old);
        match self.cfg.delayed_ack {
            // RFC 5681 §4.2: a segment that fills a gap is ACKed at once, and
            // at least every second full-sized segment.
            Some(timer) if !filled_gap => {
                self.unacked += 1;
                if self.unacked >= 2 {
                    self.ack_now(false);
                } else if self.ack_deadline.is_none() {
                    self.ack_deadline = Some(now + timer);
                }
            }
            _ => self.ack_now(false),
        }
    }

    fn insert(&mut self, mut b: u64, mut e: u64) {
        if let Some((&pb, &pe)) = self.ooo.range(..=b).next_back()
            && pe >= b
        {
            b = pb;
            e = e.max(pe);
            self.ooo.remove(&pb);
        }
        while let Some((&nb, &ne)) = self.ooo.range(b..).next() {
            if nb > e {
                break;
            }
            e = e.max(ne);
            self.ooo.remove(&nb);
        }
        self.ooo.insert(b, e);
    }
}

impl Host for TcpSink {
    fn on_datagram(&mut self, now: SimTime, from: Addr, flow: FlowId, ecn: Ecn, payload: Bytes) {
        self.peer = Some((from, flow));
        match decode_data(&payload) {
            Some(DataPacket {
                seq,
                tsval,
                cwr,
                payload,
            }) => {
                self.on_codepoint(ecn, cwr);
                self.on_segment(now, seq, tsval, payload)
            }
            None => self.report.corrupt += 1,
        }
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Datagram> {
        self.out.pop_front()
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        self.ack_deadline
    }

    fn on_timeout(&mut self, now: SimTime) {
        if self.ack_deadline.is_some_and(|t| t <= now) {
            self.ack_now(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A flow whose first window was lost delivers its first bytes seconds
    /// late: counted from the sender's start they fall in the interval the
    /// sender's record of that time has, not in interval 0.
    #[test]
    fn intervals_count_from_the_origin_the_sender_uses() {
        let at = |ms: u64| SimTime::from_duration(Duration::from_millis(ms));
        let sink = || TcpSink::new(TcpConfig::default(), Duration::from_secs(1), None);
        let mut from_first = sink();
        let mut from_start = sink().with_interval_origin(at(0));
        for sink in [&mut from_first, &mut from_start] {
            sink.count(at(3_500), 1000);
            sink.count(at(4_200), 500);
        }
        assert_eq!(from_start.interval_counts, vec![0, 0, 0, 1000, 500]);
        assert_eq!(from_first.interval_counts, vec![1500]);
        // Slots are judged from the first arrival either way.
        assert_eq!(from_start.report().active, Duration::from_millis(700));
    }
}
