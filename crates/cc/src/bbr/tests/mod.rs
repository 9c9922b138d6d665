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
use crate::testutil::fuzz_odd_inputs;

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
            cc: Bbr::new(config, MSS),
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

#[test]
fn starts_in_startup_with_the_drafts_gains_and_initial_pacing_rate() {
    let cc = Bbr::new(BbrConfig::default(), MSS);
    assert_eq!(cc.mode(), BbrMode::Startup);
    assert_eq!((cc.pacing_gain, cc.cwnd_gain), table_gains(BbrMode::Startup));
    assert_eq!(cc.window(), 12_000, "RFC 9002 initial window");
    // §5.6.2 InitPacingRate before any RTT sample: 2.77 * InitialCwnd / 1 ms.
    assert_eq!(cc.pacing_rate(), Some((2.77 * 12_000.0 / 0.001) as u64));
    assert_eq!(cc.inflight_longterm, INFINITE);
    assert_eq!(cc.snapshot().phase, Phase::SlowStart);
}

#[test]
fn exiting_startup_on_bandwidth_plateau() {
    // A.1: Startup -> Drain once three rounds grow the rate by less than 25%.
    let mut sim = lossless();
    let mut startup_pacing = 0;
    let mut counts = Vec::new();
    while sim.cc.state == BbrMode::Startup {
        sim.step();
        assert!(sim.elapsed() < Duration::from_secs(5));
        if sim.cc.state == BbrMode::Startup && sim.cc.has_seen_rtt {
            // After InitPacingRate with the first RTT sample, Startup never
            // lowers its pacing rate (§5.6.2).
            let rate = sim.cc.pacing_rate().unwrap();
            assert!(rate >= startup_pacing, "{rate} < {startup_pacing}");
            startup_pacing = rate;
            if counts.last() != Some(&sim.cc.full_bw_count) {
                counts.push(sim.cc.full_bw_count);
            }
        }
    }
    let t = &sim.transitions[0];
    assert_eq!((t.from, t.to), (BbrMode::Startup, BbrMode::Drain));
    assert!(t.after.full_bw_reached && t.after.full_bw_now);
    assert_eq!(t.after.full_bw_count, 3);
    // The count went 0, 1, 2 before the exit: consecutive rounds.
    assert!(counts.ends_with(&[0, 1, 2]), "{counts:?}");
    assert_eq!(sim.drops, 0);
    // "ensure the estimated bandwidth (BBR.max_bw) is close (i.e., within
    // 2%) to the simulated bandwidth".
    let err = t.after.max_bw / TEN_MBIT - 1.0;
    assert!(err.abs() < 0.02, "max_bw {} vs {TEN_MBIT}", t.after.max_bw);
    let min_rtt = t.after.min_rtt.unwrap();
    assert!(min_rtt >= ms(40) && min_rtt < ms(41), "{min_rtt:?}");
    assert_eq!((t.after.pacing_gain, t.after.cwnd_gain), table_gains(BbrMode::Drain));
}

#[test]
fn exiting_drain_based_on_inflight() {
    // A.3: Drain -> ProbeBW_DOWN when inflight <= Inflight(1.0).
    let mut sim = lossless();
    sim.run_until_state(BbrMode::Drain, Duration::from_secs(5));
    let drain = sim.transitions.len();
    sim.run_until(Duration::from_secs(2), |s| s.cc.state != BbrMode::Drain);
    let t = &sim.transitions[drain];
    let cc = &t.after;
    // EnterProbeBW starts ProbeBW_DOWN; with inflight already at the BDP and
    // no inflight_longterm, the same ACK's UpdateProbeBWCyclePhase finds it
    // time to cruise (§5.3.3.9 IsTimeToCruise).
    assert_eq!(t.from, BbrMode::Drain);
    assert!(
        matches!(t.to, BbrMode::ProbeBwDown | BbrMode::ProbeBwCruise),
        "{:?}",
        t.to
    );
    assert_eq!(cc.cycle_stamp, Some(sim.t0 + t.at), "ProbeBW_DOWN started on this ACK");
    assert!(cc.inflight() <= cc.inflight_with_gain(cc.bw, 1.0));
    assert!(
        cc.round_count <= cc.drain_start_round + 3,
        "left by inflight, not by time"
    );
    assert_eq!((cc.pacing_gain, cc.cwnd_gain), table_gains(t.to));
}

#[test]
fn exiting_drain_based_on_time() {
    // A.4: the bandwidth falls when Drain begins, so Drain's 0.5 x max_bw
    // cannot empty the queue; ProbeBW begins after 3 rounds of Drain.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::Drain, Duration::from_secs(5));
    sim.rate = TEN_MBIT * 0.45;
    let drain = sim.transitions.len();
    sim.run_until(Duration::from_secs(5), |s| s.cc.state != BbrMode::Drain);
    let t = &sim.transitions[drain];
    assert_eq!((t.from, t.to), (BbrMode::Drain, BbrMode::ProbeBwDown));
    let cc = &t.after;
    assert_eq!(cc.round_count, cc.drain_start_round + 4);
    assert!(cc.inflight() > cc.inflight_with_gain(cc.bw, 1.0));
}

/// Check §5.6's control parameters against the model after every event of
/// a run past Startup.
fn check_controls(s: &Sim) {
    let cc = &s.cc;
    let (pacing_gain, cwnd_gain) = table_gains(cc.state);
    assert_eq!(
        (cc.pacing_gain, cc.cwnd_gain),
        (pacing_gain, cwnd_gain),
        "{:?}",
        cc.state
    );
    if cc.full_bw_reached && !cc.idle_restart && cc.bw > 0.0 {
        // SetPacingRate: pacing_gain * bw * (100 - 1) / 100.
        let want = pacing_gain * cc.bw * 0.99;
        assert!(
            (cc.pacing_rate - want).abs() <= want * 1e-12,
            "{} vs {want}",
            cc.pacing_rate
        );
        // SetCwnd with BBR.full_bw_reached: never above max_inflight (but MinPipeCwnd).
        assert!(cc.cwnd <= cc.max_inflight.max(4 * MSS));
    }
    let quantum = (cc.pacing_rate * 0.001).min(65_536.0) as u64;
    assert_eq!(cc.send_quantum().unwrap(), quantum.max(2 * MSS));
    assert!(cc.window() >= 4 * MSS || cc.recovery.is_open());
}

#[test]
fn the_probe_bw_cycle_down_cruise_refill_up() {
    // 10 Mbit/s, 40 ms: BDP ~ 41 packets, so the Reno-coexistence bound
    // (§5.3.3.8.2, min(BDP, 63) rounds, ~1.7 s) starts each probe before
    // T_bbr's 2-3 s.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwDown, Duration::from_secs(5));
    let start = sim.transitions.len();
    sim.run_for(Duration::from_secs(12), check_controls);
    assert_eq!(sim.drops, 0);
    let tr = &sim.transitions[start..];
    for t in tr {
        assert!(allowed(t.from, t.to), "{:?} -> {:?} at {:?}", t.from, t.to, t.at);
    }
    let count = |from, to| tr.iter().filter(|t| (t.from, t.to) == (from, to)).count();
    use BbrMode::*;
    assert!(count(ProbeBwDown, ProbeBwCruise) >= 3, "{:?}", summary(tr));
    assert!(count(ProbeBwRefill, ProbeBwUp) >= 3);
    assert!(count(ProbeBwUp, ProbeBwDown) >= 3);
    let mut up_cycles = Vec::new();
    for (i, t) in tr.iter().enumerate() {
        let cc = &t.after;
        match (t.from, t.to) {
            (ProbeBwDown, ProbeBwCruise) => {
                // IsTimeToCruise: headroom and no queue.
                assert!(cc.inflight() <= cc.inflight_with_headroom());
                assert!(cc.inflight() <= cc.inflight_with_gain(cc.max_bw, 1.0));
            }
            (ProbeBwDown | ProbeBwCruise, ProbeBwRefill) => {
                // IsTimeToProbeBW: the wall clock or the Reno bound, in rounds.
                let waited = t.at - cc.cycle_stamp.unwrap().duration_since(sim.t0);
                let reno = (cc.target_inflight() / MSS).min(63);
                assert!(
                    waited > cc.bw_probe_wait || cc.rounds_since_probe_up >= reno,
                    "waited {waited:?} of {:?}, {} of {reno} rounds",
                    cc.bw_probe_wait,
                    cc.rounds_since_probe_up
                );
                assert!(cc.bw_probe_wait >= Duration::from_secs(2) && cc.bw_probe_wait < Duration::from_secs(3));
                assert!(cc.bw_shortterm.is_infinite() && cc.inflight_shortterm == INFINITE);
            }
            (ProbeBwRefill, ProbeBwUp) => {
                // One packet-timed round of REFILL.
                let refill = &tr[i - 1];
                assert_eq!(refill.to, ProbeBwRefill);
                assert_eq!(cc.round_count, refill.after.round_count + 1);
                assert!(cc.is_bw_probe_sample);
                up_cycles.push(cc.max_bw_filter.cycle_count);
            }
            (ProbeBwUp, ProbeBwDown) => {
                // IsTimeToGoDown on a plateau: no loss, full_bw_now.
                let up = &tr[i - 1];
                assert!(!cc.prev_probe_too_high);
                assert!(cc.round_count >= up.after.round_count + 3, "a plateau takes 3 rounds");
            }
            _ => {}
        }
    }
    // §5.5.6: the max_bw filter advances a round after each UP (and once
    // more after a ProbeRTT, which restarts the cycle at ProbeBW_DOWN).
    for w in up_cycles.windows(2) {
        assert!(w[1] > w[0] && w[1] <= w[0] + 2, "{up_cycles:?}");
    }
    // max_bw stays the path's rate through the cycles.
    assert!((sim.cc.max_bw / TEN_MBIT - 1.0).abs() < 0.02);
}

fn summary(tr: &[Transition]) -> Vec<(Duration, BbrMode)> {
    tr.iter().map(|t| (t.at, t.to)).collect()
}

#[test]
fn bandwidth_probes_wait_two_to_three_seconds_on_a_large_bdp() {
    // 100 Mbit/s, 100 ms: BDP ~ 1040 packets, so the Reno bound is 63
    // rounds (6.3 s) and T_bbr (2-3 s, §5.3.3.8.2) starts the probe.
    let mut waits = Vec::new();
    for seed in [0, 1] {
        let config = BbrConfig {
            seed,
            ..BbrConfig::default()
        };
        let mut sim = Sim::new(config, 12.5e6, ms(100), u64::MAX);
        sim.run_until_state(BbrMode::ProbeBwDown, Duration::from_secs(5));
        sim.run_until_state(BbrMode::ProbeBwRefill, Duration::from_secs(4));
        let t = sim.transitions.last().unwrap();
        let cc = &t.after;
        let waited = t.at - cc.cycle_stamp.unwrap().duration_since(sim.t0);
        assert!(waited > cc.bw_probe_wait, "{waited:?} {:?}", cc.bw_probe_wait);
        // The first ACK after the wait ends it (ACKs arrive every ~0.1 ms).
        assert!(waited < cc.bw_probe_wait + ms(1), "{waited:?} {:?}", cc.bw_probe_wait);
        assert!(cc.rounds_since_probe_up < 63);
        waits.push(cc.bw_probe_wait);
    }
    assert_ne!(waits[0], waits[1], "seeds draw different waits");
}

#[test]
fn runs_are_reproducible() {
    let run = || {
        let mut sim = lossless();
        sim.run_for(Duration::from_secs(4), |_| {});
        summary(&sim.transitions)
    };
    assert_eq!(run(), run());
}

#[test]
fn entering_and_exiting_probe_rtt() {
    // A.10: no lower RTT for ProbeRTTInterval (the path's RTT never falls
    // below the first sample) -> ProbeRTT, then back to ProbeBW_CRUISE.
    let mut sim = lossless();
    let mut in_probe_rtt = Vec::new();
    sim.run_for(Duration::from_secs(12), |s| {
        if s.cc.state == BbrMode::ProbeRtt {
            in_probe_rtt.push((s.now, s.cc.cwnd, s.cc.probe_rtt_cwnd(), s.cc.inflight()));
        }
    });
    let tr = &sim.transitions;
    let entries: Vec<&Transition> = tr.iter().filter(|t| t.to == BbrMode::ProbeRtt).collect();
    assert_eq!(entries.len(), 2, "{:?}", summary(tr));
    for e in &entries {
        // Entered once the min-delay stamp was more than 5 s old ...
        let stamp = e.probe_stamp_before.unwrap();
        let age = sim.t0 + e.at - stamp;
        assert!(
            age > Duration::from_secs(5) && age < Duration::from_millis(5100),
            "{age:?}"
        );
        assert_eq!((e.after.pacing_gain, e.after.cwnd_gain), table_gains(BbrMode::ProbeRtt));
    }
    // ... with cwnd held at ProbeRTTCwnd = max(0.5 BDP, 4 SMSS).
    for &(_, cwnd, cap, _) in &in_probe_rtt {
        assert!(cwnd <= cap, "{cwnd} > {cap}");
    }
    let exits: Vec<&Transition> = tr.iter().filter(|t| t.from == BbrMode::ProbeRtt).collect();
    assert_eq!(exits.len(), 2);
    for (e, x) in entries.iter().zip(&exits) {
        assert_eq!(x.to, BbrMode::ProbeBwCruise, "full_bw_reached: back to ProbeBW");
        // ProbeRTTDuration after inflight fell to ProbeRTTCwnd, and a round.
        let drained = in_probe_rtt
            .iter()
            .find(|&&(t, _, cap, inflight)| t >= sim.t0 + e.at && inflight <= cap)
            .unwrap()
            .0;
        assert!(sim.t0 + x.at > drained + ms(200));
        assert!(x.after.round_count > e.after.round_count);
        // RestoreCwnd: the cwnd saved at entry comes back (up to the model's caps).
        assert!(x.after.cwnd >= e.after.prior_cwnd.min(x.after.max_inflight));
        assert!(x.after.bw_shortterm.is_infinite(), "ResetShortTermModel");
    }
    // The exit schedules the next ProbeRTT ProbeRTTInterval later.
    let gap = entries[1].at - exits[0].at;
    assert!(
        gap > Duration::from_secs(5) && gap < Duration::from_millis(5100),
        "{gap:?}"
    );
}

#[test]
fn probe_rtt_during_startup_returns_to_startup_and_app_limited_startup_never_ends() {
    // A.20 and A.7: an application sending 1 Mbit/s on a 10 Mbit/s path
    // keeps every sample app-limited, so Startup never sees a plateau; after
    // 5 s without a lower RTT it enters ProbeRTT and comes back to Startup.
    let mut sim = lossless();
    sim.app = App::Rate {
        rate: TEN_MBIT / 10.0,
        since: sim.t0,
        base: 0,
    };
    sim.run_for(Duration::from_secs(7), |s| assert!(!s.cc.full_bw_reached));
    let modes: Vec<(BbrMode, BbrMode)> = sim.transitions.iter().map(|t| (t.from, t.to)).collect();
    assert_eq!(
        modes,
        [
            (BbrMode::Startup, BbrMode::ProbeRtt),
            (BbrMode::ProbeRtt, BbrMode::Startup)
        ]
    );
    assert!(sim.transitions[0].at > Duration::from_secs(5));
    assert_eq!(sim.drops, 0);
    // App-limited samples above the estimate still raise it (§5.5.4): it
    // reflects the application's rate.
    let ratio = sim.cc.max_bw / (TEN_MBIT / 10.0);
    assert!(ratio > 0.9 && ratio < 1.5, "{ratio}");
}

#[test]
fn skipping_probe_rtt_due_to_application_limited_sending() {
    // A.11: after an idle period longer than ProbeRTTInterval the restart is
    // marked idle_restart and ProbeRTT is skipped.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwCruise, Duration::from_secs(5));
    let before = sim.cc.max_bw;
    sim.app = App::Paused {
        until: sim.now + Duration::from_secs(6),
    };
    sim.run_until(Duration::from_secs(7), |s| {
        s.sent_bytes > 0 && s.flight.is_empty() && s.now > s.t0
    });
    // The connection drained its flight while app-limited ...
    assert!(sim.cc.sampler.is_app_limited());
    // ... and resumes after the pause with nothing in flight.
    let resumed = sim.transitions.len();
    sim.run_until(Duration::from_secs(7), |s| !s.flight.is_empty());
    assert!(sim.cc.idle_restart, "HandleRestartFromIdle");
    if sim.cc.state.is_probe_bw() {
        // "BBR sets C.pacing_rate to exactly BBR.bw" (with the 1% margin).
        let want = sim.cc.bw * 0.99;
        assert!((sim.cc.pacing_rate - want).abs() < 1e-6 * want);
    }
    sim.run_for(Duration::from_secs(3), |_| {});
    assert!(
        sim.transitions[resumed..].iter().all(|t| t.to != BbrMode::ProbeRtt),
        "{:?}",
        summary(&sim.transitions[resumed..])
    );
    assert!(!sim.cc.idle_restart, "cleared by the first ACK that delivered data");
    assert!(before > 0.0 && (sim.cc.max_bw / TEN_MBIT - 1.0).abs() < 0.02);
}

/// A flow in ProbeBW_UP, a round into the probe's feedback.
fn in_probe_up() -> Sim {
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwDown, Duration::from_secs(5));
    sim.run_until_state(BbrMode::ProbeBwUp, Duration::from_secs(5));
    sim.run_until(Duration::from_secs(1), |s| s.cc.ack_phase == AckPhase::ProbeFeedback);
    assert!(sim.cc.is_bw_probe_sample);
    assert_eq!(sim.cc.state, BbrMode::ProbeBwUp);
    sim
}

/// §5.5.10.2 `InflightAtLoss` computed from the path's own bookkeeping.
fn inflight_at_loss(tx_in_flight: u64, lost_since_sent: u64) -> u64 {
    let inflight_prev = (tx_in_flight - MSS) as f64;
    let lost_prev = (lost_since_sent - MSS) as f64;
    (inflight_prev + (0.02 * inflight_prev - lost_prev) / (1.0 - 0.02)) as u64
}

#[test]
fn loss_while_probing_sets_inflight_longterm_and_ends_the_probe() {
    // §5.5.10.2 (and A.21): losses above LossThresh of a probe's flight set
    // inflight_longterm to where the loss rate crossed 2% (at least Beta x
    // the target) and send ProbeBW_UP to ProbeBW_DOWN.
    let mut sim = in_probe_up();
    let target = sim.cc.target_inflight();
    let lost_before = sim.lost_bytes;
    let gone = sim.lose_oldest(4);
    // HandleLostPacket runs per packet, oldest first: the first one whose
    // losses since its send exceed 2% of its tx_in_flight triggers.
    let (k, p) = gone
        .iter()
        .enumerate()
        .find(|&(k, p)| {
            let lost = lost_before - p.lost_before + (k as u64 + 1) * MSS;
            lost as f64 > p.tx_in_flight as f64 * 0.02
        })
        .expect("4 of ~80 packets lost is above 2%");
    let lost_since = lost_before - p.lost_before + (k as u64 + 1) * MSS;
    let want = inflight_at_loss(p.tx_in_flight, lost_since).max((target as f64 * 0.7) as u64);
    let cc = &sim.cc;
    assert_eq!(cc.inflight_longterm, want);
    assert_eq!(cc.state, BbrMode::ProbeBwDown);
    assert!(cc.prev_probe_too_high && !cc.is_bw_probe_sample);
    assert_eq!(cc.undo_state, Some(BbrMode::ProbeBwUp));
    assert_eq!(cc.snapshot().phase, Phase::Recovery);

    // Precautionary probing (§5.3.3.6): the next UP stops as soon as
    // inflight reaches inflight_longterm, and a round later (no excess loss)
    // goes straight back to REFILL and UP, which then persists.
    let start = sim.transitions.len();
    sim.run_for(Duration::from_secs(6), |s| {
        if s.cc.state == BbrMode::ProbeBwCruise {
            // BoundCwndForModel: CRUISE keeps Headroom free.
            assert!(s.cc.cwnd <= s.cc.inflight_with_headroom().max(4 * MSS));
        }
    });
    let tr = &sim.transitions[start..];
    let ups: Vec<usize> = (0..tr.len()).filter(|&i| tr[i].to == BbrMode::ProbeBwUp).collect();
    assert!(ups.len() >= 2, "{:?}", summary(tr));
    let down = &tr[ups[0] + 1];
    assert_eq!(down.to, BbrMode::ProbeBwDown);
    assert!(down.after.prev_probe_precautionary && !down.after.prev_probe_too_high);
    // Stopped as the flight reached inflight_longterm (within the packet a
    // window-limited sender keeps free).
    assert!(down.after.prior_inflight + MSS >= down.after.inflight_longterm);
    let refill = &tr[ups[0] + 2];
    assert_eq!(refill.to, BbrMode::ProbeBwRefill, "{:?}", summary(tr));
    assert_eq!(refill.after.round_count, down.after.round_count + 1);
    assert!(!refill.after.prev_probe_precautionary);
    // The loss-free probes raised inflight_longterm again.
    assert!(sim.cc.inflight_longterm > want);
}

#[test]
fn handling_spurious_fast_recovery() {
    // A.18: a recovery declared spurious restores the models and the probe.
    let mut sim = in_probe_up();
    let cwnd = sim.cc.cwnd;
    sim.lose_oldest(4);
    assert_eq!(sim.cc.state, BbrMode::ProbeBwDown);
    assert_ne!(sim.cc.inflight_longterm, INFINITE);
    sim.cc.on_spurious_loss(sim.now);
    let cc = &sim.cc;
    assert_eq!(cc.inflight_longterm, INFINITE, "restored to its value before the loss");
    assert_eq!(cc.state, BbrMode::ProbeBwRefill, "back to probing");
    assert!(cc.cwnd >= cwnd, "RestoreCwnd");
    assert_eq!(cc.undo_state, None);
    assert!(!cc.is_loss_in_round);
    assert_ne!(cc.snapshot().phase, Phase::Recovery);
}

#[test]
fn loss_when_not_probing_lowers_the_short_term_model_once_per_round() {
    // §5.5.10.3: at the end of a round with loss, bw_shortterm =
    // max(bw_latest, Beta x bw_shortterm) and inflight_shortterm likewise,
    // starting from max_bw and cwnd (InitLowerBounds).
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwCruise, Duration::from_secs(5));
    sim.lose_oldest(1);
    assert!(sim.cc.is_loss_in_round);
    assert!(
        sim.cc.bw_shortterm.is_infinite(),
        "nothing changes before the round ends"
    );
    sim.run_until(Duration::from_secs(1), |s| s.cc.bw_shortterm.is_finite());
    let (cc, pre) = (&sim.cc, sim.pre.unwrap());
    let bw_latest = pre.bw_latest.max(cc.rs.delivery_rate.unwrap_or(0.0));
    assert_eq!(cc.bw_shortterm, bw_latest.max(0.7 * cc.max_bw));
    let inflight_latest = pre.inflight_latest.max(cc.rs.delivered);
    assert_eq!(
        cc.inflight_shortterm,
        inflight_latest.max((0.7 * pre.cwnd as f64) as u64)
    );
    assert_eq!(cc.bw, cc.max_bw.min(cc.bw_shortterm), "BoundBWForModel");
    assert!(cc.cwnd <= cc.inflight_shortterm.max(4 * MSS), "BoundCwndForModel");
    assert!(!cc.is_loss_in_round);
    // Another loss in the next round lowers it by Beta at most once more.
    let (bw1, inflight1) = (cc.bw_shortterm, cc.inflight_shortterm);
    sim.lose_oldest(1);
    sim.lose_oldest(1);
    let rounds = sim.cc.round_count;
    sim.run_until(Duration::from_secs(1), |s| s.cc.bw_shortterm != bw1);
    assert!(sim.cc.bw_shortterm >= 0.7 * bw1 - 1e-9);
    assert!(sim.cc.inflight_shortterm >= (0.7 * inflight1 as f64) as u64);
    assert!(sim.cc.round_count <= rounds + 2);
    // REFILL discards the short-term model.
    sim.run_until_state(BbrMode::ProbeBwRefill, Duration::from_secs(4));
    assert!(sim.cc.bw_shortterm.is_infinite());
    assert_eq!(sim.cc.inflight_shortterm, INFINITE);
}

#[test]
fn exiting_startup_on_high_loss() {
    // §5.3.1.3: a queue of 8 packets against a BDP of ~41: Startup overflows
    // it. After a full round in recovery with >2% loss and >= 6 loss
    // events, Startup ends with inflight_longterm = max(bdp, inflight_latest).
    let mut sim = Sim::new(BbrConfig::default(), TEN_MBIT, ms(40), 8 * MSS);
    let mut events_seen = 0;
    sim.run_until(Duration::from_secs(5), |s| {
        events_seen = events_seen.max(s.cc.loss_events_in_round);
        s.cc.state != BbrMode::Startup
    });
    let t = &sim.transitions[0];
    assert_eq!((t.from, t.to), (BbrMode::Startup, BbrMode::Drain));
    let cc = &t.after;
    assert!(sim.drops > 0);
    assert!(events_seen >= 6, "{events_seen}");
    assert!(cc.full_bw_count < 3, "left on loss, not on a plateau");
    assert_eq!(cc.undo_state, Some(BbrMode::Startup));
    assert!(cc.full_bw_reached && cc.full_bw_now);
    // max(bdp, inflight_latest): at least a BDP of the path.
    let bdp = (TEN_MBIT * 0.040) as u64;
    assert!(cc.inflight_longterm >= bdp * 9 / 10, "{}", cc.inflight_longterm);
    assert!(cc.inflight_longterm < 3 * bdp, "{}", cc.inflight_longterm);
}

#[test]
fn persistent_congestion_collapses_cwnd_and_recovery_restores_it() {
    // §5.6.4.4 OnEnterRTO: cwnd = inflight + 1 SMSS (at least 2 SMSS);
    // leaving recovery restores the cwnd saved on entry.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwCruise, Duration::from_secs(5));
    let cwnd = sim.cc.cwnd;
    let n = sim.flight.len();
    let newest = sim.flight.back().unwrap().sent;
    sim.flight.clear();
    sim.dropped_in_flight = 0;
    sim.lose(newest, n as u64 * MSS, CongestionKind::PersistentCongestion);
    assert_eq!(sim.cc.inflight(), 0);
    assert_eq!(sim.cc.window(), 2 * MSS);
    assert_eq!(sim.cc.prior_cwnd, cwnd);
    assert_eq!(sim.cc.snapshot().phase, Phase::Recovery);
    // The next packets are sent after the recovery began: their ACK ends it.
    let mut low = u64::MAX;
    sim.run_until(Duration::from_secs(1), |s| {
        if s.cc.recovery.is_open() {
            low = s.cc.cwnd;
        }
        !s.cc.recovery.is_open()
    });
    assert!(low < cwnd / 4);
    assert!(sim.cc.cwnd >= cwnd.min(sim.cc.inflight_shortterm).min(sim.cc.max_inflight));
}

#[test]
fn ecn_marks_are_treated_as_congestion() {
    // §3.7: a CE mark counts as the loss of one SMSS: outside probing it
    // feeds the short-term model, while probing it counts toward LossThresh.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwCruise, Duration::from_secs(5));
    let inflight = sim.cc.inflight();
    sim.lose(sim.now, 0, CongestionKind::Ecn);
    assert!(sim.cc.is_loss_in_round);
    assert_eq!(sim.cc.sampler.lost(), MSS);
    assert_eq!(sim.cc.inflight(), inflight, "nothing left the network");
    assert_ne!(sim.cc.snapshot().phase, Phase::Recovery);
    sim.run_until(Duration::from_secs(1), |s| s.cc.bw_shortterm.is_finite());

    let mut sim = in_probe_up();
    let tx = sim.cc.inflight() as f64;
    let marks = (tx * 0.02 / MSS as f64).floor() as usize + 1;
    for _ in 0..marks {
        sim.lose(sim.now, 0, CongestionKind::Ecn);
    }
    assert_eq!(sim.cc.state, BbrMode::ProbeBwDown, "{marks} marks of {tx} bytes");
    assert_ne!(sim.cc.inflight_longterm, INFINITE);
}

#[test]
fn app_limited_samples_do_not_lower_max_bw() {
    // A.22 and §5.5.4: while the application sends at a tenth of the path
    // rate, ProbeBW's samples are app-limited and max_bw keeps the path rate.
    let mut sim = lossless();
    sim.run_until_state(BbrMode::ProbeBwCruise, Duration::from_secs(5));
    let max_bw = sim.cc.max_bw;
    sim.app = App::Rate {
        rate: TEN_MBIT / 10.0,
        since: sim.now,
        base: sim.sent_bytes,
    };
    sim.run_for(Duration::from_secs(8), |s| {
        assert!(s.cc.max_bw >= max_bw, "{} < {max_bw}", s.cc.max_bw);
        assert_ne!(s.cc.state, BbrMode::Startup);
    });
    // The cycles went on (REFILL, UP) without advancing the filter away.
    assert!(sim.transitions.iter().any(|t| t.to == BbrMode::ProbeBwUp));
}

#[test]
fn odd_inputs_keep_window_and_pacing_sane() {
    let mut cc = Bbr::new(BbrConfig::default(), MSS);
    fuzz_odd_inputs(&mut cc, |cc| {
        let rate = cc.pacing_rate().unwrap();
        assert!(rate >= 1);
        assert!(cc.pacing_rate.is_finite() && cc.pacing_rate > 0.0);
        assert!(cc.cwnd as f64 <= MAX_VOLUME);
        assert!(cc.bw.is_finite() && cc.max_bw.is_finite());
    });
}

#[test]
fn config_checks_name_the_parameter() {
    let bad = |f: fn(&mut BbrConfig)| {
        let mut c = BbrConfig::default();
        f(&mut c);
        c.validate().unwrap_err()
    };
    assert!(BbrConfig::default().validate().is_ok());
    let e = bad(|c| c.up_gain = 0.5);
    assert_eq!((e.controller(), e.key()), ("bbr", "up_gain"));
    assert_eq!(e.to_string(), "up_gain: 0.5 must be in [1, 100]");
    assert_eq!(bad(|c| c.startup_gain = 0.5).key(), "startup_gain");
    assert_eq!(bad(|c| c.drain_gain = 1.5).key(), "drain_gain");
    assert_eq!(bad(|c| c.beta = f64::NAN).key(), "beta");
    assert_eq!(bad(|c| c.loss_thresh = 1.0).key(), "loss_thresh");
    assert_eq!(bad(|c| c.headroom = -0.1).key(), "headroom");
    assert_eq!(bad(|c| c.pacing_margin = 100.0).key(), "margin");
    assert_eq!(
        bad(|c| c.probe_rtt_duration = Duration::ZERO).key(),
        "probe_rtt_duration"
    );
    assert_eq!(
        bad(|c| c.min_rtt_window = Duration::from_secs(1)).key(),
        "min_rtt_window"
    );
    assert_eq!(bad(|c| c.initial_window = Some(0)).key(), "iw");
}
