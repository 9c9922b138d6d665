//! How a live node hands datagrams to its socket: GSO batches stay under
//! the 64 KiB a single UDP send may carry, and with a transmit budget a
//! connection yields after that many datagrams (and sends on when asked),
//! without losing or reordering anything: the transfer completes verified.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use tput_transport::{Identity, Node, NodeConfig, NodeEvent, ServerTrust, SimOptions, TransferOutcome, TransferSpec};

/// Largest UDP payload of one send (65 535 less the UDP and IPv4 headers).
const MAX_SEND: usize = 65_507;

struct Seen {
    outcome: TransferOutcome,
    /// Datagrams the client produced per call into the node.
    bursts: Vec<usize>,
    largest_send: usize,
    yields: usize,
}

/// An upload of `bytes` over an ideal 1 ms link; the client may batch
/// `segments` datagrams per send and yields after `budget` (None: never).
fn upload(bytes: u64, segments: usize, budget: Option<usize>) -> Seen {
    let config = NodeConfig {
        mtu_discovery: false,
        ..NodeConfig::default()
    };
    let sim = |seed| SimOptions {
        seed: Some(seed),
        ..SimOptions::default()
    };
    let identity = Identity::self_signed_from_seed(&["localhost"], 9).unwrap();
    let mut server = Node::simulated(config.clone(), Some(&identity), sim(1)).unwrap();
    let mut client = Node::simulated(config, None, sim(2)).unwrap();
    client.set_max_segments(segments);
    if let Some(b) = budget {
        client.set_transmit_budget(b);
    }
    let (c_addr, s_addr): (SocketAddr, SocketAddr) =
        ("10.0.0.1:5000".parse().unwrap(), "10.0.0.2:4433".parse().unwrap());
    let mut now = Instant::now();
    let trust = ServerTrust::Pinned(identity.fingerprint());
    client
        .start_transfer(
            now,
            s_addr,
            "localhost",
            &trust,
            TransferSpec::upload(bytes, "newreno".parse().unwrap()),
        )
        .unwrap();
    let (mut bursts, mut largest_send, mut yields) = (Vec::new(), 0, 0);
    let mut wire: Vec<(Instant, bool, Vec<u8>)> = Vec::new();
    // After each call into the client: what it produced.
    let mut drain = |client: &mut Node, now: Instant, wire: &mut Vec<(Instant, bool, Vec<u8>)>| {
        let mut burst = 0;
        while let Some(o) = client.poll_transmit() {
            largest_send = largest_send.max(o.payload.len());
            for d in o.datagrams() {
                burst += 1;
                wire.push((now + Duration::from_millis(1), true, d.to_vec()));
            }
        }
        if burst > 0 {
            bursts.push(burst);
        }
    };
    for _ in 0..2_000_000 {
        drain(&mut client, now, &mut wire);
        while let Some(o) = server.poll_transmit() {
            for d in o.datagrams() {
                wire.push((now + Duration::from_millis(1), false, d.to_vec()));
            }
        }
        while let Some(ev) = client.poll_event() {
            if let NodeEvent::Finished(o) = ev {
                return Seen {
                    outcome: *o,
                    bursts,
                    largest_send,
                    yields,
                };
            }
        }
        while server.poll_event().is_some() {}
        if client.has_more_to_send() {
            // What a live loop does: take in what has arrived, then send on.
            yields += 1;
            client.send_more(now);
            continue;
        }
        let next = [
            wire.iter().map(|w| w.0).min(),
            client.poll_timeout(),
            server.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("something to do");
        now = now.max(next);
        let (due, rest): (Vec<_>, Vec<_>) = wire.into_iter().partition(|w| w.0 <= now);
        wire = rest;
        let mut to_client = Vec::new();
        for (_, to_server, d) in due {
            if to_server {
                server.handle_datagram(now, c_addr, 0, BytesMut::from(&d[..]));
            } else {
                to_client.push((s_addr, BytesMut::from(&d[..])));
            }
        }
        // As the live loop does: a receive batch drives each connection once.
        client.handle_datagrams(now, 0, to_client);
        drain(&mut client, now, &mut wire);
        client.handle_timeout(now);
        server.handle_timeout(now);
    }
    panic!("the transfer never finished");
}

#[test]
fn gso_batches_stay_under_one_udp_send() {
    // 64 segments of 1200 bytes would be 76 800 bytes: the kernel refuses that.
    let seen = upload(3_000_000, 64, None);
    assert!(seen.outcome.ok(), "{:?}", seen.outcome.error);
    assert_eq!(seen.outcome.receiver.as_ref().unwrap().bytes, 3_000_000);
    assert!(seen.largest_send <= MAX_SEND, "a send of {} bytes", seen.largest_send);
    assert!(seen.largest_send > 60_000, "batches were small: {}", seen.largest_send);
}

#[test]
fn a_transmit_budget_yields_and_sends_on() {
    let (budget, segments) = (8, 4);
    let free = upload(3_000_000, segments, None);
    let paced = upload(3_000_000, segments, Some(budget));
    for s in [&free, &paced] {
        assert!(s.outcome.ok(), "{:?}", s.outcome.error);
        assert_eq!(s.outcome.receiver.as_ref().unwrap().bytes, 3_000_000, "verified");
    }
    // Without a budget a drive empties the window in one go.
    let free_max = free.bursts.iter().copied().max().unwrap();
    assert!(free_max > 2 * budget, "largest burst without a budget: {free_max}");
    // With it, one drive stops once it has `budget` datagrams (the last
    // batch may overshoot by `segments - 1`), and the rest follows on request.
    let paced_max = paced.bursts.iter().copied().max().unwrap();
    assert!(paced_max < budget + segments, "a burst of {paced_max} datagrams");
    assert!(paced.yields > 10, "{} yields", paced.yields);
    assert_eq!(free.yields, 0);
}
