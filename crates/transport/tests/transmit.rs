//! How a live node hands datagrams to its socket: GSO batches stay under
//! the 64 KiB a single UDP send may carry, and with a transmit budget a
//! connection yields after that many datagrams (and sends on when asked),
//! without losing or reordering anything: the transfer completes verified.

use tput_transport::{Identity, Node, NodeConfig, Pair, ServerTrust, SimOptions, TransferOutcome, TransferSpec};

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
    let config = NodeConfig::default().with_mtu_discovery(false);
    let sim = |seed| SimOptions::seeded(seed);
    let identity = Identity::self_signed_from_seed(&["localhost"], 9).unwrap();
    let server = Node::simulated(config.clone(), Some(&identity), sim(1)).unwrap();
    let mut client = Node::simulated(config, None, sim(2)).unwrap();
    client.set_max_segments(segments);
    if let Some(b) = budget {
        client.set_transmit_budget(b);
    }
    let mut pair = Pair::new(client, server, ServerTrust::Pinned(identity.fingerprint()));
    pair.start(TransferSpec::upload(bytes, "newreno".parse().unwrap()))
        .unwrap();
    let (mut bursts, mut largest_send) = (Vec::new(), 0);
    // After each call into the client: what it produced.
    let outcome = pair
        .run(2_000_000, |out| {
            largest_send = out.iter().map(|o| o.payload.len()).fold(largest_send, usize::max);
            bursts.push(out.iter().map(|o| o.datagrams().count()).sum());
        })
        .expect("the transfer finished");
    Seen {
        outcome,
        bursts,
        largest_send,
        yields: pair.yields,
    }
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
