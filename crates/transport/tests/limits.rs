//! A server's limits: requests beyond them are refused with a reason naming
//! the limit (or clamped where asked), crowds from one address are turned
//! away, and Retry-validated servers still serve.

use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::time::Duration;

use tput_transport::{
    ClientAuth, Direction, Identity, NodeConfig, Refusal, ServerLimits, ServerTrust, TransferError, TransferOutcome,
    TransferSpec, udp,
};

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("took more than 60 s")
}

/// The idle timeout of both ends: long, so that a refusal is never a timer's.
const IDLE: Duration = Duration::from_secs(10);

fn client_config() -> NodeConfig {
    NodeConfig::default().with_idle_timeout(IDLE)
}

/// A server with `limits` on an ephemeral loopback port.
async fn server(limits: ServerLimits) -> (SocketAddr, ServerTrust) {
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let socket = udp::bind_server("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = socket.local_addr().unwrap();
    let trust = ServerTrust::Pinned(id.fingerprint());
    let config = client_config().with_limits(limits);
    tokio::spawn(async move {
        let _ = udp::serve(&socket, &id, config, |_, _| ControlFlow::Continue(())).await;
    });
    (addr, trust)
}

fn spec(direction: Direction, secs: f64) -> TransferSpec {
    let mut s = TransferSpec::upload(0, "cubic".parse().unwrap());
    s.direction = direction;
    s.bytes = None;
    s.duration = Some(Duration::from_secs_f64(secs));
    s
}

async fn run(addr: SocketAddr, trust: &ServerTrust, specs: Vec<TransferSpec>) -> Vec<TransferOutcome> {
    within(udp::transfer(
        addr,
        "localhost",
        trust,
        client_config(),
        specs,
        |_, _| {},
    ))
    .await
    .unwrap()
}

fn error(o: &TransferOutcome) -> String {
    o.error.as_ref().map(ToString::to_string).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_beyond_the_limits_are_refused_with_the_limit_named() {
    let (addr, trust) = server(
        ServerLimits::default()
            .with_max_duration(Some(Duration::from_secs(1)))
            .with_max_bytes(Some(1_000_000))
            .with_max_rate(Some("20Mbit/s".parse().unwrap())),
    )
    .await;
    let long = run(addr, &trust, vec![spec(Direction::Upload, 5.0)]).await;
    assert_eq!(
        long[0].error,
        Some(TransferError::Refused(Refusal::Duration {
            asked: Duration::from_secs(5),
            max: Duration::from_secs(1)
        }))
    );
    assert!(error(&long[0]).contains("limit of 1s"), "{:?}", long[0].error);
    let mut big = TransferSpec::upload(2_000_000, "cubic".parse().unwrap());
    big.interval = Duration::from_secs(1);
    let big = run(addr, &trust, vec![big]).await;
    assert_eq!(
        big[0].error,
        Some(TransferError::Refused(Refusal::Bytes {
            asked: 2_000_000,
            max: 1_000_000
        }))
    );
    assert!(error(&big[0]).contains("limit of 1000000 bytes"), "{:?}", big[0].error);
    // A download with no rate limit asks for more than 20 Mbit/s.
    let fast = run(addr, &trust, vec![spec(Direction::Download, 0.5)]).await;
    assert_eq!(
        fast[0].error,
        Some(TransferError::Refused(Refusal::Rate {
            asked: None,
            max: "20Mbit/s".parse().unwrap()
        }))
    );
    assert!(error(&fast[0]).contains("20Mbit/s"), "{:?}", fast[0].error);
    // Refusals come from the server's answer, not from a timer (how long
    // they take: `cargo bench -p tput-benches --bench live_timing`).
    for o in [&long[0], &big[0], &fast[0]] {
        assert!(!o.ok() && !error(o).contains("timed out"), "{:?}", o.error);
    }
    // Within the limits all is well.
    let mut ok = spec(Direction::Download, 0.5);
    ok.rate_limit = Some("10Mbit/s".parse().unwrap());
    let ok = run(addr, &trust, vec![ok]).await;
    assert!(ok[0].ok(), "{:?}", ok[0].error);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clamping_server_shortens_and_slows_a_download_instead() {
    let (addr, trust) = server(
        ServerLimits::default()
            .with_max_duration(Some(Duration::from_secs(1)))
            .with_max_rate(Some("20Mbit/s".parse().unwrap()))
            .with_clamp(true),
    )
    .await;
    let out = run(addr, &trust, vec![spec(Direction::Download, 4.0)]).await;
    let o = &out[0];
    assert!(o.ok(), "{:?}", o.error);
    // The server stopped sending about 1 s in (its own clock), not the 4 s
    // asked for: its last interval record ends when sending ended.
    let end = o.intervals.last().expect("the server's records").end_secs;
    assert!(end < 2.0, "clamped to 1 s, sending ended at {end} s");
    // The receiver never got more than 20 Mbit/s (its clock starts when it
    // sends the request, before the first byte can come). How close to
    // 20 Mbit/s it came: `cargo bench -p tput-benches --bench live_timing`.
    let r = o.receiver.as_ref().unwrap();
    let rate = r.bytes as f64 * 8.0 / r.duration_secs;
    assert!(rate > 0.0 && rate < 22e6, "clamped to 20 Mbit/s: {rate}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_gets_at_most_its_share_of_connections() {
    let (addr, trust) = server(ServerLimits::default().with_max_per_address(Some(2))).await;
    let out = run(addr, &trust, (0..4).map(|_| spec(Direction::Upload, 1.0)).collect()).await;
    let ok = out.iter().filter(|o| o.ok()).count();
    assert_eq!(ok, 2, "{:?}", out.iter().map(|o| &o.error).collect::<Vec<_>>());
    // Refused after the handshake, with the limit and its flag named.
    for o in out.iter().filter(|o| !o.ok()) {
        assert_eq!(o.error, Some(TransferError::Refused(Refusal::PerAddress { max: 2 })));
        let e = error(o);
        assert!(
            e.contains("refused: this server takes at most 2 connections at once from one address")
                && e.contains("--max-per-address"),
            "{e}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_server_refuses_at_once_and_the_client_names_the_limit() {
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let socket = udp::bind_server("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = socket.local_addr().unwrap();
    let trust = ServerTrust::Pinned(id.fingerprint());
    let config = client_config().with_max_connections(1);
    tokio::spawn(async move {
        let _ = udp::serve(&socket, &id, config, |_, _| ControlFlow::Continue(())).await;
    });
    let out = run(addr, &trust, (0..2).map(|_| spec(Direction::Upload, 1.0)).collect()).await;
    assert_eq!(out.iter().filter(|o| o.ok()).count(), 1);
    let refused = out.iter().find(|o| !o.ok()).unwrap();
    // quinn-proto's CONNECTION_REFUSED carries no reason: the client says
    // which limit a server of ours refuses that way.
    assert_eq!(refused.error, Some(TransferError::ServerBusy { live: true }));
    let e = error(refused);
    assert!(e.starts_with("refused: ") && e.contains("--max-clients"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retry_validating_server_serves_verified_transfers() {
    let (addr, trust) = server(ServerLimits::default().with_retry(true)).await;
    let out = run(
        addr,
        &trust,
        vec![TransferSpec::upload(3_000_000, "newreno".parse().unwrap())],
    )
    .await;
    assert!(out[0].ok(), "{:?}", out[0].error);
    assert_eq!(out[0].receiver.as_ref().unwrap().bytes, 3_000_000);
}

/// A server that accepts only clients with `auth`; returns its address and trust.
async fn authenticating_server(auth: ClientAuth) -> (SocketAddr, ServerTrust) {
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let socket = udp::bind_server("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = socket.local_addr().unwrap();
    let trust = ServerTrust::Pinned(id.fingerprint());
    let config = client_config().with_client_auth(Some(auth));
    tokio::spawn(async move {
        let _ = udp::serve(&socket, &id, config, |_, _| ControlFlow::Continue(())).await;
    });
    (addr, trust)
}

async fn upload_as(addr: SocketAddr, trust: &ServerTrust, who: Option<&Identity>) -> TransferOutcome {
    let config = client_config().with_client_identity(who.cloned());
    let spec = TransferSpec::upload(1_000_000, "cubic".parse().unwrap());
    within(udp::transfer(addr, "localhost", trust, config, vec![spec], |_, _| {}))
        .await
        .unwrap()
        .remove(0)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_allowed_client_certificates_get_in() {
    let alice = Identity::self_signed(&["alice"]).unwrap();
    let mallory = Identity::self_signed(&["mallory"]).unwrap();
    let (addr, trust) = authenticating_server(ClientAuth {
        allowed: vec![alice.fingerprint()],
        ..ClientAuth::default()
    })
    .await;
    let ok = upload_as(addr, &trust, Some(&alice)).await;
    assert!(ok.ok(), "{:?}", ok.error);
    assert_eq!(ok.receiver.as_ref().unwrap().bytes, 1_000_000);
    let wrong = upload_as(addr, &trust, Some(&mallory)).await;
    let none = upload_as(addr, &trust, None).await;
    for (who, o) in [("mallory", &wrong), ("anonymous", &none)] {
        let e = error(o);
        eprintln!("{who}: {e}");
        assert!(!o.ok(), "{who} got in");
        // Refused by the handshake, with a reason, not by a timer.
        assert!(!e.contains("timed out"), "{who}: {e}");
        assert!(e.to_lowercase().contains("certificate"), "{who}: {e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clients_whose_chain_ends_in_the_client_ca_get_in() {
    // A self-signed client certificate serves as its own root here.
    let bob = Identity::self_signed(&["bob"]).unwrap();
    let eve = Identity::self_signed(&["eve"]).unwrap();
    let (addr, trust) = authenticating_server(ClientAuth {
        roots: vec![bob.cert_der().to_vec()],
        ..ClientAuth::default()
    })
    .await;
    let ok = upload_as(addr, &trust, Some(&bob)).await;
    assert!(ok.ok(), "{:?}", ok.error);
    let refused = upload_as(addr, &trust, Some(&eve)).await;
    assert!(!refused.ok());
    assert!(
        error(&refused).to_lowercase().contains("certificate"),
        "{:?}",
        refused.error
    );
}
