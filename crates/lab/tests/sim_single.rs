//! One QUIC flow over a simulated dumbbell, through the same node code as UDP.

use std::time::{Duration, Instant};

use tput_lab::host::QuicHost;
use tput_netsim::{Addr, Dumbbell, DumbbellConfig, LinkConfig, QueueLimit, RandomLoss, Rate, SimTime, Simulator};
use tput_transport::{Direction, Identity, Node, NodeConfig, ServerTrust, SimOptions, TransferSpec};

fn dumbbell(loss: Option<RandomLoss>, queue_packets: u64) -> Dumbbell {
    let mut bottleneck = LinkConfig::new(Rate::from_mbit_per_sec(100), Duration::from_millis(8))
        .with_queue(QueueLimit::Packets(queue_packets as _));
    if let Some(l) = loss {
        bottleneck = bottleneck.with_loss(l);
    }
    Dumbbell::build(&DumbbellConfig::new(
        1,
        LinkConfig::new(Rate::from_gbit_per_sec(1), Duration::from_millis(1)),
        bottleneck,
    ))
    .unwrap()
}

/// Runs one bulk flow for `secs` of virtual time; returns (bottleneck stats, sender host, receiver host).
fn run(
    loss: Option<RandomLoss>,
    queue_packets: u64,
    spec: TransferSpec,
    secs: u64,
) -> (tput_netsim::LinkStats, QuicHost, QuicHost) {
    let d = dumbbell(loss, queue_packets);
    let epoch = Instant::now();
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let mut sim = Simulator::new(d.topology, 7);
    let server_addr = Addr::new(d.receivers[0], 4433);
    let config = NodeConfig::default().with_mtu_discovery(false);
    let seeded = |seed| SimOptions::seeded(seed);
    let server = Node::simulated(config.clone(), Some(&id), seeded(1)).unwrap();
    let server = sim
        .attach(server_addr, QuicHost::new(server, epoch, ServerTrust::Insecure))
        .unwrap();
    let client = Node::simulated(config, None, seeded(2)).unwrap();
    let mut host = QuicHost::new(client, epoch, ServerTrust::Root(id.cert_der().to_vec()));
    host.schedule(SimTime::ZERO, server_addr, spec);
    let client = sim.attach(Addr::new(d.senders[0], 5000), host).unwrap();
    sim.run_until(SimTime::from_secs(secs));
    let stats = sim.link_stats(d.bottleneck);
    let c = std::mem::replace(
        sim.host_mut::<QuicHost>(client).unwrap(),
        QuicHost::new(
            Node::client(NodeConfig::default()).unwrap(),
            epoch,
            ServerTrust::Insecure,
        ),
    );
    let s = std::mem::replace(
        sim.host_mut::<QuicHost>(server).unwrap(),
        QuicHost::new(
            Node::client(NodeConfig::default()).unwrap(),
            epoch,
            ServerTrust::Insecure,
        ),
    );
    (stats, c, s)
}

/// Utilisation of the bottleneck by one 20-second NewReno upload.
fn newreno_utilisation(queue_packets: u64) -> f64 {
    let mut spec = TransferSpec::upload(0, "newreno".parse().unwrap());
    spec.bytes = None;
    spec.duration = Some(Duration::from_secs(20));
    let (stats, client, server) = run(None, queue_packets, spec, 23);
    let out = &client.outcomes()[0];
    assert!(out.ok(), "{:?}", out.error);
    let report = out.receiver.as_ref().unwrap();
    assert_eq!(report.bytes, out.bytes);
    assert!(server.outcomes()[0].ok(), "{:?}", server.outcomes()[0].error);
    assert!(
        stats.dropped_queue.packets > 0,
        "NewReno should probe into the queue until it overflows"
    );
    stats.busy_ns as f64 / 20e9
}

/// 100 Mbit/s, 20 ms RTT: the BDP is 203.6 packets of 1228 wire bytes. With a
/// 30-packet DropTail queue NewReno's window saws between W = 233.6 and W/2 =
/// 116.8 packets and the link idles while the window is below 203.6: the
/// analytic utilisation is 0.743 * 0.787 + 0.257 = 0.842 (measured: 0.836,
/// slow start included). The issue asked for >= 0.90, which no Reno can reach
/// with a buffer of 0.15 BDP; see the closing note.
#[test]
fn newreno_utilisation_matches_the_sawtooth_with_a_30_packet_queue() {
    let u = newreno_utilisation(30);
    assert!((0.80..0.88).contains(&u), "bottleneck utilisation {u}");
}

/// With a buffer of one BDP the sawtooth never drains the queue: the link stays busy.
#[test]
fn newreno_fills_the_link_with_a_one_bdp_queue() {
    let u = newreno_utilisation(204);
    assert!(u >= 0.97, "bottleneck utilisation {u}");
}

#[test]
fn every_byte_arrives_with_one_percent_loss() {
    let mut spec = TransferSpec::upload(5_000_000, "newreno".parse().unwrap());
    spec.direction = Direction::Upload;
    let (stats, client, _) = run(Some(RandomLoss::PacketLoss(0.01)), 30, spec, 30);
    let out = &client.outcomes()[0];
    assert!(out.ok(), "{:?}", out.error);
    assert_eq!(out.receiver.as_ref().unwrap().bytes, 5_000_000);
    assert!(
        stats.dropped_random.packets > 20,
        "random losses: {}",
        stats.dropped_random.packets
    );
}

/// A simulated download runs the same code as a live one: the server builds
/// the requested controller and its interval series reaches the client.
#[test]
fn a_download_s_sender_series_reaches_the_client() {
    let mut spec = TransferSpec::upload(0, "vegas".parse().unwrap());
    spec.direction = Direction::Download;
    spec.bytes = None;
    spec.duration = Some(Duration::from_secs(5));
    let (_, client, server) = run(None, 30, spec, 8);
    let c = &client.outcomes()[0];
    let s = &server.outcomes()[0];
    assert!(c.ok() && s.ok(), "{:?} / {:?}", c.error, s.error);
    assert!(!c.local_sender && s.local_sender);
    assert_eq!((c.cc.as_str(), s.cc.as_str()), ("vegas", "vegas"));
    // The client's records are the server's, live events and outcome alike.
    assert!(c.intervals.len() >= 5, "{} records", c.intervals.len());
    assert_eq!(c.intervals, s.intervals);
    let live: Vec<_> = client.intervals().iter().map(|(_, r)| r.clone()).collect();
    assert_eq!(live, c.intervals);
    for r in &c.intervals {
        assert!(matches!(
            r.controller.as_ref().map(|x| &x.state),
            Some(tput_cc::AlgorithmState::Vegas { .. })
        ));
        assert!(r.cwnd_bytes > 0 && r.srtt_ms >= 20.0, "{r:?}");
    }
    let report = c.receiver.as_ref().unwrap();
    assert_eq!(c.intervals.iter().map(|r| r.bytes).sum::<u64>(), report.bytes);
    // No CPU clock in the simulator.
    assert_eq!((c.cpu_secs, report.cpu_secs), (None, None));
}
