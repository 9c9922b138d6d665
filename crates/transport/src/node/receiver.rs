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
use super::ranges::RangeSet;
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
    /// Offset on `stream` of the payload's first byte: after the request on
    /// an upload's stream, 0 on the server's half of a download's.
    pub(super) payload_start: u64,
    /// Payload offsets counted so far (see [`Node::receive_payload`]).
    pub(super) received: RangeSet,
    /// Whether `stream` is read out of order yet (see [`Node::receive_payload`]).
    pub(super) unordered: bool,
    pub(super) pattern: Pattern,
    pub(super) meter: ReceiveMeter,
    /// The next interval whose count is due, and when.
    pub(super) next_count: Option<(u64, Instant)>,
    /// Frames to the sender, on this end's half of the transfer stream.
    pub(super) out: Outbox,
    pub(super) phase: RecvPhase,
    pub(super) report: Option<ReceiverReport>,
    pub(super) cpu_start: Option<f64>,
    /// Buffer streams being read: (stream, payload offset of its first
    /// byte) (application-buffer model).
    pub(super) bufs: Vec<(StreamId, u64)>,
}

impl Receiver {
    /// The receiver of `request`'s payload, which starts at `payload_start`
    /// on `stream` (everything before it is read already, in order).
    pub(super) fn new(
        side: ReceiverSide,
        request: Request,
        stream: StreamId,
        payload_start: u64,
        now: Instant,
    ) -> Self {
        let meter = ReceiveMeter::new(now, request.interval, request.eval_slot, request.target);
        Self {
            side,
            pattern: Pattern::new(request.key),
            next_count: (!request.interval.is_zero()).then(|| (0, now + request.interval)),
            request,
            stream,
            payload_start,
            received: RangeSet::default(),
            unordered: false,
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
    ///
    /// Each payload byte is counted once, in the interval in which it first
    /// arrives, whether or not an earlier byte is still missing: the stream
    /// is read out of order (RFC 9000 §2.2 lets a receiver take stream data
    /// as it arrives), every chunk is verified against the pattern at its
    /// own offset, and [`RangeSet`] keeps what is counted, so a
    /// retransmission that fills a hole counts its own bytes, not the bytes
    /// held behind it, and no interval shows more than the path delivered.
    ///
    /// quinn-proto 0.11 hands over each byte exactly once only if a stream
    /// is read out of order with nothing below its read offset still
    /// buffered: when a stream turns unordered its duplicate set is seeded
    /// with the bytes read so far and the chunks buffered, and a buffered
    /// chunk that starts below the read offset (a stale duplicate an
    /// ordered read drops only when it reaches it) is handed over again,
    /// counted twice in its own read count, and the stream's end is never
    /// seen. So an upload's stream, whose request was read in order, first
    /// goes on in order until the read blocks (then every buffered chunk
    /// lies above the read offset) and only then turns unordered; a stream
    /// with nothing read yet turns unordered at once.
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
        if !r.unordered && r.payload_start == 0 {
            r.unordered = true;
        }
        let mut end = None;
        while end.is_none() {
            let ordered = !r.unordered;
            end = Self::read_payload(r, conn, now, pool, ordered)?;
            if !ordered {
                break;
            }
            // The ordered read blocked or ended: from here on, out of order.
            r.unordered = true;
        }
        let Some(time_up) = end else {
            return Ok((false, false));
        };
        // A stream that ended by its FIN carried every byte once, from the
        // first: one range from 0 (and the request's count, if it set one).
        let (got, held) = (r.received.prefix(), r.received.len());
        let expected = r.request.bytes.unwrap_or(got);
        if !time_up && (got != held || got != expected) {
            return Err((CLOSE_PROTOCOL_ERROR, Violation::ShortPayload { got, expected }.into()));
        }
        Ok((true, time_up))
    }

    /// One pass over the payload stream, in order or not: `Some(time_up)`
    /// once it has ended (by its FIN, or by the time-up reset).
    fn read_payload(
        r: &mut Receiver,
        conn: &mut Connection,
        now: Instant,
        pool: Option<&BufferPool>,
        ordered: bool,
    ) -> Result<Option<bool>, (u32, TransferError)> {
        let mut end = None;
        let mut failure = None;
        if let Ok(mut chunks) = conn.recv_stream(r.stream).read(ordered) {
            loop {
                match chunks.next(usize::MAX) {
                    Ok(Some(_)) if r.request.buffers.is_some() => {
                        failure = Some((CLOSE_PROTOCOL_ERROR, Violation::PayloadOnRequestStream.into()));
                        break;
                    }
                    Ok(Some(chunk)) => {
                        // The request before `payload_start` was read already.
                        let len = chunk.bytes.len() as u64;
                        if chunk.offset + len <= r.payload_start {
                            continue;
                        }
                        let skip = r.payload_start.saturating_sub(chunk.offset);
                        let offset = chunk.offset + skip - r.payload_start;
                        if let Err(e) = Self::take(r, now, offset, &chunk.bytes[skip as usize..]) {
                            failure = Some(e);
                            break;
                        }
                        if let Some(pool) = pool {
                            pool.recycle(chunk.bytes);
                        }
                    }
                    Ok(None) => {
                        end = Some(false);
                        break;
                    }
                    Err(quinn_proto::ReadError::Blocked) => break,
                    Err(quinn_proto::ReadError::Reset(code))
                        if code == VarInt::from_u32(RESET_TIME_UP) && r.request.duration.is_some() =>
                    {
                        // A transfer for a duration ends this way (protocol step 2).
                        end = Some(true);
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
            None => Ok(end),
        }
    }

    /// Verify payload bytes at payload offset `offset` and count those not
    /// counted before, as arrived at `now`.
    fn take(r: &mut Receiver, now: Instant, offset: u64, bytes: &[u8]) -> Result<(), (u32, TransferError)> {
        r.pattern
            .verify(offset, bytes)
            .map_err(|at| (CLOSE_CORRUPT, TransferError::Corrupt { offset: at }))?;
        let meter = &mut r.meter;
        r.received.insert(offset..offset + bytes.len() as u64, |new| {
            meter.add(now, new.end - new.start)
        });
        Ok(())
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
            r.bufs.push((id, start));
        }
        let mut failure = None;
        let mut bufs = std::mem::take(&mut r.bufs);
        bufs.retain_mut(|(id, start)| {
            if failure.is_some() {
                return true;
            }
            let mut stream = conn.recv_stream(*id);
            // Out of order from the first byte, as the payload stream (see
            // `receive_payload`).
            let Ok(mut chunks) = stream.read(false) else {
                return false;
            };
            let mut keep = true;
            loop {
                match chunks.next(usize::MAX) {
                    Ok(Some(chunk)) => {
                        let n = chunk.bytes.len() as u64;
                        if chunk.offset.saturating_add(n) > b.size {
                            failure = Some((
                                CLOSE_PROTOCOL_ERROR,
                                Violation::BufferTooLong { id: *id, size: b.size }.into(),
                            ));
                            break;
                        }
                        if let Err(e) = Self::take(r, now, *start + chunk.offset, &chunk.bytes) {
                            failure = Some(e);
                            break;
                        }
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
        r.bufs = bufs;
        match failure {
            Some(f) => Err(f),
            None => Ok(()),
        }
    }
}
