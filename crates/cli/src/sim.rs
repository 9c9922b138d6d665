//! `tputctl sim`: a simulated scenario.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;

use clap::Args;
use tput_lab::report;
use tput_lab::scenario::{self, Scenario};

use crate::args::*;
use crate::{Failure, out, outln};

pub(crate) const SIM_AFTER_HELP: &str = "\
Writes into --out: summary.json, result.json, flows.csv, intervals.csv, slots.csv,
links.csv, queue.csv, delivered.csv, cc.csv, throughput.svg, cwnd.svg, k.svg, queue.svg.
Same file and seed, same output, bit for bit.
Exit codes: 0 every flow completed, 1 a flow failed or the run failed, 2 bad input.";

#[derive(Args)]
pub(crate) struct SimArgs {
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
    /// Keep no per-ACK controller traces (cc.csv stays empty): saves the
    /// few bytes a sample they are held in; every other result is the same.
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
    /// Also run the scenario with NewReno in the seat of its guarantee
    /// flows and print what they cost the others: goodput lost against what
    /// the target explains, drops, queueing delay, the worst 1-s and 2-s
    /// windows (RFC 9743 §3); with --out, also harm.json.
    #[arg(long)]
    harm: bool,
}

pub(crate) fn run(args: SimArgs) -> Result<bool, Failure> {
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
    let harm = if args.harm {
        Some(harm(&args, &scenario, &options, &result)?)
    } else {
        None
    };
    if args.json {
        outln!(
            "{}",
            report::to_json(&summary, true).map_err(|e| Failure::Run(e.into()))?
        );
    } else {
        out!("{}", summary.table());
        outln!(
            "{:.1} s simulated in {wall:.2} s ({:.1}x real time), {} link packets, {} events",
            scenario.duration.as_secs_f64(),
            scenario.duration.as_secs_f64() / wall.max(1e-9),
            result.link_packets,
            result.events_processed
        );
        if let Some(h) = &harm {
            out!("{}", h.table());
        }
        if let Some(dir) = &args.out {
            outln!("results in {}", dir.display());
        }
    }
    Ok(summary.ok())
}

/// `--harm`: run the baseline twin (NewReno in the guarantee flows' seat)
/// and compare; with `--out`, write `harm.json` there.
fn harm(
    args: &SimArgs,
    scenario: &Scenario,
    options: &scenario::RunOptions,
    result: &scenario::ScenarioResult,
) -> Result<tput_lab::harm::Harm, Failure> {
    use tput_lab::harm;
    let seat = harm::seat_groups(scenario);
    if seat.is_empty() {
        return Err(Failure::Input(format!(
            "{}: --harm: no flow group runs the guarantee controller, so there is no seat to compare",
            args.scenario.display()
        )));
    }
    let twin = harm::baseline_twin(scenario, &seat);
    let options = scenario::RunOptions {
        qlog_dir: None,
        ..options.clone()
    };
    let baseline = scenario::run_with(&twin, &options, |_| {})
        .map_err(|e| Failure::Run(anyhow::anyhow!("{}: the NewReno twin: {e}", args.scenario.display())))?;
    let h = harm::compare(scenario, result, &baseline, &seat).map_err(|e| Failure::Run(e.into()))?;
    if let Some(dir) = &args.out {
        let text = serde_json::to_string_pretty(&h).map_err(|e| Failure::Run(e.into()))?;
        let path = dir.join("harm.json");
        std::fs::write(&path, text + "\n")
            .map_err(|e| Failure::Run(anyhow::anyhow!("writing {}: {e}", path.display())))?;
    }
    Ok(h)
}
