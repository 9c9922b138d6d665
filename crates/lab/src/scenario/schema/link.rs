//! The scenario schema's links: rate, delay, queue (DropTail or an AQM),
//! cut-offs, rate schedules, random loss, delivery traces.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use tput_cc::units::Rate;

use crate::scenario::serde_helpers::{human_duration, human_size};

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
    /// the scenario file ([`Scenario::from_toml_file`](super::Scenario::from_toml_file) resolves it).
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
