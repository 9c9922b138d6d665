//! HyStart++ (RFC 9406) beside plain slow start on a large-BDP, deep-buffer
//! path: one flow, 100 Mbit/s, 100 ms RTT, a DropTail queue of two
//! bandwidth-delay products, NewReno and CUBIC over QUIC and over the TCP
//! model (SACK recovery), with `hystart=false` and `hystart=true`.
//!
//! `cargo bench -p tput-benches --bench hystart`: 10 s per run (8 runs,
//! well under a minute); `TPUT_BENCH_SHORT=1`: 3 s per run.
//!
//! Columns: when the flow left standard slow start (the end of the first
//! 100-ms interval whose record shows another phase or a finite ssthresh),
//! when it first lost a packet, packets lost in the run, the largest window,
//! when the delivered rate first reached 90 % of the link (an interval's
//! goodput), and the mean goodput over the run. QUIC flows get a 4 MiB
//! receive window (3.4 BDP): quinn-proto's default (about 1 BDP here) would
//! hide slow start's overshoot, and with much more, plain slow start's
//! losses leave quinn-proto 0.11's receiver more than its 1024 gaps in one
//! stream, which it treats as an error and closes the connection.

use std::time::Instant;

use tput_lab::scenario::{FlowResult, Scenario, run};

/// One run's figures.
struct Row {
    cc: String,
    transport: &'static str,
    exit_secs: Option<f64>,
    first_loss_secs: Option<f64>,
    lost: u64,
    peak_cwnd: u64,
    to_90pct_secs: Option<f64>,
    goodput_mbps: f64,
}

fn upload(cc: &str, transport: &'static str, secs: u64) -> Result<FlowResult, String> {
    let queue = if transport == "tcp" { 2500 } else { 2083 };
    let extra = if transport == "tcp" {
        r#"tcp = { recovery = "sack" }"#
    } else {
        r#"receive_window = "4MiB""#
    };
    let scenario = Scenario::from_toml_str(&format!(
        r#"
        duration = "{secs}s"
        interval = "100ms"
        [topology]
        kind = "dumbbell"
        bottleneck = {{ rate = "100Mbit/s", delay = "48ms", queue_packets = {queue} }}
        access = {{ rate = "1Gbit/s", delay = "1ms", queue_packets = 10000 }}
        [[flows]]
        cc = "{cc}"
        transport = "{transport}"
        {extra}
        "#
    ))
    .map_err(|e| format!("{cc} over {transport}: {e}"))?;
    let result = run(&scenario, |_| {}).map_err(|e| format!("{cc} over {transport}: {e}"))?;
    let flow = result.flows.into_iter().next().ok_or("no flow")?;
    if !flow.errors.is_empty() {
        return Err(format!("{cc} over {transport}: {:?}", flow.errors));
    }
    Ok(flow)
}

fn row(cc: &str, transport: &'static str, secs: u64) -> Result<Row, String> {
    let flow = upload(cc, transport, secs)?;
    let end = |i: &tput_transport::IntervalStats| i.end_secs;
    let exit_secs = flow
        .intervals
        .iter()
        .find(|i| {
            i.controller
                .as_ref()
                .is_some_and(|s| s.phase != tput_cc::Phase::SlowStart || s.ssthresh_bytes.is_some())
        })
        .map(end);
    Ok(Row {
        cc: cc.to_string(),
        transport,
        exit_secs,
        first_loss_secs: flow.intervals.iter().find(|i| i.lost_packets > 0).map(end),
        lost: flow.intervals.iter().map(|i| i.lost_packets).sum(),
        peak_cwnd: flow.intervals.iter().map(|i| i.cwnd_bytes).max().unwrap_or(0),
        to_90pct_secs: flow.intervals.iter().find(|i| i.goodput_bps >= 90e6).map(end),
        goodput_mbps: flow.bytes as f64 * 8.0 / secs as f64 / 1e6,
    })
}

fn main() {
    let short = std::env::var_os("TPUT_BENCH_SHORT").is_some_and(|v| v == "1");
    let secs = if short { 3 } else { 10 };
    let started = Instant::now();
    let mut rows = Vec::new();
    for transport in ["quic", "tcp"] {
        for cc in ["newreno", "newreno:hystart=true", "cubic", "cubic:hystart=true"] {
            match row(cc, transport, secs) {
                Ok(r) => rows.push(r),
                Err(e) => {
                    eprintln!("hystart: {e}");
                    std::process::exit(1);
                }
            }
        }
    }
    println!(
        "one flow, 100 Mbit/s, 100 ms RTT, 2-BDP DropTail queue, {secs} s per run ({:.1} s wall)\n",
        started.elapsed().as_secs_f64()
    );
    let secs_or = |x: Option<f64>| x.map_or("-".to_string(), |s| format!("{s:.1}"));
    let mut table = tput_lab::report::Table::new()
        .left("cc", 22)
        .left("over", 5)
        .right("exit s", 9)
        .right("1st loss s", 10)
        .right("lost", 7)
        .right("peak cwnd", 10)
        .right("90% s", 8)
        .right("Mbit/s", 9);
    for r in &rows {
        table.row([
            r.cc.to_string(),
            r.transport.to_string(),
            secs_or(r.exit_secs),
            secs_or(r.first_loss_secs),
            r.lost.to_string(),
            format!("{:.2}MB", r.peak_cwnd as f64 / 1e6),
            secs_or(r.to_90pct_secs),
            format!("{:.1}", r.goodput_mbps),
        ]);
    }
    print!("{}", table.text());
}
