//! State-machine tests on ACK sequences from a small deterministic path: one
//! FIFO bottleneck with a byte-limited queue, a fixed base RTT, an ACK per
//! packet, RFC 9002 §6.1 loss detection (3 packets or 9/8 RTT), a sender
//! paced at the controller's rate and limited by its window, and an
//! application that can be bulk, rate-limited or paused. Test names follow
//! the draft's Appendix A where one matches.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::*;
use crate::controller::{Ack, Congestion, CongestionKind, RttSample};
use crate::testutil::{DATAGRAM, fuzz_odd_inputs};

const MSS: u64 = 1200;
/// 10 Mbit/s in bytes per second.
const TEN_MBIT: f64 = 1.25e6;

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

/// A packet on the path.
#[derive(Debug, Clone, Copy)]
struct Pkt {
    seq: u64,
    sent: Instant,
    /// When its ACK reaches the sender; `None` if the bottleneck dropped it.
    ack_at: Option<Instant>,
    /// Bytes in flight right after it was sent (`P.tx_in_flight`).
    tx_in_flight: u64,
    /// Bytes declared lost before it was sent (`P.lost`).
    lost_before: u64,
}

/// What the application offers.
#[derive(Debug, Clone, Copy)]
enum App {
    /// Always data to send.
    Bulk,
    /// `rate` bytes per second from `since`, `base` bytes already sent then.
    Rate { rate: f64, since: Instant, base: u64 },
    /// Nothing until `until`, then bulk.
    Paused { until: Instant },
}

/// A state change of the controller, with its state right after.
#[derive(Debug, Clone)]
struct Transition {
    at: Duration,
    from: BbrMode,
    to: BbrMode,
    /// `probe_rtt_min_stamp` before the event that made the change.
    probe_stamp_before: Option<Instant>,
    after: Bbr,
}

/// Scalars read before each event.
#[derive(Debug, Clone, Copy)]
struct Pre {
    state: BbrMode,
    bw_latest: f64,
    inflight_latest: u64,
    cwnd: u64,
    probe_stamp: Option<Instant>,
}

struct Sim {
    cc: Bbr,
    t0: Instant,
    now: Instant,
    /// Bottleneck rate, bytes per second.
    rate: f64,
    /// Base round-trip time.
    rtt: Duration,
    /// Bytes the bottleneck holds (the packet in service included).
    buffer: u64,
    link_free: Instant,
    next_send: Instant,
    seq: u64,
    /// Sent packets neither acknowledged nor declared lost, in send order.
    flight: VecDeque<Pkt>,
    srtt: Option<Duration>,
    min_rtt: Option<Duration>,
    app: App,
    app_limited: bool,
    sent_bytes: u64,
    lost_bytes: u64,
    drops: u64,
    /// Dropped packets not yet declared lost.
    dropped_in_flight: usize,
    transitions: Vec<Transition>,
    pre: Option<Pre>,
}

impl Sim {
    fn new(config: BbrConfig, rate: f64, rtt: Duration, buffer: u64) -> Self {
        let t0 = Instant::now();
        Self {
            cc: Bbr::new(config, DATAGRAM),
            t0,
            now: t0,
            rate,
            rtt,
            buffer,
            link_free: t0,
            next_send: t0,
            seq: 0,
            flight: VecDeque::new(),
            srtt: None,
            min_rtt: None,
            app: App::Bulk,
            app_limited: false,
            sent_bytes: 0,
            lost_bytes: 0,
            drops: 0,
            dropped_in_flight: 0,
            transitions: Vec::new(),
            pre: None,
        }
    }

    fn elapsed(&self) -> Duration {
        self.now - self.t0
    }

    fn in_flight(&self) -> u64 {
        self.flight.len() as u64 * MSS
    }

    /// When the application has the next packet, from `t` on.
    fn data_at(&self, t: Instant) -> Option<Instant> {
        match self.app {
            App::Bulk => Some(t),
            App::Paused { until } => Some(t.max(until)),
            App::Rate { rate, since, base } => {
                let needed = (self.sent_bytes + MSS).saturating_sub(base) as f64;
                Some(t.max(since + Duration::from_secs_f64(needed / rate)))
            }
        }
    }

    /// The next event: (time, kind) with kind 0 = ACK, 1 = send, 2 = loss timer.
    fn next_event(&self) -> (Instant, u8) {
        let ack = self.flight.iter().find_map(|p| p.ack_at).map(|t| (t, 0));
        let send = (self.in_flight() + MSS <= self.cc.window())
            .then(|| self.data_at(self.now.max(self.next_send)))
            .flatten()
            .map(|t| (t, 1));
        let srtt = self.srtt.unwrap_or(self.rtt);
        let timer = (self.dropped_in_flight > 0)
            .then(|| self.flight.iter().find(|p| p.ack_at.is_none()))
            .flatten()
            .map(|p| (p.sent + srtt * 9 / 8, 2));
        [ack, send, timer]
            .into_iter()
            .flatten()
            .min()
            .expect("a sender with data always has something to do")
    }

    /// Run one event.
    fn step(&mut self) {
        let (t, kind) = self.next_event();
        self.now = self.now.max(t);
        // quinn's verdict after its last poll: window and pacer open, no data.
        if self.in_flight() + MSS <= self.cc.window()
            && self.now >= self.next_send
            && self.data_at(self.now).is_some_and(|d| d > self.now)
        {
            self.app_limited = true;
        }
        let cc = &self.cc;
        let pre = Pre {
            state: cc.state,
            bw_latest: cc.bw_latest,
            inflight_latest: cc.inflight_latest,
            cwnd: cc.cwnd,
            probe_stamp: cc.probe_rtt_min_stamp,
        };
        self.pre = Some(pre);
        match kind {
            0 => self.ack(),
            1 => self.send(),
            _ => self.loss_timer(),
        }
        self.record();
    }

    /// Log a state change since the last one logged in this event.
    fn record(&mut self) {
        let Some(pre) = self.pre.as_mut() else { return };
        if self.cc.state != pre.state {
            let from = std::mem::replace(&mut pre.state, self.cc.state);
            let probe_stamp_before = pre.probe_stamp;
            self.transitions.push(Transition {
                at: self.now - self.t0,
                from,
                to: self.cc.state,
                probe_stamp_before,
                after: self.cc.clone(),
            });
        }
    }

    fn send(&mut self) {
        self.app_limited = false;
        self.cc.on_sent(self.now, MSS);
        self.seq += 1;
        self.sent_bytes += MSS;
        let backlog = self.link_free.saturating_duration_since(self.now).as_secs_f64() * self.rate;
        let ack_at = if backlog + MSS as f64 > self.buffer as f64 + 0.5 {
            self.drops += 1;
            self.dropped_in_flight += 1;
            None
        } else {
            let depart = self.now.max(self.link_free) + Duration::from_secs_f64(MSS as f64 / self.rate);
            self.link_free = depart;
            Some(depart + self.rtt)
        };
        self.flight.push_back(Pkt {
            seq: self.seq,
            sent: self.now,
            ack_at,
            tx_in_flight: self.in_flight() + MSS,
            lost_before: self.lost_bytes,
        });
        // §5.6.2: next_send_time = max(Now(), next_send_time) + size / pacing_rate.
        let rate = self.cc.pacing_rate().unwrap() as f64;
        self.next_send = self.now.max(self.next_send) + Duration::from_secs_f64(MSS as f64 / rate);
    }

    fn ack(&mut self) {
        let i = self.flight.iter().position(|p| p.ack_at.is_some()).unwrap();
        let p = self.flight.remove(i).unwrap();
        let latest = self.now - p.sent;
        self.srtt = Some(self.srtt.map_or(latest, |s| (s * 7 + latest) / 8));
        let min = self.min_rtt.map_or(latest, |m| m.min(latest));
        self.min_rtt = Some(min);
        let rtt = RttSample {
            latest,
            smoothed: self.srtt.unwrap(),
            min,
        };
        let ack = Ack {
            sent: p.sent,
            bytes: MSS,
            rtt,
            app_limited: self.app_limited,
        };
        self.cc.on_ack(self.now, &ack);
        self.cc.on_end_acks(self.now, self.in_flight(), self.app_limited);
        // A change made by the ACK is logged before the loss detection that
        // follows it (as in quinn) runs.
        self.record();
        // RFC 9002 §6.1: packet threshold 3, time threshold 9/8 RTT.
        let srtt = self.srtt.unwrap().max(latest);
        let now = self.now;
        self.declare_lost(|q| q.seq + 3 <= p.seq || q.sent + srtt * 9 / 8 <= now);
    }

    fn loss_timer(&mut self) {
        let srtt = self.srtt.unwrap_or(self.rtt);
        let now = self.now;
        self.declare_lost(|q| q.sent + srtt * 9 / 8 <= now);
    }

    /// Declare lost the dropped packets that `lost` selects, in one event.
    fn declare_lost(&mut self, lost: impl Fn(&Pkt) -> bool) {
        if self.dropped_in_flight == 0 {
            return;
        }
        let mut newest = None;
        let mut bytes = 0;
        self.flight.retain(|q| {
            if q.ack_at.is_none() && lost(q) {
                newest = Some(q.sent);
                bytes += MSS;
                false
            } else {
                true
            }
        });
        if let Some(sent) = newest {
            self.dropped_in_flight -= (bytes / MSS) as usize;
            self.lose(sent, bytes, CongestionKind::Loss);
        }
    }

    fn lose(&mut self, sent: Instant, bytes: u64, kind: CongestionKind) {
        self.lost_bytes += bytes;
        let event = Congestion {
            kind,
            sent,
            lost_bytes: bytes,
        };
        self.cc.on_congestion(self.now, &event);
    }

    /// Take the `n` oldest packets off the path and report them lost now.
    fn lose_oldest(&mut self, n: usize) -> Vec<Pkt> {
        let gone: Vec<Pkt> = self.flight.drain(..n).collect();
        self.dropped_in_flight -= gone.iter().filter(|p| p.ack_at.is_none()).count();
        let newest = gone.last().unwrap().sent;
        self.lose(newest, n as u64 * MSS, CongestionKind::Loss);
        gone
    }

    /// Run until `done` holds, failing after `limit` of simulated time.
    fn run_until(&mut self, limit: Duration, mut done: impl FnMut(&Sim) -> bool) {
        let end = self.now + limit;
        while !done(self) {
            assert!(
                self.now < end,
                "not reached within {limit:?}: state {:?}",
                self.cc.state
            );
            self.step();
        }
    }

    /// Run for `d` of simulated time, calling `check` after each event.
    fn run_for(&mut self, d: Duration, mut check: impl FnMut(&Sim)) {
        let end = self.now + d;
        while self.now < end {
            self.step();
            check(self);
        }
    }

    fn run_until_state(&mut self, state: BbrMode, limit: Duration) {
        self.run_until(limit, |s| s.cc.state == state);
    }
}

/// The pacing and cwnd gains of §5.6.1's table.
fn table_gains(mode: BbrMode) -> (f64, f64) {
    match mode {
        BbrMode::Startup => (2.77, 2.0),
        BbrMode::Drain => (0.5, 2.0),
        BbrMode::ProbeBwDown => (0.9, 2.0),
        BbrMode::ProbeBwCruise | BbrMode::ProbeBwRefill => (1.0, 2.0),
        BbrMode::ProbeBwUp => (1.25, 2.25),
        BbrMode::ProbeRtt => (1.0, 0.5),
    }
}

/// The transitions of §5.1.1's diagram. ProbeRTT's exit to ProbeBW passes
/// through ProbeBW_DOWN to ProbeBW_CRUISE within one ACK (§5.3.4.4), and so
/// can Drain's when inflight is already low enough to cruise.
fn allowed(from: BbrMode, to: BbrMode) -> bool {
    use BbrMode::*;
    matches!(
        (from, to),
        (Startup, Drain)
            | (Drain, ProbeBwDown)
            | (Drain, ProbeBwCruise)
            | (ProbeBwDown, ProbeBwCruise)
            | (ProbeBwDown, ProbeBwRefill)
            | (ProbeBwCruise, ProbeBwRefill)
            | (ProbeBwRefill, ProbeBwUp)
            | (ProbeBwUp, ProbeBwDown)
            | (_, ProbeRtt)
            | (ProbeRtt, ProbeBwCruise)
            | (ProbeRtt, Startup)
    )
}

/// A bulk flow on 10 Mbit/s, 40 ms, with a queue that never overflows.
fn lossless() -> Sim {
    Sim::new(BbrConfig::default(), TEN_MBIT, ms(40), u64::MAX)
}

/// When each transition happened and the mode it entered.
fn summary(tr: &[Transition]) -> Vec<(Duration, BbrMode)> {
    tr.iter().map(|t| (t.at, t.to)).collect()
}

mod loss;
mod states;
