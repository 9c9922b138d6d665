//! ECN end to end through the simulated QUIC node: quinn-proto's ECT(0)
//! crosses an FQ-CoDel bottleneck that marks it CE, the receiver's
//! quinn-proto counts the marks into its ACK frames (RFC 9000 §13.4.1), and
//! the sender's controller reduces its window on them (RFC 9002 §7.1)
//! instead of on losses.

use std::time::Duration;

use tput_lab::scenario::{FlowGroup, LinkSpec, QueueKind, QueueSpec, Scenario, ScenarioResult, TopologySpec, run};

/// Two CUBIC flows for 4 s on a 20 Mbit/s, 10 ms bottleneck with FQ-CoDel
/// (ECN marking on), the flows' endpoints speaking ECN or not.
fn two_cubic_flows(ecn: bool) -> ScenarioResult {
    let bottleneck = LinkSpec::new("20Mbit/s".parse().unwrap(), Duration::from_millis(10))
        .with_queue_packets(1000)
        .with_queue(QueueSpec::new(QueueKind::FqCodel));
    let access = LinkSpec::new("1Gbit/s".parse().unwrap(), Duration::from_millis(1)).with_queue_packets(1000);
    let mut g = FlowGroup::new("cubic".parse().unwrap()).times(2);
    g.ecn = ecn;
    let s = Scenario::new(
        Duration::from_secs(4),
        TopologySpec::dumbbell(bottleneck, access),
        vec![g],
    );
    let r = run(&s, |_| {}).unwrap();
    for f in &r.flows {
        assert!(f.errors.is_empty(), "flow {}: {:?}", f.flow, f.errors);
        assert!(f.bytes > 1_000_000, "flow {}: {} bytes", f.flow, f.bytes);
    }
    r
}

#[test]
fn fq_codel_marks_quic_flows_that_speak_ecn_and_drops_those_that_do_not() {
    let with = two_cubic_flows(true);
    let b = &with.bottleneck;
    assert!(b.marked.packets > 0, "{b:?}");
    assert_eq!(b.dropped_aqm.packets, 0, "{b:?}");
    // The marks reached the senders' controllers as congestion events, with
    // no packet lost (the 1000-packet limit is never reached).
    for f in &with.flows {
        let events: u64 = f.intervals.iter().map(|i| i.congestion_events).sum();
        let lost: u64 = f.intervals.iter().map(|i| i.lost_packets).sum();
        assert!(events > 0, "flow {}: no congestion event", f.flow);
        assert_eq!(lost, 0, "flow {}", f.flow);
    }
    let without = two_cubic_flows(false);
    let b = &without.bottleneck;
    assert_eq!(b.marked.packets, 0, "{b:?}");
    assert!(b.dropped_aqm.packets > 0, "{b:?}");
}
