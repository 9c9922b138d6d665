//! Two ends joined in memory by a link with a behaviour per direction, run
//! in virtual time as a live loop pumps a socket: for tests (the
//! `test-support` feature).
//!
//! An end is anything that implements [`PairEnd`]: a [`Node`], or a [`RawEnd`]
//! (a bare quinn-proto endpoint a test scripts by hand, for requests and
//! frames a `Node` would never send). Each direction is a [`Link`]: a
//! one-way delay, an optional drop rule, and an optional rate with a
//! tail-drop queue in front of it, the small network elements of neqo's
//! test simulator (`Delay`, `Drop`, `TailDrop`).

use std::collections::VecDeque;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use quinn_proto::{ClientConfig, Connection, ConnectionHandle, DatagramEvent, Endpoint, EndpointConfig, ServerConfig};
use tput_cc::units::Rate;

use crate::{Error, Node, NodeEvent, Outgoing, ServerTrust, TransferOutcome, TransferSpec};

/// The client's address in a [`Pair`].
pub const CLIENT_ADDR: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 1)), 5000);
/// The server's address in a [`Pair`] (an address in memory, no socket).
pub const SERVER_ADDR: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::new(10, 0, 0, 2)), 4433);

/// One end of a [`Pair`]: what the link needs of it. [`Node`] and
/// [`RawEnd`] implement it.
pub trait PairEnd: fmt::Debug {
    /// The pair starts at `now`; the other end is at `peer`.
    fn attach(&mut self, _now: Instant, _peer: SocketAddr) {}
    /// Datagrams from `from` that arrived together at `now` (one receive batch).
    fn receive(&mut self, now: Instant, from: SocketAddr, batch: Vec<BytesMut>);
    /// The next datagram (or GSO batch) to send.
    fn poll_transmit(&mut self, now: Instant) -> Option<Outgoing>;
    /// Takes back a sent [`Outgoing`] (a [`Node`] reuses its buffer).
    fn recycle(&mut self, _out: Outgoing) {}
    /// When the end next needs [`handle_timeout`](Self::handle_timeout).
    fn poll_timeout(&mut self) -> Option<Instant>;
    /// Time has reached `now`.
    fn handle_timeout(&mut self, now: Instant);
    /// The outcome of a transfer that finished, if any (a [`Node`]'s
    /// [`NodeEvent::Finished`]; other events are dropped).
    fn poll_finished(&mut self) -> Option<TransferOutcome> {
        None
    }
    /// Whether the end stopped at a transmit budget with more to send
    /// ([`Node::set_transmit_budget`]).
    fn has_more_to_send(&self) -> bool {
        false
    }
    /// Send on after stopping at the transmit budget.
    fn send_more(&mut self, _now: Instant) {}
}

impl PairEnd for Node {
    fn receive(&mut self, now: Instant, from: SocketAddr, batch: Vec<BytesMut>) {
        // As the live loop does: a receive batch drives each connection once.
        self.handle_datagrams(now, batch.into_iter().map(|d| (from, d)));
    }
    fn poll_transmit(&mut self, _now: Instant) -> Option<Outgoing> {
        Node::poll_transmit(self)
    }
    fn recycle(&mut self, out: Outgoing) {
        Node::recycle(self, out);
    }
    fn poll_timeout(&mut self) -> Option<Instant> {
        Node::poll_timeout(self)
    }
    fn handle_timeout(&mut self, now: Instant) {
        Node::handle_timeout(self, now);
    }
    fn poll_finished(&mut self) -> Option<TransferOutcome> {
        while let Some(ev) = self.poll_event() {
            if let NodeEvent::Finished(o) = ev {
                return Some(*o);
            }
        }
        None
    }
    fn has_more_to_send(&self) -> bool {
        Node::has_more_to_send(self)
    }
    fn send_more(&mut self, now: Instant) {
        Node::send_more(self, now);
    }
}

/// A bare quinn-proto endpoint with one connection, which a test drives by
/// hand through [`connection`](Self::connection): a client that connects
/// when the pair starts, or a server that accepts the first connection. The
/// endpoint's own bookkeeping (endpoint events, stateless responses) is done
/// for it. Its randomness has a fixed seed.
pub struct RawEnd {
    endpoint: Endpoint,
    conn: Option<(ConnectionHandle, Connection)>,
    connect: Option<(ClientConfig, String)>,
    peer: Option<SocketAddr>,
    out: VecDeque<Bytes>,
    buf: Vec<u8>,
}

impl fmt::Debug for RawEnd {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RawEnd")
            .field("connected", &self.conn.is_some())
            .field("peer", &self.peer)
            .finish_non_exhaustive()
    }
}

impl RawEnd {
    /// A client that connects to the other end, named `server_name`, with
    /// `config` when the pair starts.
    pub fn client(config: ClientConfig, server_name: &str) -> Self {
        let endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), None, false, Some([1; 32]));
        Self::with(endpoint, Some((config, server_name.to_string())))
    }

    /// A server that accepts the first connection with `config`.
    pub fn server(config: ServerConfig) -> Self {
        let endpoint = Endpoint::new(
            Arc::new(EndpointConfig::default()),
            Some(Arc::new(config)),
            false,
            Some([2; 32]),
        );
        Self::with(endpoint, None)
    }

    fn with(endpoint: Endpoint, connect: Option<(ClientConfig, String)>) -> Self {
        Self {
            endpoint,
            conn: None,
            connect,
            peer: None,
            out: VecDeque::new(),
            buf: Vec::new(),
        }
    }

    /// The connection, once there is one (a client's from the start, a
    /// server's from the first Initial it accepted).
    pub fn connection(&mut self) -> Option<&mut Connection> {
        self.conn.as_mut().map(|(_, c)| c)
    }

    /// Hand endpoint events to the endpoint and its answers back.
    fn pump(&mut self) {
        if let Some((h, c)) = self.conn.as_mut() {
            while let Some(ev) = c.poll_endpoint_events() {
                if let Some(back) = self.endpoint.handle_event(*h, ev) {
                    c.handle_event(back);
                }
            }
        }
    }
}

impl PairEnd for RawEnd {
    fn attach(&mut self, now: Instant, peer: SocketAddr) {
        self.peer = Some(peer);
        if let Some((config, name)) = self.connect.take() {
            // A config that cannot connect leaves the client without a
            // connection: the test sees `connection()` stay `None`.
            self.conn = self.endpoint.connect(now, config, peer, &name).ok();
        }
    }

    fn receive(&mut self, now: Instant, from: SocketAddr, batch: Vec<BytesMut>) {
        for d in batch {
            self.buf.clear();
            match self.endpoint.handle(now, from, None, None, d, &mut self.buf) {
                Some(DatagramEvent::NewConnection(incoming)) => {
                    self.buf.clear();
                    if self.conn.is_none() {
                        match self.endpoint.accept(incoming, now, &mut self.buf, None) {
                            Ok(conn) => self.conn = Some(conn),
                            Err(e) => {
                                if let Some(t) = e.response {
                                    self.out.push_back(Bytes::copy_from_slice(&self.buf[..t.size]));
                                }
                            }
                        }
                    } else {
                        self.endpoint.ignore(incoming);
                    }
                }
                Some(DatagramEvent::ConnectionEvent(h, ev)) => {
                    if let Some((ch, c)) = self.conn.as_mut()
                        && *ch == h
                    {
                        c.handle_event(ev);
                    }
                }
                Some(DatagramEvent::Response(t)) => {
                    self.out.push_back(Bytes::copy_from_slice(&self.buf[..t.size]));
                }
                None => {}
            }
        }
        self.pump();
    }

    fn poll_transmit(&mut self, now: Instant) -> Option<Outgoing> {
        self.pump();
        let payload = self.out.pop_front().or_else(|| {
            let (_, c) = self.conn.as_mut()?;
            self.buf.clear();
            let t = c.poll_transmit(now, 1, &mut self.buf)?;
            Some(Bytes::copy_from_slice(&self.buf[..t.size]))
        })?;
        Some(Outgoing {
            destination: self.peer?,
            payload,
            segment_size: None,
            ecn: None,
        })
    }

    fn poll_timeout(&mut self) -> Option<Instant> {
        self.conn.as_mut().and_then(|(_, c)| c.poll_timeout())
    }

    fn handle_timeout(&mut self, now: Instant) {
        if let Some((_, c)) = self.conn.as_mut()
            && c.poll_timeout().is_some_and(|t| t <= now)
        {
            c.handle_timeout(now);
        }
        self.pump();
    }
}

/// A datagram offered to a [`Link`], as its drop rule sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Offer {
    /// Time since the pair started.
    pub at: Duration,
    /// 1 for the first datagram offered to this link, 2 for the second, ...
    pub index: u64,
    /// Its length in bytes.
    pub len: usize,
}

/// What a [`Link`] did with the datagrams offered to it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct LinkStats {
    /// Datagrams offered.
    pub offered: u64,
    /// Datagrams handed to the far end.
    pub delivered: u64,
    /// Datagrams the drop rule took.
    pub dropped_by_rule: u64,
    /// Datagrams that found the queue full (tail drop).
    pub dropped_by_queue: u64,
    /// When each datagram was offered (including dropped ones).
    pub offered_at: Vec<Instant>,
    /// When each delivered datagram reached the far end.
    pub delivered_at: Vec<Instant>,
}

type DropRule = Box<dyn FnMut(&Offer) -> bool + Send>;

/// One direction of a [`Pair`]'s link: an optional drop rule, then an
/// optional serialization rate behind a tail-drop queue, then a fixed
/// one-way delay. Datagrams leave in the order they came.
pub struct Link {
    delay: Duration,
    rate: Option<(Rate, usize)>,
    drop: Option<DropRule>,
    /// When the datagram being serialized, and each queued one, leaves the queue.
    departures: VecDeque<Instant>,
    /// (arrival at the far end, datagram)
    wire: VecDeque<(Instant, BytesMut)>,
    stats: LinkStats,
}

impl fmt::Debug for Link {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Link")
            .field("delay", &self.delay)
            .field("rate", &self.rate)
            .field("drop", &self.drop.is_some())
            .field("in_flight", &self.wire.len())
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

/// Bytes of IPv4 and UDP header a datagram carries on the wire.
const HEADERS: u64 = 28;

impl Link {
    /// An ideal link: every datagram arrives `delay` after it was sent.
    pub fn new(delay: Duration) -> Self {
        Self {
            delay,
            rate: None,
            drop: None,
            departures: VecDeque::new(),
            wire: VecDeque::new(),
            stats: LinkStats::default(),
        }
    }

    /// Serialize datagrams (with 28 bytes of IPv4 and UDP header each) at
    /// `rate`, one at a time; up to `queue_packets` more wait behind the one
    /// being sent, and a datagram that finds the queue full is dropped.
    pub fn with_rate(mut self, rate: Rate, queue_packets: usize) -> Self {
        self.rate = Some((rate, queue_packets));
        self
    }

    /// Drop each datagram for which `rule` says `true` (before it reaches
    /// the queue).
    pub fn with_drop(mut self, rule: impl FnMut(&Offer) -> bool + Send + 'static) -> Self {
        self.drop = Some(Box::new(rule));
        self
    }

    /// Drop every `n`th datagram: the `n`th, the `2n`th, ... (`n = 0`
    /// drops none).
    pub fn with_drop_every(self, n: u64) -> Self {
        self.with_drop(move |d| n > 0 && d.index % n == 0)
    }

    /// Drop each datagram with probability `p`, from a generator seeded
    /// with `seed` (the same datagrams each run).
    pub fn with_random_drop(self, p: f64, seed: u64) -> Self {
        let mut state = seed;
        self.with_drop(move |_| {
            // SplitMix64 (Steele, Lea, Flood: "Fast splittable pseudorandom
            // number generators", 2014); the top 53 bits as a fraction.
            state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^= z >> 31;
            ((z >> 11) as f64 / (1u64 << 53) as f64) < p
        })
    }

    /// What the link has done so far.
    pub fn stats(&self) -> &LinkStats {
        &self.stats
    }

    /// The one-way delay.
    pub fn delay(&self) -> Duration {
        self.delay
    }

    /// Offer `d` at `now` (`start`: when the pair started).
    fn offer(&mut self, now: Instant, start: Instant, d: BytesMut) {
        self.stats.offered += 1;
        self.stats.offered_at.push(now);
        let offer = Offer {
            at: now.saturating_duration_since(start),
            index: self.stats.offered,
            len: d.len(),
        };
        if self.drop.as_mut().is_some_and(|rule| rule(&offer)) {
            self.stats.dropped_by_rule += 1;
            return;
        }
        let mut leaves = now;
        if let Some((rate, queue)) = self.rate {
            while self.departures.front().is_some_and(|&t| t <= now) {
                self.departures.pop_front();
            }
            // One is on the wire, the rest wait.
            if self.departures.len() > queue {
                self.stats.dropped_by_queue += 1;
                return;
            }
            let bits = (d.len() as u64 + HEADERS) * 8;
            let nanos = bits.saturating_mul(1_000_000_000) / rate.bits_per_sec().max(1);
            let begins = self.departures.back().map_or(now, |&t| t.max(now));
            leaves = begins + Duration::from_nanos(nanos);
            self.departures.push_back(leaves);
        }
        self.wire.push_back((leaves + self.delay, d));
    }

    /// When the next datagram arrives at the far end.
    fn next_arrival(&self) -> Option<Instant> {
        self.wire.front().map(|w| w.0)
    }

    /// The datagrams that have arrived by `now`.
    fn arrived(&mut self, now: Instant) -> Vec<BytesMut> {
        let mut batch = Vec::new();
        while self.wire.front().is_some_and(|w| w.0 <= now) {
            let (_, d) = self.wire.pop_front().expect("a datagram");
            self.stats.delivered += 1;
            self.stats.delivered_at.push(now);
            batch.push(d);
        }
        batch
    }
}

/// A client and a server end joined by a [`Link`] each way.
///
/// Each step is what [`udp::drive`](crate::udp::drive) does with a socket:
/// an end's datagrams go out after each call into it; a client stopped by
/// its transmit budget ([`Node::set_transmit_budget`]) is asked to send on
/// before time advances; the datagrams that arrive at an end at one time
/// come as one receive batch. Time jumps to the next arrival or timer.
///
/// ```
/// use tput_transport::{Identity, Link, Node, NodeConfig, Pair, ServerTrust, SimOptions, TransferSpec};
/// use std::time::Duration;
///
/// let identity = Identity::self_signed_from_seed(&["localhost"], 1).unwrap();
/// let config = NodeConfig::default().with_mtu_discovery(false);
/// let server = Node::simulated(config.clone(), Some(&identity), SimOptions::seeded(1)).unwrap();
/// let client = Node::simulated(config, None, SimOptions::seeded(2)).unwrap();
/// // 20 Mbit/s with a 10-packet queue and 5 ms each way; the client's 30th
/// // datagram is lost.
/// let up = Link::new(Duration::from_millis(5))
///     .with_rate("20Mbit/s".parse().unwrap(), 10)
///     .with_drop(|d| d.index == 30);
/// let down = Link::new(Duration::from_millis(5));
/// let mut pair = Pair::new(client, server, ServerTrust::Pinned(identity.fingerprint())).with_links(up, down);
/// pair.start(TransferSpec::upload(200_000, "cubic".parse().unwrap())).unwrap();
/// let outcome = pair.run(100_000, |_| {}).expect("the transfer finished");
/// assert!(outcome.ok());
/// assert_eq!(outcome.receiver.unwrap().bytes, 200_000, "every byte verified");
/// assert_eq!(pair.up.stats().dropped_by_rule, 1);
/// ```
#[derive(Debug)]
pub struct Pair<C: PairEnd = Node, S: PairEnd = Node> {
    /// The client end.
    pub client: C,
    /// The server end.
    pub server: S,
    /// The current time.
    pub now: Instant,
    /// When the pair started.
    pub start: Instant,
    /// Client to server.
    pub up: Link,
    /// Server to client.
    pub down: Link,
    /// The client's address ([`CLIENT_ADDR`]).
    pub client_addr: SocketAddr,
    /// The server's address ([`SERVER_ADDR`]).
    pub server_addr: SocketAddr,
    /// How a [`Node`] client trusts the server.
    pub trust: ServerTrust,
    /// Times the client stopped at its transmit budget and was asked to send on.
    pub yields: usize,
    /// The client's finished transfers: (when, outcome).
    pub client_outcomes: Vec<(Instant, TransferOutcome)>,
    /// The server's finished transfers: (when, outcome).
    pub server_outcomes: Vec<(Instant, TransferOutcome)>,
}

impl<S: PairEnd> Pair<Node, S> {
    /// A [`Node`] client and `server` joined by a 1 ms ideal link each way;
    /// the client trusts the server as `trust` says and names it `localhost`.
    pub fn new(client: Node, server: S, trust: ServerTrust) -> Self {
        let mut pair = Self::join(client, server);
        pair.trust = trust;
        pair
    }

    /// Start `spec` from the client; returns the transfer id.
    pub fn start(&mut self, spec: TransferSpec) -> Result<u64, Error> {
        self.client
            .start_transfer(self.now, self.server_addr, "localhost", &self.trust, spec)
    }
}

impl<C: PairEnd, S: PairEnd> Pair<C, S> {
    /// `client` and `server` joined by a 1 ms ideal link each way (a
    /// [`Node`] client trusts any server).
    pub fn join(mut client: C, mut server: S) -> Self {
        let now = Instant::now();
        client.attach(now, SERVER_ADDR);
        server.attach(now, CLIENT_ADDR);
        Self {
            client,
            server,
            now,
            start: now,
            up: Link::new(Duration::from_millis(1)),
            down: Link::new(Duration::from_millis(1)),
            client_addr: CLIENT_ADDR,
            server_addr: SERVER_ADDR,
            trust: ServerTrust::Insecure,
            yields: 0,
            client_outcomes: Vec::new(),
            server_outcomes: Vec::new(),
        }
    }

    /// The same pair with `up` (client to server) and `down` in place of its links.
    pub fn with_links(mut self, up: Link, down: Link) -> Self {
        self.up = up;
        self.down = down;
        self
    }

    /// Time since the pair started.
    pub fn elapsed(&self) -> Duration {
        self.now - self.start
    }

    /// Run until the client reports a finished transfer (its outcome), or
    /// for at most `steps` steps, or until nothing is left to happen
    /// (`None`). `on_client_send` sees what the client hands over after
    /// each call into it (the [`Outgoing`]s of one call, never empty).
    pub fn run(&mut self, steps: usize, mut on_client_send: impl FnMut(&[Outgoing])) -> Option<TransferOutcome> {
        let seen = self.client_outcomes.len();
        for _ in 0..steps {
            self.exchange(&mut on_client_send);
            if let Some((_, o)) = self.client_outcomes.get(seen) {
                return Some(o.clone());
            }
            if !self.advance(&mut on_client_send) {
                return None;
            }
        }
        None
    }

    /// Run until `done` says so (`true`), or for at most `steps` steps, or
    /// until nothing is left to happen (`false`). `done` sees the pair
    /// after each step, so a test can act on an end between steps.
    pub fn run_until(&mut self, steps: usize, mut done: impl FnMut(&mut Self) -> bool) -> bool {
        for _ in 0..steps {
            if done(self) {
                return true;
            }
            if !self.step() {
                return done(self);
            }
        }
        false
    }

    /// One step: both ends send what they have and report, then (unless
    /// the client is asked to send on) time advances to the next arrival or
    /// timer and the ends take both in. `false` when nothing is left to
    /// happen.
    pub fn step(&mut self) -> bool {
        self.exchange(&mut |_| {});
        self.advance(&mut |_| {})
    }

    fn exchange(&mut self, on_client_send: &mut impl FnMut(&[Outgoing])) {
        self.drain_client(on_client_send);
        while let Some(o) = self.server.poll_transmit(self.now) {
            for d in o.datagrams() {
                self.down.offer(self.now, self.start, BytesMut::from(&d[..]));
            }
            self.server.recycle(o);
        }
        while let Some(o) = self.client.poll_finished() {
            self.client_outcomes.push((self.now, o));
        }
        while let Some(o) = self.server.poll_finished() {
            self.server_outcomes.push((self.now, o));
        }
    }

    fn advance(&mut self, on_client_send: &mut impl FnMut(&[Outgoing])) -> bool {
        if self.client.has_more_to_send() {
            // What a live loop does: take in what has arrived, then send on.
            self.yields += 1;
            self.client.send_more(self.now);
            return true;
        }
        let Some(next) = [
            self.up.next_arrival(),
            self.down.next_arrival(),
            self.client.poll_timeout(),
            self.server.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min() else {
            return false;
        };
        self.now = self.now.max(next);
        let now = self.now;
        let to_server = self.up.arrived(now);
        if !to_server.is_empty() {
            self.server.receive(now, self.client_addr, to_server);
        }
        let to_client = self.down.arrived(now);
        if !to_client.is_empty() {
            self.client.receive(now, self.server_addr, to_client);
        }
        self.drain_client(on_client_send);
        self.client.handle_timeout(now);
        self.server.handle_timeout(now);
        true
    }

    fn drain_client(&mut self, on_client_send: &mut impl FnMut(&[Outgoing])) {
        let mut sent = Vec::new();
        while let Some(o) = self.client.poll_transmit(self.now) {
            for d in o.datagrams() {
                self.up.offer(self.now, self.start, BytesMut::from(&d[..]));
            }
            sent.push(o);
        }
        if !sent.is_empty() {
            on_client_send(&sent);
        }
        for o in sent {
            self.client.recycle(o);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Identity, NodeConfig, SimOptions};

    fn datagram(len: usize) -> BytesMut {
        BytesMut::from(&vec![0u8; len][..])
    }

    #[test]
    fn a_rated_link_serializes_one_datagram_after_another_then_delays_them() {
        // 1172 bytes + 28 of headers = 9600 bits: 1 ms each at 9.6 Mbit/s.
        let mut link = Link::new(Duration::from_millis(5)).with_rate(Rate::from_bits_per_sec(9_600_000), 10);
        let t0 = Instant::now();
        for _ in 0..3 {
            link.offer(t0, t0, datagram(1172));
        }
        let ms = |n| t0 + Duration::from_millis(n);
        assert_eq!(link.next_arrival(), Some(ms(6)));
        assert_eq!(link.arrived(ms(6)).len(), 1);
        assert!(link.arrived(ms(7) - Duration::from_nanos(1)).is_empty());
        assert_eq!(link.arrived(ms(8)).len(), 2);
        assert_eq!(link.stats().delivered_at, vec![ms(6), ms(8), ms(8)]);
    }

    #[test]
    fn a_full_queue_drops_at_the_tail() {
        let mut link = Link::new(Duration::ZERO).with_rate(Rate::from_bits_per_sec(9_600_000), 1);
        let t0 = Instant::now();
        // One on the wire, one waiting, two find the queue full.
        for _ in 0..4 {
            link.offer(t0, t0, datagram(1172));
        }
        assert_eq!(link.stats().dropped_by_queue, 2);
        // Once the first has left, there is room for one more.
        link.offer(t0 + Duration::from_millis(1), t0, datagram(1172));
        link.offer(t0 + Duration::from_millis(1), t0, datagram(1172));
        assert_eq!(link.stats().dropped_by_queue, 3);
        assert_eq!(link.arrived(t0 + Duration::from_secs(1)).len(), 3);
        assert_eq!(link.stats().offered, 6);
    }

    #[test]
    fn drop_rules_see_the_index_and_time_and_random_drops_repeat_with_their_seed() {
        let mut every_third = Link::new(Duration::ZERO).with_drop_every(3);
        let t0 = Instant::now();
        for _ in 0..9 {
            every_third.offer(t0, t0, datagram(100));
        }
        assert_eq!(every_third.stats().dropped_by_rule, 3);
        assert_eq!(every_third.arrived(t0).len(), 6, "the other six arrive");
        let mut late = Link::new(Duration::ZERO).with_drop(|d| d.at >= Duration::from_secs(1));
        late.offer(t0, t0, datagram(100));
        late.offer(t0 + Duration::from_secs(1), t0, datagram(100));
        assert_eq!(late.arrived(t0 + Duration::from_secs(2)).len(), 1);

        let pattern = |seed| {
            let mut link = Link::new(Duration::ZERO).with_random_drop(0.1, seed);
            (0..2000)
                .map(|_| {
                    let before = link.stats().dropped_by_rule;
                    link.offer(t0, t0, datagram(10));
                    link.stats().dropped_by_rule > before
                })
                .collect::<Vec<_>>()
        };
        let (a, b, c) = (pattern(1), pattern(1), pattern(2));
        assert_eq!(a, b);
        assert_ne!(a, c);
        let dropped = a.iter().filter(|&&d| d).count();
        assert!((140..260).contains(&dropped), "{dropped} of 2000 at p = 0.1");
    }

    #[test]
    fn a_transfer_through_a_bottleneck_loses_to_the_queue_and_still_verifies_every_byte() {
        let identity = Identity::self_signed_from_seed(&["localhost"], 4).unwrap();
        let config = NodeConfig::default().with_mtu_discovery(false);
        let server = Node::simulated(config.clone(), Some(&identity), SimOptions::seeded(1)).unwrap();
        let client = Node::simulated(config, None, SimOptions::seeded(2)).unwrap();
        let up = Link::new(Duration::from_millis(10)).with_rate(Rate::from_bits_per_sec(10_000_000), 8);
        let down = Link::new(Duration::from_millis(10));
        let mut pair = Pair::new(client, server, ServerTrust::Pinned(identity.fingerprint())).with_links(up, down);
        pair.start(TransferSpec::upload(2_000_000, "newreno".parse().unwrap()))
            .unwrap();
        let o = pair.run(1_000_000, |_| {}).expect("the transfer finished");
        assert!(o.ok(), "{:?}", o.error);
        assert_eq!(o.receiver.as_ref().unwrap().bytes, 2_000_000);
        let up = pair.up.stats();
        assert!(up.dropped_by_queue > 0, "slow start overflows an 8-packet queue");
        assert_eq!(up.dropped_by_rule, 0);
        assert_eq!(up.offered, up.delivered + up.dropped_by_queue);
        // 2 MB at 10 Mbit/s take at least 1.6 s of virtual time.
        assert!(pair.elapsed() >= Duration::from_millis(1600), "{:?}", pair.elapsed());
    }
}
