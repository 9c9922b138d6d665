//! The TCP model cross-checked against ns-2 2.35.
//!
//! Both sides run the seed-000 dumbbell (bottleneck 100 Mbit/s, 5 ms,
//! DropTail 30 packets; access links 1 Gbit/s, 2.5 ms, 1000 packets) with `N`
//! background flows and one tagged flow, all TCP Reno or NewReno with
//! 1000-byte segments and no delayed ACKs, starting uniformly in `[0, 1)` s:
//! ns-2's `Agent/TCP/Reno` or `Agent/TCP/Newreno` and `Agent/TCPSink`
//! (`benches/ns2/tcp_compare.tcl`), and the simulator's TCP model
//! ([`tput_lab::tcp`]) with `recovery = "reno"` or `"newreno"` and Limited
//! Transmit (RFC 3042, ns-2's `singledup_`), whose window is the `newreno`
//! controller's. Start instants are drawn by each
//! side's own generator from the seed, so the two agree in distribution, not
//! flow by flow.
//!
//! Compared per run ([`Metrics`]): the bottleneck's utilisation (bytes it
//! sent, headers included, over its capacity), Jain's fairness index of the
//! flows' delivered payload, the tagged flow's fraction of whole 1-s slots
//! (counted from its start) with at least 10 and 20 Mbit/s of payload, and
//! retransmission timeouts per flow per minute (ns-2's `nrexmit_`, the
//! model's [`tput_lab::tcp::TcpStats::timeouts`]).
//!
//! The model runs in two window settings ([`Windows`]): RFC 9002's NewReno
//! (initial window 10 segments, 2 after a timeout) and ns-2's
//! (`windowInit_` 2, 1 after a timeout: `newreno:iw=2,lw=1`).
//!
//! # Outcome (3 seeds, 120 s, every N)
//!
//! With ns-2's windows and Limited Transmit the model agrees with ns-2 2.35
//! on Jain's index (>= 0.998 on both sides), on the tagged flow's slot
//! fractions (within 0.01) and on timeouts (within a factor of 2 at every
//! N, Reno and NewReno; Reno at N = 30: 1.05 per flow per minute against
//! ns-2's 1.02). Utilisation agrees within 0.03 up to N = 30 but is
//! consistently lower than ns-2's, by 0.01 at N = 1 growing to 0.033 at
//! N = 40 (Reno 0.873 against 0.906; NewReno 0.876 against 0.909), so N = 40
//! misses the 0.03 bound.
//!
//! What was found on the way:
//!
//! - Limited Transmit (RFC 3042) is on in ns-2 2.35 (`singledup_` 1). Without
//!   it a window of fewer than 4 segments cannot reach three duplicate ACKs,
//!   so at N = 40 (about 7 segments per flow) the model timed out 1.82 times
//!   per flow per minute (NewReno) against ns-2's 0.46; with it, 0.61. The
//!   model now has it as `[flows.tcp] limited_transmit` (default off).
//! - ns-2's initial window of 2 and loss window of 1 (`newreno:iw=2,lw=1`)
//!   lower the timeouts further (Reno N = 30: 1.05 against 1.23 with RFC
//!   9002's 10 and 2), through the start: nearly all timeouts fall in the
//!   flows' first slow start, where 41 flows overflow the 30-packet queue
//!   together. Doubling the run to 240 s leaves the count per flow about the
//!   same (N = 40, Reno, seed 1: ns-2 3.4 and 3.4 per flow, the model 2.6
//!   and 3.1), so the per-minute rate measures the start-up more than the
//!   steady state.
//! - ns-2's DropTail refuses a packet when the queue already holds
//!   `queue-limit - 1` packets (`(q->length() + 1) >= qlim_`): 29 waiting
//!   plus one in transmission for `queue-limit 30`, one less than the
//!   simulator's 30 waiting. It is not the utilisation gap: the model's
//!   utilisation hardly moves with the limit (N = 40, Reno, 60 s: 0.872 with
//!   29, 0.872 with 30, 0.887 with 40) and its loss rate not at all (2.5%).
//! - ns-2 inflates the window on duplicate ACKs even when `bugFix_` keeps it
//!   from a fast retransmit; emulating that changed the model's utilisation
//!   by less than 0.002, so it is not the cause and is not modelled.
//! - Not explained: at N = 40 the model's aggregate goodput, per second,
//!   varies more than ns-2's (standard deviation 1.7 against 0.55 Mbit/s
//!   over a minute, seed 1, Reno) at a similar mean window (6.4 against 6.1
//!   segments for the tagged flow) and fewer drops (2.5% against 2.9% of
//!   bottleneck departures), with a longer mean RTT (about 24.7 against
//!   23 ms from goodput and window): the model's queue swings more between
//!   full and empty, as if its losses were more synchronised. The remaining
//!   utilisation gap is likely there; a per-packet trace of the bottleneck
//!   queue on both sides is the next step.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use tput_cc::{ControllerSpec, units::Rate};
use tput_lab::scenario::{
    DelayedAck, FlowGroup, FlowResult, LinkSpec, RunOptions, Scenario, TcpSpec, TopologySpec, run_with,
};
use tput_lab::tcp::Recovery;

/// Bottleneck rate, bits per second.
pub const BOTTLENECK_BPS: u64 = 100_000_000;
/// Segment payload, bytes.
pub const SEGMENT: u64 = 1000;

/// Initial and loss windows of the model's controller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Windows {
    /// RFC 9002's NewReno: initial window 10 segments, 2 after a timeout.
    Rfc9002,
    /// ns-2 2.35's `Agent/TCP`: `windowInit_` 2, 1 after a timeout.
    Ns2,
}

impl Windows {
    /// The controller spec.
    pub fn spec(self) -> ControllerSpec {
        let s = match self {
            Windows::Rfc9002 => "newreno",
            Windows::Ns2 => "newreno:iw=2,lw=1",
        };
        s.parse().expect("built-in spec")
    }

    /// Short name for tables.
    pub fn name(self) -> &'static str {
        match self {
            Windows::Rfc9002 => "iw10/lw2",
            Windows::Ns2 => "iw2/lw1",
        }
    }
}

/// One run: `n_background + 1` flows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Case {
    /// Background flows (the tagged flow comes on top).
    pub n_background: u32,
    /// Seed of the start instants.
    pub seed: u64,
    /// Reno or NewReno.
    pub recovery: Recovery,
    /// Simulated time.
    pub duration: Duration,
}

/// What a run measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// Bytes the bottleneck sent (headers included) over its capacity.
    pub utilisation: f64,
    /// Jain's index of the flows' delivered payload bytes.
    pub jain: f64,
    /// Fraction of the tagged flow's whole 1-s slots with >= 10 Mbit/s.
    pub tagged_10: f64,
    /// The same with >= 20 Mbit/s.
    pub tagged_20: f64,
    /// Retransmission timeouts per flow per minute.
    pub timeouts_per_flow_min: f64,
    /// Delivered payload bytes per flow, the tagged flow first.
    pub bytes: Vec<u64>,
    /// Timeouts per flow, the tagged flow first.
    pub timeouts: Vec<u64>,
}

fn jain(bytes: &[u64]) -> f64 {
    let sum: f64 = bytes.iter().map(|&b| b as f64).sum();
    let sq: f64 = bytes.iter().map(|&b| (b as f64) * (b as f64)).sum();
    if sq > 0.0 {
        sum * sum / (bytes.len() as f64 * sq)
    } else {
        0.0
    }
}

/// Fraction of `slots` (payload bytes per 1-s slot) with at least `mbps`.
fn fraction_at_least(slots: &[u64], mbps: f64) -> f64 {
    if slots.is_empty() {
        return 0.0;
    }
    let need = mbps * 1e6 / 8.0;
    slots.iter().filter(|&&b| b as f64 >= need).count() as f64 / slots.len() as f64
}

impl Metrics {
    fn new(bytes: Vec<u64>, timeouts: Vec<u64>, tagged_slots: &[u64], busy_bytes: f64, secs: f64) -> Self {
        let flows = bytes.len().max(1) as f64;
        Self {
            utilisation: busy_bytes * 8.0 / (BOTTLENECK_BPS as f64 * secs),
            jain: jain(&bytes),
            tagged_10: fraction_at_least(tagged_slots, 10.0),
            tagged_20: fraction_at_least(tagged_slots, 20.0),
            timeouts_per_flow_min: timeouts.iter().sum::<u64>() as f64 / flows / (secs / 60.0),
            bytes,
            timeouts,
        }
    }
}

/// The model's scenario for `case` with `windows`.
pub fn scenario(case: &Case, windows: Windows) -> Scenario {
    let tcp = TcpSpec {
        recovery: Some(case.recovery),
        segment: Some(SEGMENT),
        delayed_ack: Some(DelayedAck::Switch(false)),
        min_rto: Some(Duration::from_millis(200)),
        limited_transmit: Some(true),
        ..TcpSpec::default()
    };
    let flows = FlowGroup::new(windows.spec())
        .over_tcp(tcp)
        .times(case.n_background + 1)
        .with_start_jitter(Duration::from_secs(1));
    let link = |bps: u64, delay: Duration, queue: u32| {
        LinkSpec::new(Rate::from_bits_per_sec(bps), delay).with_queue_packets(queue)
    };
    let topology = TopologySpec::dumbbell(
        link(BOTTLENECK_BPS, Duration::from_millis(5), 30),
        link(1_000_000_000, Duration::from_micros(2500), 1000),
    );
    Scenario {
        name: Some("tcp-ns2".into()),
        seed: case.seed,
        interval: Duration::from_secs(1),
        ..Scenario::new(case.duration, topology, vec![flows])
    }
}

/// Payload bytes of the flow's whole 1-s intervals that end by `secs`.
fn whole_slots(f: &FlowResult, secs: f64) -> Vec<u64> {
    f.intervals
        .iter()
        .filter(|i| i.end_secs - i.start_secs > 0.999 && f.start_secs + i.end_secs <= secs + 1e-9)
        .map(|i| i.bytes)
        .collect()
}

/// Run the model.
pub fn run_model(case: &Case, windows: Windows) -> Result<Metrics, String> {
    let s = scenario(case, windows);
    // No controller traces: they would be most of the memory of a long run.
    let options = RunOptions {
        no_cc_trace: true,
        ..RunOptions::default()
    };
    let r = run_with(&s, &options, |_| {}).map_err(|e| e.to_string())?;
    let secs = case.duration.as_secs_f64();
    let bytes: Vec<u64> = r.flows.iter().map(|f| f.bytes).collect();
    let timeouts: Vec<u64> = r
        .flows
        .iter()
        .map(|f| f.tcp.as_ref().map_or(0, |t| t.timeouts))
        .collect();
    let tagged = whole_slots(&r.flows[0], secs);
    // Busy time at 100 Mbit/s in bytes; the drain after `duration` adds at
    // most a queue's worth.
    let busy_bytes = r.bottleneck.busy_ns as f64 / 1e9 * BOTTLENECK_BPS as f64 / 8.0;
    Ok(Metrics::new(bytes, timeouts, &tagged, busy_bytes, secs))
}

/// Whether ns-2 (`ns` on the `PATH`) is installed.
pub fn ns2_available() -> bool {
    Command::new("ns")
        .arg("-version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("2.35") || o.status.success())
}

/// Parse `tcp_compare.tcl`'s output.
pub fn parse_ns2(out: &str, n_flows: usize) -> Result<Metrics, String> {
    let mut bytes = vec![0u64; n_flows];
    let mut timeouts = vec![0u64; n_flows];
    let mut tagged = Vec::new();
    let mut bottleneck = None;
    for line in out.lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let num = |i: usize| -> Result<f64, String> {
            f.get(i)
                .and_then(|s| s.parse::<f64>().ok())
                .ok_or_else(|| format!("bad ns-2 line {line:?}"))
        };
        match f.first().copied() {
            Some("slot") if num(1)? == 0.0 => tagged.push(num(3)? as u64),
            Some("flow") => {
                let i = num(1)? as usize;
                if i >= n_flows {
                    return Err(format!("flow {i} of {n_flows}"));
                }
                bytes[i] = num(2)? as u64;
                timeouts[i] = num(3)? as u64;
            }
            Some("bottleneck") => bottleneck = Some((num(1)?, num(4)?)),
            _ => {}
        }
    }
    let (busy, secs) = bottleneck.ok_or("no bottleneck line in ns-2's output")?;
    Ok(Metrics::new(bytes, timeouts, &tagged, busy, secs))
}

/// Run ns-2 on `tcl` (`tcp_compare.tcl`) for `case`.
pub fn run_ns2(case: &Case, tcl: &Path) -> Result<Metrics, String> {
    let variant = match case.recovery {
        Recovery::Reno => "reno",
        Recovery::NewReno => "newreno",
        other => return Err(format!("no ns-2 counterpart wired up for {other}")),
    };
    let out = Command::new("ns")
        .arg(tcl)
        .arg(case.n_background.to_string())
        .arg(case.seed.to_string())
        .arg(variant)
        .arg(case.duration.as_secs_f64().to_string())
        .output()
        .map_err(|e| format!("running ns: {e}"))?;
    if !out.status.success() {
        return Err(format!("ns failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    parse_ns2(&String::from_utf8_lossy(&out.stdout), case.n_background as usize + 1)
}

/// Agreement the comparison aims for: utilisation within 0.03, Jain within
/// 0.02, slot fractions within 0.15, timeout rates within a factor of 2.
pub fn agrees(a: &Metrics, b: &Metrics) -> [bool; 4] {
    let ratio_ok = |x: f64, y: f64| {
        if x == 0.0 && y == 0.0 {
            true
        } else {
            x > 0.0 && y > 0.0 && (x / y).max(y / x) <= 2.0
        }
    };
    [
        (a.utilisation - b.utilisation).abs() <= 0.03,
        (a.jain - b.jain).abs() <= 0.02,
        (a.tagged_10 - b.tagged_10).abs() <= 0.15 && (a.tagged_20 - b.tagged_20).abs() <= 0.15,
        ratio_ok(a.timeouts_per_flow_min, b.timeouts_per_flow_min),
    ]
}

/// Mean of `f` over `ms`.
pub fn mean_of(ms: &[Metrics], f: impl Fn(&Metrics) -> f64) -> f64 {
    if ms.is_empty() {
        f64::NAN
    } else {
        ms.iter().map(f).sum::<f64>() / ms.len() as f64
    }
}

/// One row of the comparison table: the mean over seeds of each metric.
pub fn row(label: &str, ms: &[Metrics]) -> String {
    let mut t = String::new();
    let _ = write!(
        t,
        "{label:<26} {:>6.3} {:>6.3} {:>6.2} {:>6.2} {:>7.2}",
        mean_of(ms, |m| m.utilisation),
        mean_of(ms, |m| m.jain),
        mean_of(ms, |m| m.tagged_10),
        mean_of(ms, |m| m.tagged_20),
        mean_of(ms, |m| m.timeouts_per_flow_min),
    );
    t
}

/// The header matching [`row`].
pub fn header() -> String {
    format!(
        "{:<26} {:>6} {:>6} {:>6} {:>6} {:>7}",
        "", "util", "Jain", ">=10M", ">=20M", "TO/f/m"
    )
}

/// The mean over seeds of each metric, as one [`Metrics`] (bytes and timeouts empty).
pub fn means(ms: &[Metrics]) -> Metrics {
    Metrics {
        utilisation: mean_of(ms, |m| m.utilisation),
        jain: mean_of(ms, |m| m.jain),
        tagged_10: mean_of(ms, |m| m.tagged_10),
        tagged_20: mean_of(ms, |m| m.tagged_20),
        timeouts_per_flow_min: mean_of(ms, |m| m.timeouts_per_flow_min),
        bytes: Vec::new(),
        timeouts: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns2_output_parses() {
        let out = "start 0 0.5\nstart 1 0.2\nslot 0 1 1250000\nslot 0 2 2500000\nslot 1 1 100\n\
                   flow 0 3750000 1 5\nflow 1 3750000 3 9\nbottleneck 1250000000 1 2 100\n";
        let m = parse_ns2(out, 2).expect("parses");
        assert_eq!(m.bytes, vec![3_750_000, 3_750_000]);
        assert_eq!(m.timeouts, vec![1, 3]);
        assert!((m.utilisation - 1.0).abs() < 1e-12);
        assert!((m.jain - 1.0).abs() < 1e-12);
        assert_eq!((m.tagged_10, m.tagged_20), (1.0, 0.5));
        assert!((m.timeouts_per_flow_min - 4.0 / 2.0 / (100.0 / 60.0)).abs() < 1e-12);
        assert!(parse_ns2("flow 0 1 1 1\n", 1).is_err(), "no bottleneck line");
        assert!(parse_ns2("flow 3 1 1 1\nbottleneck 1 1 1 1\n", 1).is_err());
    }

    #[test]
    fn agreement_bounds() {
        let m = |u, j, t10, t20, to| Metrics {
            utilisation: u,
            jain: j,
            tagged_10: t10,
            tagged_20: t20,
            timeouts_per_flow_min: to,
            bytes: vec![],
            timeouts: vec![],
        };
        let a = m(0.95, 0.99, 0.5, 0.1, 2.0);
        assert_eq!(agrees(&a, &m(0.93, 0.975, 0.4, 0.2, 3.9)), [true; 4]);
        assert_eq!(agrees(&a, &m(0.91, 0.96, 0.7, 0.1, 4.1)), [false, false, false, false]);
        assert_eq!(jain(&[1, 1, 1, 1]), 1.0);
        assert_eq!(jain(&[1, 0, 0, 0]), 0.25);
    }
}
