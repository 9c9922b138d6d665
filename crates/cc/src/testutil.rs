//! A tiny ACK-clocked sender for controller unit tests.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::controller::{Ack, Congestion, CongestionController, CongestionKind, RttSample};

pub(crate) const MSS: u64 = 1200;
pub(crate) const RTT: Duration = Duration::from_millis(20);

/// Drives a controller: `now` only moves forward; every packet is acked one
/// `rtt` after it was sent unless a test says otherwise.
pub(crate) struct Harness<C: CongestionController> {
    pub cc: C,
    pub now: Instant,
    /// RTT of the next acknowledgements.
    pub rtt: Duration,
    /// Smoothed RTT reported; follows `rtt` unless set.
    pub srtt: Option<Duration>,
    pub min_rtt: Option<Duration>,
    pub app_limited: bool,
    /// Packets in flight: (send time, bytes).
    pub flight: VecDeque<(Instant, u64)>,
    pub acked_total: u64,
}

impl<C: CongestionController> Harness<C> {
    pub fn new(cc: C, rtt: Duration) -> Self {
        Self {
            cc,
            now: Instant::now(),
            rtt,
            srtt: None,
            min_rtt: None,
            app_limited: false,
            flight: VecDeque::new(),
            acked_total: 0,
        }
    }

    pub fn advance(&mut self, d: Duration) {
        self.now += d;
    }

    fn sample(&mut self, latest: Duration) -> RttSample {
        let min = self.min_rtt.map_or(latest, |m| m.min(latest));
        self.min_rtt = Some(min);
        RttSample {
            latest,
            smoothed: self.srtt.unwrap_or(self.rtt),
            min,
        }
    }

    /// Acknowledge, at `now`, a packet of `bytes` sent at `sent`.
    pub fn ack_sent_at(&mut self, sent: Instant, bytes: u64) {
        let rtt = self.sample(self.now.saturating_duration_since(sent));
        let ack = Ack {
            sent,
            bytes,
            rtt,
            app_limited: self.app_limited,
        };
        self.cc.on_ack(self.now, &ack);
        self.acked_total += bytes;
    }

    /// Acknowledge, at `now`, a packet of `bytes` sent one `rtt` ago, ending the ACK batch.
    pub fn ack(&mut self, bytes: u64) {
        self.ack_sent_at(self.now - self.rtt, bytes);
        let in_flight = self.in_flight();
        self.cc.on_end_acks(self.now, in_flight, self.app_limited);
    }

    pub fn in_flight(&self) -> u64 {
        self.flight.iter().map(|&(_, b)| b).sum()
    }

    /// Send MSS-sized packets at `now` while the window allows.
    pub fn fill(&mut self) {
        while self.in_flight() + MSS <= self.cc.window() {
            self.cc.on_sent(self.now, MSS);
            self.flight.push_back((self.now, MSS));
        }
    }

    /// One round trip: fill the window if nothing is in flight, then acknowledge
    /// every packet in flight one `rtt` after it was sent, in order, sending new
    /// packets as the window allows after each ACK (ACK clocking).
    pub fn round(&mut self) {
        if self.flight.is_empty() {
            self.fill();
        }
        let n = self.flight.len();
        for _ in 0..n {
            let (sent, bytes) = self.flight.pop_front().expect("n packets in flight");
            self.now = self.now.max(sent + self.rtt);
            self.ack_sent_at(sent, bytes);
            let in_flight = self.in_flight();
            self.cc.on_end_acks(self.now, in_flight, self.app_limited);
            self.fill();
        }
    }

    /// Signal congestion about a packet sent at `sent`, at `now`.
    pub fn lose(&mut self, sent: Instant, kind: CongestionKind) {
        let lost_bytes = if kind == CongestionKind::Ecn { 0 } else { MSS };
        self.cc.on_congestion(self.now, &Congestion { kind, sent, lost_bytes });
    }

    /// Signal a loss of the oldest packet in flight and drop it from the flight.
    pub fn lose_oldest(&mut self) {
        if let Some((sent, _)) = self.flight.pop_front() {
            self.lose(sent, CongestionKind::Loss);
        }
    }
}
