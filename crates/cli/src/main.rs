//! `tputctl`: live QUIC transfers with a throughput target, simulated
//! scenarios and the controller registry, from the command line.
//!
//! Exit codes: 0 success; 1 a transfer or run failed; 2 bad input (an
//! argument, a scenario file, an address), always with one line naming it.

use std::io::{IsTerminal, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use serde::Serialize;
use tput_cc::units::{Rate, parse_duration, parse_size};
use tput_cc::{AlgorithmState, ControllerSpec, registry};
use tput_transport::scenario::{self, Scenario, ScenarioResult};
use tput_transport::{
    Direction, EvalSlot, Fingerprint, Identity, NodeConfig, NodeEvent, ServerTrust, TransferOutcome, TransferSpec, udp,
};

const AFTER_HELP: &str = "\
Units: rates as 100Mbit/s, 12.5MB/s, 1.5Gbit/s (k, M, G = 1000^n; bit/s or B/s);
durations as 250us, 5ms, 2s, 1.5min; sizes as 1000B, 64KiB, 5MB, 5Mbit.
Controllers: see `tputctl cc list`.";

#[derive(Parser)]
#[command(
    name = "tputctl",
    version,
    about = "QUIC transfers with pluggable congestion control: live, with a throughput target, or simulated",
    after_help = AFTER_HELP
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve transfers to `tputctl send` clients (prints its address and certificate fingerprint).
    #[command(after_help = AFTER_HELP)]
    Serve(ServeArgs),
    /// Transfer to (or, with --reverse, from) a `tputctl serve` server, iperf3-style.
    #[command(after_help = AFTER_HELP)]
    Send {
        /// The server, `HOST[:PORT]` (port 4433 if omitted).
        addr: String,
        #[command(flatten)]
        opts: SendOpts,
        #[command(flatten)]
        trust: TrustOpts,
    },
    /// Server and client in one process on 127.0.0.1: a live transfer with no set-up.
    #[command(after_help = AFTER_HELP)]
    Loopback {
        #[command(flatten)]
        opts: SendOpts,
    },
    /// Run a simulated scenario (TOML, see docs/scenarios.md) with real QUIC in virtual time.
    #[command(
        after_help = "Writes into --out: summary.json, result.json, flows.csv, intervals.csv, slots.csv,\nlinks.csv, queue.csv, delivered.csv, throughput.svg, cwnd.svg, queue.svg. Same file and seed, same output."
    )]
    Sim(SimArgs),
    /// Congestion controllers.
    Cc {
        #[command(subcommand)]
        cmd: CcCmd,
    },
}

#[derive(Subcommand)]
enum CcCmd {
    /// Every controller with its parameters, units and defaults.
    List,
}

#[derive(Args)]
struct ServeArgs {
    /// Address to listen on.
    #[arg(long, default_value = "0.0.0.0:4433", value_parser = parse_socket_addr)]
    listen: SocketAddr,
    /// Certificate chain (PEM); default: a fresh self-signed certificate.
    #[arg(long, requires = "key")]
    cert: Option<PathBuf>,
    /// Private key (PEM) of --cert.
    #[arg(long, requires = "cert")]
    key: Option<PathBuf>,
    /// Clients served at once; further ones are refused.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=10_000))]
    max_clients: u32,
    /// One JSON object per finished transfer instead of a text line.
    #[arg(long)]
    json: bool,
    /// Write a qlog trace (JSON-SEQ, for qvis) per connection into this directory.
    #[arg(long, value_name = "DIR")]
    qlog: Option<PathBuf>,
}

#[derive(Args, Clone)]
struct SendOpts {
    /// Send for this long, e.g. 10s [default: 10s unless --bytes].
    #[arg(long, value_parser = parse_dur, conflicts_with = "bytes")]
    time: Option<Duration>,
    /// Send this many bytes, e.g. 100MB or 64KiB.
    #[arg(long, value_parser = parse_bytes)]
    bytes: Option<u64>,
    /// Congestion controller spec of the sender.
    #[arg(long, default_value = "cubic", value_parser = parse_spec)]
    cc: ControllerSpec,
    /// Throughput target judged per evaluation slot at the receiver, e.g. 20Mbit/s.
    #[arg(long, value_parser = parse_rate)]
    target: Option<Rate>,
    /// Evaluation slot: a duration (1s) or a number of RTTs (32rtt).
    #[arg(long, default_value = "1s", value_parser = parse_eval_slot)]
    eval_slot: EvalSlot,
    /// Statistics interval.
    #[arg(long, default_value = "1s", value_parser = parse_dur)]
    interval: Duration,
    /// Parallel connections.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=128))]
    parallel: u32,
    /// The server sends and the client receives.
    #[arg(long)]
    reverse: bool,
    /// Application rate limit of each sender, e.g. 50Mbit/s.
    #[arg(long, value_parser = parse_rate)]
    rate_limit: Option<Rate>,
    /// Print one JSON document at the end (schema: docs/cli.md) instead of text.
    #[arg(long)]
    json: bool,
    /// Write a qlog trace (JSON-SEQ, for qvis) per connection into this directory.
    #[arg(long, value_name = "DIR")]
    qlog: Option<PathBuf>,
}

#[derive(Args, Clone)]
#[group(multiple = false)]
struct TrustOpts {
    /// Accept only the server certificate with this SHA-256 fingerprint (as `tputctl serve` prints).
    #[arg(long, value_parser = parse_pin)]
    pin: Option<Fingerprint>,
    /// Verify the server against this root certificate (PEM).
    #[arg(long)]
    ca: Option<PathBuf>,
    /// Do not verify the server at all (anyone on the path can impersonate it).
    #[arg(long)]
    insecure: bool,
    /// Name to verify the certificate against (with --ca).
    #[arg(long, default_value = "localhost")]
    server_name: String,
}

#[derive(Args)]
struct SimArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// Override the scenario's seed.
    #[arg(long)]
    seed: Option<u64>,
    /// Write CSV, JSON and SVG results into this directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// Print the summary as JSON on stdout.
    #[arg(long)]
    json: bool,
}

fn parse_rate(s: &str) -> Result<Rate, String> {
    s.parse::<Rate>().map_err(|e| e.to_string())
}
fn parse_dur(s: &str) -> Result<Duration, String> {
    parse_duration(s).map_err(|e| e.to_string())
}
fn parse_bytes(s: &str) -> Result<u64, String> {
    match parse_size(s) {
        Ok(0) => Err(format!("size `{s}` must be positive")),
        Ok(b) => Ok(b),
        Err(e) => Err(e.to_string()),
    }
}
fn parse_spec(s: &str) -> Result<ControllerSpec, String> {
    s.parse::<ControllerSpec>().map_err(|e| e.to_string())
}
fn parse_pin(s: &str) -> Result<Fingerprint, String> {
    s.parse::<Fingerprint>().map_err(|e| e.to_string())
}
fn parse_socket_addr(s: &str) -> Result<SocketAddr, String> {
    s.parse::<SocketAddr>()
        .map_err(|_| format!("`{s}` is not an IP address with a port, such as 0.0.0.0:4433"))
}
fn parse_eval_slot(s: &str) -> Result<EvalSlot, String> {
    s.parse::<EvalSlot>().map_err(|e| e.to_string())
}

/// A failure and the exit code it deserves.
enum Failure {
    /// Bad input: exit 2.
    Input(String),
    /// A run or transfer failed: exit 1.
    Run(anyhow::Error),
}

impl From<anyhow::Error> for Failure {
    fn from(e: anyhow::Error) -> Self {
        Failure::Run(e)
    }
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // One line naming the bad value (clap's first line), exit code 2.
            let text = e.to_string();
            let first = text
                .lines()
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ");
            eprintln!("tputctl: error: {first} (see --help)");
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    let result = match cli.cmd {
        Cmd::Cc { cmd: CcCmd::List } => cc_list(),
        Cmd::Sim(args) => sim(args),
        Cmd::Serve(args) => runtime().and_then(|rt| rt.block_on(serve(args))),
        Cmd::Send { addr, opts, trust } => runtime().and_then(|rt| rt.block_on(send(&addr, opts, trust))),
        Cmd::Loopback { opts } => runtime().and_then(|rt| rt.block_on(loopback(opts))),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(Failure::Input(e)) => {
            eprintln!("tputctl: error: {e}");
            ExitCode::from(2)
        }
        Err(Failure::Run(e)) => {
            eprintln!("tputctl: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(Failure::Run)
}

fn cc_list() -> Result<bool, Failure> {
    let mut out = std::io::stdout().lock();
    for c in registry() {
        let aliases = if c.aliases.is_empty() {
            String::new()
        } else {
            format!(" (also: {})", c.aliases.join(", "))
        };
        let _ = writeln!(out, "{}{aliases}\n    {}", c.name, c.summary);
        for p in c.params {
            let default = p.default.map_or("required".to_string(), |d| format!("default {d}"));
            let _ = writeln!(out, "    {:<17} {:<17} {:<20} {}", p.name, p.unit, default, p.doc);
        }
        let _ = writeln!(out);
    }
    let _ = writeln!(
        out,
        "Spec syntax: name[:key=value,...], e.g. vegas:alpha=2,beta=4 or guarantee:target=20Mbit/s,eval=32rtt"
    );
    Ok(true)
}

fn transfer_specs(opts: &SendOpts) -> Vec<TransferSpec> {
    let duration = match (opts.time, opts.bytes) {
        (Some(t), _) => Some(t),
        (None, None) => Some(Duration::from_secs(10)),
        (None, Some(_)) => None,
    };
    (0..opts.parallel)
        .map(|i| TransferSpec {
            direction: if opts.reverse {
                Direction::Download
            } else {
                Direction::Upload
            },
            bytes: opts.bytes,
            duration,
            cc: opts.cc.clone(),
            target: opts.target,
            eval_slot: opts.eval_slot,
            interval: opts.interval,
            rate_limit: opts.rate_limit,
            flow: i,
            bandwidth: None,
            aggregate: None,
        })
        .collect()
}

fn resolve(addr: &str) -> Result<SocketAddr, Failure> {
    let with_port = if addr.parse::<SocketAddr>().is_ok()
        || addr
            .rsplit_once(':')
            .is_some_and(|(h, p)| !h.ends_with(':') && p.parse::<u16>().is_ok() && !h.contains(':'))
    {
        addr.to_string()
    } else if addr.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_ipv6()) {
        format!("[{addr}]:4433")
    } else {
        format!("{addr}:4433")
    };
    with_port
        .to_socket_addrs()
        .map_err(|e| Failure::Input(format!("cannot resolve `{addr}`: {e}")))?
        .next()
        .ok_or_else(|| Failure::Input(format!("`{addr}` resolves to no address")))
}

fn trust_from(t: &TrustOpts) -> Result<ServerTrust, Failure> {
    if let Some(pin) = t.pin {
        return Ok(ServerTrust::Pinned(pin));
    }
    if let Some(ca) = &t.ca {
        let pem = std::fs::read(ca).map_err(|e| Failure::Input(format!("cannot read --ca {}: {e}", ca.display())))?;
        let der = pem_to_der(&pem)
            .ok_or_else(|| Failure::Input(format!("--ca {}: no PEM certificate in it", ca.display())))?;
        return Ok(ServerTrust::Root(der));
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

/// The first certificate of a PEM file, DER-encoded.
fn pem_to_der(pem: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(pem).ok()?;
    let start = text.find("-----BEGIN CERTIFICATE-----")? + "-----BEGIN CERTIFICATE-----".len();
    let end = start + text[start..].find("-----END CERTIFICATE-----")?;
    let b64: String = text[start..end].chars().filter(|c| !c.is_whitespace()).collect();
    base64_decode(&b64)
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let val = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let bytes = s.trim_end_matches('=').as_bytes();
    let mut out = Vec::with_capacity(bytes.len() * 3 / 4);
    for chunk in bytes.chunks(4) {
        let mut acc = 0u32;
        for (i, &c) in chunk.iter().enumerate() {
            acc |= val(c)? << (18 - 6 * i);
        }
        let n = chunk.len() * 6 / 8;
        out.extend_from_slice(&acc.to_be_bytes()[1..1 + n]);
    }
    Some(out)
}

fn mbps(bps: f64) -> String {
    format!("{:.1} Mbit/s", bps / 1e6)
}

fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 10_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b if b >= 10_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{b} B"),
    }
}

/// The `--json` document of `send` and `loopback` (documented in docs/cli.md).
#[derive(Serialize)]
struct SendReport<'a> {
    tputctl: &'static str,
    command: &'a str,
    server: String,
    cc: String,
    direction: Direction,
    target_bps: Option<u64>,
    transfers: &'a [TransferOutcome],
    summary: Summary,
}

#[derive(Serialize)]
struct Summary {
    ok: bool,
    bytes: u64,
    seconds: f64,
    goodput_bps: f64,
    slots: usize,
    slots_met: usize,
    success_ratio: Option<f64>,
}

fn summarize(outcomes: &[TransferOutcome]) -> Summary {
    let bytes: u64 = outcomes.iter().map(|o| o.bytes).sum();
    let seconds = outcomes.iter().map(|o| o.elapsed_secs).fold(0.0, f64::max);
    let slots: Vec<_> = outcomes
        .iter()
        .filter_map(|o| o.receiver.as_ref())
        .flat_map(|r| &r.slots)
        .collect();
    let met = slots.iter().filter(|s| s.met).count();
    Summary {
        ok: outcomes.iter().all(TransferOutcome::ok),
        bytes,
        seconds,
        goodput_bps: if seconds > 0.0 {
            bytes as f64 * 8.0 / seconds
        } else {
            0.0
        },
        slots: slots.len(),
        slots_met: met,
        success_ratio: (!slots.is_empty()).then(|| met as f64 / slots.len() as f64),
    }
}

async fn run_send(
    command: &str,
    server: SocketAddr,
    server_name: &str,
    trust: &ServerTrust,
    opts: &SendOpts,
) -> Result<bool, Failure> {
    let specs = transfer_specs(opts);
    if !opts.json {
        println!(
            "{command}: {} connection(s) to {server}, controller {}",
            specs.len(),
            opts.cc
        );
        // With --reverse too: the server sends its interval records.
        println!("[id]  interval          bytes      goodput         cwnd        srtt     lost");
    }
    let json = opts.json;
    let config = NodeConfig {
        qlog_dir: qlog_dir(opts.qlog.as_deref())?,
        ..NodeConfig::default()
    };
    let outcomes = udp::transfer(server, server_name, trust, config, specs, |id, s| {
        if !json {
            println!(
                "[{id:>2}]  {:>6.2}-{:<6.2} s {:>10} {:>14} {:>10} {:>8.2} ms {:>6}",
                s.start_secs,
                s.end_secs,
                human_bytes(s.bytes),
                mbps(s.goodput_bps),
                human_bytes(s.cwnd_bytes),
                s.srtt_ms,
                s.lost_packets
            );
        }
    })
    .await
    .map_err(|e| match e {
        tput_transport::Error::Config(m) => Failure::Input(m),
        other => Failure::Run(other.into()),
    })?;
    let summary = summarize(&outcomes);
    if json {
        let report = SendReport {
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
        println!(
            "{}",
            serde_json::to_string_pretty(&report).context("serializing the report")?
        );
        return Ok(report.summary.ok);
    }
    for o in &outcomes {
        if let (Some(r), true) = (&o.receiver, opts.reverse) {
            let width = opts.interval.as_secs_f64();
            for (i, b) in r.interval_bytes.iter().enumerate() {
                println!(
                    "[{:>2}]  {:>6.2}-{:<6.2} s {:>10} {:>14}   (received)",
                    o.id,
                    i as f64 * width,
                    (i + 1) as f64 * width,
                    human_bytes(*b),
                    mbps(*b as f64 * 8.0 / width)
                );
            }
        }
        match &o.error {
            None => {
                let r = o.receiver.as_ref();
                println!(
                    "[{:>2}]  total {:.2} s, {}, {}, receiver verified {} bytes",
                    o.id,
                    o.elapsed_secs,
                    human_bytes(o.bytes),
                    mbps(o.bytes as f64 * 8.0 / o.elapsed_secs.max(1e-9)),
                    r.map_or(0, |r| r.bytes)
                );
                if let (Some(target), Some(r)) = (opts.target, r) {
                    let met = r.slots.iter().filter(|s| s.met).count();
                    println!(
                        "[{:>2}]  target {target}: {met}/{} evaluation slots met{}",
                        o.id,
                        r.slots.len(),
                        r.success_ratio
                            .map_or(String::new(), |x| format!(" (success ratio {x:.2})"))
                    );
                }
            }
            Some(e) => println!("[{:>2}]  FAILED: {e}", o.id),
        }
    }
    if outcomes.len() > 1 {
        println!(
            "[SUM] {} in {:.2} s, {}{}",
            human_bytes(summary.bytes),
            summary.seconds,
            mbps(summary.goodput_bps),
            summary
                .success_ratio
                .map_or(String::new(), |x| format!(", success ratio {x:.2}"))
        );
    }
    Ok(summary.ok)
}

async fn send(addr: &str, opts: SendOpts, trust: TrustOpts) -> Result<bool, Failure> {
    let server = resolve(addr)?;
    let t = trust_from(&trust)?;
    run_send("send", server, &trust.server_name, &t, &opts).await
}

async fn loopback(opts: SendOpts) -> Result<bool, Failure> {
    let identity = Identity::self_signed(&["localhost"]).context("generating a certificate")?;
    let socket = udp::bind_server("127.0.0.1:0".parse().expect("a valid address"))
        .await
        .context("binding")?;
    let addr = socket.local_addr().context("reading the local address")?;
    let served = identity.clone();
    // The server's traces go beside the client's.
    let config = NodeConfig {
        qlog_dir: qlog_dir(opts.qlog.as_deref())?,
        ..NodeConfig::default()
    };
    let server =
        tokio::spawn(async move { udp::serve(&socket, &served, config, |_, _| ControlFlow::Continue(())).await });
    let ok = run_send(
        "loopback",
        addr,
        "localhost",
        &ServerTrust::Pinned(identity.fingerprint()),
        &opts,
    )
    .await;
    server.abort();
    ok
}

/// The qlog directory, created if missing.
fn qlog_dir(dir: Option<&std::path::Path>) -> Result<Option<PathBuf>, Failure> {
    let Some(dir) = dir else { return Ok(None) };
    std::fs::create_dir_all(dir)
        .map_err(|e| Failure::Input(format!("cannot create the qlog directory {}: {e}", dir.display())))?;
    Ok(Some(dir.to_path_buf()))
}

async fn serve(args: ServeArgs) -> Result<bool, Failure> {
    let identity = match (&args.cert, &args.key) {
        (Some(c), Some(k)) => Identity::from_pem_files(c, k).map_err(|e| Failure::Input(e.to_string()))?,
        _ => Identity::self_signed(&["localhost"]).context("generating a certificate")?,
    };
    let socket = udp::bind_server(args.listen)
        .await
        .map_err(|e| Failure::Input(e.to_string()))?;
    let local = socket.local_addr().context("reading the local address")?;
    println!("listening on {local}");
    println!("certificate SHA-256 {}", identity.fingerprint());
    println!("clients: tputctl send {local} --pin {}", identity.fingerprint());
    let _ = std::io::stdout().flush();
    let config = NodeConfig {
        max_connections: args.max_clients as usize,
        qlog_dir: qlog_dir(args.qlog.as_deref())?,
        ..NodeConfig::default()
    };
    let json = args.json;
    udp::serve(&socket, &identity, config, |_, ev| {
        if let NodeEvent::Finished(o) = ev {
            if json {
                if let Ok(line) = serde_json::to_string(&*o) {
                    println!("{line}");
                }
            } else {
                let what = if o.local_sender { "sent" } else { "received" };
                match &o.error {
                    None => println!(
                        "transfer {}: {what} {} in {:.2} s ({})",
                        o.id,
                        human_bytes(o.bytes),
                        o.elapsed_secs,
                        mbps(o.bytes as f64 * 8.0 / o.elapsed_secs.max(1e-9))
                    ),
                    Some(e) => println!("transfer {}: failed after {} {what}: {e}", o.id, human_bytes(o.bytes)),
                }
            }
            let _ = std::io::stdout().flush();
        }
        ControlFlow::Continue(())
    })
    .await
    .context("serving")?;
    Ok(true)
}

/// Parse a scenario file; the error is one line with the file, line and reason.
fn load_scenario(path: &Path) -> Result<Scenario, Failure> {
    let text =
        std::fs::read_to_string(path).map_err(|e| Failure::Input(format!("cannot read {}: {e}", path.display())))?;
    let scenario: Scenario = toml::from_str(&text).map_err(|e| {
        let line = e.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1));
        let msg = e.message().replace('\n', " ");
        match line {
            Some(l) => Failure::Input(format!("{}:{l}: {}", path.display(), msg.trim())),
            None => Failure::Input(format!("{}: {}", path.display(), msg.trim())),
        }
    })?;
    Ok(scenario)
}

fn sim(args: SimArgs) -> Result<bool, Failure> {
    let mut scenario = load_scenario(&args.scenario)?;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    scenario::validate(&scenario).map_err(|e| Failure::Input(format!("{}: {e}", args.scenario.display())))?;
    let show_progress = std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let result = scenario::run(&scenario, |frac| {
        if show_progress {
            let width = 30;
            let done = (frac.clamp(0.0, 1.0) * width as f64) as usize;
            eprint!(
                "\r[{}{}] {:>3.0}%",
                "#".repeat(done),
                ".".repeat(width - done),
                frac * 100.0
            );
            let _ = std::io::stderr().flush();
        }
    })
    .map_err(|e| Failure::Input(format!("{}: {e}", args.scenario.display())))?;
    if show_progress {
        eprintln!();
    }
    let wall = started.elapsed().as_secs_f64();
    let summary = sim_summary(&scenario, &result);
    if let Some(dir) = &args.out {
        write_outputs(dir, &scenario, &result, &summary).map_err(Failure::Run)?;
    }
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&summary).context("serializing the summary")?
        );
    } else {
        print_sim(&summary);
        println!(
            "{:.1} s simulated in {wall:.2} s ({:.1}x real time), {} link packets",
            scenario.duration.as_secs_f64(),
            scenario.duration.as_secs_f64() / wall.max(1e-9),
            result.link_packets
        );
        if let Some(dir) = &args.out {
            println!("results in {}", dir.display());
        }
    }
    Ok(result.flows.iter().all(|f| f.errors.is_empty()))
}

/// The deterministic summary of a simulated run (`--json`, `summary.json`).
#[derive(Serialize)]
struct SimSummary {
    name: Option<String>,
    seed: u64,
    duration_secs: f64,
    simulated_secs: f64,
    link_packets: u64,
    trace_hash: String,
    bottleneck: BottleneckSummary,
    flows: Vec<FlowSummary>,
    aggregates: Vec<AggregateSummary>,
}

#[derive(Serialize)]
struct AggregateSummary {
    group: usize,
    flows: u32,
    target_bps: f64,
    slots: usize,
    slots_met: usize,
    success_ratio: Option<f64>,
}

#[derive(Serialize)]
struct BottleneckSummary {
    utilisation: f64,
    delivered_packets: u64,
    dropped_queue: u64,
    dropped_cutoff: u64,
    dropped_random: u64,
}

#[derive(Serialize)]
struct FlowSummary {
    flow: u32,
    group: usize,
    cc: String,
    bytes: u64,
    goodput_bps: f64,
    slots: usize,
    slots_met: usize,
    success_ratio: Option<f64>,
    files: usize,
    mean_file_secs: Option<f64>,
    errors: Vec<String>,
}

fn sim_summary(s: &Scenario, r: &ScenarioResult) -> SimSummary {
    let secs = s.duration.as_secs_f64();
    SimSummary {
        name: s.name.clone(),
        seed: s.seed,
        duration_secs: secs,
        simulated_secs: r.simulated_secs,
        link_packets: r.link_packets,
        trace_hash: format!("{:016x}", r.trace_hash),
        bottleneck: BottleneckSummary {
            utilisation: r.bottleneck.utilisation,
            delivered_packets: r.bottleneck.delivered.packets,
            dropped_queue: r.bottleneck.dropped_queue.packets,
            dropped_cutoff: r.bottleneck.dropped_cutoff.packets,
            dropped_random: r.bottleneck.dropped_random.packets,
        },
        flows: r
            .flows
            .iter()
            .map(|f| FlowSummary {
                flow: f.flow,
                group: f.group,
                cc: f.cc.clone(),
                bytes: f.bytes,
                goodput_bps: f.bytes as f64 * 8.0 / secs,
                slots: f.slots.len(),
                slots_met: f.slots.iter().filter(|s| s.met).count(),
                success_ratio: f.success_ratio,
                files: f.file_times.len(),
                mean_file_secs: (!f.file_times.is_empty())
                    .then(|| f.file_times.iter().sum::<f64>() / f.file_times.len() as f64),
                errors: f.errors.clone(),
            })
            .collect(),
        aggregates: r
            .aggregates
            .iter()
            .map(|a| AggregateSummary {
                group: a.group,
                flows: a.flows,
                target_bps: a.target_bps,
                slots: a.slot_throughput_bps.len(),
                slots_met: a.slots_met,
                success_ratio: a.success_ratio,
            })
            .collect(),
    }
}

fn print_sim(s: &SimSummary) {
    println!(
        "{}: seed {}, bottleneck utilisation {:.3}, drops: queue {} cut-off {} random {}",
        s.name.as_deref().unwrap_or("scenario"),
        s.seed,
        s.bottleneck.utilisation,
        s.bottleneck.dropped_queue,
        s.bottleneck.dropped_cutoff,
        s.bottleneck.dropped_random
    );
    println!(
        "{:>5} {:<40} {:>14} {:>12} {:>16}",
        "flow", "controller", "goodput", "success", "files (mean s)"
    );
    for f in &s.flows {
        let success = f
            .success_ratio
            .map_or("-".to_string(), |x| format!("{:.2} ({}/{})", x, f.slots_met, f.slots));
        let files = f
            .mean_file_secs
            .map_or("-".to_string(), |m| format!("{} ({m:.3})", f.files));
        println!(
            "{:>5} {:<40} {:>14} {:>12} {:>16}",
            f.flow,
            f.cc,
            mbps(f.goodput_bps),
            success,
            files
        );
        for e in &f.errors {
            println!("      error: {e}");
        }
    }
    for a in &s.aggregates {
        let success = a
            .success_ratio
            .map_or("-".to_string(), |x| format!("{:.2} ({}/{})", x, a.slots_met, a.slots));
        println!(
            "group {} ({} flows, one aggregate): target {}, success {success}",
            a.group,
            a.flows,
            mbps(a.target_bps)
        );
    }
}

fn write_file(dir: &Path, name: &str, contents: &[u8]) -> anyhow::Result<()> {
    let path = dir.join(name);
    std::fs::write(&path, contents).with_context(|| format!("writing {}", path.display()))
}

fn write_outputs(dir: &Path, s: &Scenario, r: &ScenarioResult, summary: &SimSummary) -> anyhow::Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    write_file(dir, "summary.json", serde_json::to_string_pretty(summary)?.as_bytes())?;
    write_file(dir, "result.json", serde_json::to_string(r)?.as_bytes())?;

    let mut flows =
        String::from("flow,group,cc,bytes,goodput_bps,slots,slots_met,success_ratio,files,mean_file_secs\n");
    for f in &summary.flows {
        flows.push_str(&format!(
            "{},{},\"{}\",{},{},{},{},{},{},{}\n",
            f.flow,
            f.group,
            f.cc,
            f.bytes,
            f.goodput_bps,
            f.slots,
            f.slots_met,
            f.success_ratio.map_or(String::new(), |x| x.to_string()),
            f.files,
            f.mean_file_secs.map_or(String::new(), |x| x.to_string())
        ));
    }
    write_file(dir, "flows.csv", flows.as_bytes())?;

    let mut iv = String::from(
        "flow,start_secs,end_secs,bytes,goodput_bps,cwnd_bytes,srtt_ms,min_rtt_ms,lost_packets,k,slot_rtts\n",
    );
    for f in &r.flows {
        for i in &f.intervals {
            let (k, s) = match i.controller.map(|c| c.state) {
                Some(AlgorithmState::Guarantee { k, slot_rtts, .. }) => (k.to_string(), slot_rtts.to_string()),
                _ => (String::new(), String::new()),
            };
            iv.push_str(&format!(
                "{},{},{},{},{},{},{},{},{},{k},{s}\n",
                f.flow,
                i.start_secs,
                i.end_secs,
                i.bytes,
                i.goodput_bps,
                i.cwnd_bytes,
                i.srtt_ms,
                i.min_rtt_ms,
                i.lost_packets
            ));
        }
    }
    write_file(dir, "intervals.csv", iv.as_bytes())?;

    let mut slots = String::from("flow,index,start_secs,bytes,throughput_bps,met\n");
    for f in &r.flows {
        for sl in &f.slots {
            slots.push_str(&format!(
                "{},{},{},{},{},{}\n",
                f.flow, sl.index, sl.start_secs, sl.bytes, sl.throughput_bps, sl.met
            ));
        }
    }
    write_file(dir, "slots.csv", slots.as_bytes())?;

    let mut links = Vec::new();
    tput_netsim::to_csv(&r.links, &mut links)?;
    write_file(dir, "links.csv", &links)?;
    let mut q = Vec::new();
    tput_netsim::to_csv(&r.queue, &mut q)?;
    write_file(dir, "queue.csv", &q)?;
    let mut d = Vec::new();
    tput_netsim::to_csv(&r.delivered, &mut d)?;
    write_file(dir, "delivered.csv", &d)?;

    // Plots: at most 12 flows each, the first ones in flow order.
    let interval = s.interval.as_secs_f64();
    let mut tput = Vec::new();
    let mut cwnd = Vec::new();
    for f in r.flows.iter().take(12) {
        let mut pts: Vec<(f64, f64)> = r
            .delivered
            .iter()
            .filter(|x| x.flow == f.flow)
            .map(|x| (x.time_ns as f64 / 1e9, x.interval_bytes as f64 * 8.0 / interval / 1e6))
            .collect();
        pts.sort_by(|a, b| a.0.total_cmp(&b.0));
        tput.push(tput_netsim::plot::Series {
            name: format!("{} {}", f.flow, f.cc),
            points: pts,
        });
        cwnd.push(tput_netsim::plot::Series {
            name: format!("{} {}", f.flow, f.cc),
            points: f
                .intervals
                .iter()
                .map(|i| (i.end_secs, i.cwnd_bytes as f64 / 1e3))
                .collect(),
        });
    }
    write_file(
        dir,
        "throughput.svg",
        tput_netsim::plot::line_chart("Delivered throughput per flow", "time (s)", "Mbit/s", &tput).as_bytes(),
    )?;
    write_file(
        dir,
        "cwnd.svg",
        tput_netsim::plot::line_chart(
            "Congestion window per flow",
            "time since the flow began (s)",
            "kB",
            &cwnd,
        )
        .as_bytes(),
    )?;
    let queue = vec![tput_netsim::plot::Series {
        name: "bottleneck".into(),
        points: r
            .queue
            .iter()
            .map(|x| (x.time_ns as f64 / 1e9, x.packets as f64))
            .collect(),
    }];
    write_file(
        dir,
        "queue.svg",
        tput_netsim::plot::line_chart("Bottleneck queue", "time (s)", "packets", &queue).as_bytes(),
    )?;
    Ok(())
}
