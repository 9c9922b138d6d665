//! `tputctl`: live QUIC transfers with a throughput target, simulated
//! scenarios and the controller registry, from the command line.
//!
//! Exit codes: 0 success; 1 a transfer or run failed; 2 bad input (an
//! argument, a scenario file, an address), always with one line naming it.

use std::io::{IsTerminal, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::ops::ControlFlow;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;
use clap::{ArgAction, Args, Parser, Subcommand};
use tput_cc::units::{Rate, parse_duration, parse_size};
use tput_cc::{ControllerSpec, registry};
use tput_lab::relay::{self, RelayConfig, RelayLinks, RelayStats};
use tput_lab::scenario::{self, LinkSpec, Scenario};
use tput_lab::{live, report};
use tput_transport::{
    ClientAuth, Direction, EvalSlot, Fingerprint, Identity, NodeConfig, NodeEvent, ServerLimits, ServerTrust,
    TransferSpec, udp,
};

const AFTER_HELP: &str = "\
Units: rates as 100Mbit/s, 12.5MB/s, 1.5Gbit/s (k, M, G = 1000^n; bit/s or B/s);
durations as 250us, 5ms, 2s, 1.5min; sizes as 1000B, 64KiB, 5MB, 5Mbit.
As in iperf3, bare numbers work too: -t 10 (seconds), -i 0.5 (seconds),
-b 100M (bit/s, k/M/G = 1000^n), -n 50M (bytes, K/M/G = 1024^n).
Logging: -v (info), -vv (debug), -vvv (trace); RUST_LOG overrides, e.g. RUST_LOG=quinn_proto=debug.
SSLKEYLOGFILE=FILE writes the TLS secrets for Wireshark.
Controllers: see `tputctl cc list`.";

#[derive(Parser)]
#[command(
    name = "tputctl",
    version,
    about = "QUIC transfers with pluggable congestion control: live, with a throughput target, or simulated",
    after_help = AFTER_HELP
)]
struct Cli {
    /// More diagnostics on stderr: -v info, -vv debug, -vvv trace (RUST_LOG overrides).
    #[arg(short, long, action = ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Serve transfers to `tputctl send` clients (prints its address and certificate fingerprint).
    #[command(after_help = AFTER_HELP)]
    Serve(ServeArgs),
    /// Transfer to (or, with -R, from) a `tputctl serve` server, iperf3-style.
    #[command(after_help = AFTER_HELP)]
    Send {
        /// The server, `HOST[:PORT]` (port 4433 if omitted).
        addr: String,
        #[command(flatten)]
        opts: SendOpts,
        #[command(flatten)]
        trust: TrustOpts,
        #[command(flatten)]
        client: ClientOpts,
    },
    /// Server and client in one process on 127.0.0.1 (two threads): a live transfer with no set-up.
    #[command(after_help = AFTER_HELP)]
    Loopback {
        #[command(flatten)]
        opts: SendOpts,
    },
    /// Run a simulated scenario (TOML, see docs/scenarios.md) with real QUIC in virtual time.
    #[command(after_help = SIM_AFTER_HELP)]
    Sim(SimArgs),
    /// Relay UDP datagrams both ways through simulated links: a bad link for any UDP application.
    #[command(after_help = RELAY_AFTER_HELP)]
    Relay(RelayArgs),
    /// Sweeps as data: plan the points, run them anywhere (one, or all on K jobs), collect the results.
    #[command(after_help = SWEEP_AFTER_HELP)]
    Sweep {
        #[command(subcommand)]
        cmd: SweepCmd,
    },
    /// Congestion controllers.
    Cc {
        #[command(subcommand)]
        cmd: CcCmd,
    },
}

const SWEEP_AFTER_HELP: &str = "\
A plan is JSON lines, one self-contained point (scenario + seed) per line; a point's
result depends only on the point, never on the machine, the order or the job count.
  tputctl sweep plan S.toml --vary 'flows[1].count=1,2,5,10' --seeds 1..3 > points.jsonl
  tputctl sweep run points.jsonl --jobs 2 --out res                # all points here
  parallel tputctl sweep run points.jsonl --index {} --out res ::: $(seq 0 11)
  sbatch --array=0-11 --wrap 'tputctl sweep run points.jsonl --index $SLURM_ARRAY_TASK_ID --out res'
  tputctl sweep collect res                                        # res/sweep.csv, res/sweep.json
--vary PATH=V1,V2: PATH as flows[1].count, topology.bottleneck.rate, flows[0].cc; a comma
followed by name= continues the value before it (controller parameters):
  --vary 'flows[0].cc=guarantee:target=10Mbit/s,eval=1s,newreno' is two values.";

#[derive(Subcommand)]
enum SweepCmd {
    /// Write the points of a sweep over a scenario file, one JSON object per line, on stdout.
    Plan {
        /// The scenario file (TOML).
        scenario: PathBuf,
        /// A varied key and its values, PATH=V1,V2,... (repeatable; the first is outermost).
        #[arg(long, value_name = "PATH=V1,V2", value_parser = parse_vary)]
        vary: Vec<tput_lab::plan::Vary>,
        /// Seeds: A..B (inclusive) or A,B,C [default: the scenario's seed].
        #[arg(long, value_parser = parse_seed_list)]
        seeds: Option<SeedList>,
    },
    /// Run one point (--index) or all of them (--jobs) and write point-NNNNNN.json files into --out.
    Run {
        /// The plan (JSON lines from `sweep plan`).
        plan: PathBuf,
        /// Run only this point (0-based), as a job array or GNU parallel would.
        #[arg(long, conflicts_with = "jobs")]
        index: Option<usize>,
        /// Run every point on this many threads [default: the available cores].
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
        jobs: Option<u32>,
        /// Where the results go.
        #[arg(long)]
        out: PathBuf,
        /// Skip points whose result file already exists (resume an interrupted run).
        #[arg(long)]
        resume: bool,
    },
    /// Merge a directory's point results into sweep.csv and sweep.json (refuses mixed plans).
    Collect {
        /// The results directory.
        dir: PathBuf,
        /// Collect even if some points have no result yet.
        #[arg(long)]
        partial: bool,
    },
}

fn parse_vary(s: &str) -> Result<tput_lab::plan::Vary, String> {
    tput_lab::plan::Vary::parse(s).map_err(|e| e.to_string())
}

/// The seeds of `sweep plan --seeds`.
#[derive(Clone, Debug)]
struct SeedList(Vec<u64>);

fn parse_seed_list(s: &str) -> Result<SeedList, String> {
    tput_lab::plan::parse_seeds(s).map(SeedList).map_err(|e| e.to_string())
}

const SIM_AFTER_HELP: &str = "\
Writes into --out: summary.json, result.json, flows.csv, intervals.csv, slots.csv,
links.csv, queue.csv, delivered.csv, cc.csv, throughput.svg, cwnd.svg, k.svg, queue.svg.
Same file and seed, same output, bit for bit.
Exit codes: 0 every flow completed, 1 a flow failed or the run failed, 2 bad input.";

const RELAY_AFTER_HELP: &str = "\
A link is a comma-separated key=value list with the keys of a scenario's link table
(docs/scenarios.md):
  rate=RATE            link rate, e.g. 36.864Mbit/s, 1Gbit/s (k, M, G = 1000^n; bit/s or B/s)
  delay=DUR            one-way propagation delay, e.g. 50ms, 250us
  queue_packets=N      DropTail capacity in packets (default 1000), or
  queue_bytes=SIZE     DropTail capacity in wire bytes, e.g. 64KiB
  overhead_bytes=N     header bytes added to each datagram on the link (default 28: IPv4 + UDP)
  loss=P               random packet loss probability, 0..1, or
  ber=P                bit error rate, 0..1 (a packet of n wire bytes: 1 - (1 - ber)^(8n))
  cutoff.period=DUR, cutoff.connected=FRACTION, cutoff.mode=drop|hold|hold_abort|pause,
  cutoff.phase=DUR, cutoff.pause_lead=DUR
                       a periodic cut-off (pause: an IEEE 802.3x PAUSE before each cut)
  rate_schedule=AT:RATE;AT:RATE...
                       rate steps, times from the relay's start, e.g. 5s:10Mbit/s;10s:36.864Mbit/s
Example: tputctl relay --listen 127.0.0.1:4434 --to 127.0.0.1:4433 \\
           --forward \"rate=36.864Mbit/s,delay=50ms,queue_bytes=64KiB,ber=1e-8\"
--reverse defaults to --forward without its impairments (cut-off, rate schedule, loss).
--config FILE holds [forward] and [reverse] tables with the same keys (cutoff as a table,
rate_schedule as [{ at = \"5s\", rate = \"10Mbit/s\" }]).
Every --interval: delivered rate and counters per direction; at exit (Ctrl-C or --time):
totals, drops by cause (queue, cutoff, random, overload = the relay could not keep up),
the queue's high-water mark and how late departures left (p50, p99, max).
-v logs every cut-off and rate step.
Units: durations as 250us, 5ms, 2s (bare numbers: seconds); sizes as 1000B, 64KiB.";

#[derive(Args)]
struct RelayArgs {
    /// Address clients send to (the relay's own).
    #[arg(long, value_parser = parse_socket_addr)]
    listen: SocketAddr,
    /// Address of the server the datagrams go to.
    #[arg(long, value_parser = parse_socket_addr)]
    to: SocketAddr,
    /// The link from clients to the server, as key=value,... (see below).
    #[arg(long, value_name = "LINK", value_parser = parse_link, required_unless_present = "config", conflicts_with = "config")]
    forward: Option<LinkSpec>,
    /// The link from the server to clients [default: --forward without impairments].
    #[arg(long, value_name = "LINK", value_parser = parse_link, conflicts_with = "config")]
    reverse: Option<LinkSpec>,
    /// A TOML file with a `[forward]` and an optional `[reverse]` link table (instead of --forward/--reverse).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Seed of the links' random losses.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Statistics interval, e.g. 1s or 0.5; 0 for none.
    #[arg(short = 'i', long, default_value = "1s", value_parser = parse_secs)]
    interval: Duration,
    /// Stop after this long, e.g. 30s or 30 [default: until Ctrl-C].
    #[arg(short = 't', long, value_parser = parse_secs)]
    time: Option<Duration>,
    /// Emulate a NAT rebinding: every this long, move each client to a new
    /// upstream source port (the server sees the client's address change;
    /// QUIC migrates the connection, RFC 9000 §9.3), e.g. 2s [default: never].
    #[arg(long, value_name = "DURATION", value_parser = parse_secs)]
    rebind_every: Option<Duration>,
    /// One JSON document at exit instead of text.
    #[arg(short = 'J', long)]
    json: bool,
}

fn parse_link(s: &str) -> Result<LinkSpec, String> {
    relay::parse_link_list(s, "link").map_err(|e| e.to_string())
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
    /// One JSON object per finished transfer instead of a text line.
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
    /// Longest transfer a client may ask for; longer requests are refused (or clamped with --clamp).
    #[arg(long, default_value = "10min", value_parser = parse_secs)]
    max_time: Duration,
    /// Most bytes a client may ask for [default: no limit].
    #[arg(long, value_parser = parse_bytes)]
    max_bytes: Option<u64>,
    /// Fastest this server sends a download (a client must ask for a rate limit
    /// at or below it, or is refused; clamped with --clamp) [default: no limit].
    #[arg(long, value_parser = parse_bitrate)]
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
}

#[derive(Args, Clone)]
struct SendOpts {
    /// Send for this long, e.g. 10s or 10 [default: 10s unless --bytes].
    #[arg(short = 't', long, value_parser = parse_secs, conflicts_with = "bytes")]
    time: Option<Duration>,
    /// Send this many bytes, e.g. 100MB, 64KiB or 50M (iperf3: MiB).
    #[arg(short = 'n', long, value_parser = parse_bytes)]
    bytes: Option<u64>,
    /// Congestion controller spec of the sender (the server's, with -R).
    #[arg(long, default_value = "cubic", value_parser = parse_spec)]
    cc: ControllerSpec,
    /// Throughput target judged per evaluation slot at the receiver, e.g. 20Mbit/s.
    ///
    /// The receiver judges goodput (verified payload). A guarantee controller
    /// (`--cc guarantee:target=R`) pursues its own target on acknowledged QUIC
    /// bytes, headers included (about 2.7% more at 1200-byte datagrams).
    #[arg(long, value_parser = parse_rate)]
    target: Option<Rate>,
    /// Evaluation slot: a duration (1s) or a number of RTTs (32rtt).
    #[arg(long, default_value = "1s", value_parser = parse_eval_slot)]
    eval_slot: EvalSlot,
    /// Statistics interval, e.g. 1s or 0.5.
    #[arg(short = 'i', long, default_value = "1s", value_parser = parse_secs)]
    interval: Duration,
    /// Parallel connections.
    #[arg(short = 'P', long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=128))]
    parallel: u32,
    /// The server sends and the client receives.
    #[arg(short = 'R', long)]
    reverse: bool,
    /// Application rate limit of each sender, e.g. 50Mbit/s or 50M (the server, with -R).
    #[arg(short = 'b', long, value_parser = parse_bitrate)]
    rate_limit: Option<Rate>,
    /// Print one JSON document at the end (schema: docs/cli.md) instead of text.
    #[arg(short = 'J', long)]
    json: bool,
    /// Write a qlog trace (JSON-SEQ, for qvis) per connection into this directory.
    #[arg(long, value_name = "DIR")]
    qlog: Option<PathBuf>,
    /// Application buffers in flight (uploads): send the payload as buffers
    /// of --buffer-size bytes, one QUIC stream each, and open the next only
    /// when an earlier one is fully acknowledged (at most 64).
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
}

#[derive(Args, Clone)]
struct ClientOpts {
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
    #[arg(short = 'J', long)]
    json: bool,
    /// Write a qlog trace (virtual time) of every connection under DIR, one folder per flow.
    #[arg(long, value_name = "DIR")]
    qlog: Option<PathBuf>,
    /// Keep no per-ACK controller traces (cc.csv stays empty): saves most of
    /// a long many-flow run's memory; every other result is the same.
    #[arg(long)]
    no_cc_trace: bool,
    /// Encrypt simulated packets with AES-128-GCM as live connections do.
    /// By default the TLS handshake is real and packets then travel in the
    /// clear with identical sizes: the same results at less CPU.
    #[arg(long)]
    real_packet_protection: bool,
    /// Senders write payload up to the receiver's flow-control credit
    /// instead of a few congestion windows ahead of the network: the same
    /// packets except STREAM_DATA_BLOCKED/DATA_BLOCKED frames, and up to a
    /// receive window (1.25 MB by default) of memory per flow. For comparisons.
    #[arg(long)]
    write_ahead_to_credit: bool,
}

fn parse_rate(s: &str) -> Result<Rate, String> {
    s.parse::<Rate>().map_err(|e| e.to_string())
}
/// A rate, or iperf3's bare form: a number of bit/s with an optional k/K, M, G or T (1000^n).
fn parse_bitrate(s: &str) -> Result<Rate, String> {
    let t = s.trim();
    let (num, suffix) = match t.char_indices().last() {
        Some((i, c)) if "kKMGT".contains(c) => (&t[..i], Some(c)),
        _ => (t, None),
    };
    match num.parse::<f64>() {
        Ok(v) if v.is_finite() && v >= 0.0 => {
            let mult = match suffix {
                Some('k' | 'K') => 1e3,
                Some('M') => 1e6,
                Some('G') => 1e9,
                Some('T') => 1e12,
                _ => 1.0,
            };
            let bps = (v * mult).round();
            if bps > u64::MAX as f64 {
                return Err(format!("rate `{s}` is too large"));
            }
            Ok(Rate::from_bits_per_sec(bps as u64))
        }
        _ => parse_rate(s),
    }
}
/// A duration, or a bare number of seconds (iperf3's -t and -i).
fn parse_secs(s: &str) -> Result<Duration, String> {
    match s.trim().parse::<f64>() {
        Ok(v) => Duration::try_from_secs_f64(v)
            .map_err(|_| format!("duration `{s}` must be a non-negative number of seconds")),
        Err(_) => parse_duration(s).map_err(|e| e.to_string()),
    }
}
/// An idle timeout: a duration from 1 s to 1 h.
fn parse_idle_timeout(s: &str) -> Result<Duration, String> {
    let d = parse_secs(s)?;
    if !(Duration::from_secs(1)..=Duration::from_secs(3600)).contains(&d) {
        return Err(format!("idle timeout `{s}` must be from 1s to 1h"));
    }
    Ok(d)
}

/// A size, or iperf3's bare form: a number of bytes with an optional K, M, G or T (1024^n).
fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (num, shift) = match t.char_indices().last() {
        Some((i, c)) if "kKMGT".contains(c) => (&t[..i], 10 * (1 + "KMGT".find(c.to_ascii_uppercase()).unwrap_or(0))),
        _ => (t, 0),
    };
    let bytes = match num.parse::<u64>() {
        Ok(v) => v
            .checked_mul(1u64 << shift)
            .ok_or_else(|| format!("size `{s}` is too large"))?,
        Err(_) => parse_size(s).map_err(|e| e.to_string())?,
    };
    if bytes == 0 {
        return Err(format!("size `{s}` must be positive"));
    }
    Ok(bytes)
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
            let mut lines = text.lines();
            let mut first = lines
                .next()
                .unwrap_or("invalid arguments")
                .trim_start_matches("error: ")
                .to_string();
            // "the following required arguments were not provided:" lists
            // them on the next lines: keep them on the one line.
            if first.ends_with(':') {
                let names: Vec<&str> = lines.map(str::trim).take_while(|l| !l.is_empty()).collect();
                first = format!("{first} {}", names.join(", "));
            }
            eprintln!("tputctl: error: {first} (see --help)");
            return ExitCode::from(2);
        }
        Err(e) => {
            // --help and --version.
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
    };
    init_logging(cli.verbose);
    let result = match cli.cmd {
        Cmd::Cc { cmd: CcCmd::List } => cc_list(),
        Cmd::Sim(args) => sim(args),
        Cmd::Serve(args) => runtime().and_then(|rt| rt.block_on(serve(args))),
        Cmd::Send {
            addr,
            opts,
            trust,
            client,
        } => runtime().and_then(|rt| rt.block_on(send(&addr, opts, trust, client))),
        Cmd::Loopback { opts } => loopback(opts),
        Cmd::Relay(args) => relay_cmd(args),
        Cmd::Sweep { cmd } => sweep_cmd(cmd),
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

/// Diagnostics on stderr through `tracing`: warnings by default, more with
/// `-v`; `RUST_LOG` (e.g. `quinn_proto=debug`) overrides both.
fn init_logging(verbose: u8) {
    let level = match verbose {
        0 => "warn",
        1 => "info",
        2 => "debug",
        _ => "trace",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(level));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_target(true)
        .try_init();
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
            buffers: opts.buffers.map(|count| tput_transport::AppBuffers {
                count,
                size: opts.buffer_size.unwrap_or(512 << 10),
            }),
        })
        .collect()
}

/// `HOST[:PORT]` split into the address to connect to and the host name to
/// verify the certificate against (the host as typed, brackets removed).
fn resolve(addr: &str) -> Result<(SocketAddr, String), Failure> {
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

fn trust_from(t: &TrustOpts) -> Result<ServerTrust, Failure> {
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

async fn run_send(
    command: &str,
    server: SocketAddr,
    server_name: &str,
    trust: &ServerTrust,
    opts: &SendOpts,
    client_identity: Option<Identity>,
) -> Result<bool, Failure> {
    let specs = transfer_specs(opts);
    if !opts.json {
        println!(
            "{command}: {} connection(s) to {server}, controller {}",
            specs.len(),
            opts.cc
        );
        // With --reverse too: the server sends its interval records.
        println!("{}", live::interval_header(opts.target.is_some()));
    }
    let json = opts.json;
    let target_bps = opts.target.map(|t| t.bits_per_sec());
    let config = NodeConfig {
        qlog_dir: qlog_dir(opts.qlog.as_deref())?,
        client_identity,
        receive_window: opts.window,
        idle_timeout: opts.idle_timeout,
        ..NodeConfig::default()
    };
    let cpu_before = live::process_cpu_secs();
    let outcomes = udp::transfer(server, server_name, trust, config, specs, |id, s| {
        if !json {
            println!("{}", live::interval_line(id, s, target_bps));
        }
    })
    .await
    .map_err(|e| match e {
        tput_transport::Error::Config(m) => Failure::Input(m),
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
        println!(
            "{}",
            report::to_json(&report, true).map_err(|e| Failure::Run(e.into()))?
        );
        return Ok(report.summary.ok);
    }
    for o in &outcomes {
        print!("{}", live::outcome_lines(o));
    }
    print!("{}", summary.lines());
    Ok(summary.ok)
}

async fn send(addr: &str, opts: SendOpts, trust: TrustOpts, client: ClientOpts) -> Result<bool, Failure> {
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
fn loopback(opts: SendOpts) -> Result<bool, Failure> {
    let identity = Identity::self_signed(&["localhost"]).context("generating a certificate")?;
    let served = identity.clone();
    // The server's traces go beside the client's.
    let server_qlog = qlog_dir(opts.qlog.as_deref())?;
    let idle_timeout = opts.idle_timeout;
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
                let config = NodeConfig {
                    qlog_dir: server_qlog,
                    idle_timeout,
                    ..NodeConfig::default()
                };
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
    let listen = match args.port {
        Some(p) => SocketAddr::new(args.listen.ip(), p),
        None => args.listen,
    };
    let socket = udp::bind_server(listen)
        .await
        .map_err(|e| Failure::Input(e.to_string()))?;
    let local = socket.local_addr().context("reading the local address")?;
    println!("listening on {local}");
    println!("certificate SHA-256 {}", identity.fingerprint());
    println!("clients: tputctl send {local} --pin {}", identity.fingerprint());
    let _ = std::io::stdout().flush();
    let client_auth = if args.client_ca.is_none() && args.allow_client.is_empty() {
        if !listen.ip().is_loopback() {
            eprintln!(
                "tputctl: warning: serving on {listen} to any client: restrict it with --allow-client or --client-ca (docs/security.md)"
            );
        }
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
    let config = NodeConfig {
        client_auth,
        max_connections: args.max_clients as usize,
        qlog_dir: qlog_dir(args.qlog.as_deref())?,
        limits: ServerLimits {
            max_duration: (!args.max_time.is_zero()).then_some(args.max_time),
            max_bytes: args.max_bytes,
            max_rate_bps: args.max_rate.map(Rate::bits_per_sec),
            clamp: args.clamp,
            max_per_address: Some(args.max_per_address as usize),
            request_timeout: Some(args.request_timeout),
            retry: args.retry,
        },
        receive_window: args.window,
        idle_timeout: args.idle_timeout,
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
                        live::human_bytes(o.bytes),
                        o.elapsed_secs,
                        report::mbps(o.bytes as f64 * 8.0 / o.elapsed_secs.max(1e-9))
                    ),
                    Some(e) => println!(
                        "transfer {}: failed after {} {what}: {e}",
                        o.id,
                        live::human_bytes(o.bytes)
                    ),
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

fn sweep_cmd(cmd: SweepCmd) -> Result<bool, Failure> {
    use tput_lab::plan;
    let input = |e: tput_lab::Error| {
        if e.is_invalid() {
            Failure::Input(e.to_string())
        } else {
            Failure::Run(e.into())
        }
    };
    match cmd {
        SweepCmd::Plan { scenario, vary, seeds } => {
            let text = std::fs::read_to_string(&scenario)
                .map_err(|e| Failure::Input(format!("cannot read {}: {e}", scenario.display())))?;
            let points = plan::plan(&text, &vary, seeds.as_ref().map_or(&[][..], |s| &s.0[..]))
                .map_err(|e| Failure::Input(format!("{}: {e}", scenario.display())))?;
            let mut out = std::io::stdout().lock();
            for p in &points {
                let line = serde_json::to_string(p).map_err(|e| Failure::Run(e.into()))?;
                writeln!(out, "{line}").map_err(|e| Failure::Run(e.into()))?;
            }
            eprintln!(
                "{} point(s), plan {}",
                points.len(),
                points.first().map_or("-", |p| p.plan.as_str())
            );
            Ok(true)
        }
        SweepCmd::Run {
            plan: file,
            index,
            jobs,
            out,
            resume,
        } => {
            let points = plan::read_points(&file).map_err(input)?;
            let todo: Vec<&plan::Point> =
                match index {
                    Some(i) => vec![points.get(i).ok_or_else(|| {
                        Failure::Input(format!("--index {i}: the plan has {} point(s)", points.len()))
                    })?],
                    None => points.iter().collect(),
                };
            let todo: Vec<&plan::Point> = todo
                .into_iter()
                .filter(|p| !(resume && plan::result_path(&out, p.index).exists()))
                .collect();
            let jobs = jobs.map_or_else(tput_lab::sweep::default_jobs, |j| j as usize);
            let show = std::io::stderr().is_terminal() && todo.len() > 1;
            let started = std::time::Instant::now();
            let total = todo.len();
            let results = tput_lab::sweep::run_parallel(
                &todo,
                jobs,
                |p| p.run().and_then(|r| plan::write_result(&out, &r).map(|_| r)),
                |done, _, _| {
                    if show {
                        let el = started.elapsed().as_secs_f64();
                        let eta = el / done as f64 * (total - done) as f64;
                        eprint!("\r{done}/{total} points, {el:.0} s elapsed, ETA {eta:.0} s   ");
                        let _ = std::io::stderr().flush();
                    }
                },
            );
            if show {
                eprintln!();
            }
            let mut ok = true;
            for (p, r) in todo.iter().zip(results) {
                match r {
                    Ok(r) if r.summary.ok() => {}
                    Ok(r) => {
                        ok = false;
                        let errs: Vec<String> = r.summary.flows.iter().flat_map(|f| f.errors.clone()).collect();
                        eprintln!("tputctl: point {}: a flow failed: {}", p.index, errs.join("; "));
                    }
                    Err(e) => {
                        ok = false;
                        eprintln!("tputctl: point {}: {e}", p.index);
                    }
                }
            }
            Ok(ok)
        }
        SweepCmd::Collect { dir, partial } => {
            let c = plan::collect(&dir).map_err(input)?;
            if !c.missing.is_empty() && !partial {
                let shown: Vec<String> = c.missing.iter().take(10).map(usize::to_string).collect();
                return Err(Failure::Input(format!(
                    "{}: {} point(s) have no result (e.g. {}): run them, or pass --partial",
                    dir.display(),
                    c.missing.len(),
                    shown.join(", ")
                )));
            }
            let csv = c.csv().map_err(input)?;
            let json = report::to_json(&c.results, true).map_err(input)?;
            let files = report::write_files(&dir, &[("sweep.csv", csv), ("sweep.json", json)]).map_err(input)?;
            for f in files {
                println!("wrote {}", f.display());
            }
            println!("{} point(s), {} missing", c.results.len(), c.missing.len());
            Ok(true)
        }
    }
}

fn sim(args: SimArgs) -> Result<bool, Failure> {
    let mut scenario = Scenario::from_toml_file(&args.scenario).map_err(|e| Failure::Input(e.to_string()))?;
    if let Some(seed) = args.seed {
        scenario.seed = seed;
    }
    scenario::validate(&scenario).map_err(|e| Failure::Input(format!("{}: {e}", args.scenario.display())))?;
    let show_progress = std::io::stderr().is_terminal();
    let started = std::time::Instant::now();
    let options = scenario::RunOptions {
        qlog_dir: qlog_dir(args.qlog.as_deref())?,
        no_cc_trace: args.no_cc_trace,
        real_packet_protection: args.real_packet_protection,
        write_ahead_to_credit: args.write_ahead_to_credit,
        stall_probe: None,
    };
    let result = scenario::run_with(&scenario, &options, |frac| {
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
    });
    if show_progress {
        eprintln!();
    }
    let result = result.map_err(|e| {
        let msg = format!("{}: {e}", args.scenario.display());
        if e.is_invalid() {
            Failure::Input(msg)
        } else {
            Failure::Run(anyhow::anyhow!(msg))
        }
    })?;
    let wall = started.elapsed().as_secs_f64();
    let summary = report::Summary::new(&scenario, &result);
    if let Some(dir) = &args.out {
        report::write_outputs(dir, &scenario, &result, &summary).map_err(|e| Failure::Run(e.into()))?;
    }
    if args.json {
        println!(
            "{}",
            report::to_json(&summary, true).map_err(|e| Failure::Run(e.into()))?
        );
    } else {
        print!("{}", summary.table());
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
    Ok(summary.ok())
}

fn relay_cmd(args: RelayArgs) -> Result<bool, Failure> {
    let links = match (&args.config, &args.forward) {
        (Some(path), _) => RelayLinks::from_toml_file(path).map_err(|e| Failure::Input(e.to_string()))?,
        (None, Some(f)) => RelayLinks {
            forward: f.clone(),
            reverse: args.reverse.clone(),
        },
        (None, None) => return Err(Failure::Input("give --forward or --config".into())),
    };
    let (forward, reverse) = links.configs().map_err(|e| Failure::Input(e.to_string()))?;
    let rt = runtime()?;
    rt.block_on(async move {
        let relay = relay::Relay::bind(RelayConfig {
            listen: args.listen,
            to: args.to,
            forward,
            reverse,
            seed: args.seed,
        })
        .await
        .map_err(|e| match e {
            tput_lab::Error::Invalid(m) => Failure::Input(m),
            e => Failure::Run(e.into()),
        })?;
        let relay = relay.rebind_every(args.rebind_every.unwrap_or_default());
        let local = relay.local_addr().map_err(|e| Failure::Run(e.into()))?;
        if !args.json {
            println!("relaying {local} -> {} (Ctrl-C to stop)", args.to);
        }
        let time = args.time;
        let stop = async move {
            let ctrl_c = async {
                if tokio::signal::ctrl_c().await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            match time {
                Some(t) => tokio::select! {
                    _ = tokio::time::sleep(t) => {}
                    _ = ctrl_c => {}
                },
                None => ctrl_c.await,
            }
        };
        let json = args.json;
        let mut last = RelayStats::default();
        let stats = relay
            .run(stop, args.interval, |s| {
                if !json {
                    print_relay_interval(&last, s);
                }
                last = s.clone();
            })
            .await
            .map_err(|e| Failure::Run(e.into()))?;
        for (name, d) in [("forward", &stats.forward), ("reverse", &stats.reverse)] {
            if d.dropped_overload.packets > 0 {
                eprintln!(
                    "tputctl: warning: the relay could not keep up: {} {name} datagrams dropped by overload",
                    d.dropped_overload.packets
                );
            }
        }
        if json {
            let doc = serde_json::json!({
                "tputctl": env!("CARGO_PKG_VERSION"),
                "command": "relay",
                "listen": local.to_string(),
                "to": args.to.to_string(),
                "forward": links.forward,
                "reverse": links.reverse,
                "stats": stats,
            });
            println!("{doc}");
        } else {
            print_relay_summary(&stats);
        }
        Ok(true)
    })
}

/// One line per direction for the interval from `last` to `now`.
fn print_relay_interval(last: &RelayStats, now: &RelayStats) {
    let secs = (now.elapsed_secs - last.elapsed_secs).max(1e-9);
    let mut out = std::io::stdout().lock();
    for (name, a, b) in [
        ("fwd", &last.forward, &now.forward),
        ("rev", &last.reverse, &now.reverse),
    ] {
        let bits = (b.delivered.bytes - a.delivered.bytes) as f64 * 8.0;
        let _ = writeln!(
            out,
            "{:7.2}-{:<7.2} s {name} {:>9.3} Mbit/s {:>7} pkts  drops queue {} cutoff {} random {} overload {}  queue max {} pkts {} B",
            last.elapsed_secs,
            now.elapsed_secs,
            bits / secs / 1e6,
            b.delivered.packets - a.delivered.packets,
            b.dropped_queue.packets - a.dropped_queue.packets,
            b.dropped_cutoff.packets - a.dropped_cutoff.packets,
            b.dropped_random.packets - a.dropped_random.packets,
            b.dropped_overload.packets - a.dropped_overload.packets,
            b.queue_high_water.packets,
            b.queue_high_water.bytes,
        );
    }
}

fn print_relay_summary(s: &RelayStats) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(
        out,
        "relayed for {:.2} s, {} client address(es), {} rebinding(s)",
        s.elapsed_secs, s.clients, s.rebinds
    );
    for (name, d) in [("forward", &s.forward), ("reverse", &s.reverse)] {
        let _ = writeln!(
            out,
            "{name}: offered {} pkts {} B, delivered {} pkts {} B ({:.3} Mbit/s); drops queue {} cutoff {} random {} overload {}; queue max {} pkts {} B; late p50 {:.0} us p99 {:.0} us max {:.0} us",
            d.offered.packets,
            d.offered.bytes,
            d.delivered.packets,
            d.delivered.bytes,
            d.delivered.bytes as f64 * 8.0 / s.elapsed_secs.max(1e-9) / 1e6,
            d.dropped_queue.packets,
            d.dropped_cutoff.packets,
            d.dropped_random.packets,
            d.dropped_overload.packets,
            d.queue_high_water.packets,
            d.queue_high_water.bytes,
            d.late_p50_us,
            d.late_p99_us,
            d.late_max_us,
        );
    }
}
