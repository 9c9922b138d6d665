//! The application protocol: starting a transfer, the request, and the end of a transfer.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::PoisonError;
use std::time::Instant;

use quinn_proto::ClientConfig;
use quinn_proto::ConnectionId;
use quinn_proto::Dir;
use tput_cc::ControllerProbe;
use tput_cc::EvalSlot;
use tput_cc::NativeFactory;
use tput_cc::QuinnFactory;

use super::BufferPool;
use super::CLOSE_PROTOCOL_ERROR;
use super::Conn;
use super::Node;
use super::NodeEvent;
use super::Role;
use super::buffers::Outbox;
use super::config::NodeConfig;
use super::config::SenderController;
use super::config::SimOptions;
use super::config::TransferSpec;
use super::endpoint::qlog_for;
use super::limits::Refusal;
use super::receiver::Receiver;
use super::receiver::ReceiverSide;
use super::receiving_controller;
use super::sender::Sender;
use super::sender::SenderSide;
use crate::error::ConfigError;
use crate::error::Error;
use crate::failure::TransferError;
use crate::failure::TransferStream;
use crate::failure::Violation;
use crate::pattern::splitmix64;
use crate::proto::Direction;
use crate::proto::Frame;
use crate::proto::REQUEST_LEN;
use crate::proto::Request;
use crate::stats::SenderReport;
use crate::stats::TransferOutcome;
use crate::tls::ServerTrust;
use crate::tls::client_crypto;

pub(super) fn cpu_since(start: Option<f64>, now: Option<f64>) -> Option<f64> {
    Some((now? - start?).max(0.0))
}

pub(super) fn frame_name(f: &Frame) -> &'static str {
    match f {
        Frame::Delivered { .. } => "delivered-bytes frame",
        Frame::Report(_) => "receiver report",
        Frame::Interval(_) => "interval record",
        Frame::Sender(_) => "sender report",
    }
}

impl Node {
    /// Connect to `server` and run `spec` on a new connection; returns the transfer id.
    pub fn start_transfer(
        &mut self,
        now: Instant,
        server: SocketAddr,
        server_name: &str,
        trust: &ServerTrust,
        spec: TransferSpec,
    ) -> Result<u64, Error> {
        spec.validate()?;
        let id = self.next_id;
        let probe = ControllerProbe::new();
        let mut factory = match spec.direction {
            Direction::Upload => match &spec.controller {
                SenderController::Own { factory, .. } => (**factory).clone(),
                other => QuinnFactory::try_new(other.request_spec())?,
            },
            // The server sends and builds the requested controller.
            Direction::Download => QuinnFactory::try_new(receiving_controller())?,
        }
        .with_probe(probe.clone());
        if let Some(bw) = &spec.bandwidth {
            factory = factory.with_bandwidth(bw.clone());
        }
        if let (Some(group), Direction::Upload) = (&spec.aggregate, spec.direction) {
            factory = factory.with_aggregate(group.clone())?;
        }
        let qlog = qlog_for(&self.config, &format!("client-{id}.sqlog"), now)?;
        let mut crypto: Arc<dyn quinn_proto::crypto::ClientConfig> =
            Arc::new(client_crypto(trust, self.config.client_identity.as_ref())?);
        if self.sim.null_packet_protection {
            crypto = Arc::new(crate::null_keys::NullClientConfig(crypto));
        }
        let factory: Arc<dyn quinn_proto::congestion::ControllerFactory + Send + Sync> =
            match (&spec.controller, spec.direction) {
                (SenderController::Quinn(q), Direction::Upload) => {
                    Arc::new(NativeFactory::new(*q).with_probe(probe.clone()))
                }
                _ => Arc::new(factory),
            };
        let (factory, stall) = self.stalls_probed(factory, now);
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
            .map_err(|e| ConfigError::Connect {
                server,
                reason: e.to_string(),
            })?;
        self.next_id += 1;
        self.key_state = splitmix64(self.key_state);
        let c = Conn {
            conn,
            id,
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
            pacer: Default::default(),
            paced_until: None,
        };
        self.conns.insert(handle, Box::new(c));
        self.drive(handle, now);
        Ok(id)
    }

    /// Client, handshake done: open the stream, write the request (protocol step 1).
    pub(super) fn send_request(c: &mut Conn, spec: &TransferSpec, key: u64, now: Instant) -> Result<(), TransferError> {
        let stream = c.conn.streams().open(Dir::Bi).ok_or(Violation::NoStream(Dir::Bi))?;
        let eval_slot = match spec.eval_slot {
            EvalSlot::Time(d) => d,
            EvalSlot::Rtts(n) => (c.conn.rtt() * n).max(crate::proto::MIN_PERIOD),
        };
        let req = Request {
            direction: spec.direction,
            bytes: spec.bytes,
            duration: spec.duration,
            key,
            target: spec.target,
            eval_slot,
            interval: spec.interval,
            rate_limit: spec.rate_limit,
            cc: spec.request_cc().to_string(),
            buffers: spec.buffers,
        };
        let bytes = req.encode().map_err(TransferError::Config)?;
        // The stream is fresh and the request small: quinn takes all of it.
        match c.conn.send_stream(stream).write(&bytes) {
            Ok(n) if n == bytes.len() => {}
            Ok(n) => {
                return Err(Violation::RequestWindow {
                    taken: n,
                    len: bytes.len(),
                }
                .into());
            }
            Err(error) => {
                return Err(TransferError::StreamStopped {
                    stream: TransferStream::Request,
                    error,
                });
            }
        }
        let cpu_start = c.cpu_now();
        c.role = match spec.direction {
            Direction::Upload => {
                let mut s = Sender::new(SenderSide::Client, req, stream, spec.cc_name(), &mut c.conn, now);
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
                let mut r = Receiver::new(side, req, stream, 0, now);
                r.cpu_start = cpu_start;
                Role::Receiver(Box::new(r))
            }
        };
        Ok(())
    }

    pub(super) fn app_io(
        c: &mut Conn,
        now: Instant,
        config: &NodeConfig,
        sim: &SimOptions,
        pool: Option<&BufferPool>,
        events: &mut VecDeque<NodeEvent>,
    ) {
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
            let within = config.limits.request_timeout.unwrap_or_default();
            c.fail(now, CLOSE_PROTOCOL_ERROR, Refusal::NoRequest { within }.into());
            return;
        }
        let result = match c.role {
            Role::Sender(_) => Self::sender_io(c, now, sim.write_ahead_to_credit, events),
            Role::Receiver(_) => Self::receiver_io(c, now, pool, events),
            _ => Ok(()),
        };
        if let Err((code, why)) = result {
            c.fail(now, code, why);
        }
    }

    /// Server: read the request; once complete, take the role it asks for.
    pub(super) fn read_request(c: &mut Conn, now: Instant, config: &NodeConfig) -> Result<(), TransferError> {
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
                            bad = Some(e);
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
            return Err(why.into());
        }
        if inbuf.len() < want {
            return if ended {
                Err(Violation::RequestIncomplete.into())
            } else {
                Ok(())
            };
        }
        let mut req = Request::decode(inbuf)?;
        config.limits.admit(&mut req)?;
        let cpu_start = c.cpu_now();
        c.role = match req.direction {
            Direction::Upload => {
                let mut r = Receiver::new(ReceiverSide::Server, req, id, want as u64, now);
                r.cpu_start = cpu_start;
                Role::Receiver(Box::new(r))
            }
            Direction::Download => {
                let spec = req.controller()?;
                let switch = c.switch.as_ref().ok_or(Violation::NoControllerSwitch)?;
                // Only handshake packets and this request's ACK are in flight.
                switch.install(&spec, config.server_bandwidth.clone(), config.server_aggregate.as_ref());
                let uni = c.conn.streams().open(Dir::Uni).ok_or(Violation::NoStream(Dir::Uni))?;
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

    pub(super) fn finish(c: &mut Conn, now: Instant, events: &mut VecDeque<NodeEvent>) {
        if c.reported {
            return;
        }
        c.reported = true;
        let elapsed_secs = c
            .completed
            .unwrap_or(now)
            .saturating_duration_since(c.created)
            .as_secs_f64();
        let path_mtu = c.conn.current_mtu();
        let incomplete = || Some(TransferError::Incomplete);
        let outcome = match &mut c.role {
            // A connection that never carried a request (a probe or an aborted handshake).
            Role::Awaiting { .. } => return,
            Role::Connecting { spec, .. } => TransferOutcome {
                id: c.id,
                direction: spec.direction,
                local_sender: spec.direction == Direction::Upload,
                cc: spec.cc_name(),
                bytes: 0,
                elapsed_secs,
                intervals: Vec::new(),
                receiver: None,
                sender: None,
                cpu_secs: None,
                path_mtu,
                error: c.error.clone().or(Some(TransferError::NotStarted)),
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
                    path_mtu,
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
                    path_mtu,
                }
            }
        };
        events.push_back(NodeEvent::Finished(Box::new(outcome)));
    }
}
