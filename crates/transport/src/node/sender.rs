//! The sending end of a transfer.

use std::collections::BTreeMap;
use std::collections::VecDeque;
use std::time::Instant;

use bytes::Bytes;
use quinn_proto::Connection;
use quinn_proto::Dir;
use quinn_proto::StreamId;
use quinn_proto::VarInt;
use tput_cc::ControllerProbe;
use tput_cc::units::Rate;

use super::CLOSE_PROTOCOL_ERROR;
use super::Conn;
use super::Node;
use super::NodeEvent;
use super::Role;
use super::buffers::ChunkPool;
use super::buffers::Outbox;
use super::buffers::SendBuf;
use super::buffers::read_into;
use super::protocol::cpu_since;
use super::protocol::frame_name;
use super::ratelimit::RateLimiter;
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
use crate::stats::ReceiverReport;
use crate::stats::SenderReport;

pub(super) const CHUNK: usize = 64 * 1024;

/// Smallest chunk of payload written at once, bytes.
pub(super) const MIN_CHUNK: u64 = 4096;

/// Congestion windows of payload written ahead ([`write_ahead`]).
pub(super) const WRITE_AHEAD_WINDOWS: u64 = 3;

/// Bytes of payload written ahead beyond the windows ([`write_ahead`]).
pub(super) const WRITE_AHEAD_BYTES: u64 = 16 * 1024;

/// Hand as much of `pending` to `stream` as it takes, without copying:
/// quinn-proto keeps the `Bytes` (or the front part of it) in its send
/// buffer and `pending` is left holding what did not fit. Returns the bytes
/// written.
pub(super) fn write_pending(
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
/// cut-offs, many flows on a short queue, the guarantee controller's jumps).
///
/// Two windows are not enough: with two windows plus 16 KiB, the window-jump
/// case of that test fails (its link counters differ from those of a sender
/// writing up to the credit), the packets of
/// `scenarios/guarantee-n30.toml` change (every flow's bytes) and so do one
/// flow's file times in `scenarios/seed003-files.toml`; two windows plus
/// 64 KiB kept the first identical but not the second, and write more than
/// three windows plus 16 KiB below a 48 KiB window. Two windows would have
/// cut the `sim_memory` bench's peak at 1 000 QUIC flows from 0.179 to 0.158
/// MiB per flow; three stay.
///
/// Without the limit a sender wrote up to the peer's flow-control credit
/// (1.25 MB by default, or whatever the receiver grants): ~1.4 MB of pattern
/// bytes per simulated flow, and STREAM_DATA_BLOCKED / DATA_BLOCKED frames
/// (RFC 9000 §19.13, §19.12) on paths the credit never limited.
pub(super) fn write_ahead(conn: &Connection) -> u64 {
    let cwnd = conn.congestion_state().window();
    cwnd.saturating_mul(WRITE_AHEAD_WINDOWS)
        .saturating_add(WRITE_AHEAD_BYTES)
}

/// The size of the next chunk under the rate limit (at most `n`), taken
/// from the limiter; `None` if it allows nothing yet.
fn limited(l: &mut RateLimiter, now: Instant, n: u64) -> Option<u64> {
    let n = n.min(l.allowance(now));
    if n == 0 {
        return None;
    }
    l.spend(n);
    Some(n)
}

/// Where the sending node stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SendPhase {
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
pub(super) enum SenderSide {
    /// Client of an upload: closes the connection once the receiver's report is in.
    Client,
    /// Server of a download: mirrors its interval records and its own report
    /// to the client on a unidirectional stream (protocol step 4).
    Server { uni: StreamId, out: Outbox },
}

/// The sending end of a transfer.
#[derive(Debug)]
pub(super) struct Sender {
    pub(super) side: SenderSide,
    pub(super) request: Request,
    pub(super) stream: StreamId,
    /// Spec of the controller that sends.
    pub(super) cc: String,
    pub(super) pattern: Pattern,
    pub(super) start: Instant,
    /// The application rate limit, if the request set one.
    pub(super) limiter: Option<RateLimiter>,
    pub(super) sent: u64,
    pub(super) pending: Bytes,
    /// Size of the next chunk of payload to write, bytes.
    pub(super) chunk: u64,
    /// Where chunks are cut from.
    pub(super) pool: ChunkPool,
    pub(super) phase: SendPhase,
    // interval records
    pub(super) next_sample: Option<Instant>,
    pub(super) sample_start: Instant,
    pub(super) sample_sent: u64,
    pub(super) sample_lost: u64,
    pub(super) sample_events: u64,
    /// Records made so far, in order; the first `emitted` are complete and reported.
    pub(super) records: Vec<IntervalStats>,
    pub(super) emitted: usize,
    /// Whether the last record is made (sending is over).
    pub(super) sampled_all: bool,
    /// The receiver's count per interval, as its frames arrive.
    pub(super) delivered: BTreeMap<u64, u64>,
    /// Frames from the receiver, not yet complete.
    pub(super) inbuf: Vec<u8>,
    pub(super) receiver: Option<ReceiverReport>,
    pub(super) cpu_start: Option<f64>,
    /// Buffer streams written or unacknowledged, oldest first (application-buffer model).
    pub(super) bufs: VecDeque<SendBuf>,
    /// Payload offset where the next buffer starts.
    pub(super) next_buf: u64,
}

impl Sender {
    pub(super) fn new(
        side: SenderSide,
        request: Request,
        stream: StreamId,
        cc: String,
        c: &mut Connection,
        now: Instant,
    ) -> Self {
        let stats = c.stats();
        // Saturating: the rate comes from the network (a download's request).
        let limiter = request
            .rate_limit
            .map(Rate::bits_per_sec)
            .filter(|&r| r > 0)
            .map(|r| RateLimiter::new(r, now));
        Self {
            limiter,
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

    pub(super) fn deadline(&self) -> Option<Instant> {
        self.request.duration.and_then(|d| self.start.checked_add(d))
    }
}

impl Node {
    pub(super) fn sender_io(
        c: &mut Conn,
        now: Instant,
        to_credit: bool,
        events: &mut VecDeque<NodeEvent>,
    ) -> Result<(), (u32, TransferError)> {
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
        let protocol = |why: TransferError| (CLOSE_PROTOCOL_ERROR, why);
        let window = if to_credit { u64::MAX } else { write_ahead(conn) };
        conn.set_send_window(window);
        // Small windows take small chunks: a chunk's memory lives until its
        // last byte is acknowledged. An eighth of the write-ahead (a quarter
        // before) cut a 1000-flow run's peak by ~10 KB per flow; quinn-proto
        // builds the same packets whatever the chunks' sizes.
        s.chunk = (CHUNK as u64).min(window / 8).max(MIN_CHUNK);
        Self::send_payload(s, conn, now).map_err(protocol)?;
        // The receiver's frames (protocol step 3).
        let ended = read_into(conn, s.stream, &mut s.inbuf).map_err(protocol)?;
        while let Some(frame) = Frame::take(&mut s.inbuf).map_err(|e| protocol(e.into()))? {
            match frame {
                Frame::Delivered { index, bytes } => {
                    let interval = s.request.interval.as_nanos();
                    if interval == 0 {
                        return Err(protocol(Violation::CountWithoutIntervals.into()));
                    }
                    // The receiver's intervals may start a little before the sender's.
                    let begun = now.saturating_duration_since(s.start).as_nanos() / interval + 16;
                    if u128::from(index) > begun {
                        return Err(protocol(Violation::CountTooEarly(index).into()));
                    }
                    s.delivered.insert(index, bytes);
                }
                Frame::Report(report) => {
                    if s.phase == SendPhase::Sending || s.receiver.is_some() {
                        return Err(protocol(Violation::EarlyReport.into()));
                    }
                    // A transfer for a duration ends with a reset that drops what
                    // was written but not yet sent (protocol step 2): fewer may arrive.
                    let consistent = if s.request.duration.is_some() {
                        report.bytes <= s.sent
                    } else {
                        report.bytes == s.sent
                    };
                    if !consistent {
                        let why = Violation::ReportMismatch {
                            verified: report.bytes,
                            sent: s.sent,
                        }
                        .into();
                        s.receiver = Some(report);
                        return Err(protocol(why));
                    }
                    s.receiver = Some(report);
                    s.phase = SendPhase::AwaitReport;
                }
                other => {
                    return Err(protocol(
                        Violation::UnexpectedFrame {
                            frame: frame_name(&other),
                            from: End::Receiver,
                        }
                        .into(),
                    ));
                }
            }
        }
        if ended && s.receiver.is_none() {
            return Err(protocol(Violation::NoReport(End::Receiver).into()));
        }
        Self::sample(s, conn, probe, now);
        Self::emit(s, *id, now, events);
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
    pub(super) fn send_payload(s: &mut Sender, conn: &mut Connection, now: Instant) -> Result<(), TransferError> {
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
                if let Some(l) = &mut s.limiter {
                    n = match limited(l, now, n) {
                        Some(n) => n,
                        None => return Ok(()),
                    };
                }
                s.pending = s.pool.cut(&s.pattern, s.sent, n as usize);
            }
            match write_pending(conn.send_stream(id), &mut s.pending) {
                Ok(0) | Err(quinn_proto::WriteError::Blocked) => return Ok(()),
                Ok(n) => s.sent += n as u64,
                Err(error) => {
                    return Err(TransferError::StreamStopped {
                        stream: TransferStream::Payload,
                        error,
                    });
                }
            }
        }
    }

    /// The application-buffer model (protocol step 2): keep up to
    /// `b.count` buffer streams unacknowledged, write the oldest first.
    pub(super) fn send_buffers(
        s: &mut Sender,
        b: AppBuffers,
        conn: &mut Connection,
        now: Instant,
    ) -> Result<(), TransferError> {
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
            let Some(buf) = s.bufs.iter_mut().find(|x| x.written < x.len) else {
                // Every open buffer is written: wait for acknowledgements.
                return Ok(());
            };
            if s.pending.is_empty() {
                let mut n = s.chunk.min(buf.len - buf.written);
                if let Some(l) = &mut s.limiter {
                    n = match limited(l, now, n) {
                        Some(n) => n,
                        None => return Ok(()),
                    };
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
                Err(e) => {
                    return Err(TransferError::StreamStopped {
                        stream: TransferStream::Buffer(buf.id),
                        error: e,
                    });
                }
            }
        }
    }

    /// Make every interval record due at `now`. While sending, records end on
    /// interval boundaries; once sending is over, a last partial record ends
    /// at `now` and sampling stops.
    pub(super) fn sample(s: &mut Sender, conn: &Connection, probe: &ControllerProbe, now: Instant) {
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
    /// takes whatever the report counts beyond the earlier ones (what was
    /// still queued when sending stopped) and so ends when the report
    /// arrives (`now`), not when sending stopped: its rate is over the time
    /// those bytes took.
    pub(super) fn emit(s: &mut Sender, id: u64, now: Instant, events: &mut VecDeque<NodeEvent>) {
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
            if last {
                let end = now.saturating_duration_since(s.start).as_secs_f64();
                s.records[i].end_secs = s.records[i].end_secs.max(end);
            }
            s.records[i].deliver(bytes);
            let rec = s.records[i].clone();
            if let SenderSide::Server { out, .. } = &mut s.side {
                out.push(&Frame::Interval(rec.clone()));
            }
            events.push_back(NodeEvent::Interval { id, stats: rec });
            s.emitted += 1;
        }
    }
}
