//! A run's results, rendered: the deterministic [`Summary`] (what `tputctl
//! sim --json` prints and `summary.json` holds), its text table, and every
//! file `tputctl sim --out DIR` writes ([`write_outputs`]).
//!
//! Goodput is payload bytes the receiver verified, over the flow's own active
//! time: from the moment its receiver saw the request to its last verified
//! byte (so a flow that ran 5 s of a 15 s scenario shows its rate over those
//! 5 s, not a third of it). The bottleneck's utilisation and drop counts are
//! over the scenario's measured window, from 0 to its `duration`
//! ([`crate::scenario::MeasuredWindow`]): the drain after it, in which flows
//! only finish, is left out, and the window is printed beside them.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;
use tput_cc::AlgorithmState;

use crate::Error;
use crate::plot;
use crate::scenario::{Scenario, ScenarioResult};

mod table;
pub use table::{Align, Table};

/// The deterministic summary of a simulated run: no wall-clock figure in it,
/// so the same scenario and seed give the same document.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct Summary {
    /// The scenario's name.
    pub name: Option<String>,
    /// The seed it ran with.
    pub seed: u64,
    /// The scenario's duration, seconds.
    pub duration_secs: f64,
    /// Simulated time including the drain after the duration, seconds.
    pub simulated_secs: f64,
    /// Packets that crossed a link.
    pub link_packets: u64,
    /// Events the simulator processed.
    #[serde(default)]
    pub events_processed: u64,
    /// Hash of every link event, hex: equal hashes mean identical runs.
    pub trace_hash: String,
    /// The headline link's counters (the only bottleneck, the hop the
    /// scenario names, or the most congested hop).
    pub bottleneck: BottleneckSummary,
    /// Per hop between the routers, in path order (one for a dumbbell): its
    /// counters and the goodput of each flow group that crosses it.
    #[serde(default)]
    pub hops: Vec<HopSummary>,
    /// Per flow, in flow order.
    pub flows: Vec<FlowSummary>,
    /// Per aggregate group.
    pub aggregates: Vec<AggregateSummary>,
    /// Per group over the TCP model: the settings it ran with.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tcp: Vec<TcpGroupSummary>,
}

/// The TCP model's effective settings of a group of `transport = "tcp"`
/// flows: its profile with every key of the scenario applied.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct TcpGroupSummary {
    /// Index of the group in the scenario.
    pub group: usize,
    /// The profile the keys depart from (`ns2` or `linux`).
    pub profile: String,
    /// The settings, one line ([`tput_tcp::TcpConfig::summary`]).
    pub settings: String,
    /// The controller spec with what the TCP settings add (HyStart++, the
    /// initial window).
    pub cc: String,
}

/// One aggregate group, judged on the sum of its flows.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct AggregateSummary {
    /// Index of the group in the scenario.
    pub group: usize,
    /// Flows in it.
    pub flows: u32,
    /// The group's target, bits per second.
    pub target_bps: f64,
    /// Slots judged.
    pub slots: usize,
    /// Slots whose summed throughput met the target.
    pub slots_met: usize,
    /// `slots_met / slots`.
    pub success_ratio: Option<f64>,
}

/// The headline link over the measured window `[0, window_secs]`.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct BottleneckSummary {
    /// Which link, e.g. `hop 1 of 2 (l2, most drops)`; `bottleneck (l0)` for a dumbbell.
    #[serde(default)]
    pub link: String,
    /// Busy time over the window's length.
    pub utilisation: f64,
    /// Length of the measured window, seconds (from 0: the scenario's duration).
    #[serde(default)]
    pub window_secs: f64,
    /// Packets delivered in the window.
    pub delivered_packets: u64,
    /// Packets dropped by the full queue (overflow) in the window.
    pub dropped_queue: u64,
    /// Packets dropped by the queue discipline's AQM in the window (0 with DropTail).
    #[serde(default)]
    pub dropped_aqm: u64,
    /// Packets marked CE by the queue discipline in the window.
    #[serde(default)]
    pub marked: u64,
    /// Median queueing delay (sojourn time) of the window's packets, ms.
    #[serde(default)]
    pub sojourn_p50_ms: f64,
    /// 99th percentile of the queueing delay, ms.
    #[serde(default)]
    pub sojourn_p99_ms: f64,
    /// Packets lost to cut-offs in the window.
    pub dropped_cutoff: u64,
    /// Packets lost to random loss in the window.
    pub dropped_random: u64,
    /// FQ-CoDel's scheduler and busiest flow queues over the window (an
    /// FQ-CoDel bottleneck only; see [`tput_netsim::FqCodelStats`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fq_codel: Option<tput_netsim::FqCodelStats>,
}

/// One hop over the measured window, and the flow groups that cross it.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct HopSummary {
    /// Index of the hop in path order.
    pub hop: usize,
    /// Its link id.
    pub link: u32,
    /// Busy time over the window's length.
    pub utilisation: f64,
    /// Packets delivered in the window.
    pub delivered_packets: u64,
    /// Packets dropped in the window, every cause.
    pub dropped_packets: u64,
    /// Every flow group that crosses the hop.
    pub groups: Vec<HopGroupShare>,
}

/// A flow group's goodput on a hop it crosses.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct HopGroupShare {
    /// Index of the group in the scenario.
    pub group: usize,
    /// Controller spec of the group.
    pub cc: String,
    /// Flows in the group.
    pub flows: u32,
    /// Sum of the group's flows' goodputs, bits per second.
    pub goodput_bps: f64,
    /// `goodput_bps` over the sum of every crossing group's goodput.
    pub share: f64,
}

/// One flow.
#[derive(Debug, Clone, PartialEq, Serialize, serde::Deserialize)]
pub struct FlowSummary {
    /// Flow id (1-based).
    pub flow: u32,
    /// Index of its group.
    pub group: usize,
    /// Controller spec of its sender.
    pub cc: String,
    /// Payload bytes delivered and verified.
    pub bytes: u64,
    /// Seconds the flow was active (receiver: request to last verified byte;
    /// a file workload, whose files overlap: its span from start to stop).
    pub active_secs: f64,
    /// `bytes * 8 / active_secs`, bits per second (0 if it never became active).
    pub goodput_bps: f64,
    /// Evaluation slots judged.
    pub slots: usize,
    /// Slots that met the target.
    pub slots_met: usize,
    /// `slots_met / slots`.
    pub success_ratio: Option<f64>,
    /// Files completed (file workloads).
    pub files: usize,
    /// Mean time of the completed files from their creation at the sender
    /// to the sender's confirmation of their last byte (handshake and
    /// initial losses included; the paper's `D_e`, see [`crate::files`]), seconds.
    pub mean_file_secs: Option<f64>,
    /// Mean transfer time of the completed files (first arrival at the
    /// receiver to the last byte; see [`crate::files`]), seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_transfer_secs: Option<f64>,
    /// Files refused, failed or unfinished at the end (file workloads).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files_lost: Option<u64>,
    /// Interval records at whose end the sending controller declared its
    /// target infeasible (a guarantee controller whose breaker tripped and
    /// that has met no slot since: its breaker open, or retrying).
    #[serde(default)]
    pub infeasible_intervals: usize,
    /// Of those, the records at whose end its breaker was open (no floor).
    #[serde(default)]
    pub breaker_open_intervals: usize,
    /// A TCP flow with ECN (`tcp = { ecn = true }`): its window reductions
    /// in answer to ECN-Echo (RFC 3168 §6.1.2) and the ACKs with ECE it
    /// received; `None` for the others.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<EcnCounts>,
    /// What went wrong, if anything.
    pub errors: Vec<String>,
}

/// What ECN did to a TCP flow ([`FlowSummary::ecn`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct EcnCounts {
    /// Window reductions in answer to ECE (at most one per window of data).
    pub reductions: u64,
    /// ACKs received with ECE set.
    pub ece_acks: u64,
}

impl Summary {
    /// Summarise `r`, the result of running `s`.
    pub fn new(s: &Scenario, r: &ScenarioResult) -> Self {
        let flows: Vec<FlowSummary> = r
            .flows
            .iter()
            .map(|f| FlowSummary {
                flow: f.flow,
                group: f.group,
                cc: f.cc.clone(),
                bytes: f.bytes,
                active_secs: f.active_secs,
                goodput_bps: f.goodput_bps(),
                slots: f.slots.len(),
                slots_met: f.slots.iter().filter(|s| s.met).count(),
                success_ratio: f.success_ratio,
                files: f.file_times.len(),
                mean_file_secs: (!f.file_times.is_empty())
                    .then(|| f.file_times.iter().sum::<f64>() / f.file_times.len() as f64),
                mean_transfer_secs: f.files.as_ref().and_then(|x| x.mean_transfer_secs()),
                files_lost: f.files.as_ref().map(|x| x.lost()),
                infeasible_intervals: f.intervals.iter().filter(|i| crate::live::infeasible(i)).count(),
                breaker_open_intervals: f.intervals.iter().filter(|i| crate::live::breaker_open(i)).count(),
                ecn: f.tcp.as_ref().filter(|_| tcp_ecn(s, f.group)).map(|t| EcnCounts {
                    reductions: t.ecn_reductions,
                    ece_acks: t.ece_acks,
                }),
                errors: f.errors.clone(),
            })
            .collect();
        let n_hops = r.hops.len();
        let link = if n_hops > 1 {
            format!(
                "hop {} of {} ({}, {})",
                r.headline.hop,
                n_hops,
                r.headline.link,
                r.headline.why.describe()
            )
        } else {
            format!("bottleneck ({})", r.headline.link)
        };
        let hops = r
            .hops
            .iter()
            .enumerate()
            .map(|(h, &l)| {
                let st = r.window.links.get(l.index()).cloned().unwrap_or_default();
                let mut groups: Vec<HopGroupShare> = s
                    .flows
                    .iter()
                    .enumerate()
                    .filter(|(_, g)| g.hop_range(n_hops).contains(&h))
                    .map(|(gi, g)| HopGroupShare {
                        group: gi,
                        cc: flows
                            .iter()
                            .find(|f| f.group == gi)
                            .map_or_else(|| g.cc.to_string(), |f| f.cc.clone()),
                        flows: g.count,
                        goodput_bps: flows.iter().filter(|f| f.group == gi).map(|f| f.goodput_bps).sum(),
                        share: 0.0,
                    })
                    .collect();
                let total: f64 = groups.iter().map(|g| g.goodput_bps).sum();
                for g in &mut groups {
                    g.share = if total > 0.0 { g.goodput_bps / total } else { 0.0 };
                }
                HopSummary {
                    hop: h,
                    link: l.0,
                    utilisation: st.utilisation,
                    delivered_packets: st.delivered.packets,
                    dropped_packets: st.dropped().packets,
                    groups,
                }
            })
            .collect();
        Summary {
            hops,
            name: s.name.clone(),
            seed: s.seed,
            duration_secs: s.duration.as_secs_f64(),
            simulated_secs: r.simulated_secs,
            link_packets: r.link_packets,
            events_processed: r.events_processed,
            trace_hash: format!("{:016x}", r.trace_hash),
            bottleneck: BottleneckSummary {
                link,
                utilisation: r.window.bottleneck.utilisation,
                window_secs: r.window.end_secs,
                delivered_packets: r.window.bottleneck.delivered.packets,
                dropped_queue: r.window.bottleneck.dropped_queue.packets,
                dropped_aqm: r.window.bottleneck.dropped_aqm.packets,
                marked: r.window.bottleneck.marked.packets,
                sojourn_p50_ms: r.window.bottleneck.sojourn_p50_ns as f64 / 1e6,
                sojourn_p99_ms: r.window.bottleneck.sojourn_p99_ns as f64 / 1e6,
                dropped_cutoff: r.window.bottleneck.dropped_cutoff.packets,
                dropped_random: r.window.bottleneck.dropped_random.packets,
                fq_codel: r.window.bottleneck.fq_codel.clone(),
            },
            flows,
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
            tcp: s
                .flows
                .iter()
                .enumerate()
                .filter(|(_, g)| g.transport == crate::scenario::Transport::Tcp)
                .filter_map(|(group, g)| {
                    // A validated scenario: the settings and controller build.
                    let spec = g.tcp.clone().unwrap_or_default();
                    Some(TcpGroupSummary {
                        group,
                        profile: spec.profile().ok()?.to_string(),
                        settings: spec.config().ok()?.summary(),
                        cc: spec.controller(&g.cc).ok()?.to_string(),
                    })
                })
                .collect(),
        }
    }

    /// Whether every flow ran without error.
    pub fn ok(&self) -> bool {
        self.flows.iter().all(|f| f.errors.is_empty())
    }

    /// The summary as a text table: a header line, one line per flow (with
    /// its errors below it), one line per aggregate group.
    pub fn table(&self) -> String {
        let mut out = format!(
            "{}: seed {}, bottleneck utilisation {:.3} over 0-{} s, drops: queue {} cut-off {} random {}{}\n",
            self.name.as_deref().unwrap_or("scenario"),
            self.seed,
            self.bottleneck.utilisation,
            self.bottleneck.window_secs,
            self.bottleneck.dropped_queue,
            self.bottleneck.dropped_cutoff,
            self.bottleneck.dropped_random,
            if self.hops.len() > 1 {
                format!(" [{}]", self.bottleneck.link)
            } else {
                String::new()
            }
        );
        if self.hops.len() > 1 {
            for h in &self.hops {
                out += &format!(
                    "hop {} (l{}): utilisation {:.3}, drops {}",
                    h.hop, h.link, h.utilisation, h.dropped_packets
                );
                for g in &h.groups {
                    out += &format!(
                        "; group {} ({} x{}) {} = {:.0}%",
                        g.group,
                        g.cc,
                        g.flows,
                        mbps(g.goodput_bps),
                        g.share * 100.0
                    );
                }
                out += "\n";
            }
        }
        out += &format!(
            "bottleneck queue: sojourn p50 {:.2} ms p99 {:.2} ms, AQM drops {}, ECN marks {}\n",
            self.bottleneck.sojourn_p50_ms,
            self.bottleneck.sojourn_p99_ms,
            self.bottleneck.dropped_aqm,
            self.bottleneck.marked
        );
        if let Some(fq) = &self.bottleneck.fq_codel {
            out += &fq_codel_text(fq);
        }
        let success_of = |f: &FlowSummary| {
            f.success_ratio
                .map_or("-".to_string(), |x| format!("{:.2} ({}/{})", x, f.slots_met, f.slots))
        };
        // Columns as wide as their longest entry, so that a long spec or a
        // long run does not push the figures out of line.
        let mut t = Table::new()
            .right("flow", 5)
            .left("controller", 10)
            .right("goodput", 14)
            .right("active", 9)
            .right("success", 12)
            .right("files (mean s)", 16);
        for f in &self.flows {
            let files = f
                .mean_file_secs
                .map_or("-".to_string(), |m| format!("{} ({m:.3})", f.files));
            t.row([
                f.flow.to_string(),
                f.cc.clone(),
                mbps(f.goodput_bps),
                format!("{:.2} s", f.active_secs),
                success_of(f),
                files,
            ]);
            if f.infeasible_intervals > 0 {
                t.note(format!(
                    "      the controller declared its target infeasible at the end of {} intervals, its breaker open (Reno) at the end of {} of them",
                    f.infeasible_intervals, f.breaker_open_intervals
                ));
            }
            if let Some(e) = f.ecn {
                t.note(format!(
                    "      ECN: {} window reductions on ECE ({} ACKs with ECE)",
                    e.reductions, e.ece_acks
                ));
            }
            for e in &f.errors {
                t.note(format!("      error: {e}"));
            }
        }
        out += &t.text();
        let with_files: Vec<&FlowSummary> = self.flows.iter().filter(|f| f.files_lost.is_some()).collect();
        if !with_files.is_empty() {
            // D_e pooled over every file of every flow (seed 003's metric).
            let n: usize = with_files.iter().map(|f| f.files).sum();
            let sum = |g: fn(&FlowSummary) -> Option<f64>| -> f64 {
                with_files
                    .iter()
                    .map(|f| g(f).unwrap_or(0.0) * f.files as f64)
                    .sum::<f64>()
            };
            let lost: u64 = with_files.iter().filter_map(|f| f.files_lost).sum();
            if n > 0 {
                out += &format!(
                    "files: {n} completed, {lost} refused/failed/unfinished; mean file time (D_e: creation at the \
                     sender to its last byte confirmed) {:.3} s, transfer time (first arrival to last byte) {:.3} s\n",
                    sum(|f| f.mean_file_secs) / n as f64,
                    sum(|f| f.mean_transfer_secs) / n as f64
                );
            } else {
                out += &format!("files: none completed, {lost} refused/failed/unfinished\n");
            }
        }
        for a in &self.aggregates {
            let success = a
                .success_ratio
                .map_or("-".to_string(), |x| format!("{:.2} ({}/{})", x, a.slots_met, a.slots));
            out += &format!(
                "group {} ({} flows, one aggregate): target {}, success {success}\n",
                a.group,
                a.flows,
                mbps(a.target_bps)
            );
        }
        for t in &self.tcp {
            out += &format!(
                "group {} over TCP, profile {}: {}; controller {}\n",
                t.group, t.profile, t.settings, t.cc
            );
        }
        out
    }
}

/// Whether group `group` of `s` runs the TCP model with ECN.
fn tcp_ecn(s: &Scenario, group: usize) -> bool {
    s.flows
        .get(group)
        .and_then(|g| g.tcp.as_ref())
        .and_then(|t| t.config().ok())
        .is_some_and(|c| c.ecn)
}

/// `bps` as `12.3 Mbit/s`.
pub fn mbps(bps: f64) -> String {
    format!("{:.1} Mbit/s", bps / 1e6)
}

/// The files [`write_outputs`] writes, in order.
pub const OUTPUT_FILES: [&str; 13] = [
    "summary.json",
    "result.json",
    "flows.csv",
    "intervals.csv",
    "slots.csv",
    "links.csv",
    "queue.csv",
    "delivered.csv",
    "cc.csv",
    "throughput.svg",
    "cwnd.svg",
    "k.svg",
    "queue.svg",
];

/// Serialize `rows` as CSV with a header from the row type's field names
/// (written even when there are no rows).
pub fn csv<R: Serialize + Default>(rows: impl IntoIterator<Item = R>) -> Result<String, Error> {
    let mut out = Vec::new();
    write_csv(&mut out, rows)?;
    String::from_utf8(out).map_err(|e| Error::Run(format!("CSV: {e}")))
}

/// [`csv()`] written to `w` row by row, without holding the text.
pub fn write_csv<R: Serialize + Default>(w: impl Write, rows: impl IntoIterator<Item = R>) -> Result<(), Error> {
    let err = |e: &dyn std::fmt::Display| Error::Run(format!("CSV: {e}"));
    let mut rows = rows.into_iter().peekable();
    if rows.peek().is_none() {
        // The header comes from a row: write a default one and keep only the header.
        let mut h = csv::Writer::from_writer(Vec::new());
        h.serialize(R::default()).map_err(|e| err(&e))?;
        let text = h.into_inner().map_err(|e| err(&e))?;
        let header = &text[..text.iter().position(|&b| b == b'\n').map_or(0, |i| i + 1)];
        let mut w = w;
        return w.write_all(header).map_err(|e| err(&e));
    }
    let mut out = csv::Writer::from_writer(w);
    for r in rows {
        out.serialize(r).map_err(|e| err(&e))?;
    }
    out.flush().map_err(|e| err(&e))
}

/// `value` as JSON, indented when `pretty`.
pub fn to_json<T: Serialize + ?Sized>(value: &T, pretty: bool) -> Result<String, Error> {
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    text.map_err(|e| Error::Run(format!("JSON: {e}")))
}

/// Write `files` (name, contents) into `dir`, creating it; returns the paths.
pub fn write_files(dir: &Path, files: &[(&str, String)]) -> Result<Vec<PathBuf>, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::Run(format!("creating {}: {e}", dir.display())))?;
    files
        .iter()
        .map(|(name, contents)| {
            let path = dir.join(name);
            std::fs::write(&path, contents).map_err(|e| Error::Run(format!("writing {}: {e}", path.display())))?;
            Ok(path)
        })
        .collect()
}

#[derive(Serialize, Default)]
struct FlowRow<'a> {
    flow: u32,
    group: usize,
    cc: &'a str,
    bytes: u64,
    active_secs: f64,
    goodput_bps: f64,
    slots: usize,
    slots_met: usize,
    success_ratio: Option<f64>,
    files: usize,
    mean_file_secs: Option<f64>,
}

#[derive(Serialize, Default)]
struct IntervalRow {
    flow: u32,
    start_secs: f64,
    end_secs: f64,
    bytes: u64,
    written_bytes: u64,
    goodput_bps: f64,
    cwnd_bytes: u64,
    srtt_ms: f64,
    min_rtt_ms: f64,
    lost_packets: u64,
    congestion_events: u64,
    k: Option<f64>,
    slot_rtts: Option<u32>,
}

#[derive(Serialize, Default)]
struct CcRow {
    flow: u32,
    time_secs: f64,
    cwnd_bytes: u64,
    ssthresh_bytes: Option<u64>,
    k: Option<f64>,
    slot_rtts: Option<u32>,
    k_bw: Option<f64>,
    k_max: Option<f64>,
    goal_bytes_per_sec: Option<f64>,
    floor_bytes: Option<u64>,
}

#[derive(Serialize, Default)]
struct SlotRow {
    flow: u32,
    index: u64,
    start_secs: f64,
    bytes: u64,
    throughput_bps: f64,
    met: bool,
}

#[derive(Serialize, Default)]
struct LinkRow {
    link: u32,
    offered_packets: u64,
    offered_bytes: u64,
    delivered_packets: u64,
    delivered_bytes: u64,
    dropped_queue_packets: u64,
    dropped_queue_bytes: u64,
    dropped_aqm_packets: u64,
    dropped_aqm_bytes: u64,
    marked_packets: u64,
    marked_bytes: u64,
    sojourn_p50_ns: u64,
    sojourn_p99_ns: u64,
    dropped_cutoff_packets: u64,
    dropped_cutoff_bytes: u64,
    dropped_random_packets: u64,
    dropped_random_bytes: u64,
    queued_packets: u64,
    queued_bytes: u64,
    busy_ns: u64,
    elapsed_ns: u64,
    utilisation: f64,
}

#[derive(Serialize, Default)]
struct QueueRow {
    time_ns: u64,
    link: u32,
    packets: u64,
    bytes: u64,
}

#[derive(Serialize, Default)]
struct DeliveredRow {
    time_ns: u64,
    flow: u32,
    delivered_bytes: u64,
    interval_bytes: u64,
}

/// Write output file `name` (one of [`OUTPUT_FILES`]) of run `r` to `w`,
/// row by row: nothing but the charts is rendered in memory first.
/// `charts` caches the charts, drawn on the first chart asked for.
fn write_output(
    name: &str,
    s: &Scenario,
    r: &ScenarioResult,
    summary: &Summary,
    charts: &mut Option<plot::ScenarioCharts>,
    w: &mut dyn Write,
) -> Result<(), Error> {
    let json = |w: &mut dyn Write, pretty: bool, value: &dyn erased::Json| {
        value.write(w, pretty).map_err(|e| Error::Run(format!("JSON: {e}")))
    };
    match name {
        "summary.json" => json(w, true, summary),
        "result.json" => json(w, false, r),
        "flows.csv" => write_csv(
            w,
            summary.flows.iter().map(|f| FlowRow {
                flow: f.flow,
                group: f.group,
                cc: &f.cc,
                bytes: f.bytes,
                active_secs: f.active_secs,
                goodput_bps: f.goodput_bps,
                slots: f.slots,
                slots_met: f.slots_met,
                success_ratio: f.success_ratio,
                files: f.files,
                mean_file_secs: f.mean_file_secs,
            }),
        ),
        "intervals.csv" => write_csv(
            w,
            r.flows.iter().flat_map(|f| {
                f.intervals.iter().map(move |i| {
                    let (k, slot_rtts) = match i.controller.as_ref().map(|c| &c.state) {
                        Some(AlgorithmState::Guarantee { k, slot_rtts, .. }) => (Some(*k), Some(*slot_rtts)),
                        _ => (None, None),
                    };
                    IntervalRow {
                        flow: f.flow,
                        start_secs: i.start_secs,
                        end_secs: i.end_secs,
                        bytes: i.bytes,
                        written_bytes: i.written_bytes,
                        goodput_bps: i.goodput_bps,
                        cwnd_bytes: i.cwnd_bytes,
                        srtt_ms: i.srtt_ms,
                        min_rtt_ms: i.min_rtt_ms,
                        lost_packets: i.lost_packets,
                        congestion_events: i.congestion_events,
                        k,
                        slot_rtts,
                    }
                })
            }),
        ),
        "slots.csv" => write_csv(
            w,
            r.flows.iter().flat_map(|f| {
                f.slots.iter().map(move |sl| SlotRow {
                    flow: f.flow,
                    index: sl.index,
                    start_secs: sl.start_secs,
                    bytes: sl.bytes,
                    throughput_bps: sl.throughput_bps,
                    met: sl.met,
                })
            }),
        ),
        "links.csv" => write_csv(
            w,
            r.window.links.iter().map(|l| LinkRow {
                link: l.link.0,
                offered_packets: l.offered.packets,
                offered_bytes: l.offered.bytes,
                delivered_packets: l.delivered.packets,
                delivered_bytes: l.delivered.bytes,
                dropped_queue_packets: l.dropped_queue.packets,
                dropped_queue_bytes: l.dropped_queue.bytes,
                dropped_aqm_packets: l.dropped_aqm.packets,
                dropped_aqm_bytes: l.dropped_aqm.bytes,
                marked_packets: l.marked.packets,
                marked_bytes: l.marked.bytes,
                sojourn_p50_ns: l.sojourn_p50_ns,
                sojourn_p99_ns: l.sojourn_p99_ns,
                dropped_cutoff_packets: l.dropped_cutoff.packets,
                dropped_cutoff_bytes: l.dropped_cutoff.bytes,
                dropped_random_packets: l.dropped_random.packets,
                dropped_random_bytes: l.dropped_random.bytes,
                queued_packets: l.queued.packets,
                queued_bytes: l.queued.bytes,
                busy_ns: l.busy_ns,
                elapsed_ns: l.elapsed_ns,
                utilisation: l.utilisation,
            }),
        ),
        "queue.csv" => write_csv(
            w,
            r.queue.iter().map(|q| QueueRow {
                time_ns: q.time_ns,
                link: q.link.0,
                packets: q.packets,
                bytes: q.bytes,
            }),
        ),
        "delivered.csv" => write_csv(
            w,
            r.delivered.iter().map(|d| DeliveredRow {
                time_ns: d.time_ns,
                flow: d.flow,
                delivered_bytes: d.delivered_bytes,
                interval_bytes: d.interval_bytes,
            }),
        ),
        "cc.csv" => write_csv(
            w,
            r.flows.iter().flat_map(|f| {
                f.cc_trace.iter().map(move |c| CcRow {
                    flow: f.flow,
                    time_secs: c.time_secs,
                    cwnd_bytes: c.cwnd_bytes,
                    ssthresh_bytes: c.ssthresh_bytes,
                    k: c.k,
                    slot_rtts: c.slot_rtts,
                    k_bw: c.k_bw,
                    k_max: c.k_max,
                    goal_bytes_per_sec: c.goal_bytes_per_sec,
                    floor_bytes: c.floor_bytes,
                })
            }),
        ),
        chart => {
            let c = charts.get_or_insert_with(|| plot::scenario_charts(s, r));
            let svg = match chart {
                "throughput.svg" => &c.throughput,
                "cwnd.svg" => &c.cwnd,
                "k.svg" => &c.k,
                "queue.svg" => &c.queue,
                other => return Err(Error::Run(format!("no output file {other}"))),
            };
            w.write_all(svg.as_bytes()).map_err(|e| Error::Run(e.to_string()))
        }
    }
}

/// JSON to a writer, compact or indented, for any serializable value.
mod erased {
    use std::io::Write;

    /// A value [`super::write_output`] can write as JSON.
    pub(super) trait Json {
        /// Write it to `w`, indented when `pretty`.
        fn write(&self, w: &mut dyn Write, pretty: bool) -> serde_json::Result<()>;
    }

    impl<T: serde::Serialize> Json for T {
        fn write(&self, w: &mut dyn Write, pretty: bool) -> serde_json::Result<()> {
            if pretty {
                serde_json::to_writer_pretty(w, self)
            } else {
                serde_json::to_writer(w, self)
            }
        }
    }
}

/// Every output file of a run, rendered: (file name, contents), in
/// [`OUTPUT_FILES`] order. [`write_outputs`] writes the same bytes without
/// holding them.
pub fn render_outputs(
    s: &Scenario,
    r: &ScenarioResult,
    summary: &Summary,
) -> Result<Vec<(&'static str, String)>, Error> {
    let mut charts = None;
    OUTPUT_FILES
        .iter()
        .map(|&name| {
            let mut out = Vec::new();
            write_output(name, s, r, summary, &mut charts, &mut out)?;
            let text = String::from_utf8(out).map_err(|e| Error::Run(format!("{name}: {e}")))?;
            Ok((name, text))
        })
        .collect()
}

/// Write every output file of a run into `dir` (see [`OUTPUT_FILES`]),
/// each streamed to its file row by row (the controller traces, decoded
/// sample by sample, are never rendered whole in memory).
pub fn write_outputs(dir: &Path, s: &Scenario, r: &ScenarioResult, summary: &Summary) -> Result<Vec<PathBuf>, Error> {
    std::fs::create_dir_all(dir).map_err(|e| Error::Run(format!("creating {}: {e}", dir.display())))?;
    let mut charts = None;
    OUTPUT_FILES
        .iter()
        .map(|&name| {
            let path = dir.join(name);
            let fail = |e: &dyn std::fmt::Display| Error::Run(format!("writing {}: {e}", path.display()));
            let file = std::fs::File::create(&path).map_err(|e| fail(&e))?;
            let mut w = std::io::BufWriter::with_capacity(1 << 16, file);
            write_output(name, s, r, summary, &mut charts, &mut w).map_err(|e| fail(&e))?;
            w.flush().map_err(|e| fail(&e))?;
            Ok(path)
        })
        .collect()
}

/// The FQ-CoDel lines of the printed summary (RFC 8290's lists and the
/// busiest flow queues).
fn fq_codel_text(fq: &tput_netsim::FqCodelStats) -> String {
    let served = fq.served_new + fq.served_old;
    let share_new = if served == 0 {
        0.0
    } else {
        fq.served_new as f64 / served as f64
    };
    let mut out = format!(
        "fq_codel: {} flow queues used; {} new-flow entries, {} new->old on quantum, {} emptied new->old, {} left the lists; \
         {:.1} % of packets sent from new flows\n",
        fq.flow_queues_used,
        fq.new_flow_entries,
        fq.new_to_old,
        fq.emptied_new_to_old,
        fq.left_lists,
        share_new * 100.0
    );
    if !fq.busiest.is_empty() {
        let mut t = Table::new()
            .right("queue", 5)
            .right("packets", 7)
            .right("AQM drops", 9)
            .right("marks", 5)
            .right("overflow", 8)
            .right("new entries", 11)
            .right("max backlog", 11);
        for q in &fq.busiest {
            t.row([
                q.index.to_string(),
                q.enqueued.packets.to_string(),
                q.dropped_aqm.to_string(),
                q.marked.to_string(),
                q.dropped_overflow.to_string(),
                q.new_entries.to_string(),
                format!("{} pkts", q.max_backlog.packets),
            ]);
        }
        out += "fq_codel busiest flow queues:\n";
        out += &t.text();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_table_lines_up_its_columns_and_writes_csv() {
        let mut t = Table::new()
            .left("case", 10)
            .right("goodput", 0)
            .right("jain", 6)
            .units(["", "Mbit/s", ""]);
        t.row(["a, b", "95.1", "1.000"]);
        t.row(["a much longer case", "9.5"]);
        t.note("  a note, as it is, not a row of the CSV");
        let text = [
            "case               goodput   jain",
            "                    Mbit/s",
            "a, b                  95.1  1.000",
            "a much longer case     9.5",
            "  a note, as it is, not a row of the CSV",
        ];
        assert_eq!(t.text(), text.map(|l| format!("{l}\n")).concat());
        assert_eq!(
            t.csv(),
            "case,goodput (Mbit/s),jain\n\"a, b\",95.1,1.000\na much longer case,9.5\n"
        );
        assert!(!t.is_empty() && Table::new().is_empty());
        assert_eq!(Table::new().text(), "\n");
    }

    #[derive(Serialize, Default)]
    struct Row {
        time_ns: u64,
        name: &'static str,
        ratio: Option<f64>,
    }

    #[test]
    fn csv_has_a_header_even_without_rows() {
        let rows = [
            Row {
                time_ns: 10,
                name: "a,b",
                ratio: Some(0.5),
            },
            Row {
                time_ns: 20,
                name: "c",
                ratio: None,
            },
        ];
        assert_eq!(csv(rows).unwrap(), "time_ns,name,ratio\n10,\"a,b\",0.5\n20,c,\n");
        assert_eq!(csv(Vec::<Row>::new()).unwrap(), "time_ns,name,ratio\n");
    }
}
