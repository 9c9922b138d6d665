//! The scenario schema: what a TOML/JSON scenario file holds.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tput_cc::ControllerSpec;
use tput_cc::units::Rate;

use tput_transport::{Direction, EvalSlot};

use super::serde_helpers::{eval_slot_serde, human_duration, human_size, spec_from_str, spec_to_str};
use crate::Error;
use tput_tcp::{self as tcp, Recovery, TcpConfig};

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

/// One link.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkSpec {
    /// Rate, e.g. `100Mbit/s`.
    pub rate: Rate,
    /// One-way propagation delay, e.g. `5ms`.
    #[serde(with = "human_duration")]
    pub delay: Duration,
    /// DropTail capacity in packets (default 1000 when neither limit is given).
    #[serde(default)]
    pub queue_packets: Option<u32>,
    /// DropTail capacity in bytes (instead of packets).
    #[serde(default, with = "human_size")]
    pub queue_bytes: Option<u64>,
    /// Per-packet header overhead in bytes (default 28: IPv4 + UDP).
    #[serde(default)]
    pub overhead_bytes: Option<u32>,
    /// Periodic cut-off.
    #[serde(default)]
    pub cutoff: Option<CutoffSpec>,
    /// Rate changes at given times.
    #[serde(default)]
    pub rate_schedule: Vec<RateChange>,
    /// Packet loss probability, 0..1.
    #[serde(default)]
    pub loss: Option<f64>,
    /// Bit error rate, 0..1.
    #[serde(default)]
    pub ber: Option<f64>,
    /// A packet-delivery trace in Mahimahi's format ([`tput_netsim::DeliveryTrace`]):
    /// the link delivers at the trace's opportunities instead of at `rate`
    /// (which the reverse direction keeps). A relative path is relative to
    /// the scenario file ([`Scenario::from_toml_file`] resolves it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<std::path::PathBuf>,
    /// Queue discipline (default DropTail), e.g.
    /// `queue = { kind = "fq_codel", target = "5ms", ecn = true }`; its
    /// limit is `queue_packets` / `queue_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<Box<QueueSpec>>,
}

/// The `queue` table of a link: a queue discipline and its parameters.
/// Every parameter is optional (the defaults are the RFC's or ns-2's); a
/// parameter of another discipline is an error.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct QueueSpec {
    /// `drop_tail`, `codel` (RFC 8289), `fq_codel` (RFC 8290) or `red`
    /// (Floyd and Jacobson 1993, as ns-2).
    pub kind: QueueKind,
    /// CoDel / FQ-CoDel: target sojourn time (default 5 ms).
    #[serde(default, with = "human_duration::option", skip_serializing_if = "Option::is_none")]
    pub target: Option<Duration>,
    /// CoDel / FQ-CoDel: interval (default 100 ms).
    #[serde(default, with = "human_duration::option", skip_serializing_if = "Option::is_none")]
    pub interval: Option<Duration>,
    /// Mark ECN-capable packets CE instead of dropping them (default: on for
    /// `fq_codel`, off for `codel` and `red`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// FQ-CoDel: DRR quantum, bytes (default 1514).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quantum: Option<u32>,
    /// FQ-CoDel: number of flow queues (default 1024).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flows: Option<u32>,
    /// RED: minimum threshold, packets (default 5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_th: Option<f64>,
    /// RED: maximum threshold, packets (default 15).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_th: Option<f64>,
    /// RED: drop probability at `max_th` (default 0.1).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_p: Option<f64>,
    /// RED: weight of the average queue (default 0.002).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weight: Option<f64>,
    /// RED: gentle mode (default on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gentle: Option<bool>,
    /// RED: byte mode (default off: packet mode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes: Option<bool>,
    /// RED: mean packet size in wire bytes (default 1000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mean_packet: Option<u32>,
    /// RED: wait between drops (default on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub wait: Option<bool>,
}

/// A queue discipline's name in a scenario.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum QueueKind {
    /// A FIFO that drops arrivals when full (the default).
    #[default]
    DropTail,
    /// CoDel, RFC 8289.
    Codel,
    /// FQ-CoDel, RFC 8290.
    FqCodel,
    /// RED, Floyd and Jacobson 1993 (ns-2's `Queue/RED`).
    Red,
}

impl QueueSpec {
    /// A queue table of `kind` with every parameter at its default.
    pub fn new(kind: QueueKind) -> Self {
        QueueSpec {
            kind,
            ..QueueSpec::default()
        }
    }

    /// The simulator's discipline; the error names the bad key (`queue.KEY: ...`).
    pub fn discipline(&self) -> Result<tput_netsim::QueueDiscipline, String> {
        use tput_netsim::{CodelConfig, FqCodelConfig, QueueDiscipline, RedConfig};
        let kind = match self.kind {
            QueueKind::DropTail => "drop_tail",
            QueueKind::Codel => "codel",
            QueueKind::FqCodel => "fq_codel",
            QueueKind::Red => "red",
        };
        let codel_keys = [("target", self.target.is_some()), ("interval", self.interval.is_some())];
        let fq_keys = [("quantum", self.quantum.is_some()), ("flows", self.flows.is_some())];
        let red_keys = [
            ("min_th", self.min_th.is_some()),
            ("max_th", self.max_th.is_some()),
            ("max_p", self.max_p.is_some()),
            ("weight", self.weight.is_some()),
            ("gentle", self.gentle.is_some()),
            ("bytes", self.bytes.is_some()),
            ("mean_packet", self.mean_packet.is_some()),
            ("wait", self.wait.is_some()),
        ];
        let allowed: &[&str] = match self.kind {
            QueueKind::DropTail => &[],
            QueueKind::Codel => &["target", "interval", "ecn"],
            QueueKind::FqCodel => &["target", "interval", "ecn", "quantum", "flows"],
            QueueKind::Red => &[
                "min_th",
                "max_th",
                "max_p",
                "weight",
                "gentle",
                "bytes",
                "mean_packet",
                "wait",
                "ecn",
            ],
        };
        let ecn_key = [("ecn", self.ecn.is_some())];
        let given = codel_keys.iter().chain(&fq_keys).chain(&red_keys).chain(&ecn_key);
        for (key, set) in given {
            if *set && !allowed.contains(key) {
                return Err(format!("queue.{key}: not a parameter of kind = \"{kind}\""));
            }
        }
        let d = match self.kind {
            QueueKind::DropTail => QueueDiscipline::DropTail,
            QueueKind::Codel => {
                let mut c = CodelConfig::default();
                c = c.with_ecn(self.ecn.unwrap_or(c.ecn));
                c = c.with_target(self.target.unwrap_or(c.target));
                QueueDiscipline::Codel(c.with_interval(self.interval.unwrap_or(c.interval)))
            }
            QueueKind::FqCodel => {
                let mut c = FqCodelConfig::default();
                c = c.with_ecn(self.ecn.unwrap_or(c.ecn));
                c = c.with_target(self.target.unwrap_or(c.target));
                c = c.with_interval(self.interval.unwrap_or(c.interval));
                c = c.with_quantum(self.quantum.unwrap_or(c.quantum));
                QueueDiscipline::FqCodel(c.with_flows(self.flows.unwrap_or(c.flows)))
            }
            QueueKind::Red => {
                let c = RedConfig::default();
                let c = c
                    .with_thresholds(self.min_th.unwrap_or(c.min_th), self.max_th.unwrap_or(c.max_th))
                    .with_max_p(self.max_p.unwrap_or(c.max_p))
                    .with_weight(self.weight.unwrap_or(c.weight))
                    .with_gentle(self.gentle.unwrap_or(c.gentle))
                    .with_bytes(self.bytes.unwrap_or(c.bytes))
                    .with_mean_packet(self.mean_packet.unwrap_or(c.mean_packet))
                    .with_wait(self.wait.unwrap_or(c.wait))
                    .with_ecn(self.ecn.unwrap_or(c.ecn));
                QueueDiscipline::Red(c)
            }
        };
        d.validate().map_err(|e| e.to_string())?;
        Ok(d)
    }
}

impl LinkSpec {
    /// A link of `rate` and one-way `delay` with the defaults: a 1000-packet
    /// DropTail queue, 28 bytes of overhead, no impairment.
    pub fn new(rate: Rate, delay: Duration) -> Self {
        Self {
            rate,
            delay,
            queue_packets: None,
            queue_bytes: None,
            overhead_bytes: None,
            cutoff: None,
            rate_schedule: Vec::new(),
            loss: None,
            ber: None,
            trace: None,
            queue: None,
        }
    }

    /// The same link with queue discipline `queue`.
    pub fn with_queue(mut self, queue: QueueSpec) -> Self {
        self.queue = Some(Box::new(queue));
        self
    }

    /// The same link with a DropTail queue of `packets`.
    pub fn with_queue_packets(mut self, packets: u32) -> Self {
        self.queue_packets = Some(packets);
        self
    }
}

/// A periodic cut-off (seed 001).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CutoffSpec {
    /// Period, e.g. `1ms`.
    #[serde(with = "human_duration")]
    pub period: Duration,
    /// Connected share of each period, in (0, 1].
    pub connected: f64,
    /// Start of the first connected interval.
    #[serde(default, with = "human_duration::option")]
    pub phase: Option<Duration>,
    /// `drop`, `hold`, `hold_abort` or `pause`.
    pub mode: CutModeSpec,
    /// With `pause`: how long before the cut the transmitter stops (default:
    /// one 1500-byte frame at the link's slowest rate).
    #[serde(default, with = "human_duration::option")]
    pub pause_lead: Option<Duration>,
}

/// What happens to traffic during a cut.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CutModeSpec {
    /// Arrivals are discarded; a packet on the wire is lost.
    Drop,
    /// Packets wait in the queue; the switch starts a packet only if it
    /// ends before the next cut (a guard interval), so nothing is lost.
    Hold,
    /// Packets wait in the queue, but the cut is not announced: a packet on
    /// the wire when it begins is lost.
    HoldAbort,
    /// The transmitter stops just before the cut (802.3x PAUSE).
    Pause,
}

/// A scheduled rate change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RateChange {
    /// When.
    #[serde(with = "human_duration")]
    pub at: Duration,
    /// The new rate.
    pub rate: Rate,
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

/// The transport of a flow group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Transport {
    /// Real QUIC connections (quinn-proto).
    #[default]
    Quic,
    /// The simulator's packet-level TCP model ([`tput_tcp`]).
    Tcp,
}

impl Transport {
    fn is_quic(&self) -> bool {
        *self == Transport::Quic
    }
}

/// Delayed ACKs of a TCP sink: `true` (a 100 ms timer), `false`, or the timer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum DelayedAck {
    /// On with [`tcp::DEFAULT_DELAYED_ACK`], or off.
    Switch(bool),
    /// On with this timer.
    #[serde(with = "human_duration")]
    Timer(Duration),
}

/// The `[flows.tcp]` table: parameters of the TCP model (every key optional).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// `reno`, `newreno` (default), `sack` or `gbn`.
    #[serde(default)]
    pub recovery: Option<Recovery>,
    /// Minimum retransmission timeout (default 200 ms).
    #[serde(default, with = "human_duration::option")]
    pub min_rto: Option<Duration>,
    /// Delayed ACKs at the sink (default off).
    #[serde(default)]
    pub delayed_ack: Option<DelayedAck>,
    /// Payload bytes per segment (default 1000).
    #[serde(default, with = "human_size")]
    pub segment: Option<u64>,
    /// Receive window advertised by the sink (default 16 MiB).
    #[serde(default, with = "human_size")]
    pub receive_window: Option<u64>,
    /// SACK blocks from the sink (default: on exactly with `recovery = "sack"`).
    #[serde(default)]
    pub sack: Option<bool>,
    /// Limited Transmit, RFC 3042 (default off; ns-2's `singledup_` is on).
    #[serde(default)]
    pub limited_transmit: Option<bool>,
    /// Window scaling, RFC 7323 §2 (default on). Off, the window field of
    /// the TCP header (16 bits, RFC 9293 §3.1) caps `receive_window` at
    /// [`MAX_UNSCALED_WINDOW`] bytes: a larger one is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub window_scaling: Option<bool>,
    /// RTO before the first RTT sample (default 1 s, RFC 6298 §2.1; ns-2: 3 s).
    #[serde(default, with = "human_duration::option", skip_serializing_if = "Option::is_none")]
    pub initial_rto: Option<Duration>,
    /// Whether a fast retransmit restarts the retransmission timer (default
    /// on, as ns-2 and Linux; RFC 6298 §5 does not).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_timer_on_fast_retransmit: Option<bool>,
    /// When the controller's recovery period ends: `tcp` (default, with fast
    /// recovery) or `rfc9002` (one round trip later, QUIC's rule).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub controller_recovery: Option<tcp::ControllerRecovery>,
    /// Pace segments at Linux's rate (default off, as ns-2).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<bool>,
    /// RFC 7323 timestamps (default off, as ns-2; on in Linux): RTT samples
    /// from every ACK that advances the window, retransmissions included.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
}

/// Largest receive window without window scaling (RFC 9293 §3.1: a 16-bit field).
pub const MAX_UNSCALED_WINDOW: u64 = 65_535;

impl TcpSpec {
    /// The model's configuration; the error names the bad key.
    pub fn config(&self) -> Result<TcpConfig, String> {
        let d = TcpConfig::default();
        let recovery = self.recovery.unwrap_or(d.recovery);
        let segment = match self.segment {
            None => d.segment,
            Some(b) => u32::try_from(b).map_err(|_| format!("segment: {b} bytes is too large"))?,
        };
        if self.window_scaling == Some(false)
            && let Some(w) = self.receive_window.filter(|&w| w > MAX_UNSCALED_WINDOW)
        {
            return Err(format!(
                "receive_window: {w} bytes needs window scaling (RFC 7323 §2); without it at most {MAX_UNSCALED_WINDOW}"
            ));
        }
        if self.window_scaling == Some(false) && self.receive_window.is_none() {
            return Err(format!(
                "window_scaling: off needs an explicit receive_window of at most {MAX_UNSCALED_WINDOW} bytes"
            ));
        }
        let c = TcpConfig {
            segment,
            recovery,
            min_rto: self.min_rto.unwrap_or(d.min_rto),
            delayed_ack: match self.delayed_ack {
                None | Some(DelayedAck::Switch(false)) => None,
                Some(DelayedAck::Switch(true)) => Some(tcp::DEFAULT_DELAYED_ACK),
                Some(DelayedAck::Timer(t)) => Some(t),
            },
            sack: self.sack.unwrap_or(recovery == Recovery::Sack),
            receive_window: self.receive_window.unwrap_or(d.receive_window),
            limited_transmit: self.limited_transmit.unwrap_or(d.limited_transmit),
            initial_rto: self.initial_rto.unwrap_or(d.initial_rto),
            restart_timer_on_fast_retransmit: self
                .restart_timer_on_fast_retransmit
                .unwrap_or(d.restart_timer_on_fast_retransmit),
            controller_recovery: self.controller_recovery.unwrap_or(d.controller_recovery),
            pacing: self.pacing.unwrap_or(d.pacing),
            timestamps: self.timestamps.unwrap_or(d.timestamps),
            ..d
        };
        c.validate().map_err(|e| e.to_string())?;
        Ok(c)
    }
}

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
