//! Null packet protection (simulations only): a transfer between two nodes
//! that both use it completes verified with the payload readable on the
//! wire; with real protection it is not; and the UDP loop refuses a node
//! built with it.

use tput_transport::{Identity, Node, NodeConfig, Pair, ServerTrust, SimOptions, TransferOutcome, TransferSpec};

/// Runs one upload of `bytes` between a client and a server node joined by
/// an ideal 1 ms link; returns the outcome and every datagram the client sent.
fn upload(null: bool, bytes: u64) -> (TransferOutcome, Vec<Vec<u8>>) {
    let config = NodeConfig::default().with_mtu_discovery(false);
    let sim = |seed| SimOptions::seeded(seed).with_null_packet_protection(null);
    let identity = Identity::self_signed_from_seed(&["localhost"], 9).unwrap();
    let server = Node::simulated(config.clone(), Some(&identity), sim(1)).unwrap();
    let client = Node::simulated(config, None, sim(2)).unwrap();
    let mut pair = Pair::new(client, server, ServerTrust::Pinned(identity.fingerprint()));
    // The request names the controller in its clear text: `cubic`.
    pair.start(TransferSpec::upload(bytes, "cubic".parse().unwrap()))
        .unwrap();
    let mut sent = Vec::new();
    let outcome = pair
        .run(1_000_000, |out| {
            sent.extend(out.iter().flat_map(|o| o.datagrams()).map(|d| d.to_vec()));
        })
        .expect("the transfer finished");
    (outcome, sent)
}

fn shows(datagrams: &[Vec<u8>], needle: &[u8]) -> bool {
    datagrams.iter().any(|d| d.windows(needle.len()).any(|w| w == needle))
}

#[test]
fn null_protection_completes_verified_with_the_payload_in_the_clear() {
    let (o, sent) = upload(true, 300_000);
    assert!(o.ok(), "{:?}", o.error);
    assert_eq!(o.receiver.as_ref().unwrap().bytes, 300_000, "verified by the receiver");
    assert!(shows(&sent, b"cubic"), "the request is readable on the wire");
    let (real, real_sent) = upload(false, 300_000);
    assert!(real.ok(), "{:?}", real.error);
    assert!(!shows(&real_sent, b"cubic"), "encrypted: the request is not readable");
    // Same sizes, packet for packet.
    let sizes = |v: &[Vec<u8>]| v.iter().map(Vec::len).collect::<Vec<_>>();
    assert_eq!(sizes(&sent), sizes(&real_sent));
}

#[test]
fn live_sockets_refuse_null_protection() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let socket = tput_transport::udp::bind_server("127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
        let id = Identity::self_signed(&["localhost"]).unwrap();
        let sim = SimOptions::default().with_null_packet_protection(true);
        let mut node = Node::simulated(NodeConfig::default(), Some(&id), sim).unwrap();
        let e = tput_transport::udp::drive(&socket, &mut node, |_, _| std::ops::ControlFlow::Break(()))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("simulations only"), "{e}");
    });
}
