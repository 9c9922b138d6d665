//! The live relay on 127.0.0.1: the live fault table (`tput_lab::live::faults`)
//! at toy size, every transfer verified and every fault visible in the
//! relay's counters; the relay's accounting of what it carries; a live
//! transfer against the link's rate and the simulator's run of it.
//!
//! Nothing here judges how long anything took, how close a delay came to
//! the configured one, or how close two rates came to each other: a loaded
//! machine only makes those worse. What holds on any machine is checked:
//! bytes verified, drops counted by cause, no datagram early, no link faster
//! than its rate. The figures themselves are printed by `cargo bench -p
//! tput-benches --bench live_timing` (delay and rate accuracy, live
//! against simulated goodput) and `--bench live_faults` (every fault's
//! transfer times, at full size).

use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tput_lab::live::faults::{Options, faults, run, table};
use tput_lab::live::interval_line;
use tput_lab::live::relay::{OVERLOAD_LAG, RelayConfig, RelayLinks, RelayStats, RelayThread, parse_link_list, probe};
use tput_lab::scenario::{self, FlowGroup, Scenario, TopologySpec};
use tput_transport::{Identity, NodeConfig, ServerTrust, TransferSpec, udp};

/// Runs the fault named `name` of the toy-size table, as an upload and as a
/// download: both must end as the fault should (`Row::problems` says what
/// did not).
fn fault(name: &str) {
    let o = Options::toy();
    let f = faults(&o)
        .into_iter()
        .find(|f| f.name == name)
        .unwrap_or_else(|| panic!("no fault named {name:?}"));
    let rows = run(&o, &[f], |_| {}).expect("the harness runs");
    assert_eq!(rows.len(), 2);
    let text = table(&rows);
    for r in &rows {
        assert!(r.as_expected(), "{:?}: {:?}\n{text}", r.direction, r.problems);
    }
}

/// Every fault of the table, each a test of its own below.
const FAULTS: &[&str] = &[
    "none",
    "loss 1%",
    "loss 5% both ways",
    "cut-off 100 ms, 95%",
    "cut-off 100 ms, 80%",
    "rate /10 and back",
    "NAT rebinding / 50 ms",
    "delay 100 ms",
    "dead after 100 ms",
];

#[test]
fn every_fault_of_the_table_is_tested() {
    let names: Vec<String> = faults(&Options::toy()).into_iter().map(|f| f.name).collect();
    assert_eq!(names, FAULTS);
}

#[test]
fn no_fault() {
    fault(FAULTS[0]);
}

#[test]
fn one_percent_loss() {
    fault(FAULTS[1]);
}

#[test]
fn five_percent_loss_both_ways() {
    fault(FAULTS[2]);
}

#[test]
fn a_drop_cutoff_connected_95_percent() {
    fault(FAULTS[3]);
}

/// 20 ms dead in every 100 ms: the sender's doubling probe timeouts can all
/// fall into outages; stall probes carry the transfer on (docs/cli.md).
#[test]
fn a_drop_cutoff_connected_80_percent() {
    fault(FAULTS[4]);
}

#[test]
fn a_tenfold_rate_drop_and_back() {
    fault(FAULTS[5]);
}

/// The server must follow the client to each new address (RFC 9000 §9),
/// in a download too, where it sends and the client only acknowledges.
#[test]
fn nat_rebinding() {
    fault(FAULTS[6]);
}

#[test]
fn a_100ms_delay_each_way() {
    fault(FAULTS[7]);
}

/// The path dies 100 ms in: the transfer fails with "timed out" within the
/// 2 s idle timeout of the death (plus the close's draining and slack).
#[test]
fn a_dead_path() {
    fault(FAULTS[8]);
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A relay on its own thread with `forward` from clients to `to`.
fn start_relay(to: SocketAddr, forward: &str) -> RelayThread {
    let links = RelayLinks {
        forward: parse_link_list(forward, "--forward").unwrap(),
        reverse: None,
    };
    let (forward, reverse) = links.configs().unwrap();
    let cfg = RelayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        to,
        forward,
        reverse,
        seed: 7,
    };
    RelayThread::start(cfg, None).unwrap()
}

/// 1200-byte datagrams at 36.864 Mbit/s: 1228 wire bytes each.
const RATE_BPS: f64 = 36_864_000.0;
const WIRE_BYTES: f64 = 1228.0;

#[test]
fn every_datagram_is_accounted_for_none_arrives_early_and_none_beats_the_rate() {
    // A large receive buffer: a busy machine may leave the reading thread
    // unscheduled for milliseconds while 3000 datagrams/s arrive.
    let sink = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).unwrap();
    sink.set_recv_buffer_size(16 << 20).unwrap();
    sink.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into()).unwrap();
    let sink: UdpSocket = sink.into();
    let relay = start_relay(
        sink.local_addr().unwrap(),
        "rate=36.864Mbit/s,delay=20ms,queue_packets=10000",
    );
    let quiet = Duration::from_secs(10);
    // Paced at half the rate (nothing waits in the queue), then offered at
    // 1.5 times the rate for a second.
    let paced = probe::blast(relay.addr(), &sink, 1200, 1875.0, 1500, quiet).unwrap();
    let flood = probe::blast(relay.addr(), &sink, 1200, 5625.0, 5625, quiet).unwrap();
    let s = relay.stop().unwrap();
    let f = &s.forward;
    // Every datagram the relay took in left the link or was dropped because
    // the relay could not keep up (counted, not silent): the queue never
    // fills and the link has no loss. The end markers count too.
    assert!(f.offered.packets <= 1500 + 5625 + 2, "{f:?}");
    assert_eq!(
        f.delivered.packets + f.dropped_overload.packets,
        f.offered.packets,
        "{f:?}"
    );
    assert_eq!(
        f.dropped_queue.packets + f.dropped_random.packets + f.dropped_cutoff.packets,
        0
    );
    // The receiver saw no more than the relay sent (which counts the end
    // markers too).
    let received = (paced.len() + flood.len()) as u64;
    assert!(
        received > 0 && received <= f.delivered.packets,
        "{received} received, {f:?}"
    );

    // No datagram arrives before its 20 ms and its serialization (266.4 us)
    // have passed (100 us for the clocks' granularity).
    let least = 20_000_000 + 266_400 - 100_000;
    for a in paced.iter().chain(&flood) {
        assert!(a.one_way_ns() >= least, "a datagram took only {} ns", a.one_way_ns());
    }

    // The flood left the link no faster than its rate: the k-th datagram to
    // arrive cannot arrive before k serialization times after the first was
    // sent (plus the delay), however late the relay was.
    let first_sent = flood.first().expect("the flood arrived").sent_ns;
    for (k, a) in flood.iter().enumerate() {
        let floor = first_sent as f64 + (k + 1) as f64 * WIRE_BYTES * 8.0 / RATE_BPS * 1e9 + 20e6;
        assert!(
            a.at_ns as f64 >= floor - 100_000.0,
            "datagram {k} arrived {:.3} ms early",
            (floor - a.at_ns as f64) / 1e6
        );
    }
}

fn node_config() -> NodeConfig {
    NodeConfig::default()
        .with_idle_timeout(Duration::from_secs(10))
        .with_mtu_discovery(false)
}

/// A QUIC server on its own thread; returns its address and identity.
fn start_server() -> (SocketAddr, Identity) {
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let (addr, _failed) = tput_lab::live::spawn_server(id.clone(), node_config(), |_| {}).unwrap();
    (addr, id)
}

/// What a live receiver may count beyond the link's rate in a stretch of
/// time, as time at the link's rate: the relay sends a datagram up to
/// [`OVERLOAD_LAG`] late (later, it drops it), so that much of the link's
/// time can land after a boundary it was due before. The payload is at most
/// 0.95 of the wire bytes (35 bytes of QUIC and 28 of IP and UDP per
/// 1228-byte datagram), which leaves about 50 ms of a second for a receiver
/// the machine runs late at an interval's edge if the link was full all the
/// interval; a link that loses is not (this test's runs at about 0.9 of its
/// rate in the simulator, which would leave about 150 ms, and slower live).
const EDGE: Duration = OVERLOAD_LAG;

#[test]
fn live_and_simulated_transfers_stay_within_the_link_rate() {
    // A shallow queue (10 packets, an eighth of the path's BDP): CUBIC
    // overflows it again and again (in the simulator about once a second,
    // keeping the link at about 0.9 of its rate between losses; live, with
    // the bursts of a real sender, more often).
    let link = "rate=36.864Mbit/s,delay=10ms,queue_packets=10";
    let secs = 4;
    let spec = parse_link_list(link, "link").unwrap();
    let mut sc = Scenario::new(
        Duration::from_secs(secs),
        TopologySpec::chain(vec![spec]),
        vec![FlowGroup::new("cubic".parse().unwrap())],
    );
    sc.seed = 3;
    let sim = scenario::run(&sc, |_| {}).unwrap();
    let f = &sim.flows[0];
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    // Virtual time: no interval, and not the whole, beats the link.
    assert!(f.intervals.len() >= 4, "{:?}", f.intervals);
    for i in &f.intervals {
        assert!(i.goodput_bps <= RATE_BPS, "simulated {}", interval_line(0, i, None));
    }
    let sim_bps = f.goodput_bps();
    assert!(sim_bps > 0.0 && sim_bps <= RATE_BPS, "simulated {sim_bps} bit/s");

    let (server, id) = start_server();
    let relay = start_relay(server, link);
    let mut t = TransferSpec::upload(0, "cubic".parse().unwrap());
    t.bytes = None;
    t.duration = Some(Duration::from_secs(secs));
    let trust = ServerTrust::Pinned(id.fingerprint());
    let out = rt()
        .block_on(udp::transfer(
            relay.addr(),
            "localhost",
            &trust,
            node_config(),
            vec![t],
            |_, _| {},
        ))
        .unwrap();
    let s = relay.stop().unwrap();
    let o = &out[0];
    assert!(o.ok(), "{:?}", o.error);
    assert!(s.forward.dropped_queue.packets > 0, "a lossy link: {s:?}");
    let r = o.receiver.as_ref().unwrap();
    assert_eq!(r.bytes, o.bytes, "every byte sent was verified");
    assert!(s.forward.delivered.packets > 0 && s.clients == 1, "{s:?}");
    // Every interval line: what arrived in the interval, over its length,
    // within the link's rate (and `EDGE` at its edges; see there).
    assert!(o.intervals.len() >= 4, "{:?}", o.intervals);
    for i in &o.intervals {
        let secs = i.end_secs - i.start_secs;
        let bound = RATE_BPS * (secs + EDGE.as_secs_f64()) / secs;
        assert!(
            i.goodput_bps <= bound,
            "live {} above {:.2} Mbit/s; relay {s:?}",
            interval_line(0, i, None),
            bound / 1e6
        );
    }
    // The [SUM] line: the verified total over the transfer's own time. The
    // receiver's clock starts when it has the request, which a loaded
    // machine may read late while data already waits behind it: `EDGE`
    // again.
    let sum = tput_lab::live::TransferSummary::new(&out, None);
    let bound = RATE_BPS * (r.duration_secs + EDGE.as_secs_f64()) / r.duration_secs;
    assert!(
        sum.goodput_bps > 0.0 && sum.goodput_bps <= bound,
        "{} above {:.2} Mbit/s",
        sum.lines(),
        bound / 1e6
    );
    // The relay's delivered rate is over the time it carried traffic (the
    // relay's life is longer), and within its link's rate. (How close it
    // comes to the rate depends on the machine's load: not judged.)
    assert_eq!(s.forward.rate_bps as f64, RATE_BPS);
    assert!(
        s.forward.delivered_bps > 0.0 && s.forward.delivered_bps <= RATE_BPS * 1.01,
        "{s:?}"
    );
}

/// The relay applies the forward link's queue discipline to live
/// datagrams: 300 datagrams sent as fast as possible into a 1 Mbit/s link
/// (8 ms each: a standing queue of seconds) with CoDel on it. CoDel drops
/// some (its sojourn time stays above target for more than an interval);
/// the 1000-packet limit is never reached, so no drop is an overflow. Only
/// counts are checked, never a time.
#[test]
fn the_relay_applies_an_aqm() {
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let relay = start_relay(
        sink.local_addr().unwrap(),
        "rate=1Mbit/s,delay=1ms,aqm=codel,aqm.target=5ms,aqm.interval=50ms",
    );
    let got = probe::blast(relay.addr(), &sink, 992, 1e6, 300, Duration::from_secs(2)).unwrap();
    let s = relay.stop().unwrap();
    let f = &s.forward;
    assert!(f.dropped_aqm.packets > 0, "{f:?}");
    assert_eq!(f.dropped_queue.packets, 0, "{f:?}");
    assert!((got.len() as u64) < 300, "{} of 300 arrived", got.len());
}

/// Sends `count` datagrams of 992 bytes with ECN codepoint `ecn` through
/// `relay` to `sink` at 1000 per second (a 1 Mbit/s link then holds a
/// standing queue of seconds), and returns the codepoints the sink read,
/// in arrival order, until 2 s pass with nothing.
fn blast_with_ecn(
    relay: SocketAddr,
    sink: UdpSocket,
    ecn: Option<quinn_udp::EcnCodepoint>,
    count: usize,
) -> Vec<Option<quinn_udp::EcnCodepoint>> {
    use quinn_udp::{RecvMeta, Transmit, UdpSocketState};
    let rx = std::thread::spawn(move || {
        // quinn-udp makes the socket non-blocking; block with a timeout.
        let state = UdpSocketState::new((&sink).into()).unwrap();
        sink.set_nonblocking(false).unwrap();
        sink.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut buf = vec![0u8; 65_536];
        let mut metas = [RecvMeta::default()];
        let mut got = Vec::new();
        loop {
            let mut slices = [std::io::IoSliceMut::new(&mut buf)];
            match state.recv((&sink).into(), &mut slices, &mut metas) {
                // A GRO batch shares one codepoint.
                Ok(_) => got.extend(std::iter::repeat_n(
                    metas[0].ecn,
                    metas[0].len.div_ceil(metas[0].stride.max(1)),
                )),
                Err(_) => return got,
            }
        }
    });
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let state = UdpSocketState::new((&tx).into()).unwrap();
    tx.set_nonblocking(false).unwrap();
    let payload = [7u8; 992];
    for _ in 0..count {
        let t = Transmit {
            destination: relay,
            ecn,
            contents: &payload,
            segment_size: None,
            src_ip: None,
        };
        state.send((&tx).into(), &t).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    rx.join().unwrap()
}

/// The relay carries ECN (RFC 3168 §5): ECT(0) datagrams into the 1 Mbit/s
/// CoDel link of `the_relay_applies_an_aqm`, now with ECN marking on, are
/// marked CE instead of dropped, and leave the relay with CE in their IP
/// header; the rest keep their ECT(0). Not-ECT datagrams on the same link
/// are still dropped. Only counts are checked.
#[test]
fn the_relay_reads_and_writes_ecn_and_its_aqm_marks_instead_of_dropping() {
    use quinn_udp::EcnCodepoint as E;
    let link = "rate=1Mbit/s,delay=1ms,aqm=codel,aqm.target=5ms,aqm.interval=50ms,aqm.ecn=true";
    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let relay = start_relay(sink.local_addr().unwrap(), link);
    let got = blast_with_ecn(relay.addr(), sink, Some(E::Ect0), 300);
    let s = relay.stop().unwrap();
    let f = &s.forward;
    assert_eq!(f.offered.packets, 300, "{f:?}");
    assert_eq!(f.offered_ecn_capable.packets, 300, "{f:?}");
    assert!(f.marked.packets > 0, "{f:?}");
    assert_eq!((f.dropped_aqm.packets, f.dropped_queue.packets), (0, 0), "{f:?}");
    let ce = got.iter().filter(|e| **e == Some(E::Ce)).count() as u64;
    let ect0 = got.iter().filter(|e| **e == Some(E::Ect0)).count() as u64;
    assert_eq!(ce + ect0, got.len() as u64, "every datagram left ECN-capable");
    // Every mark the link made reached the sink, unless the relay could not
    // keep up and dropped a marked datagram after the link.
    assert!(
        ce > 0 && ce <= f.marked.packets,
        "{ce} CE of {} marked",
        f.marked.packets
    );
    assert!(ce + f.dropped_overload.packets >= f.marked.packets, "{ce} CE, {f:?}");
    // One client: it offered what the direction did, and its marks are the
    // delivered datagrams that left with CE.
    assert_eq!(f.flows.len(), 1, "{f:?}");
    assert_eq!(f.flows[0].offered, f.offered);
    assert_eq!(f.flows[0].marked.packets, ce, "{f:?}");

    let sink = UdpSocket::bind("127.0.0.1:0").unwrap();
    let relay = start_relay(sink.local_addr().unwrap(), link);
    let got = blast_with_ecn(relay.addr(), sink, None, 300);
    let f = relay.stop().unwrap().forward;
    assert_eq!(f.offered_ecn_capable.packets, 0, "{f:?}");
    assert_eq!(f.marked.packets, 0, "{f:?}");
    assert!(f.dropped_aqm.packets > 0, "{f:?}");
    assert!(got.iter().all(|e| e.is_none()), "Not-ECT stays Not-ECT");
}

/// A QUIC server on its own thread whose node's ECN arrival counts are
/// copied into the returned slot at every finished transfer.
fn start_ecn_server() -> (SocketAddr, Identity, Arc<Mutex<Option<tput_transport::EcnCounts>>>) {
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let served = id.clone();
    let counts = Arc::new(Mutex::new(None));
    let slot = counts.clone();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        rt().block_on(async move {
            let socket = udp::bind_server("127.0.0.1:0".parse().unwrap()).await.unwrap();
            tx.send(socket.local_addr().unwrap()).unwrap();
            let _ = udp::serve(&socket, &served, node_config(), |node, ev| {
                if matches!(ev, tput_transport::NodeEvent::Finished(_)) {
                    *slot.lock().unwrap() = Some(node.ecn_received());
                }
                std::ops::ControlFlow::Continue(())
            })
            .await;
        });
    });
    (rx.recv().unwrap(), id, counts)
}

/// NewReno that counts the congestion events it is told of, by kind.
#[derive(Debug, Clone)]
struct CountingReno {
    inner: tput_cc::NewReno,
    /// ECN-CE events (RFC 9002 §7.1) and loss events.
    events: Arc<Mutex<(u64, u64)>>,
}

impl tput_cc::CongestionController for CountingReno {
    fn on_sent(&mut self, now: std::time::Instant, bytes: u64) {
        self.inner.on_sent(now, bytes);
    }
    fn on_ack(&mut self, now: std::time::Instant, ack: &tput_cc::Ack) {
        self.inner.on_ack(now, ack);
    }
    fn on_end_acks(&mut self, now: std::time::Instant, in_flight: u64, app_limited: bool) {
        self.inner.on_end_acks(now, in_flight, app_limited);
    }
    fn on_congestion(&mut self, now: std::time::Instant, event: &tput_cc::Congestion) {
        let mut e = self.events.lock().unwrap();
        match event.kind {
            tput_cc::CongestionKind::Ecn => e.0 += 1,
            _ => e.1 += 1,
        }
        drop(e);
        self.inner.on_congestion(now, event);
    }
    fn on_recovery_end(&mut self, now: std::time::Instant) {
        self.inner.on_recovery_end(now);
    }
    fn on_mtu_update(&mut self, mtu: u16) {
        self.inner.on_mtu_update(mtu);
    }
    fn window(&self) -> u64 {
        self.inner.window()
    }
    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }
    fn snapshot(&self) -> tput_cc::Snapshot {
        self.inner.snapshot()
    }
    fn clone_box(&self) -> Box<dyn tput_cc::CongestionController> {
        Box::new(self.clone())
    }
}

/// One 3 MB NewReno upload through a relay whose forward link is a 10
/// Mbit/s FQ-CoDel queue with ECN marking (a 1-ms target, so marking starts
/// within the transfer whatever the machine's load), the client's ECN on or
/// off. Returns the relay's counters, the server's ECN arrival counts and
/// the ECN and loss congestion events the sender's controller was told of.
fn upload_through_fq_codel(ecn: bool) -> (RelayStats, tput_transport::EcnCounts, (u64, u64)) {
    let (server, id, counts) = start_ecn_server();
    let relay = start_relay(
        server,
        "rate=10Mbit/s,delay=5ms,aqm=fq_codel,aqm.target=1ms,aqm.interval=20ms,aqm.ecn=true",
    );
    let events = Arc::new(Mutex::new((0, 0)));
    let seen_by_cc = events.clone();
    let factory = tput_cc::QuinnFactory::from_fn(move |mtu| {
        Box::new(CountingReno {
            inner: tput_cc::NewReno::new(tput_cc::NewRenoConfig::default(), mtu),
            events: seen_by_cc.clone(),
        })
    });
    let spec = TransferSpec::upload(3_000_000, "newreno".parse().unwrap()).with_controller(
        tput_transport::SenderController::own(factory, "newreno".parse().unwrap()),
    );
    let trust = ServerTrust::Pinned(id.fingerprint());
    let out = rt()
        .block_on(udp::transfer(
            relay.addr(),
            "localhost",
            &trust,
            node_config().with_ecn(ecn),
            vec![spec],
            |_, _| {},
        ))
        .unwrap();
    let o = &out[0];
    assert!(o.ok(), "{:?}", o.error);
    let s = relay.stop().unwrap();
    // The server's outcome is in once the client's is: wait for it.
    let mut seen = None;
    for _ in 0..500 {
        seen = *counts.lock().unwrap();
        if seen.is_some() {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let events = *events.lock().unwrap();
    (s, seen.expect("the server's transfer finished"), events)
}

/// End to end (RFC 3168 §5, RFC 8290 §5, RFC 9000 §13.4): with ECN the
/// relay's FQ-CoDel marks the upload's datagrams instead of dropping them,
/// the server's quinn-proto reads the CE marks and counts them into its
/// ACKs, and the sender's quinn-proto hands them to its controller as ECN
/// congestion events (RFC 9002 §7.1). Without ECN the same queue drops, and
/// the controller hears only of losses.
#[test]
fn a_quic_upload_through_an_fq_codel_relay_sees_marks_instead_of_drops() {
    let (s, seen, (ecn_events, _)) = upload_through_fq_codel(true);
    let f = &s.forward;
    assert!(f.marked.packets > 0, "{f:?}");
    assert_eq!((f.dropped_aqm.packets, f.dropped_queue.packets), (0, 0), "{f:?}");
    assert!(f.offered_ecn_capable.packets * 100 >= f.offered.packets * 95, "{f:?}");
    assert!(seen.ce > 0 && seen.ce <= f.marked.packets, "{seen:?} against {f:?}");
    assert!(ecn_events > 0, "the controller heard of no mark");
    assert_eq!(f.flows.len(), 1, "{f:?}");
    assert!(
        f.flows[0].marked.packets > 0 && f.flows[0].marked.packets <= f.marked.packets,
        "{f:?}"
    );

    let (s, seen, (ecn_events, loss_events)) = upload_through_fq_codel(false);
    let f = &s.forward;
    assert_eq!((f.marked.packets, f.offered_ecn_capable.packets), (0, 0), "{f:?}");
    assert!(f.dropped_aqm.packets > 0, "{f:?}");
    assert_eq!((seen.ect0, seen.ce), (0, 0), "{seen:?}");
    assert_eq!(ecn_events, 0);
    assert!(loss_events > 0);
}
