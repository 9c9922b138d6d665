//! The application-buffer model over real UDP sockets on 127.0.0.1: the
//! payload goes as buffer streams, every byte is verified, a timed transfer
//! ends cleanly, and a download with buffers is refused before it starts.

use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::time::Duration;

use tput_transport::{
    AppBuffers, AppBuffersError, ConfigError, Direction, Error, Identity, NodeConfig, ServerTrust, TransferSpec, udp,
};

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(Duration::from_secs(60), f)
        .await
        .expect("transfer took more than 60 s")
}

fn config() -> NodeConfig {
    NodeConfig::default().with_idle_timeout(Duration::from_secs(5))
}

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

fn buffers(count: u32, size: u64) -> Option<AppBuffers> {
    Some(AppBuffers { count, size })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn buffered_uploads_deliver_every_byte_verified() {
    let (addr, id) = server().await;
    let trust = ServerTrust::Pinned(id.fingerprint());
    // 3 MB in buffers of 256 KiB: 11 full ones and a shorter last one.
    let mut sized = TransferSpec::upload(3_000_000, "cubic".parse().unwrap());
    sized.buffers = buffers(2, 256 << 10);
    let mut timed = TransferSpec::upload(0, "newreno".parse().unwrap());
    timed.bytes = None;
    timed.duration = Some(Duration::from_secs(1));
    timed.buffers = buffers(4, 64 << 10);
    let out = within(udp::transfer(
        addr,
        "localhost",
        &trust,
        config(),
        vec![sized, timed],
        |_, _| {},
    ))
    .await
    .unwrap();
    assert_eq!(out.len(), 2);
    assert!(out[0].ok(), "{:?}", out[0].error);
    assert_eq!(out[0].bytes, 3_000_000);
    assert_eq!(out[0].receiver.as_ref().unwrap().bytes, 3_000_000, "receiver verified");
    assert!(out[1].ok(), "{:?}", out[1].error);
    let got = out[1].receiver.as_ref().unwrap().bytes;
    assert!(got > 4 * (64 << 10), "{got} bytes in 1 s");
}

#[tokio::test]
async fn a_download_with_buffers_is_refused_before_it_starts() {
    let (addr, id) = server().await;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let mut spec = TransferSpec::upload(1000, "cubic".parse().unwrap());
    spec.direction = Direction::Download;
    spec.buffers = buffers(2, 1000);
    match udp::transfer(addr, "localhost", &trust, config(), vec![spec], |_, _| {}).await {
        Err(Error::Config(e)) => {
            assert_eq!(e, ConfigError::BuffersForDownload);
            assert!(e.to_string().contains("uploads only"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    let mut spec = TransferSpec::upload(1000, "cubic".parse().unwrap());
    spec.buffers = buffers(65, 1000);
    match udp::transfer(addr, "localhost", &trust, config(), vec![spec], |_, _| {}).await {
        Err(Error::Config(e)) => {
            assert_eq!(e, ConfigError::AppBuffers(AppBuffersError::Count(65)));
            assert!(e.to_string().contains("65 application buffers"), "{e}");
        }
        other => panic!("{other:?}"),
    }
}
