//! Real QUIC transfers over UDP on 127.0.0.1.

use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tput_transport::{Direction, Identity, NodeConfig, NodeEvent, ServerTrust, TransferError, TransferSpec, udp};

/// Fail, rather than hang, if a transfer takes unreasonably long.
async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(120), f)
        .await
        .expect("transfer took more than 120 s")
}

fn config() -> NodeConfig {
    NodeConfig::default().with_idle_timeout(Duration::from_secs(5))
}

/// Start a server on an ephemeral loopback port; returns its address and identity.
async fn server() -> (SocketAddr, Identity) {
    let (addr, id, _) = watched_server().await;
    (addr, id)
}

/// [`server`], with a flag the server sets when a transfer of its own ends:
/// what a client saw before it was set, it saw while the transfer ran.
/// ([`ended`] waits for it.)
async fn watched_server() -> (SocketAddr, Identity, Arc<AtomicBool>) {
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let socket = udp::bind_server("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = socket.local_addr().unwrap();
    let served = id.clone();
    let finished = Arc::new(AtomicBool::new(false));
    let flag = finished.clone();
    tokio::spawn(async move {
        let _ = udp::serve(&socket, &served, config(), |_, ev| {
            if matches!(ev, NodeEvent::Finished(_)) {
                flag.store(true, Ordering::SeqCst);
            }
            ControlFlow::Continue(())
        })
        .await;
    });
    (addr, id, finished)
}

/// Wait until a [`watched_server`]'s transfer has ended: its end of the
/// connection may report after the client's outcome is in.
async fn ended(flag: &AtomicBool) {
    within(async {
        while !flag.load(Ordering::SeqCst) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
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
        // Paced by the node at its own pacing rate, on tokio's timers.
        "bbr",
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
    let (addr, id, server_finished) = watched_server().await;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let mut spec = TransferSpec::upload(0, "newreno".parse().unwrap());
    spec.bytes = None;
    spec.duration = Some(Duration::from_millis(2000));
    spec.interval = Duration::from_millis(250);
    spec.target = Some("1Mbit/s".parse().unwrap());
    spec.eval_slot = tput_transport::EvalSlot::Time(Duration::from_millis(250));
    let mut seen = 0;
    // Whether the server (the receiver) had finished when each record came.
    let mut after_the_end = Vec::new();
    let out = within(udp::transfer(
        addr,
        "localhost",
        &trust,
        config(),
        vec![spec],
        |_, _| {
            seen += 1;
            after_the_end.push(server_finished.load(Ordering::SeqCst));
        },
    ))
    .await
    .unwrap();
    let o = &out[0];
    assert!(o.ok(), "{:?}", o.error);
    assert!(seen >= 8, "{seen} interval records");
    // Live: the receiver's counts come back while the transfer runs, so the
    // first record came before the receiver's end of the transfer was over.
    assert!(!after_the_end[0], "every record came after the receiver finished");
    ended(&server_finished).await;
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
    let e = out[0].error.as_ref().map(ToString::to_string).unwrap_or_default();
    assert!(
        matches!(out[0].error, Some(TransferError::ConnectionLost(_))) && e.contains("fingerprint"),
        "{e}"
    );
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

#[test]
fn intervals_and_slots_below_the_protocol_minimum_are_errors() {
    let mut node = tput_transport::Node::client(NodeConfig::default()).unwrap();
    let server = "127.0.0.1:9".parse().unwrap();
    let mut short_interval = TransferSpec::upload(1000, "cubic".parse().unwrap());
    short_interval.interval = Duration::from_micros(10);
    let mut short_slot = TransferSpec::upload(1000, "cubic".parse().unwrap());
    short_slot.eval_slot = tput_transport::EvalSlot::Time(Duration::from_micros(10));
    for (spec, what) in [(short_interval, "interval"), (short_slot, "evaluation slot")] {
        let e = node
            .start_transfer(
                std::time::Instant::now(),
                server,
                "localhost",
                &ServerTrust::Insecure,
                spec,
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains(what) && e.contains("minimum"), "{e}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn silent_server_times_out_instead_of_hanging() {
    // A bound socket that never answers.
    let silent = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let addr = silent.local_addr().unwrap();
    let cfg = NodeConfig::default().with_idle_timeout(Duration::from_millis(500));
    let spec = TransferSpec::upload(1000, "cubic".parse().unwrap());
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
    let e = out[0].error.as_ref().map(ToString::to_string).unwrap_or_default();
    // Nothing came back at all: the error says where nobody answered, and
    // that its own idle timeout ended the attempt.
    assert_eq!(
        out[0].error,
        Some(TransferError::NoAnswer {
            peer: addr,
            idle_timeout: Some(Duration::from_millis(500))
        }),
        "{e}"
    );
    assert!(
        e.starts_with(&format!("nothing answered at {addr}")) && e.contains("500ms"),
        "{e}"
    );
    assert!(!out[0].ok());
    // It did knock: what reached the silent socket were Initial packets,
    // each in a datagram padded to QUIC's 1200 bytes (RFC 9000 §14.1).
    let mut buf = [0u8; 2048];
    let mut knocks = Vec::new();
    while let Ok((n, _)) = silent.try_recv_from(&mut buf) {
        knocks.push((n, buf[0]));
    }
    assert!(!knocks.is_empty(), "nothing reached the server's address");
    for (len, first) in knocks {
        assert!(len >= 1200, "a datagram of {len} bytes");
        // A long header (RFC 9000 §17.2) of type Initial.
        assert_eq!(first & 0xf0, 0xc0, "first byte {first:#x}");
    }
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

fn download(cc: &str, duration: Duration, interval: Duration) -> TransferSpec {
    let mut s = TransferSpec::upload(0, cc.parse().unwrap());
    s.direction = Direction::Download;
    s.bytes = None;
    s.duration = Some(duration);
    s.interval = interval;
    s
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_rate_limit_caps_both_directions() {
    let (addr, id) = server().await;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let limit: tput_cc::units::Rate = "40Mbit/s".parse().unwrap();
    let run = |direction| {
        let mut spec = download("cubic", Duration::from_secs(3), Duration::from_millis(500));
        spec.direction = direction;
        spec.rate_limit = Some(limit);
        within(udp::transfer(
            addr,
            "localhost",
            &trust,
            config(),
            vec![spec],
            |_, _| {},
        ))
    };
    // Both directions at once (on separate connections), to keep the test short.
    let (up, down) = tokio::join!(run(Direction::Upload), run(Direction::Download));
    for (direction, out) in [(Direction::Upload, up), (Direction::Download, down)] {
        let o = &out.unwrap()[0];
        assert!(o.ok(), "{direction:?}: {:?}", o.error);
        assert_eq!(o.direction, direction);
        let r = o.receiver.as_ref().unwrap();
        // Verified goodput over the receiver's part of the transfer: never
        // above the limit (a loaded machine can only fall short of it; how
        // close it comes: `cargo bench -p tput-benches --bench live_timing`).
        assert_eq!(r.bytes, o.bytes, "{direction:?}: every byte verified");
        let goodput = r.bytes as f64 * 8.0 / r.duration_secs;
        let want = limit.bits_per_sec() as f64;
        eprintln!(
            "{direction:?}: {:.2} Mbit/s over {:.2} s",
            goodput / 1e6,
            r.duration_secs
        );
        assert!(
            goodput > 0.0 && goodput < want * 1.05,
            "{direction:?}: {goodput} bit/s against a limit of {want}"
        );
        // The sender sent for its 3 s; the receiver's part cannot be shorter
        // by more than the request's way over.
        assert!(r.duration_secs > 2.5, "{direction:?}: {} s", r.duration_secs);
        // Both ends' CPU use is in the end-of-run data (Linux has /proc).
        assert!(o.cpu_secs.is_some() && r.cpu_secs.is_some(), "{direction:?}");
        assert!(o.sender.as_ref().unwrap().cpu_secs.is_some(), "{direction:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_download_reports_the_servers_controller() {
    let (addr, id) = server().await;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let spec = download("vegas", Duration::from_millis(800), Duration::from_millis(200));
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
    assert!(o.ok(), "{:?}", o.error);
    assert!(!o.local_sender);
    assert_eq!(o.cc, "vegas");
    assert_eq!(
        o.sender.as_ref().unwrap().cc,
        "vegas",
        "the server says what it sent with"
    );
    assert!(!o.intervals.is_empty());
    for i in &o.intervals {
        let snap = i.controller.as_ref().expect("the sender's snapshot");
        assert!(
            matches!(snap.state, tput_cc::AlgorithmState::Vegas { .. }),
            "{:?}",
            snap.state
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_downloads_interval_series_are_filled() {
    let (addr, id, server_finished) = watched_server().await;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let duration = Duration::from_millis(1500);
    let interval = Duration::from_millis(250);
    let spec = download("cubic", duration, interval);
    let mut live = Vec::new();
    let out = within(udp::transfer(
        addr,
        "localhost",
        &trust,
        config(),
        vec![spec],
        |_, s| live.push((server_finished.load(Ordering::SeqCst), s.clone())),
    ))
    .await
    .unwrap();
    let o = &out[0];
    assert!(o.ok(), "{:?}", o.error);
    let n = (duration.as_nanos() / interval.as_nanos()) as usize;
    assert!(
        o.intervals.len() >= n,
        "{} records for {n} intervals",
        o.intervals.len()
    );
    // Live: the client saw each record as it came, in order, the first
    // while the server (the sender) was still at its transfer.
    assert_eq!(live.iter().map(|(_, s)| s.clone()).collect::<Vec<_>>(), o.intervals);
    assert!(!live[0].0, "every record came after the server finished");
    ended(&server_finished).await;
    for (k, i) in o.intervals.iter().enumerate() {
        assert!(i.cwnd_bytes > 0 && i.srtt_ms > 0.0 && i.min_rtt_ms > 0.0, "{k}: {i:?}");
        assert!(i.end_secs > i.start_secs, "{k}: {i:?}");
        assert!(matches!(
            i.controller.as_ref().map(|c| &c.state),
            Some(tput_cc::AlgorithmState::Cubic { .. })
        ));
    }
    // Delivered bytes add up to what the receiver verified; the full
    // intervals each carried some.
    let r = o.receiver.as_ref().unwrap();
    assert_eq!(o.intervals.iter().map(|i| i.bytes).sum::<u64>(), r.bytes);
    assert!(o.intervals[..n - 1].iter().all(|i| i.bytes > 0 && i.goodput_bps > 0.0));
    assert!(o.intervals.iter().map(|i| i.written_bytes).sum::<u64>() >= r.bytes);
}

#[cfg(feature = "qlog")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qlog_traces_are_written_per_connection() {
    let tmp_dir = tempfile::tempdir().unwrap();
    let dir = tmp_dir.path().to_path_buf();
    let cfg = config().with_qlog_dir(Some(dir.clone()));
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let socket = udp::bind_server("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = socket.local_addr().unwrap();
    let served = id.clone();
    let server_cfg = cfg.clone();
    tokio::spawn(async move {
        let _ = udp::serve(&socket, &served, server_cfg, |_, _| ControlFlow::Continue(())).await;
    });
    let spec = TransferSpec::upload(2_000_000, "cubic".parse().unwrap());
    let out = within(udp::transfer(
        addr,
        "localhost",
        &ServerTrust::Pinned(id.fingerprint()),
        cfg,
        vec![spec],
        |_, _| {},
    ))
    .await
    .unwrap();
    assert!(out[0].ok(), "{:?}", out[0].error);
    // A trace is complete once its connection has drained and dropped it:
    // until then the tail may be unwritten.
    for name in ["client-0.sqlog", "server-0.sqlog"] {
        let path = dir.join(name);
        let mut result = Err("no file".to_string());
        for _ in 0..100 {
            result = std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|text| json_seq(&text));
            if result.as_ref().is_ok_and(|records| records.len() > 10) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let records = result.unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(records[0]["qlog_format"], "JSON-SEQ", "{name}: {}", records[0]);
        let events = records[1..]
            .iter()
            .filter(|r| r["name"].is_string() && r["time"].is_number());
        assert!(events.count() > 10, "{name}: {} records", records.len());
    }
}

/// The records of a JSON-SEQ text (RFC 7464: each starts with RS and is one JSON text).
#[cfg(feature = "qlog")]
fn json_seq(text: &str) -> Result<Vec<serde_json::Value>, String> {
    if !text.starts_with('\u{1e}') {
        return Err("does not start with RS".into());
    }
    text.split('\u{1e}')
        .filter(|r| !r.trim().is_empty())
        .map(|r| serde_json::from_str(r.trim()).map_err(|e| e.to_string()))
        .collect()
}

/// `NodeConfig::max_mtu` on both ends lets path MTU discovery (RFC 9000
/// §14.3) grow datagrams past Ethernet's 1452-byte payload on loopback
/// (whose MTU is 65 536), up to `max_mtu - 48`; without it, discovery stops
/// at 1452 however large the path's MTU.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn max_mtu_lets_path_mtu_discovery_use_large_datagrams() {
    for (max_mtu, lowest, highest) in [(9000u16, 1453u16, 8952u16), (1500, 1200, 1452)] {
        let id = Identity::self_signed(&["localhost"]).unwrap();
        let socket = udp::bind_server("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let addr = socket.local_addr().unwrap();
        let served = id.clone();
        let server_config = config().with_max_mtu(max_mtu);
        let server = tokio::spawn(async move {
            let _ = udp::serve(&socket, &served, server_config, |_, _| ControlFlow::Continue(())).await;
        });
        let trust = ServerTrust::Pinned(id.fingerprint());
        let spec = TransferSpec::upload(20_000_000, "cubic".parse().unwrap());
        let out = within(udp::transfer(
            addr,
            "localhost",
            &trust,
            config().with_max_mtu(max_mtu),
            vec![spec],
            |_, _| {},
        ))
        .await
        .unwrap();
        server.abort();
        let o = &out[0];
        assert!(o.ok(), "max_mtu {max_mtu}: {:?}", o.error);
        assert_eq!(
            o.receiver.as_ref().unwrap().bytes,
            20_000_000,
            "max_mtu {max_mtu}: receiver verified"
        );
        assert!(
            (lowest..=highest).contains(&o.path_mtu),
            "max_mtu {max_mtu}: path MTU {} outside {lowest}..={highest}",
            o.path_mtu
        );
    }
}

#[test]
fn max_mtu_below_quic_minimum_is_refused() {
    let err = config().with_max_mtu(1247).validate().unwrap_err();
    assert!(err.to_string().contains("max mtu 1247"), "{err}");
    assert!(config().with_max_mtu(1248).validate().is_ok());
}

/// Uploads 2 MB with the client's ECN `client_ecn` to a server with ECN
/// on; returns the ECN codepoints the server's node took in.
async fn upload_ecn(client_ecn: bool) -> tput_transport::EcnCounts {
    let id = Identity::self_signed(&["localhost"]).unwrap();
    let socket = udp::bind_server("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let addr = socket.local_addr().unwrap();
    let served = id.clone();
    let seen = Arc::new(std::sync::Mutex::new(None));
    let slot = seen.clone();
    let server = tokio::spawn(async move {
        let _ = udp::serve(&socket, &served, config(), |node, ev| {
            if matches!(ev, NodeEvent::Finished(_)) {
                *slot.lock().unwrap() = Some(node.ecn_received());
                return ControlFlow::Break(());
            }
            ControlFlow::Continue(())
        })
        .await;
    });
    let trust = ServerTrust::Pinned(id.fingerprint());
    let spec = TransferSpec::upload(2_000_000, "cubic".parse().unwrap());
    let out = within(udp::transfer(
        addr,
        "localhost",
        &trust,
        config().with_ecn(client_ecn),
        vec![spec],
        |_, _| {},
    ))
    .await
    .unwrap();
    assert!(out[0].ok(), "{:?}", out[0].error);
    within(server).await.unwrap();
    seen.lock().unwrap().expect("the server's transfer finished")
}

/// RFC 9000 §13.4: the UDP driver sends the ECT(0) quinn-proto asks for
/// and hands it the codepoint of each arrival. The server counts its
/// arrivals by codepoint: ECT(0) on (nearly) all of them means the client
/// kept sending ECT(0) to the end, so its ECN validation against the
/// server's ACK counts (§13.4.2) succeeded (a failed one turns ECT off at
/// the first ACK). With the client's ECN off nothing arrives ECN-capable.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ecn_is_sent_read_and_validated_over_udp() {
    let on = upload_ecn(true).await;
    assert!(on.total() > 1000, "{on:?}");
    assert!(on.ect0 * 100 >= on.total() * 95, "{on:?}");
    assert_eq!(on.ce, 0, "nothing on loopback marks: {on:?}");
    let off = upload_ecn(false).await;
    assert!(off.total() > 1000, "{off:?}");
    assert_eq!((off.ect0, off.ect1, off.ce), (0, 0, 0), "{off:?}");
}
