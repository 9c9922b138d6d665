//! The sans-IO QUIC node: one quinn-proto endpoint, its connections and the
//! transfers on them. Both back ends drive exactly this code: the tokio UDP
//! loop ([`crate::udp`]) in real time and the simulator host of `tput-lab`
//! in virtual time. Every call takes `now`; nothing here reads a clock.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use quinn_proto::{
    ClientConfig, Connection, ConnectionError, ConnectionHandle, ConnectionId, ConnectionIdGenerator, DatagramEvent,
    Dir, Endpoint, EndpointConfig, Event, ServerConfig, StreamEvent, StreamId, TransportConfig, VarInt,
};
use tput_cc::{Aggregate, BandwidthSource, ControllerProbe, ControllerSpec, EvalSlot, QuinnFactory, units::Rate};

use crate::Error;
use crate::pattern::Pattern;
use crate::proto::{Direction, MAX_REPORT_BYTES, REQUEST_LEN, RESET_TIME_UP, Request};
use crate::stats::{IntervalStats, ReceiveMeter, ReceiverReport, TransferOutcome};
use crate::tls::{Identity, ServerTrust, client_crypto, server_crypto};

/// Application error code a server closes with when a request is malformed.
pub const CLOSE_PROTOCOL_ERROR: u32 = 1;
/// Application error code a node closes with when payload verification fails.
pub const CLOSE_CORRUPT: u32 = 2;

const CHUNK: usize = 64 * 1024;

/// Settings of a [`Node`].
#[derive(Debug, Clone)]
pub struct NodeConfig {
    /// Seed of every random choice quinn-proto makes (endpoint RNG, reset and
    /// token keys, connection IDs). `Some` makes simulated runs reproducible;
    /// `None` draws from the operating system (what live nodes must do).
    pub seed: Option<u64>,
    /// Initial (and minimum) UDP payload size, bytes; at least 1200 (RFC 9000 §14).
    pub mtu: u16,
    /// Path MTU discovery (RFC 9000 §14.3); off in the simulator so packet sizes stay fixed.
    pub mtu_discovery: bool,
    /// Close a connection after this long without any packet (RFC 9000 §10.1).
    pub idle_timeout: Duration,
    /// Connections a server accepts at once; further ones are refused.
    pub max_connections: usize,
    /// Controller of the connections this node accepts (the server side of a download).
    pub server_cc: ControllerSpec,
    /// `A` and `P` for a guarantee controller on accepted connections.
    pub server_bandwidth: Option<Arc<dyn BandwidthSource>>,
    /// A guarantee controller on accepted connections joins this group.
    pub server_aggregate: Option<Aggregate>,
    /// Stream and connection receive windows, bytes (quinn's defaults if `None`).
    pub receive_window: Option<u64>,
}

impl Default for NodeConfig {
    fn default() -> Self {
        Self {
            seed: None,
            mtu: 1200,
            mtu_discovery: true,
            idle_timeout: Duration::from_secs(10),
            max_connections: 64,
            server_cc: ControllerSpec::Cubic(Default::default()),
            server_bandwidth: None,
            server_aggregate: None,
            receive_window: None,
        }
    }
}

/// A transfer a client starts.
#[derive(Debug, Clone)]
pub struct TransferSpec {
    /// Who sends the payload.
    pub direction: Direction,
    /// Bytes to send (`None`: until `duration` ends).
    pub bytes: Option<u64>,
    /// How long to send (`None`: until `bytes` are sent).
    pub duration: Option<Duration>,
    /// Controller of the client's connection.
    pub cc: ControllerSpec,
    /// Target throughput judged per evaluation slot.
    pub target: Option<Rate>,
    /// Evaluation slot length.
    pub eval_slot: EvalSlot,
    /// Sender-side statistics interval (zero = none).
    pub interval: Duration,
    /// Application-level rate limit of the sender.
    pub rate_limit: Option<Rate>,
    /// Flow id stamped on the client's datagrams in the simulator.
    pub flow: u32,
    /// `A` and `P` for a guarantee controller on this connection.
    pub bandwidth: Option<Arc<dyn BandwidthSource>>,
    /// A guarantee controller on this connection joins this group
    /// (one aggregate target for several connections; see [`Aggregate`]).
    pub aggregate: Option<Aggregate>,
}

impl TransferSpec {
    /// An upload of `bytes` with `cc`, one-second intervals and evaluation slots.
    pub fn upload(bytes: u64, cc: ControllerSpec) -> Self {
        Self {
            direction: Direction::Upload,
            bytes: Some(bytes),
            duration: None,
            cc,
            target: None,
            eval_slot: EvalSlot::Time(Duration::from_secs(1)),
            interval: Duration::from_secs(1),
            rate_limit: None,
            flow: 0,
            bandwidth: None,
            aggregate: None,
        }
    }
}

/// A datagram the node wants sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// Where to.
    pub destination: SocketAddr,
    /// Flow id of the connection that produced it (0 for endpoint responses).
    pub flow: u32,
    /// The UDP payload: one datagram, or with `segment_size` several.
    pub payload: Bytes,
    /// `Some(n)`: `payload` holds consecutive datagrams of `n` bytes each (the
    /// last may be shorter), to be sent with one GSO call; only produced after
    /// [`Node::set_max_segments`] allowed more than one. [`Outgoing::datagrams`] splits them.
    pub segment_size: Option<usize>,
}

impl Outgoing {
    /// The datagrams in `payload`, one by one (a cheap `Bytes` slice each).
    pub fn datagrams(&self) -> impl Iterator<Item = Bytes> + '_ {
        let n = self
            .segment_size
            .filter(|&n| n > 0)
            .unwrap_or(self.payload.len().max(1));
        (0..self.payload.len())
            .step_by(n)
            .map(move |at| self.payload.slice(at..(at + n).min(self.payload.len())))
    }
}

/// Something a node reports while it runs.
#[derive(Debug, Clone, PartialEq)]
pub enum NodeEvent {
    /// A sender finished a statistics interval.
    Interval {
        /// The transfer.
        id: u64,
        /// The record.
        stats: IntervalStats,
    },
    /// A transfer ended.
    Finished(Box<TransferOutcome>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Client: handshake under way.
    Connecting,
    /// Server: waiting for the request.
    AwaitRequest,
    /// Sending payload.
    Sending,
    /// All payload written and the stream finished; waiting for the peer to acknowledge it.
    AwaitAcked,
    /// Client after an upload: reading the receiver's report.
    AwaitReport,
    /// Receiving payload.
    Receiving,
    /// Transfer complete; the connection is closing or waiting for the peer to close.
    Done,
}

struct Conn {
    conn: Connection,
    id: u64,
    flow: u32,
    client: Option<TransferSpec>,
    cc: String,
    probe: ControllerProbe,
    created: Instant,
    stage: Stage,
    stream: Option<StreamId>,
    request: Option<Request>,
    inbuf: Vec<u8>,
    // sending
    pattern: Pattern,
    sent: u64,
    send_start: Option<Instant>,
    pending: Bytes,
    // receiving
    meter: Option<ReceiveMeter>,
    // statistics
    next_sample: Option<Instant>,
    sample_start: Instant,
    sample_sent: u64,
    sample_lost: u64,
    sample_events: u64,
    intervals: Vec<IntervalStats>,
    receiver: Option<ReceiverReport>,
    error: Option<String>,
    /// When the transfer reached [`Stage::Done`].
    completed: Option<Instant>,
    reported: bool,
}

impl Conn {
    fn new(conn: Connection, id: u64, flow: u32, now: Instant, probe: ControllerProbe, cc: String) -> Self {
        Self {
            conn,
            id,
            flow,
            client: None,
            cc,
            probe,
            created: now,
            stage: Stage::AwaitRequest,
            stream: None,
            request: None,
            inbuf: Vec::new(),
            pattern: Pattern::new(0),
            sent: 0,
            send_start: None,
            pending: Bytes::new(),
            meter: None,
            next_sample: None,
            sample_start: now,
            sample_sent: 0,
            sample_lost: 0,
            sample_events: 0,
            intervals: Vec::new(),
            receiver: None,
            error: None,
            completed: None,
            reported: false,
        }
    }

    fn local_sender(&self) -> bool {
        match self.request.map(|r| r.direction) {
            Some(Direction::Upload) => self.client.is_some(),
            Some(Direction::Download) => self.client.is_none(),
            None => self.client.as_ref().is_some_and(|s| s.direction == Direction::Upload),
        }
    }

    fn fail(&mut self, now: Instant, code: u32, why: String) {
        if self.error.is_none() {
            tracing::debug!(id = self.id, "transfer failed: {why}");
            self.error = Some(why.clone());
        }
        self.stage = Stage::Done;
        self.conn
            .close(now, VarInt::from_u32(code), Bytes::from(why.into_bytes()));
    }
}

/// A seeded connection-ID generator (RFC 9000 §5.1 asks for unpredictable
/// IDs; these are unpredictable to anyone who does not know the seed, and
/// reproducible for who does).
struct SeededCids {
    state: u64,
}

impl ConnectionIdGenerator for SeededCids {
    fn generate_cid(&mut self) -> ConnectionId {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        ConnectionId::new(&splitmix(self.state).to_be_bytes())
    }
    fn cid_len(&self) -> usize {
        8
    }
    fn cid_lifetime(&self) -> Option<Duration> {
        None
    }
}

fn splitmix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 32 bytes derived from `seed` for one purpose (`domain`).
pub(crate) fn seed_bytes(seed: u64, domain: u8) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&splitmix(seed ^ (u64::from(domain) << 56) ^ i as u64).to_le_bytes());
    }
    out
}

/// A QUIC endpoint with its connections and transfers, sans IO.
pub struct Node {
    config: NodeConfig,
    endpoint: Endpoint,
    server: Option<Arc<ServerConfig>>,
    conns: BTreeMap<ConnectionHandle, Conn>,
    out: VecDeque<Outgoing>,
    events: VecDeque<NodeEvent>,
    next_id: u64,
    key_state: u64,
    cid_state: Arc<Mutex<u64>>,
    buf: Vec<u8>,
    /// Most datagrams per [`Outgoing`] (GSO segments); 1 unless raised.
    max_segments: usize,
    /// Reused by [`Node::handle_timeout`] (a hot path in the simulator).
    due: Vec<ConnectionHandle>,
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
        Self::build(config, None)
    }

    /// A node that accepts connections with `identity` (and may also make some).
    pub fn server(config: NodeConfig, identity: &Identity) -> Result<Self, Error> {
        Self::build(config, Some(identity))
    }

    fn build(config: NodeConfig, identity: Option<&Identity>) -> Result<Self, Error> {
        if config.mtu < 1200 {
            return Err(Error::Config(format!(
                "mtu {} is below QUIC's minimum of 1200 bytes",
                config.mtu
            )));
        }
        let seed = match config.seed {
            Some(s) => s,
            None => {
                let mut b = [0u8; 8];
                ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut b)
                    .map_err(|_| Error::Config("the operating system gave no randomness".into()))?;
                u64::from_le_bytes(b)
            }
        };
        let reset_key = ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &seed_bytes(seed, 1));
        let mut ep = EndpointConfig::new(Arc::new(reset_key));
        ep.rng_seed(Some(seed_bytes(seed, 2)));
        let cid_seed = splitmix(seed ^ 3);
        let counter = Arc::new(Mutex::new(0u64));
        let c = counter.clone();
        ep.cid_generator(move || {
            let mut n = c.lock().unwrap_or_else(PoisonError::into_inner);
            *n += 1;
            Box::new(SeededCids {
                state: splitmix(cid_seed ^ *n),
            })
        });
        let server = match identity {
            Some(id) => {
                let crypto = server_crypto(id)?;
                let prk = ring::hkdf::Salt::new(ring::hkdf::HKDF_SHA256, &[]).extract(&seed_bytes(seed, 4));
                let mut sc = ServerConfig::new(Arc::new(crypto), Arc::new(prk));
                let factory = QuinnFactory::new(config.server_cc.clone());
                let factory = match &config.server_bandwidth {
                    Some(bw) => factory.with_bandwidth(bw.clone()),
                    None => factory,
                };
                let factory = match &config.server_aggregate {
                    Some(group) => factory.with_aggregate(group.clone()),
                    None => factory,
                };
                sc.transport_config(Arc::new(Self::transport(&config, factory)));
                sc.max_incoming(config.max_connections.max(1));
                Some(Arc::new(sc))
            }
            None => None,
        };
        let endpoint = Endpoint::new(Arc::new(ep), server.clone(), config.mtu_discovery, None);
        Ok(Self {
            config,
            endpoint,
            server,
            conns: BTreeMap::new(),
            out: VecDeque::new(),
            events: VecDeque::new(),
            next_id: 0,
            key_state: splitmix(seed ^ 5),
            cid_state: Arc::new(Mutex::new(splitmix(seed ^ 6))),
            buf: Vec::new(),
            max_segments: 1,
            due: Vec::new(),
        })
    }

    fn transport(config: &NodeConfig, factory: QuinnFactory) -> TransportConfig {
        let mut t = TransportConfig::default();
        t.congestion_controller_factory(Arc::new(factory));
        t.initial_mtu(config.mtu);
        t.min_mtu(config.mtu);
        if !config.mtu_discovery {
            t.mtu_discovery_config(None);
        }
        if let Ok(idle) = config.idle_timeout.try_into() {
            t.max_idle_timeout(Some(idle));
        }
        if let Some(w) = config.receive_window {
            let w = VarInt::from_u64(w).unwrap_or(VarInt::MAX);
            t.stream_receive_window(w);
            t.receive_window(w);
        }
        t
    }

    /// Connect to `server` and run `spec` on a new connection; returns the transfer id.
    pub fn start_transfer(
        &mut self,
        now: Instant,
        server: SocketAddr,
        server_name: &str,
        trust: &ServerTrust,
        spec: TransferSpec,
    ) -> Result<u64, Error> {
        if spec.bytes.is_none() && spec.duration.is_none() {
            return Err(Error::Config("a transfer needs a byte count or a duration".into()));
        }
        if spec.rate_limit.is_some_and(|r| r.bits_per_sec() == 0) {
            return Err(Error::Config("a rate limit must be positive".into()));
        }
        let probe = ControllerProbe::new();
        let mut factory = QuinnFactory::new(spec.cc.clone()).with_probe(probe.clone());
        if let Some(bw) = &spec.bandwidth {
            factory = factory.with_bandwidth(bw.clone());
        }
        if let Some(group) = &spec.aggregate {
            factory = factory.with_aggregate(group.clone());
        }
        let mut cc = ClientConfig::new(Arc::new(client_crypto(trust)?));
        cc.transport_config(Arc::new(Self::transport(&self.config, factory)));
        let state = self.cid_state.clone();
        cc.initial_dst_cid_provider(Arc::new(move || {
            let mut s = state.lock().unwrap_or_else(PoisonError::into_inner);
            *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            ConnectionId::new(&splitmix(*s).to_be_bytes())
        }));
        let (handle, conn) = self
            .endpoint
            .connect(now, cc, server, server_name)
            .map_err(|e| Error::Config(format!("cannot connect to {server}: {e}")))?;
        let id = self.next_id;
        self.next_id += 1;
        let mut c = Conn::new(conn, id, spec.flow, now, probe, spec.cc.to_string());
        c.stage = Stage::Connecting;
        self.key_state = splitmix(self.key_state);
        c.pattern = Pattern::new(self.key_state);
        c.client = Some(spec);
        self.conns.insert(handle, c);
        self.drive(handle, now);
        Ok(id)
    }

    /// A datagram arrived from `from`; `flow` is the simulator's flow id (0 on real sockets).
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, flow: u32, data: BytesMut) {
        let mut buf = std::mem::take(&mut self.buf);
        match self.endpoint.handle(now, from, None, None, data, &mut buf) {
            Some(DatagramEvent::ConnectionEvent(h, ev)) => {
                if let Some(c) = self.conns.get_mut(&h) {
                    c.conn.handle_event(ev);
                    self.drive(h, now);
                }
            }
            Some(DatagramEvent::NewConnection(incoming)) => {
                if self.conns.len() >= self.config.max_connections {
                    tracing::debug!(%from, "refusing a connection: server full");
                    let t = self.endpoint.refuse(incoming, &mut buf);
                    self.out.push_back(Outgoing {
                        destination: t.destination,
                        flow,
                        payload: Bytes::copy_from_slice(&buf[..t.size]),
                        segment_size: None,
                    });
                } else {
                    match self.endpoint.accept(incoming, now, &mut buf, self.server.clone()) {
                        Ok((h, conn)) => {
                            let id = self.next_id;
                            self.next_id += 1;
                            // The server-side probe is not shared with anyone: accepted
                            // connections report through their interval records only when sending.
                            let cc = self.config.server_cc.to_string();
                            self.conns
                                .insert(h, Conn::new(conn, id, flow, now, ControllerProbe::new(), cc));
                            self.drive(h, now);
                        }
                        Err(e) => {
                            tracing::debug!(%from, "rejected a connection attempt: {}", e.cause);
                            if let Some(t) = e.response {
                                self.out.push_back(Outgoing {
                                    destination: t.destination,
                                    flow,
                                    payload: Bytes::copy_from_slice(&buf[..t.size]),
                                    segment_size: None,
                                });
                            }
                        }
                    }
                }
            }
            Some(DatagramEvent::Response(t)) => {
                self.out.push_back(Outgoing {
                    destination: t.destination,
                    flow,
                    payload: Bytes::copy_from_slice(&buf[..t.size]),
                    segment_size: None,
                });
            }
            None => {}
        }
        buf.clear();
        self.buf = buf;
    }

    /// Let one [`Outgoing`] carry up to `n` datagrams of a connection
    /// (segmentation offload, GSO); 1 (the default, and what the simulator
    /// uses) gives one datagram each. [`udp::drive`](crate::udp::drive) sets it
    /// from what the socket supports.
    pub fn set_max_segments(&mut self, n: usize) {
        self.max_segments = n.max(1);
    }

    /// The next datagram (or GSO batch) to send.
    pub fn poll_transmit(&mut self) -> Option<Outgoing> {
        self.out.pop_front()
    }

    /// When the node next needs [`handle_timeout`](Self::handle_timeout).
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        self.conns
            .values_mut()
            .flat_map(|c| [c.conn.poll_timeout(), c.next_sample, Self::app_wakeup(c)])
            .flatten()
            .min()
    }

    /// Time has reached a wake-up reported by [`poll_timeout`](Self::poll_timeout).
    pub fn handle_timeout(&mut self, now: Instant) {
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        for (&h, c) in self.conns.iter_mut() {
            let wake = [c.conn.poll_timeout(), c.next_sample, Self::app_wakeup(c)];
            if wake.into_iter().flatten().any(|t| t <= now) {
                due.push(h);
            }
        }
        for &h in &due {
            if let Some(c) = self.conns.get_mut(&h)
                && c.conn.poll_timeout().is_some_and(|t| t <= now)
            {
                c.conn.handle_timeout(now);
            }
            self.drive(h, now);
        }
        self.due = due;
    }

    /// The next thing to report, if any.
    pub fn poll_event(&mut self) -> Option<NodeEvent> {
        self.events.pop_front()
    }

    /// Connections open (including ones that are closing).
    pub fn connections(&self) -> usize {
        self.conns.len()
    }

    /// The latest controller snapshot of a client transfer's connection.
    pub fn snapshot(&self, id: u64) -> Option<tput_cc::Snapshot> {
        self.conns.values().find(|c| c.id == id).and_then(|c| c.probe.latest())
    }

    fn app_wakeup(c: &Conn) -> Option<Instant> {
        if c.stage != Stage::Sending {
            return None;
        }
        let start = c.send_start?;
        let deadline = c.request.and_then(|r| r.duration).map(|d| start + d);
        // Only a sender waiting for the rate limiter (not for flow-control
        // credit, which an ACK brings) needs a timer; otherwise the wake-up
        // would lie in the past and spin.
        let paced = c
            .client
            .as_ref()
            .and_then(|s| s.rate_limit)
            .filter(|_| c.pending.is_empty())
            .and_then(|rate| {
                // Next moment the rate limit lets one more chunk go.
                let secs = (c.sent + CHUNK as u64) as f64 * 8.0 / rate.bits_per_sec() as f64;
                start.checked_add(Duration::try_from_secs_f64(secs).ok()?)
            });
        [deadline, paced].into_iter().flatten().min()
    }

    /// Process everything pending on one connection at `now`.
    fn drive(&mut self, h: ConnectionHandle, now: Instant) {
        let Some(c) = self.conns.get_mut(&h) else { return };
        loop {
            let mut progressed = false;
            while let Some(ev) = c.conn.poll_endpoint_events() {
                if let Some(back) = self.endpoint.handle_event(h, ev) {
                    c.conn.handle_event(back);
                }
                progressed = true;
            }
            while let Some(ev) = c.conn.poll() {
                progressed = true;
                Self::on_event(c, ev, now);
            }
            Self::app_io(c, now);
            Self::sample(c, now, &mut self.events);
            let mut any = false;
            loop {
                let mut buf = Vec::with_capacity(usize::from(self.config.mtu) * self.max_segments);
                match c.conn.poll_transmit(now, self.max_segments, &mut buf) {
                    Some(t) => {
                        buf.truncate(t.size);
                        self.out.push_back(Outgoing {
                            destination: t.destination,
                            flow: c.flow,
                            payload: buf.into(),
                            segment_size: t.segment_size,
                        });
                        any = true;
                    }
                    None => break,
                }
            }
            // Another pass only if something happened: sending can surface new
            // events, and new events can let the application write more.
            if !(progressed || any) {
                break;
            }
        }
        if c.stage == Stage::Done && c.completed.is_none() {
            c.completed = Some(now);
        }
        if c.conn.is_drained() {
            let mut c = self.conns.remove(&h).expect("present");
            Self::finish(&mut c, now, &mut self.events);
        }
    }

    fn on_event(c: &mut Conn, ev: Event, now: Instant) {
        match ev {
            Event::Connected => {
                if let Some(spec) = c.client.clone() {
                    let Some(id) = c.conn.streams().open(Dir::Bi) else {
                        c.fail(now, CLOSE_PROTOCOL_ERROR, "peer allows no bidirectional stream".into());
                        return;
                    };
                    c.stream = Some(id);
                    let eval_slot = match spec.eval_slot {
                        EvalSlot::Time(d) => d,
                        EvalSlot::Rtts(n) => c.conn.rtt() * n,
                    };
                    let req = Request {
                        direction: spec.direction,
                        bytes: spec.bytes,
                        duration: spec.duration,
                        // The pattern key was drawn at connect time.
                        key: c.pattern.key(),
                        target_bps: spec.target.map_or(0, |r| r.bits_per_sec()),
                        eval_slot,
                        interval: spec.interval,
                    };
                    c.request = Some(req);
                    // Quinn buffers the whole 64-byte request: the stream is fresh.
                    if let Err(e) = c.conn.send_stream(id).write(&req.encode()) {
                        c.fail(now, CLOSE_PROTOCOL_ERROR, format!("cannot write the request: {e}"));
                        return;
                    }
                    match spec.direction {
                        Direction::Upload => Self::start_sending(c, now),
                        Direction::Download => {
                            let _ = c.conn.send_stream(id).finish();
                            c.meter = Some(ReceiveMeter::new(now, req.interval, req.eval_slot, req.target_bps));
                            c.stage = Stage::Receiving;
                        }
                    }
                }
            }
            Event::Stream(StreamEvent::Opened { dir: Dir::Bi }) => {
                if c.client.is_none()
                    && c.stream.is_none()
                    && let Some(id) = c.conn.streams().accept(Dir::Bi)
                {
                    c.stream = Some(id);
                }
            }
            Event::Stream(StreamEvent::Finished { id }) if Some(id) == c.stream && c.stage == Stage::AwaitAcked => {
                // A client now waits for the receiver's report; a server after a
                // download is done: the peer has everything and closes.
                c.stage = if c.client.is_some() {
                    Stage::AwaitReport
                } else {
                    Stage::Done
                };
            }
            Event::ConnectionLost { reason } => {
                let clean = match &reason {
                    ConnectionError::ApplicationClosed(close) => close.error_code == VarInt::from_u32(0),
                    ConnectionError::LocallyClosed => true,
                    _ => false,
                };
                // A server whose download was fully written may see the client's
                // clean close before the ACK of the stream's end: the client only
                // closes cleanly after verifying every byte.
                let finished_download = c.client.is_none() && c.stage == Stage::AwaitAcked;
                if !clean || (c.stage != Stage::Done && !finished_download) {
                    let why = match &reason {
                        ConnectionError::ApplicationClosed(close) => {
                            format!("peer closed the connection: {}", String::from_utf8_lossy(&close.reason))
                        }
                        ConnectionError::TimedOut => "connection timed out (no packet within the idle timeout)".into(),
                        other => format!("connection lost: {other}"),
                    };
                    if c.error.is_none() {
                        c.error = Some(why);
                    }
                }
                c.stage = Stage::Done;
            }
            _ => {}
        }
    }

    fn start_sending(c: &mut Conn, now: Instant) {
        c.stage = Stage::Sending;
        c.send_start = Some(now);
        c.sample_start = now;
        let interval = c.request.map_or(Duration::ZERO, |r| r.interval);
        c.next_sample = (!interval.is_zero()).then(|| now + interval);
        let stats = c.conn.stats();
        c.sample_lost = stats.path.lost_packets;
        c.sample_events = stats.path.congestion_events;
    }

    fn app_io(c: &mut Conn, now: Instant) {
        let Some(id) = c.stream else { return };
        match c.stage {
            Stage::AwaitRequest => {
                let mut done = false;
                if let Ok(mut chunks) = c.conn.recv_stream(id).read(true) {
                    while c.inbuf.len() < REQUEST_LEN {
                        match chunks.next(REQUEST_LEN - c.inbuf.len()) {
                            Ok(Some(chunk)) => c.inbuf.extend_from_slice(&chunk.bytes),
                            Ok(None) => {
                                done = true;
                                break;
                            }
                            Err(_) => break,
                        }
                    }
                    let _ = chunks.finalize();
                }
                if c.inbuf.len() == REQUEST_LEN {
                    match Request::decode(&c.inbuf) {
                        Ok(req) => {
                            c.inbuf.clear();
                            c.request = Some(req);
                            c.pattern = Pattern::new(req.key);
                            match req.direction {
                                Direction::Upload => {
                                    c.meter = Some(ReceiveMeter::new(now, req.interval, req.eval_slot, req.target_bps));
                                    c.stage = Stage::Receiving;
                                }
                                Direction::Download => Self::start_sending(c, now),
                            }
                        }
                        Err(e) => c.fail(now, CLOSE_PROTOCOL_ERROR, e.to_string()),
                    }
                } else if done {
                    c.fail(
                        now,
                        CLOSE_PROTOCOL_ERROR,
                        "stream ended before the request was complete".into(),
                    );
                }
            }
            Stage::Receiving => Self::receive(c, id, now),
            Stage::AwaitReport => Self::read_report(c, id, now),
            _ => {}
        }
        if c.stage == Stage::Sending {
            Self::send(c, id, now);
        }
    }

    fn send(c: &mut Conn, id: StreamId, now: Instant) {
        let Some(req) = c.request else { return };
        let start = c.send_start.unwrap_or(now);
        let deadline = req.duration.map(|d| start + d);
        let rate = c.client.as_ref().and_then(|s| s.rate_limit);
        loop {
            let past_deadline = deadline.is_some_and(|d| now >= d);
            if past_deadline {
                // Time is up (proto step 2): drop what is written but unsent
                // with a reset the receiver takes as the end. A client then
                // waits for the report; a server (download) for the client's close.
                c.pending = Bytes::new();
                let _ = c.conn.send_stream(id).reset(VarInt::from_u32(RESET_TIME_UP));
                c.stage = if c.client.is_some() {
                    Stage::AwaitReport
                } else {
                    Stage::AwaitAcked
                };
                return;
            }
            if req.bytes.is_some_and(|b| c.sent >= b) && c.pending.is_empty() {
                let _ = c.conn.send_stream(id).finish();
                c.stage = Stage::AwaitAcked;
                return;
            }
            if c.pending.is_empty() {
                let mut n = CHUNK as u64;
                if let Some(b) = req.bytes {
                    n = n.min(b - c.sent);
                }
                if let Some(rate) = rate {
                    let allowed = (now.saturating_duration_since(start).as_secs_f64() * rate.bits_per_sec() as f64
                        / 8.0) as u64
                        + CHUNK as u64;
                    n = n.min(allowed.saturating_sub(c.sent));
                    if n == 0 {
                        return;
                    }
                }
                let mut chunk = vec![0u8; n as usize];
                c.pattern.fill(c.sent, &mut chunk);
                c.pending = chunk.into();
            }
            match c.conn.send_stream(id).write(&c.pending) {
                Ok(0) => return,
                Ok(n) => {
                    c.sent += n as u64;
                    let _ = c.pending.split_to(n);
                }
                Err(quinn_proto::WriteError::Blocked) => return,
                Err(e) => {
                    c.fail(now, CLOSE_PROTOCOL_ERROR, format!("peer stopped the stream: {e}"));
                    return;
                }
            }
        }
    }

    fn receive(c: &mut Conn, id: StreamId, now: Instant) {
        let mut finished = false;
        // Ended by the sender's time-up reset rather than a FIN.
        let mut time_up = false;
        // (close code, reason) if the payload cannot be accepted.
        let mut failure = None;
        if let Ok(mut chunks) = c.conn.recv_stream(id).read(true) {
            loop {
                match chunks.next(usize::MAX) {
                    Ok(Some(chunk)) => {
                        let meter = c.meter.as_mut().expect("receiving has a meter");
                        if let Err(at) = c.pattern.verify(meter.bytes, &chunk.bytes) {
                            failure = Some((CLOSE_CORRUPT, format!("payload byte {at} does not match the pattern")));
                            break;
                        }
                        meter.add(now, chunk.bytes.len() as u64);
                    }
                    Ok(None) => {
                        finished = true;
                        break;
                    }
                    Err(quinn_proto::ReadError::Blocked) => break,
                    Err(quinn_proto::ReadError::Reset(code))
                        if code == VarInt::from_u32(RESET_TIME_UP)
                            && c.request.is_some_and(|r| r.duration.is_some()) =>
                    {
                        // A transfer for a duration ends this way (proto step 2).
                        finished = true;
                        time_up = true;
                        break;
                    }
                    Err(e) => {
                        failure = Some((CLOSE_PROTOCOL_ERROR, format!("payload stream reset by the peer: {e}")));
                        break;
                    }
                }
            }
            let _ = chunks.finalize();
        }
        if let Some((code, why)) = failure {
            c.fail(now, code, why);
            return;
        }
        if finished {
            let meter = c.meter.as_ref().expect("receiving has a meter");
            let req = c.request.expect("receiving has a request");
            if let Some(b) = req.bytes
                && meter.bytes != b
                && !time_up
            {
                let why = format!("stream ended after {} of {b} bytes", meter.bytes);
                c.fail(now, CLOSE_PROTOCOL_ERROR, why);
                return;
            }
            let report = meter.report(now);
            c.receiver = Some(report.clone());
            if c.client.is_some() {
                // Download complete: the client closes.
                c.stage = Stage::Done;
                c.conn.close(now, VarInt::from_u32(0), Bytes::from_static(b"done"));
            } else {
                let json = serde_json::to_vec(&report).expect("reports serialize");
                let mut msg = (json.len() as u32).to_be_bytes().to_vec();
                msg.extend_from_slice(&json);
                // The stream's send half has the whole window available: the
                // server has written nothing else on it.
                let mut s = c.conn.send_stream(id);
                let mut off = 0;
                while off < msg.len() {
                    match s.write(&msg[off..]) {
                        Ok(n) if n > 0 => off += n,
                        _ => break,
                    }
                }
                if off < msg.len() {
                    c.fail(
                        now,
                        CLOSE_PROTOCOL_ERROR,
                        "report larger than the peer's stream window".into(),
                    );
                    return;
                }
                let _ = s.finish();
                c.stage = Stage::Done;
            }
        }
    }

    fn read_report(c: &mut Conn, id: StreamId, now: Instant) {
        let mut finished = false;
        if let Ok(mut chunks) = c.conn.recv_stream(id).read(true) {
            loop {
                match chunks.next(usize::MAX) {
                    Ok(Some(chunk)) => {
                        if c.inbuf.len() + chunk.bytes.len() > MAX_REPORT_BYTES + 4 {
                            break;
                        }
                        c.inbuf.extend_from_slice(&chunk.bytes);
                    }
                    Ok(None) => {
                        finished = true;
                        break;
                    }
                    Err(_) => break,
                }
            }
            let _ = chunks.finalize();
        }
        if c.inbuf.len() > MAX_REPORT_BYTES + 4 {
            c.fail(now, CLOSE_PROTOCOL_ERROR, "receiver report too large".into());
            return;
        }
        if !finished {
            return;
        }
        let parsed = (c.inbuf.len() >= 4)
            .then(|| u32::from_be_bytes(c.inbuf[..4].try_into().expect("4 bytes")) as usize)
            .filter(|&n| n == c.inbuf.len() - 4)
            .ok_or_else(|| "receiver report has a bad length".to_string())
            .and_then(|_| serde_json::from_slice::<ReceiverReport>(&c.inbuf[4..]).map_err(|e| e.to_string()));
        match parsed {
            Ok(report) => {
                let expected = c.sent;
                // A transfer for a duration ends with a reset that drops what
                // was written but not yet sent (proto step 2): fewer may arrive.
                let timed = c.request.is_some_and(|r| r.duration.is_some());
                let consistent = if timed {
                    report.bytes <= expected
                } else {
                    report.bytes == expected
                };
                if !consistent {
                    let why = format!("receiver verified {} bytes, {expected} were sent", report.bytes);
                    c.receiver = Some(report);
                    c.fail(now, CLOSE_PROTOCOL_ERROR, why);
                    return;
                }
                c.receiver = Some(report);
                c.stage = Stage::Done;
                c.conn.close(now, VarInt::from_u32(0), Bytes::from_static(b"done"));
            }
            Err(e) => c.fail(now, CLOSE_PROTOCOL_ERROR, format!("bad receiver report: {e}")),
        }
    }

    /// Emit every interval record that is due at `now`. While sending, records
    /// end on interval boundaries; once sending is over, a last partial record
    /// ends at `now` and sampling stops.
    fn sample(c: &mut Conn, now: Instant, events: &mut VecDeque<NodeEvent>) {
        while let Some(at) = c.next_sample {
            let sending = matches!(c.stage, Stage::Sending | Stage::AwaitAcked);
            if sending && now < at {
                return;
            }
            let interval = c.request.map_or(Duration::ZERO, |r| r.interval);
            let start = c.send_start.unwrap_or(c.created);
            let end = if sending { at } else { now.min(at) };
            let stats = c.conn.stats();
            let secs = end.saturating_duration_since(c.sample_start).as_secs_f64();
            let bytes = c.sent - c.sample_sent;
            let rec = IntervalStats {
                start_secs: c.sample_start.saturating_duration_since(start).as_secs_f64(),
                end_secs: end.saturating_duration_since(start).as_secs_f64(),
                bytes,
                goodput_bps: if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 },
                cwnd_bytes: stats.path.cwnd,
                srtt_ms: stats.path.rtt.as_secs_f64() * 1e3,
                min_rtt_ms: stats.path.min_rtt.as_secs_f64() * 1e3,
                lost_packets: stats.path.lost_packets - c.sample_lost,
                congestion_events: stats.path.congestion_events - c.sample_events,
                controller: c.probe.latest(),
            };
            c.sample_start = end;
            c.sample_sent = c.sent;
            c.sample_lost = stats.path.lost_packets;
            c.sample_events = stats.path.congestion_events;
            c.next_sample = if sending { Some(at + interval) } else { None };
            events.push_back(NodeEvent::Interval {
                id: c.id,
                stats: rec.clone(),
            });
            c.intervals.push(rec);
        }
    }

    fn finish(c: &mut Conn, now: Instant, events: &mut VecDeque<NodeEvent>) {
        if c.reported {
            return;
        }
        c.reported = true;
        let local_sender = c.local_sender();
        let direction = c
            .request
            .map(|r| r.direction)
            .or(c.client.as_ref().map(|s| s.direction));
        let Some(direction) = direction else {
            // A connection that never carried a request (a probe or an aborted handshake).
            if c.client.is_none() {
                return;
            }
            events.push_back(NodeEvent::Finished(Box::new(TransferOutcome {
                id: c.id,
                direction: Direction::Upload,
                local_sender: true,
                cc: c.cc.clone(),
                bytes: 0,
                elapsed_secs: c
                    .completed
                    .unwrap_or(now)
                    .saturating_duration_since(c.created)
                    .as_secs_f64(),
                intervals: Vec::new(),
                receiver: None,
                error: c
                    .error
                    .clone()
                    .or(Some("connection closed before the transfer started".into())),
            })));
            return;
        };
        let bytes = if local_sender {
            // What the receiver verified, when it said so; else what was written.
            c.receiver.as_ref().map_or(c.sent, |r| r.bytes)
        } else {
            c.meter.as_ref().map_or(0, |m| m.bytes)
        };
        let mut error = c.error.clone();
        if error.is_none() && c.receiver.is_none() && (c.client.is_some() || !local_sender) {
            error = Some("connection closed before the transfer completed".into());
        }
        events.push_back(NodeEvent::Finished(Box::new(TransferOutcome {
            id: c.id,
            direction,
            local_sender,
            cc: c.cc.clone(),
            bytes,
            elapsed_secs: c
                .completed
                .unwrap_or(now)
                .saturating_duration_since(c.created)
                .as_secs_f64(),
            intervals: std::mem::take(&mut c.intervals),
            receiver: c.receiver.take(),
            error,
        })));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outgoing(len: usize, segment_size: Option<usize>) -> Outgoing {
        Outgoing {
            destination: "127.0.0.1:4433".parse().unwrap(),
            flow: 0,
            payload: (0..len).map(|i| i as u8).collect::<Vec<u8>>().into(),
            segment_size,
        }
    }

    #[test]
    fn a_gso_batch_splits_into_its_datagrams() {
        let sizes = |o: &Outgoing| o.datagrams().map(|d| d.len()).collect::<Vec<_>>();
        assert_eq!(sizes(&outgoing(1200, None)), [1200]);
        assert_eq!(sizes(&outgoing(3000, Some(1200))), [1200, 1200, 600]);
        assert_eq!(sizes(&outgoing(2400, Some(1200))), [1200, 1200]);
        // A batch of one, and a segment size larger than the payload.
        assert_eq!(sizes(&outgoing(800, Some(1200))), [800]);
        // Odd values do not loop or panic.
        assert_eq!(sizes(&outgoing(5, Some(0))), [5]);
        assert_eq!(sizes(&outgoing(0, None)).len(), 0);
        // The pieces are the payload, in order.
        let o = outgoing(3000, Some(1200));
        let joined: Vec<u8> = o.datagrams().flat_map(|d| d.to_vec()).collect();
        assert_eq!(joined, o.payload.to_vec());
    }
}
