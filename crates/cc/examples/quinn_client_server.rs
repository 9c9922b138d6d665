//! A tput-cc controller inside the real `quinn` crate: a server and a client
//! on 127.0.0.1 in one process, TLS 1.3 with the ring provider and a
//! self-signed certificate. The client (the sending side) runs CUBIC from
//! tput-cc and sends 4 MiB over a unidirectional stream; the server checks
//! every byte. Prints the goodput and the controller's final window; exits
//! non-zero on failure.
//!
//! `cargo run -p tput-cc --example quinn_client_server [-- SPEC [BYTES]]`

use std::error::Error;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::rustls::RootCertStore;
use quinn::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use quinn::{ClientConfig, Endpoint, ServerConfig, TransportConfig};
use tput_cc::{ControllerProbe, ControllerSpec, QuinnFactory, Snapshot};

/// What a transfer achieved.
#[derive(Debug)]
pub struct Report {
    /// Bytes received and verified by the server.
    pub bytes: usize,
    /// From the client's first write to the server's end of stream.
    pub elapsed: Duration,
    /// The sending controller's last snapshot.
    pub snapshot: Snapshot,
}

impl Report {
    /// Goodput in bits per second.
    pub fn goodput_bps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.elapsed.as_secs_f64()
    }
}

/// The byte at offset `i` of the transfer.
fn pattern(i: usize) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// Send `bytes` bytes from a client running `spec` to a server, both on
/// 127.0.0.1, and verify them.
pub fn run(spec: &str, bytes: usize) -> Result<Report, Box<dyn Error + Send + Sync>> {
    let spec: ControllerSpec = spec.parse()?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(transfer(spec, bytes))
}

async fn transfer(spec: ControllerSpec, bytes: usize) -> Result<Report, Box<dyn Error + Send + Sync>> {
    let localhost: SocketAddr = "127.0.0.1:0".parse()?;
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()])?;
    let cert_der = CertificateDer::from(cert.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der()));

    let server = Endpoint::server(ServerConfig::with_single_cert(vec![cert_der.clone()], key)?, localhost)?;
    let server_addr = server.local_addr()?;

    // The sending side: the tput-cc controller, its state read through a probe.
    let probe = ControllerProbe::new();
    let mut transport = TransportConfig::default();
    transport.congestion_controller_factory(Arc::new(QuinnFactory::try_new(spec)?.with_probe(probe.clone())));
    let mut roots = RootCertStore::empty();
    roots.add(cert_der)?;
    let mut client_config = ClientConfig::with_root_certificates(Arc::new(roots))?;
    client_config.transport_config(Arc::new(transport));
    let mut client = Endpoint::client(localhost)?;
    client.set_default_client_config(client_config);

    let receiver = tokio::spawn(async move {
        let incoming = server.accept().await.ok_or("server endpoint closed")?;
        let conn = incoming.await?;
        let mut stream = conn.accept_uni().await?;
        let data = stream.read_to_end(bytes + 1).await?;
        let done = Instant::now();
        if data.len() != bytes {
            return Err(format!("received {} bytes, expected {bytes}", data.len()).into());
        }
        if let Some(i) = (0..bytes).find(|&i| data[i] != pattern(i)) {
            return Err(format!("byte {i} corrupted").into());
        }
        conn.close(0u32.into(), b"done");
        server.wait_idle().await;
        Ok::<_, Box<dyn Error + Send + Sync>>(done)
    });

    let conn = client.connect(server_addr, "localhost")?.await?;
    let payload: Vec<u8> = (0..bytes).map(pattern).collect();
    let start = Instant::now();
    let mut stream = conn.open_uni().await?;
    stream.write_all(&payload).await?;
    stream.finish()?;
    // The server closes the connection once it has checked every byte.
    conn.closed().await;
    let done = receiver.await??;
    client.wait_idle().await;
    let snapshot = probe.latest().ok_or("the controller never reported")?;
    Ok(Report {
        bytes,
        elapsed: done.saturating_duration_since(start),
        snapshot,
    })
}

#[allow(dead_code)] // unused where a test includes this file as a module
fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let spec = args.next().unwrap_or_else(|| "cubic".into());
    let bytes = match args.next().map(|b| b.parse::<usize>()) {
        None => 4 << 20,
        Some(Ok(b)) => b,
        Some(Err(e)) => {
            eprintln!("bytes: {e}");
            return ExitCode::FAILURE;
        }
    };
    match run(&spec, bytes) {
        Ok(report) => {
            println!(
                "{spec}: {} bytes verified in {:.3} s, goodput {:.1} Mbit/s, final window {} bytes ({:?})",
                report.bytes,
                report.elapsed.as_secs_f64(),
                report.goodput_bps() / 1e6,
                report.snapshot.cwnd_bytes,
                report.snapshot.phase,
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("{spec}: transfer failed: {e}");
            ExitCode::FAILURE
        }
    }
}
