//! A client and a server node joined in memory by an ideal link (fixed
//! one-way delay, no loss, no rate limit), pumped as a live loop pumps a
//! socket: for tests (the `test-support` feature).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use bytes::BytesMut;

use crate::{Error, Node, NodeEvent, Outgoing, ServerTrust, TransferOutcome, TransferSpec};

/// A client and a server node joined by an ideal link.
///
/// Each step is what [`udp::drive`](crate::udp::drive) does with a socket:
/// the client's datagrams go out after each call into it; a client stopped
/// by its transmit budget ([`Node::set_transmit_budget`]) is asked to send
/// on before time advances; datagrams for the client arrive as one receive
/// batch ([`Node::handle_datagrams`]), the server's one by one.
#[derive(Debug)]
pub struct Pair {
    /// The client node.
    pub client: Node,
    /// The server node.
    pub server: Node,
    /// The current time.
    pub now: Instant,
    /// One-way delay of the link.
    pub delay: Duration,
    /// The client's address.
    pub client_addr: SocketAddr,
    /// The server's address.
    pub server_addr: SocketAddr,
    /// How the client trusts the server.
    pub trust: ServerTrust,
    /// Times the client stopped at its transmit budget and was asked to send on.
    pub yields: usize,
    /// In flight: (arrival time, towards the server?, datagram).
    wire: Vec<(Instant, bool, BytesMut)>,
}

impl Pair {
    /// `client` and `server` joined by a 1 ms link; the client trusts the
    /// server as `trust` says and names it `localhost`.
    pub fn new(client: Node, server: Node, trust: ServerTrust) -> Self {
        Self {
            client,
            server,
            now: Instant::now(),
            delay: Duration::from_millis(1),
            client_addr: SocketAddr::from(([10, 0, 0, 1], 5000)),
            server_addr: SocketAddr::from(([10, 0, 0, 2], 4433)),
            trust,
            yields: 0,
            wire: Vec::new(),
        }
    }

    /// Start `spec` from the client; returns the transfer id.
    pub fn start(&mut self, spec: TransferSpec) -> Result<u64, Error> {
        self.client
            .start_transfer(self.now, self.server_addr, "localhost", &self.trust, spec)
    }

    /// Run until the client reports a finished transfer (its outcome), or
    /// for at most `steps` steps (`None`). `on_client_send` sees what the
    /// client hands over after each call into it (the [`Outgoing`]s of one
    /// call, never empty).
    pub fn run(&mut self, steps: usize, mut on_client_send: impl FnMut(&[Outgoing])) -> Option<TransferOutcome> {
        for _ in 0..steps {
            self.drain_client(&mut on_client_send);
            while let Some(o) = self.server.poll_transmit() {
                self.put(false, &o);
            }
            while let Some(ev) = self.client.poll_event() {
                if let NodeEvent::Finished(o) = ev {
                    return Some(*o);
                }
            }
            while self.server.poll_event().is_some() {}
            if self.client.has_more_to_send() {
                // What a live loop does: take in what has arrived, then send on.
                self.yields += 1;
                self.client.send_more(self.now);
                continue;
            }
            let next = [
                self.wire.iter().map(|w| w.0).min(),
                self.client.poll_timeout(),
                self.server.poll_timeout(),
            ]
            .into_iter()
            .flatten()
            .min()?;
            self.now = self.now.max(next);
            let now = self.now;
            let (due, rest): (Vec<_>, Vec<_>) = std::mem::take(&mut self.wire).into_iter().partition(|w| w.0 <= now);
            self.wire = rest;
            let mut to_client = Vec::new();
            for (_, to_server, d) in due {
                if to_server {
                    self.server.handle_datagram(now, self.client_addr, d);
                } else {
                    to_client.push((self.server_addr, d));
                }
            }
            // As the live loop does: a receive batch drives each connection once.
            self.client.handle_datagrams(now, to_client);
            self.drain_client(&mut on_client_send);
            self.client.handle_timeout(now);
            self.server.handle_timeout(now);
        }
        None
    }

    fn drain_client(&mut self, on_client_send: &mut impl FnMut(&[Outgoing])) {
        let mut sent = Vec::new();
        while let Some(o) = self.client.poll_transmit() {
            self.put(true, &o);
            sent.push(o);
        }
        if !sent.is_empty() {
            on_client_send(&sent);
        }
        for o in sent {
            self.client.recycle(o);
        }
    }

    fn put(&mut self, to_server: bool, o: &Outgoing) {
        let at = self.now + self.delay;
        for d in o.datagrams() {
            self.wire.push((at, to_server, BytesMut::from(&d[..])));
        }
    }
}
