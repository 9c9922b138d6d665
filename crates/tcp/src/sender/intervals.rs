//! The sender's interval records.

use std::time::Duration;

use tput_cc::CongestionController;
use tput_netsim::SimTime;

use crate::IntervalRecord;

/// Cuts the sender's time into intervals from its start and keeps a record
/// of each.
#[derive(Debug, Clone)]
pub(super) struct IntervalLog {
    /// Length of an interval (zero: no records).
    interval: Duration,
    /// The sender's start, where interval 0 begins.
    start: SimTime,
    next_boundary: Option<SimTime>,
    records: Vec<IntervalRecord>,
    /// Counts of the interval in progress.
    pub(super) lost: u64,
    pub(super) events: u64,
    pub(super) written: u64,
}

impl IntervalLog {
    pub(super) fn new(start: SimTime, interval: Duration) -> Self {
        Self {
            interval,
            start,
            next_boundary: (!interval.is_zero()).then(|| start + interval),
            records: Vec::new(),
            lost: 0,
            events: 0,
            written: 0,
        }
    }

    pub(super) fn records(&self) -> &[IntervalRecord] {
        &self.records
    }

    /// When the interval in progress ends.
    pub(super) fn next_boundary(&self) -> Option<SimTime> {
        self.next_boundary
    }

    /// Close the interval in progress at `at` (the `last`, when every byte
    /// is acknowledged, may be short; an empty last one is dropped).
    pub(super) fn close(
        &mut self,
        at: SimTime,
        last: bool,
        cc: &dyn CongestionController,
        srtt: Option<Duration>,
        min_rtt: Option<Duration>,
    ) {
        if self.interval.is_zero() {
            return;
        }
        let i = self.records.len() as u32;
        let start = self.interval * i;
        let end = at.saturating_duration_since(self.start);
        if last && end <= start && !self.records.is_empty() {
            self.next_boundary = None;
            return;
        }
        self.records.push(IntervalRecord {
            start,
            end,
            written_bytes: std::mem::take(&mut self.written),
            cwnd_bytes: cc.window(),
            srtt: srtt.unwrap_or_default(),
            min_rtt: min_rtt.unwrap_or_default(),
            lost_packets: std::mem::take(&mut self.lost),
            congestion_events: std::mem::take(&mut self.events),
            controller: cc.snapshot(),
        });
        self.next_boundary = if last { None } else { Some(at + self.interval) };
    }
}
