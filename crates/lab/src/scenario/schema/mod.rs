//! The scenario schema: what a TOML/JSON scenario file holds.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tput_cc::ControllerSpec;
use tput_cc::units::Rate;

use tput_transport::{Direction, EvalSlot};

use super::serde_helpers::{eval_slot_serde, human_duration, human_size, spec_from_str, spec_to_str};
use crate::Error;

mod link;
mod tcp_spec;
pub use link::*;
pub use tcp_spec::*;

fn default_seed() -> u64 {
    1
}
fn default_interval() -> Duration {
    Duration::from_secs(1)
}
fn default_mtu() -> u16 {
    1200
}
fn default_count() -> u32 {
    1
}
fn default_oracle_window() -> Duration {
    Duration::from_millis(100)
}

/// A whole experiment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// A name for reports.
    #[serde(default)]
    pub name: Option<String>,
    /// Simulated time during which flows send.
    #[serde(with = "human_duration")]
    pub duration: Duration,
    /// Seed of every random choice (links, workloads, QUIC endpoints).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Interval of the time series (flow delivery, queue samples, sender statistics).
    #[serde(default = "default_interval", with = "human_duration")]
    pub interval: Duration,
    /// UDP payload size of every QUIC packet (path MTU discovery is off in the simulator).
    #[serde(default = "default_mtu")]
    pub mtu: u16,
    /// Window of the bandwidth oracle that feeds guarantee controllers `A`.
    #[serde(default = "default_oracle_window", with = "human_duration")]
    pub oracle_window: Duration,
    /// The network.
    pub topology: TopologySpec,
    /// The traffic.
    pub flows: Vec<FlowGroup>,
}

impl Scenario {
    /// Parse a scenario from TOML text; the error is one line with the line
    /// number and the reason (validation is separate: [`validate`](super::validate())).
    pub fn from_toml_str(text: &str) -> Result<Self, Error> {
        Self::parse_toml(text).map_err(|(line, msg)| match line {
            Some(l) => Error::Invalid(format!("line {l}: {msg}")),
            None => Error::Invalid(msg),
        })
    }

    /// Read and parse a scenario file; the error is one line,
    /// `path:line: reason` (or `path: reason`).
    pub fn from_toml_file(path: &std::path::Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Invalid(format!("cannot read {}: {e}", path.display())))?;
        let mut s = Self::parse_toml(&text).map_err(|(line, msg)| match line {
            Some(l) => Error::Invalid(format!("{}:{l}: {msg}", path.display())),
            None => Error::Invalid(format!("{}: {msg}", path.display())),
        })?;
        if let Some(dir) = path.parent() {
            s.resolve_paths(dir);
        }
        Ok(s)
    }

    /// Makes every relative path in the scenario (links' `trace`) relative
    /// to `dir` instead of the current directory.
    pub fn resolve_paths(&mut self, dir: &std::path::Path) {
        let mut links: Vec<&mut LinkSpec> = match &mut self.topology {
            TopologySpec::Dumbbell {
                bottleneck,
                access,
                reverse_bottleneck,
            } => {
                let mut v = vec![bottleneck, access];
                v.extend(reverse_bottleneck.as_mut());
                v
            }
            TopologySpec::Chain { hops, .. } => hops.iter_mut().collect(),
            TopologySpec::ParkingLot { hops, access, .. } => {
                let mut v: Vec<&mut LinkSpec> = hops.iter_mut().collect();
                v.push(access);
                v
            }
        };
        links.extend(self.flows.iter_mut().filter_map(|g| g.access.as_mut()));
        for l in links {
            if let Some(t) = l.trace.as_mut().filter(|t| t.is_relative()) {
                *t = dir.join(&*t);
            }
        }
    }

    fn parse_toml(text: &str) -> Result<Self, (Option<usize>, String)> {
        toml::from_str(text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            (line, e.message().replace('\n', " ").trim().to_string())
        })
    }

    /// A scenario with the defaults of the file format: seed 1, one-second
    /// interval, 1200-byte packets, a 100 ms oracle window.
    pub fn new(duration: Duration, topology: TopologySpec, flows: Vec<FlowGroup>) -> Self {
        Self {
            name: None,
            duration,
            seed: default_seed(),
            interval: default_interval(),
            mtu: default_mtu(),
            oracle_window: default_oracle_window(),
            topology,
            flows,
        }
    }
}

/// The network of a scenario.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
#[allow(clippy::large_enum_variant)] // a config value, built once per run
pub enum TopologySpec {
    /// One sender/receiver pair per flow, each with its own access links, all
    /// sharing one bottleneck.
    Dumbbell {
        /// Forward bottleneck (impairments apply here).
        bottleneck: LinkSpec,
        /// Every access link, both directions.
        access: LinkSpec,
        /// Reverse bottleneck; default: the forward one without impairments.
        #[serde(default)]
        reverse_bottleneck: Option<LinkSpec>,
    },
    /// Hosts at both ends of a chain of links; every flow crosses all of them.
    Chain {
        /// The links from sender side to receiver side; the reverse path mirrors them without impairments.
        hops: Vec<LinkSpec>,
        /// The hop (0-based) the run's headline figures (utilisation, drops,
        /// queue plot) come from; default: the most congested one (most
        /// drops over the measured window, then the highest utilisation).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        headline_hop: Option<usize>,
    },
    /// A parking lot: routers joined by `hops` in a row; each flow has its
    /// own sender and receiver, entering at hop `first_hop` and leaving after
    /// hop `last_hop` (its group's keys; default: every hop), so a long group
    /// crosses every congested hop and cross-traffic groups one or a few.
    ParkingLot {
        /// The hops in path order; the reverse path mirrors them without impairments.
        hops: Vec<LinkSpec>,
        /// Every access link, both directions (a group's `access` replaces it).
        access: LinkSpec,
        /// The hop the headline figures come from, as for a chain.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        headline_hop: Option<usize>,
    },
}

impl TopologySpec {
    /// A dumbbell whose reverse bottleneck mirrors the forward one without impairments.
    pub fn dumbbell(bottleneck: LinkSpec, access: LinkSpec) -> Self {
        Self::Dumbbell {
            bottleneck,
            access,
            reverse_bottleneck: None,
        }
    }

    /// A chain of `hops`, its headline hop chosen by congestion.
    pub fn chain(hops: Vec<LinkSpec>) -> Self {
        Self::Chain {
            hops,
            headline_hop: None,
        }
    }

    /// A parking lot of `hops` with `access` links, its headline hop chosen
    /// by congestion.
    pub fn parking_lot(hops: Vec<LinkSpec>, access: LinkSpec) -> Self {
        Self::ParkingLot {
            hops,
            access,
            headline_hop: None,
        }
    }

    /// The links flows cross between the routers, in path order: the
    /// forward bottleneck of a dumbbell, the hops of a chain or a parking lot.
    pub fn hops(&self) -> &[LinkSpec] {
        match self {
            Self::Dumbbell { bottleneck, .. } => std::slice::from_ref(bottleneck),
            Self::Chain { hops, .. } | Self::ParkingLot { hops, .. } => hops,
        }
    }

    /// The hop the scenario names for its headline figures, if any.
    pub fn headline_hop(&self) -> Option<usize> {
        match self {
            Self::Dumbbell { .. } => None,
            Self::Chain { headline_hop, .. } | Self::ParkingLot { headline_hop, .. } => *headline_hop,
        }
    }
}

/// A group of identical flows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FlowGroup {
    /// Controller spec, e.g. `cubic` or `guarantee:target=20Mbit/s`.
    #[serde(deserialize_with = "spec_from_str", serialize_with = "spec_to_str")]
    pub cc: ControllerSpec,
    /// Number of flows (each on its own sender/receiver pair in a dumbbell).
    #[serde(default = "default_count")]
    pub count: u32,
    /// When the flows start.
    #[serde(default, with = "human_duration::option")]
    pub start: Option<Duration>,
    /// Each flow starts at `start` plus a uniformly random delay in
    /// `[0, start_jitter)`, drawn from the scenario's seed per flow (default
    /// 100 ms; `"0s"` turns it off). Without it, flows that start at the same
    /// instant send their Initials into a full queue at the same instants,
    /// lose them together and back off in lockstep: with 100 simultaneous
    /// NewReno flows on a 30-packet queue, a third never completed their
    /// handshake in 30 s. Aggregate groups default to 0 (their flows must
    /// start together so that their evaluation slots line up).
    #[serde(default, with = "human_duration::option")]
    pub start_jitter: Option<Duration>,
    /// When they stop sending (default: the end of the scenario).
    #[serde(default, with = "human_duration::option")]
    pub stop: Option<Duration>,
    /// Bytes per flow (default: send until `stop`).
    #[serde(default, with = "human_size")]
    pub bytes: Option<u64>,
    /// `upload` (client sends, default) or `download`.
    #[serde(default)]
    pub direction: Option<Direction>,
    /// Target throughput judged per evaluation slot.
    #[serde(default)]
    pub target: Option<Rate>,
    /// Evaluation slot: a duration (`1s`) or RTTs (`32rtt`); default 1s.
    #[serde(default, with = "eval_slot_serde")]
    pub eval_slot: Option<EvalSlot>,
    /// Application rate limit of each flow's sender (e.g. constant-rate cross traffic).
    #[serde(default)]
    pub rate_limit: Option<Rate>,
    /// Whether the oracle leaves these flows out of the cross traffic (default:
    /// yes for guarantee controllers, whose `A` excludes themselves).
    #[serde(default)]
    pub oracle_own: Option<bool>,
    /// File transfers instead of one bulk transfer.
    #[serde(default)]
    pub files: Option<FilesSpec>,
    /// The group's guarantee flows pursue one aggregate target (the sum of
    /// their controllers' targets) through one shared [`Aggregate`](tput_cc::Aggregate)
    /// coordinator; the result reports the group's success judged on the sum
    /// ([`ScenarioResult::aggregates`](super::ScenarioResult::aggregates)). Other controllers ignore it.
    #[serde(default)]
    pub aggregate: bool,
    /// `quic` (default) or `tcp` (the packet-level model of [`tput_tcp`]).
    #[serde(default, skip_serializing_if = "Transport::is_quic")]
    pub transport: Transport,
    /// Parameters of the TCP model (`transport = "tcp"` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tcp: Option<TcpSpec>,
    /// The application-buffer model (QUIC uploads): at most this many
    /// buffers of `buffer_size` bytes unacknowledged at once, one stream
    /// each, a new one opened only when an earlier one is fully acknowledged
    /// (Miyake, Kato, Suzuki 1995; [`tput_transport::AppBuffers`]). `None`:
    /// one stream, limited only by flow control.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub buffers: Option<u32>,
    /// Bytes per application buffer (default [`DEFAULT_BUFFER_SIZE`]; needs `buffers`).
    #[serde(default, with = "human_size", skip_serializing_if = "Option::is_none")]
    pub buffer_size: Option<u64>,
    /// QUIC stream and connection receive windows of both ends of each
    /// flow, bytes (default: quinn-proto's). For the TCP model see
    /// `tcp.receive_window`.
    #[serde(default, with = "human_size", skip_serializing_if = "Option::is_none")]
    pub receive_window: Option<u64>,
    /// The senders run quinn-proto's own implementation of `cc`
    /// (`newreno`, `cubic` or `bbr`, with no parameters:
    /// [`tput_cc::QuinnCc`]) instead of this project's, to compare the two
    /// in the same simulation (QUIC uploads only). Results name them
    /// `quinn-newreno`, `quinn-cubic`, `quinn-bbr`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quinn: bool,
    /// With `quinn = true` and `cc = "bbr"`: the node paces quinn-proto's
    /// BBR at the pacing rate it computes, as it paces this project's `bbr`
    /// (quinn-proto 0.11 itself paces it at 1.25 x cwnd / srtt). Results
    /// name it `quinn-bbr-paced`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub quinn_paced: bool,
    /// The `[flows.access]` table: the group's own access links (dumbbell
    /// and parking lot), replacing `topology.access` for its flows, both
    /// sides and both ways. In a dumbbell the group's base round-trip time
    /// is `2 * (bottleneck delay + 2 * access delay)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub access: Option<LinkSpec>,
    /// Parking lot: the first hop (0-based) the group's flows cross (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_hop: Option<usize>,
    /// Parking lot: the last hop the group's flows cross, inclusive
    /// (default: the last hop).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_hop: Option<usize>,
    /// The group's QUIC endpoints use ECN (RFC 9000 §13.4, as quinn-proto
    /// implements it): they send the codepoint quinn-proto asks for (ECT(0)
    /// once validated) and hand it the codepoint each datagram arrived with,
    /// so queues with `ecn` mark instead of dropping and the ACK frames
    /// carry ECN counts (default off: Not-ECT, as before).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ecn: bool,
}

/// Default of [`FlowGroup::buffer_size`]: the paper's 512 KB buffers
/// (Miyake, Kato, Suzuki 1995), read as 512 KiB.
pub const DEFAULT_BUFFER_SIZE: u64 = 512 * 1024;

impl FlowGroup {
    /// One bulk flow with `cc`, from the start to the end of the scenario, no target.
    pub fn new(cc: ControllerSpec) -> Self {
        Self {
            cc,
            count: 1,
            start: None,
            start_jitter: None,
            stop: None,
            bytes: None,
            direction: None,
            target: None,
            eval_slot: None,
            rate_limit: None,
            oracle_own: None,
            files: None,
            aggregate: false,
            transport: Transport::Quic,
            tcp: None,
            buffers: None,
            buffer_size: None,
            receive_window: None,
            quinn: false,
            quinn_paced: false,
            access: None,
            first_hop: None,
            last_hop: None,
            ecn: false,
        }
    }

    /// With its own access links (see [`FlowGroup::access`]).
    pub fn with_access(mut self, access: LinkSpec) -> Self {
        self.access = Some(access);
        self
    }

    /// Crossing hops `first..=last` of a parking lot.
    pub fn crossing(mut self, first: usize, last: usize) -> Self {
        self.first_hop = Some(first);
        self.last_hop = Some(last);
        self
    }

    /// The hops `first..=last` this group's flows cross in a topology of
    /// `hops` hops (a dumbbell has one: its bottleneck).
    pub fn hop_range(&self, hops: usize) -> std::ops::RangeInclusive<usize> {
        self.first_hop.unwrap_or(0)..=self.last_hop.unwrap_or(hops.saturating_sub(1))
    }

    /// With `count` application buffers of `size` bytes in flight (see [`FlowGroup::buffers`]).
    pub fn with_buffers(mut self, count: u32, size: u64) -> Self {
        self.buffers = Some(count);
        self.buffer_size = Some(size);
        self
    }

    /// The group's senders run quinn-proto's own controller of `cc`
    /// (see [`FlowGroup::quinn`]).
    pub fn quinn(mut self) -> Self {
        self.quinn = true;
        self
    }

    /// quinn-proto's BBR, paced by the node at its own rate (see
    /// [`FlowGroup::quinn_paced`]; `cc` must be `bbr`).
    pub fn quinn_paced(mut self) -> Self {
        self.quinn = true;
        self.quinn_paced = true;
        self
    }

    /// quinn-proto's controller the senders run, if [`FlowGroup::quinn`] is set
    /// and `cc` has one.
    pub fn quinn_cc(&self) -> Option<tput_cc::QuinnCc> {
        let q = self.quinn.then(|| tput_cc::QuinnCc::for_spec(&self.cc)).flatten()?;
        Some(if self.quinn_paced && q == tput_cc::QuinnCc::Bbr {
            tput_cc::QuinnCc::BbrPaced
        } else {
            q
        })
    }

    /// The application-buffer model in force, if any.
    pub fn app_buffers(&self) -> Option<tput_transport::AppBuffers> {
        self.buffers.map(|count| tput_transport::AppBuffers {
            count,
            size: self.buffer_size.unwrap_or(DEFAULT_BUFFER_SIZE),
        })
    }

    /// Over the TCP model with `tcp`'s parameters.
    pub fn over_tcp(mut self, tcp: TcpSpec) -> Self {
        self.transport = Transport::Tcp;
        self.tcp = Some(tcp);
        self
    }

    /// `count` such flows.
    pub fn times(mut self, count: u32) -> Self {
        self.count = count;
        self
    }

    /// Starting at `start`.
    pub fn starting(mut self, start: Duration) -> Self {
        self.start = Some(start);
        self
    }

    /// With a start jitter of `jitter` (see [`FlowGroup::start_jitter`]).
    pub fn with_start_jitter(mut self, jitter: Duration) -> Self {
        self.start_jitter = Some(jitter);
        self
    }

    /// The start jitter in force: the key, else the default
    /// ([`DEFAULT_START_JITTER`], 0 for aggregate groups).
    pub fn effective_start_jitter(&self) -> Duration {
        self.start_jitter.unwrap_or(if self.aggregate {
            Duration::ZERO
        } else {
            DEFAULT_START_JITTER
        })
    }

    /// With a target judged per evaluation slot.
    pub fn with_target(mut self, target: Rate) -> Self {
        self.target = Some(target);
        self
    }

    /// Coordinated through one [`Aggregate`](tput_cc::Aggregate) (see [`FlowGroup::aggregate`]).
    pub fn aggregated(mut self) -> Self {
        self.aggregate = true;
        self
    }
}

/// Default of [`FlowGroup::start_jitter`].
pub const DEFAULT_START_JITTER: Duration = Duration::from_millis(100);

/// File transfers: exponential gaps, Pareto sizes, a new connection per file (seed 003).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FilesSpec {
    /// Mean gap between file starts.
    #[serde(with = "human_duration")]
    pub mean_gap: Duration,
    /// Mean file size.
    #[serde(with = "human_size::required")]
    pub mean_size: u64,
    /// Pareto shape (> 1).
    pub shape: f64,
    /// After the last arrival (the group's `stop`), run up to this long so
    /// that running files can finish (default 5 s, at most 1 hour); files
    /// still running then count as unfinished ([`FileStats::unfinished`](crate::files::FileStats::unfinished)).
    #[serde(default, with = "human_duration::option", skip_serializing_if = "Option::is_none")]
    pub drain: Option<Duration>,
}
