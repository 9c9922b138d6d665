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
//! flows spend in ProbeRTT (from their controller's state at the end of
//! each [`SAMPLE`] interval record; quinn-proto's BBR does not tell its
//! state).
//!
//! [`BbrCompare`] is the reproduction ([`crate::repro`]): one simulation per
//! case, each keeping its result, its queue samples and its interval
//! records; `--plan` and `--from DIR` as for the other reproductions.

use std::path::Path;
use std::time::Duration;

use tput_cc::{AlgorithmState, BbrMode};
use tput_lab::plan::{Keep, PointResult};
use tput_lab::report::Table;
use tput_lab::scenario::{FlowGroup, LinkSpec, Scenario, ScenarioResult, TopologySpec};

use crate::repro::{Built, Measurements, Planned, Reproduction, kept_result, write_files};
use tput_lab::stats::{jain, mean, percentile};

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

/// Share of a flow's time in ProbeRTT, from its interval records (start,
/// end, our BBR's state at the end; seconds since the flow began sending)
/// that end by `end_secs`: the length of the records that end in ProbeRTT
/// over the length of those that end in any BBR state (so each ProbeRTT
/// episode is counted to within one record). `None` without BBR states.
fn probe_rtt_share(records: impl IntoIterator<Item = (f64, f64, Option<BbrMode>)>, end_secs: f64) -> Option<f64> {
    let (mut bbr, mut probe_rtt) = (0.0, 0.0);
    for (start, end, mode) in records {
        let Some(mode) = mode.filter(|_| end <= end_secs) else {
            continue;
        };
        bbr += end - start;
        if mode == BbrMode::ProbeRtt {
            probe_rtt += end - start;
        }
    }
    (bbr > 0.0).then(|| probe_rtt / bbr)
}

/// The row of `case` from its result `r` (with its queue samples and
/// interval records).
pub fn measure(case: &Case, r: &ScenarioResult) -> Row {
    let end = r.window.end_secs;
    let end_ns = (end * 1e9) as u64;
    let delays: Vec<f64> = r
        .queue
        .iter()
        .filter(|q| q.time_ns <= end_ns)
        .map(|q| q.bytes as f64 * 8.0 / RATE_BPS as f64 * 1e3)
        .collect();
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
        .filter_map(|f| {
            let records = f.intervals.iter().map(|i| {
                let mode = match i.controller.as_ref().map(|c| &c.state) {
                    Some(AlgorithmState::Bbr { mode, .. }) => Some(*mode),
                    _ => None,
                };
                (i.start_secs, i.end_secs, mode)
            });
            probe_rtt_share(records, end - f.start_secs)
        })
        .collect();
    Row {
        case: case.name(),
        utilisation: b.utilisation,
        // No queue samples (a run shorter than one interval): no queueing seen.
        qdelay_p50_ms: percentile(&delays, 0.5).unwrap_or(0.0),
        qdelay_p99_ms: percentile(&delays, 0.99).unwrap_or(0.0),
        loss_rate,
        // Nothing delivered: no flow got its share.
        jain: jain(&goodputs).unwrap_or(0.0),
        first_share: if total > 0.0 { first / total } else { 0.0 },
        probe_rtt_share: mean(shares),
        goodput_mbps: total / 1e6,
    }
}

/// The table: one line per row, under a header and a line of units.
pub fn table(rows: &[Row]) -> Table {
    let mut t = Table::new()
        .left("case", 34)
        .right("util", 6)
        .right("goodput", 8)
        .right("qd p50", 8)
        .right("qd p99", 8)
        .right("loss", 8)
        .right("jain", 6)
        .right("share1", 7)
        .right("ProbeRTT", 8)
        .units(["", "", "Mbit/s", "ms", "ms", "%", "", "", "% time"]);
    for r in rows {
        t.row([
            r.case.clone(),
            format!("{:.3}", r.utilisation),
            format!("{:.1}", r.goodput_mbps),
            format!("{:.1}", r.qdelay_p50_ms),
            format!("{:.1}", r.qdelay_p99_ms),
            format!("{:.3}", r.loss_rate * 100.0),
            format!("{:.3}", r.jain),
            format!("{:.3}", r.first_share),
            r.probe_rtt_share
                .map_or_else(|| "-".to_string(), |s| format!("{:.1}", s * 100.0)),
        ]);
    }
    t
}

/// What the cross-check runs.
#[derive(Debug, Clone)]
pub struct Options {
    /// Simulated time per case.
    pub duration: Duration,
    /// The cases, in table order.
    pub cases: Vec<Case>,
}

impl Options {
    /// Every case for 30 s.
    pub fn full() -> Options {
        Options {
            duration: Duration::from_secs(30),
            cases: cases(),
        }
    }

    /// Every case for 5 s (the smoke run).
    pub fn short() -> Options {
        Options {
            duration: Duration::from_secs(5),
            ..Options::full()
        }
    }

    /// Only the cases whose name contains one of `filters` (every case
    /// without filters); a one-line error if none does.
    pub fn only(mut self, filters: &[String]) -> Result<Options, String> {
        if filters.is_empty() {
            return Ok(self);
        }
        self.cases
            .retain(|c| filters.iter().any(|f| c.name().contains(f.as_str())));
        if self.cases.is_empty() {
            return Err(format!(
                "no case's name contains {}; names are like \"1.0 BDP  10 x bbr\", \"0.1 BDP  quinn-bbr + cubic\"",
                filters
                    .iter()
                    .map(|f| format!("{f:?}"))
                    .collect::<Vec<_>>()
                    .join(" or ")
            ));
        }
        Ok(self)
    }
}

/// The BBR cross-check as a reproduction: one simulation per case.
#[derive(Debug, Clone)]
pub struct BbrCompare {
    /// What to run.
    pub options: Options,
}

impl Reproduction for BbrCompare {
    type Point = Case;
    type Measured = Row;

    fn name(&self) -> &'static str {
        "bbr_compare"
    }

    fn points(&self) -> Result<Vec<Planned<Case>>, String> {
        let mut keep = Keep::result();
        keep.queue = true;
        keep.intervals = true;
        Ok(self
            .options
            .cases
            .iter()
            .map(|c| {
                Planned::new(
                    c.clone(),
                    [("case", c.name())],
                    c.scenario(self.options.duration),
                    keep.clone(),
                )
            })
            .collect())
    }

    fn label(&self, c: &Case) -> String {
        c.name()
    }

    fn measure(&self, c: &Case, r: &PointResult) -> Result<Row, String> {
        let r = kept_result(r)?;
        if let Some(f) = r.flows.iter().find(|f| !f.errors.is_empty()) {
            return Err(format!("flow {} failed: {}", f.flow, f.errors.join("; ")));
        }
        Ok(measure(c, r))
    }

    fn progress(&self, r: &Row) -> String {
        format!(
            "util {:.3}, {:.1} Mbit/s, Jain {:.3}, qd p99 {:.1} ms",
            r.utilisation, r.goodput_mbps, r.jain, r.qdelay_p99_ms
        )
    }

    fn build(&self, out: &Path, measured: &Measurements<Case, Row>) -> Result<Built, String> {
        let rows: Vec<Row> = measured.iter().filter_map(|(_, m)| m.as_ref().ok().cloned()).collect();
        let t = table(&rows);
        let text = format!(
            "100 Mbit/s, 50 ms RTT dumbbell, {} s per case\n\n{}",
            self.options.duration.as_secs_f64(),
            t.text()
        );
        let files = write_files(out, &[("bbr_compare.csv", t.csv())])?;
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
        let at = |start: f64, mode| (start, start + 0.5, mode);
        let records = [
            at(0.5, None),
            at(1.0, Some(BbrMode::ProbeBwCruise)),
            at(1.5, Some(BbrMode::ProbeRtt)),
            at(2.0, Some(BbrMode::ProbeBwDown)),
            at(2.5, Some(BbrMode::ProbeBwDown)),
            // Ends after the measured window: left out.
            at(3.0, Some(BbrMode::ProbeRtt)),
        ];
        assert_eq!(probe_rtt_share(records, 3.0), Some(0.25));
        assert_eq!(probe_rtt_share([at(0.0, None)], 3.0), None);
        assert_eq!(probe_rtt_share([], 3.0), None);
    }

    #[test]
    fn a_filter_keeps_the_cases_it_names_and_names_a_filter_that_keeps_none() {
        let o = Options::short().only(&["0.1 BDP  10 x".into()]).unwrap();
        let names: Vec<String> = o.cases.iter().map(Case::name).collect();
        assert_eq!(
            names,
            [
                "0.1 BDP  10 x bbr",
                "0.1 BDP  10 x quinn-bbr",
                "0.1 BDP  10 x quinn-bbr-paced"
            ]
        );
        let e = Options::short().only(&["vegas".into()]).unwrap_err();
        assert!(e.contains("\"vegas\"") && !e.contains('\n'), "{e}");
    }
}
