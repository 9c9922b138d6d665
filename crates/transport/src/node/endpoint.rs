//! Endpoint plumbing: datagrams in and out, connection IDs, qlog files, server admission of connections.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use std::time::Instant;

use bytes::Bytes;
use bytes::BytesMut;
use quinn_proto::ConnectionId;
use quinn_proto::ConnectionIdGenerator;
use quinn_proto::DatagramEvent;
use quinn_proto::ServerConfig;
use quinn_proto::congestion::ControllerFactory;
use tput_cc::ControllerSwitch;

use super::Conn;
use super::Node;
use super::Refusal;
use super::Role;
use super::config::NodeConfig;
use crate::Error;
use crate::pattern::splitmix64;
use crate::stall::StallFactory;
use crate::stall::StallState;

/// A datagram the node wants sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outgoing {
    /// Where to.
    pub destination: SocketAddr,
    /// The UDP payload: one datagram, or with `segment_size` several.
    pub payload: Bytes,
    /// `Some(n)`: `payload` holds consecutive datagrams of `n` bytes each (the
    /// last may be shorter), to be sent with one GSO call; only produced after
    /// [`Node::set_max_segments`] allowed more than one. [`Outgoing::datagrams`] splits them.
    pub segment_size: Option<usize>,
    /// The ECN codepoint quinn-proto asks the datagrams to carry (RFC 9000
    /// §13.4: ECT(0) while the path's ECN is validated or being tested;
    /// `None`: Not-ECT). A driver that cannot set the IP header's ECN field
    /// ignores it (then quinn-proto's validation turns ECN off).
    pub ecn: Option<quinn_proto::EcnCodepoint>,
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

/// How many datagrams a node took in with each ECN codepoint (RFC 3168
/// §5), as its driver handed them over ([`Node::ecn_received`]). With
/// [`NodeConfig::ecn`] off every arrival counts as Not-ECT.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct EcnCounts {
    /// Not-ECT (or a driver that cannot read the field).
    pub not_ect: u64,
    /// ECT(0): what quinn-proto sends while ECN is in use.
    pub ect0: u64,
    /// ECT(1).
    pub ect1: u64,
    /// CE: marked by a queue on the path.
    pub ce: u64,
}

impl EcnCounts {
    /// Count one datagram that arrived with `ecn`.
    pub fn count(&mut self, ecn: Option<quinn_proto::EcnCodepoint>) {
        use quinn_proto::EcnCodepoint as E;
        let n = match ecn {
            None => &mut self.not_ect,
            Some(E::Ect0) => &mut self.ect0,
            Some(E::Ect1) => &mut self.ect1,
            Some(E::Ce) => &mut self.ce,
        };
        *n += 1;
    }

    /// All datagrams counted.
    pub fn total(&self) -> u64 {
        self.not_ect + self.ect0 + self.ect1 + self.ce
    }
}

/// A connection's qlog trace ([`NodeConfig::qlog_dir`]).
#[cfg(feature = "qlog")]
pub(super) type Qlog = quinn_proto::QlogStream;
/// No qlog trace: built without the `qlog` feature.
#[cfg(not(feature = "qlog"))]
pub(super) enum Qlog {}

/// The qlog trace `name` of a new connection, if `config` asks for traces.
#[cfg(feature = "qlog")]
pub(super) fn qlog_for(config: &NodeConfig, name: &str, now: Instant) -> Result<Option<Qlog>, Error> {
    match &config.qlog_dir {
        Some(dir) => qlog_stream(dir, name, now).map(Some),
        None => Ok(None),
    }
}

/// The qlog trace `name` of a new connection: never, without the `qlog` feature.
#[cfg(not(feature = "qlog"))]
pub(super) fn qlog_for(_: &NodeConfig, _: &str, _: Instant) -> Result<Option<Qlog>, Error> {
    Ok(None)
}

#[cfg(feature = "qlog")]
fn qlog_stream(dir: &std::path::Path, name: &str, now: Instant) -> Result<Qlog, Error> {
    let path = dir.join(name);
    let file = std::fs::File::create(&path).map_err(|source| Error::Io {
        context: format!("creating qlog file {}", path.display()),
        source,
    })?;
    // `QlogConfig::default` takes `Instant::now()` as the start; the node's
    // `now` replaces it, so event times never depend on the host's clock.
    let mut q = quinn_proto::QlogConfig::default();
    q.writer(Box::new(std::io::BufWriter::new(file)))
        .title(Some(name.trim_end_matches(".sqlog").to_owned()))
        .start_time(now);
    q.into_stream()
        .ok_or_else(|| Error::Config(crate::ConfigError::Qlog { path: path.clone() }))
}

/// A seeded connection-ID generator (RFC 9000 §5.1 asks for unpredictable
/// IDs; these are unpredictable to anyone who does not know the seed, and
/// reproducible for who does).
pub(super) struct SeededCids {
    pub(super) state: u64,
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

/// Datagrams up to this size are copied out of a pooled buffer on arrival
/// (a copy of this size allocates from glibc's per-thread cache).
const SMALL_DATAGRAM: usize = 512;

impl Node {
    /// Datagrams that arrived together (one receive batch): each is taken in, then
    /// every connection they touched is processed once, as quinn's own
    /// endpoint driver does, instead of once per datagram.
    pub fn handle_datagrams(&mut self, now: Instant, batch: impl IntoIterator<Item = (SocketAddr, BytesMut)>) {
        self.handle_datagrams_ecn(now, batch.into_iter().map(|(from, data)| (from, None, data)));
    }

    /// [`handle_datagrams`](Self::handle_datagrams) for datagrams with the
    /// ECN codepoint each arrived with (see [`handle_datagram_ecn`](Self::handle_datagram_ecn)).
    pub fn handle_datagrams_ecn(
        &mut self,
        now: Instant,
        batch: impl IntoIterator<Item = (SocketAddr, Option<quinn_proto::EcnCodepoint>, BytesMut)>,
    ) {
        // The list of touched connections borrows `due`'s allocation (the
        // timer path's scratch list, empty between calls) and gives it back.
        self.batch = Some(std::mem::take(&mut self.due));
        for (from, ecn, data) in batch {
            self.handle_datagram_ecn(now, from, ecn, data);
        }
        let mut touched = self.batch.take().unwrap_or_default();
        for &h in &touched {
            self.drive(h, now);
        }
        touched.clear();
        self.due = touched;
    }

    /// A datagram arrived from `from`.
    pub fn handle_datagram(&mut self, now: Instant, from: SocketAddr, data: BytesMut) {
        self.handle_datagram_ecn(now, from, None, data);
    }

    /// [`handle_datagram`](Self::handle_datagram) for a datagram that
    /// arrived with ECN codepoint `ecn` (`None`: Not-ECT, or unknown):
    /// quinn-proto counts it into the ECN counts of its ACK frames (RFC 9000
    /// §13.4.1), unless [`NodeConfig::ecn`] is off.
    pub fn handle_datagram_ecn(
        &mut self,
        now: Instant,
        from: SocketAddr,
        ecn: Option<quinn_proto::EcnCodepoint>,
        mut data: BytesMut,
    ) {
        let ecn = ecn.filter(|_| self.config.ecn);
        self.ecn_received.count(ecn);
        // A short datagram (an acknowledgement, mostly) is read at once and
        // dropped inside quinn-proto: with a pool, give its full-size buffer
        // back now and let a small copy go in its place.
        if let Some(pool) = &self.pool
            && data.len() <= SMALL_DATAGRAM
        {
            let small = BytesMut::from(&data[..]);
            pool.recycle_mut(std::mem::replace(&mut data, small));
        }
        let mut buf = std::mem::take(&mut self.buf);
        match self.endpoint.handle(now, from, None, ecn, data, &mut buf) {
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
                            payload: Bytes::copy_from_slice(&buf[..t.size]),
                            segment_size: None,
                            ecn: None,
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
                        payload: Bytes::copy_from_slice(&buf[..t.size]),
                        segment_size: None,
                        ecn: None,
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
                            Refusal::PerAddress { max: m }
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
                                pacer: Default::default(),
                                paced_until: None,
                            };
                            self.conns.insert(h, Box::new(c));
                            self.drive(h, now);
                        }
                        Err(e) => {
                            tracing::debug!(%from, "rejected a connection attempt: {}", e.cause);
                            if let Some(t) = e.response {
                                self.out.push_back(Outgoing {
                                    destination: t.destination,
                                    payload: Bytes::copy_from_slice(&buf[..t.size]),
                                    segment_size: None,
                                    ecn: None,
                                });
                            }
                        }
                    }
                }
            }
            Some(DatagramEvent::Response(t)) => {
                self.out.push_back(Outgoing {
                    destination: t.destination,
                    payload: Bytes::copy_from_slice(&buf[..t.size]),
                    segment_size: None,
                    ecn: None,
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
    pub(super) fn server_config(&self, id: u64, now: Instant) -> (Option<Arc<ServerConfig>>, Option<Arc<StallState>>) {
        let (Some(server), Some(factory)) = (&self.server, &self.server_factory) else {
            return (self.server.clone(), None);
        };
        let qlog = qlog_for(&self.config, &format!("server-{id}.sqlog"), now).unwrap_or_else(|e| {
            tracing::warn!("transfer {id} has no qlog trace: {e}");
            None
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
    pub(super) fn stalls_probed(
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
        let mut out = self.out.pop_front()?;
        if !self.config.ecn {
            out.ecn = None;
        }
        Some(out)
    }

    /// How many datagrams this node has taken in with each ECN codepoint
    /// (RFC 3168 §5), all connections together: with [`NodeConfig::ecn`]
    /// on and a driver that reads the IP header's ECN field, a peer whose
    /// ECN validation succeeded (RFC 9000 §13.4.2) keeps arriving as
    /// ECT(0), and `ce` counts the marks of queues on the path.
    pub fn ecn_received(&self) -> EcnCounts {
        self.ecn_received
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outgoing(len: usize, segment_size: Option<usize>) -> Outgoing {
        Outgoing {
            destination: "127.0.0.1:4433".parse().unwrap(),
            payload: (0..len).map(|i| i as u8).collect::<Vec<u8>>().into(),
            segment_size,
            ecn: None,
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
