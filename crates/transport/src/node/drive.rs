//! The drive loop: timers, quinn-proto's events and transmits for each connection.

use std::time::Instant;

use quinn_proto::ConnectionError;
use quinn_proto::ConnectionHandle;
use quinn_proto::Dir;
use quinn_proto::Event;
use quinn_proto::StreamEvent;
use quinn_proto::TransportErrorCode;
use quinn_proto::VarInt;

use super::CLOSE_PROTOCOL_ERROR;
use super::CLOSE_TIMED_OUT;
use super::Conn;
use super::Node;
use super::Refusal;
use super::Role;
use super::endpoint::Outgoing;
use super::pacer::PacingRate;
use super::protocol::cpu_since;
use super::receiver::ReceiverSide;
use super::sender::CHUNK;
use super::sender::SendPhase;
use crate::failure::TransferError;
use crate::pattern::splitmix64;

/// Most bytes of one GSO batch: a UDP datagram's payload limit (65 535
/// bytes less the 8-byte UDP and 20-byte IPv4 headers), which Linux applies
/// to the whole batch of a `sendmsg` with `UDP_SEGMENT`.
pub(super) const MAX_GSO_BYTES: usize = 65_535 - 8 - 20;

impl Node {
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

    /// When the node next needs [`handle_timeout`](Self::handle_timeout).
    pub fn poll_timeout(&mut self) -> Option<Instant> {
        let stall_probe = self.config.stall_probe;
        // A plain loop: asked after every event, the chain of iterators it
        // was cost more than the comparisons.
        let mut next: Option<Instant> = None;
        let mut take = |t: Option<Instant>| {
            if let Some(t) = t
                && next.is_none_or(|n| t < n)
            {
                next = Some(t);
            }
        };
        for c in self.conns.values_mut() {
            let [a, b] = Self::app_wakeups(c);
            take(c.conn.poll_timeout());
            take(a);
            take(b);
            take(c.silence_deadline());
            take(c.stall_probe_due(stall_probe));
            take(c.paced_until);
        }
        next
    }

    /// Time has reached a wake-up reported by [`poll_timeout`](Self::poll_timeout).
    pub fn handle_timeout(&mut self, now: Instant) {
        let mut due = std::mem::take(&mut self.due);
        due.clear();
        for (&h, c) in self.conns.iter_mut() {
            let [a, b] = Self::app_wakeups(c);
            let stall = c.stall_probe_due(self.config.stall_probe);
            if [c.conn.poll_timeout(), a, b, c.silence_deadline(), stall, c.paced_until]
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
                    let idle_timeout = Some(c.silence_limit.unwrap_or_default());
                    let why = if c.conn.stats().udp_rx.datagrams == 0 {
                        TransferError::NoAnswer {
                            peer: c.conn.remote_address(),
                            idle_timeout,
                        }
                    } else {
                        TransferError::TimedOut { idle_timeout }
                    };
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
    pub(super) fn stall_probe(c: &mut Conn, now: Instant, spare: &mut Vec<Vec<u8>>) -> Option<Outgoing> {
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
            payload: buf.into(),
            segment_size: t.segment_size,
            ecn: t.ecn,
        })
    }

    /// The application's own wake-ups: a sender's next interval boundary,
    /// deadline or rate-limiter slot.
    pub(super) fn app_wakeups(c: &Conn) -> [Option<Instant>; 2] {
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
                let paced = s
                    .limiter
                    .as_ref()
                    .filter(|_| s.pending.is_empty())
                    // Next moment the rate limit lets one more quantum go.
                    .and_then(|l| l.ready_at(l.quantum(CHUNK as u64)));
                let app = [s.deadline(), paced].into_iter().flatten().min();
                [next_sample, app]
            }
            Role::Awaiting { .. } => [c.request_deadline, None],
            _ => [None, None],
        }
    }

    /// Process everything pending on one connection at `now`.
    pub(super) fn drive(&mut self, h: ConnectionHandle, now: Instant) {
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
                Self::on_event(c, ev, now, self.sim.seed.is_some());
            }
            Self::app_io(c, now, &self.config, &self.sim, self.pool.as_ref(), &mut self.events);
            let mut any = false;
            let mut yielded = false;
            c.paced_until = None;
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
                let mut segments = self.max_segments.min(MAX_GSO_BYTES / mtu).max(1);
                // The controller's own pacing rate, if it has one (read
                // afresh: every send and ACK may change it): a datagram
                // goes only with a full datagram's tokens in the bucket.
                let pacing = c.probe.pacing().map(|p| PacingRate {
                    rate: p.rate_bytes_per_sec,
                    quantum: p.send_quantum,
                });
                if let Some(p) = pacing {
                    let tokens = c.pacer.available(now, p, mtu as u64);
                    if tokens < mtu as u64 {
                        c.paced_until = c.pacer.ready_at(mtu as u64, p.rate);
                        break;
                    }
                    segments = segments.min(usize::try_from(tokens / mtu as u64).unwrap_or(usize::MAX));
                }
                let mut buf = self
                    .spare
                    .pop()
                    .or_else(|| self.pool.as_ref()?.take())
                    .unwrap_or_default();
                buf.clear();
                buf.reserve(mtu * segments);
                match c.conn.poll_transmit(now, segments, &mut buf) {
                    Some(t) => {
                        buf.truncate(t.size);
                        if pacing.is_some() {
                            c.pacer.spend(t.size as u64);
                        }
                        sent += t.segment_size.map_or(1, |s| t.size.div_ceil(s));
                        self.out.push_back(Outgoing {
                            destination: t.destination,
                            payload: buf.into(),
                            segment_size: t.segment_size,
                            ecn: t.ecn,
                        });
                        any = true;
                    }
                    None => {
                        // Nothing to send: keep the buffer for the next datagram
                        // (a drive that sends nothing is common, and this saved
                        // an allocation and a free each time).
                        self.spare.push(buf);
                        break;
                    }
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

    /// `simulated`: the node runs in the simulator, where errors name no
    /// live command-line flag.
    pub(super) fn on_event(c: &mut Conn, ev: Event, now: Instant, simulated: bool) {
        match ev {
            Event::Connected => {
                if let Some(why) = c.refusal.take() {
                    c.fail(now, CLOSE_PROTOCOL_ERROR, why.into());
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
                    let why = match reason {
                        ConnectionError::ApplicationClosed(close) => {
                            let reason = String::from_utf8_lossy(&close.reason).into_owned();
                            let refusal = (close.error_code == VarInt::from_u32(CLOSE_PROTOCOL_ERROR))
                                .then(|| Refusal::from_reason(&reason))
                                .flatten();
                            match refusal {
                                Some(r) => TransferError::Refused(r),
                                None => TransferError::ClosedByPeer {
                                    code: close.error_code.into_inner(),
                                    reason,
                                },
                            }
                        }
                        ConnectionError::TimedOut if c.conn.stats().udp_rx.datagrams == 0 => TransferError::NoAnswer {
                            peer: c.conn.remote_address(),
                            idle_timeout: None,
                        },
                        ConnectionError::TimedOut => TransferError::TimedOut { idle_timeout: None },
                        // What a server of ours refuses this way (see
                        // `handle_datagram`); other limits come with a reason.
                        ConnectionError::ConnectionClosed(close)
                            if close.error_code == TransportErrorCode::CONNECTION_REFUSED =>
                        {
                            TransferError::ServerBusy { live: !simulated }
                        }
                        other => TransferError::ConnectionLost(other),
                    };
                    c.error = Some(why);
                }
            }
            _ => {}
        }
    }
}
