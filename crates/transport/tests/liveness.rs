//! How a transfer meets a path that goes silent: two [`Node`]s in a
//! [`Pair`], in virtual time, through a path whose two directions can be
//! cut. A path that comes back after an outage carries the transfer on,
//! soon after it returns (stall probes); a dead path ends the transfer within the idle
//! timeout of the last packet received, and the peer hears why if its
//! direction still works (strict idle timeout). Virtual time makes the
//! timings exact, whatever the machine's load.

use std::time::{Duration, Instant};

use tput_transport::{
    CLOSE_TIMED_OUT, Identity, Link, Node, NodeConfig, Pair, ServerTrust, SimOptions, TransferError, TransferOutcome,
    TransferSpec,
};

const ONE_WAY: Duration = Duration::from_millis(10);
/// Both ends' idle timeout, seconds.
const IDLE: f64 = 3.0;
/// The longest interval between stall probes: 500 ms stretched by up to 50 %.
const PROBE_GAP: f64 = 0.75;

/// Which direction of the path is cut at a moment (seconds from the start).
type Cut = fn(f64) -> bool;

/// The client's and the server's outcome, and the times (seconds from the
/// start) at which the server received datagrams.
struct Run {
    client: Option<(f64, TransferOutcome)>,
    server: Option<(f64, TransferOutcome)>,
    server_heard: Vec<f64>,
    client_sent: Vec<f64>,
}

fn config(stall_probe: bool) -> NodeConfig {
    NodeConfig::default()
        .with_mtu_discovery(false)
        .with_idle_timeout(Duration::from_secs_f64(IDLE))
        .with_strict_idle(true)
        .with_stall_probe(stall_probe.then_some(Duration::from_millis(500)))
}

/// A direction of the path: `ONE_WAY`, dropping what it carries while `cut` says so.
fn link(cut: Cut) -> Link {
    Link::new(ONE_WAY).with_drop(move |d| cut(d.at.as_secs_f64()))
}

/// An upload of `bytes` from a client to a server node, each way `ONE_WAY`
/// and as fast as the nodes send, the client-to-server direction dropping
/// what it carries while `up_cut` says so and the other while `down_cut`
/// does; runs until both ends have reported or 30 s have passed.
fn run(bytes: u64, stall_probe: bool, up_cut: Cut, down_cut: Cut) -> Run {
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let sim = SimOptions::seeded(3);
    let server = Node::simulated(config(stall_probe), Some(&identity), sim).unwrap();
    let client = Node::simulated(config(stall_probe), None, sim).unwrap();
    let mut pair =
        Pair::new(client, server, ServerTrust::Pinned(identity.fingerprint())).with_links(link(up_cut), link(down_cut));
    pair.start(TransferSpec::upload(bytes, "cubic".parse().unwrap()))
        .unwrap();
    pair.run_until(usize::MAX, |p| {
        p.elapsed() >= Duration::from_secs(30) || (!p.client_outcomes.is_empty() && !p.server_outcomes.is_empty())
    });
    let start = pair.start;
    let secs = |t: &Instant| (*t - start).as_secs_f64();
    let first = |v: &[(Instant, TransferOutcome)]| v.first().map(|(t, o)| (secs(t), o.clone()));
    Run {
        client: first(&pair.client_outcomes),
        server: first(&pair.server_outcomes),
        server_heard: pair.up.stats().delivered_at.iter().map(secs).collect(),
        client_sent: pair.up.stats().offered_at.iter().map(secs).collect(),
    }
}

fn never(_: f64) -> bool {
    false
}

/// From 0.3 s to 2.0 s: the path returns well within the 3 s idle timeout
/// counted from the last packet before the outage.
fn outage(t: f64) -> bool {
    (0.3..OUTAGE_END).contains(&t)
}

const OUTAGE_END: f64 = 2.0;

/// From 0.3 s on, for good.
fn dead(t: f64) -> bool {
    t >= 0.3
}

/// The first time the server heard the client after `t`.
fn first_after(heard: &[f64], t: f64) -> f64 {
    heard.iter().copied().find(|&h| h >= t).unwrap_or(f64::INFINITY)
}

#[test]
fn after_an_outage_a_stalled_sender_is_heard_within_one_probe_interval() {
    // 20 MB do not fit in 0.3 s, so the client is mid-transfer when the
    // path to the server goes silent.
    let with = run(20_000_000, true, outage, never);
    let (_, o) = with.client.as_ref().expect("the client reported");
    assert!(o.ok(), "{:?}", o.error);
    assert_eq!(o.receiver.as_ref().unwrap().bytes, 20_000_000);
    // A stall probe goes out at most 750 ms after the previous one (or
    // after the last acknowledgement).
    let back = first_after(&with.server_heard, OUTAGE_END);
    assert!(
        back <= OUTAGE_END + PROBE_GAP + ONE_WAY.as_secs_f64() + 1e-3,
        "heard again at {back} s"
    );

    // Through the outage the sender was never silent for longer than the
    // probe interval; without stall probes its own probes, 2^k probe
    // timeouts apart (RFC 9002 §6.2.1), leave longer gaps. Virtual time and
    // fixed seeds make both runs the same every time.
    let longest_silence = |r: &Run| {
        let sent: Vec<f64> = r.client_sent.iter().copied().filter(|&t| t >= 0.3).collect();
        sent.windows(2)
            .filter(|w| w[0] < OUTAGE_END)
            .map(|w| w[1] - w[0])
            .fold(0.0, f64::max)
    };
    let (probed, unprobed) = (
        longest_silence(&with),
        longest_silence(&run(20_000_000, false, outage, never)),
    );
    assert!(
        probed <= PROBE_GAP + 1e-3,
        "longest silence with stall probes: {probed} s"
    );
    assert!(unprobed > PROBE_GAP, "longest silence without: {unprobed} s");
}

#[test]
fn a_dead_path_ends_the_transfer_one_idle_timeout_after_the_last_packet() {
    // Both directions die at 0.3 s.
    let r = run(20_000_000, true, dead, dead);
    let idle = IDLE;
    for (who, end) in [("client", &r.client), ("server", &r.server)] {
        let (at, o) = end.as_ref().unwrap_or_else(|| panic!("the {who} never reported"));
        assert_eq!(
            o.error,
            Some(TransferError::TimedOut {
                idle_timeout: Some(Duration::from_secs_f64(IDLE))
            }),
            "{who}"
        );
        // Both ends were busy until 0.3 s and heard their last packet by
        // 0.3 s + one way: each reports one idle timeout after it, without
        // waiting out the close's draining.
        assert!(*at >= 0.3 + idle - 0.05, "{who} ended at {at} s");
        assert!(
            *at <= 0.3 + ONE_WAY.as_secs_f64() + idle + 1e-3,
            "{who} ended at {at} s"
        );
    }
}

#[test]
fn when_one_direction_dies_the_other_end_hears_why() {
    // Only the client-to-server direction dies: the server hears nothing,
    // times out, and its close reaches the client, which still hears it.
    let r = run(20_000_000, true, dead, never);
    let (_, server) = r.server.as_ref().expect("the server reported");
    let (at, client) = r.client.as_ref().expect("the client reported");
    assert!(
        matches!(server.error, Some(TransferError::TimedOut { .. })),
        "{:?}",
        server.error
    );
    let Some(TransferError::ClosedByPeer { code, reason }) = &client.error else {
        panic!("{:?}", client.error)
    };
    assert_eq!(*code, u64::from(CLOSE_TIMED_OUT));
    assert!(reason.starts_with("connection timed out"), "{reason}");
    // Its close crosses in one way; the client, which did not time out
    // itself, then drains for three probe timeouts (RFC 9000 §10.2).
    assert!(
        *at <= 0.3 + ONE_WAY.as_secs_f64() + IDLE + ONE_WAY.as_secs_f64() + 1.0,
        "client ended at {at} s"
    );
}
