//! The node paces a BBR flow at BBR's own pacing rate, in virtual time: the
//! sender's datagrams leave its host spaced by size / pacing rate, not in
//! the bursts the window and quinn-proto's pacer (1.25 x cwnd / srtt) allow.

use std::time::{Duration, Instant};

use bytes::Bytes;
use tput_cc::{AlgorithmState, QuinnCc};
use tput_lab::host::QuicHost;
use tput_netsim::{
    Addr, Datagram, Dumbbell, DumbbellConfig, Ecn, FlowId, Host, LinkConfig, QueueLimit, Rate, SimTime, Simulator,
};
use tput_transport::{Direction, Identity, Node, NodeConfig, ServerTrust, SimOptions, TransferSpec};

/// One datagram the sender handed to the simulator.
#[derive(Debug, Clone, Copy)]
struct Sent {
    at: SimTime,
    bytes: u64,
    /// BBR's `C.pacing_rate` as the node's probe last reported it, bytes/s.
    pacing_rate: f64,
}

/// The client's [`QuicHost`], recording every datagram it sends.
struct Recording {
    inner: QuicHost,
    sent: Vec<Sent>,
}

impl Host for Recording {
    fn on_attach(&mut self, now: SimTime, local: Addr) {
        self.inner.on_attach(now, local)
    }
    fn on_datagram(&mut self, now: SimTime, from: Addr, flow: FlowId, ecn: Ecn, payload: Bytes) {
        self.inner.on_datagram(now, from, flow, ecn, payload)
    }
    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        let d = self.inner.poll_transmit(now)?;
        let pacing_rate = match self.inner.node().snapshot(0).map(|s| s.state) {
            Some(AlgorithmState::Bbr {
                pacing_rate_bytes_per_sec,
                ..
            }) => pacing_rate_bytes_per_sec,
            _ => 0.0,
        };
        self.sent.push(Sent {
            at: now,
            bytes: d.payload.len() as u64,
            pacing_rate,
        });
        Some(d)
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        self.inner.poll_timeout()
    }
    fn on_timeout(&mut self, now: SimTime) {
        self.inner.on_timeout(now)
    }
}

/// A `secs`-second upload with `cc` over 100 Mbit/s, 20 ms RTT, behind 1 Gbit/s
/// access links (the sender could burst at ten times the bottleneck rate);
/// every datagram the sender sent.
fn upload(cc: &str, secs: u64) -> Vec<Sent> {
    upload_with(cc, None, secs)
}

/// [`upload`], with quinn-proto's controller `quinn` instead of ours if given.
fn upload_with(cc: &str, quinn: Option<QuinnCc>, secs: u64) -> Vec<Sent> {
    let d = Dumbbell::build(&DumbbellConfig::new(
        1,
        LinkConfig::new(Rate::from_gbit_per_sec(1), Duration::from_millis(1)),
        LinkConfig::new(Rate::from_mbit_per_sec(100), Duration::from_millis(8)).with_queue(QueueLimit::Packets(200)),
    ))
    .unwrap();
    let epoch = Instant::now();
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let mut sim = Simulator::new(d.topology, 11);
    let server_addr = Addr::new(d.receivers[0], 4433);
    let config = NodeConfig::default().with_mtu_discovery(false);
    let seeded = |seed| SimOptions::seeded(seed).with_null_packet_protection(true);
    let server = Node::simulated(config.clone(), Some(&id), seeded(1)).unwrap();
    sim.attach(server_addr, QuicHost::new(server, epoch, ServerTrust::Insecure))
        .unwrap();
    let client = Node::simulated(config, None, seeded(2)).unwrap();
    let mut host = QuicHost::new(client, epoch, ServerTrust::Root(id.cert_der().to_vec()));
    let mut spec =
        TransferSpec::new(Direction::Upload, cc.parse().unwrap()).with_duration(Some(Duration::from_secs(secs)));
    if let Some(q) = quinn {
        spec = spec.with_controller(q);
    }
    host.schedule(SimTime::ZERO, server_addr, spec);
    let client = sim
        .attach(
            Addr::new(d.senders[0], 5000),
            Recording {
                inner: host,
                sent: Vec::new(),
            },
        )
        .unwrap();
    sim.run_until(SimTime::from_secs(secs));
    std::mem::take(&mut sim.host_mut::<Recording>(client).unwrap().sent)
}

/// Full-size datagrams (the payload's) sent after `from`.
fn data_after(sent: &[Sent], from: SimTime) -> Vec<Sent> {
    sent.iter()
        .filter(|s| s.at >= from && s.bytes >= 1100)
        .copied()
        .collect()
}

#[test]
fn a_bbr_flow_s_datagrams_are_spaced_by_its_pacing_rate() {
    let sent = upload("bbr", 4);
    // Past Startup and Drain (a few round trips of 20 ms).
    let data = data_after(&sent, SimTime::from_millis(1000));
    assert!(data.len() > 10_000, "{} datagrams: the flow stalled", data.len());
    assert!(data.iter().all(|s| s.pacing_rate > 0.0), "BBR reports a pacing rate");

    // Each gap against size / pacing rate: a paced sender, limited by the
    // pacer rather than the window, sends its next datagram exactly when
    // the bucket holds it again, so most gaps are that long (ratio 1).
    let mut ratios: Vec<f64> = data
        .windows(2)
        .map(|w| {
            let gap = (w[1].at.as_nanos() - w[0].at.as_nanos()) as f64 / 1e9;
            gap * w[0].pacing_rate / w[1].bytes as f64
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let median = ratios[ratios.len() / 2];
    assert!((0.95..1.05).contains(&median), "median gap / (size / rate) = {median}");
    let back_to_back = ratios.iter().filter(|&&r| r < 0.01).count() as f64 / ratios.len() as f64;
    assert!(
        back_to_back < 0.2,
        "{:.0} % of datagrams back to back",
        back_to_back * 100.0
    );

    // Never faster than the pacing rate: in any 5 ms the sender sends no
    // more than 5 ms at its highest rate of the period plus one bucket
    // (BBR's send quantum, at most 64 KBytes, draft-ietf-ccwg-bbr-06 §5.6.3).
    let window = 5_000_000u64;
    let mut j = 0;
    for i in 0..data.len() {
        while j < data.len() && data[j].at.as_nanos() < data[i].at.as_nanos() + window {
            j += 1;
        }
        let bytes: u64 = data[i..j].iter().map(|s| s.bytes).sum();
        let rate = data[i..j].iter().map(|s| s.pacing_rate).fold(0.0, f64::max);
        let allowed = rate * window as f64 / 1e9 + 64.0 * 1024.0 + 1200.0;
        assert!(
            (bytes as f64) <= allowed,
            "{bytes} bytes in 5 ms from {:?}, pacing rate {rate} B/s",
            data[i].at
        );
    }
}

/// A controller without a pacing rate is not paced by the node: NewReno's
/// window goes out as quinn-proto's own pacer lets it, in bursts well
/// above the bottleneck rate.
#[test]
fn newreno_is_left_to_quinn_s_pacer() {
    let sent = upload("newreno", 2);
    let data = data_after(&sent, SimTime::from_millis(500));
    let back_to_back = data
        .windows(2)
        .filter(|w| w[1].at.as_nanos() - w[0].at.as_nanos() < 20_000)
        .count() as f64
        / data.len() as f64;
    // The bottleneck's own spacing of 1228 wire bytes at 100 Mbit/s is 98 us.
    assert!(
        back_to_back > 0.3,
        "{:.0} % of NewReno's datagrams within 20 us of the previous one",
        back_to_back * 100.0
    );
}

/// The share of full-size datagrams sent within 20 us of the previous one
/// after `from` (the bottleneck's own spacing of 1228 wire bytes at
/// 100 Mbit/s is 98 us; the access link's, 10 us).
fn back_to_back(sent: &[Sent], from: SimTime) -> f64 {
    let data = data_after(sent, from);
    assert!(data.len() > 1000, "{} datagrams: the flow stalled", data.len());
    data.windows(2)
        .filter(|w| w[1].at.as_nanos() - w[0].at.as_nanos() < 20_000)
        .count() as f64
        / data.len() as f64
}

/// quinn-proto's BBR reports the pacing rate it computes in its metrics;
/// `quinn-bbr-paced` hands that rate to the node's pacer, so its datagrams
/// are spread out, where plain `quinn-bbr` goes out as quinn-proto's pacer
/// (1.25 x cwnd / srtt, with its burst) lets it.
#[test]
fn quinn_bbr_paced_is_paced_at_its_own_rate() {
    let from = SimTime::from_millis(1000);
    let paced = back_to_back(&upload_with("bbr", Some(QuinnCc::BbrPaced), 3), from);
    let unpaced = back_to_back(&upload_with("bbr", Some(QuinnCc::Bbr), 3), from);
    assert!(
        paced < 0.2 && unpaced > 2.0 * paced,
        "back to back: {:.1} % paced, {:.1} % under quinn-proto's pacer",
        paced * 100.0,
        unpaced * 100.0
    );
}
