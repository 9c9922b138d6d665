//! A [`Node`] against a peer that speaks the protocol through raw
//! quinn-proto ([`RawEnd`]), joined in memory by a [`Pair`]: what a server
//! does with requests a `Node` client would never send (crafted with the
//! public `proto` types), and what a client does with a refusal or with
//! frames a `Node` server would never send.

use std::time::Duration;

use quinn_proto::{ConnectionError, Dir, Event};
use tput_transport::proto::{Direction, REQUEST_LEN, Request};
use tput_transport::{
    CLOSE_PROTOCOL_ERROR, FrameError, Identity, Node, NodeConfig, Pair, ProtocolError, RawEnd, ServerLimits,
    ServerTrust, SimOptions, TransferError, TransferOutcome, TransferSpec,
};

/// A fixed seed, so a test's connection IDs and keys are the same each run.
fn seeded(seed: u64) -> SimOptions {
    SimOptions::seeded(seed)
}

fn request(cc: &str) -> Request {
    Request {
        direction: Direction::Download,
        bytes: Some(1_000_000),
        duration: None,
        key: 7,
        target: None,
        eval_slot: Duration::from_secs(1),
        interval: Duration::from_millis(100),
        rate_limit: None,
        cc: cc.into(),
        buffers: None,
    }
}

/// Connect a raw quinn-proto client to a server node, write `bytes` on a
/// bidirectional stream once connected, and run until the connection is
/// lost. Returns the close's error code and reason, and whether the server
/// reported a finished transfer.
fn refusal(bytes: &[u8]) -> (u64, String, bool) {
    refusal_with(bytes, ServerLimits::default())
}

/// [`refusal`] by a server with `limits`.
fn refusal_with(bytes: &[u8], limits: ServerLimits) -> (u64, String, bool) {
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let config = NodeConfig::default().with_mtu_discovery(false).with_limits(limits);
    let server = Node::simulated(config, Some(&identity), seeded(1)).unwrap();
    let client = RawEnd::client(ServerTrust::Insecure.client_config().unwrap(), "localhost");
    let mut pair = Pair::join(client, server);
    let mut closed = None;
    pair.run_until(10_000, |p| {
        let conn = p.client.connection().expect("the client connects");
        while let Some(ev) = conn.poll() {
            match ev {
                Event::Connected => {
                    let id = conn.streams().open(Dir::Bi).unwrap();
                    assert_eq!(conn.send_stream(id).write(bytes).unwrap(), bytes.len());
                }
                Event::ConnectionLost {
                    reason: ConnectionError::ApplicationClosed(close),
                } => {
                    closed = Some((
                        close.error_code.into_inner(),
                        String::from_utf8_lossy(&close.reason).into_owned(),
                    ));
                }
                Event::ConnectionLost { reason } => panic!("lost without an application close: {reason}"),
                _ => {}
            }
        }
        closed.is_some()
    });
    let (code, reason) = closed.expect("the server closed the connection");
    (code, reason, !pair.server_outcomes.is_empty())
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
fn a_client_that_never_sends_a_request_is_closed_after_the_request_timeout() {
    let limits = ServerLimits::default().with_request_timeout(Some(Duration::from_millis(300)));
    let (code, reason, finished) = refusal_with(&[], limits.clone());
    assert_eq!(code, u64::from(CLOSE_PROTOCOL_ERROR));
    assert!(reason.contains("no request within 300ms"), "{reason}");
    assert!(!finished);
    // Half a request is no request either.
    let req = request("cubic").encode().unwrap();
    let (_, reason, _) = refusal_with(&req[..REQUEST_LEN / 2], limits);
    assert!(reason.contains("no request within 300ms"), "{reason}");
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

/// What a scripted server does.
enum Script {
    /// Read the request, then close with this code and reason.
    Refuse(u32, &'static str),
    /// Read the request, then open a unidirectional stream and write these bytes.
    UniBytes(Vec<u8>),
}

/// A client [`Node`] running `spec` against a raw quinn-proto server that
/// follows `script`, in memory; returns the client's outcome.
fn node_client_against(spec: TransferSpec, script: Script) -> TransferOutcome {
    let identity = Identity::self_signed(&["localhost"]).unwrap();
    let server = RawEnd::server(identity.server_config().unwrap());
    let client = Node::simulated(NodeConfig::default().with_mtu_discovery(false), None, seeded(2)).unwrap();
    let mut pair = Pair::new(client, server, ServerTrust::Pinned(identity.fingerprint()));
    let id = pair.start(spec).unwrap();
    let mut request = Vec::new();
    let mut acted = false;
    pair.run_until(100_000, |p| {
        if let Some(c) = p.server.connection() {
            while let Some(ev) = c.poll() {
                if let Event::Stream(quinn_proto::StreamEvent::Opened { dir: Dir::Bi }) = ev {
                    c.streams().accept(Dir::Bi);
                }
            }
            if let Ok(mut chunks) = c
                .recv_stream(quinn_proto::StreamId::new(quinn_proto::Side::Client, Dir::Bi, 0))
                .read(true)
            {
                while let Ok(Some(chunk)) = chunks.next(usize::MAX) {
                    request.extend_from_slice(&chunk.bytes);
                }
                let _ = chunks.finalize();
            }
            if !acted && request.len() >= REQUEST_LEN && Request::decode(&request).is_ok() {
                acted = true;
                match &script {
                    Script::Refuse(code, why) => c.close(
                        p.now,
                        quinn_proto::VarInt::from_u32(*code),
                        bytes::Bytes::from_static(why.as_bytes()),
                    ),
                    Script::UniBytes(b) => {
                        let uni = c.streams().open(Dir::Uni).unwrap();
                        c.send_stream(uni).write(b).unwrap();
                    }
                }
            }
        }
        !p.client_outcomes.is_empty()
    });
    let (_, o) = pair.client_outcomes.first().expect("the client finished");
    assert_eq!(o.id, id);
    o.clone()
}

fn download(cc: &str) -> TransferSpec {
    let mut spec = TransferSpec::upload(1_000_000, cc.parse().unwrap());
    spec.direction = Direction::Download;
    spec
}

#[test]
fn a_client_reports_the_reason_a_server_refused_it_with() {
    // A server that does not know the controller (another version, say).
    let why = "bad request: bad controller spec `vegas`: unknown controller `vegas`";
    let o = node_client_against(download("vegas"), Script::Refuse(CLOSE_PROTOCOL_ERROR, why));
    assert!(!o.ok());
    assert_eq!(
        o.error,
        Some(TransferError::ClosedByPeer {
            code: u64::from(CLOSE_PROTOCOL_ERROR),
            reason: why.into()
        })
    );
}

#[test]
fn a_client_refuses_a_malformed_frame_from_the_server() {
    let o = node_client_against(download("cubic"), Script::UniBytes(vec![9, 0, 0, 0, 0]));
    assert_eq!(
        o.error,
        Some(TransferError::Malformed(ProtocolError::Frame(FrameError::Kind(9))))
    );
    // A complete frame whose body is not a record: a JSON error, not a panic.
    let mut half = vec![3, 0, 0, 0, 40];
    half.extend_from_slice(&[b'{'; 40]);
    let o = node_client_against(download("cubic"), Script::UniBytes(half));
    assert_eq!(
        o.error,
        Some(TransferError::Malformed(ProtocolError::Frame(FrameError::Json(
            "interval record"
        ))))
    );
}
