//! The sans-IO QUIC node: one quinn-proto endpoint, its connections and the
//! transfers on them. Both back ends drive exactly this code: the tokio UDP
//! loop ([`crate::udp`]) in real time and the simulator host of `tput-lab`
//! in virtual time. Every call takes `now`; nothing here reads a clock.

use std::collections::{BTreeMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::Bytes;
use quinn_proto::congestion::ControllerFactory;
use quinn_proto::{
    Connection, ConnectionHandle, Endpoint, EndpointConfig, MtuDiscoveryConfig, ServerConfig, StreamId,
    TransportConfig, VarInt,
};
use tput_cc::{ControllerProbe, ControllerSpec, ControllerSwitch, QuinnFactory, SwitchSlot};

use crate::error::{ConfigError, Error};
use crate::failure::TransferError;
use crate::pattern::splitmix64;
use crate::stall::StallState;
use crate::stats::{IntervalStats, TransferOutcome};
use crate::tls::{Identity, server_crypto};

/// `with_FIELD(self, value) -> Self` setters, one per field, each documented
/// as setting the field (whose own documentation says what it means).
macro_rules! setters {
    ($($method:ident: $field:ident: $ty:ty;)*) => {
        $(
            #[doc = concat!("Sets [`", stringify!($field), "`](Self::", stringify!($field), ").")]
            #[must_use]
            pub fn $method(mut self, $field: $ty) -> Self {
                self.$field = $field;
                self
            }
        )*
    };
}

mod buffers;
mod config;
mod drive;
mod endpoint;
mod limits;
mod pacer;
mod pool;
mod protocol;
mod ranges;
mod ratelimit;
mod receiver;
mod sender;

pub use config::{CpuClock, NodeConfig, SenderController, SimOptions, TransferSpec};
pub(crate) use endpoint::seed_bytes;
pub use endpoint::{EcnCounts, Outgoing};
use endpoint::{Qlog, SeededCids};
pub use limits::{Refusal, ServerLimits};
use pacer::Pacer;
pub use pool::BufferPool;
use receiver::{Receiver, ReceiverSide, RecvPhase};
use sender::{SendPhase, Sender};

/// Application error code a node closes with when the peer breaks the
/// protocol: a malformed request (including a controller spec the server
/// cannot parse), a bad frame or report. The close's reason names the error.
pub const CLOSE_PROTOCOL_ERROR: u32 = 1;

/// Application error code a node closes with when payload verification fails.
pub const CLOSE_CORRUPT: u32 = 2;

/// Application error code a node closes with when nothing has arrived from
/// its peer for the idle timeout ([`NodeConfig::strict_idle`]).
pub const CLOSE_TIMED_OUT: u32 = 3;

/// Controller of the end that receives the payload. It only paces ACKs and
/// the reports, and a server runs it until a download's request names the
/// sender's; quinn-proto's own default (RFC 9438).
fn receiving_controller() -> ControllerSpec {
    ControllerSpec::Cubic(Default::default())
}

/// Something a node reports while it runs. New kinds of event may come in
/// a minor release: match with a wildcard arm.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum NodeEvent {
    /// A sender's interval record is complete (see [`IntervalStats`]): on the
    /// sending node, and on the client of a download as the server's record
    /// arrives.
    Interval {
        /// The transfer.
        id: u64,
        /// The record.
        stats: IntervalStats,
    },
    /// A transfer ended.
    Finished(Box<TransferOutcome>),
}

/// A connection's part in its transfer. Each variant holds exactly the state
/// that part needs: a client that has not sent its request yet, a server
/// that has not received one, and the two ends of a transfer (each knowing
/// whether it is the client or the server).
#[derive(Debug)]
enum Role {
    /// Client: handshake under way; `key` is the payload pattern's.
    Connecting { spec: Box<TransferSpec>, key: u64 },
    /// Server: waiting for the request on the stream the client opens.
    Awaiting { stream: Option<StreamId>, inbuf: Vec<u8> },
    /// Sending the payload.
    Sender(Box<Sender>),
    /// Receiving the payload.
    Receiver(Box<Receiver>),
}

impl Role {
    /// Whether the transfer has completed: a close from now on is the normal end.
    fn done(&self) -> bool {
        match self {
            Role::Sender(s) => s.phase == SendPhase::Done,
            Role::Receiver(r) => r.phase == RecvPhase::Done,
            Role::Connecting { .. } | Role::Awaiting { .. } => false,
        }
    }
}

struct Conn {
    conn: Connection,
    id: u64,
    created: Instant,
    /// Snapshots of this connection's controller.
    probe: ControllerProbe,
    /// A server's handle on its connection's controller (to build the one a
    /// download's request names).
    switch: Option<ControllerSwitch>,
    cpu_clock: Option<CpuClock>,
    role: Role,
    error: Option<TransferError>,
    /// When the transfer completed (or failed).
    completed: Option<Instant>,
    /// CPU seconds used from the request to `completed`.
    cpu_secs: Option<f64>,
    reported: bool,
    /// A server closes the connection if no request has arrived by then
    /// ([`ServerLimits::request_timeout`]).
    request_deadline: Option<Instant>,
    /// When the last datagram from the peer arrived (the connection's
    /// start before the first).
    last_heard: Instant,
    /// Close after this long without a datagram from the peer
    /// ([`NodeConfig::strict_idle`]).
    silence_limit: Option<Duration>,
    /// Closed for that: the outcome is reported once the close is queued,
    /// not after the close's draining period (the peer is most likely gone).
    silenced: bool,
    /// A server refuses this connection, with this reason, once its
    /// handshake is done (a reason can only travel in 1-RTT packets).
    refusal: Option<Refusal>,
    /// What the controller tells of acknowledgements, for stall probes
    /// ([`NodeConfig::stall_probe`]).
    stall: Option<Arc<StallState>>,
    /// When this connection last sent a stall probe.
    last_stall_probe: Option<Instant>,
    /// Draws the jitter of the next stall probe's interval (seeded by the
    /// node's seed, so a simulation stays reproducible).
    stall_rng: u64,
    /// Paces the connection's datagrams when its controller reports a
    /// pacing rate (see the `pacer` module); unused otherwise.
    pacer: Pacer,
    /// The pacer held a datagram back: the moment it lets one go, a node
    /// timer. `None` when the pacer is not what stops the connection.
    paced_until: Option<Instant>,
}

impl Conn {
    fn cpu_now(&self) -> Option<f64> {
        self.cpu_clock.and_then(|f| f())
    }

    /// When this connection has heard nothing from its peer for too long
    /// ([`NodeConfig::strict_idle`]); `None` once it is closing.
    fn silence_deadline(&self) -> Option<Instant> {
        let limit = self.silence_limit.filter(|_| !self.conn.is_closed())?;
        self.last_heard.checked_add(limit)
    }

    /// When this connection sends its next stall probe
    /// ([`NodeConfig::stall_probe`]): `interval` (or two smoothed RTTs),
    /// stretched by a random 0-50 %, after the later of its last
    /// acknowledgement and its last stall probe, while packets are
    /// outstanding. A fixed interval would itself keep step with any
    /// outage period that divides it (in a simulation exactly: 666 ms
    /// probes all fell into a 9 ms cut-off's cuts); the jitter keeps step
    /// with none.
    fn stall_probe_due(&self, interval: Option<Duration>) -> Option<Instant> {
        let (interval, state) = (interval?, self.stall.as_ref()?);
        // During the handshake too: a lost Initial is resent after a PTO
        // of 1 s (3 x the initial RTT of 333 ms), then 2 s, 4 s...: in
        // step with any periodic outage whose period divides 999 ms.
        if self.conn.is_closed() {
            return None;
        }
        let since = state.stalled_since()?;
        let from = self.last_stall_probe.map_or(since, |p| p.max(since));
        let stretch = 1.0 + (self.stall_rng >> 11) as f64 / (1u64 << 53) as f64 / 2.0;
        from.checked_add(interval.max(2 * self.conn.rtt()).mul_f64(stretch))
    }

    /// Close the connection with `code` and `why` as the reason (RFC 9000
    /// §19.19), and remember `why` unless an error came first.
    fn fail(&mut self, now: Instant, code: u32, why: TransferError) {
        let reason = why.close_reason();
        if self.error.is_none() {
            tracing::debug!(id = self.id, "transfer failed: {reason}");
            self.error = Some(why);
        }
        self.conn
            .close(now, VarInt::from_u32(code), Bytes::from(reason.into_bytes()));
    }
}

/// Sessions a live server's TLS resumption cache has room for (rustls's default).
const LIVE_SESSION_CACHE: usize = 256;
/// The same for a simulated (seeded) server.
const SIM_SESSION_CACHE: usize = 8;

/// A QUIC endpoint with its connections and transfers, sans IO.
pub struct Node {
    config: NodeConfig,
    /// Simulator-only switches ([`Node::simulated`]); all off otherwise.
    sim: SimOptions,
    endpoint: Endpoint,
    server: Option<Arc<ServerConfig>>,
    /// The factory of accepted connections (for per-connection transport configs).
    server_factory: Option<QuinnFactory>,
    /// Where the server's factory leaves each built controller's switch.
    switches: SwitchSlot,
    conns: BTreeMap<ConnectionHandle, Box<Conn>>,
    out: VecDeque<Outgoing>,
    events: VecDeque<NodeEvent>,
    next_id: u64,
    key_state: u64,
    cid_state: Arc<Mutex<u64>>,
    buf: Vec<u8>,
    /// Most datagrams per [`Outgoing`] (GSO segments); 1 unless raised.
    max_segments: usize,
    /// Most datagrams one drive of a connection produces before it yields
    /// ([`Node::set_transmit_budget`]); unlimited unless set.
    transmit_budget: usize,
    /// Connections that stopped sending at the budget, in order.
    more: Vec<ConnectionHandle>,
    /// Sent datagram buffers handed back ([`Node::recycle`]).
    spare: Vec<Vec<u8>>,
    /// Datagram buffers shared with the other nodes of a simulated run
    /// ([`Node::share_buffers`]).
    pool: Option<BufferPool>,
    /// Reused by [`Node::handle_timeout`] (a hot path in the simulator).
    due: Vec<ConnectionHandle>,
    /// While [`Node::handle_datagrams`] takes in a batch: the connections
    /// it touched, driven once each at the end (`None` outside a batch).
    batch: Option<Vec<ConnectionHandle>>,
    /// The ECN codepoints of the datagrams taken in ([`Node::ecn_received`]).
    ecn_received: EcnCounts,
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("connections", &self.conns.len())
            .finish_non_exhaustive()
    }
}

impl Node {
    /// A node that only makes outgoing connections.
    pub fn client(config: NodeConfig) -> Result<Self, Error> {
        Self::build(config, None, SimOptions::default())
    }

    /// A node that accepts connections with `identity` (and may also make some).
    pub fn server(config: NodeConfig, identity: &Identity) -> Result<Self, Error> {
        Self::build(config, Some(identity), SimOptions::default())
    }

    /// A node for a simulation host: a server if `identity` is given, else a
    /// client, with the simulator-only switches of `sim`. Live code builds
    /// its nodes with [`Node::client`] or [`Node::server`].
    #[cfg(feature = "sim")]
    pub fn simulated(config: NodeConfig, identity: Option<&Identity>, sim: SimOptions) -> Result<Self, Error> {
        Self::build(config, identity, sim)
    }

    /// Share datagram buffers with the other nodes of a simulated run: the
    /// receiver of a datagram puts its buffer into `pool` once it has read
    /// it, and senders take from the pool before they allocate (see
    /// [`BufferPool`]). Give every node of the run the same pool.
    #[cfg(feature = "sim")]
    pub fn share_buffers(&mut self, pool: BufferPool) {
        self.pool = Some(pool);
    }

    /// Whether the node accepts connections (built by [`Node::server`]).
    pub fn is_server(&self) -> bool {
        self.server.is_some()
    }

    fn build(config: NodeConfig, identity: Option<&Identity>, sim: SimOptions) -> Result<Self, Error> {
        config.validate()?;
        let seed = match sim.seed {
            Some(s) => s,
            None => {
                let mut b = [0u8; 8];
                ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b)
                    .map_err(|_| ConfigError::NoRandomness)?;
                u64::from_le_bytes(b)
            }
        };
        let reset_key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &seed_bytes(seed, 1));
        let mut ep = EndpointConfig::new(Arc::new(reset_key));
        if let Some(max) = config.advertised_max_udp_payload() {
            // In range by construction (1473 ..= 65 527).
            ep.max_udp_payload_size(max)
                .map_err(|_| ConfigError::MaxMtuTooSmall(config.max_mtu))?;
        }
        ep.rng_seed(Some(seed_bytes(seed, 2)));
        let cid_seed = splitmix64(seed ^ 3);
        let counter = Arc::new(Mutex::new(0u64));
        let c = counter.clone();
        ep.cid_generator(move || {
            let mut n = c.lock().unwrap_or_else(PoisonError::into_inner);
            *n += 1;
            Box::new(SeededCids {
                state: splitmix64(cid_seed ^ *n),
            })
        });
        let switches = SwitchSlot::new();
        let (server, server_factory) = match identity {
            Some(id) => {
                // rustls's default room for 256 resumable sessions costs 36 KiB
                // up front: a simulated server serves one connection, whose
                // tickets (still issued and stored, so the handshake is the
                // same) fit in a few.
                let session_cache = if sim.seed.is_some() {
                    SIM_SESSION_CACHE
                } else {
                    LIVE_SESSION_CACHE
                };
                let mut crypto: Arc<dyn quinn_proto::crypto::ServerConfig> =
                    Arc::new(server_crypto(id, config.client_auth.as_ref(), session_cache)?);
                if sim.null_packet_protection {
                    crypto = Arc::new(crate::null_keys::NullServerConfig(crypto));
                }
                let prk = ring::hkdf::Salt::new(ring::hkdf::HKDF_SHA256, &[]).extract(&seed_bytes(seed, 4));
                let mut sc = ServerConfig::new(crypto, Arc::new(prk));
                // Until a request names the sender's controller (protocol step
                // 1), an accepted connection runs the receiving end's; the
                // switch swaps the requested one in for a download.
                let factory = QuinnFactory::try_new(receiving_controller())?.switchable(switches.clone());
                sc.transport_config(Arc::new(Self::transport(&config, Arc::new(factory.clone()), None)));
                sc.max_incoming(config.max_connections.max(1));
                (Some(Arc::new(sc)), Some(factory))
            }
            None => (None, None),
        };
        let endpoint = Endpoint::new(Arc::new(ep), server.clone(), config.mtu_discovery, None);
        Ok(Self {
            config,
            sim,
            endpoint,
            server,
            server_factory,
            switches,
            conns: BTreeMap::new(),
            out: VecDeque::new(),
            events: VecDeque::new(),
            next_id: 0,
            key_state: splitmix64(seed ^ 5),
            cid_state: Arc::new(Mutex::new(splitmix64(seed ^ 6))),
            buf: Vec::new(),
            max_segments: 1,
            transmit_budget: usize::MAX,
            more: Vec::new(),
            spare: Vec::new(),
            pool: None,
            due: Vec::new(),
            batch: None,
            ecn_received: EcnCounts::default(),
        })
    }

    fn transport(
        config: &NodeConfig,
        factory: Arc<dyn ControllerFactory + Send + Sync>,
        qlog: Option<Qlog>,
    ) -> TransportConfig {
        let mut t = TransportConfig::default();
        t.congestion_controller_factory(factory);
        t.initial_mtu(config.mtu);
        t.min_mtu(config.mtu);
        if config.mtu_discovery {
            let mut mtud = MtuDiscoveryConfig::default();
            mtud.upper_bound(config.max_udp_payload());
            t.mtu_discovery_config(Some(mtud));
        } else {
            t.mtu_discovery_config(None);
        }
        if let Ok(idle) = config.idle_timeout.try_into() {
            t.max_idle_timeout(Some(idle));
        }
        t.keep_alive_interval(config.keep_alive);
        if let Some(w) = config.receive_window {
            let w = VarInt::from_u64(w).unwrap_or(VarInt::MAX);
            t.stream_receive_window(w);
            t.receive_window(w);
        }
        #[cfg(feature = "qlog")]
        t.qlog_stream(qlog);
        #[cfg(not(feature = "qlog"))]
        if let Some(never) = qlog {
            match never {}
        }
        t
    }

    /// The next thing to report, if any.
    pub fn poll_event(&mut self) -> Option<NodeEvent> {
        self.events.pop_front()
    }

    /// Whether this node leaves 1-RTT packets unencrypted
    /// ([`SimOptions::null_packet_protection`]).
    #[cfg(feature = "sim")]
    pub fn null_packet_protection(&self) -> bool {
        self.sim.null_packet_protection
    }

    /// The simulator's flow id of every datagram this node sends
    /// ([`SimOptions::flow`]).
    #[cfg(feature = "sim")]
    pub fn flow(&self) -> u32 {
        self.sim.flow
    }

    /// Connections open (including ones that are closing).
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// The latest snapshot of the controller sending transfer `id`'s payload,
    /// if this node knows one: its own when it sends, the one in the latest
    /// record the server sent when it receives a download.
    pub fn snapshot(&self, id: u64) -> Option<tput_cc::Snapshot> {
        let c = self.conns.values().find(|c| c.id == id)?;
        match &c.role {
            Role::Receiver(r) => match &r.side {
                ReceiverSide::Client { records, .. } => records.last().and_then(|r| r.controller.clone()),
                ReceiverSide::Server => None,
            },
            _ => c.probe.latest(),
        }
    }
}
