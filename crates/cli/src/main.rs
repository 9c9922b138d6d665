//! `tputctl`: live QUIC transfers with a throughput target, simulated
//! scenarios and the controller registry, from the command line.
//!
//! Exit codes: 0 success; 1 a transfer or run failed; 2 bad input (an
//! argument, a scenario file, an address), always with one line naming it.
//! A closed stdout (`tputctl cc list | head -1`) ends a command quietly with
//! 0 (see [`output`]).
//!
//! One module per command, its clap arguments beside its body: `cc`,
//! `relay`, `send` (`send` and `loopback`), `serve`, `sim` and `sweep`.
//! `args` holds the value parsers the commands share, `output` the stdout
//! that a closed reader cannot turn into a panic.

mod args;
mod cc;
mod output;
mod relay;
mod send;
mod serve;
mod sim;
mod sweep;

use std::process::ExitCode;

use anyhow::Context;
use clap::{ArgAction, Parser, Subcommand};

use cc::CcCmd;
use relay::{RELAY_AFTER_HELP, RelayArgs};
use send::{ClientOpts, SendOpts, TrustOpts};
use serve::ServeArgs;
use sim::{SIM_AFTER_HELP, SimArgs};
use sweep::{SWEEP_AFTER_HELP, SweepCmd};

const AFTER_HELP: &str = "\
Units: rates as 100Mbit/s, 12.5MB/s, 1.5Gbit/s (k, M, G = 1000^n; bit/s or B/s),
or as iperf3 writes them, 100M (bit/s), wherever a rate is read (-b, --target,
relay and scenario links); durations as 250us, 5ms, 2s, 1.5min; sizes as
1000B, 64KiB, 5MB, 5Mbit. As in iperf3, bare numbers work too: -t 10
(seconds), -i 0.5 (seconds), -n 50M (bytes, K/M/G = 1024^n).
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

/// A failure and the exit code it deserves.
pub(crate) enum Failure {
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
        Cmd::Cc { cmd: CcCmd::List } => cc::run(),
        Cmd::Sim(args) => sim::run(args),
        Cmd::Serve(args) => runtime().and_then(|rt| rt.block_on(serve::run(args))),
        Cmd::Send {
            addr,
            opts,
            trust,
            client,
        } => runtime().and_then(|rt| rt.block_on(send::send(&addr, opts, trust, client))),
        Cmd::Loopback { opts } => send::loopback(opts),
        Cmd::Relay(args) => relay::run(args),
        Cmd::Sweep { cmd } => sweep::run(cmd),
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
        // Colour only for a terminal: a redirected file gets plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_target(true)
        .try_init();
}

pub(crate) fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("cannot start the async runtime")
        .map_err(Failure::Run)
}
