//! BBR cross-check: this project's BBRv3 (`bbr`, draft-ietf-ccwg-bbr-06)
//! against quinn-proto 0.11's own BBR (`quinn-bbr`, a BBRv1) in the same
//! simulator, with real QUIC (`cargo bench -p tput-benches --bench bbr_compare`).
//!
//! The path: a dumbbell with a 100 Mbit/s bottleneck and a 50 ms RTT (20 ms
//! each way on the bottleneck, 2.5 ms on each 1 Gbit/s access link), its
//! DropTail buffer 1 BDP (509 packets of 1228 wire bytes) or 0.1 BDP (51).
//! On each: 1, 2 and 10 flows of one BBR, and one BBR flow sharing with one
//! CUBIC and with one NewReno flow (ours; quinn-proto's differ only in
//! constants). Our BBR is paced at its own pacing rate by the node; quinn's
//! controllers run under quinn-proto's pacer alone, as in quinn.
//!
//! Per case ([`Row`]): bottleneck utilisation over the scenario's duration;
//! the bottleneck's queueing delay, p50 and p99 of the queue sampled every
//! [`SAMPLE`] (the delay a packet arriving then waits: queued wire bytes /
//! rate); the loss rate at the bottleneck (drops / packets offered); Jain's
//! fairness index over the flows' goodputs; the first group's share of the
//! goodput (in the mixed cases: BBR's); and the share of time our BBR
//! flows spend in ProbeRTT (from their controller traces; quinn-proto's BBR
//! does not tell its state).

use std::fmt::Write as _;
use std::time::Duration;

use tput_cc::BbrMode;
use tput_lab::scenario::{FlowGroup, LinkSpec, Scenario, ScenarioResult, TopologySpec, run};

/// The bottleneck's rate, bits per second.
pub const RATE_BPS: u64 = 100_000_000;
/// The round-trip propagation delay.
pub const RTT: Duration = Duration::from_millis(50);
/// Wire bytes of a full packet: 1200 bytes of UDP payload plus the
/// simulator's 28 bytes of IPv4 and UDP headers.
pub const WIRE_PACKET: u64 = 1228;
/// Queue sampling interval (the scenario's `interval`).
pub const SAMPLE: Duration = Duration::from_millis(10);

/// The bandwidth-delay product in full packets (509).
pub fn bdp_packets() -> u32 {
    (RATE_BPS as f64 * RTT.as_secs_f64() / 8.0 / WIRE_PACKET as f64).round() as u32
}

/// Who sends: a controller spec of ours, or quinn-proto's implementation of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Contender {
    /// The controller spec (`bbr`, `cubic`, `newreno`).
    pub cc: &'static str,
    /// quinn-proto's own implementation of `cc` instead of ours.
    pub quinn: bool,
    /// quinn-proto's BBR paced by the node at the rate it computes
    /// (`quinn-bbr-paced`), instead of by quinn-proto's pacer alone.
    pub paced: bool,
}

impl Contender {
    /// Ours.
    pub const fn ours(cc: &'static str) -> Self {
        Self {
            cc,
            quinn: false,
            paced: false,
        }
    }
    /// quinn-proto's.
    pub const fn quinn(cc: &'static str) -> Self {
        Self {
            cc,
            quinn: true,
            paced: false,
        }
    }
    /// quinn-proto's BBR, paced by the node at its own pacing rate.
    pub const fn quinn_paced() -> Self {
        Self {
            cc: "bbr",
            quinn: true,
            paced: true,
        }
    }
    /// `bbr`, `quinn-bbr` or `quinn-bbr-paced`.
    pub fn label(&self) -> String {
        if self.paced {
            format!("quinn-{}-paced", self.cc)
        } else if self.quinn {
            format!("quinn-{}", self.cc)
        } else {
            self.cc.to_string()
        }
    }
}

/// One point: a buffer size and the flows.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Bottleneck buffer in BDPs (1.0 or 0.1).
    pub buffer_bdp: f64,
    /// The flow groups: who, how many.
    pub groups: Vec<(Contender, u32)>,
}

impl Case {
    /// E.g. `1.0 BDP  10 x bbr` or `0.1 BDP  bbr + cubic`.
    pub fn name(&self) -> String {
        let flows: Vec<String> = self
            .groups
            .iter()
            .map(|(c, n)| {
                if *n == 1 {
                    c.label()
                } else {
                    format!("{n} x {}", c.label())
                }
            })
            .collect();
        format!("{:.1} BDP  {}", self.buffer_bdp, flows.join(" + "))
    }

    /// Bottleneck buffer, packets (at least 2).
    pub fn buffer_packets(&self) -> u32 {
        ((f64::from(bdp_packets()) * self.buffer_bdp).round() as u32).max(2)
    }

    /// The scenario: this case for `duration`.
    pub fn scenario(&self, duration: Duration) -> Scenario {
        let one_way = RTT / 2;
        let access_delay = Duration::from_micros(2500);
        let bottleneck = LinkSpec::new(
            tput_cc::units::Rate::from_bits_per_sec(RATE_BPS),
            one_way - 2 * access_delay,
        )
        .with_queue_packets(self.buffer_packets());
        let access = LinkSpec::new(tput_cc::units::Rate::from_bits_per_sec(1_000_000_000), access_delay)
            .with_queue_packets(10_000);
        let flows = self
            .groups
            .iter()
            .map(|(c, n)| {
                let g = FlowGroup::new(c.cc.parse().expect("a valid controller spec")).times(*n);
                match (c.quinn, c.paced) {
                    (_, true) => g.quinn_paced(),
                    (true, false) => g.quinn(),
                    (false, false) => g,
                }
            })
            .collect();
        Scenario {
            name: Some(self.name()),
            seed: 1,
            interval: SAMPLE,
            ..Scenario::new(duration, TopologySpec::dumbbell(bottleneck, access), flows)
        }
    }
}

/// Every case, in table order: for each buffer, 1, 2 and 10 flows of our
/// BBR, of quinn's and of quinn's paced at its own rate, then each BBR
/// beside one CUBIC and one NewReno flow.
pub fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let all = [
        Contender::ours("bbr"),
        Contender::quinn("bbr"),
        Contender::quinn_paced(),
    ];
    for buffer_bdp in [1.0, 0.1] {
        for bbr in all {
            for n in [1, 2, 10] {
                out.push(Case {
                    buffer_bdp,
                    groups: vec![(bbr, n)],
                });
            }
        }
        for bbr in all {
            for other in ["cubic", "newreno"] {
                out.push(Case {
                    buffer_bdp,
                    groups: vec![(bbr, 1), (Contender::ours(other), 1)],
                });
            }
        }
    }
    out
}

/// What one case measured.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    /// [`Case::name`].
    pub case: String,
    /// Bottleneck busy time over the scenario's duration.
    pub utilisation: f64,
    /// Median queueing delay at the bottleneck, milliseconds.
    pub qdelay_p50_ms: f64,
    /// 99th percentile queueing delay at the bottleneck, milliseconds.
    pub qdelay_p99_ms: f64,
    /// Packets dropped at the bottleneck over packets offered to it.
    pub loss_rate: f64,
    /// Jain's fairness index over the flows' goodputs: `(sum x)^2 / (n sum x^2)`.
    pub jain: f64,
    /// The first group's share of the total goodput.
    pub first_share: f64,
    /// Share of their time our BBR flows spent in ProbeRTT (mean over them);
    /// `None` without one of our BBR flows.
    pub probe_rtt_share: Option<f64>,
    /// Goodput of all flows together, Mbit/s.
    pub goodput_mbps: f64,
}

/// The `q`-quantile (nearest rank) of `sorted`, 0 if empty.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return 0.0;
    }
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len());
    sorted[rank - 1]
}

/// Jain's fairness index of `x` (Jain, Chiu, Hawe 1984, eq. 1); 1 when
/// all are equal, `1/n` when one takes everything; 0 for no input or all zero.
pub fn jain(x: &[f64]) -> f64 {
    let sum: f64 = x.iter().sum();
    let squares: f64 = x.iter().map(|v| v * v).sum();
    if x.is_empty() || squares == 0.0 {
        0.0
    } else {
        sum * sum / (x.len() as f64 * squares)
    }
}

/// Share of the time from a trace's first sample to `end_secs` spent in
/// ProbeRTT; `None` for a trace without BBR states.
fn probe_rtt_share(trace: &[tput_lab::host::CcSample], end_secs: f64) -> Option<f64> {
    let first = trace.iter().position(|s| s.bbr_mode.is_some())?;
    let trace = &trace[first..];
    let start = trace[0].time_secs;
    if end_secs <= start {
        return None;
    }
    let mut in_probe_rtt = 0.0;
    for (i, s) in trace.iter().enumerate() {
        let until = trace.get(i + 1).map_or(end_secs, |n| n.time_secs).min(end_secs);
        if s.bbr_mode == Some(BbrMode::ProbeRtt) && until > s.time_secs {
            in_probe_rtt += until - s.time_secs;
        }
    }
    Some(in_probe_rtt / (end_secs - start))
}

/// The row of `case` from its result `r`.
pub fn measure(case: &Case, r: &ScenarioResult) -> Row {
    let end = r.window.end_secs;
    let end_ns = (end * 1e9) as u64;
    let mut delays: Vec<f64> = r
        .queue
        .iter()
        .filter(|q| q.time_ns <= end_ns)
        .map(|q| q.bytes as f64 * 8.0 / RATE_BPS as f64 * 1e3)
        .collect();
    delays.sort_by(f64::total_cmp);
    let b = &r.window.bottleneck;
    let offered = b.offered.packets;
    let loss_rate = if offered == 0 {
        0.0
    } else {
        b.dropped().packets as f64 / offered as f64
    };
    let goodputs: Vec<f64> = r.flows.iter().map(|f| f.goodput_bps()).collect();
    let total: f64 = goodputs.iter().sum();
    let first: f64 = r.flows.iter().filter(|f| f.group == 0).map(|f| f.goodput_bps()).sum();
    let shares: Vec<f64> = r
        .flows
        .iter()
        .filter(|f| {
            let (c, _) = case.groups[f.group];
            c.cc == "bbr" && !c.quinn
        })
        .filter_map(|f| probe_rtt_share(&f.cc_trace, end))
        .collect();
    Row {
        case: case.name(),
        utilisation: b.utilisation,
        qdelay_p50_ms: quantile(&delays, 0.5),
        qdelay_p99_ms: quantile(&delays, 0.99),
        loss_rate,
        jain: jain(&goodputs),
        first_share: if total > 0.0 { first / total } else { 0.0 },
        probe_rtt_share: (!shares.is_empty()).then(|| shares.iter().sum::<f64>() / shares.len() as f64),
        goodput_mbps: total / 1e6,
    }
}

/// Run `case` for `duration` of simulated time; an error names the case
/// and what failed.
pub fn run_case(case: &Case, duration: Duration) -> Result<Row, String> {
    let r = run(&case.scenario(duration), |_| {}).map_err(|e| format!("{}: {e}", case.name()))?;
    if let Some(f) = r.flows.iter().find(|f| !f.errors.is_empty()) {
        return Err(format!(
            "{}: flow {} failed: {}",
            case.name(),
            f.flow,
            f.errors.join("; ")
        ));
    }
    Ok(measure(case, &r))
}

/// The table header and one line per row.
pub fn table(rows: &[Row]) -> String {
    let mut out = format!(
        "{:<34} {:>6} {:>8} {:>8} {:>8} {:>8} {:>6} {:>7} {:>8} {:>9}\n",
        "case", "util", "goodput", "qd p50", "qd p99", "loss", "jain", "share1", "ProbeRTT", ""
    );
    let _ = writeln!(
        out,
        "{:<34} {:>6} {:>8} {:>8} {:>8} {:>8} {:>6} {:>7} {:>8}",
        "", "", "Mbit/s", "ms", "ms", "%", "", "", "% time"
    );
    for r in rows {
        let probe_rtt = r
            .probe_rtt_share
            .map_or_else(|| "-".to_string(), |s| format!("{:.1}", s * 100.0));
        let _ = writeln!(
            out,
            "{:<34} {:>6.3} {:>8.1} {:>8.1} {:>8.1} {:>8.3} {:>6.3} {:>7.3} {:>8}",
            r.case,
            r.utilisation,
            r.goodput_mbps,
            r.qdelay_p50_ms,
            r.qdelay_p99_ms,
            r.loss_rate * 100.0,
            r.jain,
            r.first_share,
            probe_rtt
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jain_is_one_for_equal_shares_and_one_over_n_for_a_monopoly() {
        assert!((jain(&[5.0, 5.0, 5.0]) - 1.0).abs() < 1e-12);
        assert!((jain(&[9.0, 0.0, 0.0]) - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(jain(&[]), 0.0);
    }

    #[test]
    fn the_path_s_bdp_is_509_packets() {
        assert_eq!(bdp_packets(), 509);
        let c = &cases()[0];
        assert_eq!(c.buffer_packets(), 509);
        // Per buffer: 1, 2 and 10 flows of three BBRs, then each beside CUBIC and NewReno.
        assert_eq!(cases().len(), 2 * (9 + 6));
        assert_eq!(cases()[8].name(), "1.0 BDP  10 x quinn-bbr-paced");
        assert_eq!(cases()[9].name(), "1.0 BDP  bbr + cubic");
    }

    #[test]
    fn probe_rtt_share_counts_the_time_in_probe_rtt() {
        let at = |t: f64, mode| tput_lab::host::CcSample {
            time_secs: t,
            bbr_mode: Some(mode),
            ..Default::default()
        };
        let trace = [
            at(1.0, BbrMode::ProbeBwCruise),
            at(3.0, BbrMode::ProbeRtt),
            at(3.5, BbrMode::ProbeBwDown),
        ];
        assert_eq!(probe_rtt_share(&trace, 6.0), Some(0.1));
        assert_eq!(probe_rtt_share(&[], 6.0), None);
    }
}
