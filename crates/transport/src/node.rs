//! The sans-IO QUIC node: one quinn-proto endpoint, its connections and the
//! transfers on them. Both back ends drive exactly this code: the tokio UDP
//! loop ([`crate::udp`]) in real time and the simulator host of `tput-lab`
//! in virtual time. Every call takes `now`; nothing here reads a clock.

use std::collections::{BTreeMap, VecDeque};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use quinn_proto::congestion::ControllerFactory;
use quinn_proto::{
    ClientConfig, Connection, ConnectionError, ConnectionHandle, ConnectionId, ConnectionIdGenerator, DatagramEvent,
    Dir, Endpoint, EndpointConfig, Event, QlogConfig, QlogStream, ServerConfig, StreamEvent, StreamId, TransportConfig,
    TransportErrorCode, VarInt,
};
use tput_cc::{
    Aggregate, BandwidthSource, ControllerProbe, ControllerSpec, ControllerSwitch, EvalSlot, QuinnFactory, SwitchSlot,
    units::Rate,
};

use crate::Error;
use crate::pattern::{Pattern, splitmix64};
use crate::proto::{AppBuffers, Direction, Frame, REQUEST_LEN, RESET_TIME_UP, Request};
use crate::stall::{StallFactory, StallState};
use crate::stats::{IntervalStats, ReceiveMeter, ReceiverReport, SenderReport, TransferOutcome};
use crate::tls::{ClientAuth, Identity, ServerTrust, client_crypto, server_crypto};

/// Application error code a node closes with when the peer breaks the
/// protocol: a malformed request (including a controller spec the server
/// cannot parse), a bad frame or report. The close's reason names the error.
pub const CLOSE_PROTOCOL_ERROR: u32 = 1;
/// Application error code a node closes with when payload verification fails.
pub const CLOSE_CORRUPT: u32 = 2;
/// Application error code a node closes with when nothing has arrived from
/// its peer for the idle timeout ([`NodeConfig::strict_idle`]).
pub const CLOSE_TIMED_OUT: u32 = 3;

const CHUNK: usize = 64 * 1024;
/// Most bytes of one GSO batch: a UDP datagram's payload limit (65 535
/// bytes less the 8-byte UDP and 20-byte IPv4 headers), which Linux applies
/// to the whole batch of a `sendmsg` with `UDP_SEGMENT`.
const MAX_GSO_BYTES: usize = 65_535 - 8 - 20;
/// Smallest chunk of payload written at once, bytes.
const MIN_CHUNK: u64 = 4096;
/// Congestion windows of payload written ahead ([`write_ahead`]).
const WRITE_AHEAD_WINDOWS: u64 = 3;
/// Bytes of payload written ahead beyond the windows ([`write_ahead`]).
const WRITE_AHEAD_BYTES: u64 = 16 * 1024;

/// Hand as much of `pending` to `stream` as it takes, without copying:
/// quinn-proto keeps the `Bytes` (or the front part of it) in its send
/// buffer and `pending` is left holding what did not fit. Returns the bytes
/// written.
fn write_pending(
    mut stream: quinn_proto::SendStream<'_>,
    pending: &mut Bytes,
) -> Result<usize, quinn_proto::WriteError> {
    stream.write_chunks(std::slice::from_mut(pending)).map(|w| w.bytes)
}

/// How many payload bytes a sender keeps written but unacknowledged in
/// quinn-proto's send buffer (its `send_window`, counted from the first
/// unacknowledged byte): [`WRITE_AHEAD_WINDOWS`] congestion windows plus
/// [`WRITE_AHEAD_BYTES`].
///
/// The buffer holds the packets in flight, the acknowledged data kept behind
/// a lost packet until its retransmission is acknowledged (about the window
/// before the loss), and what leaves next: at most one window between two
/// drives (plus two PTO probes, RFC 9002 §6.2.4). So quinn-proto has a full
/// packet to build whenever the controller lets it send, and the packets are
/// the ones an unlimited buffer gives. `write_ahead_stays_off_the_wire` in
/// the lab's tests checks that on lossy scenarios (random loss, periodic
/// cut-offs, many flows on a short queue, the guarantee controller's jumps);
/// there two windows were already enough and one was not.
///
/// Without the limit a sender wrote up to the peer's flow-control credit
/// (1.25 MB by default, or whatever the receiver grants): ~1.4 MB of pattern
/// bytes per simulated flow, and STREAM_DATA_BLOCKED / DATA_BLOCKED frames
/// (RFC 9000 §19.13, §19.12) on paths the credit never limited.
fn write_ahead(conn: &Connection) -> u64 {
    let cwnd = conn.congestion_state().window();
    cwnd.saturating_mul(WRITE_AHEAD_WINDOWS)
        .saturating_add(WRITE_AHEAD_BYTES)
}

/// Controller of the end that receives the payload. It only paces ACKs and
/// the reports, and a server runs it until a download's request names the
/// sender's; quinn-proto's own default (RFC 9438).
fn receiving_controller() -> ControllerSpec {
    ControllerSpec::Cubic(Default::default())
}

/// Reads the CPU time of the node's process, in seconds (user plus system).
pub type CpuClock = fn() -> Option<f64>;

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
    pub qlog_dir: Option<PathBuf>,
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
    /// Simulation only: after the real TLS handshake, 1-RTT packets travel
    /// unencrypted, with the same sizes as with AES-128-GCM (a 16-byte tag,
    /// 16-byte header-protection sample), so a simulation's metrics do not
    /// change and its CPU time drops. Both ends must agree. The
    /// [`udp`](crate::udp) functions refuse a configuration that sets it.
    pub null_packet_protection: bool,
    /// A sender writes payload up to the peer's flow-control credit instead
    /// of three congestion windows (plus 16 KiB) ahead of the network, the
    /// default. For comparisons: the packets are the same but for
    /// STREAM_DATA_BLOCKED/DATA_BLOCKED frames (RFC 9000 §19.12-13) where
    /// the credit is reached, and each sending connection holds up to the
    /// peer's receive window (1.25 MB by default) of payload.
    pub write_ahead_to_credit: bool,
}

/// What a server lets its clients do. A request beyond a limit is refused
/// with a CONNECTION_CLOSE whose reason names the limit (RFC 9000 §19.19),
/// or, for what the server itself controls in a download (its duration and
/// rate), clamped to the limit when [`clamp`](Self::clamp) is set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ServerLimits {
    /// Longest transfer a request may ask for.
    pub max_duration: Option<Duration>,
    /// Most bytes a request may ask for.
    pub max_bytes: Option<u64>,
    /// Fastest a download may be sent, bits per second (a download without
    /// a rate limit asks for "as fast as possible", which is above any limit).
    pub max_rate_bps: Option<u64>,
    /// Clamp a download's duration and rate to the limits instead of refusing it.
    pub clamp: bool,
    /// Connections at once from one IP address (`None`: only `max_connections`).
    pub max_per_address: Option<usize>,
    /// Close a connection whose request has not arrived this long after the
    /// connection began (handshake included).
    pub request_timeout: Option<Duration>,
    /// Validate client addresses with a Retry packet before accepting
    /// (RFC 9000 §8.1.2): costs a round trip, defeats spoofed-source floods.
    pub retry: bool,
}

impl ServerLimits {
    /// Check `req` against the limits, clamping where allowed; the error
    /// names the limit.
    pub fn admit(&self, req: &mut crate::proto::Request) -> Result<(), String> {
        use tput_cc::units::{Rate, format_duration};
        let download = req.direction == crate::proto::Direction::Download;
        if let (Some(max), Some(d)) = (self.max_duration, req.duration)
            && d > max
        {
            if !(self.clamp && download) {
                return Err(format!(
                    "refused: duration {} exceeds this server's limit of {}",
                    format_duration(d),
                    format_duration(max)
                ));
            }
            req.duration = Some(max);
        }
        if let (Some(max), Some(b)) = (self.max_bytes, req.bytes)
            && b > max
        {
            return Err(format!("refused: {b} bytes exceed this server's limit of {max} bytes"));
        }
        if let Some(max) = self.max_rate_bps.filter(|_| download) {
            let asked = req.rate_limit_bps;
            if asked == 0 || asked > max {
                if !self.clamp {
                    let asked = if asked == 0 {
                        "no rate limit".to_string()
                    } else {
                        format!("a rate of {}", Rate::from_bits_per_sec(asked))
                    };
                    return Err(format!(
                        "refused: {asked} exceeds this server's limit of {} for downloads (ask with --rate-limit)",
                        Rate::from_bits_per_sec(max)
                    ));
                }
                req.rate_limit_bps = max;
            }
        }
        Ok(())
    }
}

impl Default for NodeConfig {
    fn default() -> Self {
        Self {
            seed: None,
            mtu: 1200,
            mtu_discovery: true,
            idle_timeout: Duration::from_secs(10),
            keep_alive: None,
            strict_idle: false,
            stall_probe: None,
            max_connections: 64,
            server_bandwidth: None,
            server_aggregate: None,
            receive_window: None,
            qlog_dir: None,
            cpu_clock: None,
            limits: ServerLimits::default(),
            client_auth: None,
            client_identity: None,
            null_packet_protection: false,
            write_ahead_to_credit: false,
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
    /// Controller of the sender: the client's for an upload; for a download
    /// the request names it and the server builds it.
    pub cc: ControllerSpec,
    /// Target throughput judged per evaluation slot.
    pub target: Option<Rate>,
    /// Evaluation slot length.
    pub eval_slot: EvalSlot,
    /// Sender-side statistics interval (zero = none).
    pub interval: Duration,
    /// Application-level rate limit of the sender (the server applies it to a download).
    pub rate_limit: Option<Rate>,
    /// Flow id stamped on the client's datagrams in the simulator.
    pub flow: u32,
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
            buffers: None,
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

/// Bytes queued for one send stream, written as flow control allows.
#[derive(Debug, Default)]
struct Outbox {
    buf: Vec<u8>,
    /// Finish the stream once `buf` is written.
    finish: bool,
    finished: bool,
}

impl Outbox {
    fn push(&mut self, frame: &Frame) {
        self.buf.extend_from_slice(&frame.encode());
    }

    /// Write what the stream takes; `Err` if the peer stopped it.
    fn flush(&mut self, conn: &mut Connection, id: StreamId) -> Result<(), String> {
        let mut s = conn.send_stream(id);
        while !self.buf.is_empty() {
            match s.write(&self.buf) {
                Ok(0) | Err(quinn_proto::WriteError::Blocked) => return Ok(()),
                Ok(n) => {
                    self.buf.drain(..n);
                }
                Err(e) => return Err(format!("peer stopped a report stream: {e}")),
            }
        }
        if self.finish && !self.finished {
            self.finished = true;
            let _ = s.finish();
        }
        Ok(())
    }
}

/// Read what has arrived on a stream into `buf`; `Ok(true)` once the stream has ended.
fn read_into(conn: &mut Connection, id: StreamId, buf: &mut Vec<u8>) -> Result<bool, String> {
    let mut ended = false;
    let mut failure = None;
    if let Ok(mut chunks) = conn.recv_stream(id).read(true) {
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => buf.extend_from_slice(&chunk.bytes),
                Ok(None) => {
                    ended = true;
                    break;
                }
                Err(quinn_proto::ReadError::Blocked) => break,
                Err(e) => {
                    failure = Some(format!("report stream reset by the peer: {e}"));
                    break;
                }
            }
        }
        let _ = chunks.finalize();
    }
    match failure {
        Some(why) => Err(why),
        None => Ok(ended),
    }
}

/// Where the sending node stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SendPhase {
    /// Writing payload.
    Sending,
    /// All payload written and the stream finished; waiting for the peer to acknowledge it.
    Draining,
    /// Payload over (acknowledged, or reset when the time was up); waiting for the receiver's report.
    AwaitReport,
    /// The receiver's report is in (a server has queued its own after it).
    Done,
}

/// What only a sending server does.
#[derive(Debug)]
enum SenderSide {
    /// Client of an upload: closes the connection once the receiver's report is in.
    Client,
    /// Server of a download: mirrors its interval records and its own report
    /// to the client on a unidirectional stream (protocol step 4).
    Server { uni: StreamId, out: Outbox },
}

/// The sending end of a transfer.
#[derive(Debug)]
struct Sender {
    side: SenderSide,
    request: Request,
    stream: StreamId,
    /// Spec of the controller that sends.
    cc: String,
    pattern: Pattern,
    start: Instant,
    sent: u64,
    pending: Bytes,
    /// Size of the next chunk of payload to write, bytes.
    chunk: u64,
    /// Where chunks are cut from.
    pool: ChunkPool,
    phase: SendPhase,
    // interval records
    next_sample: Option<Instant>,
    sample_start: Instant,
    sample_sent: u64,
    sample_lost: u64,
    sample_events: u64,
    /// Records made so far, in order; the first `emitted` are complete and reported.
    records: Vec<IntervalStats>,
    emitted: usize,
    /// Whether the last record is made (sending is over).
    sampled_all: bool,
    /// The receiver's count per interval, as its frames arrive.
    delivered: BTreeMap<u64, u64>,
    /// Frames from the receiver, not yet complete.
    inbuf: Vec<u8>,
    receiver: Option<ReceiverReport>,
    cpu_start: Option<f64>,
    /// Buffer streams written or unacknowledged, oldest first (application-buffer model).
    bufs: VecDeque<SendBuf>,
    /// Payload offset where the next buffer starts.
    next_buf: u64,
}

/// The sender's recycled chunk buffers: writing a chunk of payload costs
/// neither an allocation nor fresh (zeroed, page-faulting) memory.
///
/// A chunk is a `Bytes` over its own buffer; quinn-proto drops it once its
/// bytes are acknowledged. Written buffers wait in `retired`; the next chunk
/// takes back one whose bytes are all gone (`BytesMut::try_reclaim`), or
/// else a new one, and every other buffer with nothing left in flight is let
/// go, so memory follows what is written ahead. (One chunk per buffer: two
/// or four raised a 1000-flow simulation's peak from 190 to 223 or 240 MB,
/// a buffer living until its last chunk is acknowledged.)
#[derive(Debug, Default)]
struct ChunkPool {
    current: Option<BytesMut>,
    retired: VecDeque<BytesMut>,
}

/// Written buffers kept at most (beyond that the oldest is let go).
const POOL_RETIRED: usize = 256;

impl ChunkPool {
    /// The `n` payload bytes at stream offset `offset`.
    fn cut(&mut self, pattern: &Pattern, offset: u64, n: usize) -> Bytes {
        let buf = match self.current.take() {
            Some(a) if a.capacity() >= n => a,
            used => {
                if let Some(used) = used {
                    self.retired.push_back(used);
                }
                let free = self.retired.iter_mut().position(|a| a.try_reclaim(n));
                let next = free.and_then(|i| self.retired.remove(i));
                // Other buffers with nothing left in flight are let go: the
                // write-ahead shrank (smaller windows, smaller chunks).
                self.retired.retain_mut(|a| !a.try_reclaim(1));
                if self.retired.len() > POOL_RETIRED {
                    self.retired.pop_front();
                }
                next.unwrap_or_else(|| BytesMut::with_capacity(n))
            }
        };
        let buf = self.current.insert(buf);
        // Filled through a small buffer: `BytesMut` only takes initialised bytes.
        let mut stage = [0u8; 4096];
        let mut done = 0;
        while done < n {
            let m = (n - done).min(stage.len());
            pattern.fill(offset + done as u64, &mut stage[..m]);
            buf.extend_from_slice(&stage[..m]);
            done += m;
        }
        buf.split().freeze()
    }
}

/// One application buffer of the sender: a unidirectional stream.
#[derive(Debug)]
struct SendBuf {
    id: StreamId,
    /// Payload offset of its first byte.
    start: u64,
    len: u64,
    written: u64,
}

impl Sender {
    fn new(side: SenderSide, request: Request, stream: StreamId, cc: String, c: &mut Connection, now: Instant) -> Self {
        let stats = c.stats();
        Self {
            side,
            pattern: Pattern::new(request.key),
            next_sample: (!request.interval.is_zero()).then(|| now + request.interval),
            request,
            stream,
            cc,
            start: now,
            sent: 0,
            pending: Bytes::new(),
            chunk: CHUNK as u64,
            pool: ChunkPool::default(),
            phase: SendPhase::Sending,
            sample_start: now,
            sample_sent: 0,
            sample_lost: stats.path.lost_packets,
            sample_events: stats.path.congestion_events,
            records: Vec::new(),
            emitted: 0,
            sampled_all: false,
            delivered: BTreeMap::new(),
            inbuf: Vec::new(),
            receiver: None,
            cpu_start: None,
            bufs: VecDeque::new(),
            next_buf: 0,
        }
    }

    fn rate_limit(&self) -> Option<u64> {
        Some(self.request.rate_limit_bps).filter(|&r| r > 0)
    }

    fn deadline(&self) -> Option<Instant> {
        self.request.duration.and_then(|d| self.start.checked_add(d))
    }
}

/// Where the receiving node stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum RecvPhase {
    /// Reading payload.
    Receiving,
    /// Payload over and the report queued; a client still waits for the server's stream.
    Reported,
    /// Everything exchanged.
    Done,
}

/// What only a receiving client does.
#[derive(Debug)]
enum ReceiverSide {
    /// Server of an upload: done once its report is queued.
    Server,
    /// Client of a download: reads the server's interval records and report
    /// from the unidirectional stream the server opens (protocol step 4).
    Client {
        uni: Option<StreamId>,
        inbuf: Vec<u8>,
        uni_ended: bool,
        records: Vec<IntervalStats>,
        sender: Option<SenderReport>,
    },
}

/// The receiving end of a transfer.
#[derive(Debug)]
struct Receiver {
    side: ReceiverSide,
    request: Request,
    stream: StreamId,
    pattern: Pattern,
    meter: ReceiveMeter,
    /// The next interval whose count is due, and when.
    next_count: Option<(u64, Instant)>,
    /// Frames to the sender, on this end's half of the transfer stream.
    out: Outbox,
    phase: RecvPhase,
    report: Option<ReceiverReport>,
    cpu_start: Option<f64>,
    /// Buffer streams being read: (stream, payload offset of its next byte,
    /// bytes it may still carry) (application-buffer model).
    bufs: Vec<(StreamId, u64, u64)>,
}

impl Receiver {
    fn new(side: ReceiverSide, request: Request, stream: StreamId, now: Instant) -> Self {
        let meter = ReceiveMeter::new(now, request.interval, request.eval_slot, request.target_bps);
        Self {
            side,
            pattern: Pattern::new(request.key),
            next_count: (!request.interval.is_zero()).then(|| (0, now + request.interval)),
            request,
            stream,
            meter,
            out: Outbox::default(),
            phase: RecvPhase::Receiving,
            report: None,
            cpu_start: None,
            bufs: Vec::new(),
        }
    }
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
    flow: u32,
    created: Instant,
    /// Snapshots of this connection's controller.
    probe: ControllerProbe,
    /// A server's handle on its connection's controller (to build the one a
    /// download's request names).
    switch: Option<ControllerSwitch>,
    cpu_clock: Option<CpuClock>,
    role: Role,
    error: Option<String>,
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
    refusal: Option<String>,
    /// What the controller tells of acknowledgements, for stall probes
    /// ([`NodeConfig::stall_probe`]).
    stall: Option<Arc<StallState>>,
    /// When this connection last sent a stall probe.
    last_stall_probe: Option<Instant>,
    /// Draws the jitter of the next stall probe's interval (seeded by the
    /// node's seed, so a simulation stays reproducible).
    stall_rng: u64,
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

    fn fail(&mut self, now: Instant, code: u32, why: String) {
        if self.error.is_none() {
            tracing::debug!(id = self.id, "transfer failed: {why}");
            self.error = Some(why.clone());
        }
        self.conn
            .close(now, VarInt::from_u32(code), Bytes::from(why.into_bytes()));
    }
}

fn cpu_since(start: Option<f64>, now: Option<f64>) -> Option<f64> {
    Some((now? - start?).max(0.0))
}

fn qlog_stream(dir: &std::path::Path, name: &str, now: Instant) -> Result<QlogStream, Error> {
    let path = dir.join(name);
    let file = std::fs::File::create(&path).map_err(|source| Error::Io {
        context: format!("creating qlog file {}", path.display()),
        source,
    })?;
    // `QlogConfig::default` takes `Instant::now()` as the start; the node's
    // `now` replaces it, so event times never depend on the host's clock.
    let mut q = QlogConfig::default();
    q.writer(Box::new(std::io::BufWriter::new(file)))
        .title(Some(name.trim_end_matches(".sqlog").to_owned()))
        .start_time(now);
    q.into_stream()
        .ok_or_else(|| Error::Config(format!("cannot start a qlog trace in {}", path.display())))
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
        ConnectionId::new(&splitmix64(self.state).to_be_bytes())
    }
    fn cid_len(&self) -> usize {
        8
    }
    fn cid_lifetime(&self) -> Option<Duration> {
        None
    }
}

/// 32 bytes derived from `seed` for one purpose (`domain`).
pub(crate) fn seed_bytes(seed: u64, domain: u8) -> [u8; 32] {
    let mut out = [0u8; 32];
    for (i, chunk) in out.chunks_mut(8).enumerate() {
        chunk.copy_from_slice(&splitmix64(seed ^ (u64::from(domain) << 56) ^ i as u64).to_le_bytes());
    }
    out
}

/// A QUIC endpoint with its connections and transfers, sans IO.
pub struct Node {
    config: NodeConfig,
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
    /// Reused by [`Node::handle_timeout`] (a hot path in the simulator).
    due: Vec<ConnectionHandle>,
    /// While [`Node::handle_datagrams`] takes in a batch: the connections
    /// it touched, driven once each at the end (`None` outside a batch).
    batch: Option<Vec<ConnectionHandle>>,
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

    /// Whether the node accepts connections (built by [`Node::server`]).
    pub fn is_server(&self) -> bool {
        self.server.is_some()
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
                let mut crypto: Arc<dyn quinn_proto::crypto::ServerConfig> =
                    Arc::new(server_crypto(id, config.client_auth.as_ref())?);
                if config.null_packet_protection {
                    crypto = Arc::new(crate::null_keys::NullServerConfig(crypto));
                }
                let prk = ring::hkdf::Salt::new(ring::hkdf::HKDF_SHA256, &[]).extract(&seed_bytes(seed, 4));
                let mut sc = ServerConfig::new(crypto, Arc::new(prk));
                // Until a request names the sender's controller (protocol step
                // 1), an accepted connection runs the receiving end's; the
                // switch swaps the requested one in for a download.
                let factory = QuinnFactory::new(receiving_controller()).switchable(switches.clone());
                sc.transport_config(Arc::new(Self::transport(&config, Arc::new(factory.clone()), None)));
                sc.max_incoming(config.max_connections.max(1));
                (Some(Arc::new(sc)), Some(factory))
            }
            None => (None, None),
        };
        let endpoint = Endpoint::new(Arc::new(ep), server.clone(), config.mtu_discovery, None);
        Ok(Self {
            config,
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
            due: Vec::new(),
            batch: None,
        })
    }

    fn transport(
        config: &NodeConfig,
        factory: Arc<dyn ControllerFactory + Send + Sync>,
        qlog: Option<QlogStream>,
    ) -> TransportConfig {
        let mut t = TransportConfig::default();
        t.congestion_controller_factory(factory);
        t.initial_mtu(config.mtu);
        t.min_mtu(config.mtu);
        if !config.mtu_discovery {
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
        t.qlog_stream(qlog);
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
        let min = crate::proto::MIN_PERIOD;
        if !spec.interval.is_zero() && spec.interval < min {
            return Err(Error::Config(format!(
                "interval {:?} is shorter than the protocol's minimum of {min:?}",
                spec.interval
            )));
        }
        if let EvalSlot::Time(d) = spec.eval_slot
            && d < min
        {
            return Err(Error::Config(format!(
                "evaluation slot {d:?} is shorter than the protocol's minimum of {min:?}"
            )));
        }
        if let Some(b) = &spec.buffers {
            b.check().map_err(Error::Config)?;
            if spec.direction == Direction::Download {
                return Err(Error::Config("application buffers are for uploads only".into()));
            }
        }
        let cc_text = spec.cc.to_string();
        if cc_text.len() > crate::proto::MAX_CC_SPEC_LEN {
            return Err(Error::Config(format!(
                "controller spec of {} bytes: at most {} fit in a request",
                cc_text.len(),
                crate::proto::MAX_CC_SPEC_LEN
            )));
        }
        let id = self.next_id;
        let probe = ControllerProbe::new();
        let mut factory = match spec.direction {
            Direction::Upload => QuinnFactory::new(spec.cc.clone()),
            // The server sends and builds the requested controller.
            Direction::Download => QuinnFactory::new(receiving_controller()),
        }
        .with_probe(probe.clone());
        if let Some(bw) = &spec.bandwidth {
            factory = factory.with_bandwidth(bw.clone());
        }
        if let (Some(group), Direction::Upload) = (&spec.aggregate, spec.direction) {
            factory = factory.with_aggregate(group.clone());
        }
        let qlog = match &self.config.qlog_dir {
            Some(dir) => Some(qlog_stream(dir, &format!("client-{id}.sqlog"), now)?),
            None => None,
        };
        let mut crypto: Arc<dyn quinn_proto::crypto::ClientConfig> =
            Arc::new(client_crypto(trust, self.config.client_identity.as_ref())?);
        if self.config.null_packet_protection {
            crypto = Arc::new(crate::null_keys::NullClientConfig(crypto));
        }
        let (factory, stall) = self.stalls_probed(Arc::new(factory), now);
        let mut cc = ClientConfig::new(crypto);
        cc.transport_config(Arc::new(Self::transport(&self.config, factory, qlog)));
        let state = self.cid_state.clone();
        cc.initial_dst_cid_provider(Arc::new(move || {
            let mut s = state.lock().unwrap_or_else(PoisonError::into_inner);
            *s = s.wrapping_add(0x9e37_79b9_7f4a_7c15);
            ConnectionId::new(&splitmix64(*s).to_be_bytes())
        }));
        let (handle, conn) = self
            .endpoint
            .connect(now, cc, server, server_name)
            .map_err(|e| Error::Config(format!("cannot connect to {server}: {e}")))?;
        self.next_id += 1;
        self.key_state = splitmix64(self.key_state);
        let c = Conn {
            conn,
            id,
            flow: spec.flow,
            created: now,
            probe,
            switch: None,
            cpu_clock: self.config.cpu_clock,
            role: Role::Connecting {
                spec: Box::new(spec),
                key: self.key_state,
            },
            error: None,
            completed: None,
            cpu_secs: None,
            reported: false,
            request_deadline: None,
            last_heard: now,
            silence_limit: self.config.strict_idle.then_some(self.config.idle_timeout),
            silenced: false,
            refusal: None,
            stall,
            last_stall_probe: None,
            stall_rng: splitmix64(self.key_state ^ 0x5741_4c4c),
        };
        self.conns.insert(handle, Box::new(c));
        self.drive(handle, now);
        Ok(id)
    }

    /// Datagrams that arrived together (one receive batch; `flow` as in
    /// [`handle_datagram`](Self::handle_datagram)): each is taken in, then
    /// every connection they touched is processed once, as quinn's own
    /// endpoint driver does, instead of once per datagram.
    pub fn handle_datagrams(
        &mut self,
        now: Instant,
        flow: u32,
        batch: impl IntoIterator<Item = (SocketAddr, BytesMut)>,
    ) {
        // The list of touched connections borrows `due`'s allocation (the
        // timer path's scratch list, empty between calls) and gives it back.
        self.batch = Some(std::mem::take(&mut self.due));
        for (from, data) in batch {
            self.handle_datagram(now, from, flow, data);
        }
        let mut touched = self.batch.take().unwrap_or_default();
        for &h in &touched {
            self.drive(h, now);
        }
        touched.clear();
        self.due = touched;
    }

    /// A datagram arrived from `from`; `flow` is the simulator's flow id (0 on real sockets).
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, flow: u32, data: BytesMut) {
        let mut buf = std::mem::take(&mut self.buf);
        match self.endpoint.handle(now, from, None, None, data, &mut buf) {
            Some(DatagramEvent::ConnectionEvent(h, ev)) => {
                if let Some(c) = self.conns.get_mut(&h) {
                    c.last_heard = now;
                    c.conn.handle_event(ev);
                    match &mut self.batch {
                        Some(touched) => {
                            if !touched.contains(&h) {
                                touched.push(h);
                            }
                        }
                        None => self.drive(h, now),
                    }
                }
            }
            Some(DatagramEvent::NewConnection(incoming)) => {
                let from_here = || {
                    self.conns
                        .values()
                        .filter(|c| c.conn.remote_address().ip() == from.ip())
                        .count()
                };
                if self.config.limits.retry && !incoming.remote_address_validated() && incoming.may_retry() {
                    // RFC 9000 §8.1.2: prove the address first.
                    match self.endpoint.retry(incoming, &mut buf) {
                        Ok(t) => self.out.push_back(Outgoing {
                            destination: t.destination,
                            flow,
                            payload: Bytes::copy_from_slice(&buf[..t.size]),
                            segment_size: None,
                        }),
                        Err(e) => {
                            self.endpoint.ignore(e.into_incoming());
                        }
                    }
                } else if self.conns.len() >= self.config.max_connections {
                    // quinn-proto's refusal, a CONNECTION_CLOSE with
                    // CONNECTION_REFUSED in an Initial packet (RFC 9000
                    // §20.1), costs the server nothing but carries no
                    // reason: the client names the limit.
                    tracing::debug!(%from, "refusing a connection: server full");
                    let t = self.endpoint.refuse(incoming, &mut buf);
                    self.out.push_back(Outgoing {
                        destination: t.destination,
                        flow,
                        payload: Bytes::copy_from_slice(&buf[..t.size]),
                        segment_size: None,
                    });
                } else {
                    // Past the per-address limit the handshake still runs, so
                    // the refusal can name the limit (a client's own
                    // connections beyond it: a rare, bounded cost).
                    let refusal = self
                        .config
                        .limits
                        .max_per_address
                        .filter(|&m| from_here() >= m)
                        .map(|m| {
                            tracing::debug!(%from, "refusing a connection: {m} from this address already");
                            format!(
                                "refused: this server takes at most {m} connections at once from one address \
                             (tputctl serve --max-per-address)"
                            )
                        });
                    let id = self.next_id;
                    let (config, stall) = self.server_config(id, now);
                    match self.endpoint.accept(incoming, now, &mut buf, config) {
                        Ok((h, conn)) => {
                            self.next_id += 1;
                            // The factory built this connection's controller inside `accept`.
                            let switch = self.switches.take();
                            let probe = switch.as_ref().map(ControllerSwitch::probe).unwrap_or_default();
                            let c = Conn {
                                conn,
                                id,
                                flow,
                                created: now,
                                probe,
                                switch,
                                cpu_clock: self.config.cpu_clock,
                                role: Role::Awaiting {
                                    stream: None,
                                    inbuf: Vec::new(),
                                },
                                error: None,
                                completed: None,
                                cpu_secs: None,
                                reported: false,
                                request_deadline: self.config.limits.request_timeout.and_then(|t| now.checked_add(t)),
                                last_heard: now,
                                silence_limit: self.config.strict_idle.then_some(self.config.idle_timeout),
                                silenced: false,
                                refusal,
                                stall,
                                last_stall_probe: None,
                                stall_rng: splitmix64(self.key_state ^ id),
                            };
                            self.conns.insert(h, Box::new(c));
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

    /// The server configuration of connection `id`: the shared one, or
    /// one of its own when it writes a qlog trace or has stall probes
    /// (whose state is then the second value).
    fn server_config(&self, id: u64, now: Instant) -> (Option<Arc<ServerConfig>>, Option<Arc<StallState>>) {
        let (Some(server), Some(factory)) = (&self.server, &self.server_factory) else {
            return (self.server.clone(), None);
        };
        let qlog =
            self.config
                .qlog_dir
                .as_ref()
                .and_then(|dir| match qlog_stream(dir, &format!("server-{id}.sqlog"), now) {
                    Ok(q) => Some(q),
                    Err(e) => {
                        tracing::warn!("transfer {id} has no qlog trace: {e}");
                        None
                    }
                });
        if qlog.is_none() && self.config.stall_probe.is_none() {
            return (self.server.clone(), None);
        }
        let (factory, stall) = self.stalls_probed(Arc::new(factory.clone()), now);
        let mut sc = (**server).clone();
        sc.transport_config(Arc::new(Self::transport(&self.config, factory, qlog)));
        (Some(Arc::new(sc)), stall)
    }

    /// `factory`, wrapped for stall probes if this node sends them
    /// ([`NodeConfig::stall_probe`]), and the state the wrapper shares.
    fn stalls_probed(
        &self,
        factory: Arc<dyn ControllerFactory + Send + Sync>,
        now: Instant,
    ) -> (Arc<dyn ControllerFactory + Send + Sync>, Option<Arc<StallState>>) {
        if self.config.stall_probe.is_none() {
            return (factory, None);
        }
        let state = StallState::new(now);
        let wrapped = StallFactory {
            inner: factory,
            state: state.clone(),
        };
        (Arc::new(wrapped), Some(state))
    }

    /// Let one [`Outgoing`] carry up to `n` datagrams of a connection
    /// (segmentation offload, GSO); 1 (the default, and what the simulator
    /// uses) gives one datagram each. [`udp::drive`](crate::udp::drive) sets it
    /// from what the socket supports.
    pub fn set_max_segments(&mut self, n: usize) {
        self.max_segments = n.max(1);
    }

    /// Let one drive of a connection produce at most `datagrams` datagrams
    /// (at least one [`Outgoing`]) before the node yields, as quinn's own
    /// connection driver does: a live loop then takes in what has arrived
    /// (the acknowledgements above all) before it sends on with
    /// [`send_more`](Self::send_more), instead of emptying a whole congestion
    /// window into the socket first. Unlimited by default (the simulator's
    /// way: it has nothing to take in meanwhile).
    pub fn set_transmit_budget(&mut self, datagrams: usize) {
        self.transmit_budget = datagrams.max(1);
    }

    /// Whether a connection stopped at the transmit budget and has more to
    /// send ([`send_more`](Self::send_more)).
    pub fn has_more_to_send(&self) -> bool {
        !self.more.is_empty()
    }

    /// Drive again, at `now`, the connections that stopped at the transmit
    /// budget.
    pub fn send_more(&mut self, now: Instant) {
        let more = std::mem::take(&mut self.more);
        for &h in &more {
            self.drive(h, now);
        }
    }

    /// Hand back a sent [`Outgoing`]: its buffer carries the next one, which
    /// saves an allocation of up to 64 KiB (and its page faults) per send. A
    /// payload still shared elsewhere is simply dropped.
    pub fn recycle(&mut self, out: Outgoing) {
        const KEEP: usize = 16;
        if self.spare.len() < KEEP
            && let Ok(buf) = out.payload.try_into_mut()
        {
            self.spare.push(buf.into());
        }
    }

    /// The next datagram (or GSO batch) to send.
    pub fn poll_transmit(&mut self) -> Option<Outgoing> {
        self.out.pop_front()
    }

    /// When the node next needs [`handle_timeout`](Self::handle_timeout).
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        let stall_probe = self.config.stall_probe;
        self.conns
            .values_mut()
            .flat_map(|c| {
                let [a, b] = Self::app_wakeups(c);
                [
                    c.conn.poll_timeout(),
                    a,
                    b,
                    c.silence_deadline(),
                    c.stall_probe_due(stall_probe),
                ]
            })
            .flatten()
            .min()
    }

    /// Time has reached a wake-up reported by [`poll_timeout`](Self::poll_timeout).
    pub fn handle_timeout(&mut self, now: Instant) {
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        for (&h, c) in self.conns.iter_mut() {
            let [a, b] = Self::app_wakeups(c);
            let stall = c.stall_probe_due(self.config.stall_probe);
            if [c.conn.poll_timeout(), a, b, c.silence_deadline(), stall]
                .into_iter()
                .flatten()
                .any(|t| t <= now)
            {
                due.push(h);
            }
        }
        for &h in &due {
            if let Some(c) = self.conns.get_mut(&h) {
                // Before quinn-proto's timers: its idle timer may fall due
                // at the same moment, and it closes without a word.
                if c.silence_deadline().is_some_and(|t| t <= now) {
                    let why = format!(
                        "connection timed out: no packet from the peer for {} (the idle timeout)",
                        tput_cc::units::format_duration(c.silence_limit.unwrap_or_default())
                    );
                    c.fail(now, CLOSE_TIMED_OUT, why);
                    c.silenced = true;
                }
                if c.conn.poll_timeout().is_some_and(|t| t <= now) {
                    c.conn.handle_timeout(now);
                }
                if c.stall_probe_due(self.config.stall_probe).is_some_and(|t| t <= now)
                    && let Some(out) = Self::stall_probe(c, now, &mut self.spare)
                {
                    self.out.push_back(out);
                }
            }
            self.drive(h, now);
        }
        self.due = due;
    }

    /// Send one stall probe on `c` ([`NodeConfig::stall_probe`]): a PING,
    /// with whatever data fits, in one datagram past the congestion window.
    fn stall_probe(c: &mut Conn, now: Instant, spare: &mut Vec<Vec<u8>>) -> Option<Outgoing> {
        let state = c.stall.clone()?;
        c.last_stall_probe = Some(now);
        c.stall_rng = splitmix64(c.stall_rng.wrapping_add(0x9e37_79b9_7f4a_7c15));
        c.conn.ping();
        let mut buf = spare.pop().unwrap_or_default();
        buf.clear();
        buf.reserve(usize::from(c.conn.current_mtu()));
        state.set_open(true);
        let t = c.conn.poll_transmit(now, 1, &mut buf);
        state.set_open(false);
        let t = t?;
        buf.truncate(t.size);
        tracing::debug!(id = c.id, "stall probe: nothing acknowledged for a while");
        Some(Outgoing {
            destination: t.destination,
            flow: c.flow,
            payload: buf.into(),
            segment_size: t.segment_size,
        })
    }

    /// The next thing to report, if any.
    pub fn poll_event(&mut self) -> Option<NodeEvent> {
        self.events.pop_front()
    }

    /// Whether this node leaves 1-RTT packets unencrypted
    /// ([`NodeConfig::null_packet_protection`]).
    pub fn null_packet_protection(&self) -> bool {
        self.config.null_packet_protection
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

    /// The application's own wake-ups: a sender's next interval boundary,
    /// deadline or rate-limiter slot.
    fn app_wakeups(c: &Conn) -> [Option<Instant>; 2] {
        if c.error.is_some() {
            return [None, None];
        }
        match &c.role {
            Role::Sender(s) => {
                let sampling = matches!(s.phase, SendPhase::Sending | SendPhase::Draining);
                let next_sample = s.next_sample.filter(|_| sampling);
                if s.phase != SendPhase::Sending {
                    return [next_sample, None];
                }
                // Only a sender waiting for the rate limiter (not for
                // flow-control credit, which an ACK brings) needs a timer;
                // otherwise the wake-up would lie in the past and spin.
                let paced = s.rate_limit().filter(|_| s.pending.is_empty()).and_then(|rate| {
                    // Next moment the rate limit lets one more chunk go.
                    let secs = (s.sent + CHUNK as u64) as f64 * 8.0 / rate as f64;
                    s.start.checked_add(Duration::try_from_secs_f64(secs).ok()?)
                });
                let app = [s.deadline(), paced].into_iter().flatten().min();
                [next_sample, app]
            }
            Role::Awaiting { .. } => [c.request_deadline, None],
            _ => [None, None],
        }
    }

    /// Process everything pending on one connection at `now`.
    fn drive(&mut self, h: ConnectionHandle, now: Instant) {
        let Some(c) = self.conns.get_mut(&h) else { return };
        let mut sent = 0;
        loop {
            let mut progressed = false;
            while let Some(ev) = c.conn.poll_endpoint_events() {
                if let Some(back) = self.endpoint.handle_event(h, ev) {
                    c.conn.handle_event(back);
                }
                progressed = true;
            }
            // quinn-proto builds a new controller when it resets a path
            // (migration to a new address, RFC 9000 §9.4): a sending server
            // installs the requested one again.
            if let Some(switch) = self.switches.take() {
                c.probe = switch.probe();
                if let Role::Sender(s) = &c.role
                    && let Ok(spec) = s.request.controller()
                {
                    switch.install(
                        &spec,
                        self.config.server_bandwidth.clone(),
                        self.config.server_aggregate.as_ref(),
                    );
                }
                c.switch = Some(switch);
            }
            while let Some(ev) = c.conn.poll() {
                // A stream that became writable is written by `app_io` just
                // below: no reason for another pass (the write-ahead limit
                // makes these frequent).
                progressed |= !matches!(ev, Event::Stream(StreamEvent::Writable { .. }));
                Self::on_event(c, ev, now);
            }
            Self::app_io(c, now, &self.config, &mut self.events);
            let mut any = false;
            let mut yielded = false;
            loop {
                if sent >= self.transmit_budget {
                    if !self.more.contains(&h) {
                        self.more.push(h);
                    }
                    yielded = true;
                    break;
                }
                // Sized for the path's current MTU (it grows with path MTU
                // discovery): quinn-proto never has to grow it mid-batch.
                let mtu = usize::from(c.conn.current_mtu());
                // A GSO batch is one UDP send: at most 64 KiB in all, or the
                // kernel refuses it (EMSGSIZE) and the whole batch is lost.
                let segments = self.max_segments.min(MAX_GSO_BYTES / mtu).max(1);
                let mut buf = self.spare.pop().unwrap_or_default();
                buf.clear();
                buf.reserve(mtu * segments);
                match c.conn.poll_transmit(now, segments, &mut buf) {
                    Some(t) => {
                        buf.truncate(t.size);
                        sent += t.segment_size.map_or(1, |s| t.size.div_ceil(s));
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
            if yielded || !(progressed || any) {
                break;
            }
        }
        if (c.role.done() || c.error.is_some()) && c.completed.is_none() {
            c.completed = Some(now);
            let start = match &c.role {
                Role::Sender(s) => s.cpu_start,
                Role::Receiver(r) => r.cpu_start,
                _ => None,
            };
            c.cpu_secs = cpu_since(start, c.cpu_now());
        }
        if c.silenced {
            // The close is queued above.
            Self::finish(c, now, &mut self.events);
        }
        if c.conn.is_drained() {
            let mut c = self.conns.remove(&h).expect("present");
            Self::finish(&mut c, now, &mut self.events);
        }
    }

    fn on_event(c: &mut Conn, ev: Event, now: Instant) {
        match ev {
            Event::Connected => {
                if let Some(why) = c.refusal.take() {
                    c.fail(now, CLOSE_PROTOCOL_ERROR, why);
                    return;
                }
                if let Role::Connecting { spec, key } = &c.role {
                    let (spec, key) = ((**spec).clone(), *key);
                    if let Err(why) = Self::send_request(c, &spec, key, now) {
                        c.fail(now, CLOSE_PROTOCOL_ERROR, why);
                    }
                }
            }
            Event::Stream(StreamEvent::Opened { dir: Dir::Bi }) => {
                if let Role::Awaiting {
                    stream: slot @ None, ..
                } = &mut c.role
                    && let Some(id) = c.conn.streams().accept(Dir::Bi)
                {
                    *slot = Some(id);
                }
            }
            Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                if let Role::Receiver(r) = &mut c.role
                    && let ReceiverSide::Client { uni: slot @ None, .. } = &mut r.side
                    && let Some(id) = c.conn.streams().accept(Dir::Uni)
                {
                    *slot = Some(id);
                }
            }
            Event::Stream(StreamEvent::Finished { id }) => {
                // The payload is acknowledged: sending is over.
                if let Role::Sender(s) = &mut c.role
                    && id == s.stream
                    && s.phase == SendPhase::Draining
                {
                    s.phase = SendPhase::AwaitReport;
                }
                // A buffer is acknowledged: the application may reuse it
                // (send_buffers opens the next); once the last one is, the
                // request stream ends the payload (protocol step 2).
                if let Role::Sender(s) = &mut c.role
                    && let Some(i) = s.bufs.iter().position(|b| b.id == id)
                {
                    s.bufs.remove(i);
                    if s.bufs.is_empty() && s.phase == SendPhase::Draining {
                        let _ = c.conn.send_stream(s.stream).finish();
                    }
                }
            }
            Event::ConnectionLost { reason } => {
                let clean = match &reason {
                    ConnectionError::ApplicationClosed(close) => close.error_code == VarInt::from_u32(0),
                    ConnectionError::LocallyClosed => true,
                    _ => false,
                };
                if (!clean || !c.role.done()) && c.error.is_none() {
                    let why = match &reason {
                        ConnectionError::ApplicationClosed(close) => {
                            format!("peer closed the connection: {}", String::from_utf8_lossy(&close.reason))
                        }
                        ConnectionError::TimedOut => "connection timed out (no packet within the idle timeout)".into(),
                        ConnectionError::ConnectionClosed(close)
                            if close.error_code == TransportErrorCode::CONNECTION_REFUSED =>
                        {
                            // What a server of ours refuses this way (see
                            // `handle_datagram`); other limits come with a reason.
                            "refused: the server is serving as many connections as it takes at once \
                             (tputctl serve --max-clients)"
                                .into()
                        }
                        other => format!("connection lost: {other}"),
                    };
                    c.error = Some(why);
                }
            }
            _ => {}
        }
    }

    /// Client, handshake done: open the stream, write the request (protocol step 1).
    fn send_request(c: &mut Conn, spec: &TransferSpec, key: u64, now: Instant) -> Result<(), String> {
        let stream = c
            .conn
            .streams()
            .open(Dir::Bi)
            .ok_or("peer allows no bidirectional stream")?;
        let eval_slot = match spec.eval_slot {
            EvalSlot::Time(d) => d,
            EvalSlot::Rtts(n) => (c.conn.rtt() * n).max(crate::proto::MIN_PERIOD),
        };
        let req = Request {
            direction: spec.direction,
            bytes: spec.bytes,
            duration: spec.duration,
            key,
            target_bps: spec.target.map_or(0, |r| r.bits_per_sec()),
            eval_slot,
            interval: spec.interval,
            rate_limit_bps: spec.rate_limit.map_or(0, |r| r.bits_per_sec()),
            cc: spec.cc.to_string(),
            buffers: spec.buffers,
        };
        let bytes = req.encode().map_err(|e| e.to_string())?;
        // The stream is fresh and the request small: quinn takes all of it.
        match c.conn.send_stream(stream).write(&bytes) {
            Ok(n) if n == bytes.len() => {}
            Ok(n) => {
                return Err(format!(
                    "the peer's stream window took {n} of the request's {} bytes",
                    bytes.len()
                ));
            }
            Err(e) => return Err(format!("cannot write the request: {e}")),
        }
        let cpu_start = c.cpu_now();
        c.role = match spec.direction {
            Direction::Upload => {
                let mut s = Sender::new(SenderSide::Client, req, stream, spec.cc.to_string(), &mut c.conn, now);
                s.cpu_start = cpu_start;
                Role::Sender(Box::new(s))
            }
            Direction::Download => {
                let side = ReceiverSide::Client {
                    uni: None,
                    inbuf: Vec::new(),
                    uni_ended: false,
                    records: Vec::new(),
                    sender: None,
                };
                let mut r = Receiver::new(side, req, stream, now);
                r.cpu_start = cpu_start;
                Role::Receiver(Box::new(r))
            }
        };
        Ok(())
    }

    fn app_io(c: &mut Conn, now: Instant, config: &NodeConfig, events: &mut VecDeque<NodeEvent>) {
        if c.error.is_some() {
            return;
        }
        if matches!(c.role, Role::Awaiting { .. })
            && let Err(why) = Self::read_request(c, now, config)
        {
            c.fail(now, CLOSE_PROTOCOL_ERROR, why);
            return;
        }
        if matches!(c.role, Role::Awaiting { .. }) && c.request_deadline.is_some_and(|d| now >= d) {
            let limit = config.limits.request_timeout.unwrap_or_default();
            let why = format!(
                "refused: no request within {} of connecting",
                tput_cc::units::format_duration(limit)
            );
            c.fail(now, CLOSE_PROTOCOL_ERROR, why);
            return;
        }
        let result = match c.role {
            Role::Sender(_) => Self::sender_io(c, now, config.write_ahead_to_credit, events),
            Role::Receiver(_) => Self::receiver_io(c, now, events),
            _ => Ok(()),
        };
        if let Err((code, why)) = result {
            c.fail(now, code, why);
        }
    }

    /// Server: read the request; once complete, take the role it asks for.
    fn read_request(c: &mut Conn, now: Instant, config: &NodeConfig) -> Result<(), String> {
        let Role::Awaiting {
            stream: Some(id),
            inbuf,
        } = &mut c.role
        else {
            return Ok(());
        };
        let id = *id;
        let mut ended = false;
        let mut bad = None;
        let mut want = REQUEST_LEN;
        if let Ok(mut chunks) = c.conn.recv_stream(id).read(true) {
            loop {
                if inbuf.len() >= REQUEST_LEN {
                    match Request::encoded_len(&inbuf[..REQUEST_LEN]) {
                        Ok(n) => want = n,
                        Err(e) => {
                            bad = Some(e.to_string());
                            break;
                        }
                    }
                }
                if inbuf.len() >= want {
                    break;
                }
                // Only the request: what follows belongs to the transfer.
                match chunks.next(want - inbuf.len()) {
                    Ok(Some(chunk)) => inbuf.extend_from_slice(&chunk.bytes),
                    Ok(None) => {
                        ended = true;
                        break;
                    }
                    Err(_) => break,
                }
            }
            let _ = chunks.finalize();
        }
        if let Some(why) = bad {
            return Err(why);
        }
        if inbuf.len() < want {
            return if ended {
                Err("stream ended before the request was complete".into())
            } else {
                Ok(())
            };
        }
        let mut req = Request::decode(inbuf).map_err(|e| e.to_string())?;
        config.limits.admit(&mut req)?;
        let cpu_start = c.cpu_now();
        c.role = match req.direction {
            Direction::Upload => {
                let mut r = Receiver::new(ReceiverSide::Server, req, id, now);
                r.cpu_start = cpu_start;
                Role::Receiver(Box::new(r))
            }
            Direction::Download => {
                let spec = req.controller().map_err(|e| e.to_string())?;
                let switch = c
                    .switch
                    .as_ref()
                    .ok_or("this server cannot build the requested controller")?;
                // Only handshake packets and this request's ACK are in flight.
                switch.install(&spec, config.server_bandwidth.clone(), config.server_aggregate.as_ref());
                let uni = c
                    .conn
                    .streams()
                    .open(Dir::Uni)
                    .ok_or("peer allows no unidirectional stream")?;
                let side = SenderSide::Server {
                    uni,
                    out: Outbox::default(),
                };
                let mut s = Sender::new(side, req, id, spec.to_string(), &mut c.conn, now);
                s.cpu_start = cpu_start;
                Role::Sender(Box::new(s))
            }
        };
        Ok(())
    }

    fn sender_io(
        c: &mut Conn,
        now: Instant,
        to_credit: bool,
        events: &mut VecDeque<NodeEvent>,
    ) -> Result<(), (u32, String)> {
        let Conn {
            conn,
            role: Role::Sender(s),
            id,
            probe,
            cpu_clock,
            ..
        } = c
        else {
            return Ok(());
        };
        let protocol = |why: String| (CLOSE_PROTOCOL_ERROR, why);
        let window = if to_credit { u64::MAX } else { write_ahead(conn) };
        conn.set_send_window(window);
        // Small windows take small chunks: a chunk's memory lives until its
        // last byte is acknowledged.
        s.chunk = (CHUNK as u64).min(window / 4).max(MIN_CHUNK);
        Self::send_payload(s, conn, now).map_err(protocol)?;
        // The receiver's frames (protocol step 3).
        let ended = read_into(conn, s.stream, &mut s.inbuf).map_err(protocol)?;
        while let Some(frame) = Frame::take(&mut s.inbuf).map_err(|e| protocol(e.to_string()))? {
            match frame {
                Frame::Delivered { index, bytes } => {
                    let interval = s.request.interval.as_nanos();
                    if interval == 0 {
                        return Err(protocol(
                            "delivered-bytes frame for a transfer without intervals".into(),
                        ));
                    }
                    // The receiver's intervals may start a little before the sender's.
                    let begun = now.saturating_duration_since(s.start).as_nanos() / interval + 16;
                    if u128::from(index) > begun {
                        return Err(protocol(format!(
                            "delivered-bytes frame for interval {index}, which has not begun"
                        )));
                    }
                    s.delivered.insert(index, bytes);
                }
                Frame::Report(report) => {
                    if s.phase == SendPhase::Sending || s.receiver.is_some() {
                        return Err(protocol("receiver report before the payload ended".into()));
                    }
                    // A transfer for a duration ends with a reset that drops what
                    // was written but not yet sent (protocol step 2): fewer may arrive.
                    let consistent = if s.request.duration.is_some() {
                        report.bytes <= s.sent
                    } else {
                        report.bytes == s.sent
                    };
                    if !consistent {
                        let why = format!("receiver verified {} bytes, {} were sent", report.bytes, s.sent);
                        s.receiver = Some(report);
                        return Err(protocol(why));
                    }
                    s.receiver = Some(report);
                    s.phase = SendPhase::AwaitReport;
                }
                other => return Err(protocol(format!("unexpected {} from the receiver", frame_name(&other)))),
            }
        }
        if ended && s.receiver.is_none() {
            return Err(protocol("receiver ended its stream without a report".into()));
        }
        Self::sample(s, conn, probe, now);
        Self::emit(s, *id, events);
        if s.phase == SendPhase::AwaitReport && s.receiver.is_some() && s.emitted == s.records.len() {
            s.phase = SendPhase::Done;
            match &mut s.side {
                SenderSide::Client => conn.close(now, VarInt::from_u32(0), Bytes::from_static(b"done")),
                SenderSide::Server { out, .. } => {
                    out.push(&Frame::Sender(SenderReport {
                        cc: s.cc.clone(),
                        written_bytes: s.sent,
                        cpu_secs: cpu_since(s.cpu_start, cpu_clock.and_then(|f| f())),
                    }));
                    out.finish = true;
                }
            }
        }
        if let SenderSide::Server { uni, out } = &mut s.side {
            // The limit is the payload's: reports are never held back by it.
            conn.set_send_window(u64::MAX);
            let flushed = out.flush(conn, *uni);
            conn.set_send_window(window);
            flushed.map_err(protocol)?;
        }
        Ok(())
    }

    /// Write payload as flow control and the rate limit allow (protocol step 2).
    fn send_payload(s: &mut Sender, conn: &mut Connection, now: Instant) -> Result<(), String> {
        if s.phase != SendPhase::Sending {
            return Ok(());
        }
        if let Some(b) = s.request.buffers {
            return Self::send_buffers(s, b, conn, now);
        }
        let id = s.stream;
        loop {
            if s.deadline().is_some_and(|d| now >= d) {
                // Time is up: drop what is written but unsent with a reset the
                // receiver takes as the end; then wait for its report.
                s.pending = Bytes::new();
                let _ = conn.send_stream(id).reset(VarInt::from_u32(RESET_TIME_UP));
                s.phase = SendPhase::AwaitReport;
                return Ok(());
            }
            if s.request.bytes.is_some_and(|b| s.sent >= b) && s.pending.is_empty() {
                let _ = conn.send_stream(id).finish();
                s.phase = SendPhase::Draining;
                return Ok(());
            }
            if s.pending.is_empty() {
                let mut n = s.chunk;
                if let Some(b) = s.request.bytes {
                    n = n.min(b - s.sent);
                }
                if let Some(rate) = s.rate_limit() {
                    // Saturating: the rate comes from the network (a download's request).
                    let allowed = ((now.saturating_duration_since(s.start).as_secs_f64() * rate as f64 / 8.0) as u64)
                        .saturating_add(CHUNK as u64);
                    n = n.min(allowed.saturating_sub(s.sent));
                    if n == 0 {
                        return Ok(());
                    }
                }
                s.pending = s.pool.cut(&s.pattern, s.sent, n as usize);
            }
            match write_pending(conn.send_stream(id), &mut s.pending) {
                Ok(0) | Err(quinn_proto::WriteError::Blocked) => return Ok(()),
                Ok(n) => s.sent += n as u64,
                Err(e) => return Err(format!("peer stopped the stream: {e}")),
            }
        }
    }

    /// The application-buffer model (protocol step 2): keep up to
    /// `b.count` buffer streams unacknowledged, write the oldest first.
    fn send_buffers(s: &mut Sender, b: AppBuffers, conn: &mut Connection, now: Instant) -> Result<(), String> {
        loop {
            if s.deadline().is_some_and(|d| now >= d) {
                s.pending = Bytes::new();
                for buf in s.bufs.drain(..) {
                    let _ = conn.send_stream(buf.id).reset(VarInt::from_u32(RESET_TIME_UP));
                }
                let _ = conn.send_stream(s.stream).reset(VarInt::from_u32(RESET_TIME_UP));
                s.phase = SendPhase::AwaitReport;
                return Ok(());
            }
            let total = s.request.bytes.unwrap_or(u64::MAX);
            if s.sent >= total && s.pending.is_empty() {
                s.phase = SendPhase::Draining;
                if s.bufs.is_empty() {
                    let _ = conn.send_stream(s.stream).finish();
                }
                return Ok(());
            }
            // A new buffer only while fewer than `count` are unacknowledged.
            while s.bufs.len() < b.count as usize && s.next_buf < total {
                let Some(id) = conn.streams().open(Dir::Uni) else { break };
                // Stream `i` carries offsets i * size .. (i + 1) * size; the
                // receiver checks that against the stream's index.
                let start = s.next_buf;
                let len = b.size.min(total - start);
                // Older buffers first, as the application handed them over.
                let index = i32::try_from(id.index()).unwrap_or(i32::MAX);
                let _ = conn.send_stream(id).set_priority(-index);
                s.bufs.push_back(SendBuf {
                    id,
                    start,
                    len,
                    written: 0,
                });
                s.next_buf = start + len;
            }
            let (rate, sent) = (s.rate_limit(), s.sent);
            let Some(buf) = s.bufs.iter_mut().find(|x| x.written < x.len) else {
                // Every open buffer is written: wait for acknowledgements.
                return Ok(());
            };
            if s.pending.is_empty() {
                let mut n = s.chunk.min(buf.len - buf.written);
                if let Some(rate) = rate {
                    let allowed = ((now.saturating_duration_since(s.start).as_secs_f64() * rate as f64 / 8.0) as u64)
                        .saturating_add(CHUNK as u64);
                    n = n.min(allowed.saturating_sub(sent));
                    if n == 0 {
                        return Ok(());
                    }
                }
                s.pending = s.pool.cut(&s.pattern, buf.start + buf.written, n as usize);
            }
            match write_pending(conn.send_stream(buf.id), &mut s.pending) {
                Ok(0) | Err(quinn_proto::WriteError::Blocked) => return Ok(()),
                Ok(n) => {
                    s.sent += n as u64;
                    buf.written += n as u64;
                    if buf.written == buf.len {
                        let _ = conn.send_stream(buf.id).finish();
                    }
                }
                Err(e) => return Err(format!("peer stopped a buffer stream: {e}")),
            }
        }
    }

    /// Make every interval record due at `now`. While sending, records end on
    /// interval boundaries; once sending is over, a last partial record ends
    /// at `now` and sampling stops.
    fn sample(s: &mut Sender, conn: &Connection, probe: &ControllerProbe, now: Instant) {
        while let Some(at) = s.next_sample {
            let sending = matches!(s.phase, SendPhase::Sending | SendPhase::Draining);
            if sending && now < at {
                return;
            }
            let end = if sending { at } else { now.min(at) };
            let stats = conn.stats();
            s.records.push(IntervalStats {
                start_secs: s.sample_start.saturating_duration_since(s.start).as_secs_f64(),
                end_secs: end.saturating_duration_since(s.start).as_secs_f64(),
                bytes: 0,
                goodput_bps: 0.0,
                written_bytes: s.sent - s.sample_sent,
                cwnd_bytes: stats.path.cwnd,
                srtt_ms: stats.path.rtt.as_secs_f64() * 1e3,
                min_rtt_ms: stats.path.min_rtt.as_secs_f64() * 1e3,
                lost_packets: stats.path.lost_packets - s.sample_lost,
                congestion_events: stats.path.congestion_events - s.sample_events,
                controller: probe.latest(),
            });
            s.sample_start = end;
            s.sample_sent = s.sent;
            s.sample_lost = stats.path.lost_packets;
            s.sample_events = stats.path.congestion_events;
            s.next_sample = if sending { Some(at + s.request.interval) } else { None };
            s.sampled_all = !sending;
        }
    }

    /// Report, in order, every record whose delivered bytes are known: from
    /// the receiver's count for its interval, or its report. The last record
    /// takes whatever the report counts beyond the earlier ones.
    fn emit(s: &mut Sender, id: u64, events: &mut VecDeque<NodeEvent>) {
        while s.emitted < s.records.len() {
            let i = s.emitted;
            let last = s.sampled_all && i + 1 == s.records.len();
            let bytes = match (&s.receiver, s.delivered.get(&(i as u64))) {
                (Some(r), _) if last => r
                    .bytes
                    .saturating_sub(s.records[..i].iter().fold(0u64, |a, r| a.saturating_add(r.bytes))),
                (None, _) if last => return,
                (_, Some(&b)) => b,
                (Some(r), None) => r.interval_bytes.get(i).copied().unwrap_or(0),
                (None, None) => return,
            };
            s.records[i].deliver(bytes);
            let rec = s.records[i].clone();
            if let SenderSide::Server { out, .. } = &mut s.side {
                out.push(&Frame::Interval(rec.clone()));
            }
            events.push_back(NodeEvent::Interval { id, stats: rec });
            s.emitted += 1;
        }
    }

    fn receiver_io(c: &mut Conn, now: Instant, events: &mut VecDeque<NodeEvent>) -> Result<(), (u32, String)> {
        let Conn {
            conn,
            role: Role::Receiver(r),
            id,
            cpu_clock,
            ..
        } = c
        else {
            return Ok(());
        };
        let protocol = |why: String| (CLOSE_PROTOCOL_ERROR, why);
        if r.phase == RecvPhase::Receiving {
            let before = r.meter.bytes;
            let (finished, time_up) = Self::receive_payload(r, conn, now)?;
            // The count of every interval that has ended (protocol step 3),
            // sent when payload arrives after its end: with the ACK the
            // arrival calls for anyway, and without a timer of its own (an
            // idle receiver's counts wait for the next arrival or the report).
            while let Some((i, at)) = r.next_count
                && at <= now
                && r.meter.bytes > before
            {
                r.out.push(&Frame::Delivered {
                    index: i,
                    bytes: r.meter.interval_bytes(i as usize),
                });
                r.next_count = Some((i + 1, at + r.meter.interval()));
            }
            if finished {
                if let Some(b) = r.request.bytes
                    && r.meter.bytes != b
                    && !time_up
                {
                    return Err(protocol(format!("stream ended after {} of {b} bytes", r.meter.bytes)));
                }
                let report = r.meter.report(now, cpu_since(r.cpu_start, cpu_clock.and_then(|f| f())));
                r.out.push(&Frame::Report(report.clone()));
                r.out.finish = true;
                r.report = Some(report);
                r.next_count = None;
                r.phase = match r.side {
                    ReceiverSide::Server => RecvPhase::Done,
                    ReceiverSide::Client { .. } => RecvPhase::Reported,
                };
            }
        }
        r.out.flush(conn, r.stream).map_err(protocol)?;
        // A download's client: the server's records and report (protocol step 4).
        if let ReceiverSide::Client {
            uni: Some(uni),
            inbuf,
            uni_ended,
            records,
            sender,
        } = &mut r.side
            && !*uni_ended
        {
            let ended = read_into(conn, *uni, inbuf).map_err(protocol)?;
            while let Some(frame) = Frame::take(inbuf).map_err(|e| protocol(e.to_string()))? {
                match frame {
                    Frame::Interval(rec) if sender.is_none() => {
                        events.push_back(NodeEvent::Interval {
                            id: *id,
                            stats: rec.clone(),
                        });
                        records.push(rec);
                    }
                    Frame::Sender(rep) if sender.is_none() => *sender = Some(rep),
                    other => return Err(protocol(format!("unexpected {} from the sender", frame_name(&other)))),
                }
            }
            if ended {
                if sender.is_none() {
                    return Err(protocol("sender ended its stream without a report".into()));
                }
                *uni_ended = true;
            }
        }
        if r.phase == RecvPhase::Reported
            && let ReceiverSide::Client { uni_ended: true, .. } = r.side
        {
            r.phase = RecvPhase::Done;
            conn.close(now, VarInt::from_u32(0), Bytes::from_static(b"done"));
        }
        Ok(())
    }

    /// Read and verify payload; `(finished, by the time-up reset)`.
    fn receive_payload(r: &mut Receiver, conn: &mut Connection, now: Instant) -> Result<(bool, bool), (u32, String)> {
        if let Some(b) = r.request.buffers {
            // Buffers first: once the request stream ends, every buffer is
            // acknowledged, so its bytes are all here (protocol step 2).
            Self::receive_buffers(r, b, conn, now)?;
        }
        let mut finished = false;
        // Ended by the sender's time-up reset rather than a FIN.
        let mut time_up = false;
        let mut failure = None;
        if let Ok(mut chunks) = conn.recv_stream(r.stream).read(true) {
            loop {
                match chunks.next(usize::MAX) {
                    Ok(Some(_)) if r.request.buffers.is_some() => {
                        failure = Some((
                            CLOSE_PROTOCOL_ERROR,
                            "payload on the request stream of a transfer with application buffers".into(),
                        ));
                        break;
                    }
                    Ok(Some(chunk)) => {
                        if let Err(at) = r.pattern.verify(r.meter.bytes, &chunk.bytes) {
                            failure = Some((CLOSE_CORRUPT, format!("payload byte {at} does not match the pattern")));
                            break;
                        }
                        r.meter.add(now, chunk.bytes.len() as u64);
                    }
                    Ok(None) => {
                        finished = true;
                        break;
                    }
                    Err(quinn_proto::ReadError::Blocked) => break,
                    Err(quinn_proto::ReadError::Reset(code))
                        if code == VarInt::from_u32(RESET_TIME_UP) && r.request.duration.is_some() =>
                    {
                        // A transfer for a duration ends this way (protocol step 2).
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
        match failure {
            Some(f) => Err(f),
            None => Ok((finished, time_up)),
        }
    }

    /// Accept, read and verify the buffer streams (application-buffer model).
    fn receive_buffers(
        r: &mut Receiver,
        b: AppBuffers,
        conn: &mut Connection,
        now: Instant,
    ) -> Result<(), (u32, String)> {
        let protocol = |why: String| (CLOSE_PROTOCOL_ERROR, why);
        while let Some(id) = conn.streams().accept(Dir::Uni) {
            let start = id
                .index()
                .checked_mul(b.size)
                .ok_or_else(|| protocol(format!("buffer stream {id} is beyond any payload offset")))?;
            r.bufs.push((id, start, b.size));
        }
        let mut failure = None;
        r.bufs.retain_mut(|(id, at, left)| {
            if failure.is_some() {
                return true;
            }
            let mut stream = conn.recv_stream(*id);
            let Ok(mut chunks) = stream.read(true) else {
                return false;
            };
            let mut keep = true;
            loop {
                match chunks.next(usize::MAX) {
                    Ok(Some(chunk)) => {
                        let n = chunk.bytes.len() as u64;
                        if n > *left {
                            failure = Some((
                                CLOSE_PROTOCOL_ERROR,
                                format!("buffer stream {id} exceeds {} bytes", b.size),
                            ));
                            break;
                        }
                        if let Err(off) = r.pattern.verify(*at, &chunk.bytes) {
                            failure = Some((CLOSE_CORRUPT, format!("payload byte {off} does not match the pattern")));
                            break;
                        }
                        *at += n;
                        *left -= n;
                        r.meter.add(now, n);
                    }
                    Ok(None) => {
                        keep = false;
                        break;
                    }
                    Err(quinn_proto::ReadError::Blocked) => break,
                    Err(quinn_proto::ReadError::Reset(code))
                        if code == VarInt::from_u32(RESET_TIME_UP) && r.request.duration.is_some() =>
                    {
                        keep = false;
                        break;
                    }
                    Err(e) => {
                        failure = Some((
                            CLOSE_PROTOCOL_ERROR,
                            format!("buffer stream {id} reset by the peer: {e}"),
                        ));
                        break;
                    }
                }
            }
            let _ = chunks.finalize();
            keep
        });
        match failure {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }

    fn finish(c: &mut Conn, now: Instant, events: &mut VecDeque<NodeEvent>) {
        if c.reported {
            return;
        }
        c.reported = true;
        let elapsed_secs = c
            .completed
            .unwrap_or(now)
            .saturating_duration_since(c.created)
            .as_secs_f64();
        let incomplete = || Some("connection closed before the transfer completed".to_string());
        let outcome = match &mut c.role {
            // A connection that never carried a request (a probe or an aborted handshake).
            Role::Awaiting { .. } => return,
            Role::Connecting { spec, .. } => TransferOutcome {
                id: c.id,
                direction: spec.direction,
                local_sender: spec.direction == Direction::Upload,
                cc: spec.cc.to_string(),
                bytes: 0,
                elapsed_secs,
                intervals: Vec::new(),
                receiver: None,
                sender: None,
                cpu_secs: None,
                error: c
                    .error
                    .clone()
                    .or(Some("connection closed before the transfer started".into())),
            },
            Role::Sender(s) => {
                s.records.truncate(s.emitted);
                TransferOutcome {
                    id: c.id,
                    direction: s.request.direction,
                    local_sender: true,
                    cc: s.cc.clone(),
                    // What the receiver verified, when it said so; else what was written.
                    bytes: s.receiver.as_ref().map_or(s.sent, |r| r.bytes),
                    elapsed_secs,
                    intervals: std::mem::take(&mut s.records),
                    error: c
                        .error
                        .clone()
                        .or_else(|| s.receiver.is_none().then(incomplete).flatten()),
                    receiver: s.receiver.take(),
                    sender: Some(SenderReport {
                        cc: s.cc.clone(),
                        written_bytes: s.sent,
                        cpu_secs: c.cpu_secs,
                    }),
                    cpu_secs: c.cpu_secs,
                }
            }
            Role::Receiver(r) => {
                let (intervals, sender) = match &mut r.side {
                    ReceiverSide::Client { records, sender, .. } => (std::mem::take(records), sender.take()),
                    ReceiverSide::Server => (Vec::new(), None),
                };
                TransferOutcome {
                    id: c.id,
                    direction: r.request.direction,
                    local_sender: false,
                    cc: sender.as_ref().map_or_else(|| r.request.cc.clone(), |s| s.cc.clone()),
                    bytes: r.meter.bytes,
                    elapsed_secs,
                    intervals,
                    error: c
                        .error
                        .clone()
                        .or_else(|| r.report.is_none().then(incomplete).flatten()),
                    receiver: r.report.take(),
                    sender,
                    cpu_secs: c.cpu_secs,
                }
            }
        };
        events.push_back(NodeEvent::Finished(Box::new(outcome)));
    }
}

fn frame_name(f: &Frame) -> &'static str {
    match f {
        Frame::Delivered { .. } => "delivered-bytes frame",
        Frame::Report(_) => "receiver report",
        Frame::Interval(_) => "interval record",
        Frame::Sender(_) => "sender report",
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
