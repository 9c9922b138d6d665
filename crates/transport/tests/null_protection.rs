//! Null packet protection (simulations only): a transfer between two nodes
//! that both use it completes verified with the payload readable on the
//! wire; with real protection it is not; and the UDP loop refuses a node
//! built with it.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use tput_transport::{Identity, Node, NodeConfig, NodeEvent, ServerTrust, SimOptions, TransferOutcome, TransferSpec};

/// Runs one upload of `bytes` between a client and a server node joined by
/// an ideal 1 ms link; returns the outcome and every datagram the client sent.
fn upload(null: bool, bytes: u64) -> (TransferOutcome, Vec<Vec<u8>>) {
    let config = NodeConfig {
        mtu_discovery: false,
        ..NodeConfig::default()
    };
    let sim = |seed| SimOptions {
        seed: Some(seed),
        null_packet_protection: null,
        ..SimOptions::default()
    };
    let identity = Identity::self_signed_from_seed(&["localhost"], 9).unwrap();
    let mut server = Node::simulated(config.clone(), Some(&identity), sim(1)).unwrap();
    let mut client = Node::simulated(config, None, sim(2)).unwrap();
    let (c_addr, s_addr): (SocketAddr, SocketAddr) =
        ("10.0.0.1:5000".parse().unwrap(), "10.0.0.2:4433".parse().unwrap());
    let mut now = Instant::now();
    let trust = ServerTrust::Pinned(identity.fingerprint());
    // The request names the controller in its clear text: `cubic`.
    client
        .start_transfer(
            now,
            s_addr,
            "localhost",
            &trust,
            TransferSpec::upload(bytes, "cubic".parse().unwrap()),
        )
        .unwrap();
    let mut sent = Vec::new();
    // (arrival time, to the server?, datagram)
    let mut wire: Vec<(Instant, bool, Vec<u8>)> = Vec::new();
    for _ in 0..1_000_000 {
        while let Some(o) = client.poll_transmit() {
            for d in o.datagrams() {
                sent.push(d.to_vec());
                wire.push((now + Duration::from_millis(1), true, d.to_vec()));
            }
        }
        while let Some(o) = server.poll_transmit() {
            for d in o.datagrams() {
                wire.push((now + Duration::from_millis(1), false, d.to_vec()));
            }
        }
        while let Some(ev) = client.poll_event() {
            if let NodeEvent::Finished(o) = ev {
                return (*o, sent);
            }
        }
        while server.poll_event().is_some() {}
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
        for (_, to_server, d) in due {
            if to_server {
                server.handle_datagram(now, c_addr, 0, BytesMut::from(&d[..]));
            } else {
                client.handle_datagram(now, s_addr, 0, BytesMut::from(&d[..]));
            }
        }
        client.handle_timeout(now);
        server.handle_timeout(now);
    }
    panic!("the transfer never finished");
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
        let sim = SimOptions {
            null_packet_protection: true,
            ..SimOptions::default()
        };
        let mut node = Node::simulated(NodeConfig::default(), Some(&id), sim).unwrap();
        let e = tput_transport::udp::drive(&socket, &mut node, |_, _| std::ops::ControlFlow::Break(()))
            .await
            .unwrap_err();
        assert!(e.to_string().contains("simulations only"), "{e}");
    });
}
