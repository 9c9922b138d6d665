//! Queue disciplines and ECN through the simulator.

use std::time::Duration;

use bytes::Bytes;
use tput_netsim::*;

/// Sends one datagram of `size` bytes every `gap` with ECN codepoint `ecn`.
struct Constant {
    dst: Addr,
    flow: FlowId,
    ecn: Ecn,
    size: usize,
    gap: Duration,
    next: SimTime,
    stop: SimTime,
}

impl Host for Constant {
    fn on_datagram(&mut self, _: SimTime, _: Addr, _: FlowId, _: Ecn, _: Bytes) {}
    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        if self.next > now || self.next >= self.stop {
            return None;
        }
        self.next += self.gap;
        Some(Datagram::new(self.dst, self.flow, Bytes::from(vec![0u8; self.size])).with_ecn(self.ecn))
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        (self.next < self.stop).then_some(self.next)
    }
    fn on_timeout(&mut self, _: SimTime) {}
}

/// Counts arrivals per ECN codepoint.
#[derive(Default)]
struct Sink {
    by_ecn: [u64; 4],
}

impl Host for Sink {
    fn on_datagram(&mut self, _: SimTime, _: Addr, _: FlowId, ecn: Ecn, _: Bytes) {
        self.by_ecn[ecn.bits() as usize] += 1;
    }
    fn poll_transmit(&mut self, _: SimTime) -> Option<Datagram> {
        None
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        None
    }
    fn on_timeout(&mut self, _: SimTime) {}
}

/// An 8 Mbit/s link (1000 wire bytes per ms) offered 1.5 times its rate
/// for 3 s, through `discipline`.
fn overload(discipline: QueueDiscipline, ecn: Ecn) -> (LinkStats, [u64; 4]) {
    let link = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::from_millis(5))
        .with_queue(QueueLimit::Packets(1000))
        .with_discipline(discipline);
    let chain = Chain::build(&[link]).unwrap();
    let (a, b) = (chain.nodes[0], chain.nodes[1]);
    let mut sim = Simulator::new(chain.topology, 1);
    let dst = Addr::new(b, 443);
    sim.attach(
        Addr::new(a, 5000),
        Constant {
            dst,
            flow: 1,
            ecn,
            size: 972,
            gap: Duration::from_nanos(666_667),
            next: SimTime::ZERO,
            stop: SimTime::from_secs(3),
        },
    )
    .unwrap();
    let sink = sim.attach(dst, Sink::default()).unwrap();
    sim.run_for(Duration::from_secs(5));
    let s = sim.link_stats(chain.forward[0]);
    (s, sim.host::<Sink>(sink).unwrap().by_ecn)
}

#[test]
fn codel_marks_ect_packets_end_to_end_and_drops_not_ect_ones() {
    let codel = QueueDiscipline::Codel(CodelConfig::default().with_ecn(true));
    let (s, by_ecn) = overload(codel.clone(), Ecn::Ect0);
    assert_eq!(s.dropped_aqm.packets, 0);
    assert!(s.marked.packets > 10, "{s:?}");
    // Every mark reached the receiver as CE; the rest kept ECT(0).
    assert_eq!(by_ecn[Ecn::Ce.bits() as usize], s.marked.packets);
    assert_eq!(
        by_ecn[Ecn::Ce.bits() as usize] + by_ecn[Ecn::Ect0.bits() as usize],
        s.delivered.packets
    );
    let (s, by_ecn) = overload(codel, Ecn::NotEct);
    assert!(s.dropped_aqm.packets > 10 && s.marked.packets == 0, "{s:?}");
    assert_eq!(by_ecn[0], s.delivered.packets);
    assert_eq!(s.dropped().packets, s.dropped_aqm.packets + s.dropped_queue.packets);
    assert_eq!(s.offered.packets, s.delivered.packets + s.dropped().packets);
}

#[test]
fn droptail_sojourn_time_is_measured() {
    // DropTail: the queue fills to its 1000 packets after 2 s (500 excess
    // packets per second), then every packet waits 1000 packet times (1 s).
    let (s, _) = overload(QueueDiscipline::DropTail, Ecn::Ect0);
    assert_eq!((s.marked.packets, s.dropped_aqm.packets), (0, 0));
    assert!(s.dropped_queue.packets > 0);
    let p99 = s.sojourn_p99_ns as f64 / 1e9;
    assert!((p99 - 1.0).abs() < 0.07, "p99 {p99} s");
    let p50 = s.sojourn_p50_ns as f64 / 1e9;
    assert!((0.3..0.95).contains(&p50), "p50 {p50} s");
}

#[test]
fn fq_codel_and_red_run_in_the_simulator() {
    let (s, by_ecn) = overload(QueueDiscipline::FqCodel(FqCodelConfig::default()), Ecn::Ect1);
    assert!(s.marked.packets > 0 && s.dropped_aqm.packets == 0, "{s:?}");
    assert_eq!(by_ecn[3], s.marked.packets);
    let red = RedConfig::default().with_thresholds(5.0, 15.0);
    let (s, _) = overload(QueueDiscipline::Red(red), Ecn::NotEct);
    assert!(s.dropped_aqm.packets > 0, "{s:?}");
    // RED keeps the queue far below its 1000-packet limit.
    assert!(s.queued_max.packets < 200, "{s:?}");
    let (t, _) = overload(QueueDiscipline::Red(red), Ecn::NotEct);
    assert_eq!(s, t, "a RED run is reproducible");
}
