//! ECN in the TCP model (RFC 3168): the ECE/CWR handshake on the scripted
//! path of `common`, and a flow through an ECN-marking CoDel or RED queue
//! of the simulator, all in virtual time.

mod common;

use std::time::{Duration, Instant};

use common::*;
use tput_netsim::{
    Addr, Chain, CodelConfig, Ecn, FqCodelConfig, LinkConfig, LinkStats, QueueDiscipline, QueueLimit, Rate, SimTime,
    Simulator,
};
use tput_tcp::{Amount, Recovery, SinkReport, TcpConfig, TcpSender, TcpSink, TcpStats, TcpTransfer};

fn ecn_cfg(recovery: Recovery) -> TcpConfig {
    TcpConfig {
        ecn: true,
        ..cfg(recovery)
    }
}

/// The controller's window fell this many times.
fn reductions(o: &Outcome) -> usize {
    o.sender.observer().0.windows(2).filter(|w| w[1].1 < w[0].1).count()
}

/// RFC 3168 §6.1.2–6.1.3 on a scripted path: four CE marks in one window
/// (segments 100, 101, 105 and 110) and one more two windows later
/// (segment 400). The sink sets ECE on every ACK from the first mark until
/// the segment with CWR arrives; the sender reduces its window once for the
/// four marks and once for the fifth, retransmits nothing, and sets CWR on
/// exactly the first new segment after each reduction. Every data segment
/// is ECT(0).
#[test]
fn ece_until_cwr_and_one_reduction_per_window() {
    let n = 600 * SEG;
    let marked = [100, 101, 105, 110, 400];
    for recovery in [Recovery::NewReno, Recovery::Sack] {
        let o = run_marked(
            ecn_cfg(recovery),
            "newreno",
            Amount::Bytes(n),
            path(|_, _, _| false),
            Box::new(move |s, k| k == 1 && marked.contains(&s)),
            Duration::from_secs(30),
        );
        assert_complete(&o, n);
        let s = o.sender.stats();
        assert_eq!(
            (s.ecn_reductions, s.retransmits, s.fast_retransmits, s.timeouts),
            (2, 0, 0, 0),
            "{recovery}: {s:?}"
        );
        assert_eq!(reductions(&o), 2, "{recovery}: the window fell once per reduction");
        assert_eq!(o.sink.report().ce_received, 5);
        assert!(o.codepoints.iter().all(|&(e, _)| e == Ecn::Ect0), "{recovery}");

        // CWR: on two segments, each the first new one after its reduction.
        let cwr: Vec<u64> = o
            .sends
            .iter()
            .zip(&o.codepoints)
            .filter(|(_, c)| c.1)
            .map(|(&(_, g), _)| g)
            .collect();
        assert_eq!(cwr.len(), 2, "{recovery}: CWR on {cwr:?}");
        // ECE: from the ACK of the first mark to the ACK before the CWR
        // segment's, and again from the fifth mark to the second CWR.
        let ece: Vec<u64> = o.acks.iter().filter(|a| a.2).map(|a| a.1 / SEG).collect();
        let expected: Vec<u64> = (101..=cwr[0]).chain(401..=cwr[1]).collect();
        assert_eq!(ece, expected, "{recovery}: ECE on the ACKs up to each CWR");
        assert_eq!(s.ece_acks, expected.len() as u64);
        assert_eq!(o.sink.report().ece_sent, expected.len() as u64);
        // The four marks of the first window gave one reduction: the ACKs of
        // 102..=110 with ECE came after it and changed nothing.
        assert!(
            cwr[0] > 110,
            "{recovery}: the first window reaches past the marks: {cwr:?}"
        );
    }
}

/// RFC 3168 §6.1.5: a retransmission is Not-ECT and never carries CWR;
/// §6.1.2: the fast retransmit's reduction sets CWR on the next new segment.
#[test]
fn retransmissions_are_not_ect_and_a_loss_reduction_sets_cwr() {
    let n = 1000 * SEG;
    let o = run(
        ecn_cfg(Recovery::Sack),
        "newreno",
        Amount::Bytes(n),
        path(drop_first(&[150])),
        Duration::from_secs(30),
    );
    assert_complete(&o, n);
    let s = o.sender.stats();
    assert_eq!(
        (s.fast_retransmits, s.retransmits, s.ecn_reductions),
        (1, 1, 0),
        "{s:?}"
    );
    let sends: Vec<(u64, Ecn, bool)> = o
        .sends
        .iter()
        .zip(&o.codepoints)
        .map(|(&(_, g), &(e, c))| (g, e, c))
        .collect();
    let resent = sends.iter().rposition(|x| x.0 == 150).unwrap();
    assert_eq!(
        (sends[resent].1, sends[resent].2),
        (Ecn::NotEct, false),
        "the retransmission"
    );
    let after: Vec<&(u64, Ecn, bool)> = sends.iter().filter(|x| x.2).collect();
    assert_eq!(after.len(), 1, "one CWR: {after:?}");
    assert!(after[0].0 > 150 && after[0].1 == Ecn::Ect0, "{after:?}");
    // Without ECN nothing is ECT and nothing carries CWR.
    let plain = run(
        cfg(Recovery::Sack),
        "newreno",
        Amount::Bytes(n),
        path(drop_first(&[150])),
        Duration::from_secs(30),
    );
    assert!(plain.codepoints.iter().all(|&(e, c)| e == Ecn::NotEct && !c));
}

/// One bulk TCP flow for `secs` of virtual time over 10 Mbit/s, 20 ms RTT,
/// through `queue` with a 1000-packet hard limit (never reached).
fn through(queue: QueueDiscipline, cc: &str, ecn: bool, secs: u64) -> (TcpStats, SinkReport, LinkStats) {
    let link = LinkConfig::new(Rate::from_mbit_per_sec(10), Duration::from_millis(10))
        .with_queue(QueueLimit::Packets(1000))
        .with_discipline(queue);
    let chain = Chain::build(&[link]).unwrap();
    let forward = chain.forward[0];
    let mut sim = Simulator::new(chain.topology, 7);
    let (src, dst) = (Addr::new(chain.nodes[0], 1), Addr::new(chain.nodes[1], 2));
    let cfg = TcpConfig {
        ecn,
        ..cfg(Recovery::Sack)
    };
    let sink = sim
        .attach(dst, TcpSink::new(cfg.clone(), Duration::ZERO, None))
        .unwrap();
    let controller = cc.parse::<tput_cc::ControllerSpec>().unwrap().build(cfg.segment as u16);
    let stop = SimTime::from_duration(Duration::from_secs(secs));
    let transfer = TcpTransfer::new(dst, 1, SimTime::ZERO, Amount::Until(stop));
    let sender = sim
        .attach(src, TcpSender::new(cfg, controller, Instant::now(), transfer))
        .unwrap();
    sim.run_for(Duration::from_secs(secs + 2));
    let stats = sim.host::<TcpSender>(sender).unwrap().stats().clone();
    let report = sim.host::<TcpSink>(sink).unwrap().report();
    (stats, report, sim.link_stats(forward))
}

/// With ECN the AQM marks where it would drop: no packet of the flow is
/// lost, nothing is retransmitted, and the window is reduced on marks; the
/// same flow without ECN (Not-ECT) through the same queue is dropped and
/// retransmits. CoDel (RFC 8289) and FQ-CoDel (RFC 8290), NewReno and
/// CUBIC. (RED is left out: its forced drops above twice `max_th` hit
/// ECN-capable packets too, by design, and one flow's first slow start
/// takes RED's slow average there.)
#[test]
fn through_an_ecn_aqm_the_flow_is_marked_not_dropped() {
    let queues = [
        QueueDiscipline::Codel(CodelConfig::default().with_ecn(true)),
        QueueDiscipline::FqCodel(FqCodelConfig::default().with_ecn(true)),
    ];
    for queue in queues {
        for cc in ["newreno", "cubic"] {
            let what = format!("{} {cc}", queue.name());
            let (s, r, l) = through(queue.clone(), cc, true, 20);
            assert_eq!(
                (l.dropped_aqm.packets, l.dropped_queue.packets),
                (0, 0),
                "{what} with ECN: {l:?}"
            );
            assert_eq!((s.retransmits, s.timeouts), (0, 0), "{what} with ECN: {s:?}");
            assert!(
                l.marked.packets > 0 && r.ce_received == l.marked.packets,
                "{what}: {l:?} {r:?}"
            );
            assert!(
                s.ecn_reductions > 0 && s.ecn_reductions <= r.ce_received,
                "{what}: {s:?}"
            );

            let (s, r, l) = through(queue.clone(), cc, false, 20);
            assert!(l.dropped_aqm.packets > 0, "{what} without ECN: {l:?}");
            assert_eq!(l.marked.packets, 0, "{what} without ECN");
            assert!(s.retransmits > 0 && s.ecn_reductions == 0, "{what} without ECN: {s:?}");
            assert_eq!((r.ce_received, s.ece_acks), (0, 0));
        }
    }
}
