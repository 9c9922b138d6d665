//! The receiving end of a transfer.

use std::collections::VecDeque;
use std::time::Instant;

use bytes::Bytes;
use quinn_proto::Connection;
use quinn_proto::Dir;
use quinn_proto::StreamId;
use quinn_proto::VarInt;

use super::BufferPool;
use super::CLOSE_CORRUPT;
use super::CLOSE_PROTOCOL_ERROR;
use super::Conn;
use super::Node;
use super::NodeEvent;
use super::Role;
use super::buffers::Outbox;
use super::buffers::read_into;
use super::protocol::cpu_since;
use super::protocol::frame_name;
use crate::failure::End;
use crate::failure::TransferError;
use crate::failure::TransferStream;
use crate::failure::Violation;
use crate::pattern::Pattern;
use crate::proto::AppBuffers;
use crate::proto::Frame;
use crate::proto::RESET_TIME_UP;
use crate::proto::Request;
use crate::stats::IntervalStats;
use crate::stats::ReceiveMeter;
use crate::stats::ReceiverReport;
use crate::stats::SenderReport;

/// Where the receiving node stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RecvPhase {
    /// Reading payload.
    Receiving,
    /// Payload over and the report queued; a client still waits for the server's stream.
    Reported,
    /// Everything exchanged.
    Done,
}

/// What only a receiving client does.
#[derive(Debug)]
pub(super) enum ReceiverSide {
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
pub(super) struct Receiver {
    pub(super) side: ReceiverSide,
    pub(super) request: Request,
    pub(super) stream: StreamId,
    pub(super) pattern: Pattern,
    pub(super) meter: ReceiveMeter,
    /// The next interval whose count is due, and when.
    pub(super) next_count: Option<(u64, Instant)>,
    /// Frames to the sender, on this end's half of the transfer stream.
    pub(super) out: Outbox,
    pub(super) phase: RecvPhase,
    pub(super) report: Option<ReceiverReport>,
    pub(super) cpu_start: Option<f64>,
    /// Buffer streams being read: (stream, payload offset of its next byte,
    /// bytes it may still carry) (application-buffer model).
    pub(super) bufs: Vec<(StreamId, u64, u64)>,
}

impl Receiver {
    pub(super) fn new(side: ReceiverSide, request: Request, stream: StreamId, now: Instant) -> Self {
        let meter = ReceiveMeter::new(now, request.interval, request.eval_slot, request.target);
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

impl Node {
    pub(super) fn receiver_io(
        c: &mut Conn,
        now: Instant,
        pool: Option<&BufferPool>,
        events: &mut VecDeque<NodeEvent>,
    ) -> Result<(), (u32, TransferError)> {
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
        let protocol = |why: TransferError| (CLOSE_PROTOCOL_ERROR, why);
        if r.phase == RecvPhase::Receiving {
            let before = r.meter.bytes;
            let (finished, time_up) = Self::receive_payload(r, conn, now, pool)?;
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
                    return Err(protocol(
                        Violation::ShortPayload {
                            got: r.meter.bytes,
                            expected: b,
                        }
                        .into(),
                    ));
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
            while let Some(frame) = Frame::take(inbuf).map_err(|e| protocol(e.into()))? {
                match frame {
                    Frame::Interval(rec) if sender.is_none() => {
                        events.push_back(NodeEvent::Interval {
                            id: *id,
                            stats: rec.clone(),
                        });
                        records.push(rec);
                    }
                    Frame::Sender(rep) if sender.is_none() => *sender = Some(rep),
                    other => {
                        return Err(protocol(
                            Violation::UnexpectedFrame {
                                frame: frame_name(&other),
                                from: End::Sender,
                            }
                            .into(),
                        ));
                    }
                }
            }
            if ended {
                if sender.is_none() {
                    return Err(protocol(Violation::NoReport(End::Sender).into()));
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
    pub(super) fn receive_payload(
        r: &mut Receiver,
        conn: &mut Connection,
        now: Instant,
        pool: Option<&BufferPool>,
    ) -> Result<(bool, bool), (u32, TransferError)> {
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
                        failure = Some((CLOSE_PROTOCOL_ERROR, Violation::PayloadOnRequestStream.into()));
                        break;
                    }
                    Ok(Some(chunk)) => {
                        if let Err(at) = r.pattern.verify(r.meter.bytes, &chunk.bytes) {
                            failure = Some((CLOSE_CORRUPT, TransferError::Corrupt { offset: at }));
                            break;
                        }
                        r.meter.add(now, chunk.bytes.len() as u64);
                        if let Some(pool) = pool {
                            pool.recycle(chunk.bytes);
                        }
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
                        failure = Some((
                            CLOSE_PROTOCOL_ERROR,
                            TransferError::StreamReset {
                                stream: TransferStream::Payload,
                                error: e,
                            },
                        ));
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
    pub(super) fn receive_buffers(
        r: &mut Receiver,
        b: AppBuffers,
        conn: &mut Connection,
        now: Instant,
    ) -> Result<(), (u32, TransferError)> {
        let protocol = |why: TransferError| (CLOSE_PROTOCOL_ERROR, why);
        while let Some(id) = conn.streams().accept(Dir::Uni) {
            let start = id
                .index()
                .checked_mul(b.size)
                .ok_or_else(|| protocol(Violation::BufferOffset(id).into()))?;
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
                                Violation::BufferTooLong { id: *id, size: b.size }.into(),
                            ));
                            break;
                        }
                        if let Err(off) = r.pattern.verify(*at, &chunk.bytes) {
                            failure = Some((CLOSE_CORRUPT, TransferError::Corrupt { offset: off }));
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
                            TransferError::StreamReset {
                                stream: TransferStream::Buffer(*id),
                                error: e,
                            },
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
}
