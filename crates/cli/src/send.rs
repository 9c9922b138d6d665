//! `tputctl send` and `tputctl loopback`: live transfers, iperf3-style.

use std::net::{SocketAddr, ToSocketAddrs};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use tput_cc::units::Rate;
use tput_lab::{live, report};
use tput_transport::{
    Direction, EvalSlot, Fingerprint, Identity, NodeConfig, SenderController, ServerTrust, TransferSpec, udp,
};

use crate::args::*;
use crate::runtime;
use crate::{Failure, out, outln};

#[derive(Args, Clone)]
pub(crate) struct SendOpts {
    /// Send for this long, e.g. 10s or 10; positive (there is no -t 0 for
    /// no limit) [default: 10s unless --bytes].
    #[arg(short = 't', long, value_parser = parse_transfer_time, conflicts_with = "bytes")]
    time: Option<Duration>,
    /// Send this many bytes per connection, e.g. 100MB, 64KiB or 50M (iperf3:
    /// MiB); with -P N, N times as many in all (iperf3's -n is the total).
    #[arg(short = 'n', long, value_parser = parse_bytes)]
    bytes: Option<u64>,
    /// Congestion controller spec of the sender (the server's, with -R).
    ///
    /// A spec of this workspace (`tputctl cc list`), or one of quinn-proto's
    /// own controllers with its defaults: quinn-newreno, quinn-cubic,
    /// quinn-bbr (uploads only; paced by quinn-proto alone), or
    /// quinn-bbr-paced (quinn-proto's BBR paced at the rate it computes).
    #[arg(long, default_value = "cubic", value_parser = parse_cc_choice)]
    cc: CcChoice,
    /// Throughput target judged per evaluation slot at the receiver, e.g. 20Mbit/s.
    ///
    /// The receiver judges goodput (verified payload). A guarantee controller
    /// (`--cc guarantee:target=R`) pursues its own target on acknowledged QUIC
    /// bytes, headers included: 35 bytes per 1200-byte datagram, 3.0% more than
    /// the payload.
    #[arg(long, value_parser = parse_rate)]
    target: Option<Rate>,
    /// Evaluation slot: a duration (1s) or a number of RTTs (32rtt).
    #[arg(long, default_value = "1s", value_parser = parse_eval_slot)]
    eval_slot: EvalSlot,
    /// Statistics interval, e.g. 1s or 0.5.
    ///
    /// An interval line's goodput is the new payload that arrived at the
    /// receiver in that interval, each byte counted once at its first
    /// arrival (out of order too, behind a loss), over the interval's
    /// length: it cannot exceed what the path delivered. The `[SUM]` line's
    /// rate is the verified total over the transfer's own time.
    #[arg(short = 'i', long, default_value = "1s", value_parser = parse_secs)]
    interval: Duration,
    /// Parallel connections.
    #[arg(short = 'P', long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=128))]
    parallel: u32,
    /// The server sends and the client receives.
    #[arg(short = 'R', long)]
    reverse: bool,
    /// Application rate limit of each sender, e.g. 50Mbit/s or 50M (the server, with -R).
    ///
    /// A token bucket 10 ms of the rate deep (at least 4 KiB): the sender
    /// writes at most that much at once, and after a stall catches up at no
    /// more than twice the rate on a backlog of at most 100 ms of the rate,
    /// so the congestion window it leaves unused does not grow (RFC 9002
    /// §7.7, §7.8).
    #[arg(short = 'b', long, value_parser = parse_rate)]
    rate_limit: Option<Rate>,
    /// Print one JSON document at the end (schema: docs/cli.md) instead of text.
    #[arg(short = 'J', long)]
    json: bool,
    /// Write a qlog trace (JSON-SEQ, for qvis) per connection into this directory.
    #[arg(long, value_name = "DIR")]
    qlog: Option<PathBuf>,
    /// Application buffers in flight (uploads): send the payload as buffers
    /// of --buffer-size bytes, one QUIC stream each, and open the next only
    /// when an earlier one is fully acknowledged (at most 64) [default: no
    /// buffers: one stream, written as fast as the connection takes it].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=64), conflicts_with = "reverse")]
    buffers: Option<u32>,
    /// Bytes per application buffer, e.g. 512KiB [default: 512KiB].
    #[arg(long, value_parser = parse_bytes, requires = "buffers")]
    buffer_size: Option<u64>,
    /// QUIC stream and connection receive windows of this end, e.g. 53KB
    /// (limits a download, -R) [default: quinn-proto's].
    #[arg(short = 'w', long, value_parser = parse_bytes)]
    window: Option<u64>,
    /// A transfer fails once nothing has arrived from the other end for this
    /// long (the path is dead), e.g. 30s; 1s to 1h (docs/cli.md, "Idle timeout").
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

#[derive(Args, Clone)]
#[group(multiple = false)]
pub(crate) struct TrustOpts {
    /// Accept only the server certificate with this SHA-256 fingerprint (as `tputctl serve` prints).
    #[arg(long, value_parser = parse_pin)]
    pin: Option<Fingerprint>,
    /// Verify the server against this root certificate (PEM).
    #[arg(long)]
    ca: Option<PathBuf>,
    /// Do not verify the server at all (anyone on the path can impersonate it).
    #[arg(long)]
    insecure: bool,
}

#[derive(Args, Clone)]
pub(crate) struct ClientOpts {
    /// Name to verify the certificate against [default: the host given as ADDR].
    #[arg(long)]
    server_name: Option<String>,
    /// Certificate chain (PEM) to present to a server that requires client authentication.
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,
    /// Private key (PEM) of --cert.
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,
}

pub(crate) fn transfer_specs(opts: &SendOpts) -> Vec<TransferSpec> {
    let duration = match (opts.time, opts.bytes) {
        (Some(t), _) => Some(t),
        (None, None) => Some(Duration::from_secs(10)),
        (None, Some(_)) => None,
    };
    (0..opts.parallel)
        .map(|_| {
            TransferSpec::new(
                if opts.reverse {
                    Direction::Download
                } else {
                    Direction::Upload
                },
                opts.cc.spec.clone(),
            )
            .with_controller(
                opts.cc
                    .quinn
                    .map_or_else(|| opts.cc.spec.clone().into(), SenderController::Quinn),
            )
            .with_bytes(opts.bytes)
            .with_duration(duration)
            .with_target(opts.target)
            .with_eval_slot(opts.eval_slot)
            .with_interval(opts.interval)
            .with_rate_limit(opts.rate_limit)
            .with_buffers(opts.buffers.map(|count| tput_transport::AppBuffers {
                count,
                size: opts.buffer_size.unwrap_or(512 << 10),
            }))
        })
        .collect()
}

/// `HOST[:PORT]` split into the address to connect to and the host name to
/// verify the certificate against (the host as typed, brackets removed).
pub(crate) fn resolve(addr: &str) -> Result<(SocketAddr, String), Failure> {
    let (host, with_port) = if let Ok(sa) = addr.parse::<SocketAddr>() {
        (sa.ip().to_string(), addr.to_string())
    } else if let Some((h, p)) = addr
        .rsplit_once(':')
        .filter(|(h, p)| !h.ends_with(':') && p.parse::<u16>().is_ok() && !h.contains(':'))
    {
        (h.to_string(), format!("{h}:{p}"))
    } else if addr.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_ipv6()) {
        (addr.to_string(), format!("[{addr}]:4433"))
    } else {
        (addr.to_string(), format!("{addr}:4433"))
    };
    let sa = with_port
        .to_socket_addrs()
        .map_err(|e| Failure::Input(format!("cannot resolve `{addr}`: {e}")))?
        .next()
        .ok_or_else(|| Failure::Input(format!("`{addr}` resolves to no address")))?;
    Ok((sa, host.trim_start_matches('[').trim_end_matches(']').to_string()))
}

pub(crate) fn trust_from(t: &TrustOpts) -> Result<ServerTrust, Failure> {
    if let Some(pin) = t.pin {
        return Ok(ServerTrust::Pinned(pin));
    }
    if let Some(ca) = &t.ca {
        return ServerTrust::root_from_pem_file(ca).map_err(|e| Failure::Input(format!("--ca: {e}")));
    }
    if t.insecure {
        eprintln!("tputctl: warning: --insecure: the server is not authenticated");
        return Ok(ServerTrust::Insecure);
    }
    Err(Failure::Input(
        "the server cannot be verified: give --pin SHA256 (printed by `tputctl serve`), --ca FILE, or --insecure"
            .into(),
    ))
}

pub(crate) async fn run_send(
    command: &str,
    server: SocketAddr,
    server_name: &str,
    trust: &ServerTrust,
    opts: &SendOpts,
    client_identity: Option<Identity>,
) -> Result<bool, Failure> {
    let specs = transfer_specs(opts);
    // Every request is checked before anything is printed: bad input is
    // one line on stderr, with no header above it.
    for spec in &specs {
        spec.validate().map_err(|e| Failure::Input(e.to_string()))?;
    }
    if !opts.json {
        outln!(
            "{command}: {} connection(s) to {server}, controller {}",
            specs.len(),
            opts.cc
        );
        // With --reverse too: the server sends its interval records.
        outln!("{}", live::interval_header(opts.target.is_some()));
    }
    let json = opts.json;
    let target_bps = opts.target.map(|t| t.bits_per_sec());
    let config = NodeConfig::default()
        .with_qlog_dir(qlog_dir(opts.qlog.as_deref())?)
        .with_client_identity(client_identity)
        .with_receive_window(opts.window)
        .with_idle_timeout(opts.idle_timeout)
        .with_max_mtu(opts.max_mtu)
        .with_ecn(!opts.no_ecn);
    let cpu_before = live::process_cpu_secs();
    let outcomes = udp::transfer(server, server_name, trust, config, specs, |id, s| {
        if !json {
            outln!("{}", live::interval_line(id, s, target_bps));
        }
    })
    .await
    .map_err(|e| match e {
        tput_transport::Error::Config(m) => Failure::Input(m.to_string()),
        other => Failure::Run(other.into()),
    })?;
    let cpu = cpu_before.zip(live::process_cpu_secs()).map(|(a, b)| b - a);
    let summary = live::TransferSummary::new(&outcomes, cpu);
    if json {
        let report = live::SendReport {
            tputctl: env!("CARGO_PKG_VERSION"),
            command,
            server: server.to_string(),
            cc: opts.cc.to_string(),
            direction: if opts.reverse {
                Direction::Download
            } else {
                Direction::Upload
            },
            target_bps: opts.target.map(|r| r.bits_per_sec()),
            transfers: &outcomes,
            summary,
        };
        outln!(
            "{}",
            report::to_json(&report, true).map_err(|e| Failure::Run(e.into()))?
        );
        return Ok(report.summary.ok);
    }
    for o in &outcomes {
        out!("{}", live::outcome_lines(o));
    }
    out!("{}", summary.lines());
    Ok(summary.ok)
}

pub(crate) async fn send(addr: &str, opts: SendOpts, trust: TrustOpts, client: ClientOpts) -> Result<bool, Failure> {
    let (server, host) = resolve(addr)?;
    let t = trust_from(&trust)?;
    let name = client.server_name.clone().unwrap_or(host);
    let identity = match (&client.cert, &client.key) {
        (Some(c), Some(k)) => Some(Identity::from_pem_files(c, k).map_err(|e| Failure::Input(e.to_string()))?),
        _ => None,
    };
    run_send("send", server, &name, &t, &opts, identity).await
}

/// Server and client on two threads of one process, each with its own runtime.
pub(crate) fn loopback(opts: SendOpts) -> Result<bool, Failure> {
    let identity = Identity::self_signed(&["localhost"]).context("generating a certificate")?;
    let served = identity.clone();
    // The server's traces go beside the client's.
    let server_qlog = qlog_dir(opts.qlog.as_deref())?;
    let idle_timeout = opts.idle_timeout;
    let max_mtu = opts.max_mtu;
    let ecn = !opts.no_ecn;
    let (ready_tx, ready_rx) = std::sync::mpsc::channel();
    // The server thread runs until the process exits.
    std::thread::Builder::new()
        .name("tputctl-server".into())
        .spawn(move || {
            let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(format!("starting the server's runtime: {e}")));
                    return;
                }
            };
            rt.block_on(async move {
                let bound = udp::bind_server("127.0.0.1:0".parse().expect("a valid address"))
                    .await
                    .map_err(|e| e.to_string())
                    .and_then(|s| s.local_addr().map(|a| (s, a)).map_err(|e| e.to_string()));
                let (socket, addr) = match bound {
                    Ok(x) => x,
                    Err(e) => {
                        let _ = ready_tx.send(Err(e));
                        return;
                    }
                };
                let _ = ready_tx.send(Ok(addr));
                let config = NodeConfig::default()
                    .with_qlog_dir(server_qlog)
                    .with_idle_timeout(idle_timeout)
                    .with_max_mtu(max_mtu)
                    .with_ecn(ecn);
                if let Err(e) = udp::serve(&socket, &served, config, |_, _| ControlFlow::Continue(())).await {
                    tracing::error!("loopback server: {e}");
                }
            });
        })
        .context("starting the server thread")?;
    let addr = ready_rx
        .recv()
        .context("the server thread ended before listening")?
        .map_err(|e| Failure::Run(anyhow::anyhow!("loopback server: {e}")))?;
    runtime()?.block_on(run_send(
        "loopback",
        addr,
        "localhost",
        &ServerTrust::Pinned(identity.fingerprint()),
        &opts,
        None,
    ))
}
