//! `tputctl serve`: the server of live transfers.

use std::net::SocketAddr;
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tput_cc::units::Rate;
use tput_lab::{live, report};
use tput_transport::{ClientAuth, Fingerprint, Identity, NodeConfig, NodeEvent, ServerLimits, udp};

use crate::args::*;
use crate::{Failure, outln};

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:4433", value_parser = parse_socket_addr)]
    listen: SocketAddr,
    /// Port to listen on (instead of --listen's; iperf3's -p).
    #[arg(short, long)]
    port: Option<u16>,
    /// Certificate chain (PEM); default: a fresh self-signed certificate.
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,
    /// Private key (PEM) of --cert.
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,
    /// Clients served at once; further ones are refused.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    max_clients: u32,
    /// One JSON object per finished transfer instead of a text line; stdout
    /// carries only these (the greeting goes to stderr).
    #[arg(short = 'J', long)]
    json: bool,
    /// Write a qlog trace (JSON-SEQ, for qvis) per connection into this directory.
    #[arg(long, value_name = "DIR")]
    qlog: Option<PathBuf>,
    /// Accept only clients whose certificate chains to a root in this PEM file (mutual TLS).
    #[arg(long, value_name = "FILE")]
    client_ca: Option<PathBuf>,
    /// Accept only clients whose certificate has this SHA-256 fingerprint (repeatable;
    /// with --client-ca, either suffices).
    #[arg(long, value_name = "SHA256", value_parser = parse_pin)]
    allow_client: Vec<Fingerprint>,
    /// Longest transfer a client may ask for; longer requests are refused (or
    /// clamped with --clamp); 0 for no limit.
    #[arg(long, default_value = "10min", value_parser = parse_secs)]
    max_time: Duration,
    /// Most bytes a client may ask for [default: no limit].
    #[arg(long, value_parser = parse_bytes)]
    max_bytes: Option<u64>,
    /// Fastest this server sends a download (a client must ask for a rate limit
    /// at or below it, or is refused; clamped with --clamp) [default: no limit].
    #[arg(long, value_parser = parse_rate)]
    max_rate: Option<Rate>,
    /// Clamp a download's duration and rate to the limits instead of refusing it.
    #[arg(long)]
    clamp: bool,
    /// Connections at once from one IP address (the default admits one
    /// client's `send -P 32`; docs/security.md).
    #[arg(long, default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    max_per_address: u32,
    /// Close a connection whose request has not arrived this long after it began.
    #[arg(long, default_value = "10s", value_parser = parse_secs)]
    request_timeout: Duration,
    /// Validate client addresses with a QUIC Retry first (RFC 9000 §8.1.2):
    /// one more round trip per connection, no work for spoofed sources.
    #[arg(long)]
    retry: bool,
    /// QUIC stream and connection receive windows of the server, e.g. 53KB
    /// (limits uploads) [default: quinn-proto's].
    #[arg(short = 'w', long, value_parser = parse_bytes)]
    window: Option<u64>,
    /// Close a connection once nothing has arrived from its client for this
    /// long, e.g. 30s; 1s to 1h (docs/cli.md, "Idle timeout").
    #[arg(long, default_value = "10s", value_parser = parse_idle_timeout)]
    idle_timeout: Duration,
    /// The largest IP packet, bytes, path MTU discovery may find (RFC 9000
    /// §14.3): QUIC datagrams grow up to max-mtu - 48 bytes of UDP payload
    /// as probes confirm the path carries them. 1500 keeps to Ethernet;
    /// 9000 suits jumbo frames and loopback. Both ends need it: the peer
    /// must accept datagrams that large (`serve --max-mtu`). 1248 to 65535.
    #[arg(long, default_value_t = 1500, value_parser = clap::value_parser!(u16).range(1248..), value_name = "BYTES")]
    max_mtu: u16,
    /// Send every datagram Not-ECT and ignore the ECN field of arrivals
    /// [default: ECN on: datagrams carry the codepoint quinn-proto asks
    /// for, ECT(0), and arrivals' codepoints, CE marks included, feed its
    /// ECN counts (RFC 9000 §13.4); quinn-proto turns ECN off by itself on a
    /// path that bleaches or drops ECT].
    #[arg(long)]
    no_ecn: bool,
}

/// The command a client runs, as the server suggests it: an unspecified
/// listening address (0.0.0.0, ::) is no address a client can reach, so it
/// becomes the placeholder `HOST`; a server that authenticates its clients
/// needs their `--cert`/`--key`.
fn client_command(local: SocketAddr, pin: &Fingerprint, client_auth: bool) -> String {
    let addr = if local.ip().is_unspecified() {
        format!("HOST:{}", local.port())
    } else {
        local.to_string()
    };
    let mut cmd = format!("tputctl send {addr} --pin {pin}");
    if client_auth {
        cmd += " --cert CLIENT.pem --key CLIENT.key";
    }
    if local.ip().is_unspecified() {
        cmd += "   (HOST: this server's name or address)";
    }
    cmd
}

pub(crate) async fn run(args: ServeArgs) -> Result<bool, Failure> {
    // Every input is checked before the socket is bound and before anything
    // is printed: a bad file is named whatever the port's state.
    let identity = match (&args.cert, &args.key) {
        (Some(c), Some(k)) => Identity::from_pem_files(c, k).map_err(|e| Failure::Input(e.to_string()))?,
        _ => Identity::self_signed(&["localhost"]).context("generating a certificate")?,
    };
    let listen = match args.port {
        Some(p) => SocketAddr::new(args.listen.ip(), p),
        None => args.listen,
    };
    let client_auth = if args.client_ca.is_none() && args.allow_client.is_empty() {
        None
    } else {
        let mut auth = ClientAuth {
            allowed: args.allow_client.clone(),
            ..ClientAuth::default()
        };
        if let Some(ca) = &args.client_ca {
            auth.add_roots_from_pem_file(ca)
                .map_err(|e| Failure::Input(format!("--client-ca: {e}")))?;
        }
        Some(auth)
    };
    let qlog = qlog_dir(args.qlog.as_deref())?;
    let socket = udp::bind_server(listen)
        .await
        .map_err(|e| Failure::Input(e.to_string()))?;
    let local = socket.local_addr().context("reading the local address")?;
    let greeting = [
        format!("listening on {local}"),
        format!("certificate SHA-256 {}", identity.fingerprint()),
        format!(
            "clients: {}",
            client_command(local, &identity.fingerprint(), client_auth.is_some())
        ),
    ];
    for line in greeting {
        // With -J, stdout carries JSON only.
        if args.json {
            eprintln!("{line}");
        } else {
            outln!("{line}");
        }
    }
    if client_auth.is_none() && !listen.ip().is_loopback() {
        eprintln!(
            "tputctl: warning: serving on {listen} to any client: restrict it with --allow-client or --client-ca (docs/security.md)"
        );
    }
    let config = NodeConfig::default()
        .with_client_auth(client_auth)
        .with_max_connections(args.max_clients as usize)
        .with_qlog_dir(qlog)
        .with_limits(
            ServerLimits::default()
                .with_max_duration((!args.max_time.is_zero()).then_some(args.max_time))
                .with_max_bytes(args.max_bytes)
                .with_max_rate(args.max_rate)
                .with_clamp(args.clamp)
                .with_max_per_address(Some(args.max_per_address as usize))
                .with_request_timeout(Some(args.request_timeout))
                .with_retry(args.retry),
        )
        .with_receive_window(args.window)
        .with_idle_timeout(args.idle_timeout)
        .with_max_mtu(args.max_mtu)
        .with_ecn(!args.no_ecn);
    let json = args.json;
    udp::serve(&socket, &identity, config, |_, ev| {
        if let NodeEvent::Finished(o) = ev {
            if json {
                if let Ok(line) = serde_json::to_string(&*o) {
                    outln!("{line}");
                }
            } else {
                let what = if o.local_sender { "sent" } else { "received" };
                match &o.error {
                    None => outln!(
                        "transfer {}: {what} {} in {:.2} s ({})",
                        o.id,
                        live::human_bytes(o.bytes),
                        o.elapsed_secs,
                        report::mbps(o.bytes as f64 * 8.0 / o.elapsed_secs.max(1e-9))
                    ),
                    Some(e) => outln!(
                        "transfer {}: failed after {} {what}: {e}",
                        o.id,
                        live::human_bytes(o.bytes)
                    ),
                }
            }
        }
        ControlFlow::Continue(())
    })
    .await
    .context("serving")?;
    Ok(true)
}
