//! Fuzz harnesses of this crate's wire decoders and of a server node: each
//! takes arbitrary bytes, must not panic, and must keep its round-trip
//! invariant. The cargo-fuzz targets in the workspace's `fuzz/` directory
//! call these, and the corpus replay test feeds them every committed input.
//! Built with the `fuzzing` feature only; no part of the API.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::BytesMut;

use crate::proto::{Frame, REQUEST_LEN, Request};
use crate::{Identity, Node, NodeConfig, Pair, RawEnd, ServerLimits, ServerTrust, SimOptions};

/// A harness: takes arbitrary bytes, panics only on a bug.
pub type Harness = fn(&[u8]);

/// The harnesses by name: (name, function), as the fuzz targets and the
/// corpus directories are named.
pub const TARGETS: [(&str, Harness); 4] = [
    ("request", request),
    ("frame", frame),
    ("server_datagrams", server_datagrams),
    ("server_stream", server_stream),
];

/// A transfer request off the wire: decoding never panics, and what decodes
/// encodes back to the same request.
pub fn request(data: &[u8]) {
    if data.len() >= REQUEST_LEN {
        let _ = Request::encoded_len(&data[..REQUEST_LEN]);
    }
    if let Ok(req) = Request::decode(data) {
        let again = req.encode().expect("a decoded request encodes");
        assert_eq!(Request::decode(&again).expect("re-encoded request decodes"), req);
        let _ = req.controller();
    }
}

/// Report-stream frames off the wire: every complete frame taken off the
/// buffer encodes back to bytes that decode to the same frame.
pub fn frame(data: &[u8]) {
    let mut buf = data.to_vec();
    for _ in 0..64 {
        match Frame::take(&mut buf) {
            Ok(Some(f)) => {
                let mut again = f.encode();
                assert_eq!(Frame::take(&mut again).expect("re-encoded frame decodes"), Some(f));
                assert!(again.is_empty());
            }
            Ok(None) | Err(_) => break,
        }
    }
}

const CLIENT: &str = "10.0.0.1:5000";

fn server_node() -> Node {
    thread_local! {
        static IDENTITY: Identity = Identity::self_signed_from_seed(&["localhost"], 1).expect("an identity");
    }
    let config = NodeConfig::default().with_mtu_discovery(false).with_limits(
        ServerLimits::default()
            .with_request_timeout(Some(Duration::from_secs(1)))
            .with_max_duration(Some(Duration::from_secs(5))),
    );
    let sim = SimOptions::seeded(1);
    IDENTITY.with(|id| Node::simulated(config, Some(id), sim).expect("a server node"))
}

/// Arbitrary datagrams to a server: each is a length byte and that many
/// bytes. The node must take them (and its timers) without panicking.
pub fn server_datagrams(data: &[u8]) {
    let mut node = server_node();
    let from: SocketAddr = CLIENT.parse().expect("an address");
    let mut now = Instant::now();
    let mut rest = data;
    while let Some((&n, tail)) = rest.split_first() {
        let n = (usize::from(n) * 8).min(tail.len());
        let (dgram, tail) = tail.split_at(n);
        rest = tail;
        node.handle_datagram(now, from, BytesMut::from(dgram));
        while node.poll_transmit().is_some() {}
        while node.poll_event().is_some() {}
        now += Duration::from_millis(10);
        if node.poll_timeout().is_some_and(|t| t <= now) {
            node.handle_timeout(now);
        }
    }
}

/// A real handshake with a raw quinn-proto client ([`RawEnd`] in a
/// [`Pair`]), then arbitrary bytes on a bidirectional stream: the server
/// refuses or serves, and never panics; the run ends (the server closes, or
/// every timer has fired).
pub fn server_stream(data: &[u8]) {
    use quinn_proto::{Dir, Event};
    let config = ServerTrust::Insecure.client_config().expect("a client config");
    let mut pair = Pair::join(RawEnd::client(config, "localhost"), server_node());
    let mut written = 0;
    let mut stream = None;
    pair.run_until(2000, |p| {
        let Some(conn) = p.client.connection() else {
            return true;
        };
        while let Some(ev) = conn.poll() {
            match ev {
                Event::Connected => stream = conn.streams().open(Dir::Bi),
                Event::ConnectionLost { .. } => return true,
                _ => {}
            }
        }
        if let Some(id) = stream
            && written < data.len()
            && let Ok(n) = conn.send_stream(id).write(&data[written..])
        {
            written += n;
        }
        false
    });
}
