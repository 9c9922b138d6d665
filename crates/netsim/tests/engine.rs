//! Hand-computed timelines: link timing, DropTail, cut-off modes, rate
//! changes, random loss, host timers, the oracle and the metrics writers.

mod common;

use std::time::Duration;

use common::{Pacer, Recorder, Scripted};
use tput_netsim::*;

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn t_us(us: u64) -> SimTime {
    SimTime::from_nanos(us * US)
}

/// One link a -> b; a Scripted sender at a:1 and a Recorder at b:2.
struct OneLink {
    sim: Simulator,
    link: LinkId,
    rec: HostId,
}

fn one_link(cfg: LinkConfig, sends: Vec<(SimTime, usize)>, seed: u64) -> OneLink {
    let chain = Chain::build(&[cfg]).unwrap();
    let (a, b) = (chain.nodes[0], chain.nodes[1]);
    let link = chain.forward[0];
    let mut sim = Simulator::new(chain.topology, seed);
    let dst = Addr::new(b, 2);
    let rec = sim.attach(dst, Recorder::default()).unwrap();
    let script = sends.into_iter().map(|(t, len)| (t, dst, 1, len)).collect();
    sim.attach(Addr::new(a, 1), Scripted::new(script)).unwrap();
    OneLink { sim, link, rec }
}

fn arrivals_ns(o: &OneLink) -> Vec<(u32, u64)> {
    o.sim
        .host::<Recorder>(o.rec)
        .unwrap()
        .got
        .iter()
        .map(|g| (g.3, g.0.as_nanos()))
        .collect()
}

fn assert_conserved(s: &LinkStats) {
    let sum =
        s.delivered.packets + s.dropped().packets + s.queued.packets + s.in_transmission.packets + s.in_flight.packets;
    assert_eq!(s.offered.packets, sum, "{s:?}");
    let sum_b = s.delivered.bytes + s.dropped().bytes + s.queued.bytes + s.in_transmission.bytes + s.in_flight.bytes;
    assert_eq!(s.offered.bytes, sum_b, "{s:?}");
}

#[test]
fn single_packet_and_back_to_back_timing() {
    // 10 Mbit/s, 3 ms; 972 B payload + 28 B overhead = 1000 B = 800 us.
    let cfg = LinkConfig::new(Rate::from_mbit_per_sec(10), Duration::from_millis(3));
    let t0 = SimTime::from_millis(1);
    let o = {
        let mut o = one_link(cfg.clone(), vec![(t0, 972)], 1);
        o.sim.run_until(SimTime::from_millis(50));
        o
    };
    assert_eq!(arrivals_ns(&o), [(0, MS + 800 * US + 3 * MS)]);
    let s = o.sim.link_stats(o.link);
    assert_eq!(s.delivered, Counter::new(1, 1000));
    assert_eq!(s.busy_ns, 800 * US);

    // Three back to back: spaced by exactly one serialization time.
    let mut o = one_link(cfg, vec![(t0, 972), (t0, 972), (t0, 972)], 1);
    o.sim.run_until(SimTime::from_millis(50));
    assert_eq!(arrivals_ns(&o), [(0, 4_800 * US), (1, 5_600 * US), (2, 6_400 * US)]);
    assert_conserved(&o.sim.link_stats(o.link));
}

#[test]
fn serialization_does_not_drift() {
    // 3 Mbit/s: 1000 wire bytes take 2 666 666.67 ns. Finish times are
    // ceil(k * 8000e9 / 3e6) from the start of the run, not k * ceil(..).
    let cfg = LinkConfig::new(Rate::from_mbit_per_sec(3), Duration::ZERO)
        .with_overhead(0)
        .with_queue(QueueLimit::Packets(1000));
    let sends = vec![(SimTime::ZERO, 1000); 300];
    let mut o = one_link(cfg, sends, 1);
    o.sim.run_until(SimTime::from_secs(2));
    let got = arrivals_ns(&o);
    assert_eq!(got.len(), 300);
    assert_eq!(got[0].1, 2_666_667);
    assert_eq!(got[1].1, 5_333_334);
    assert_eq!(got[2].1, 8_000_000);
    assert_eq!(got[299].1, 800_000_000);
}

#[test]
fn droptail_drops_exactly_the_arrivals_that_find_it_full() {
    // 8 Mbit/s: 1000 wire B = 1 ms. Queue of 3 waiting packets (the one on
    // the wire is not in the queue).
    let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::from_millis(1)).with_queue(QueueLimit::Packets(3));
    let mut sends = vec![(SimTime::ZERO, 972); 10];
    // At 2.5 ms packet 3 is waiting (1 and 2 have started): room for 2 more.
    sends.extend([(t_us(2_500), 972); 3]);
    let mut o = one_link(cfg, sends, 1);
    o.sim.run_until(SimTime::from_millis(30));
    let got = arrivals_ns(&o);
    let seqs: Vec<u32> = got.iter().map(|g| g.0).collect();
    assert_eq!(seqs, [0, 1, 2, 3, 10, 11]);
    let times: Vec<u64> = got.iter().map(|g| g.1 / US).collect();
    assert_eq!(times, [2_000, 3_000, 4_000, 5_000, 6_000, 7_000]);
    let s = o.sim.link_stats(o.link);
    assert_eq!(s.dropped_queue, Counter::new(7, 7000));
    assert_eq!(s.dropped().packets, 7);
    assert_conserved(&s);

    // Byte limit: 2500 B holds two 1000 B packets, not three.
    let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::ZERO).with_queue(QueueLimit::Bytes(2500));
    let mut o = one_link(cfg, vec![(SimTime::ZERO, 972); 5], 1);
    o.sim.run_until(SimTime::from_millis(30));
    assert_eq!(arrivals_ns(&o).iter().map(|g| g.0).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(o.sim.link_stats(o.link).dropped_queue.packets, 2);
}

/// 8 Mbit/s (1 ms per 1000 wire bytes), 1 ms delay; one packet sent at
/// k + 0.5 ms for k = 0..=10; cut-off period 10 ms, 60 % connected.
fn cut_run(cut: CutOff) -> (Vec<(u32, u64)>, LinkStats) {
    let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::from_millis(1)).with_cutoff(cut);
    let sends = (0..=10).map(|k| (t_us(k * 1000 + 500), 972)).collect();
    let mut o = one_link(cfg, sends, 1);
    o.sim.run_until(SimTime::from_millis(40));
    let got: Vec<(u32, u64)> = arrivals_ns(&o).into_iter().map(|(s, t)| (s, t / US)).collect();
    let s = o.sim.link_stats(o.link);
    assert_conserved(&s);
    (got, s)
}

const PERIOD: Duration = Duration::from_millis(10);

#[test]
fn cutoff_drop_timeline() {
    // Connected [0, 6), cut [6, 10). Packet k is on the wire [k+.5, k+1.5).
    // 5 is on the wire at 6 ms: lost. 6..9 arrive during the cut: dropped.
    let (got, s) = cut_run(CutOff::new(PERIOD, 0.6, CutMode::Drop));
    assert_eq!(
        got,
        [(0, 2_500), (1, 3_500), (2, 4_500), (3, 5_500), (4, 6_500), (10, 12_500)]
    );
    assert_eq!(s.dropped_cutoff.packets, 5);
    assert_eq!(s.dropped_queue.packets, 0);
    // Busy: 6 full packets + 0.5 ms of the aborted one.
    assert_eq!(s.busy_ns, 6 * MS + 500 * US);

    // Phase 4 ms: cut [0, 4), connected [4, 10), cut [10, 14).
    let (got, s) = cut_run(CutOff::new(PERIOD, 0.6, CutMode::Drop).with_phase(Duration::from_millis(4)));
    assert_eq!(got, [(4, 6_500), (5, 7_500), (6, 8_500), (7, 9_500), (8, 10_500)]);
    // 0..3 and 10 arrive during cuts, 9 is on the wire at 10 ms.
    assert_eq!(s.dropped_cutoff.packets, 6);
}

#[test]
fn cutoff_hold_timeline() {
    // The guarded hold: 5 would be on the wire [5.5, 6.5) across the cut at
    // 6 ms, so it is not started; it and 6..9 wait and go out back to back
    // from 10 ms; 10 (arriving at 10.5) queues behind them. Nothing is lost.
    let (got, s) = cut_run(CutOff::new(PERIOD, 0.6, CutMode::Hold));
    assert_eq!(
        got,
        [
            (0, 2_500),
            (1, 3_500),
            (2, 4_500),
            (3, 5_500),
            (4, 6_500),
            (5, 12_000),
            (6, 13_000),
            (7, 14_000),
            (8, 15_000),
            (9, 16_000),
            (10, 17_000)
        ]
    );
    assert_eq!(s.dropped().packets, 0);
    assert_eq!(s.queued_max.packets, 5, "5..9 waited together");
    // No transmission overlaps a cut: every finish (arrival - 1 ms) is in a
    // connected interval [0, 6) or [10, 16).
    assert!(
        got.iter()
            .all(|&(_, t)| (1_000..=7_000).contains(&t) || (11_000..=17_000).contains(&t))
    );

    // A frame exactly as long as the connected interval (6 ms = 6000 B)
    // fits when the link is idle at its start, never otherwise: sent at
    // 0.5 ms it waits for the next connected interval, at 10 ms.
    let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::ZERO)
        .with_overhead(0)
        .with_cutoff(CutOff::new(PERIOD, 0.6, CutMode::Hold));
    let mut o = one_link(cfg, vec![(t_us(500), 6_000)], 1);
    o.sim.run_until(SimTime::from_millis(40));
    assert_eq!(arrivals_ns(&o), [(0, 16 * MS)]);
    // A longer frame never passes: the link's limit, not the transport's.
    let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::ZERO)
        .with_overhead(0)
        .with_cutoff(CutOff::new(PERIOD, 0.6, CutMode::Hold));
    let mut o = one_link(cfg, vec![(t_us(0), 6_001), (t_us(100), 10)], 1);
    o.sim.run_until(SimTime::from_millis(40));
    assert!(arrivals_ns(&o).is_empty());
    let s = o.sim.link_stats(o.link);
    assert_eq!((s.queued.packets, s.dropped().packets), (2, 0));
}

#[test]
fn cutoff_pause_on_a_switch_pauses_the_sender() {
    // sender -> switch -> receiver, 8 Mbit/s (1 ms per 1000 B), 1 ms per hop;
    // the switch's link is cut [6, 10) ms of every 10 ms in `pause` mode.
    // The sender's link gets the PAUSE schedule shifted 1 ms earlier: its
    // "cut" is [5, 9) ms and it stops starting frames one 1500 B frame
    // (1.5 ms) before that, at 3.5 ms.
    let hop = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::from_millis(1)).with_overhead(0);
    let cut = CutOff::new(PERIOD, 0.6, CutMode::Pause);
    let chain = Chain::build(&[hop.clone(), hop.clone().with_cutoff(cut)]).unwrap();
    let (_, _, up) = chain.topology.link(chain.forward[0]).unwrap();
    assert_eq!(up.cutoff, Some(cut.upstream_pause(Duration::from_millis(1))));
    assert_eq!(up.cutoff.unwrap().phase, Duration::from_millis(9));
    let (a, c) = (chain.nodes[0], chain.nodes[2]);
    let (l0, l1) = (chain.forward[0], chain.forward[1]);
    let mut sim = Simulator::new(chain.topology, 1);
    let dst = Addr::new(c, 2);
    let rec = sim.attach(dst, Recorder::default()).unwrap();
    // One 1000 B packet every 0.5 ms for 30 ms: twice the link's rate.
    let script = (0..60).map(|k| (t_us(k * 500), dst, 1, 1000)).collect();
    sim.attach(Addr::new(a, 1), Scripted::new(script)).unwrap();
    sim.run_until(SimTime::from_millis(200));
    let got: Vec<u64> = sim
        .host::<Recorder>(rec)
        .unwrap()
        .got
        .iter()
        .map(|g| g.0.as_nanos() / US)
        .collect();
    assert_eq!(got.len(), 60, "nothing is lost");
    for l in [l0, l1] {
        assert_eq!(sim.link_stats(l).dropped().packets, 0);
    }
    // The sender's queue holds the backlog; the switch queues at most the
    // frame that arrives within its own pause lead before the cut.
    assert!(sim.link_stats(l0).queued_max.packets > 20);
    assert!(sim.link_stats(l1).queued_max.packets <= 1);
    // Nothing crosses the switch's link during its cuts: a frame finishing
    // at f reaches the receiver at f + 1 ms, so no arrival in (7, 11) ms mod 10.
    assert!(
        got.iter()
            .all(|&t| !(7_001..11_000).contains(&(t % 10_000 + if t % 10_000 < 1_000 { 10_000 } else { 0 })))
    );
}

#[test]
fn cutoff_hold_abort_timeline() {
    // The unguarded hold: as drop, but 6..9 wait in the queue and go out
    // from 10 ms on; 10 (arriving at 10.5) queues behind them. 5, on the
    // wire when the cut begins, is lost.
    let (got, s) = cut_run(CutOff::new(PERIOD, 0.6, CutMode::HoldAbort));
    assert_eq!(
        got,
        [
            (0, 2_500),
            (1, 3_500),
            (2, 4_500),
            (3, 5_500),
            (4, 6_500),
            (6, 12_000),
            (7, 13_000),
            (8, 14_000),
            (9, 15_000),
            (10, 16_000)
        ]
    );
    assert_eq!(s.dropped_cutoff.packets, 1);
    assert_eq!(s.dropped().packets, 1);
}

#[test]
fn cutoff_pause_timeline() {
    // Lead 2.3 ms: the transmitter stops at 3.7 (and 13.7) ms. 3 started at
    // 3.5 and completes; 4..10 wait; from 10 ms 4, 5, 6, 7 go out (7 starts
    // at 13 < 13.7); 8, 9, 10 wait for the next cut to end at 20 ms.
    let (got, s) = cut_run(CutOff::new(PERIOD, 0.6, CutMode::Pause).with_pause_lead(Duration::from_micros(2_300)));
    assert_eq!(
        got,
        [
            (0, 2_500),
            (1, 3_500),
            (2, 4_500),
            (3, 5_500),
            (4, 12_000),
            (5, 13_000),
            (6, 14_000),
            (7, 15_000),
            (8, 22_000),
            (9, 23_000),
            (10, 24_000)
        ]
    );
    assert_eq!(s.dropped().packets, 0);

    // Default lead (one 1500 B frame = 1.5 ms here): nothing lost either.
    let (got, s) = cut_run(CutOff::new(PERIOD, 0.6, CutMode::Pause));
    assert_eq!(got.len(), 11);
    assert_eq!(s.dropped().packets, 0);
    assert!(got.windows(2).all(|w| w[0].0 < w[1].0));
    // Nothing is on the wire during a cut: every arrival (1 ms after its
    // finish) is outside [7, 11) and [17, 21).
    assert!(
        got.iter()
            .all(|&(_, t)| !(7_000..11_000).contains(&t) && !(17_000..21_000).contains(&t))
    );
}

#[test]
fn rate_change_mid_run() {
    // 8 Mbit/s until 4.5 ms, 16 Mbit/s until 6.2 ms, then 4 Mbit/s.
    // Nine 1000 B packets at t = 0: 0..4 at 1 ms each (4 started at 4 ms
    // and keeps the old rate), 5..7 at 0.5 ms (7 started at 6.0 keeps
    // 16 Mbit/s), 8 at 2 ms.
    let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::from_millis(1)).with_rate_schedule(vec![
        RateStep::new(t_us(4_500), Rate::from_bits_per_sec(16_000_000)),
        RateStep::new(t_us(6_200), Rate::from_bits_per_sec(4_000_000)),
    ]);
    let mut o = one_link(cfg, vec![(SimTime::ZERO, 972); 9], 1);
    o.sim.run_until(SimTime::from_millis(30));
    let times: Vec<u64> = arrivals_ns(&o).iter().map(|g| g.1 / US).collect();
    assert_eq!(times, [2_000, 3_000, 4_000, 5_000, 6_000, 6_500, 7_000, 7_500, 9_500]);
    assert_eq!(o.sim.link_rate(o.link), Some(Rate::from_mbit_per_sec(4)));
}

#[test]
fn bit_error_rate_loss_frequency() {
    // p = 1 - (1 - 1e-5)^(8 * 1000) = 0.076884...; 100 000 packets.
    let ber = 1e-5;
    let cfg = LinkConfig::new(Rate::from_gbit_per_sec(1), Duration::ZERO)
        .with_queue(QueueLimit::Packets(200_000))
        .with_loss(RandomLoss::BitErrorRate(ber));
    let n = 100_000u64;
    let chain = Chain::build(&[cfg]).unwrap();
    let mut sim = Simulator::new(chain.topology, 7);
    let dst = Addr::new(chain.nodes[1], 9);
    sim.attach(dst, Recorder::default()).unwrap();
    // One shared payload, cloned by reference count.
    struct Burst(u64, Addr, bytes::Bytes);
    impl Host for Burst {
        fn on_datagram(&mut self, _: SimTime, _: Addr, _: FlowId, _: Ecn, _: bytes::Bytes) {}
        fn poll_transmit(&mut self, _: SimTime) -> Option<Datagram> {
            (self.0 > 0).then(|| {
                self.0 -= 1;
                Datagram {
                    dst: self.1,
                    flow: 3,
                    ecn: Ecn::NotEct,
                    payload: self.2.clone(),
                }
            })
        }
        fn poll_timeout(&mut self) -> Option<SimTime> {
            None
        }
        fn on_timeout(&mut self, _: SimTime) {}
    }
    sim.attach(
        Addr::new(chain.nodes[0], 1),
        Burst(n, dst, bytes::Bytes::from(vec![0u8; 972])),
    )
    .unwrap();
    sim.run_until(SimTime::from_secs(1));
    let s = sim.link_stats(chain.forward[0]);
    assert_eq!(s.offered.packets, n);
    assert_eq!(s.delivered.packets + s.dropped_random.packets, n);
    let p = 1.0 - (1.0 - ber).powf(8000.0);
    let mean = n as f64 * p;
    let sd = (n as f64 * p * (1.0 - p)).sqrt();
    let lost = s.dropped_random.packets as f64;
    assert!((lost - mean).abs() < 5.0 * sd, "lost {lost}, expected {mean} +- {sd}");
    assert_eq!(sim.flow_stats(3).unwrap().delivered.packets, s.delivered.packets);

    // Packet-loss probability: 10 %, 20 000 packets.
    let cfg = LinkConfig::new(Rate::from_gbit_per_sec(1), Duration::ZERO)
        .with_queue(QueueLimit::Packets(30_000))
        .with_loss(RandomLoss::PacketLoss(0.1));
    let chain = Chain::build(&[cfg]).unwrap();
    let mut sim = Simulator::new(chain.topology, 8);
    let dst = Addr::new(chain.nodes[1], 9);
    sim.attach(dst, Recorder::default()).unwrap();
    sim.attach(
        Addr::new(chain.nodes[0], 1),
        Burst(20_000, dst, bytes::Bytes::from_static(&[0; 100])),
    )
    .unwrap();
    sim.run_until(SimTime::from_secs(1));
    let lost = sim.link_stats(chain.forward[0]).dropped_random.packets as f64;
    let sd = (20_000.0f64 * 0.1 * 0.9).sqrt();
    assert!((lost - 2000.0).abs() < 5.0 * sd, "lost {lost}");
}

/// A host whose wake-up is scripted: the k-th `poll_timeout` after the k-th
/// change returns `wakes[k]`; records when `on_timeout` runs.
struct Sleeper {
    wake: Option<SimTime>,
    fired: Vec<SimTime>,
    polls: u32,
}

impl Host for Sleeper {
    fn on_datagram(&mut self, _: SimTime, _: Addr, _: FlowId, _: Ecn, _: bytes::Bytes) {}
    fn poll_transmit(&mut self, _: SimTime) -> Option<Datagram> {
        None
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        self.polls += 1;
        self.wake
    }
    fn on_timeout(&mut self, now: SimTime) {
        self.fired.push(now);
        self.wake = None;
    }
}

#[test]
fn timers_fire_on_time_and_stale_ones_are_ignored() {
    let chain = Chain::build(&[LinkConfig::new(Rate::from_mbit_per_sec(1), Duration::ZERO)]).unwrap();
    let mut sim = Simulator::new(chain.topology, 1);
    let h = sim
        .attach(
            Addr::new(chain.nodes[0], 1),
            Sleeper {
                wake: Some(SimTime::from_millis(10)),
                fired: vec![],
                polls: 0,
            },
        )
        .unwrap();
    assert_eq!(sim.pending_events(), 1);
    // Move later: no new event (the one at 10 ms will fire, find the host
    // not due and re-arm at 20 ms).
    sim.host_mut::<Sleeper>(h).unwrap().wake = Some(SimTime::from_millis(20));
    sim.kick(h).unwrap();
    assert_eq!(sim.pending_events(), 1);
    sim.run_until(SimTime::from_millis(15));
    assert!(sim.host::<Sleeper>(h).unwrap().fired.is_empty());
    assert_eq!(sim.next_event_time(), Some(SimTime::from_millis(20)));
    // Move earlier: one new event.
    sim.host_mut::<Sleeper>(h).unwrap().wake = Some(SimTime::from_millis(17));
    sim.kick(h).unwrap();
    assert_eq!(sim.pending_events(), 2);
    sim.run_until(SimTime::from_millis(30));
    assert_eq!(sim.host::<Sleeper>(h).unwrap().fired, [SimTime::from_millis(17)]);
    assert_eq!(sim.pending_events(), 0);
    // Wrong type: None.
    assert!(sim.host::<Recorder>(h).is_none());
    // A boxed trait object is a host too, and comes back as one.
    let boxed: Box<dyn Host> = Box::new(Recorder::default());
    let b = sim.attach(Addr::new(chain.nodes[1], 3), boxed).unwrap();
    assert!(sim.host::<Box<dyn Host>>(b).is_some());
}

#[test]
fn oracle_reports_capacity_minus_cross_traffic() {
    // 100 Mbit/s; cross flow 2 at 40 Mbit/s wire (1000 B every 200 us) until
    // 600 ms; own flow 1 at 20 Mbit/s wire (1000 B every 400 us).
    let cfg = LinkConfig::new(Rate::from_mbit_per_sec(100), Duration::from_millis(1));
    let chain = Chain::build(&[cfg]).unwrap();
    let link = chain.forward[0];
    let mut sim = Simulator::new(chain.topology, 3);
    let a = chain.nodes[0];
    let dst = Addr::new(chain.nodes[1], 9);
    sim.attach(dst, Recorder::default()).unwrap();
    sim.attach(
        Addr::new(a, 1),
        Pacer::new(
            dst,
            1,
            972,
            Duration::from_micros(400),
            SimTime::ZERO,
            SimTime::from_secs(10),
        ),
    )
    .unwrap();
    sim.attach(
        Addr::new(a, 2),
        Pacer::new(
            dst,
            2,
            972,
            Duration::from_micros(200),
            SimTime::ZERO,
            SimTime::from_millis(600),
        ),
    )
    .unwrap();
    let oracle = sim.add_oracle(link, [1], Duration::from_millis(100)).unwrap();
    let all_foreign = sim.add_oracle(link, [], Duration::from_millis(100)).unwrap();
    assert_eq!(oracle.capacity(), Rate::from_mbit_per_sec(100));
    let mut checked = 0;
    sim.run_until_with(SimTime::from_millis(550), Duration::from_millis(10), |s| {
        if s.now() >= SimTime::from_millis(150) {
            let avail = oracle.available().bits_per_sec() as f64;
            assert!((avail - 60e6).abs() < 0.02 * 60e6, "available {avail} at {}", s.now());
            let other = all_foreign.available().bits_per_sec() as f64;
            assert!((other - 40e6).abs() < 0.02 * 40e6, "available {other}");
            checked += 1;
        }
    });
    assert_eq!(checked, 41);
    // Cross traffic stops at 600 ms; the window forgets it by 700 ms.
    sim.run_until(SimTime::from_millis(710));
    assert_eq!(oracle.available(), Rate::from_mbit_per_sec(100));
    assert_eq!(oracle.cross(), Rate::ZERO);
    // The handle is Send + Sync.
    fn assert_send_sync<T: Send + Sync + Clone>(_: &T) {}
    assert_send_sync(&oracle);
}

#[test]
fn metrics_series_and_writers() {
    let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::from_millis(1)).with_queue(QueueLimit::Packets(5));
    let chain = Chain::build(&[cfg]).unwrap();
    let link = chain.forward[0];
    let mut sim = Simulator::new(chain.topology, 3);
    let dst = Addr::new(chain.nodes[1], 9);
    sim.attach(dst, Recorder::default()).unwrap();
    // 2000 B wire every 1 ms on an 8 Mbit/s link (1000 B/ms): the queue grows.
    sim.attach(
        Addr::new(chain.nodes[0], 1),
        Pacer::new(
            dst,
            4,
            1972,
            Duration::from_millis(1),
            SimTime::ZERO,
            SimTime::from_millis(20),
        ),
    )
    .unwrap();
    sim.set_sample_interval(Duration::from_millis(10)).unwrap();
    sim.watch_queue(link).unwrap();
    sim.run_until(SimTime::from_millis(100));
    let q = sim.queue_samples();
    assert_eq!(q.len(), 10);
    assert_eq!(q[0].time_ns, 10 * MS);
    // Packet k is sent at k ms and needs 2 ms. The sample at 10 ms runs
    // before the events at 10 ms that were scheduled later: 0..3 are done,
    // 4 is on the wire (until 10 ms), 5..9 wait.
    assert_eq!(q[0].packets, 5);
    assert_eq!(q.last().unwrap().packets, 0);
    let f = sim.flow_samples();
    assert_eq!(f.len(), 10);
    // Delivered by 10 ms: packets finishing at 2,4,6,8 ms arrive by 9 ms.
    assert_eq!(f[0].delivered_bytes, 4 * 1972);
    assert_eq!(
        f.iter().map(|s| s.interval_bytes).sum::<u64>(),
        f.last().unwrap().delivered_bytes
    );
    let s = sim.link_stats(link);
    assert!((s.utilisation - s.busy_ns as f64 / (100 * MS) as f64).abs() < 1e-12);
    #[cfg(feature = "serde")]
    {
        // With the `serde` feature the metrics are plain serde types: a JSON
        // round trip keeps every field.
        let json = serde_json::to_vec(&sim.metrics()).unwrap();
        let back: Metrics = serde_json::from_slice(&json).unwrap();
        assert_eq!(back, sim.metrics());
    }
}

#[test]
fn bad_configuration_is_an_error() {
    let chain = Chain::build(&[LinkConfig::new(Rate::from_kbit_per_sec(1), Duration::ZERO)]).unwrap();
    let mut sim = Simulator::new(chain.topology, 1);
    let a = Addr::new(chain.nodes[0], 1);
    sim.attach(a, Recorder::default()).unwrap();
    assert_eq!(sim.attach(a, Recorder::default()).unwrap_err(), Error::AddressInUse(a));
    assert_eq!(
        sim.attach(Addr::new(NodeId(99), 1), Recorder::default()).unwrap_err(),
        Error::UnknownNode(NodeId(99))
    );
    assert_eq!(
        sim.add_oracle(LinkId(7), [], Duration::from_millis(1)).unwrap_err(),
        Error::UnknownLink(LinkId(7))
    );
    assert!(sim.add_oracle(LinkId(0), [], Duration::ZERO).is_err());
    assert!(sim.set_sample_interval(Duration::ZERO).is_err());
    assert_eq!(sim.kick(HostId(5)).unwrap_err(), Error::UnknownHost(5));
}
