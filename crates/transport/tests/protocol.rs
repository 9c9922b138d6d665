//! A server [`Node`] against a client that writes its own request bytes
//! (crafted with the public `proto` types), in memory: what a server does
//! with requests a `Node` client would never send.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::BytesMut;
use quinn_proto::{ConnectionError, DatagramEvent, Dir, Endpoint, EndpointConfig, Event};
use tput_transport::proto::{Direction, REQUEST_LEN, Request};
use tput_transport::{CLOSE_PROTOCOL_ERROR, Identity, Node, NodeConfig, NodeEvent, ServerTrust};

fn request(cc: &str) -> Request {
    Request {
        direction: Direction::Download,
        bytes: Some(1_000_000),
        duration: None,
        key: 7,
        target_bps: 0,
        eval_slot: Duration::from_secs(1),
        interval: Duration::from_millis(100),
        rate_limit_bps: 0,
        cc: cc.into(),
    }
}

/// Connect a raw quinn-proto client to a server node, write `bytes` on a
/// bidirectional stream once connected, and run until the connection is
/// lost. Returns the close's error code and reason, and whether the server
/// reported a finished transfer.
fn refusal(bytes: &[u8]) -> (u64, String, bool) {
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let config = NodeConfig {
        seed: Some(1),
        mtu_discovery: false,
        ..NodeConfig::default()
    };
    let mut server = Node::server(config, &identity).unwrap();
    let server_addr: SocketAddr = "10.0.0.2:4433".parse().unwrap();
    let client_addr: SocketAddr = "10.0.0.1:5000".parse().unwrap();
    let mut client = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, None);
    let mut now = Instant::now();
    let (ch, mut conn) = client
        .connect(
            now,
            ServerTrust::Insecure.client_config().unwrap(),
            server_addr,
            "localhost",
        )
        .unwrap();
    let mut buf = Vec::new();
    let mut server_finished = false;
    for _ in 0..10_000 {
        // Client to server.
        let mut progressed = false;
        loop {
            let mut out = Vec::new();
            let Some(t) = conn.poll_transmit(now, 1, &mut out) else {
                break;
            };
            server.handle_datagram(now, client_addr, 0, BytesMut::from(&out[..t.size]));
            progressed = true;
        }
        // Server to client.
        while let Some(o) = server.poll_transmit() {
            progressed = true;
            buf.clear();
            if let Some(DatagramEvent::ConnectionEvent(h, ev)) =
                client.handle(now, server_addr, None, None, BytesMut::from(&o.payload[..]), &mut buf)
            {
                assert_eq!(h, ch);
                conn.handle_event(ev);
            }
        }
        while let Some(ev) = conn.poll_endpoint_events() {
            if let Some(back) = client.handle_event(ch, ev) {
                conn.handle_event(back);
            }
        }
        while let Some(ev) = server.poll_event() {
            server_finished |= matches!(ev, NodeEvent::Finished(_));
        }
        while let Some(ev) = conn.poll() {
            match ev {
                Event::Connected => {
                    let id = conn.streams().open(Dir::Bi).unwrap();
                    assert_eq!(conn.send_stream(id).write(bytes).unwrap(), bytes.len());
                    progressed = true;
                }
                Event::ConnectionLost {
                    reason: ConnectionError::ApplicationClosed(close),
                } => {
                    return (
                        close.error_code.into_inner(),
                        String::from_utf8_lossy(&close.reason).into_owned(),
                        server_finished,
                    );
                }
                Event::ConnectionLost { reason } => panic!("lost without an application close: {reason}"),
                _ => {}
            }
        }
        if !progressed {
            // Idle: jump to the next timer of either end.
            let next = [conn.poll_timeout(), server.poll_timeout()].into_iter().flatten().min();
            let Some(t) = next else { break };
            now = now.max(t);
            if conn.poll_timeout().is_some_and(|t| t <= now) {
                conn.handle_timeout(now);
            }
            server.handle_timeout(now);
        }
    }
    panic!("the server never closed the connection");
}

#[test]
fn a_request_with_a_bad_controller_spec_is_refused_with_a_reason_naming_it() {
    let (code, reason, finished) = refusal(&request("warp:speed=9").encode().unwrap());
    assert_eq!(code, u64::from(CLOSE_PROTOCOL_ERROR));
    assert!(
        reason.contains("controller spec") && reason.contains("warp"),
        "{reason}"
    );
    assert!(!finished, "a refused request is no transfer");

    // A known controller with a parameter it does not have.
    let (code, reason, _) = refusal(&request("vegas:gamma=3,warp=1").encode().unwrap());
    assert_eq!(code, u64::from(CLOSE_PROTOCOL_ERROR));
    assert!(reason.contains("warp"), "{reason}");
}

#[test]
fn an_oversized_or_truncated_request_is_refused_with_a_reason() {
    // The header announces a spec longer than the limit: refused from the
    // header alone, before the spec arrives.
    let mut long = request("cubic").encode().unwrap();
    long[6..8].copy_from_slice(&5000u16.to_be_bytes());
    let (code, reason, _) = refusal(&long[..REQUEST_LEN]);
    assert_eq!(code, u64::from(CLOSE_PROTOCOL_ERROR));
    assert!(reason.contains("5000 bytes exceeds"), "{reason}");

    // A previous protocol version is named as such.
    let mut old = request("cubic").encode().unwrap();
    old[4] = 2;
    let (_, reason, _) = refusal(&old);
    assert!(reason.contains("version 2"), "{reason}");
}
