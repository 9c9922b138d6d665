//! HyStart++ (RFC 9406) beside plain slow start on a large-BDP, deep-buffer
//! path: one flow, 100 Mbit/s, 100 ms RTT, a DropTail queue of two
//! bandwidth-delay products, NewReno and CUBIC over QUIC and over the TCP
//! model (SACK recovery), with `hystart=false` and `hystart=true`.
//!
//! `cargo bench -p tput-benches --bench hystart`: 10 s per run (8 runs,
//! well under a minute); `TPUT_BENCH_SHORT=1`: 3 s per run. [`Hystart`] is
//! the reproduction ([`crate::repro`]): one plan point per run, keeping its
//! interval records; `--plan` and `--from DIR` as for the others.
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

use std::path::Path;
use std::time::Duration;

use tput_lab::plan::{Keep, PointResult};
use tput_lab::report::Table;
use tput_lab::scenario::{FlowResult, Scenario};

use crate::repro::{Built, Measurements, Planned, Reproduction, kept_result, write_files};

/// The controllers, each over QUIC and over the TCP model.
pub const CONTROLLERS: [&str; 4] = ["newreno", "newreno:hystart=true", "cubic", "cubic:hystart=true"];

/// One run: a controller over a transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Run {
    /// The controller spec.
    pub cc: &'static str,
    /// `quic` or `tcp`.
    pub transport: &'static str,
}

/// One run's figures.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// When the flow left standard slow start, seconds.
    pub exit_secs: Option<f64>,
    /// When it first lost a packet, seconds.
    pub first_loss_secs: Option<f64>,
    /// Packets lost in the run.
    pub lost: u64,
    /// The largest window, bytes.
    pub peak_cwnd_bytes: u64,
    /// When an interval's goodput first reached 90 % of the link, seconds.
    pub to_90pct_secs: Option<f64>,
    /// Mean goodput over the run, Mbit/s.
    pub goodput_mbps: f64,
}

/// The scenario of `run` for `duration`.
pub fn scenario(run: &Run, duration: Duration) -> Result<Scenario, String> {
    let (cc, transport) = (run.cc, run.transport);
    let queue = if transport == "tcp" { 2500 } else { 2083 };
    let extra = if transport == "tcp" {
        r#"tcp = { recovery = "sack" }"#
    } else {
        r#"receive_window = "4MiB""#
    };
    Scenario::from_toml_str(&format!(
        r#"
        duration = "{}ms"
        interval = "100ms"
        [topology]
        kind = "dumbbell"
        bottleneck = {{ rate = "100Mbit/s", delay = "48ms", queue_packets = {queue} }}
        access = {{ rate = "1Gbit/s", delay = "1ms", queue_packets = 10000 }}
        [[flows]]
        cc = "{cc}"
        transport = "{transport}"
        {extra}
        "#,
        duration.as_millis()
    ))
    .map_err(|e| format!("{cc} over {transport}: {e}"))
}

/// The figures of a flow's run of `duration`, from its 100-ms interval records.
pub fn row(flow: &FlowResult, duration: Duration) -> Row {
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
    Row {
        exit_secs,
        first_loss_secs: flow.intervals.iter().find(|i| i.lost_packets > 0).map(end),
        lost: flow.intervals.iter().map(|i| i.lost_packets).sum(),
        peak_cwnd_bytes: flow.intervals.iter().map(|i| i.cwnd_bytes).max().unwrap_or(0),
        to_90pct_secs: flow.intervals.iter().find(|i| i.goodput_bps >= 90e6).map(end),
        goodput_mbps: flow.bytes as f64 * 8.0 / duration.as_secs_f64() / 1e6,
    }
}

/// HyStart++ beside plain slow start as a reproduction.
#[derive(Debug, Clone)]
pub struct Hystart {
    /// Simulated time per run.
    pub duration: Duration,
}

impl Reproduction for Hystart {
    type Point = Run;
    type Measured = Row;

    fn name(&self) -> &'static str {
        "hystart"
    }

    fn points(&self) -> Result<Vec<Planned<Run>>, String> {
        let mut keep = Keep::result();
        keep.intervals = true;
        let mut out = Vec::new();
        for transport in ["quic", "tcp"] {
            for cc in CONTROLLERS {
                let run = Run { cc, transport };
                let s = scenario(&run, self.duration)?;
                let labels = [("cc", cc.to_string()), ("transport", transport.to_string())];
                out.push(Planned::new(run, labels, s, keep.clone()));
            }
        }
        Ok(out)
    }

    fn label(&self, r: &Run) -> String {
        format!("{} over {}", r.cc, r.transport)
    }

    fn measure(&self, _: &Run, r: &PointResult) -> Result<Row, String> {
        let flow = kept_result(r)?.flows.first().ok_or("no flow")?;
        if !flow.errors.is_empty() {
            return Err(flow.errors.join("; "));
        }
        Ok(row(flow, self.duration))
    }

    fn progress(&self, r: &Row) -> String {
        format!("{:.1} Mbit/s, {} lost", r.goodput_mbps, r.lost)
    }

    fn build(&self, out: &Path, measured: &Measurements<Run, Row>) -> Result<Built, String> {
        let secs_or = |x: Option<f64>| x.map_or("-".to_string(), |s| format!("{s:.1}"));
        let mut table = Table::new()
            .left("cc", 22)
            .left("over", 5)
            .right("exit s", 9)
            .right("1st loss s", 10)
            .right("lost", 7)
            .right("peak cwnd", 10)
            .right("90% s", 8)
            .right("Mbit/s", 9);
        for (run, r) in measured {
            let Ok(r) = r else { continue };
            table.row([
                run.cc.to_string(),
                run.transport.to_string(),
                secs_or(r.exit_secs),
                secs_or(r.first_loss_secs),
                r.lost.to_string(),
                format!("{:.2}MB", r.peak_cwnd_bytes as f64 / 1e6),
                secs_or(r.to_90pct_secs),
                format!("{:.1}", r.goodput_mbps),
            ]);
        }
        let text = format!(
            "one flow, 100 Mbit/s, 100 ms RTT, 2-BDP DropTail queue, {} s per run\n\n{}",
            self.duration.as_secs_f64(),
            table.text()
        );
        let files = write_files(out, &[("hystart.csv", table.csv())])?;
        Ok(Built {
            text,
            files,
            ..Built::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eight_runs_each_a_valid_scenario() {
        let h = Hystart {
            duration: Duration::from_secs(3),
        };
        let points = h.points().unwrap();
        assert_eq!(points.len(), 8);
        assert_eq!(h.label(&points[5].point), "newreno:hystart=true over tcp");
        assert_eq!(points[5].scenario.duration, Duration::from_secs(3));
    }
}
