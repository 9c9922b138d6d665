//! Fuzz harnesses: every parser and decoder that takes outside input, as a
//! function of arbitrary bytes that must not panic and must keep its
//! round-trip invariants. The cargo-fuzz targets in `fuzz/` call these, and
//! `tests/fuzz_corpus.rs` replays the committed corpus through the same
//! functions, so stable CI checks every input the fuzzer kept.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use tput_cc::{ControllerSpec, EvalSlot, units};
use tput_transport::proto::{Frame, REQUEST_LEN, Request};
use tput_transport::{Identity, Node, NodeConfig, ServerLimits, ServerTrust, SimOptions};

/// A harness: takes arbitrary bytes, panics only on a bug.
pub type Harness = fn(&[u8]);

/// The harnesses by name: (name, function), as the fuzz targets and the
/// corpus directories are named.
pub const TARGETS: [(&str, Harness); 8] = [
    ("request", request),
    ("frame", frame),
    ("spec", spec),
    ("units", units),
    ("scenario", scenario),
    ("link", link),
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

/// Controller spec strings: what parses prints back to a spec that parses
/// to the same value.
pub fn spec(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(spec) = text.parse::<ControllerSpec>() {
        let printed = spec.to_string();
        let again: ControllerSpec = printed.parse().expect("a printed spec parses");
        assert_eq!(again, spec, "`{text}` printed as `{printed}`");
    }
}

/// Rates, durations, sizes and evaluation slots: parsing never panics;
/// evaluation slots print back exactly.
pub fn units(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = text.parse::<units::Rate>();
    let _ = units::parse_duration(text);
    let _ = units::parse_size(text);
    if let Ok(slot) = text.parse::<EvalSlot>() {
        assert_eq!(
            slot.to_string().parse::<EvalSlot>().expect("a printed slot parses"),
            slot
        );
    }
}

/// Scenario files: parsing and validation never panic.
pub fn scenario(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(s) = crate::scenario::Scenario::from_toml_str(text) {
        let _ = crate::scenario::validate(&s);
    }
}

/// The relay's `--forward`/`--reverse` link lists: parsing never panics, and
/// a list that parses builds a link or says why not.
pub fn link(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(spec) = crate::relay::parse_link_list(text, "--forward") {
        let _ = crate::scenario::link_config(&spec, "--forward");
    }
}

const CLIENT: &str = "10.0.0.1:5000";
const SERVER: &str = "10.0.0.2:4433";

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

/// A real handshake with a raw quinn-proto client, then arbitrary bytes on a
/// bidirectional stream: the server refuses or serves, and never panics;
/// the run ends (the server closes, or every timer has fired).
pub fn server_stream(data: &[u8]) {
    use quinn_proto::{DatagramEvent, Dir, Endpoint, EndpointConfig, Event};
    let mut server = server_node();
    let (client_addr, server_addr): (SocketAddr, SocketAddr) =
        (CLIENT.parse().expect("an address"), SERVER.parse().expect("an address"));
    let mut client = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None);
    let mut now = Instant::now();
    let config = ServerTrust::Insecure.client_config().expect("a client config");
    let Ok((ch, mut conn)) = client.connect(now, config, server_addr, "localhost") else {
        return;
    };
    let mut buf = Vec::new();
    let mut written = 0;
    let mut stream = None;
    for _ in 0..2000 {
        let mut progressed = false;
        loop {
            let mut out = Vec::new();
            let Some(t) = conn.poll_transmit(now, 1, &mut out) else {
                break;
            };
            server.handle_datagram(now, client_addr, BytesMut::from(&out[..t.size]));
            progressed = true;
        }
        while let Some(o) = server.poll_transmit() {
            progressed = true;
            buf.clear();
            if let Some(DatagramEvent::ConnectionEvent(_, ev)) =
                client.handle(now, server_addr, None, None, BytesMut::from(&o.payload[..]), &mut buf)
            {
                conn.handle_event(ev);
            }
        }
        while let Some(ev) = conn.poll_endpoint_events() {
            if let Some(back) = client.handle_event(ch, ev) {
                conn.handle_event(back);
            }
        }
        while server.poll_event().is_some() {}
        while let Some(ev) = conn.poll() {
            match ev {
                Event::Connected => stream = conn.streams().open(Dir::Bi),
                Event::ConnectionLost { .. } => return,
                _ => {}
            }
        }
        if let Some(id) = stream
            && written < data.len()
        {
            match conn.send_stream(id).write(&data[written..]) {
                Ok(n) if n > 0 => {
                    written += n;
                    progressed = true;
                }
                _ => {}
            }
        }
        if !progressed {
            let next = [conn.poll_timeout(), server.poll_timeout()].into_iter().flatten().min();
            let Some(t) = next else { return };
            now = now.max(t);
            if conn.poll_timeout().is_some_and(|t| t <= now) {
                conn.handle_timeout(now);
            }
            server.handle_timeout(now);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_harness_takes_empty_and_typical_input() {
        let good_request = Request::decode(
            &tput_transport::proto::Request {
                direction: tput_transport::Direction::Upload,
                bytes: Some(1000),
                duration: None,
                key: 1,
                target: None,
                eval_slot: Duration::from_secs(1),
                interval: Duration::from_millis(100),
                rate_limit: None,
                cc: "cubic".into(),
                buffers: None,
            }
            .encode()
            .unwrap(),
        )
        .unwrap()
        .encode()
        .unwrap();
        for (name, f) in TARGETS {
            f(&[]);
            f(b"rate=10Mbit/s,delay=5ms");
            f(&good_request);
            eprintln!("{name}: ok");
        }
    }
}
