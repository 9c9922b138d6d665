//! Simulator cost per flow: peak resident memory and CPU of one scenario
//! run with 1, 100, 1 000 and 10 000 flows, each in its own process, for QUIC
//! flows and for the TCP model.
//!
//! The network: a dumbbell whose bottleneck carries 1 Mbit/s per flow (100
//! Mbit/s for 100 flows, 10 Gbit/s for 10 000), 10 ms, with a queue of two
//! packets per flow (at least 100), and 10 Gbit/s, 1 ms access links; every
//! flow (NewReno) sends for the whole run (10 s; `TPUT_BENCH_SHORT=1`: 3 s,
//! and no 10 000-flow rows) and controller traces are off (`--no-cc-trace`:
//! they grow with run time, not with buffering). Each QUIC sender writes
//! about three congestion windows ahead of the network (the default); the
//! `credit` rows write up to the receiver's flow-control credit instead
//! (`tputctl sim --write-ahead-to-credit`, the behaviour before the limit),
//! for comparison at 1 and 100 flows.
//!
//! Peak memory is the child's `VmHWM` (Linux; elsewhere the bench says it
//! cannot measure). Per flow = (peak(N) - peak(1)) / (N - 1). CPU per packet
//! is the child's CPU time over the datagrams delivered (bytes / 1 200): flat
//! from 100 to 10 000 flows means no work grows with the number of flows.
//!
//! `failed` counts flows whose result has errors; each is listed under the
//! table with its error, when its first payload was delivered and, for TCP,
//! its retransmission timeouts. Every flow starts at once, so from 100 flows
//! on a few flows' first packets all meet a full bottleneck queue: a QUIC
//! client's Initial is lost again and again and its handshake waits out a
//! probe timeout that doubles each time (1, 2, 4 s: RFC 9002 §6.2.1,
//! §6.2.2.1), and a TCP sender that lost most of its first window is left
//! with a window too small for three duplicate ACKs and backs its
//! retransmission timer off (RFC 6298 §5.5) with no RTT sample to end the
//! backoff (Karn's rule, §3). Such a flow's transfer, which runs the whole
//! duration from its own start, cannot end within the 5 s the run goes on
//! after the scenario's end ("did not finish within the drain time"):
//! expected, not a fault of the simulator or the transports, and too few
//! flows to move the memory or CPU figures.
//!
//! `cargo bench -p tput-benches --bench sim_memory` (about ten minutes on two
//! cores, most of it the 10 000-flow QUIC run); figures also go to
//! `$CARGO_TARGET_DIR/repro/sim_memory.json`.

use std::fmt::Write as _;
use std::process::Command;
use std::time::{Duration, Instant};

use tput_lab::scenario::{
    FlowGroup, FlowResult, LinkSpec, RunOptions, Scenario, ScenarioResult, TcpSpec, TopologySpec, run_with,
};

/// Set in a child: "FLOWS MODE" (MODE is `window`, `credit` or `tcp`).
const CHILD: &str = "TPUT_SIM_MEMORY_CHILD";

fn scenario(flows: u32, secs: u64, tcp: bool) -> Scenario {
    let bottleneck = tput_cc::units::Rate::from_bits_per_sec(1_000_000 * u64::from(flows));
    let topology = TopologySpec::dumbbell(
        LinkSpec::new(bottleneck, Duration::from_millis(10)).with_queue_packets((2 * flows).max(100)),
        LinkSpec::new("10Gbit/s".parse().expect("rate"), Duration::from_millis(1)).with_queue_packets(1000),
    );
    let mut g = FlowGroup::new("newreno".parse().expect("spec")).times(flows);
    if tcp {
        g = g.over_tcp(TcpSpec::default());
    }
    Scenario {
        name: Some(format!("memory-{flows}")),
        ..Scenario::new(Duration::from_secs(secs), topology, vec![g])
    }
}

use tput_transport::usage::peak_rss_kib as peak_kib;

/// Failed flows listed per run at most.
const FAILED_LISTED: usize = 5;

/// One line on a failed flow: its errors, when its first payload was
/// delivered (the simulator's per-flow delivery samples), and a TCP
/// sender's timeouts.
fn why_failed(r: &ScenarioResult, f: &FlowResult) -> String {
    let first = r
        .delivered
        .iter()
        .find(|s| s.flow == f.flow && s.delivered_bytes > 0)
        .map_or_else(
            || "no payload delivered".to_string(),
            |s| format!("first payload delivered by {:.0} s", s.time_ns as f64 / 1e9),
        );
    let mut line = format!("flow {}: {}; {first}", f.flow, f.errors.join("; "));
    if let Some(t) = &f.tcp {
        let _ = write!(
            line,
            "; {} retransmission timeouts, RTO {:.0} s{}",
            t.timeouts,
            t.rto_secs,
            if t.srtt_secs > 0.0 { "" } else { ", no RTT sample" }
        );
    }
    line
}

/// The child: run one scenario, print "peak_kib cpu_secs delivered_bytes
/// failed_flows", then a line on each of the first [`FAILED_LISTED`] failed flows.
fn child(spec: &str, secs: u64) {
    let mut it = spec.split_whitespace();
    let flows: u32 = it.next().and_then(|n| n.parse().ok()).expect("flow count");
    let mode = it.next();
    let credit = mode == Some("credit");
    let tcp = mode == Some("tcp");
    let options = RunOptions {
        no_cc_trace: true,
        write_ahead_to_credit: credit,
        ..RunOptions::default()
    };
    let cpu0 = tput_benches::cpu_secs();
    let r = run_with(&scenario(flows, secs, tcp), &options, |_| {}).expect("scenario runs");
    let cpu = cpu0.zip(tput_benches::cpu_secs()).map_or(f64::NAN, |(a, b)| b - a);
    let bytes: u64 = r.flows.iter().map(|f| f.bytes).sum();
    let failed = r.flows.iter().filter(|f| !f.errors.is_empty()).count();
    let peak = peak_kib().map_or_else(|| "-".to_string(), |k| k.to_string());
    println!("{peak} {cpu} {bytes} {failed}");
    for f in r.flows.iter().filter(|f| !f.errors.is_empty()).take(FAILED_LISTED) {
        println!("{}", why_failed(&r, f));
    }
}

struct Row {
    flows: u32,
    mode: &'static str,
    peak_kib: Option<u64>,
    cpu: f64,
    wall: f64,
    delivered: u64,
    failed: usize,
    /// A line on each of the first failed flows.
    why: Vec<String>,
}

fn measure(flows: u32, mode: &'static str) -> Row {
    let exe = std::env::current_exe().expect("own path");
    let t0 = Instant::now();
    let out = Command::new(exe)
        .env(CHILD, format!("{flows} {mode}"))
        .output()
        .expect("run the child");
    let wall = t0.elapsed().as_secs_f64();
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let fields: Vec<&str> = lines.next().unwrap_or_default().split_whitespace().collect();
    if !out.status.success() || fields.len() != 4 {
        eprintln!(
            "{flows} flows ({mode}): the child failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        std::process::exit(1);
    }
    Row {
        flows,
        mode,
        peak_kib: fields[0].parse().ok(),
        cpu: fields[1].parse().unwrap_or(f64::NAN),
        wall,
        delivered: fields[2].parse().unwrap_or(0),
        failed: fields[3].parse().unwrap_or(0),
        why: lines.map(str::to_string).collect(),
    }
}

fn main() {
    let short = std::env::var_os("TPUT_BENCH_SHORT").is_some_and(|v| v == "1");
    let secs = if short { 3 } else { 10 };
    if let Ok(spec) = std::env::var(CHILD) {
        child(&spec, secs);
        return;
    }
    let mut plan = vec![(1, "window"), (100, "window"), (1000, "window")];
    if !short {
        plan.push((10_000, "window"));
    }
    plan.extend([(1, "credit"), (100, "credit"), (1, "tcp"), (100, "tcp"), (1000, "tcp")]);
    if !short {
        plan.push((10_000, "tcp"));
    }
    println!("{secs} s of a dumbbell with 1 Mbit/s of bottleneck per flow; peak RSS per process");
    println!("(`window`, `credit`: QUIC flows and how far ahead they write; `tcp`: the TCP model)");
    let mut table = tput_lab::report::Table::new()
        .right("flows", 6)
        .left("kind", 7)
        .right("peak MiB", 10)
        .right("MiB per flow", 13)
        .right("cpu s", 7)
        .right("wall s", 7)
        .right("MB recv", 9)
        .right("us/packet", 10)
        .right("failed", 6);
    let mut rows: Vec<Row> = Vec::new();
    let mut json = format!("{{\"short\":{short},\"secs\":{secs},\"runs\":[");
    for (i, &(flows, mode)) in plan.iter().enumerate() {
        let r = measure(flows, mode);
        let base = rows.iter().find(|b| b.mode == mode && b.flows == 1);
        let per_flow = match (base.and_then(|b| b.peak_kib), r.peak_kib) {
            (Some(b), Some(p)) if flows > 1 => Some((p as f64 - b as f64) / 1024.0 / f64::from(flows - 1)),
            _ => None,
        };
        let mib = |k: Option<u64>| k.map_or_else(|| "-".into(), |k| format!("{:.1}", k as f64 / 1024.0));
        let us_per_packet = r.cpu * 1e6 / (r.delivered as f64 / 1200.0).max(1.0);
        let cells = [
            r.flows.to_string(),
            r.mode.to_string(),
            mib(r.peak_kib),
            per_flow.map_or_else(|| "-".into(), |m| format!("{m:.3}")),
            format!("{:.2}", r.cpu),
            format!("{:.2}", r.wall),
            format!("{:.1}", r.delivered as f64 / 1e6),
            format!("{us_per_packet:.2}"),
            r.failed.to_string(),
        ];
        eprintln!("[{}/{}] {}", i + 1, plan.len(), cells.join(" "));
        table.row(cells);
        let _ = write!(
            json,
            "{}{{\"flows\":{},\"write_ahead\":\"{}\",\"peak_kib\":{},\"mib_per_flow\":{},\"cpu_secs\":{},\
             \"wall_secs\":{},\"delivered_bytes\":{},\"cpu_us_per_packet\":{},\"failed_flows\":{}}}",
            if i == 0 { "" } else { "," },
            r.flows,
            r.mode,
            r.peak_kib.map_or_else(|| "null".into(), |k| k.to_string()),
            per_flow.map_or_else(|| "null".into(), |m| format!("{m}")),
            if r.cpu.is_finite() { r.cpu } else { -1.0 },
            r.wall,
            r.delivered,
            us_per_packet,
            r.failed
        );
        rows.push(r);
    }
    json.push_str("]}\n");
    print!("{}", table.text());
    let failed: Vec<&Row> = rows.iter().filter(|r| r.failed > 0).collect();
    if !failed.is_empty() {
        println!("failed flows (\"did not finish within the drain time\": a {secs}-s transfer, timed from");
        println!("the flow's own start, still running 5 s after the scenario's end; expected when the");
        println!("flow's first packets were lost at the synchronised start, see this bench's source):");
        for r in failed {
            for why in &r.why {
                println!("  {} {}: {why}", r.flows, r.mode);
            }
            if r.failed > r.why.len() {
                println!("  {} {}: and {} more", r.flows, r.mode, r.failed - r.why.len());
            }
        }
    }
    let dir = tput_benches::repro_dir();
    let path = dir.join("sim_memory.json");
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, json)) {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => eprintln!("could not write {}: {e}", path.display()),
    }
}
