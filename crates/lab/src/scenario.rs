//! Declarative simulated experiments: a topology, groups of QUIC flows, a
//! duration and a seed, run in `tput-netsim` with the same nodes as live
//! transfers. A [`Scenario`] deserializes from TOML/JSON (every key
//! documented in `docs/scenarios.md`; unknown keys are errors), and
//! [`run`] is a pure function of it: same scenario, same result, bit for bit.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use tput_cc::units::{Rate, format_duration};
use tput_cc::{Aggregate, BandwidthSource, ControllerSpec};
use tput_netsim::{
    Addr, Chain, CutMode, CutOff, Dumbbell, DumbbellConfig, FileArrivals, FlowSample, LinkConfig, LinkId, LinkStats,
    QueueLimit, QueueSample, RandomLoss, RateStep, Rng, SimTime, Simulator,
};

use tput_transport::{
    Direction, EvalSlot, Identity, IntervalStats, Node, NodeConfig, ServerTrust, SimOptions, SlotStats,
    TransferOutcome, TransferSpec,
};

use crate::Error;
use crate::files::{FileStats, TcpFileClient, TcpFileServer, tcp_file_stats};
use crate::host::{CcSample, FileWorkload, OracleBandwidth, QuicHost};
use crate::tcp::{self, Amount, Recovery, TcpConfig, TcpSender, TcpSink, TcpStats, TcpTransfer};

/// Human-readable durations (`250us`, `5ms`, `2s`) in serde.
pub(crate) mod human_duration {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};
    use tput_cc::units::{format_duration, parse_duration};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format_duration(*d))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        let text = String::deserialize(d)?;
        parse_duration(&text).map_err(serde::de::Error::custom)
    }

    pub mod option {
        use super::*;

        pub fn serialize<S: Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
            match d {
                Some(d) => super::serialize(d, s),
                None => s.serialize_none(),
            }
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Duration>, D::Error> {
            super::deserialize(d).map(Some)
        }
    }
}

/// Human-readable sizes (`1000B`, `64KiB`, `5Mbit`) in serde.
mod human_size {
    use serde::{Deserialize, Deserializer, Serializer};
    use tput_cc::units::parse_size;

    pub fn serialize<S: Serializer>(v: &Option<u64>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(b) => s.serialize_str(&format!("{b}B")),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
        let text = String::deserialize(d)?;
        parse_size(&text).map(Some).map_err(serde::de::Error::custom)
    }

    pub mod required {
        use serde::{Deserializer, Serializer};

        pub fn serialize<S: Serializer>(v: &u64, s: S) -> Result<S::Ok, S::Error> {
            super::serialize(&Some(*v), s)
        }

        pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
            super::deserialize(d).map(|v| v.unwrap_or_default())
        }
    }
}

/// `Option<EvalSlot>` as `"1s"` / `"32rtt"` in serde.
mod eval_slot_serde {
    use serde::{Deserialize, Deserializer, Serializer};

    use tput_cc::EvalSlot;

    pub fn serialize<S: Serializer>(v: &Option<EvalSlot>, s: S) -> Result<S::Ok, S::Error> {
        match v {
            Some(e) => s.serialize_str(&e.to_string()),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<EvalSlot>, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map(Some).map_err(serde::de::Error::custom)
    }
}

fn spec_from_str<'de, D: serde::Deserializer<'de>>(d: D) -> Result<ControllerSpec, D::Error> {
    let text = String::deserialize(d)?;
    text.parse().map_err(serde::de::Error::custom)
}

fn spec_to_str<S: serde::Serializer>(spec: &ControllerSpec, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&spec.to_string())
}

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
    /// number and the reason (validation is separate: [`validate`]).
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
        Self::parse_toml(&text).map_err(|(line, msg)| match line {
            Some(l) => Error::Invalid(format!("{}:{l}: {msg}", path.display())),
            None => Error::Invalid(format!("{}: {msg}", path.display())),
        })
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
        }
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
    /// their controllers' targets) through one shared [`Aggregate`]
    /// coordinator; the result reports the group's success judged on the sum
    /// ([`ScenarioResult::aggregates`]). Other controllers ignore it.
    #[serde(default)]
    pub aggregate: bool,
    /// `quic` (default) or `tcp` (the packet-level model of [`crate::tcp`]).
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
    /// The simulator's packet-level TCP model ([`crate::tcp`]).
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
            ..d
        };
        c.validate()?;
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
        }
    }

    /// With `count` application buffers of `size` bytes in flight (see [`FlowGroup::buffers`]).
    pub fn with_buffers(mut self, count: u32, size: u64) -> Self {
        self.buffers = Some(count);
        self.buffer_size = Some(size);
        self
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

    /// Coordinated through one [`Aggregate`] (see [`FlowGroup::aggregate`]).
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
    /// still running then count as unfinished ([`FileStats::unfinished`]).
    #[serde(default, with = "human_duration::option", skip_serializing_if = "Option::is_none")]
    pub drain: Option<Duration>,
}

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
    /// Seconds the flow was active: for each of its transfers, from the
    /// moment the receiver saw the request to its last verified byte, summed.
    pub active_secs: f64,
    /// Sender-side interval records of its (bulk) transfer.
    pub intervals: Vec<IntervalStats>,
    /// The sending controller's state at every change (window growth at most
    /// once per millisecond; the rule is on [`CcSample`]), absolute simulated
    /// time. Bulk uploads only: empty for downloads (whose controller runs on
    /// the server) and file workloads. Written to `cc.csv`, left out of
    /// `result.json`.
    #[serde(skip)]
    pub cc_trace: Vec<CcSample>,
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
    /// The forward bottleneck (the first hop of a chain).
    pub bottleneck: LinkStats,
    /// Every link's counters, in link-id order.
    pub links: Vec<LinkStats>,
    /// Queue-length samples of the forward bottleneck.
    pub queue: Vec<QueueSample>,
    /// Delivered bytes per flow per interval.
    pub delivered: Vec<FlowSample>,
    /// Hash of every simulator event: equal hashes, equal runs.
    pub trace_hash: u64,
    /// Packets that crossed a link.
    pub link_packets: u64,
    /// Simulated seconds, including the drain after `duration`.
    pub simulated_secs: f64,
    /// One entry per group with `aggregate = true`.
    pub aggregates: Vec<AggregateResult>,
    /// The links' counters over the measured window only (the drain left
    /// out): what utilisation and drop counts in reports are computed from.
    /// `bottleneck` and `links` above cover the whole run.
    #[serde(default)]
    pub window: MeasuredWindow,
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
    /// The forward bottleneck's counters at the end of the window
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
    /// Index of the group in [`Scenario::flows`].
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
    pub fn judge(group: usize, target_bps: f64, flows: &[&FlowResult]) -> Self {
        let common = flows.iter().map(|f| f.slots.len()).min().unwrap_or(0);
        let slot_throughput_bps: Vec<f64> = (0..common)
            .map(|i| flows.iter().map(|f| f.slots[i].throughput_bps).sum())
            .collect();
        let slots_met = slot_throughput_bps.iter().filter(|&&t| t >= target_bps).count();
        Self {
            group,
            flows: flows.len() as u32,
            target_bps,
            success_ratio: (target_bps > 0.0 && common > 0).then(|| slots_met as f64 / common as f64),
            slot_throughput_bps,
            slots_met,
        }
    }
}

/// The simulator's link for `l`, validated; errors name `what`.
pub fn link_config(l: &LinkSpec, what: &str) -> Result<LinkConfig, Error> {
    let bad = |why: String| Error::Invalid(format!("{what}: {why}"));
    let mut c = LinkConfig::new(l.rate.bits_per_sec(), l.delay);
    c = c.with_queue(match (l.queue_packets, l.queue_bytes) {
        (Some(_), Some(_)) => return Err(bad("give queue_packets or queue_bytes, not both".into())),
        (Some(p), None) => QueueLimit::Packets(p as _),
        (None, Some(b)) => QueueLimit::Bytes(b as _),
        (None, None) => QueueLimit::Packets(1000),
    });
    if let Some(o) = l.overhead_bytes {
        c = c.with_overhead(o);
    }
    if let Some(cut) = &l.cutoff {
        let mode = match cut.mode {
            CutModeSpec::Drop => CutMode::Drop,
            CutModeSpec::Hold => CutMode::Hold,
            CutModeSpec::HoldAbort => CutMode::HoldAbort,
            CutModeSpec::Pause => CutMode::Pause,
        };
        let mut co = CutOff::new(cut.period, cut.connected, mode);
        if let Some(p) = cut.phase {
            co = co.with_phase(p);
        }
        if let Some(lead) = cut.pause_lead {
            co = co.with_pause_lead(lead);
        }
        c = c.with_cutoff(co);
    }
    if !l.rate_schedule.is_empty() {
        c = c.with_rate_schedule(
            l.rate_schedule
                .iter()
                .map(|r| RateStep {
                    at: SimTime::from_duration(r.at),
                    rate_bps: r.rate.bits_per_sec(),
                })
                .collect(),
        );
    }
    match (l.loss, l.ber) {
        (Some(_), Some(_)) => return Err(bad("give loss or ber, not both".into())),
        (Some(p), None) => c = c.with_loss(RandomLoss::PacketLoss(p)),
        (None, Some(b)) => c = c.with_loss(RandomLoss::BitErrorRate(b)),
        (None, None) => {}
    }
    c.validate().map_err(|e| bad(e.to_string()))?;
    Ok(c)
}

/// Check a scenario without running it; the error names the bad value.
pub fn validate(s: &Scenario) -> Result<(), Error> {
    if s.duration.is_zero() {
        return Err(Error::Invalid("duration must be positive".into()));
    }
    if s.interval.is_zero() {
        return Err(Error::Invalid("interval must be positive".into()));
    }
    if s.mtu < 1200 {
        return Err(Error::Invalid(format!("mtu {} is below QUIC's minimum of 1200", s.mtu)));
    }
    if s.flows.is_empty() {
        return Err(Error::Invalid("no flows".into()));
    }
    for (i, g) in s.flows.iter().enumerate() {
        let what = format!("flows[{i}]");
        if g.count == 0 {
            return Err(Error::Invalid(format!("{what}: count must be at least 1")));
        }
        let start = g.start.unwrap_or_default();
        let stop = g.stop.unwrap_or(s.duration);
        if stop <= start + g.effective_start_jitter() {
            return Err(Error::Invalid(format!(
                "{what}: stop must come after start + start_jitter ({} + {})",
                format_duration(start),
                format_duration(g.effective_start_jitter())
            )));
        }
        if stop > s.duration {
            return Err(Error::Invalid(format!("{what}: stop is after the scenario's duration")));
        }
        if g.aggregate && matches!(g.eval_slot, Some(EvalSlot::Rtts(_))) {
            // Each flow measures its own handshake RTT: RTT-based slots differ
            // in length between flows and could not be summed slot by slot.
            return Err(Error::Invalid(format!(
                "{what}: an aggregate group needs eval_slot as a duration (e.g. \"1s\"), not in RTTs"
            )));
        }
        if g.aggregate && g.files.is_some() {
            return Err(Error::Invalid(format!(
                "{what}: aggregate and files exclude each other"
            )));
        }
        if let Some(b) = g.app_buffers() {
            b.check().map_err(|e| Error::Invalid(format!("{what}.buffers: {e}")))?;
            if g.transport == Transport::Tcp {
                return Err(Error::Invalid(format!(
                    "{what}.buffers: QUIC only (the TCP model's sender always has data)"
                )));
            }
            if g.direction == Some(Direction::Download) {
                return Err(Error::Invalid(format!("{what}.buffers: uploads only")));
            }
        } else if g.buffer_size.is_some() {
            return Err(Error::Invalid(format!("{what}.buffer_size: needs buffers")));
        }
        if g.receive_window == Some(0) {
            return Err(Error::Invalid(format!("{what}.receive_window: must be positive")));
        }
        if g.receive_window.is_some() && g.transport == Transport::Tcp {
            return Err(Error::Invalid(format!(
                "{what}.receive_window: QUIC only (use tcp.receive_window)"
            )));
        }
        if g.tcp.is_some() && g.transport != Transport::Tcp {
            return Err(Error::Invalid(format!("{what}.tcp: needs transport = \"tcp\"")));
        }
        if g.transport == Transport::Tcp {
            let refuse = |key: &str, why: &str| Err(Error::Invalid(format!("{what}.{key}: {why}")));
            if g.direction == Some(Direction::Download) {
                return refuse("direction", "transport = \"tcp\" runs uploads only");
            }
            if g.rate_limit.is_some() {
                return refuse("rate_limit", "not supported with transport = \"tcp\" yet");
            }
            if matches!(g.eval_slot, Some(EvalSlot::Rtts(_))) {
                return refuse(
                    "eval_slot",
                    "RTT-based slots use QUIC's handshake RTT; give a duration with transport = \"tcp\"",
                );
            }
            g.tcp
                .clone()
                .unwrap_or_default()
                .config()
                .map_err(|e| Error::Invalid(format!("{what}.tcp.{e}")))?;
        }
        if let Some(f) = &g.files {
            if g.bytes.is_some() {
                return Err(Error::Invalid(format!("{what}: files and bytes exclude each other")));
            }
            if f.mean_gap.is_zero() || f.mean_size == 0 || f.shape.is_nan() || f.shape <= 1.0 {
                return Err(Error::Invalid(format!(
                    "{what}.files: mean_gap and mean_size must be positive, shape > 1"
                )));
            }
            if f.drain.is_some_and(|d| d > MAX_FILES_DRAIN) {
                return Err(Error::Invalid(format!(
                    "{what}.files.drain: {} is longer than the limit of 1h",
                    format_duration(f.drain.unwrap_or_default())
                )));
            }
        }
    }
    match &s.topology {
        TopologySpec::Dumbbell {
            bottleneck,
            access,
            reverse_bottleneck,
        } => {
            link_config(bottleneck, "topology.bottleneck")?;
            link_config(access, "topology.access")?;
            if let Some(r) = reverse_bottleneck {
                link_config(r, "topology.reverse_bottleneck")?;
            }
        }
        TopologySpec::Chain { hops } => {
            if hops.is_empty() {
                return Err(Error::Invalid("topology.hops: a chain needs at least one link".into()));
            }
            for (i, h) in hops.iter().enumerate() {
                link_config(h, &format!("topology.hops[{i}]"))?;
            }
        }
    }
    Ok(())
}

/// Endpoints of every flow and the link to watch.
struct Net {
    sim: Simulator,
    pairs: Vec<(Addr, Addr)>,
    bottleneck: LinkId,
}

fn build(s: &Scenario, flows: usize) -> Result<Net, Error> {
    match &s.topology {
        TopologySpec::Dumbbell {
            bottleneck,
            access,
            reverse_bottleneck,
        } => {
            let d = Dumbbell::build(&DumbbellConfig {
                pairs: flows,
                access: link_config(access, "topology.access")?,
                bottleneck: link_config(bottleneck, "topology.bottleneck")?,
                reverse_bottleneck: reverse_bottleneck
                    .as_ref()
                    .map(|r| link_config(r, "topology.reverse_bottleneck"))
                    .transpose()?,
            })
            .map_err(|e| Error::Invalid(e.to_string()))?;
            let pairs = d
                .senders
                .iter()
                .zip(&d.receivers)
                .map(|(&a, &b)| (Addr::new(a, 5000), Addr::new(b, 4433)));
            Ok(Net {
                pairs: pairs.collect(),
                bottleneck: d.bottleneck,
                sim: Simulator::new(d.topology, s.seed),
            })
        }
        TopologySpec::Chain { hops } => {
            let cfgs: Vec<LinkConfig> = hops
                .iter()
                .enumerate()
                .map(|(i, h)| link_config(h, &format!("topology.hops[{i}]")))
                .collect::<Result<_, _>>()?;
            let c = Chain::build(&cfgs).map_err(|e| Error::Invalid(e.to_string()))?;
            let (a, b) = (c.nodes[0], *c.nodes.last().expect("a chain has nodes"));
            let pairs = (0..flows).map(|i| (Addr::new(a, 5000 + i as u16), Addr::new(b, 4433 + i as u16)));
            Ok(Net {
                pairs: pairs.collect(),
                bottleneck: c.forward[0],
                sim: Simulator::new(c.topology, s.seed),
            })
        }
    }
}

/// What a client host recorded: outcomes, interval records, start errors, controller traces.
type HostRecords = (
    Vec<TransferOutcome>,
    Vec<(u64, IntervalStats)>,
    Vec<String>,
    Vec<(u64, Vec<CcSample>)>,
);

fn take_host(sim: &mut Simulator, id: tput_netsim::HostId) -> HostRecords {
    match sim.host_mut::<QuicHost>(id) {
        Some(h) => (
            h.outcomes().to_vec(),
            h.intervals().to_vec(),
            h.start_errors().to_vec(),
            h.take_cc_traces(),
        ),
        None => Default::default(),
    }
}

/// The hosts of one flow: a QUIC client, or a TCP sender and its sink, or
/// the TCP model's file client and server.
#[derive(Debug, Clone, Copy)]
enum FlowHosts {
    Quic(tput_netsim::HostId),
    Tcp(tput_netsim::HostId, tput_netsim::HostId),
    TcpFiles(tput_netsim::HostId, tput_netsim::HostId),
}

/// Files a QUIC client host started.
fn files_started(sim: &Simulator, id: tput_netsim::HostId) -> u64 {
    sim.host::<QuicHost>(id).map_or(0, QuicHost::files_started)
}

/// The result of a TCP flow: goodput, slots and interval bytes as the sink
/// measured them, the rest from the sender.
fn tcp_result(
    sim: &Simulator,
    sender: tput_netsim::HostId,
    sink: tput_netsim::HostId,
    flow: u32,
    group: usize,
    g: &FlowGroup,
    start: Duration,
) -> FlowResult {
    let report = sim.host::<TcpSink>(sink).map(TcpSink::report).unwrap_or_default();
    let snd = sim.host::<TcpSender>(sender);
    let mut errors = Vec::new();
    if !snd.is_some_and(TcpSender::is_finished) {
        errors.push("the transfer did not finish within the drain time".into());
    }
    let mut intervals: Vec<IntervalStats> = snd.map(|s| s.intervals().to_vec()).unwrap_or_default();
    // Record i pairs with the sink's interval i; the last takes every later byte.
    let n = intervals.len();
    let mut counted = 0;
    for (i, rec) in intervals.iter_mut().enumerate() {
        let bytes = if i + 1 == n {
            report.bytes.saturating_sub(counted)
        } else {
            report.interval_bytes.get(i).copied().unwrap_or(0)
        };
        counted += bytes;
        rec.bytes = bytes;
        let secs = rec.end_secs - rec.start_secs;
        rec.goodput_bps = if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 };
    }
    FlowResult {
        flow,
        group,
        cc: g.cc.to_string(),
        bytes: report.bytes,
        start_secs: start.as_secs_f64(),
        active_secs: report.active_secs,
        intervals,
        cc_trace: snd.map(TcpSender::cc_trace).unwrap_or_default(),
        slots: report.slots,
        success_ratio: report.success_ratio,
        file_times: Vec::new(),
        files: None,
        errors,
        tcp: snd.map(|s| s.stats().clone()),
    }
}

/// How long after `duration` the simulation goes on so that transfers can
/// finish (their last bytes, the report, the close).
const DRAIN: Duration = Duration::from_secs(5);

/// Longest [`FilesSpec::drain`].
const MAX_FILES_DRAIN: Duration = Duration::from_secs(3600);

/// How to run a scenario, beyond what the scenario itself says; nothing
/// here but `write_ahead_to_credit` and `stall_probe` changes what the
/// simulation does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Write a qlog trace of every QUIC connection under this directory,
    /// one folder per flow (`flow-N/client-ID.sqlog`, `flow-N/server-ID.sqlog`),
    /// with virtual times.
    pub qlog_dir: Option<std::path::PathBuf>,
    /// Keep no controller traces: every [`FlowResult::cc_trace`] is empty
    /// (and `cc.csv` has no rows). A trace holds a sample per window change,
    /// up to one per millisecond of window growth: tens of samples per
    /// flow-second, most of a long many-flow run's memory. Everything else
    /// in the result is the same.
    pub no_cc_trace: bool,
    /// Encrypt 1-RTT packets for real (AES-128-GCM, as live). By default a
    /// simulation runs the real TLS handshake and then leaves packets in
    /// the clear with the same sizes ([`tput_transport::SimOptions::null_packet_protection`]):
    /// every metric is the same either way, and the run costs less CPU.
    pub real_packet_protection: bool,
    /// Senders write payload up to the receiver's flow-control credit
    /// instead of a few congestion windows ahead
    /// ([`tput_transport::SimOptions::write_ahead_to_credit`]): the same packets but for
    /// STREAM_DATA_BLOCKED/DATA_BLOCKED frames where the credit is reached,
    /// and more memory. For comparisons.
    pub write_ahead_to_credit: bool,
    /// Give every QUIC node the live nodes' stall probes
    /// ([`NodeConfig::stall_probe`]): a sender with nothing acknowledged for
    /// this long sends a packet past its window. Off by default, as in
    /// plain QUIC: in virtual time nothing jitters the probe timeouts, and
    /// a sender whose PTO is close to a multiple of a periodic cut-off's
    /// period over a power of two loses every doubled probe to a cut and
    /// stays silent until the idle timeout.
    pub stall_probe: Option<Duration>,
}

/// Run `s`; `progress` is called with the fraction of simulated time done,
/// every tenth of the scenario.
pub fn run(s: &Scenario, progress: impl FnMut(f64)) -> Result<ScenarioResult, Error> {
    run_with(s, &RunOptions::default(), progress)
}

/// [`run`] with [`RunOptions`].
pub fn run_with(s: &Scenario, options: &RunOptions, mut progress: impl FnMut(f64)) -> Result<ScenarioResult, Error> {
    validate(s)?;
    let total: usize = s.flows.iter().map(|g| g.count as usize).sum();
    if total > 60_000 {
        return Err(Error::Invalid(format!("{total} flows: at most 60000")));
    }
    let mut net = build(s, total)?;
    net.sim
        .set_sample_interval(s.interval)
        .map_err(|e| Error::Invalid(e.to_string()))?;
    net.sim
        .watch_queue(net.bottleneck)
        .map_err(|e| Error::Invalid(e.to_string()))?;

    // Flow ids are 1-based, in group order.
    let mut group_of = Vec::with_capacity(total);
    for (g, group) in s.flows.iter().enumerate() {
        group_of.extend(std::iter::repeat_n(g, group.count as usize));
    }
    let own: BTreeSet<u32> = group_of
        .iter()
        .enumerate()
        .filter(|&(_, &g)| {
            let gr = &s.flows[g];
            gr.oracle_own.unwrap_or(matches!(gr.cc, ControllerSpec::Guarantee(_)))
        })
        .map(|(i, _)| i as u32 + 1)
        .collect();
    let oracle: Option<Arc<dyn BandwidthSource>> = if own.is_empty() {
        None
    } else {
        let h = net
            .sim
            .add_oracle(net.bottleneck, own.iter().copied(), s.oracle_window)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        Some(Arc::new(OracleBandwidth(h)))
    };

    let aggregates: Vec<Option<Aggregate>> = s.flows.iter().map(|g| g.aggregate.then(Aggregate::new)).collect();
    let epoch = Instant::now();
    let identity = Identity::self_signed_from_seed(&["localhost"], s.seed)?;
    let trust = ServerTrust::Root(identity.cert_der().to_vec());
    let sim_options = |seed: u64| SimOptions {
        seed: Some(seed),
        null_packet_protection: !options.real_packet_protection,
        write_ahead_to_credit: options.write_ahead_to_credit,
    };
    let node_config = |flow: u32| -> Result<NodeConfig, Error> {
        let qlog_dir = match &options.qlog_dir {
            Some(dir) => {
                let d = dir.join(format!("flow-{flow}"));
                std::fs::create_dir_all(&d)
                    .map_err(|e| Error::Run(format!("creating the qlog directory {}: {e}", d.display())))?;
                Some(d)
            }
            None => None,
        };
        Ok(NodeConfig {
            mtu: s.mtu,
            mtu_discovery: false,
            idle_timeout: Duration::from_secs(30),
            qlog_dir,
            stall_probe: options.stall_probe,
            ..NodeConfig::default()
        })
    };
    let mut hosts = Vec::with_capacity(total);
    let mut starts = Vec::with_capacity(total);
    for (i, &(src, dst)) in net.pairs.iter().enumerate() {
        let g = &s.flows[group_of[i]];
        let flow = i as u32 + 1;
        let jitter = g.effective_start_jitter();
        let jitter = if jitter.is_zero() {
            Duration::ZERO
        } else {
            let max = u64::try_from(jitter.as_nanos()).unwrap_or(u64::MAX);
            Duration::from_nanos(Rng::derive(s.seed, 3_000_000 + u64::from(flow)).below(max))
        };
        let start = g.start.unwrap_or_default() + jitter;
        starts.push(start);
        let stop = g.stop.unwrap_or(s.duration);
        // Seeds per endpoint, derived from the scenario's.
        let seed = Rng::derive(s.seed, 1_000_000 + u64::from(flow)).next_u64();
        let direction = g.direction.unwrap_or(Direction::Upload);
        let mut server_cfg = node_config(flow)?;
        server_cfg.receive_window = g.receive_window;
        server_cfg.server_bandwidth = oracle.clone();
        // Only the sending end's controller joins the group: quinn builds one
        // on the receiving end too, which must not count as a member.
        let aggregate = aggregates[group_of[i]].clone();
        if g.transport == Transport::Tcp {
            let cfg = g
                .tcp
                .clone()
                .unwrap_or_default()
                .config()
                .map_err(|e| Error::Invalid(format!("flows[{}].tcp.{e}", group_of[i])))?;
            let slot = match g.eval_slot {
                Some(EvalSlot::Time(d)) => d,
                _ => Duration::from_secs(1),
            };
            if let Some(f) = &g.files {
                // A TCP connection per file, with the same arrivals as QUIC's
                // for the same seed and flow (the comparison is paired).
                let arrivals = FileArrivals::new(
                    Rng::derive(s.seed, 2_000_000 + u64::from(flow)),
                    SimTime::from_duration(start),
                    f.mean_gap.as_secs_f64(),
                    f.mean_size as f64,
                    f.shape,
                )
                .map_err(|e| Error::Invalid(e.to_string()))?;
                let server = net
                    .sim
                    .attach(dst, TcpFileServer::new(cfg.clone()))
                    .map_err(|e| Error::Invalid(e.to_string()))?;
                let client = TcpFileClient::new(
                    cfg,
                    g.cc.clone(),
                    oracle.clone(),
                    epoch,
                    dst,
                    flow,
                    arrivals,
                    SimTime::from_duration(stop),
                );
                let client = net.sim.attach(src, client).map_err(|e| Error::Invalid(e.to_string()))?;
                hosts.push(FlowHosts::TcpFiles(client, server));
                continue;
            }
            let target_bps = g.target.map_or(0.0, |t| t.bits_per_sec() as f64);
            let sink = TcpSink::new(cfg.clone(), s.interval, slot, target_bps);
            let sink_id = net.sim.attach(dst, sink).map_err(|e| Error::Invalid(e.to_string()))?;
            let cc =
                g.cc.for_payload_acks()
                    .build_in(cfg.segment as u16, oracle.clone(), aggregate.as_ref());
            let amount = match g.bytes {
                Some(b) => Amount::Bytes(b),
                None => Amount::Until(SimTime::from_duration(stop)),
            };
            let transfer = TcpTransfer {
                dst,
                flow,
                start: SimTime::from_duration(start),
                amount,
                interval: s.interval,
            };
            let mut sender = TcpSender::new(cfg, cc, epoch, transfer);
            if options.no_cc_trace {
                sender = sender.without_cc_trace();
            }
            let sender_id = net.sim.attach(src, sender).map_err(|e| Error::Invalid(e.to_string()))?;
            hosts.push(FlowHosts::Tcp(sender_id, sink_id));
            continue;
        }
        if direction == Direction::Download {
            server_cfg.server_aggregate = aggregate.clone();
        }
        let server = Node::simulated(server_cfg, Some(&identity), sim_options(seed ^ 1))?;
        net.sim
            .attach(dst, QuicHost::new(server, epoch, trust.clone()))
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let spec = TransferSpec {
            direction,
            bytes: g.bytes,
            duration: if g.bytes.is_some() { None } else { Some(stop - start) },
            cc: g.cc.clone(),
            target: g.target,
            eval_slot: g.eval_slot.unwrap_or(EvalSlot::Time(Duration::from_secs(1))),
            interval: s.interval,
            rate_limit: g.rate_limit,
            flow,
            bandwidth: oracle.clone(),
            aggregate: if direction == Direction::Upload {
                aggregate
            } else {
                None
            },
            buffers: g.app_buffers(),
        };
        let mut client_cfg = node_config(flow)?;
        client_cfg.receive_window = g.receive_window;
        let mut client = QuicHost::new(
            Node::simulated(client_cfg, None, sim_options(seed ^ 2))?,
            epoch,
            trust.clone(),
        );
        if options.no_cc_trace {
            client = client.without_cc_traces();
        }
        match &g.files {
            None => client.schedule(SimTime::from_duration(start), dst, spec),
            Some(f) => {
                let arrivals = FileArrivals::new(
                    Rng::derive(s.seed, 2_000_000 + u64::from(flow)),
                    SimTime::from_duration(start),
                    f.mean_gap.as_secs_f64(),
                    f.mean_size as f64,
                    f.shape,
                )
                .map_err(|e| Error::Invalid(e.to_string()))?;
                let mut template = spec;
                template.interval = Duration::ZERO;
                client.set_files(FileWorkload {
                    arrivals,
                    until: SimTime::from_duration(stop),
                    template,
                    server: dst,
                });
            }
        }
        let client_id = net.sim.attach(src, client).map_err(|e| Error::Invalid(e.to_string()))?;
        hosts.push(FlowHosts::Quic(client_id));
    }

    let end = SimTime::from_duration(s.duration);
    let step = (s.duration / 10).max(Duration::from_millis(1));
    net.sim.run_until_with(end, step, |sim| {
        progress(sim.now().as_secs_f64() / s.duration.as_secs_f64())
    });
    let window = MeasuredWindow {
        end_secs: s.duration.as_secs_f64(),
        bottleneck: net.sim.link_stats(net.bottleneck),
        links: (0..net.sim.link_count())
            .map(|i| net.sim.link_stats(LinkId(i as u32)))
            .collect(),
    };
    let drain = s
        .flows
        .iter()
        .filter_map(|g| g.files.as_ref().and_then(|f| f.drain))
        .fold(DRAIN, Duration::max);
    net.sim.run_until(end + drain);
    progress(1.0);

    let mut flows = Vec::with_capacity(total);
    for (i, &fh) in hosts.iter().enumerate() {
        let g = &s.flows[group_of[i]];
        let client_id = match fh {
            FlowHosts::Quic(id) => id,
            FlowHosts::TcpFiles(client, server) => {
                let (Some(c), Some(sv)) = (
                    net.sim.host::<TcpFileClient>(client),
                    net.sim.host::<TcpFileServer>(server),
                ) else {
                    return Err(Error::Run(format!("flow {}: the TCP file hosts are gone", i + 1)));
                };
                let files = tcp_file_stats(c, sv);
                flows.push(FlowResult {
                    flow: i as u32 + 1,
                    group: group_of[i],
                    cc: g.cc.to_string(),
                    bytes: files.sizes.iter().sum(),
                    start_secs: starts[i].as_secs_f64(),
                    active_secs: files.transfer_secs.iter().sum(),
                    intervals: Vec::new(),
                    cc_trace: Vec::new(),
                    slots: Vec::new(),
                    success_ratio: None,
                    file_times: files.total_secs.clone(),
                    errors: Vec::new(),
                    files: Some(files),
                    tcp: None,
                });
                continue;
            }
            FlowHosts::Tcp(sender, sink) => {
                flows.push(tcp_result(
                    &net.sim,
                    sender,
                    sink,
                    i as u32 + 1,
                    group_of[i],
                    g,
                    starts[i],
                ));
                continue;
            }
        };
        let (client_out, intervals, mut errors, traces) = take_host(&mut net.sim, client_id);
        let mut bytes = 0;
        let mut active_secs = 0.0;
        let mut slots = Vec::new();
        let mut success_ratio = None;
        let mut file_times = Vec::new();
        let start_errors = errors.len() as u64;
        let mut files = g.files.as_ref().map(|_| FileStats {
            started: files_started(&net.sim, client_id),
            ..FileStats::default()
        });
        for o in &client_out {
            if let Some(e) = &o.error {
                if let Some(f) = &mut files {
                    // The server's connection limit (quinn-proto's CONNECTION_REFUSED).
                    if e.to_ascii_lowercase().contains("refused") {
                        f.refused += 1;
                    } else {
                        f.failed += 1;
                    }
                }
                errors.push(e.clone());
                continue;
            }
            if let Some(r) = &o.receiver {
                bytes += r.bytes;
                active_secs += r.duration_secs;
                if let Some(f) = &mut files {
                    file_times.push(o.elapsed_secs);
                    f.transfer_secs.push(r.duration_secs);
                    f.total_secs.push(o.elapsed_secs);
                    f.sizes.push(r.bytes);
                } else {
                    slots = r.slots.clone();
                    success_ratio = r.success_ratio;
                }
            }
        }
        if client_out.is_empty() && g.files.is_none() {
            errors.push("the transfer did not finish within the drain time".into());
        }
        if let Some(f) = &mut files {
            // Files that could not start at all failed; the rest never ended.
            f.failed += start_errors;
            f.unfinished = f.started.saturating_sub(client_out.len() as u64 + start_errors);
        }
        flows.push(FlowResult {
            flow: i as u32 + 1,
            group: group_of[i],
            cc: g.cc.to_string(),
            bytes,
            start_secs: starts[i].as_secs_f64(),
            active_secs,
            intervals: intervals.into_iter().map(|(_, r)| r).collect(),
            cc_trace: traces.into_iter().next().map(|(_, t)| t).unwrap_or_default(),
            slots,
            success_ratio,
            file_times,
            files,
            errors,
            tcp: None,
        });
    }
    let aggregates = s
        .flows
        .iter()
        .enumerate()
        .filter(|(_, g)| g.aggregate)
        .map(|(gi, g)| {
            let members: Vec<&FlowResult> = flows.iter().filter(|f| f.group == gi).collect();
            let target = g.target.map_or(0.0, |t| t.bits_per_sec() as f64 * f64::from(g.count));
            AggregateResult::judge(gi, target, &members)
        })
        .collect();
    Ok(ScenarioResult {
        aggregates,
        name: s.name.clone(),
        flows,
        bottleneck: net.sim.link_stats(net.bottleneck),
        links: (0..net.sim.link_count())
            .map(|i| net.sim.link_stats(LinkId(i as u32)))
            .collect(),
        queue: net.sim.queue_samples().to_vec(),
        delivered: net.sim.flow_samples().to_vec(),
        trace_hash: net.sim.trace_hash(),
        link_packets: net.sim.link_packets(),
        simulated_secs: net.sim.now().as_secs_f64(),
        window,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flow(group: usize, slots_bps: &[f64]) -> FlowResult {
        FlowResult {
            flow: 1,
            group,
            cc: "guarantee".into(),
            bytes: 0,
            start_secs: 0.0,
            active_secs: 0.0,
            intervals: Vec::new(),
            cc_trace: Vec::new(),
            slots: slots_bps
                .iter()
                .enumerate()
                .map(|(i, &t)| SlotStats {
                    index: i as u64,
                    start_secs: i as f64,
                    bytes: (t / 8.0) as u64,
                    throughput_bps: t,
                    met: false,
                })
                .collect(),
            success_ratio: None,
            file_times: Vec::new(),
            files: None,
            errors: Vec::new(),
            tcp: None,
        }
    }

    #[test]
    fn the_controller_trace_shows_every_reduction() {
        let link = LinkSpec::new("20Mbit/s".parse().unwrap(), Duration::from_millis(10)).with_queue_packets(20);
        let access = LinkSpec::new("1Gbit/s".parse().unwrap(), Duration::from_millis(1));
        let mut download = FlowGroup::new("newreno".parse().unwrap());
        download.direction = Some(Direction::Download);
        let mut s = Scenario::new(
            Duration::from_secs(4),
            TopologySpec::dumbbell(link, access),
            vec![FlowGroup::new("newreno".parse().unwrap()), download],
        );
        s.interval = Duration::from_millis(500);
        let r = run(&s, |_| {}).unwrap();
        let up = &r.flows[0];
        assert!(up.errors.is_empty(), "{:?}", up.errors);
        let t = &up.cc_trace;
        assert!(!up.intervals.is_empty());
        assert!(
            t.len() > 10 * up.intervals.len(),
            "{} samples, {} intervals",
            t.len(),
            up.intervals.len()
        );
        assert!(t.windows(2).all(|w| w[0].time_secs <= w[1].time_secs), "in time order");
        assert!(t.iter().all(|c| c.time_secs <= r.simulated_secs && c.k.is_none()));
        let reductions = t.windows(2).filter(|w| w[1].cwnd_bytes < w[0].cwnd_bytes).count();
        assert!(reductions >= 1, "no window reduction in {} samples", t.len());
        assert!(t.iter().any(|c| c.ssthresh_bytes.is_some()), "a loss sets ssthresh");
        // Pure growth is kept at most once per millisecond.
        for w in t.windows(3) {
            let grows =
                |a: &CcSample, b: &CcSample| b.cwnd_bytes > a.cwnd_bytes && a.ssthresh_bytes == b.ssthresh_bytes;
            if grows(&w[0], &w[1]) && grows(&w[1], &w[2]) {
                assert!(
                    w[2].time_secs - w[0].time_secs >= crate::host::TRACE_MIN_GAP_SECS - 1e-12,
                    "{w:?}"
                );
            }
        }
        // Downloads are not traced (their controller is on the server) and run as before.
        assert!(r.flows[1].cc_trace.is_empty());
        assert!(r.flows[1].errors.is_empty() && r.flows[1].bytes > 0, "{:?}", r.flows[1]);
    }

    #[test]
    fn a_group_is_judged_on_the_sum_of_its_common_slots() {
        let a = flow(0, &[6e6, 2e6, 5e6, 9e6]);
        let b = flow(0, &[5e6, 7e6, 4e6]);
        let r = AggregateResult::judge(0, 10e6, &[&a, &b]);
        // Slot 3 exists for `a` only: left out.
        assert_eq!(r.slot_throughput_bps, [11e6, 9e6, 9e6]);
        assert_eq!(r.slots_met, 1);
        assert_eq!(r.success_ratio, Some(1.0 / 3.0));
        assert_eq!(r.flows, 2);
        // No target, or no slot: no ratio.
        assert_eq!(AggregateResult::judge(0, 0.0, &[&a]).success_ratio, None);
        assert_eq!(AggregateResult::judge(0, 1e6, &[]).success_ratio, None);
    }
}
