//! A tiny ACK-clocked sender for controller unit tests.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::controller::{Ack, Congestion, CongestionController, CongestionKind, RttSample, min_window};

pub(crate) const MSS: u64 = DATAGRAM as u64;
/// [`MSS`] as the constructors take it.
pub(crate) const DATAGRAM: u16 = 1200;
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

/// Drive `cc` through 20 000 pseudo-random events with odd inputs (zero, 1 ns
/// and `Duration::MAX` RTTs, MTUs from 1 to 9000, huge and zero ACKs, losses,
/// persistent congestion, app-limited ACKs). After each: the snapshot agrees
/// with the window, the window is at least the minimum, and `check` holds.
pub(crate) fn fuzz_odd_inputs<C: CongestionController>(cc: &mut C, mut check: impl FnMut(&C)) {
    let t0 = Instant::now();
    let mut now = t0;
    let mut mss = MSS;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let durations = [
        Duration::ZERO,
        Duration::from_nanos(1),
        Duration::from_millis(20),
        Duration::from_secs(1_000_000),
        Duration::MAX,
    ];
    for i in 0..20_000 {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let pick = |n: u64| durations[(n % durations.len() as u64) as usize];
        now += Duration::from_micros(x % 50_000);
        let rtt = RttSample {
            latest: pick(x >> 8),
            smoothed: pick(x >> 16),
            min: pick(x >> 24),
        };
        match x % 23 {
            k @ (0 | 1) => {
                let kind = if k == 0 {
                    CongestionKind::Loss
                } else {
                    CongestionKind::PersistentCongestion
                };
                cc.on_congestion(
                    now,
                    &Congestion {
                        kind,
                        sent: now,
                        lost_bytes: MSS,
                    },
                );
            }
            2 => {
                let mtu = [1200, 1500, 9000, 1][(x >> 32) as usize % 4];
                mss = u64::from(mtu);
                cc.on_mtu_update(mtu);
            }
            _ => {
                let sent = now.checked_sub(rtt.latest).unwrap_or(t0).max(t0);
                let ack = Ack {
                    sent,
                    bytes: (x >> 40) & 0xffff,
                    rtt,
                    app_limited: i % 7 == 0,
                };
                cc.on_ack(now, &ack);
            }
        }
        assert_eq!(cc.snapshot().cwnd_bytes, cc.window());
        assert!(cc.window() >= min_window(mss));
        check(cc);
    }
}
