//! A node's settings, a simulation's switches, and a transfer's spec.

use std::sync::Arc;
use std::time::Duration;

use tput_cc::Aggregate;
use tput_cc::BandwidthSource;
use tput_cc::ControllerSpec;
use tput_cc::EvalSlot;
use tput_cc::units::Rate;
use tput_cc::{QuinnCc, QuinnFactory};

use super::limits::ServerLimits;
use crate::error::ConfigError;

/// Ethernet's MTU, bytes: [`NodeConfig::max_mtu`]'s default.
const ETHERNET_MTU: u16 = 1500;
/// IPv6 (40) and UDP (8) header bytes.
const IPV6_UDP_HEADERS: u16 = 48;
/// IPv4 (20) and UDP (8) header bytes.
const IPV4_UDP_HEADERS: u16 = 28;
/// The largest UDP payload a QUIC endpoint may advertise (RFC 9000 §18.2).
const MAX_UDP_PAYLOAD: u16 = 65_527;
/// The smallest [`NodeConfig::max_mtu`]: QUIC's 1200-byte minimum payload plus IPv6 and UDP headers.
pub(crate) const MIN_MAX_MTU: u16 = 1200 + IPV6_UDP_HEADERS;
use crate::proto::AppBuffers;
use crate::proto::Direction;
use crate::tls::ClientAuth;
use crate::tls::Identity;

/// Reads the CPU time of the node's process, in seconds (user plus system).
pub type CpuClock = fn() -> Option<f64>;

/// Settings of a [`Node`](super::Node).
///
/// Start from [`NodeConfig::default`] and change what differs with the
/// `with_*` setters (the struct is `#[non_exhaustive]`: a setting may be
/// added in a minor release); the fields stay readable.
///
/// ```
/// use std::time::Duration;
/// use tput_transport::{NodeConfig, ServerLimits};
///
/// let config = NodeConfig::default()
///     .with_idle_timeout(Duration::from_secs(30))
///     .with_max_connections(8)
///     .with_limits(ServerLimits::default().with_max_duration(Some(Duration::from_secs(60))));
/// assert_eq!(config.max_connections, 8);
/// assert!(config.validate().is_ok());
/// assert!(config.with_mtu(1000).validate().is_err());
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct NodeConfig {
    /// Initial (and minimum) UDP payload size, bytes; at least 1200 (RFC 9000 §14).
    pub mtu: u16,
    /// Path MTU discovery (RFC 9000 §14.3); off in the simulator so packet sizes stay fixed.
    pub mtu_discovery: bool,
    /// The largest IP packet, bytes, path MTU discovery may find (RFC 9000
    /// §14.3, DPLPMTUD per RFC 8899): its search stops at `max_mtu - 48`
    /// bytes of UDP payload (room for IPv6 and UDP headers; 1452 for the
    /// default 1500, quinn-proto's own bound), and above 1500 the node
    /// advertises `max_mtu - 28` in its `max_udp_payload_size` transport
    /// parameter (RFC 9000 §18.2) so that its peer may probe as far. Both
    /// ends of a transfer need it raised for datagrams above 1452 bytes:
    /// 9000 on a jumbo-frame or loopback path. At least 1248 (1200 bytes of
    /// payload, QUIC's minimum, plus headers) and at most 65 535.
    pub max_mtu: u16,
    /// Close a connection after this long without any packet (RFC 9000
    /// §10.1): the transport parameter, and quinn-proto's idle timer, or
    /// this node's own with [`strict_idle`](Self::strict_idle).
    pub idle_timeout: Duration,
    /// Send a PING after this long without sending or receiving a packet
    /// (RFC 9000 §10.1.2); `None` (the default, and the simulator's): never.
    /// Live clients set it ([`udp::transfer`](crate::udp::transfer)): a
    /// client that only receives may otherwise stay silent after a NAT
    /// rebinding, so the server never learns its new address (RFC 9000
    /// §9.3). A PING waits behind the congestion window like data, so it
    /// cannot keep a stalled sender audible: see
    /// [`stall_probe`](Self::stall_probe).
    pub keep_alive: Option<Duration>,
    /// Close a connection once [`idle_timeout`](Self::idle_timeout) has
    /// passed without a packet from the peer, counted from the last packet
    /// received, with a CONNECTION_CLOSE that says so (RFC 9000 §10.2), so
    /// the peer learns of it too if either direction of the path still
    /// works. quinn-proto's own idle timer (RFC 9000 §10.1) starts again at
    /// the first ack-eliciting packet sent after a receive and runs for at
    /// least three probe timeouts; a sender whose probes back off let a
    /// dead path run for up to three idle timeouts before a transfer
    /// failed. The transfer's outcome is reported as the close is sent,
    /// not after the close's draining period. `false` (the default, and the
    /// simulator's): quinn-proto's timer alone. Live nodes set it
    /// ([`udp`](crate::udp)).
    pub strict_idle: bool,
    /// A sender that has had nothing acknowledged for this long (or twice
    /// the smoothed RTT, if longer; stretched by a random 0-50 %) while
    /// packets are outstanding sends one packet beyond its congestion
    /// window, and again after each such interval until an acknowledgement
    /// comes (during the handshake too: a PING); quinn-proto's own probes
    /// double their interval, and on a path with periodic outages they can
    /// all fall into outages (the reasons are in the `stall` module's
    /// source). `None` (the default, and the simulator's): never. Live
    /// nodes set 500 ms ([`udp`](crate::udp)).
    pub stall_probe: Option<Duration>,
    /// Connections a server accepts at once; further ones are refused.
    pub max_connections: usize,
    /// `A` and `P` for a guarantee controller sending a download from this
    /// server (the controller the client's request names).
    pub server_bandwidth: Option<Arc<dyn BandwidthSource>>,
    /// A guarantee controller sending a download from this server joins this group.
    pub server_aggregate: Option<Aggregate>,
    /// Stream and connection receive windows, bytes (quinn's defaults if `None`).
    pub receive_window: Option<u64>,
    /// Write a qlog trace (JSON-SEQ, as qvis reads it) of every connection
    /// into this directory: `client-ID.sqlog` or `server-ID.sqlog`, ID being
    /// the transfer id. Event times count from the connection's start.
    /// (With the `qlog` feature, on by default.)
    #[cfg(feature = "qlog")]
    pub qlog_dir: Option<std::path::PathBuf>,
    /// The process's CPU clock, for the CPU use reported at the end of a
    /// transfer; `None` (the simulator) reports none. The node never reads a
    /// clock itself: [`udp`](crate::udp) sets this to
    /// [`udp::process_cpu_secs`](crate::udp::process_cpu_secs).
    pub cpu_clock: Option<CpuClock>,
    /// Which clients a server accepts (mutual TLS); `None` accepts any client.
    pub client_auth: Option<ClientAuth>,
    /// The certificate this node presents as a client (for servers that
    /// require client authentication).
    pub client_identity: Option<Identity>,
    /// What a server lets one request ask for (none by default: a library
    /// user or a simulation decides; `tputctl serve` sets documented limits).
    pub limits: ServerLimits,
    /// Explicit Congestion Notification (RFC 3168; QUIC's use, RFC 9000
    /// §13.4): `true` (the default) sends each datagram with the ECN
    /// codepoint quinn-proto asks for ([`Outgoing::ecn`](super::Outgoing::ecn):
    /// ECT(0) while the path's ECN is being validated or has been) and
    /// hands quinn-proto the codepoint each datagram arrived with, so its
    /// ACK frames carry ECN counts (RFC 9000 §13.4.1) and a CE mark reaches
    /// the controller as a congestion event (RFC 9002 §7.1). quinn-proto
    /// turns ECN off by itself on a path that loses or bleaches the marks
    /// (RFC 9000 §13.4.2). `false`: every datagram leaves Not-ECT and the
    /// codepoints of arrivals are ignored (then the peer's ACKs carry no
    /// counts and its quinn-proto stops asking for ECT too). What carries
    /// the codepoint is the driver's business: [`udp`](crate::udp) sets and
    /// reads the IP header's field (IP_TOS / IPV6_TCLASS); a simulator host
    /// decides on its own whether its datagrams carry one.
    pub ecn: bool,
}

/// Switches only a simulation may set, handed to [`Node::simulated`](super::Node::simulated) (with
/// the `sim` feature) and to no other constructor: a node built from a
/// [`NodeConfig`] alone, as [`udp`](crate::udp) builds its nodes, draws its
/// randomness from the operating system, encrypts every packet and writes
/// payload a few congestion windows ahead.
///
/// ```
/// use tput_transport::SimOptions;
/// let sim = SimOptions::seeded(7).with_null_packet_protection(true);
/// assert_eq!(sim.seed, Some(7));
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SimOptions {
    /// Seed of every random choice quinn-proto makes (endpoint RNG, reset and
    /// token keys, connection IDs). `Some` makes simulated runs reproducible;
    /// `None` draws from the operating system (what live nodes must do).
    pub seed: Option<u64>,
    /// After the real TLS handshake, 1-RTT packets travel unencrypted, with
    /// the same sizes as with AES-128-GCM (a 16-byte tag, 16-byte
    /// header-protection sample), so a simulation's metrics do not change
    /// and its CPU time drops. Both ends must agree.
    pub null_packet_protection: bool,
    /// A sender writes payload up to the peer's flow-control credit instead
    /// of three congestion windows (plus 16 KiB) ahead of the network, the
    /// default. For comparisons: the packets are the same but for
    /// STREAM_DATA_BLOCKED/DATA_BLOCKED frames (RFC 9000 §19.12-13) where
    /// the credit is reached, and each sending connection holds up to the
    /// peer's receive window (1.25 MB by default) of payload.
    pub write_ahead_to_credit: bool,
    /// The simulator's flow id, stamped on every datagram the node sends
    /// ([`Node::flow`](super::Node::flow)), so that the simulator can tell
    /// flows apart (per-flow queues, per-flow metrics). 0 by default.
    pub flow: u32,
}

// Only a simulation host (the `sim` feature) builds these.
#[cfg(feature = "sim")]
impl SimOptions {
    /// Options whose random choices all derive from `seed` (what a
    /// reproducible simulation needs); the other switches off.
    pub fn seeded(seed: u64) -> Self {
        Self {
            seed: Some(seed),
            ..Self::default()
        }
    }

    setters! {
        with_seed: seed: Option<u64>;
        with_null_packet_protection: null_packet_protection: bool;
        with_write_ahead_to_credit: write_ahead_to_credit: bool;
        with_flow: flow: u32;
    }
}

impl NodeConfig {
    setters! {
        with_mtu: mtu: u16;
        with_mtu_discovery: mtu_discovery: bool;
        with_max_mtu: max_mtu: u16;
        with_idle_timeout: idle_timeout: Duration;
        with_keep_alive: keep_alive: Option<Duration>;
        with_strict_idle: strict_idle: bool;
        with_stall_probe: stall_probe: Option<Duration>;
        with_max_connections: max_connections: usize;
        with_server_bandwidth: server_bandwidth: Option<Arc<dyn BandwidthSource>>;
        with_server_aggregate: server_aggregate: Option<Aggregate>;
        with_receive_window: receive_window: Option<u64>;
        with_cpu_clock: cpu_clock: Option<CpuClock>;
        with_client_auth: client_auth: Option<ClientAuth>;
        with_client_identity: client_identity: Option<Identity>;
        with_limits: limits: ServerLimits;
        with_ecn: ecn: bool;
    }

    /// Sets [`qlog_dir`](Self::qlog_dir).
    #[cfg(feature = "qlog")]
    #[must_use]
    pub fn with_qlog_dir(mut self, qlog_dir: Option<std::path::PathBuf>) -> Self {
        self.qlog_dir = qlog_dir;
        self
    }

    /// Check the settings a node cannot run with; [`Node::client`](super::Node::client)
    /// and [`Node::server`](super::Node::server) call it.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.mtu < 1200 {
            return Err(ConfigError::MtuTooSmall(self.mtu));
        }
        if self.max_mtu < MIN_MAX_MTU {
            return Err(ConfigError::MaxMtuTooSmall(self.max_mtu));
        }
        Ok(())
    }

    /// The largest UDP payload, bytes, path MTU discovery searches for
    /// (quinn-proto's `MtuDiscoveryConfig::upper_bound`): [`max_mtu`](Self::max_mtu)
    /// less 48 bytes of IPv6 and UDP headers, never below the initial
    /// [`mtu`](Self::mtu).
    pub fn max_udp_payload(&self) -> u16 {
        self.max_mtu.saturating_sub(IPV6_UDP_HEADERS).max(self.mtu)
    }

    /// The `max_udp_payload_size` transport parameter this node advertises
    /// (RFC 9000 §18.2), or `None` for quinn-proto's default (1472) while
    /// [`max_mtu`](Self::max_mtu) is at most 1500: `max_mtu` less 28 bytes
    /// of IPv4 and UDP headers, the most an IPv4 peer can send in one packet.
    pub(crate) fn advertised_max_udp_payload(&self) -> Option<u16> {
        (self.max_mtu > ETHERNET_MTU).then(|| self.max_mtu.saturating_sub(IPV4_UDP_HEADERS).min(MAX_UDP_PAYLOAD))
    }
}

impl Default for NodeConfig {
    fn default() -> Self {
        Self {
            mtu: 1200,
            mtu_discovery: true,
            max_mtu: ETHERNET_MTU,
            idle_timeout: Duration::from_secs(10),
            keep_alive: None,
            strict_idle: false,
            stall_probe: None,
            max_connections: 64,
            server_bandwidth: None,
            server_aggregate: None,
            receive_window: None,
            #[cfg(feature = "qlog")]
            qlog_dir: None,
            cpu_clock: None,
            limits: ServerLimits::default(),
            client_auth: None,
            client_identity: None,
            ecn: true,
        }
    }
}

/// A transfer a client starts.
///
/// Built with [`upload`](Self::upload) or [`new`](Self::new) and the
/// `with_*` setters (the struct is `#[non_exhaustive]`: a setting may be
/// added in a minor release); the fields stay readable.
///
/// ```
/// use std::time::Duration;
/// use tput_transport::{Direction, TransferSpec};
///
/// let spec = TransferSpec::new(Direction::Download, "cubic".parse()?)
///     .with_duration(Some(Duration::from_secs(10)))
///     .with_target(Some("20Mbit/s".parse()?));
/// assert!(spec.validate().is_ok());
/// // Neither a byte count nor a duration:
/// assert!(TransferSpec::new(Direction::Upload, "cubic".parse()?).validate().is_err());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct TransferSpec {
    /// Who sends the payload.
    pub direction: Direction,
    /// Bytes to send (`None`: until `duration` ends).
    pub bytes: Option<u64>,
    /// How long to send (`None`: until `bytes` are sent).
    pub duration: Option<Duration>,
    /// Controller of the sender: the client's for an upload; for a download
    /// the request names it and the server builds it (so a download takes
    /// a [`SenderController::Spec`] only).
    pub controller: SenderController,
    /// Target throughput judged per evaluation slot.
    pub target: Option<Rate>,
    /// Evaluation slot length.
    pub eval_slot: EvalSlot,
    /// Sender-side statistics interval (zero = none).
    pub interval: Duration,
    /// Application-level rate limit of the sender (the server applies it to a download).
    pub rate_limit: Option<Rate>,
    /// `A` and `P` for a guarantee controller sending an upload (a download's
    /// sender uses the server's [`NodeConfig::server_bandwidth`]).
    pub bandwidth: Option<Arc<dyn BandwidthSource>>,
    /// A guarantee controller sending an upload joins this group (one
    /// aggregate target for several connections; see [`Aggregate`]); a
    /// download's sender joins the server's [`NodeConfig::server_aggregate`].
    pub aggregate: Option<Aggregate>,
    /// The application-buffer model of an upload: at most `count` buffers
    /// of `size` bytes unacknowledged at once, one stream each (protocol
    /// step 2); `None` sends the payload on one stream.
    pub buffers: Option<AppBuffers>,
}

impl TransferSpec {
    setters! {
        with_direction: direction: Direction;
        with_bytes: bytes: Option<u64>;
        with_duration: duration: Option<Duration>;
        with_target: target: Option<Rate>;
        with_eval_slot: eval_slot: EvalSlot;
        with_interval: interval: Duration;
        with_rate_limit: rate_limit: Option<Rate>;
        with_bandwidth: bandwidth: Option<Arc<dyn BandwidthSource>>;
        with_aggregate: aggregate: Option<Aggregate>;
        with_buffers: buffers: Option<AppBuffers>;
    }

    /// Sets [`controller`](Self::controller): a [`ControllerSpec`], a
    /// [`QuinnCc`] or a [`SenderController`].
    #[must_use]
    pub fn with_controller(mut self, controller: impl Into<SenderController>) -> Self {
        self.controller = controller.into();
        self
    }

    /// Check what the protocol cannot carry or a sender cannot run;
    /// [`Node::start_transfer`](super::Node::start_transfer) calls it.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.bytes.is_none() && self.duration.is_none() {
            return Err(ConfigError::NoAmount);
        }
        if self.rate_limit.is_some_and(|r| r.bits_per_sec() == 0) {
            return Err(ConfigError::ZeroRateLimit);
        }
        let min = crate::proto::MIN_PERIOD;
        if !self.interval.is_zero() && self.interval < min {
            return Err(ConfigError::IntervalTooShort {
                interval: self.interval,
                min,
            });
        }
        if let EvalSlot::Time(d) = self.eval_slot
            && d < min
        {
            return Err(ConfigError::EvalSlotTooShort { slot: d, min });
        }
        if let Some(b) = &self.buffers {
            b.check()?;
            if self.direction == Direction::Download {
                return Err(ConfigError::BuffersForDownload);
            }
        }
        if self.direction == Direction::Download {
            match self.controller {
                SenderController::Spec(_) => {}
                SenderController::Quinn(_) => return Err(ConfigError::QuinnCcForDownload),
                SenderController::Own { .. } => return Err(ConfigError::OwnControllerForDownload),
            }
        }
        let cc_len = self.request_cc().to_string().len();
        if cc_len > crate::proto::MAX_CC_SPEC_LEN {
            return Err(ConfigError::SpecTooLong {
                len: cc_len,
                max: crate::proto::MAX_CC_SPEC_LEN,
            });
        }
        Ok(())
    }

    /// An upload of `bytes` with `cc`, one-second intervals and evaluation
    /// slots ([`with_controller`](Self::with_controller) runs another kind
    /// of controller).
    pub fn upload(bytes: u64, cc: ControllerSpec) -> Self {
        Self::new(Direction::Upload, cc).with_bytes(Some(bytes))
    }

    /// A transfer in `direction` with `cc`, one-second intervals and
    /// evaluation slots, and no amount yet: set a byte count
    /// ([`with_bytes`](Self::with_bytes)) or a duration
    /// ([`with_duration`](Self::with_duration)) before starting it.
    pub fn new(direction: Direction, cc: ControllerSpec) -> Self {
        Self {
            direction,
            bytes: None,
            duration: None,
            controller: SenderController::Spec(cc),
            target: None,
            eval_slot: EvalSlot::Time(Duration::from_secs(1)),
            interval: Duration::from_secs(1),
            rate_limit: None,
            bandwidth: None,
            aggregate: None,
            buffers: None,
        }
    }

    /// The controller spec the request names (see [`SenderController`]).
    pub fn request_cc(&self) -> ControllerSpec {
        self.controller.request_spec()
    }

    /// The name of the sender's controller in outcomes and records.
    pub(crate) fn cc_name(&self) -> String {
        match &self.controller {
            SenderController::Quinn(q) => q.to_string(),
            other => other.request_spec().to_string(),
        }
    }
}

/// The controller that sends a transfer's payload
/// ([`TransferSpec::controller`]): one of this workspace's, named by its
/// spec, one of quinn-proto's own, or one of the user's own. New kinds may
/// come in a minor release: match with a wildcard arm.
///
/// ```
/// use tput_cc::QuinnCc;
/// use tput_transport::{SenderController, TransferSpec};
///
/// let spec = TransferSpec::upload(1 << 20, "cubic".parse()?);
/// assert_eq!(spec.request_cc().to_string(), "cubic");
/// // quinn-proto's own CUBIC: the request names its counterpart here.
/// let quinn = spec.with_controller(QuinnCc::Cubic);
/// assert!(matches!(quinn.controller, SenderController::Quinn(QuinnCc::Cubic)));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum SenderController {
    /// A controller of `tput-cc`, built from its spec: the client builds it
    /// for an upload, the server from the request for a download.
    Spec(ControllerSpec),
    /// One of quinn-proto's own controllers, to compare the two in the
    /// same setting (uploads only). The request names this workspace's
    /// controller of the same algorithm ([`QuinnCc::counterpart`]); the
    /// sender's outcome and records name this one. quinn-proto's
    /// controllers are paced by quinn-proto alone (see
    /// [`tput_cc::NativeFactory`]).
    Quinn(QuinnCc),
    /// A controller of the user's own (uploads only): the factory builds
    /// one per connection ([`QuinnFactory::from_fn`]); the node adds its
    /// probe, so snapshots, interval records and a pacing rate the
    /// controller reports work as for a spec.
    Own {
        /// Builds the controller (boxed: a factory is large beside a spec).
        factory: Box<QuinnFactory>,
        /// The spec the request and the records name the transfer by (the
        /// server parses it, so it must be a valid spec).
        name: ControllerSpec,
    },
}

impl SenderController {
    /// A controller of the user's own, built by `factory`, that the
    /// request and the records name `name` ([`SenderController::Own`]).
    pub fn own(factory: QuinnFactory, name: ControllerSpec) -> Self {
        Self::Own {
            factory: Box::new(factory),
            name,
        }
    }

    /// The controller spec the request names.
    pub fn request_spec(&self) -> ControllerSpec {
        match self {
            Self::Spec(spec) | Self::Own { name: spec, .. } => spec.clone(),
            Self::Quinn(q) => q.counterpart(),
        }
    }
}

impl From<ControllerSpec> for SenderController {
    fn from(spec: ControllerSpec) -> Self {
        Self::Spec(spec)
    }
}

impl From<QuinnCc> for SenderController {
    fn from(q: QuinnCc) -> Self {
        Self::Quinn(q)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quinns_and_own_controllers_send_uploads_only() {
        let newreno: ControllerSpec = "newreno".parse().unwrap();
        let own = SenderController::own(QuinnFactory::try_new(newreno.clone()).unwrap(), newreno.clone());
        let download = TransferSpec::new(Direction::Download, newreno.clone()).with_bytes(Some(1000));
        assert!(download.validate().is_ok());
        assert_eq!(
            download.clone().with_controller(QuinnCc::Bbr).validate(),
            Err(ConfigError::QuinnCcForDownload)
        );
        assert_eq!(
            download.with_controller(own.clone()).validate(),
            Err(ConfigError::OwnControllerForDownload)
        );
        // The request names the counterpart of quinn-proto's controller, or
        // the name given to one's own; the records name what runs.
        let upload = TransferSpec::upload(1000, newreno.clone());
        let quinn = upload.clone().with_controller(QuinnCc::BbrPaced);
        assert_eq!(quinn.request_cc().to_string(), "bbr");
        assert_eq!(quinn.cc_name(), "quinn-bbr-paced");
        let own = upload.with_controller(own);
        assert!(own.validate().is_ok());
        assert_eq!((own.request_cc(), own.cc_name()), (newreno, "newreno".to_string()));
    }
}
