//! A live UDP relay through simulated links: datagrams from clients go
//! through a forward [`LinkRunner`] to the server, the server's replies
//! through a reverse one back to the client they answer. The links are the
//! simulator's own ([`tput_netsim::LinkModel`]), configured with the link
//! table of scenario files ([`LinkSpec`]) and driven by a wall clock: link
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

use std::collections::HashMap;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use serde::{Deserialize, Serialize};
use tokio::net::UdpSocket;
use tokio::sync::mpsc;
use tput_netsim::{Counter, LinkConfig, LinkOutput, LinkRunner, PacketTag, Rate, SimTime, Verdict, serialization_ns};

use crate::Error;
use crate::scenario::{LinkSpec, link_config};

/// A departure later than this past its deadline is dropped as overload.
pub const OVERLOAD_LAG: Duration = Duration::from_millis(25);

/// How long before a departure the relay stops sleeping on tokio's
/// millisecond timers and polls instead.
const SPIN_AHEAD: Duration = Duration::from_millis(2);

/// Largest datagram the relay carries (the largest UDP payload).
const MAX_DATAGRAM: usize = 65_535;

/// The keys of a link list, with the kind of value each takes.
const KEYS: &[(&str, Kind)] = &[
    ("rate", Kind::Text),
    ("delay", Kind::Text),
    ("queue_packets", Kind::Int),
    ("queue_bytes", Kind::Text),
    ("overhead_bytes", Kind::Int),
    ("loss", Kind::Float),
    ("ber", Kind::Float),
    ("cutoff.period", Kind::Text),
    ("cutoff.connected", Kind::Float),
    ("cutoff.phase", Kind::Text),
    ("cutoff.mode", Kind::Text),
    ("cutoff.pause_lead", Kind::Text),
    ("rate_schedule", Kind::Schedule),
    ("trace", Kind::Text),
    ("queue.kind", Kind::Text),
    ("queue.target", Kind::Text),
    ("queue.interval", Kind::Text),
    ("queue.ecn", Kind::Bool),
    ("queue.quantum", Kind::Int),
    ("queue.flows", Kind::Int),
    ("queue.min_th", Kind::Float),
    ("queue.max_th", Kind::Float),
    ("queue.max_p", Kind::Float),
    ("queue.weight", Kind::Float),
    ("queue.gentle", Kind::Bool),
    ("queue.bytes", Kind::Bool),
    ("queue.mean_packet", Kind::Int),
    ("queue.wait", Kind::Bool),
];

#[derive(Clone, Copy)]
enum Kind {
    Text,
    Int,
    Float,
    Bool,
    Schedule,
}

/// Parses a link given as `key=value` pairs separated by commas, with the
/// keys of a scenario's link table: `rate`, `delay`, `queue_packets` or
/// `queue_bytes`, `overhead_bytes`, `loss` or `ber`, `cutoff.period`,
/// `cutoff.connected`, `cutoff.mode`, `cutoff.phase`, `cutoff.pause_lead`,
/// `rate_schedule=AT:RATE;AT:RATE...` and `trace=FILE` (a Mahimahi
/// packet-delivery trace, relative to the current directory). Example:
/// `rate_schedule=AT:RATE;AT:RATE...`, and a queue discipline as
/// `aqm=KIND` (`drop_tail`, `codel`, `fq_codel`, `red`; the same as
/// `queue.kind=KIND`) with its parameters as `aqm.KEY=VALUE` (the keys of
/// the `queue` table: `aqm.target=5ms`, `aqm.ecn=true`...). Example:
/// `rate=36.864Mbit/s,delay=50ms,queue_bytes=64KiB,ber=1e-8`. `what` names
/// the list in errors (`--forward`), which are one line naming the bad key
/// or value.
pub fn parse_link_list(text: &str, what: &str) -> Result<LinkSpec, Error> {
    let bad = |m: String| Error::Invalid(format!("{what}: {m}"));
    let mut table = toml::Table::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((key, value)) = item.split_once('=') else {
            return Err(bad(format!("`{item}` is not key=value")));
        };
        let (key, value) = (key.trim(), value.trim());
        // `aqm=KIND` and `aqm.KEY` are the `queue` table's `kind` and `KEY`.
        let key = match key {
            "aqm" => "queue.kind".to_string(),
            k => match k.strip_prefix("aqm.") {
                Some(rest) => format!("queue.{rest}"),
                None => k.to_string(),
            },
        };
        let key = key.as_str();
        let Some(&(_, kind)) = KEYS.iter().find(|(k, _)| *k == key) else {
            let keys: Vec<&str> = KEYS.iter().map(|(k, _)| *k).collect();
            return Err(bad(format!(
                "unknown key `{key}` (expected one of {})",
                keys.join(", ")
            )));
        };
        let v = match kind {
            Kind::Text => toml::Value::String(value.to_string()),
            Kind::Int => toml::Value::Integer(
                value
                    .parse()
                    .map_err(|_| bad(format!("`{key}`: `{value}` is not a whole number")))?,
            ),
            Kind::Float => toml::Value::Float(
                value
                    .parse()
                    .map_err(|_| bad(format!("`{key}`: `{value}` is not a number")))?,
            ),
            Kind::Bool => toml::Value::Boolean(
                value
                    .parse()
                    .map_err(|_| bad(format!("`{key}`: `{value}` is not true or false")))?,
            ),
            Kind::Schedule => {
                let mut steps = Vec::new();
                for step in value.split(';').map(str::trim).filter(|s| !s.is_empty()) {
                    let Some((at, rate)) = step.split_once(':') else {
                        return Err(bad(format!("`{key}`: `{step}` is not AT:RATE")));
                    };
                    let mut t = toml::Table::new();
                    t.insert("at".into(), toml::Value::String(at.trim().into()));
                    t.insert("rate".into(), toml::Value::String(rate.trim().into()));
                    steps.push(toml::Value::Table(t));
                }
                toml::Value::Array(steps)
            }
        };
        let slot = match key.split_once('.') {
            Some((outer, inner)) => {
                let sub = table
                    .entry(outer)
                    .or_insert_with(|| toml::Value::Table(toml::Table::new()));
                let toml::Value::Table(sub) = sub else {
                    return Err(bad(format!("`{outer}` given twice")));
                };
                sub.entry(inner)
            }
            None => table.entry(key),
        };
        if let toml::map::Entry::Occupied(_) = slot {
            return Err(bad(format!("`{key}` given twice")));
        }
        slot.or_insert(v);
    }
    let spec: LinkSpec = toml::Value::Table(table)
        .try_into()
        .map_err(|e: toml::de::Error| bad(e.message().replace('\n', " ").trim().to_string()))?;
    link_config(&spec, what)?;
    Ok(spec)
}

/// A relay configuration file: `[forward]` and (optionally) `[reverse]`
/// link tables, with the keys of a scenario's link table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RelayLinks {
    /// Clients to the server.
    pub forward: LinkSpec,
    /// The server to its clients; default: the forward link without its
    /// impairments (cut-off, rate schedule, loss), as a scenario's chain.
    #[serde(default)]
    pub reverse: Option<LinkSpec>,
}

impl RelayLinks {
    /// Reads a TOML file; the error is one line naming the file and line.
    pub fn from_toml_file(path: &std::path::Path) -> Result<Self, Error> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| Error::Invalid(format!("cannot read {}: {e}", path.display())))?;
        let links: RelayLinks = toml::from_str(&text).map_err(|e| {
            let line = e.span().map(|s| text[..s.start.min(text.len())].lines().count().max(1));
            let msg = e.message().replace('\n', " ").trim().to_string();
            match line {
                Some(l) => Error::Invalid(format!("{}:{l}: {msg}", path.display())),
                None => Error::Invalid(format!("{}: {msg}", path.display())),
            }
        })?;
        links.configs()?;
        Ok(links)
    }

    /// The two links' simulator configurations (forward, reverse).
    pub fn configs(&self) -> Result<(LinkConfig, LinkConfig), Error> {
        let forward = link_config(&self.forward, "forward")?;
        let reverse = match &self.reverse {
            Some(r) => link_config(r, "reverse")?,
            None => forward.without_impairments(),
        };
        Ok((forward, reverse))
    }
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

/// One direction's counters. Bytes are wire bytes (payload plus the link's
/// overhead). `offered` = `delivered` + the four drops + what is still in
/// the link.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct DirectionStats {
    /// Datagrams handed to the link.
    pub offered: Counter,
    /// Datagrams that left the link and were sent on.
    pub delivered: Counter,
    /// Arrivals that found the queue full (overflow).
    pub dropped_queue: Counter,
    /// Dropped by the queue discipline's AQM (CoDel, RED; 0 with DropTail).
    pub dropped_aqm: Counter,
    /// Marked CE by the queue discipline (live datagrams are Not-ECT: the
    /// relay does not read their ECN field, so 0 unless that changes).
    pub marked: Counter,
    /// Lost to a cut-off.
    pub dropped_cutoff: Counter,
    /// Lost to random loss.
    pub dropped_random: Counter,
    /// Dropped because the relay could not keep up (a departure more than
    /// [`OVERLOAD_LAG`] late, or the operating system refused to send).
    pub dropped_overload: Counter,
    /// The most packets and the most bytes the queue has held.
    pub queue_high_water: Counter,
    /// The link's configured rate now, in bits per second (what the link
    /// spec or its rate schedule says, not what was carried: that is
    /// `delivered_bps`).
    #[serde(rename = "link_rate_bps")]
    pub rate_bps: u64,
    /// Seconds this direction carried traffic: from the offer of the first
    /// datagram it delivered to the departure of the last.
    pub active_secs: f64,
    /// What this direction delivered, bits per second of wire bytes over
    /// `active_secs` (0 before two deliveries).
    pub delivered_bps: f64,
    /// How late departures left, in microseconds: the 50th, 99th
    /// percentile and the maximum.
    pub late_p50_us: f64,
    /// 99th percentile.
    pub late_p99_us: f64,
    /// Maximum.
    pub late_max_us: f64,
    /// Queueing delay of the delivered datagrams, in milliseconds: the
    /// time from the offer to the start of its transmission, computed as
    /// the datagram's time in the link less the propagation delay and its
    /// own serialization at the link's rate when it arrived (a rate step
    /// while it waited moves it by the difference). The 50th percentile,
    /// in 10-µs buckets (the upper edge), as a share of datagrams, not of time.
    pub queue_delay_p50_ms: f64,
    /// 99th percentile.
    pub queue_delay_p99_ms: f64,
}

/// The relay's counters.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RelayStats {
    /// Seconds since the relay started.
    pub elapsed_secs: f64,
    /// Client addresses seen.
    pub clients: usize,
    /// Clients to the server.
    pub forward: DirectionStats,
    /// The server to its clients.
    pub reverse: DirectionStats,
    /// Times the relay moved its clients to new upstream ports (NAT
    /// rebinding, [`Relay::rebind_every`]).
    pub rebinds: u64,
}

/// Durations in fixed-width buckets (the last one holds everything
/// longer), for percentiles.
#[derive(Debug, Clone)]
struct Histogram {
    bucket_ns: u64,
    buckets: Vec<u64>,
    count: u64,
    max_ns: u64,
}

impl Histogram {
    /// `buckets` buckets of `bucket_ns` each.
    fn new(bucket_ns: u64, buckets: usize) -> Self {
        Histogram {
            bucket_ns,
            buckets: vec![0; buckets],
            count: 0,
            max_ns: 0,
        }
    }

    /// Lateness of departures: 1-µs buckets up to 20 ms.
    fn lateness() -> Self {
        Self::new(1_000, 20_001)
    }

    /// Queueing delay: 10-µs buckets up to 2 s.
    fn queueing() -> Self {
        Self::new(10_000, 200_001)
    }

    fn record(&mut self, ns: u64) {
        let i = ((ns / self.bucket_ns) as usize).min(self.buckets.len() - 1);
        self.buckets[i] += 1;
        self.count += 1;
        self.max_ns = self.max_ns.max(ns);
    }

    /// The upper edge of the bucket holding quantile `q` (never more than
    /// the maximum), in nanoseconds; 0 when empty.
    fn quantile_ns(&self, q: f64) -> u64 {
        if self.count == 0 {
            return 0;
        }
        let rank = ((q * self.count as f64).ceil() as u64).clamp(1, self.count);
        let mut seen = 0;
        for (i, &n) in self.buckets.iter().enumerate() {
            seen += n;
            if seen >= rank {
                return ((i as u64 + 1) * self.bucket_ns).min(self.max_ns);
            }
        }
        self.max_ns
    }

    fn quantile_us(&self, q: f64) -> f64 {
        self.quantile_ns(q) as f64 / 1e3
    }

    fn quantile_ms(&self, q: f64) -> f64 {
        self.quantile_ns(q) as f64 / 1e6
    }
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
    /// Each datagram with its client and the time it was offered.
    link: LinkRunner<(SocketAddr, Bytes, SimTime)>,
    /// The link's propagation delay, nanoseconds.
    propagation_ns: u64,
    overload: Counter,
    late: Histogram,
    queueing: Histogram,
    /// Offer time of the first delivered datagram and departure of the last.
    active: Option<(SimTime, SimTime)>,
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
        }
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
    fn record_queueing(&mut self, offered: SimTime, due: SimTime, wire: u64) {
        let serialization = serialization_ns(wire * 8, self.link.model().rate().max(Rate::from_bits_per_sec(1)));
        let in_link = due.as_nanos().saturating_sub(offered.as_nanos());
        self.queueing.record(
            in_link
                .saturating_sub(self.propagation_ns)
                .saturating_sub(serialization),
        );
    }
}

/// One client's socket towards the server, and the task reading it. Dropping
/// it closes the socket (datagrams still on their way to it are lost, as
/// through a NAT that has forgotten the mapping).
struct Upstream {
    sock: Arc<UdpSocket>,
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
        sock.connect(to)
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
    at: Instant,
}

/// A bound relay, ready to run.
pub struct Relay {
    cfg: RelayConfig,
    listen: Arc<UdpSocket>,
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
        self.listen.local_addr().map_err(|e| Error::Run(e.to_string()))
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
                    let len = m.payload.len() as u64;
                    let tag = PacketTag::new(0).with_hash(peer_hash(m.peer));
                    let v = fwd.link.offer_tagged(t, len, tag, (m.peer, m.payload, t));
                    if v != Verdict::Accepted {
                        tracing::trace!(?v, "relay: forward drop");
                    }
                } else {
                    let len = m.payload.len() as u64;
                    let tag = PacketTag::new(0).with_hash(peer_hash(m.peer));
                    rev.link.offer_tagged(t, len, tag, (m.peer, m.payload, t));
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
                            let (client, payload, offered) = frame.item;
                            dir.record_queueing(offered, at, frame.wire);
                            if late > OVERLOAD_LAG.as_nanos() as u64 {
                                count(&mut dir.overload, frame.wire);
                                continue;
                            }
                            let sent = if name == "forward" {
                                match upstream.get(&client) {
                                    Some(up) => up.sock.try_send(&payload).is_ok(),
                                    None => false,
                                }
                            } else {
                                listen.try_send_to(&payload, client).is_ok()
                            };
                            if sent {
                                dir.late.record(late);
                                let from = dir.active.map_or(offered, |(f, _)| f);
                                dir.active = Some((from, at));
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
/// use tput_lab::relay::{RelayConfig, RelayLinks, RelayThread, parse_link_list};
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

/// A non-blocking UDP socket with large buffers (the operating system may
/// grant less), registered with the runtime.
fn bind_udp(addr: SocketAddr) -> std::io::Result<UdpSocket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(Domain::for_address(addr), Type::DGRAM, Some(Protocol::UDP))?;
    let _ = s.set_recv_buffer_size(SOCKET_BUFFER);
    let _ = s.set_send_buffer_size(SOCKET_BUFFER);
    s.set_nonblocking(true)?;
    s.bind(&addr.into())?;
    UdpSocket::from_std(s.into())
}

fn count(c: &mut Counter, bytes: u64) {
    c.packets += 1;
    c.bytes += bytes;
}

/// Reads datagrams from `sock` and hands them to the relay loop, stamped
/// with the time they were read. `client` is `None` for the listening
/// socket (datagrams from clients) and the client an upstream socket serves.
async fn receive(sock: Arc<UdpSocket>, client: Option<SocketAddr>, tx: mpsc::UnboundedSender<Inbound>) {
    let mut buf = vec![0u8; MAX_DATAGRAM];
    loop {
        let (n, from) = match sock.recv_from(&mut buf).await {
            Ok(r) => r,
            // ICMP errors (the server not listening yet, say) surface on
            // connected sockets; keep reading.
            Err(e) => {
                tracing::debug!("relay: receive error: {e}");
                continue;
            }
        };
        let m = Inbound {
            from_client: client.is_none(),
            peer: client.unwrap_or(from),
            payload: Bytes::copy_from_slice(&buf[..n]),
            at: Instant::now(),
        };
        if tx.send(m).is_err() {
            return;
        }
    }
}

/// Timed datagrams through a relay: what the relay's accuracy is measured
/// with (`crates/lab/examples/relay_accuracy.rs`, the `live_timing` bench)
/// and what its tests check the accounting with.
pub mod probe {
    use std::net::{SocketAddr, UdpSocket};
    use std::time::{Duration, Instant};

    /// The first 8 bytes of the datagram that ends a [`blast`].
    const END: u64 = u64::MAX;

    /// One datagram that arrived, times in nanoseconds from the blast's start.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub struct Arrival {
        /// When it was sent.
        pub sent_ns: u64,
        /// When it arrived.
        pub at_ns: u64,
    }

    impl Arrival {
        /// Its one-way time, send to arrival.
        pub fn one_way_ns(&self) -> u64 {
            self.at_ns.saturating_sub(self.sent_ns)
        }
    }

    /// Sends `count` datagrams of `size` bytes (at least 8) from a fresh
    /// socket to `to` at `pps` per second, each carrying its send time, then
    /// one that marks the end; returns what `sink` received, in arrival
    /// order, until the end marker arrives or `quiet` passes with nothing
    /// (a relay that drops the marker ends it that way). Pacing sleeps, so
    /// that a relay on the same machine keeps its core; each datagram
    /// carries its own send time, so pacing need not be exact.
    pub fn blast(
        to: SocketAddr,
        sink: &UdpSocket,
        size: usize,
        pps: f64,
        count: u64,
        quiet: Duration,
    ) -> std::io::Result<Vec<Arrival>> {
        let t0 = Instant::now();
        let sink = sink.try_clone()?;
        sink.set_read_timeout(Some(quiet))?;
        let rx = std::thread::spawn(move || {
            let mut buf = vec![0u8; 65_536];
            let mut got = Vec::new();
            while let Ok(n) = sink.recv(&mut buf) {
                let at_ns = t0.elapsed().as_nanos() as u64;
                if n >= 8 {
                    let sent_ns = u64::from_be_bytes(buf[..8].try_into().expect("8 bytes"));
                    if sent_ns == END {
                        break;
                    }
                    got.push(Arrival { sent_ns, at_ns });
                }
            }
            got
        });
        let tx = UdpSocket::bind(match to {
            SocketAddr::V4(_) => "127.0.0.1:0",
            SocketAddr::V6(_) => "[::1]:0",
        })?;
        let mut payload = vec![0u8; size.max(8)];
        for i in 0..count {
            let due = Duration::from_secs_f64(i as f64 / pps);
            if let Some(wait) = due.checked_sub(t0.elapsed()) {
                std::thread::sleep(wait);
            }
            let now = t0.elapsed().as_nanos() as u64;
            payload[..8].copy_from_slice(&now.to_be_bytes());
            let _ = tx.send_to(&payload, to);
        }
        payload[..8].copy_from_slice(&END.to_be_bytes());
        let _ = tx.send_to(&payload, to);
        rx.join()
            .map_err(|_| std::io::Error::other("the receiving thread panicked"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn link_lists_parse_like_link_tables() {
        let s = parse_link_list(
            "rate=36.864Mbit/s, delay=50ms,queue_bytes=64KiB,ber=1e-8,\
             cutoff.period=10ms,cutoff.connected=0.5,cutoff.mode=drop,rate_schedule=1s:10Mbit/s;2s:20Mbit/s",
            "--forward",
        )
        .unwrap();
        assert_eq!(s.rate.bits_per_sec(), 36_864_000);
        assert_eq!(s.delay, Duration::from_millis(50));
        assert_eq!(s.queue_bytes, Some(64 * 1024));
        assert_eq!(s.ber, Some(1e-8));
        assert_eq!(s.rate_schedule.len(), 2);
        assert_eq!(s.rate_schedule[1].rate.bits_per_sec(), 20_000_000);
        let c = s.cutoff.unwrap();
        assert_eq!(c.period, Duration::from_millis(10));
        assert_eq!(c.connected, 0.5);
        // A queue discipline: `aqm=` and `aqm.KEY=` are the `queue` table.
        let s = parse_link_list(
            "rate=10Mbit/s,delay=5ms,aqm=fq_codel,aqm.target=2ms,aqm.ecn=false,aqm.quantum=300",
            "--forward",
        )
        .unwrap();
        let q = s.queue.clone().unwrap();
        assert_eq!(q.kind, crate::scenario::QueueKind::FqCodel);
        assert_eq!(
            (q.target, q.ecn, q.quantum),
            (Some(Duration::from_millis(2)), Some(false), Some(300))
        );
        let cfg = link_config(&s, "--forward").unwrap();
        assert_eq!(cfg.discipline.name(), "fq_codel");
    }

    /// `trace=FILE` gives the forward link the trace's opportunities; the
    /// default reverse link runs at `rate` without it.
    #[test]
    fn a_link_list_takes_a_delivery_trace() {
        let shipped =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/traces/constant-12mbit.trace");
        let list = format!("rate=20Mbit/s,delay=10ms,trace={}", shipped.display());
        let s = parse_link_list(&list, "--forward").unwrap();
        assert_eq!(s.trace.as_deref(), Some(shipped.as_path()));
        let (forward, reverse) = RelayLinks {
            forward: s,
            reverse: None,
        }
        .configs()
        .unwrap();
        assert_eq!(
            forward.trace.as_ref().map(|t| t.opportunities().to_vec()),
            Some(vec![1])
        );
        assert!(reverse.trace.is_none());
        let e = parse_link_list("rate=1Mbit/s,delay=1ms,trace=/nonexistent/x.trace", "--forward")
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("--forward.trace: cannot read /nonexistent/x.trace"),
            "{e}"
        );
    }

    #[test]
    fn bad_link_lists_name_the_key_or_value() {
        let e = |s: &str| parse_link_list(s, "--forward").unwrap_err().to_string();
        assert!(e("rate=1Mbit/s,delay=1ms,qeue=3").contains("unknown key `qeue`"));
        assert!(
            e("rate=10Mbits,delay=1ms").contains("10Mbits"),
            "{}",
            e("rate=10Mbits,delay=1ms")
        );
        assert!(e("rate=1Mbit/s,delay=1ms,loss=x").contains("`loss`: `x` is not a number"));
        assert!(
            e("rate=1Mbit/s,delay=1ms,loss=2").contains("probability"),
            "{}",
            e("rate=1Mbit/s,delay=1ms,loss=2")
        );
        assert!(e("rate=1Mbit/s").contains("delay"));
        assert!(e("rate=1Mbit/s,rate=2Mbit/s,delay=1ms").contains("`rate` given twice"));
        assert!(e("rate").contains("not key=value"));
        assert_eq!(
            e("rate=1Mbit/s,delay=1ms,aqm=red,aqm.target=5ms"),
            "--forward.queue.target: not a parameter of kind = \"red\""
        );
        assert!(e("rate=1Mbit/s,delay=1ms,aqm=pie").contains("pie"));
        assert!(e("rate=1Mbit/s,delay=1ms,aqm=codel,aqm.ecn=yes").contains("`queue.ecn`: `yes` is not true or false"));
        assert_eq!(
            e("rate=1Mbit/s,delay=1ms,aqm=red,aqm.max_p=2"),
            "--forward.queue.max_p: must be in (0, 1], got 2"
        );
        for msg in [e("rate=1Mbit/s,delay=1ms,qeue=3"), e("rate=10Mbits,delay=1ms")] {
            assert!(msg.starts_with("--forward: ") && !msg.contains('\n'), "{msg}");
        }
    }

    #[test]
    fn lateness_quantiles() {
        let mut l = Histogram::lateness();
        for i in 0..100 {
            l.record(i * 1000 + 500);
        }
        assert_eq!(l.quantile_us(0.5), 50.0);
        assert_eq!(l.quantile_us(0.99), 99.0);
        assert_eq!(l.max_ns, 99_500);
    }

    #[test]
    fn queueing_delay_is_time_in_link_less_propagation_and_serialization() {
        // 8 Mbit/s, 10 ms: a 1000-byte datagram serializes in 1 ms.
        let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::from_millis(10)).with_overhead(0);
        let mut d = Direction::new(&cfg, 1, "forward").expect("valid link");
        let addr: SocketAddr = "127.0.0.1:9".parse().expect("address");
        // Three back to back at t = 0: they wait 0, 1 and 2 ms.
        for _ in 0..3 {
            let t = SimTime::ZERO;
            d.link.offer(t, 1000, (addr, Bytes::from_static(&[0; 1000]), t));
        }
        let mut due = Vec::new();
        while let Some(o) = d.link.poll(SimTime::from_nanos(1_000_000_000)) {
            if let LinkOutput::Deliver { at, frame } = o {
                due.push(at.as_nanos());
                d.record_queueing(frame.item.2, at, frame.wire);
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
