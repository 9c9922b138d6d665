//! Real QUIC transfers over UDP on 127.0.0.1.

use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::time::Duration;

use tput_transport::{Direction, Identity, NodeConfig, ServerTrust, TransferSpec, udp};

/// Fail, rather than hang, if a transfer takes unreasonably long.
async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(120), f)
        .await
        .expect("transfer took more than 120 s")
}

fn config() -> NodeConfig {
    NodeConfig {
        idle_timeout: Duration::from_secs(5),
        ..NodeConfig::default()
    }
}

/// Start a server on an ephemeral loopback port; returns its address and identity.
async fn server() -> (SocketAddr, Identity) {
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let socket = udp::bind_server("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = socket.local_addr().unwrap();
    let served = id.clone();
    tokio::spawn(async move {
        let _ = udp::serve(&socket, &served, config(), |_, _| ControlFlow::Continue(())).await;
    });
    (addr, id)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_megabytes_with_every_controller() {
    let (addr, id) = server().await;
    let trust = ServerTrust::Pinned(id.fingerprint());
    for cc in [
        "newreno",
        "cubic",
        "vegas",
        "ctcp",
        // rate * min_rtt: loopback's min RTT is tens of microseconds, so only a
        // very high rate gives a window that survives the RTT inflation of a
        // loaded machine (1 Gbit/s gave ~6 KB, which crawled for minutes).
        "fixed:rate=40Gbit/s",
        "guarantee:target=200Mbit/s",
    ] {
        let spec = TransferSpec::upload(50_000_000, cc.parse().unwrap());
        let out = within(udp::transfer(
            addr,
            "localhost",
            &trust,
            config(),
            vec![spec],
            |_, _| {},
        ))
        .await
        .unwrap();
        let o = &out[0];
        assert!(o.ok(), "{cc}: {:?}", o.error);
        assert_eq!(o.bytes, 50_000_000, "{cc}");
        assert_eq!(
            o.receiver.as_ref().unwrap().bytes,
            50_000_000,
            "{cc}: receiver verified"
        );
        eprintln!("{cc}: {:.0} Mbit/s", o.bytes as f64 * 8.0 / o.elapsed_secs / 1e6);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn download_parallel_and_intervals() {
    let (addr, id) = server().await;
    let trust = ServerTrust::Root(id.cert_der().to_vec());
    let mut specs = Vec::new();
    for _ in 0..3 {
        let mut s = TransferSpec::upload(0, "cubic".parse().unwrap());
        s.direction = Direction::Download;
        s.bytes = None;
        s.duration = Some(Duration::from_millis(600));
        s.interval = Duration::from_millis(200);
        specs.push(s);
    }
    let out = within(udp::transfer(addr, "localhost", &trust, config(), specs, |_, _| {}))
        .await
        .unwrap();
    assert_eq!(out.len(), 3);
    for o in &out {
        assert!(o.ok(), "{:?}", o.error);
        assert!(!o.local_sender);
        assert!(o.bytes > 0);
        let r = o.receiver.as_ref().unwrap();
        assert_eq!(r.bytes, o.bytes);
        assert_eq!(r.interval_bytes.iter().sum::<u64>(), r.bytes);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sender_reports_intervals_and_slots() {
    let (addr, id) = server().await;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let mut spec = TransferSpec::upload(0, "newreno".parse().unwrap());
    spec.bytes = None;
    spec.duration = Some(Duration::from_millis(1000));
    spec.interval = Duration::from_millis(250);
    spec.target = Some("1Mbit/s".parse().unwrap());
    spec.eval_slot = tput_transport::EvalSlot::Time(Duration::from_millis(250));
    let mut seen = 0;
    let out = within(udp::transfer(
        addr,
        "localhost",
        &trust,
        config(),
        vec![spec],
        |_, _| seen += 1,
    ))
    .await
    .unwrap();
    let o = &out[0];
    assert!(o.ok(), "{:?}", o.error);
    assert!(seen >= 4, "{seen} interval records");
    assert_eq!(o.intervals.len(), seen);
    let r = o.receiver.as_ref().unwrap();
    // Intervals count the bytes the receiver verified, adding up to its
    // total; the time-up reset drops what was written but not sent, so the
    // bytes written may exceed it.
    assert_eq!(o.bytes, r.bytes);
    let delivered = o.intervals.iter().map(|i| i.bytes).sum::<u64>();
    assert_eq!(delivered, r.bytes);
    let written = o.intervals.iter().map(|i| i.written_bytes).sum::<u64>();
    assert!(
        written >= o.bytes && o.bytes > 0,
        "written {written}, verified {}",
        o.bytes
    );
    assert!(r.slots.len() >= 3, "{} slots", r.slots.len());
    assert_eq!(r.success_ratio, Some(1.0), "1 Mbit/s over loopback is always met");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrong_pin_is_refused() {
    let (addr, _) = server().await;
    let other = Identity::self_signed(&["localhost"]).unwrap();
    let spec = TransferSpec::upload(1000, "cubic".parse().unwrap());
    let out = within(udp::transfer(
        addr,
        "localhost",
        &ServerTrust::Pinned(other.fingerprint()),
        config(),
        vec![spec],
        |_, _| {},
    ))
    .await
    .unwrap();
    let e = out[0].error.as_deref().unwrap_or_default();
    assert!(!out[0].ok() && e.contains("fingerprint"), "{e}");
}

#[test]
fn zero_rate_limit_is_an_error_not_a_panic() {
    let mut node = tput_transport::Node::client(NodeConfig::default()).unwrap();
    let mut spec = TransferSpec::upload(1000, "cubic".parse().unwrap());
    spec.rate_limit = Some("0bit/s".parse().unwrap());
    let server = "127.0.0.1:9".parse().unwrap();
    let e = node
        .start_transfer(
            std::time::Instant::now(),
            server,
            "localhost",
            &ServerTrust::Insecure,
            spec,
        )
        .unwrap_err();
    assert!(e.to_string().contains("rate limit"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_server_times_out_instead_of_hanging() {
    // A bound socket that never answers.
    let silent = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let cfg = NodeConfig {
        idle_timeout: Duration::from_millis(500),
        ..NodeConfig::default()
    };
    let spec = TransferSpec::upload(1000, "cubic".parse().unwrap());
    let t = std::time::Instant::now();
    let out = within(udp::transfer(
        addr,
        "localhost",
        &ServerTrust::Insecure,
        cfg,
        vec![spec],
        |_, _| {},
    ))
    .await
    .unwrap();
    assert!(
        out[0].error.as_deref().unwrap_or_default().contains("timed out"),
        "{:?}",
        out[0].error
    );
    assert!(t.elapsed() < Duration::from_secs(5));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn garbage_and_a_killed_client_do_not_disturb_a_transfer() {
    let (addr, id) = server().await;
    let trust = ServerTrust::Pinned(id.fingerprint());
    // A client that is killed mid-transfer.
    let victim = {
        let trust = trust.clone();
        tokio::spawn(async move {
            let spec = TransferSpec::upload(1_000_000_000, "cubic".parse().unwrap());
            within(udp::transfer(
                addr,
                "localhost",
                &trust,
                config(),
                vec![spec],
                |_, _| {},
            ))
            .await
        })
    };
    // Garbage from another socket, throughout.
    let noise = tokio::spawn(async move {
        let s = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let mut x: u64 = 1;
        for i in 0..2000u32 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let len = 1 + (x >> 33) as usize % 1400;
            let mut pkt: Vec<u8> = (0..len).map(|j| (x >> (j % 56)) as u8).collect();
            if i % 3 == 0 {
                pkt[0] = 0xc0; // looks like a long-header packet
            }
            let _ = s.send_to(&pkt, addr).await;
            if i % 50 == 0 {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
    });
    tokio::time::sleep(Duration::from_millis(200)).await;
    victim.abort();
    let spec = TransferSpec::upload(20_000_000, "newreno".parse().unwrap());
    let out = within(udp::transfer(
        addr,
        "localhost",
        &trust,
        config(),
        vec![spec],
        |_, _| {},
    ))
    .await
    .unwrap();
    noise.await.unwrap();
    assert!(out[0].ok(), "{:?}", out[0].error);
    assert_eq!(out[0].receiver.as_ref().unwrap().bytes, 20_000_000);
}
