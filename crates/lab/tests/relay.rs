//! The live relay on 127.0.0.1: verified QUIC transfers through impaired
//! links, timing accuracy, and agreement with the simulator.

use std::net::{SocketAddr, UdpSocket};
use std::ops::ControlFlow;
use std::sync::mpsc as std_mpsc;
use std::thread;
use std::time::{Duration, Instant};

use tput_lab::relay::{RelayConfig, RelayLinks, RelayStats, RelayThread, parse_link_list};
use tput_lab::scenario::{self, FlowGroup, Scenario, TopologySpec};
use tput_transport::{Identity, NodeConfig, ServerTrust, TransferOutcome, TransferSpec, udp};

/// The tests in this file measure timing on live sockets: they take turns,
/// so that one test's transfer does not steal the CPU another is timing
/// (the suite runs tests of one binary in parallel on a 2-core machine).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

/// A relay on its own thread until `finish`.
struct Running {
    addr: SocketAddr,
    relay: RelayThread,
}

impl Running {
    fn finish(self) -> RelayStats {
        self.relay.stop().expect("relay stopped")
    }
}

fn start_relay(to: SocketAddr, forward: &str, reverse: Option<&str>) -> Running {
    start_relay_rebinding(to, forward, reverse, Duration::ZERO)
}

/// [`start_relay`] with a NAT rebinding every `rebind` (zero: never).
fn start_relay_rebinding(to: SocketAddr, forward: &str, reverse: Option<&str>, rebind: Duration) -> Running {
    let links = RelayLinks {
        forward: parse_link_list(forward, "--forward").unwrap(),
        reverse: reverse.map(|r| parse_link_list(r, "--reverse").unwrap()),
    };
    let (forward, reverse) = links.configs().unwrap();
    let cfg = RelayConfig {
        listen: "127.0.0.1:0".parse().unwrap(),
        to,
        forward,
        reverse,
        seed: 7,
    };
    let relay = RelayThread::start(cfg, Some(rebind)).unwrap();
    Running {
        addr: relay.addr(),
        relay,
    }
}

fn node_config() -> NodeConfig {
    node_config_idle(Duration::from_secs(10))
}

fn node_config_idle(idle_timeout: Duration) -> NodeConfig {
    NodeConfig {
        idle_timeout,
        mtu_discovery: false,
        ..NodeConfig::default()
    }
}

/// A QUIC server on its own thread; returns its address and identity.
fn start_server() -> (SocketAddr, Identity) {
    start_server_with(node_config())
}

fn start_server_with(config: NodeConfig) -> (SocketAddr, Identity) {
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let served = id.clone();
    let (tx, rx) = std_mpsc::channel();
    thread::spawn(move || {
        rt().block_on(async move {
            let socket = udp::bind_server("127.0.0.1:0".parse().unwrap()).await.unwrap();
            tx.send(socket.local_addr().unwrap()).unwrap();
            let _ = udp::serve(&socket, &served, config, |_, _| ControlFlow::Continue(())).await;
        });
    });
    (rx.recv_timeout(Duration::from_secs(10)).unwrap(), id)
}

/// One transfer from this thread through `relay` to the server.
fn transfer(relay: SocketAddr, id: &Identity, spec: TransferSpec) -> TransferOutcome {
    transfer_with(relay, id, spec, node_config())
}

fn transfer_with(relay: SocketAddr, id: &Identity, spec: TransferSpec, config: NodeConfig) -> TransferOutcome {
    let trust = ServerTrust::Pinned(id.fingerprint());
    let out = rt().block_on(async {
        tokio::time::timeout(
            Duration::from_secs(60),
            udp::transfer(relay, "localhost", &trust, config, vec![spec], |_, _| {}),
        )
        .await
        .expect("transfer took more than 60 s")
        .unwrap()
    });
    out.into_iter().next().unwrap()
}

fn assert_verified(o: &TransferOutcome, bytes: u64) {
    assert!(o.ok(), "{:?}", o.error);
    assert_eq!(o.bytes, bytes);
    assert_eq!(o.receiver.as_ref().unwrap().bytes, bytes, "receiver verified");
}

#[test]
fn transfer_through_one_percent_loss() {
    let _turn = turn();
    let (server, id) = start_server();
    let relay = start_relay(server, "rate=100Mbit/s,delay=5ms,loss=0.01", None);
    let o = transfer(
        relay.addr,
        &id,
        TransferSpec::upload(3_000_000, "cubic".parse().unwrap()),
    );
    let s = relay.finish();
    assert_verified(&o, 3_000_000);
    let f = &s.forward;
    assert!(f.dropped_random.packets > 0, "{f:?}");
    // 1% of the forward datagrams, give or take.
    let share = f.dropped_random.packets as f64 / f.offered.packets as f64;
    assert!((0.002..0.03).contains(&share), "{share} {f:?}");
    assert_eq!(s.reverse.dropped_random.packets, 0, "the reverse link has no loss");
    assert_eq!(s.clients, 1);
}

#[test]
fn transfer_through_five_percent_loss_both_ways() {
    let _turn = turn();
    let (server, id) = start_server();
    let relay = start_relay(
        server,
        "rate=50Mbit/s,delay=5ms,loss=0.05",
        Some("rate=50Mbit/s,delay=5ms,loss=0.05"),
    );
    let o = transfer(
        relay.addr,
        &id,
        TransferSpec::upload(2_000_000, "newreno".parse().unwrap()),
    );
    let s = relay.finish();
    assert_verified(&o, 2_000_000);
    for d in [&s.forward, &s.reverse] {
        let share = d.dropped_random.packets as f64 / d.offered.packets as f64;
        assert!((0.02..0.09).contains(&share), "{share} {d:?}");
    }
}

#[test]
fn transfer_through_a_tenfold_rate_drop_and_back() {
    let _turn = turn();
    let (server, id) = start_server();
    // 50 Mbit/s, 5 Mbit/s from 200 ms to 700 ms, then 50 Mbit/s again; the
    // queue (100 packets) overflows at the drop.
    let relay = start_relay(
        server,
        "rate=50Mbit/s,delay=5ms,queue_packets=100,rate_schedule=200ms:5Mbit/s;700ms:50Mbit/s",
        None,
    );
    let o = transfer(
        relay.addr,
        &id,
        TransferSpec::upload(4_000_000, "cubic".parse().unwrap()),
    );
    let s = relay.finish();
    assert_verified(&o, 4_000_000);
    assert_eq!(s.forward.rate_bps, 50_000_000, "back to the full rate");
    // 4 MB at 5 Mbit/s would take 6.4 s: the rate came back and the
    // transfer used it.
    assert!(o.elapsed_secs < 3.0, "{} s", o.elapsed_secs);
}

#[test]
fn transfers_survive_nat_rebinding_by_migrating() {
    let _turn = turn();
    let (server, id) = start_server();
    // The client's address as the server sees it changes every 300 ms.
    let relay = start_relay_rebinding(server, "rate=50Mbit/s,delay=5ms", None, Duration::from_millis(300));
    let up = transfer(
        relay.addr,
        &id,
        TransferSpec::upload(5_000_000, "cubic".parse().unwrap()),
    );
    // A download: the server is the sender and must follow the client to
    // its new address (and keep the requested controller, see Node::drive).
    let mut spec = TransferSpec::upload(5_000_000, "newreno".parse().unwrap());
    spec.direction = tput_transport::Direction::Download;
    let down = transfer(relay.addr, &id, spec);
    let s = relay.finish();
    assert_verified(&up, 5_000_000);
    assert_verified(&down, 5_000_000);
    assert!(
        s.rebinds as f64 >= (up.elapsed_secs + down.elapsed_secs) / 0.3 - 2.0 && s.rebinds >= 2,
        "{} rebinds in {} + {} s",
        s.rebinds,
        up.elapsed_secs,
        down.elapsed_secs
    );
    assert_eq!(down.cc, "newreno");
}

#[test]
fn a_dead_path_fails_with_a_clear_error_in_bounded_time() {
    let _turn = turn();
    let idle = Duration::from_secs(2);
    let (server, id) = start_server_with(node_config_idle(idle));
    // Connected for the first 300 ms of every 60 s: the path dies
    // mid-transfer for far longer than the idle timeout.
    let relay = start_relay(
        server,
        "rate=20Mbit/s,delay=5ms,queue_packets=50,cutoff.period=60s,cutoff.connected=0.005,cutoff.mode=drop",
        None,
    );
    let t = Instant::now();
    let o = transfer_with(
        relay.addr,
        &id,
        TransferSpec::upload(50_000_000, "cubic".parse().unwrap()),
        node_config_idle(idle),
    );
    let took = t.elapsed();
    relay.finish();
    let err = o.error.as_deref().expect("the transfer cannot complete");
    assert!(err.contains("timed out") || err.contains("idle"), "{err}");
    assert!(o.bytes < 50_000_000);
    // The connected 300 ms, then the idle timeout. quinn-proto arms the
    // idle timer for max(idle, 3 PTO) (RFC 9000 §10.1; 3 PTO stays well
    // under 2 s with a 50-packet queue) at the last packet received, and
    // again at the first ack-eliciting packet sent after it: the end comes
    // at most two timer lengths after the path died; 1 s slack.
    assert!(
        took < Duration::from_millis(300) + 2 * idle + Duration::from_secs(1),
        "{took:?} {err} {} B {:?}",
        o.bytes,
        o.intervals.last()
    );
}

#[test]
fn transfer_through_a_drop_cutoff() {
    let _turn = turn();
    let (server, id) = start_server();
    let relay = start_relay(
        server,
        "rate=100Mbit/s,delay=2ms,cutoff.period=50ms,cutoff.connected=0.8,cutoff.mode=drop",
        None,
    );
    let o = transfer(
        relay.addr,
        &id,
        TransferSpec::upload(3_000_000, "newreno".parse().unwrap()),
    );
    let s = relay.finish();
    assert_verified(&o, 3_000_000);
    assert!(s.forward.dropped_cutoff.packets > 0, "{:?}", s.forward);
    assert_eq!(s.reverse.dropped_cutoff.packets, 0);
}

#[test]
fn transfer_through_a_rate_step() {
    let _turn = turn();
    let (server, id) = start_server();
    // 10 Mbit/s for the first 300 ms, then 100 Mbit/s.
    let relay = start_relay(
        server,
        "rate=10Mbit/s,delay=5ms,queue_packets=100,rate_schedule=300ms:100Mbit/s",
        None,
    );
    let o = transfer(
        relay.addr,
        &id,
        TransferSpec::upload(4_000_000, "cubic".parse().unwrap()),
    );
    let s = relay.finish();
    assert_verified(&o, 4_000_000);
    assert_eq!(s.forward.rate_bps, 100_000_000);
    // 4 MB at 10 Mbit/s would take 3.2 s: the step took effect.
    assert!(o.elapsed_secs < 2.5, "{} s", o.elapsed_secs);
}

#[test]
fn transfer_through_100ms_delay() {
    let _turn = turn();
    let (server, id) = start_server();
    let relay = start_relay(server, "rate=100Mbit/s,delay=100ms", None);
    let o = transfer(
        relay.addr,
        &id,
        TransferSpec::upload(2_000_000, "cubic".parse().unwrap()),
    );
    let s = relay.finish();
    assert_verified(&o, 2_000_000);
    let min_rtt = o.intervals.iter().map(|i| i.min_rtt_ms).fold(f64::INFINITY, f64::min);
    // 100 ms each way plus serialization: the RTT is just over 200 ms.
    assert!((200.0..210.0).contains(&min_rtt), "min RTT {min_rtt} ms");
    assert!(s.forward.delivered.packets > 1000);
}

/// Sends `count` datagrams of `size` bytes at `pps` per second from one
/// socket through `relay` to `sink`, each carrying its send time (ns since
/// `t0`); returns (send-to-receive delay in ns, receive time in ns) per
/// datagram received.
fn blast(relay: SocketAddr, sink: UdpSocket, size: usize, pps: f64, count: u64) -> Vec<(u64, u64)> {
    let t0 = Instant::now();
    sink.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
    let rx = thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        let mut got = Vec::new();
        while let Ok(n) = sink.recv(&mut buf) {
            let now = t0.elapsed().as_nanos() as u64;
            if n >= 8 {
                let sent = u64::from_be_bytes(buf[..8].try_into().unwrap());
                got.push((now - sent, now));
            }
        }
        got
    });
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut payload = vec![0u8; size];
    for i in 0..count {
        // Sleep (not spin: the relay needs the core) until due; each
        // datagram carries its own send time, so pacing need not be exact.
        let due = Duration::from_secs_f64(i as f64 / pps);
        if let Some(wait) = due.checked_sub(t0.elapsed()) {
            thread::sleep(wait);
        }
        let now = t0.elapsed().as_nanos() as u64;
        payload[..8].copy_from_slice(&now.to_be_bytes());
        let _ = tx.send_to(&payload, relay);
    }
    rx.join().unwrap()
}

/// Generous bounds: the machine running the tests may be busy. The
/// `relay_accuracy` example measures the real figures.
#[test]
fn rate_and_delay_accuracy() {
    let _turn = turn();
    // A large receive buffer: a busy machine may leave the reading thread
    // unscheduled for milliseconds while 3000 datagrams/s arrive.
    let sink = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::DGRAM, None).unwrap();
    sink.set_recv_buffer_size(16 << 20).unwrap();
    sink.bind(&"127.0.0.1:0".parse::<SocketAddr>().unwrap().into()).unwrap();
    let sink: UdpSocket = sink.into();
    let to = sink.local_addr().unwrap();
    let relay = start_relay(to, "rate=36.864Mbit/s,delay=20ms,queue_packets=10000", None);
    // Delay: paced at half the rate, no queueing; 1200 + 28 wire bytes take
    // 266.4 us to serialize.
    let paced = blast(relay.addr, sink.try_clone().unwrap(), 1200, 1875.0, 1500);
    // Rate: offered at 1.5 times the rate; after the first tenth the
    // arrivals come at the link rate.
    let flood = blast(relay.addr, sink, 1200, 5625.0, 5625);
    let s = relay.finish();
    let f = &s.forward;
    // Every datagram is accounted for: delivered, or dropped because the
    // relay could not keep up (counted, not silent), and few are.
    assert_eq!(f.offered.packets, 1500 + 5625, "{f:?}");
    assert_eq!(
        f.delivered.packets + f.dropped_overload.packets,
        f.offered.packets,
        "{f:?}"
    );
    assert_eq!((paced.len() + flood.len()) as u64, f.delivered.packets, "{f:?}");
    assert!(f.dropped_overload.packets * 20 < f.offered.packets, "{f:?}");

    let expect = 20_000_000 + 266_400;
    let mut err: Vec<i64> = paced.iter().map(|&(d, _)| d as i64 - expect).collect();
    err.sort_unstable();
    let (min, p50, p99) = (err[0], err[err.len() / 2], err[err.len() * 99 / 100]);
    assert!(min > -100_000, "a datagram arrived {} ns early", -min);
    assert!(p50 < 2_000_000, "median added delay error {p50} ns");
    assert!(p99 < 20_000_000, "p99 added delay error {p99} ns");

    let times: Vec<u64> = flood.iter().map(|&(_, t)| t).collect();
    let (a, b) = (times[times.len() / 10], times[times.len() - 1]);
    let n = (times.len() - 1 - times.len() / 10) as f64;
    let rate = n * 1228.0 * 8.0 / ((b - a) as f64 / 1e9);
    assert!((rate / 36_864_000.0 - 1.0).abs() < 0.05, "delivered {rate} bit/s");
}

#[test]
fn live_and_simulated_goodput_agree() {
    let _turn = turn();
    let link = "rate=36.864Mbit/s,delay=50ms,queue_packets=400";
    let secs = 4;
    let spec = parse_link_list(link, "link").unwrap();
    let mut sc = Scenario::new(
        Duration::from_secs(secs),
        TopologySpec::Chain { hops: vec![spec] },
        vec![FlowGroup::new("newreno".parse().unwrap())],
    );
    sc.seed = 3;
    let sim = scenario::run(&sc, |_| {}).unwrap();
    let sim_bps = sim.flows[0].goodput_bps();

    let (server, id) = start_server();
    let relay = start_relay(server, link, None);
    let mut t = TransferSpec::upload(0, "newreno".parse().unwrap());
    t.bytes = None;
    t.duration = Some(Duration::from_secs(secs));
    let o = transfer(relay.addr, &id, t);
    let s = relay.finish();
    assert!(o.ok(), "{:?}", o.error);
    let r = o.receiver.as_ref().unwrap();
    let live_bps = r.bytes as f64 * 8.0 / r.duration_secs;
    eprintln!("simulated {sim_bps:.0} bit/s, live {live_bps:.0} bit/s, relay {s:?}");
    assert!(
        (live_bps / sim_bps - 1.0).abs() < 0.10,
        "simulated {sim_bps:.0} bit/s, live {live_bps:.0} bit/s"
    );
}
