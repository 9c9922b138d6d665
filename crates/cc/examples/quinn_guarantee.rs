//! The throughput guarantee in a real `quinn` server, the way an
//! application deploys it: one `TransportConfig` with
//! `guarantee:target=...` serves every connection, each connection gets its
//! own probe ([`ConnectionProbes`]), and after each transfer the server reads
//! that connection's verdict: `met` (its goodput reached the target),
//! `missed`, or `infeasible` (the controller's breaker tripped and no slot
//! has met the target since: the path cannot carry it).
//!
//! The server sends `BYTES` to each of `N` clients at once over 127.0.0.1
//! (TLS 1.3, ring, a self-signed certificate); every client checks every
//! byte and closes. Works with quinn 0.11 on quinn-proto 0.11 (tested with
//! quinn 0.11.12 and quinn-proto 0.11.19, as this workspace locks them):
//! `QuinnFactory` implements quinn-proto's `ControllerFactory`, which quinn
//! re-exports.
//!
//! `cargo run -p tput-cc --example quinn_guarantee [-- TARGET [N [BYTES]]]`
//! (default: 20Mbit/s, 3 clients, 4 MiB each).

use std::error::Error;
use std::fmt;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quinn::rustls::RootCertStore;
use quinn::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use quinn::{ClientConfig, Endpoint, ServerConfig, TransportConfig};
use tput_cc::units::Rate;
use tput_cc::{AlgorithmState, ConnectionProbes, ControllerProbe, ControllerSpec, QuinnFactory, Snapshot};

type BoxError = Box<dyn Error + Send + Sync>;

/// What one connection got, as the server judges it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Its goodput reached the target.
    Met,
    /// It did not, and the controller has not declared the target infeasible.
    Missed,
    /// The controller declared the target infeasible (its breaker tripped).
    Infeasible,
}

impl Verdict {
    /// The verdict of a transfer that reached `goodput_bps` against
    /// `target_bps`, its controller's last snapshot being `snapshot`.
    pub fn of(snapshot: &Snapshot, goodput_bps: f64, target_bps: f64) -> Verdict {
        match snapshot.state {
            AlgorithmState::Guarantee { infeasible: true, .. } => Verdict::Infeasible,
            _ if goodput_bps >= target_bps => Verdict::Met,
            _ => Verdict::Missed,
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Verdict::Met => "met",
            Verdict::Missed => "missed",
            Verdict::Infeasible => "infeasible",
        })
    }
}

/// One connection's transfer, seen from the sending server.
#[derive(Debug, Clone)]
pub struct Connection {
    /// Bytes the client verified.
    pub bytes: usize,
    /// From the server's first write to the client's close after its check.
    pub elapsed: Duration,
    /// This connection's controller at the end (its own probe).
    pub snapshot: Snapshot,
    /// The verdict against the target.
    pub verdict: Verdict,
}

impl Connection {
    /// Goodput in bits per second.
    pub fn goodput_bps(&self) -> f64 {
        self.bytes as f64 * 8.0 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The byte at offset `i` of every transfer.
fn pattern(i: usize) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

/// Serve `bytes` to each of `clients` clients with `guarantee:target=TARGET`
/// and return each connection's outcome, in accept order.
pub fn run(target: &str, clients: usize, bytes: usize) -> Result<Vec<Connection>, BoxError> {
    let target: Rate = target.parse()?;
    let spec: ControllerSpec = format!("guarantee:target={target}").parse()?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(serve(spec, target, clients, bytes))
}

async fn serve(spec: ControllerSpec, target: Rate, clients: usize, bytes: usize) -> Result<Vec<Connection>, BoxError> {
    let localhost: SocketAddr = "127.0.0.1:0".parse()?;
    let cert = rcgen::generate_simple_self_signed(vec!["localhost".into()])?;
    let cert_der = CertificateDer::from(cert.cert.der().to_vec());
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der()));

    // One factory, one TransportConfig, every connection: a probe each.
    let probes = ConnectionProbes::new();
    let factory = QuinnFactory::try_new(spec)?.with_connection_probes(probes.clone());
    let mut transport = TransportConfig::default();
    transport.congestion_controller_factory(Arc::new(factory));
    let mut server_config = ServerConfig::with_single_cert(vec![cert_der.clone()], key)?;
    server_config.transport_config(Arc::new(transport));
    let server = Endpoint::server(server_config, localhost)?;
    let server_addr = server.local_addr()?;

    let mut roots = RootCertStore::empty();
    roots.add(cert_der)?;
    let client_config = ClientConfig::with_root_certificates(Arc::new(roots))?;
    let mut receivers = Vec::new();
    for _ in 0..clients {
        let mut client = Endpoint::client(localhost)?;
        client.set_default_client_config(client_config.clone());
        receivers.push(tokio::spawn(async move {
            let conn = client.connect(server_addr, "localhost")?.await?;
            let mut stream = conn.accept_uni().await?;
            let data = stream.read_to_end(bytes + 1).await?;
            if data.len() != bytes {
                return Err::<(), BoxError>(format!("received {} bytes, expected {bytes}", data.len()).into());
            }
            if let Some(i) = (0..bytes).find(|&i| data[i] != pattern(i)) {
                return Err(format!("byte {i} corrupted").into());
            }
            conn.close(0u32.into(), b"verified");
            client.wait_idle().await;
            Ok(())
        }));
    }

    let payload: Arc<Vec<u8>> = Arc::new((0..bytes).map(pattern).collect());
    let mut senders = Vec::new();
    for _ in 0..clients {
        let incoming = server.accept().await.ok_or("server endpoint closed")?;
        // quinn builds the connection's controller inside `accept`: its probe
        // is the next one in line.
        let connecting = incoming.accept()?;
        let probe: ControllerProbe = probes.take().ok_or("the factory built no controller")?;
        let payload = payload.clone();
        senders.push(tokio::spawn(async move {
            let conn = connecting.await?;
            let start = Instant::now();
            let mut stream = conn.open_uni().await?;
            stream.write_all(&payload).await?;
            stream.finish()?;
            // The client closes once it has checked every byte.
            conn.closed().await;
            let elapsed = start.elapsed();
            let snapshot = probe.latest().ok_or("the controller never reported")?;
            Ok::<_, BoxError>((elapsed, snapshot))
        }));
    }
    let mut out = Vec::new();
    for s in senders {
        let (elapsed, snapshot) = s.await??;
        let goodput = bytes as f64 * 8.0 / elapsed.as_secs_f64().max(1e-9);
        out.push(Connection {
            bytes,
            elapsed,
            verdict: Verdict::of(&snapshot, goodput, target.bits_per_sec() as f64),
            snapshot,
        });
    }
    for r in receivers {
        r.await??;
    }
    server.wait_idle().await;
    Ok(out)
}

#[allow(dead_code)] // unused where a test includes this file as a module
fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let target = args.next().unwrap_or_else(|| "20Mbit/s".into());
    let parse = |a: Option<String>, default: usize, what: &str| match a.map(|x| x.parse::<usize>()) {
        None => Ok(default),
        Some(Ok(n)) if n > 0 => Ok(n),
        Some(Ok(_)) => Err(format!("{what}: must be positive")),
        Some(Err(e)) => Err(format!("{what}: {e}")),
    };
    let (clients, bytes) = match (parse(args.next(), 3, "N"), parse(args.next(), 4 << 20, "BYTES")) {
        (Ok(c), Ok(b)) => (c, b),
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    match run(&target, clients, bytes) {
        Ok(conns) => {
            for (i, c) in conns.iter().enumerate() {
                println!(
                    "connection {i}: {} bytes verified in {:.3} s, goodput {:.1} Mbit/s against {target}: {} (window {} bytes)",
                    c.bytes,
                    c.elapsed.as_secs_f64(),
                    c.goodput_bps() / 1e6,
                    c.verdict,
                    c.snapshot.cwnd_bytes
                );
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("guarantee:target={target}: {e}");
            ExitCode::FAILURE
        }
    }
}
