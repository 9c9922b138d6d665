//! What a run produced: per flow, per aggregate group, per link.

use serde::{Deserialize, Serialize};
use tput_netsim::{FlowSample, LinkId, LinkStats, QueueSample};

use tput_transport::{IntervalStats, SlotStats};

use crate::files::FileStats;
use crate::host::CcSamples;
use tput_tcp::TcpStats;

/// What one flow did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FlowResult {
    /// Flow id in the simulator (1-based).
    pub flow: u32,
    /// Index of its group in the scenario.
    pub group: usize,
    /// Controller spec.
    pub cc: String,
    /// Payload bytes delivered and verified.
    pub bytes: u64,
    /// When the flow was started, seconds of simulated time (its transfer's
    /// interval records count from here).
    pub start_secs: f64,
    /// Seconds the flow was active: for a bulk transfer, from the moment the
    /// receiver saw the request to its last verified byte; for a file
    /// workload (whose files overlap, so that their times summed can exceed
    /// the run), its own span from its start to its stop. Each file's times
    /// are in [`files`](Self::files).
    pub active_secs: f64,
    /// Sender-side interval records of its (bulk) transfer.
    pub intervals: Vec<IntervalStats>,
    /// The sending controller's state at every change (window growth at most
    /// once per millisecond; the rule is on [`CcSample`](crate::host::CcSample)), absolute simulated
    /// time. Bulk uploads only: empty for downloads (whose controller runs on
    /// the server) and file workloads. Written to `cc.csv`, left out of
    /// `result.json`. Held compactly (a few bytes a sample): read it with
    /// [`CcSamples::iter`].
    #[serde(skip)]
    pub cc_trace: CcSamples,
    /// Receiver-judged evaluation slots (bulk transfers with a target).
    pub slots: Vec<SlotStats>,
    /// Fraction of slots that met the target.
    pub success_ratio: Option<f64>,
    /// Completion time of each finished file, seconds (file workloads).
    pub file_times: Vec<f64>,
    /// Every file of a file workload: transfer and total times, and the
    /// files refused, failed or unfinished ([`FileStats`]); `None` for bulk flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<FileStats>,
    /// Transfers that failed, with the reason.
    pub errors: Vec<String>,
    /// The TCP sender's statistics (retransmissions, timeouts, RTO); `None` for QUIC flows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpStats>,
}

impl FlowResult {
    /// Goodput over the flow's own active time, bits per second: verified
    /// payload bytes * 8 / [`active_secs`](Self::active_secs); 0 if it never
    /// became active.
    pub fn goodput_bps(&self) -> f64 {
        if self.active_secs > 0.0 {
            self.bytes as f64 * 8.0 / self.active_secs
        } else {
            0.0
        }
    }
}

/// What a scenario produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioResult {
    /// The scenario's name.
    pub name: Option<String>,
    /// Per flow, in flow-id order.
    pub flows: Vec<FlowResult>,
    /// The headline link ([`ScenarioResult::headline`]) over the whole run.
    pub bottleneck: LinkStats,
    /// Every link's counters, in link-id order.
    pub links: Vec<LinkStats>,
    /// Queue-length samples of the headline link.
    pub queue: Vec<QueueSample>,
    /// Delivered bytes per flow per interval.
    pub delivered: Vec<FlowSample>,
    /// Hash of every simulator event: equal hashes, equal runs.
    pub trace_hash: u64,
    /// Packets that crossed a link.
    pub link_packets: u64,
    /// Events the simulator processed (its work: see
    /// [`tput_netsim::Simulator::events_processed`]).
    #[serde(default)]
    pub events_processed: u64,
    /// Simulated seconds, including the drain after `duration`.
    pub simulated_secs: f64,
    /// One entry per group with `aggregate = true`.
    pub aggregates: Vec<AggregateResult>,
    /// The links' counters over the measured window only (the drain left
    /// out): what utilisation and drop counts in reports are computed from.
    /// `bottleneck` and `links` above cover the whole run.
    #[serde(default)]
    pub window: MeasuredWindow,
    /// The forward links between the routers, in path order: a dumbbell's
    /// bottleneck, a chain's or a parking lot's hops (their counters are in
    /// `links` and `window.links`).
    #[serde(default)]
    pub hops: Vec<LinkId>,
    /// Which hop the headline figures (`bottleneck`, `window.bottleneck`,
    /// `queue`) are taken from, and why.
    #[serde(default)]
    pub headline: Headline,
}

/// The link a run's headline figures come from.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Headline {
    /// Index of the hop in [`ScenarioResult::hops`].
    pub hop: usize,
    /// The link.
    pub link: LinkId,
    /// Why this one.
    pub why: HeadlineWhy,
}

/// Why a hop is the headline link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HeadlineWhy {
    /// The topology has one bottleneck (a dumbbell, a one-hop chain).
    #[default]
    Only,
    /// The scenario names it (`topology.headline_hop`).
    Named,
    /// It dropped the most packets over the measured window.
    MostDrops,
    /// No hop dropped more than it, and it was the busiest.
    HighestUtilisation,
}

impl HeadlineWhy {
    /// A few words for reports.
    pub fn describe(self) -> &'static str {
        match self {
            HeadlineWhy::Only => "the only bottleneck",
            HeadlineWhy::Named => "named by the scenario",
            HeadlineWhy::MostDrops => "most drops",
            HeadlineWhy::HighestUtilisation => "highest utilisation",
        }
    }
}

impl Headline {
    /// The scenario's `named` hop, else the most congested of `hops` over
    /// the measured `window`: the most packets dropped (every cause), then
    /// the highest utilisation, then the first.
    pub fn choose(named: Option<usize>, hops: &[LinkId], window: &MeasuredWindow) -> Headline {
        let stats = |h: usize| window.links.get(hops[h].index()).cloned().unwrap_or_default();
        if let Some(hop) = named.filter(|&h| h < hops.len()) {
            return Headline {
                hop,
                link: hops[hop],
                why: HeadlineWhy::Named,
            };
        }
        if hops.len() <= 1 {
            return Headline {
                hop: 0,
                link: hops.first().copied().unwrap_or_default(),
                why: HeadlineWhy::Only,
            };
        }
        let drops = |h: usize| stats(h).dropped().packets;
        let max_drops = (0..hops.len()).map(drops).max().unwrap_or(0);
        let tied: Vec<usize> = (0..hops.len()).filter(|&h| drops(h) == max_drops).collect();
        // The first of the busiest among the hops with the most drops.
        let hop = tied
            .iter()
            .copied()
            .reduce(|a, b| {
                if stats(b).utilisation > stats(a).utilisation {
                    b
                } else {
                    a
                }
            })
            .unwrap_or(0);
        Headline {
            hop,
            link: hops[hop],
            why: if tied.len() == 1 {
                HeadlineWhy::MostDrops
            } else {
                HeadlineWhy::HighestUtilisation
            },
        }
    }
}

/// The scenario's measured window: from time 0 to its `duration`, the time
/// during which flows send. The drain after it (the runner goes on so that
/// transfers can deliver their last bytes and close) is not in it, so a
/// link's utilisation over the window is busy time over `duration`, not over
/// the whole run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MeasuredWindow {
    /// End of the window (it starts at 0), seconds: the scenario's duration.
    pub end_secs: f64,
    /// The headline link's counters at the end of the window
    /// (`utilisation` = busy time / `end_secs`).
    pub bottleneck: LinkStats,
    /// Every link's counters at the end of the window, in link-id order.
    pub links: Vec<LinkStats>,
}

/// A coordinated group judged as one flow: evaluation slot `i` of the group
/// carries the sum of its flows' throughputs in their slot `i` and is met
/// when that sum reaches the sum of their targets. Slots are lined up by
/// index, which is sound when the flows start together and their slots have
/// one length in time (scenario groups with `aggregate = true` must use a
/// duration for `eval_slot`; RTT-based slots differ between flows); they
/// then line up to within the flows' handshake times.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AggregateResult {
    /// Index of the group in [`Scenario::flows`](super::Scenario::flows).
    pub group: usize,
    /// Flows in the group.
    pub flows: u32,
    /// Sum of the flows' targets, bits per second (0 if they have none).
    pub target_bps: f64,
    /// Throughput of the group per evaluation slot, bits per second (slots
    /// that every flow completed).
    pub slot_throughput_bps: Vec<f64>,
    /// Slots that reached `target_bps`.
    pub slots_met: usize,
    /// `slots_met / slots`; `None` without targets or slots.
    pub success_ratio: Option<f64>,
}

impl AggregateResult {
    /// Judge `flows` (all of `group`) as one against `target_bps`, as
    /// described on [`AggregateResult`]; usable for uncoordinated groups too.
    /// A flow that never connected (no slot, a success ratio of 0) adds 0
    /// to every slot of the others.
    pub fn judge(group: usize, target_bps: f64, flows: &[&FlowResult]) -> Self {
        let never = |f: &&&FlowResult| f.slots.is_empty() && f.success_ratio == Some(0.0);
        let common = flows
            .iter()
            .filter(|f| !never(f))
            .map(|f| f.slots.len())
            .min()
            .unwrap_or(0);
        let slot_throughput_bps: Vec<f64> = (0..common)
            .map(|i| {
                flows
                    .iter()
                    .filter_map(|f| f.slots.get(i))
                    .map(|s| s.throughput_bps)
                    .sum()
            })
            .collect();
        let slots_met = slot_throughput_bps.iter().filter(|&&t| t >= target_bps).count();
        Self {
            group,
            flows: flows.len() as u32,
            target_bps,
            success_ratio: if target_bps > 0.0 && common > 0 {
                Some(slots_met as f64 / common as f64)
            } else if target_bps > 0.0 && !flows.is_empty() && flows.iter().all(|f| never(&f)) {
                Some(0.0)
            } else {
                None
            },
            slot_throughput_bps,
            slots_met,
        }
    }
}
