//! A live UDP relay through simulated links: datagrams from clients go
//! through a forward [`LinkRunner`] to the server, the server's replies
//! through a reverse one back to the client they answer. The links are the
//! simulator's own ([`tput_netsim::LinkModel`]), configured with the link
//! table of scenario files ([`LinkSpec`](crate::scenario::LinkSpec)) and driven by a wall clock: link
//! time `t` is the instant `epoch + t`, and every departure is sent at its
//! absolute deadline, so timer slack never accumulates.
//!
//! The relay is protocol-agnostic. Each client address gets its own
//! upstream socket, so the server's replies map back to the client.
//!
//! Timing: tokio's timers tick in milliseconds, so the relay sleeps on them
//! only until about 2 ms before the next departure and then polls (yielding
//! to the runtime between polls, which also reads arriving datagrams) until
//! it is due (short sleeps instead cost more than their length in timer
//! slack). It runs on one thread (a
//! current-thread runtime) and uses up to one core while packets are in
//! flight. A departure more than [`OVERLOAD_LAG`] late means the relay cannot
//! keep up: the datagram is dropped and counted as `dropped_overload`,
//! separately from the link's own drops, as are datagrams the operating
//! system refuses to send.
//!
//! ECN: the relay reads each datagram's ECN codepoint from its IP header
//! (IP_TOS / IPV6_TCLASS, through quinn-udp), hands it to the link with the
//! datagram, and sends the datagram on with the codepoint the link gives
//! back: unchanged, or CE where a queue discipline with ECN marking
//! (`aqm.ecn=true`; RFC 3168 §5, RFC 8289 §5, RFC 8290 §5) marked an
//! ECN-capable datagram instead of dropping it. Not-ECT datagrams stay
//! Not-ECT and are dropped as before.

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use quinn_udp::{RecvMeta, Transmit, UdpSocketState};
use tokio::io::Interest;
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tput_netsim::{
    Counter, Ecn, LinkConfig, LinkOutput, LinkRunner, PacketTag, Rate, SimTime, Verdict, serialization_ns,
};

use crate::Error;

mod links;
pub mod probe;
mod stats;

pub use links::{RelayLinks, parse_link_list};
use stats::Histogram;
pub use stats::{DirectionStats, FlowStats, RelayStats};

/// A departure later than this past its deadline is dropped as overload.
pub const OVERLOAD_LAG: Duration = Duration::from_millis(25);

/// How long before a departure the relay stops sleeping on tokio's
/// millisecond timers and polls instead.
const SPIN_AHEAD: Duration = Duration::from_millis(2);

/// Receive buffer per message: a datagram, or a GRO batch of them (at most 64 KiB).
const RECV_SLOT: usize = 65_536;
/// Messages per receive call (at most quinn-udp's batch size).
const RECV_SLOTS: usize = 8;

/// A client's traffic in one direction, for [`FlowStats`].
struct Flow {
    offered: Counter,
    ecn_capable: Counter,
    delivered: Counter,
    marked: Counter,
    queueing: Histogram,
    active: Option<(SimTime, SimTime)>,
}

impl Flow {
    fn new() -> Self {
        Flow {
            offered: Counter::default(),
            ecn_capable: Counter::default(),
            delivered: Counter::default(),
            marked: Counter::default(),
            queueing: Histogram::flow_queueing(),
            active: None,
        }
    }
}

/// What the relay keeps of a datagram while it is in a link.
struct Carried {
    /// The client it comes from or goes to.
    client: SocketAddr,
    payload: Bytes,
    /// When it was offered to the link.
    offered: SimTime,
    /// The codepoint it arrived with.
    ecn: Ecn,
}

/// What the relay needs to run.
#[derive(Debug, Clone)]
pub struct RelayConfig {
    /// Where clients send (the relay's own address).
    pub listen: SocketAddr,
    /// The server.
    pub to: SocketAddr,
    /// Clients to the server.
    pub forward: LinkConfig,
    /// The server to its clients.
    pub reverse: LinkConfig,
    /// Seed of the links' random losses.
    pub seed: u64,
}

/// The flow hash of a client's datagrams (both directions): FQ-CoDel gives
/// each client address and port its own queue (RFC 8290 §4.1.1; the
/// relay's other end is always the one server). FNV-1a over the address.
fn peer_hash(peer: SocketAddr) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut eat = |b: &[u8]| {
        for &x in b {
            h = (h ^ x as u64).wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    match peer.ip() {
        IpAddr::V4(a) => eat(&a.octets()),
        IpAddr::V6(a) => eat(&a.octets()),
    }
    eat(&peer.port().to_be_bytes());
    h
}

/// One direction: its link and what the relay saw.
struct Direction {
    /// Each datagram with its client, the time it was offered and its codepoint.
    link: LinkRunner<Carried>,
    /// The link's propagation delay, nanoseconds.
    propagation_ns: u64,
    overload: Counter,
    late: Histogram,
    queueing: Histogram,
    /// Offer time of the first delivered datagram and departure of the last.
    active: Option<(SimTime, SimTime)>,
    /// Header bytes the link adds to each datagram.
    overhead_bytes: u64,
    /// Datagrams offered that were ECN-capable (ECT(0), ECT(1) or CE).
    ecn_capable: Counter,
    /// Per client, in the order they first appeared.
    flows: Vec<(SocketAddr, Flow)>,
    flow_index: HashMap<SocketAddr, usize>,
}

impl Direction {
    fn stats(&self, now: SimTime) -> DirectionStats {
        let s = self.link.stats(now);
        DirectionStats {
            offered: s.offered,
            delivered: Counter::new(
                s.delivered.packets - self.overload.packets,
                s.delivered.bytes - self.overload.bytes,
            ),
            dropped_queue: s.dropped_queue,
            dropped_aqm: s.dropped_aqm,
            marked: s.marked,
            dropped_cutoff: s.dropped_cutoff,
            dropped_random: s.dropped_random,
            dropped_overload: self.overload,
            queue_high_water: self.link.model().queue_high_water(),
            rate_bps: self.link.model().rate().bits_per_sec(),
            active_secs: self.active_secs(),
            delivered_bps: {
                let secs = self.active_secs();
                let bytes = s.delivered.bytes - self.overload.bytes;
                if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 }
            },
            late_p50_us: self.late.quantile_us(0.5),
            late_p99_us: self.late.quantile_us(0.99),
            late_max_us: self.late.max_ns as f64 / 1000.0,
            queue_delay_p50_ms: self.queueing.quantile_ms(0.5),
            queue_delay_p99_ms: self.queueing.quantile_ms(0.99),
            offered_ecn_capable: self.ecn_capable,
            flows: self
                .flows
                .iter()
                .map(|(client, f)| {
                    let secs = f.active.map_or(0.0, |(from, to)| {
                        to.as_nanos().saturating_sub(from.as_nanos()) as f64 / 1e9
                    });
                    FlowStats {
                        client: client.to_string(),
                        offered: f.offered,
                        offered_ecn_capable: f.ecn_capable,
                        delivered: f.delivered,
                        marked: f.marked,
                        delivered_bps: if secs > 0.0 {
                            f.delivered.bytes as f64 * 8.0 / secs
                        } else {
                            0.0
                        },
                        queue_delay_p50_ms: f.queueing.quantile_ms(0.5),
                        queue_delay_p99_ms: f.queueing.quantile_ms(0.99),
                    }
                })
                .collect(),
        }
    }

    /// The per-client record of `client`, made on first use.
    fn flow(&mut self, client: SocketAddr) -> &mut Flow {
        let i = *self.flow_index.entry(client).or_insert_with(|| {
            self.flows.push((client, Flow::new()));
            self.flows.len() - 1
        });
        &mut self.flows[i].1
    }

    /// Offers a datagram from or to `client` that arrived at `t` with `ecn`.
    fn offer(&mut self, t: SimTime, client: SocketAddr, payload: Bytes, ecn: Ecn) -> Verdict {
        let len = payload.len() as u64;
        let tag = PacketTag::new(0).with_hash(peer_hash(client)).with_ecn(ecn);
        let wire = len + self.overhead_bytes;
        let capable = ecn != Ecn::NotEct;
        if capable {
            count(&mut self.ecn_capable, wire);
        }
        let f = self.flow(client);
        count(&mut f.offered, wire);
        if capable {
            count(&mut f.ecn_capable, wire);
        }
        let item = Carried {
            client,
            payload,
            offered: t,
            ecn,
        };
        self.link.offer_tagged(t, len, tag, item)
    }

    /// A new direction over `cfg`.
    fn new(cfg: &LinkConfig, seed: u64, name: &str) -> Result<Self, Error> {
        Ok(Direction {
            link: LinkRunner::new(cfg, seed).map_err(|e| Error::Invalid(format!("{name}: {e}")))?,
            propagation_ns: u64::try_from(cfg.delay.as_nanos()).unwrap_or(u64::MAX),
            overload: Counter::default(),
            late: Histogram::lateness(),
            queueing: Histogram::queueing(),
            active: None,
            ecn_capable: Counter::default(),
            flows: Vec::new(),
            flow_index: HashMap::new(),
            overhead_bytes: cfg.overhead_bytes as u64,
        })
    }

    /// Seconds from the offer of the first delivered datagram to the
    /// departure of the last.
    fn active_secs(&self) -> f64 {
        self.active.map_or(0.0, |(from, to)| {
            to.as_nanos().saturating_sub(from.as_nanos()) as f64 / 1e9
        })
    }

    /// Records the queueing delay of a datagram offered at `offered` and due
    /// at the far end at `due`, `wire` bytes long.
    fn record_queueing(&mut self, offered: SimTime, due: SimTime, wire: u64) -> u64 {
        let serialization = serialization_ns(wire * 8, self.link.model().rate().max(Rate::from_bits_per_sec(1)));
        let in_link = due.as_nanos().saturating_sub(offered.as_nanos());
        let queued = in_link
            .saturating_sub(self.propagation_ns)
            .saturating_sub(serialization);
        self.queueing.record(queued);
        queued
    }

    /// Counts a datagram of `client` sent on at `at`, `wire` bytes, queued
    /// `queued_ns`, offered at `offered` with `before` and leaving with `after`.
    #[allow(clippy::too_many_arguments)]
    fn record_delivery(
        &mut self,
        client: SocketAddr,
        offered: SimTime,
        at: SimTime,
        wire: u64,
        queued_ns: u64,
        before: Ecn,
        after: Ecn,
    ) {
        let f = self.flow(client);
        count(&mut f.delivered, wire);
        if after == Ecn::Ce && before != Ecn::Ce {
            count(&mut f.marked, wire);
        }
        f.queueing.record(queued_ns);
        let from = f.active.map_or(offered, |(from, _)| from);
        f.active = Some((from, at));
    }
}

/// One client's socket towards the server, and the task reading it. Dropping
/// it closes the socket (datagrams still on their way to it are lost, as
/// through a NAT that has forgotten the mapping).
struct Upstream {
    sock: Arc<Socket>,
    task: tokio::task::JoinHandle<()>,
}

impl Upstream {
    /// A fresh socket on an ephemeral port of `local`, connected to `to`,
    /// with its receiving task.
    async fn open(
        local: IpAddr,
        to: SocketAddr,
        client: SocketAddr,
        tx: &mpsc::UnboundedSender<Inbound>,
    ) -> Result<Upstream, Error> {
        let sock = bind_udp(SocketAddr::new(local, 0))
            .map_err(|e| Error::Run(format!("cannot bind an upstream socket: {e}")))?;
        sock.io
            .connect(to)
            .await
            .map_err(|e| Error::Run(format!("cannot reach {to}: {e}")))?;
        let sock = Arc::new(sock);
        let task = tokio::spawn(receive(sock.clone(), Some(client), tx.clone()));
        Ok(Upstream { sock, task })
    }
}

impl Drop for Upstream {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A datagram read by a receiving task, stamped when it was read.
struct Inbound {
    /// `true`: from a client (its address in `peer`); `false`: from the
    /// server, for the client `peer`.
    from_client: bool,
    peer: SocketAddr,
    payload: Bytes,
    /// The codepoint of its IP header's ECN field.
    ecn: Ecn,
    at: Instant,
}

/// A bound relay, ready to run.
pub struct Relay {
    cfg: RelayConfig,
    listen: Arc<Socket>,
    rebind_every: Option<Duration>,
}

impl Relay {
    /// Binds the listening socket; the links are validated here.
    pub async fn bind(cfg: RelayConfig) -> Result<Relay, Error> {
        cfg.forward
            .validate()
            .map_err(|e| Error::Invalid(format!("forward: {e}")))?;
        cfg.reverse
            .validate()
            .map_err(|e| Error::Invalid(format!("reverse: {e}")))?;
        let listen = bind_udp(cfg.listen).map_err(|e| Error::Run(format!("cannot bind {}: {e}", cfg.listen)))?;
        Ok(Relay {
            cfg,
            listen: Arc::new(listen),
            rebind_every: None,
        })
    }

    /// Emulates a NAT that rebinds: every `period`, each client's traffic
    /// to the server moves to a fresh upstream socket (a new source port),
    /// and replies still on their way to the old port are lost. The server
    /// sees its peer change address without warning; QUIC carries the
    /// connection on by path validation and migration (RFC 9000 §9.3).
    /// A zero period turns rebinding off.
    pub fn rebind_every(mut self, period: Duration) -> Relay {
        self.rebind_every = (!period.is_zero()).then_some(period);
        self
    }

    /// The address clients send to.
    pub fn local_addr(&self) -> Result<SocketAddr, Error> {
        self.listen.io.local_addr().map_err(|e| Error::Run(e.to_string()))
    }

    /// Relays until `stop` completes, calling `report` every `interval`
    /// (none if zero) and on every cut-off and rate step (with the
    /// message it logs); returns the final counters. Run it on a
    /// current-thread runtime: the receiving tasks it spawns share the
    /// thread.
    pub async fn run(
        self,
        stop: impl Future<Output = ()>,
        interval: Duration,
        mut report: impl FnMut(&RelayStats),
    ) -> Result<RelayStats, Error> {
        let Relay {
            cfg,
            listen,
            rebind_every,
        } = self;
        let mut fwd = Direction::new(&cfg.forward, cfg.seed, "forward")?;
        let mut rev = Direction::new(&cfg.reverse, cfg.seed ^ 0x0052_4556_4552_5345, "reverse")?;
        let (tx, mut rx) = mpsc::unbounded_channel::<Inbound>();
        let listener = tokio::spawn(receive(listen.clone(), None, tx.clone()));
        let mut upstream: HashMap<SocketAddr, Upstream> = HashMap::new();
        let mut rebinds = 0u64;
        let unspecified: IpAddr = match cfg.to {
            SocketAddr::V4(_) => Ipv4Addr::UNSPECIFIED.into(),
            SocketAddr::V6(_) => Ipv6Addr::UNSPECIFIED.into(),
        };
        let epoch = Instant::now();
        let sim = |t: Instant| SimTime::from_nanos(t.saturating_duration_since(epoch).as_nanos() as u64);
        let mut next_report = (!interval.is_zero()).then(|| epoch + interval);
        let mut next_rebind = rebind_every.map(|p| epoch + p);
        let snapshot = |fwd: &Direction, rev: &Direction, clients: usize, rebinds: u64| {
            let now = Instant::now();
            RelayStats {
                elapsed_secs: now.duration_since(epoch).as_secs_f64(),
                clients,
                forward: fwd.stats(sim(now)),
                reverse: rev.stats(sim(now)),
                rebinds,
            }
        };
        let mut stop = std::pin::pin!(stop);
        let mut rx_open = true;
        let mut first: Option<Inbound> = None;
        loop {
            // Take in everything that has arrived.
            while let Some(m) = first.take().or_else(|| rx.try_recv().ok()) {
                let t = sim(m.at);
                if m.from_client {
                    if let std::collections::hash_map::Entry::Vacant(slot) = upstream.entry(m.peer) {
                        let up = Upstream::open(unspecified, cfg.to, m.peer, &tx).await?;
                        tracing::info!(client = %m.peer, "relay: new client");
                        slot.insert(up);
                    }
                    let v = fwd.offer(t, m.peer, m.payload, m.ecn);
                    if v != Verdict::Accepted {
                        tracing::trace!(?v, "relay: forward drop");
                    }
                } else {
                    rev.offer(t, m.peer, m.payload, m.ecn);
                }
            }
            // Send everything that is due.
            let now = Instant::now();
            let st = sim(now);
            for (dir, name) in [(&mut fwd, "forward"), (&mut rev, "reverse")] {
                while let Some(out) = dir.link.poll(st) {
                    match out {
                        LinkOutput::Deliver { at, frame } => {
                            let late = st.as_nanos().saturating_sub(at.as_nanos());
                            let Carried {
                                client,
                                payload,
                                offered,
                                ecn,
                            } = frame.item;
                            let queued = dir.record_queueing(offered, at, frame.wire);
                            if late > OVERLOAD_LAG.as_nanos() as u64 {
                                count(&mut dir.overload, frame.wire);
                                continue;
                            }
                            // The codepoint the link gives back: CE if its
                            // queue marked the datagram.
                            let sent = if name == "forward" {
                                match upstream.get(&client) {
                                    Some(up) => up.sock.try_send(cfg.to, &payload, frame.ecn),
                                    None => false,
                                }
                            } else {
                                listen.try_send(client, &payload, frame.ecn)
                            };
                            if sent {
                                dir.late.record(late);
                                let from = dir.active.map_or(offered, |(f, _)| f);
                                dir.active = Some((from, at));
                                dir.record_delivery(client, offered, at, frame.wire, queued, ecn, frame.ecn);
                            } else {
                                count(&mut dir.overload, frame.wire);
                            }
                        }
                        LinkOutput::CutStart { at } => {
                            tracing::info!("relay: {name} cut-off starts at {:.6} s", at.as_secs_f64());
                        }
                        LinkOutput::CutEnd { at } => {
                            tracing::info!("relay: {name} cut-off ends at {:.6} s", at.as_secs_f64());
                        }
                        LinkOutput::RateChange { at, rate } => {
                            tracing::info!("relay: {name} rate steps to {rate} at {:.6} s", at.as_secs_f64());
                        }
                        _ => {}
                    }
                }
            }
            if let (Some(r), Some(period)) = (next_rebind, rebind_every)
                && now >= r
            {
                for (client, up) in upstream.iter_mut() {
                    let fresh = Upstream::open(unspecified, cfg.to, *client, &tx).await?;
                    tracing::info!(client = %client, "relay: rebinding to a new upstream port");
                    *up = fresh;
                }
                rebinds += 1;
                let mut n = r + period;
                while n <= now {
                    n += period;
                }
                next_rebind = Some(n);
            }
            if let Some(r) = next_report
                && now >= r
            {
                report(&snapshot(&fwd, &rev, upstream.len(), rebinds));
                let mut n = r + interval;
                while n <= now {
                    n += interval;
                }
                next_report = Some(n);
            }
            // Wait for the next thing to do.
            let next = [fwd.link.next_event(), rev.link.next_event()]
                .into_iter()
                .flatten()
                .min()
                .map(|t| t.to_instant(epoch));
            let now = Instant::now();
            if next.is_some_and(|n| n <= now + SPIN_AHEAD) {
                tokio::select! {
                    biased;
                    _ = &mut stop => break,
                    _ = tokio::task::yield_now() => {}
                }
                continue;
            }
            let wake = [next.map(|n| n - SPIN_AHEAD), next_report, next_rebind]
                .into_iter()
                .flatten()
                .min()
                .unwrap_or(now + Duration::from_secs(3600));
            tokio::select! {
                biased;
                _ = &mut stop => break,
                m = rx.recv(), if rx_open => match m {
                    Some(m) => first = Some(m),
                    None => rx_open = false,
                },
                _ = tokio::time::sleep_until(wake.into()) => {}
            }
        }
        listener.abort();
        let clients = upstream.len();
        drop(upstream);
        Ok(snapshot(&fwd, &rev, clients, rebinds))
    }
}

/// A relay running on a thread of its own (a current-thread runtime, as
/// `tputctl relay` runs it), for in-process experiments and tests.
///
/// ```no_run
/// # fn main() -> Result<(), tput_lab::Error> {
/// use tput_lab::live::relay::{RelayConfig, RelayLinks, RelayThread, parse_link_list};
/// let links = RelayLinks { forward: parse_link_list("rate=10Mbit/s,delay=20ms", "forward")?, reverse: None };
/// let (forward, reverse) = links.configs()?;
/// let cfg = RelayConfig { listen: "127.0.0.1:0".parse().unwrap(), to: "127.0.0.1:4433".parse().unwrap(), forward, reverse, seed: 1 };
/// let relay = RelayThread::start(cfg, None)?;
/// println!("clients send to {}", relay.addr());
/// let stats = relay.stop()?;
/// println!("{} datagrams delivered", stats.forward.delivered.packets);
/// # Ok(()) }
/// ```
pub struct RelayThread {
    addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    done: std::sync::mpsc::Receiver<Result<RelayStats, Error>>,
}

impl RelayThread {
    /// Binds the relay and starts it; `rebind_every` as in
    /// [`Relay::rebind_every`]. Returns once the relay's address is known.
    pub fn start(cfg: RelayConfig, rebind_every: Option<Duration>) -> Result<RelayThread, Error> {
        let (addr_tx, addr_rx) = std::sync::mpsc::channel();
        let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
        let (done_tx, done_rx) = std::sync::mpsc::channel();
        std::thread::Builder::new()
            .name("tput-relay".into())
            .spawn(move || {
                let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
                    Ok(rt) => rt,
                    Err(e) => {
                        let _ = addr_tx.send(Err(Error::Run(format!("cannot start a runtime: {e}"))));
                        return;
                    }
                };
                rt.block_on(async move {
                    let relay = match Relay::bind(cfg).await.and_then(|r| Ok((r.local_addr()?, r))) {
                        Ok((addr, r)) => {
                            let _ = addr_tx.send(Ok(addr));
                            r.rebind_every(rebind_every.unwrap_or_default())
                        }
                        Err(e) => {
                            let _ = addr_tx.send(Err(e));
                            return;
                        }
                    };
                    let stop = async move {
                        let _ = stop_rx.await;
                    };
                    let _ = done_tx.send(relay.run(stop, Duration::ZERO, |_| {}).await);
                });
            })
            .map_err(|e| Error::Run(format!("cannot start the relay thread: {e}")))?;
        let addr = addr_rx
            .recv()
            .map_err(|_| Error::Run("the relay thread ended before binding".into()))??;
        Ok(RelayThread {
            addr,
            stop: Some(stop_tx),
            done: done_rx,
        })
    }

    /// The address clients send to.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Stops the relay and returns its final counters.
    pub fn stop(mut self) -> Result<RelayStats, Error> {
        drop(self.stop.take());
        self.done
            .recv_timeout(Duration::from_secs(10))
            .map_err(|_| Error::Run("the relay did not stop within 10 s".into()))?
    }
}

/// Socket buffers: room for bursts that arrive while the relay is busy.
const SOCKET_BUFFER: usize = 8 << 20;

/// A relay socket: the runtime's socket and quinn-udp's state of it, which
/// reads and writes the ECN field (and takes GRO batches in).
struct Socket {
    io: UdpSocket,
    state: UdpSocketState,
}

impl Socket {
    /// Sends `payload` to `to` with ECN codepoint `ecn`, without waiting;
    /// `false` if the socket is full or the operating system refused.
    fn try_send(&self, to: SocketAddr, payload: &[u8], ecn: Ecn) -> bool {
        let transmit = Transmit {
            destination: to,
            ecn: quinn_udp::EcnCodepoint::from_bits(ecn.bits()),
            contents: payload,
            segment_size: None,
            src_ip: None,
        };
        // quinn-udp logs and swallows other errors; "would block" comes back.
        self.io
            .try_io(Interest::WRITABLE, || self.state.send((&self.io).into(), &transmit))
            .is_ok()
    }
}

/// A non-blocking UDP socket with large buffers (the operating system may
/// grant less), registered with the runtime, that reports the ECN field of
/// what it receives.
fn bind_udp(addr: SocketAddr) -> std::io::Result<Socket> {
    use socket2::{Domain, Protocol, Type};
    let s = socket2::Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = s.set_send_buffer_size(SOCKET_BUFFER);
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    let io = UdpSocket::from_std(s.into())?;
    let state = UdpSocketState::new((&io).into())?;
    Ok(Socket { io, state })
}

fn count(c: &mut Counter, bytes: u64) {
    c.packets += 1;
    c.bytes += bytes;
}

/// Reads datagrams from `sock` and hands them to the relay loop, stamped
/// with the time they were read. `client` is `None` for the listening
/// socket (datagrams from clients) and the client an upstream socket serves.
/// A GRO batch (datagrams of `stride` bytes, the last maybe shorter, that
/// arrived together with one codepoint) is split into its datagrams.
async fn receive(sock: Arc<Socket>, client: Option<SocketAddr>, tx: mpsc::UnboundedSender<Inbound>) {
    let slots = RECV_SLOTS.clamp(1, quinn_udp::BATCH_SIZE);
    let mut bufs = vec![0u8; RECV_SLOT * slots];
    let mut metas = vec![RecvMeta::default(); slots];
    loop {
        if let Err(e) = sock.io.readable().await {
            tracing::debug!("relay: receive error: {e}");
            continue;
        }
        let mut slices: Vec<std::io::IoSliceMut<'_>> =
            bufs.chunks_mut(RECV_SLOT).map(std::io::IoSliceMut::new).collect();
        let n = match sock.io.try_io(Interest::READABLE, || {
            sock.state.recv((&sock.io).into(), &mut slices, &mut metas)
        }) {
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            // ICMP errors (the server not listening yet, say) surface on
            // connected sockets; keep reading.
            Err(e) => {
                tracing::debug!("relay: receive error: {e}");
                continue;
            }
        };
        let at = Instant::now();
        for (meta, slice) in metas.iter().zip(&slices).take(n) {
            let data = &slice[..meta.len.min(slice.len())];
            let ecn = meta.ecn.map_or(Ecn::NotEct, |e| Ecn::from_bits(e as u8));
            for d in data.chunks(meta.stride.max(1)) {
                let m = Inbound {
                    from_client: client.is_none(),
                    peer: client.unwrap_or(meta.addr),
                    payload: Bytes::copy_from_slice(d),
                    ecn,
                    at,
                };
                if tx.send(m).is_err() {
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queueing_delay_is_time_in_link_less_propagation_and_serialization() {
        // 8 Mbit/s, 10 ms: a 1000-byte datagram serializes in 1 ms.
        let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::from_millis(10)).with_overhead(0);
        let mut d = Direction::new(&cfg, 1, "forward").expect("valid link");
        let addr: SocketAddr = "127.0.0.1:9".parse().expect("address");
        // Three back to back at t = 0: they wait 0, 1 and 2 ms.
        for _ in 0..3 {
            let t = SimTime::ZERO;
            d.offer(t, addr, Bytes::from_static(&[0; 1000]), Ecn::NotEct);
        }
        let mut due = Vec::new();
        while let Some(o) = d.link.poll(SimTime::from_nanos(1_000_000_000)) {
            if let LinkOutput::Deliver { at, frame } = o {
                due.push(at.as_nanos());
                d.record_queueing(frame.item.offered, at, frame.wire);
            }
        }
        assert_eq!(due, [11_000_000, 12_000_000, 13_000_000]);
        assert_eq!(d.queueing.count, 3);
        assert_eq!(d.queueing.max_ns, 2_000_000);
        // Upper bucket edges (10 µs), capped at the maximum.
        assert_eq!(d.queueing.quantile_ms(0.5), 1.01);
        assert_eq!(d.queueing.quantile_ms(0.99), 2.0);
        assert_eq!(d.stats(SimTime::ZERO).queue_delay_p50_ms, 1.01);
    }
}
