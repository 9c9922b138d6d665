//! A packet-level TCP model for the simulator, in the style of ns-2's one-way
//! agents (`Agent/TCP` and `Agent/TCPSink`): no handshake, fixed-size
//! segments, byte sequence numbers, cumulative ACKs.
//!
//! [`TcpSender`] and [`TcpSink`] are [`tput_netsim::Host`]s. The sender's
//! window comes from any `tput-cc` controller: every segment newly covered by
//! a cumulative ACK is one [`CongestionController::on_ack`] (with an RTT
//! sample, Karn's rule applied), a fast retransmit is one
//! [`CongestionKind::Loss`] event and a retransmission timeout one
//! [`CongestionKind::PersistentCongestion`] event. The controller counts
//! payload bytes: it is built with the segment size as its `mss`, so its
//! window is in the same units as ns-2's `window_ * packetSize_`.
//!
//! Loss recovery ([`Recovery`]): Reno (RFC 5681 §3.2), NewReno (RFC 6582
//! §3.2), SACK (RFC 6675, with the sink's SACK blocks of RFC 2018) and
//! go-back-N. The retransmission timer follows RFC 6298. When fast recovery
//! ends the sender tells the controller
//! ([`CongestionController::on_recovery_end`]), so that the controller's
//! recovery period is TCP's ([`ControllerRecovery`]). Optional pacing
//! ([`TcpConfig::pacing`]) spreads segments at Linux's rate.
//!
//! # Wire format
//!
//! Each segment is one simulator datagram whose payload starts with a
//! 12-byte header (kind `1`, three zero bytes, the sequence number of the
//! first payload byte as a big-endian `u64`) followed by the payload. With the
//! link's default `overhead_bytes` of 28 a data packet is `segment + 40`
//! bytes on the wire, ns-2's TCP/IP header size. An ACK is 16 bytes (kind
//! `2`, the number of SACK blocks, a duplicate flag (1 when it answers a
//! segment already delivered, like RFC 2883's D-SACK), a zero byte, the cumulative ACK as a
//! `u64`, the receive window in bytes as a `u32`) plus 16 bytes per SACK
//! block (start and end as `u64`): 44 bytes on the wire without SACK blocks,
//! close to ns-2's 40-byte ACKs. Payload byte `i` of the stream is
//! `i mod 251`, which the sink checks.

use std::collections::{BTreeMap, VecDeque};
use std::sync::LazyLock;
use std::time::{Duration, Instant};

use bytes::{BufMut, Bytes, BytesMut};
use serde::{Deserialize, Serialize};
use tput_cc::{Ack, Congestion, CongestionController, CongestionKind, RttSample};
use tput_netsim::{Addr, Datagram, FlowId, Host, SimTime};
use tput_transport::{IntervalStats, SlotStats};

use crate::host::{CcSample, CcTrace};

/// Bytes of the data header inside the datagram (see the module docs).
pub const DATA_HEADER_BYTES: usize = 12;
/// Bytes of an ACK without SACK blocks inside the datagram.
pub const ACK_HEADER_BYTES: usize = 16;
/// Bytes per SACK block in an ACK.
pub const SACK_BLOCK_BYTES: usize = 16;
/// At most this many SACK blocks per ACK (RFC 2018 §3: three with timestamps).
pub const MAX_SACK_BLOCKS: usize = 3;
/// Largest segment the model sends (its payload must fit a controller's `u16` mss).
pub const MAX_SEGMENT: u32 = 65_000;

const KIND_DATA: u8 = 1;
const KIND_ACK: u8 = 2;
const PATTERN_PERIOD: u64 = 251;

/// `PATTERN[i] = i mod 251`, long enough for any segment at any offset.
static PATTERN: LazyLock<Vec<u8>> = LazyLock::new(|| {
    (0..PATTERN_PERIOD as usize + MAX_SEGMENT as usize)
        .map(|i| (i % 251) as u8)
        .collect()
});

/// The payload bytes of the stream at `[seq, seq + len)`.
fn pattern(seq: u64, len: usize) -> &'static [u8] {
    let start = (seq % PATTERN_PERIOD) as usize;
    &PATTERN[start..start + len]
}

fn encode_data(seq: u64, len: usize) -> Bytes {
    let mut b = BytesMut::with_capacity(DATA_HEADER_BYTES + len);
    b.put_u8(KIND_DATA);
    b.put_bytes(0, 3);
    b.put_u64(seq);
    b.put_slice(pattern(seq, len));
    b.freeze()
}

fn decode_data(p: &[u8]) -> Option<(u64, &[u8])> {
    if p.len() < DATA_HEADER_BYTES || p[0] != KIND_DATA {
        return None;
    }
    let seq = u64::from_be_bytes(p[4..12].try_into().ok()?);
    Some((seq, &p[DATA_HEADER_BYTES..]))
}

/// A decoded ACK.
#[derive(Debug, Clone, PartialEq, Eq)]
struct AckPacket {
    ack: u64,
    /// It answers a segment that lay wholly below the cumulative ACK (a
    /// duplicate), in the spirit of RFC 2883's D-SACK.
    dup: bool,
    rwnd: u64,
    sack: Vec<(u64, u64)>,
}

fn encode_ack(a: &AckPacket) -> Bytes {
    let mut b = BytesMut::with_capacity(ACK_HEADER_BYTES + SACK_BLOCK_BYTES * a.sack.len());
    b.put_u8(KIND_ACK);
    b.put_u8(a.sack.len() as u8);
    b.put_u8(u8::from(a.dup));
    b.put_u8(0);
    b.put_u64(a.ack);
    b.put_u32(a.rwnd.min(u64::from(u32::MAX)) as u32);
    for &(s, e) in &a.sack {
        b.put_u64(s);
        b.put_u64(e);
    }
    b.freeze()
}

fn decode_ack(p: &[u8]) -> Option<AckPacket> {
    if p.len() < ACK_HEADER_BYTES || p[0] != KIND_ACK {
        return None;
    }
    let n = p[1] as usize;
    if p.len() != ACK_HEADER_BYTES + n * SACK_BLOCK_BYTES {
        return None;
    }
    let u64_at = |i: usize| u64::from_be_bytes(p[i..i + 8].try_into().expect("8 bytes"));
    let ack = u64_at(4);
    let rwnd = u64::from(u32::from_be_bytes(p[12..16].try_into().ok()?));
    let sack = (0..n)
        .map(|i| {
            let o = ACK_HEADER_BYTES + i * SACK_BLOCK_BYTES;
            (u64_at(o), u64_at(o + 8))
        })
        .collect();
    Some(AckPacket {
        ack,
        dup: p[2] == 1,
        rwnd,
        sack,
    })
}

/// Loss recovery of the sender.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Recovery {
    /// RFC 5681 §3.2: fast retransmit and fast recovery, which ends with the
    /// first ACK of new data (ns-2's `Agent/TCP/Reno`).
    Reno,
    /// RFC 6582 §3.2: partial ACKs retransmit the next hole and keep fast
    /// recovery until everything sent before it is acknowledged (ns-2's
    /// `Agent/TCP/Newreno`).
    #[default]
    NewReno,
    /// RFC 6675: a scoreboard of the sink's SACK blocks, `pipe` instead of the
    /// window inflation, retransmission of every hole the scoreboard declares
    /// lost (ns-2's `Agent/TCP/Sack1`). Needs SACK blocks from the sink.
    Sack,
    /// Go-back-N: after a fast retransmit or a timeout, everything from the
    /// first unacknowledged segment is sent again.
    Gbn,
}

impl std::fmt::Display for Recovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Recovery::Reno => "reno",
            Recovery::NewReno => "newreno",
            Recovery::Sack => "sack",
            Recovery::Gbn => "gbn",
        })
    }
}

/// When the controller's recovery period ends (see
/// [`CongestionController::on_recovery_end`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ControllerRecovery {
    /// With TCP's fast recovery: the ACK that covers `recover` (RFC 6582
    /// §3.2 step 3; RFC 6675's `RecoveryPoint`; for Reno the first ACK of
    /// new data, RFC 5681 §3.2 step 6). TCP does not grow its window during
    /// fast recovery and grows it from the next ACK on, as ns-2 and Linux
    /// do. The controller hears a retransmitted segment's ACK with the time
    /// of its first transmission, so that the repair of a hole does not end
    /// the period early.
    #[default]
    Tcp,
    /// RFC 9002 §7.3.2's rule alone, QUIC's: the period ends when a segment
    /// sent after the reduction is acknowledged, a retransmission counting
    /// as sent when it was resent (as a QUIC packet would be): with several
    /// losses in a window, NewReno's second partial ACK ends it and the
    /// window grows during TCP's fast recovery; Reno's ends a round trip
    /// after TCP's. What the model did before; for comparisons.
    Rfc9002,
}

impl std::fmt::Display for ControllerRecovery {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ControllerRecovery::Tcp => "tcp",
            ControllerRecovery::Rfc9002 => "rfc9002",
        })
    }
}

/// Linux's pacing rate in slow start, percent of `cwnd / srtt`
/// (`net.ipv4.tcp_pacing_ss_ratio`).
pub const PACING_SS_PERCENT: u64 = 200;
/// Linux's pacing rate in congestion avoidance, percent of `cwnd / srtt`
/// (`net.ipv4.tcp_pacing_ca_ratio`).
pub const PACING_CA_PERCENT: u64 = 120;

/// Default segment payload, bytes (ns-2's `Agent/TCP packetSize_`).
pub const DEFAULT_SEGMENT: u32 = 1000;
/// Default minimum RTO (Linux's `TCP_RTO_MIN`; ns-2's `minrto_` is 0.2 s in many scripts).
pub const DEFAULT_MIN_RTO: Duration = Duration::from_millis(200);
/// Delayed-ACK timer when delayed ACKs are on without a duration (ns-2's `Agent/TCPSink/DelAck interval_`).
pub const DEFAULT_DELAYED_ACK: Duration = Duration::from_millis(100);
/// Default receive window, bytes: large enough not to limit ordinary runs.
pub const DEFAULT_RECEIVE_WINDOW: u64 = 16 << 20;

/// Parameters of a TCP sender and its sink.
#[derive(Debug, Clone, PartialEq)]
pub struct TcpConfig {
    /// Payload bytes per segment (ns-2's `packetSize_`), 1..=[`MAX_SEGMENT`].
    pub segment: u32,
    /// Loss recovery of the sender.
    pub recovery: Recovery,
    /// Duplicate ACKs that trigger a fast retransmit (RFC 5681 §3.2: 3).
    pub dupack_threshold: u32,
    /// Lower bound of the RTO (RFC 6298 §2.4 says 1 s; the default is 200 ms).
    pub min_rto: Duration,
    /// Upper bound of the RTO, backoff included (RFC 6298 §2.5: at least 60 s).
    pub max_rto: Duration,
    /// RTO before the first RTT sample (RFC 6298 §2.1: 1 s; ns-2's
    /// `rtxcur_init_`: 3 s, RFC 2988's value).
    pub initial_rto: Duration,
    /// Whether a fast retransmit restarts the retransmission timer. RFC 6298
    /// §5 restarts it only when new data is acknowledged (§5.3) or it fires
    /// (§5.6), so after a fast retransmit the pending timeout still counts
    /// from the last ACK of new data. ns-2 (`reset_rtx_timer` in its
    /// duplicate-ACK action) and Linux (the head of the retransmission queue
    /// re-arms it when resent, `tcp_xmit_retransmit_queue`) restart it, so
    /// the retransmission gets a whole RTO: the default. Off, a timeout can
    /// follow the fast retransmit sooner.
    pub restart_timer_on_fast_retransmit: bool,
    /// When the controller's recovery period ends.
    pub controller_recovery: ControllerRecovery,
    /// Pace segments (off in ns-2 and by default): at most one segment per
    /// `len / rate`, rate = `cwnd / SRTT` times [`PACING_SS_PERCENT`] while
    /// `cwnd < ssthresh / 2` and [`PACING_CA_PERCENT`] after, as Linux's
    /// `tcp_update_pacing_rate`; no pacing before the first RTT sample.
    /// Retransmissions are paced too.
    pub pacing: bool,
    /// Clock granularity `G` of RFC 6298 §2.
    pub granularity: Duration,
    /// Largest backoff factor of the RTO (RFC 6298 §5.5 doubles it per timeout).
    pub max_backoff: u32,
    /// Delayed ACKs (RFC 5681 §4.2): ACK every second in-order segment, or
    /// after this timer; `None` = an ACK per segment.
    pub delayed_ack: Option<Duration>,
    /// Whether the sink sends SACK blocks (RFC 2018).
    pub sack: bool,
    /// Receive window the sink advertises, bytes; the sender never has more
    /// than this beyond the cumulative ACK.
    pub receive_window: u64,
    /// Limited Transmit (RFC 3042): each of the first duplicate ACKs below
    /// the threshold lets one more segment out beyond the window (ns-2's
    /// `Agent/TCP singledup_`, on by default in ns-2 2.35). Reno, NewReno and
    /// go-back-N recovery; ignored with `sack`.
    pub limited_transmit: bool,
}

impl Default for TcpConfig {
    fn default() -> Self {
        Self {
            segment: DEFAULT_SEGMENT,
            recovery: Recovery::NewReno,
            dupack_threshold: 3,
            min_rto: DEFAULT_MIN_RTO,
            max_rto: Duration::from_secs(60),
            initial_rto: Duration::from_secs(1),
            restart_timer_on_fast_retransmit: true,
            controller_recovery: ControllerRecovery::Tcp,
            pacing: false,
            granularity: Duration::from_millis(1),
            max_backoff: 64,
            delayed_ack: None,
            sack: false,
            receive_window: DEFAULT_RECEIVE_WINDOW,
            limited_transmit: false,
        }
    }
}

impl TcpConfig {
    /// Check the values; the error names the bad field.
    pub fn validate(&self) -> Result<(), String> {
        if self.segment == 0 || self.segment > MAX_SEGMENT {
            return Err(format!("segment: {} bytes must be in 1..={MAX_SEGMENT}", self.segment));
        }
        if self.receive_window < u64::from(self.segment) || self.receive_window > u64::from(u32::MAX) {
            return Err(format!(
                "receive_window: {} bytes must be at least one segment ({}) and below 4 GiB",
                self.receive_window, self.segment
            ));
        }
        if self.min_rto.is_zero() || self.min_rto > self.max_rto {
            return Err("min_rto: must be positive and at most max_rto (60s)".into());
        }
        if self.initial_rto.is_zero() || self.initial_rto > self.max_rto {
            return Err("initial_rto: must be positive and at most max_rto (60s)".into());
        }
        if let Some(d) = self.delayed_ack
            && (d.is_zero() || d > Duration::from_millis(500))
        {
            return Err("delayed_ack: the timer must be in (0, 500ms] (RFC 1122 §4.2.3.2)".into());
        }
        if self.recovery == Recovery::Sack && !self.sack {
            return Err("sack: recovery = \"sack\" needs the sink's SACK blocks (sack = true)".into());
        }
        if self.dupack_threshold == 0 || self.max_backoff == 0 {
            return Err("dupack_threshold and max_backoff must be at least 1".into());
        }
        Ok(())
    }
}

/// How much a sender sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Amount {
    /// Exactly this many bytes.
    Bytes(u64),
    /// New segments until this time; what was sent by then is delivered.
    Until(SimTime),
}

/// What a sender sends, to whom and when.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TcpTransfer {
    /// The sink.
    pub dst: Addr,
    /// The flow id of the datagrams (the sink's ACKs carry it back).
    pub flow: FlowId,
    /// When the first segment leaves.
    pub start: SimTime,
    /// How much.
    pub amount: Amount,
    /// Length of the interval records (zero: none).
    pub interval: Duration,
}

/// One retransmission timeout.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TimeoutRecord {
    /// When it fired, seconds of simulated time.
    pub at_secs: f64,
    /// The RTO after the backoff (the wait before the next timeout), seconds.
    pub next_rto_secs: f64,
    /// Consecutive timeouts so far, this one included.
    pub consecutive: u32,
}

/// What a sender did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TcpStats {
    /// Data segments sent, retransmissions included.
    pub segments_sent: u64,
    /// Retransmitted segments.
    pub retransmits: u64,
    /// Fast retransmits (entries into loss recovery by duplicate ACKs or SACK).
    pub fast_retransmits: u64,
    /// Retransmission timeouts.
    pub timeouts: u64,
    /// Timeouts in a row without an ACK of new data in between, now.
    pub consecutive_timeouts: u32,
    /// The longest run of consecutive timeouts.
    pub max_consecutive_timeouts: u32,
    /// Payload bytes cumulatively acknowledged.
    pub bytes_acked: u64,
    /// ACKs received (duplicates included).
    pub acks_received: u64,
    /// Current RTO (backoff included), seconds.
    pub rto_secs: f64,
    /// Smoothed RTT (RFC 6298 `SRTT`), seconds; 0 before the first sample.
    pub srtt_secs: f64,
    /// When every byte was acknowledged, seconds; `None` while unfinished.
    pub finished_secs: Option<f64>,
}

/// Per segment on the sender's scoreboard.
#[derive(Debug, Clone, Copy)]
struct Seg {
    /// Last transmission.
    sent: SimTime,
    /// First transmission.
    first_sent: SimTime,
    /// Ever retransmitted (Karn's rule: no RTT sample).
    retx: bool,
    /// Covered by a SACK block.
    sacked: bool,
    /// Declared lost (RFC 6675 `IsLost`, or a timeout) and not yet resent.
    lost: bool,
    /// Resent since it was declared lost (counts in `pipe`).
    resent: bool,
}

/// The sending half: a one-way TCP agent whose window a controller decides.
pub struct TcpSender {
    cfg: TcpConfig,
    cc: Box<dyn CongestionController>,
    epoch: Instant,
    dst: Addr,
    flow: FlowId,
    start: SimTime,
    amount: Amount,
    /// Total bytes once known.
    end: Option<u64>,
    seg: u64,
    una: u64,
    nxt: u64,
    max: u64,
    /// Segments from `una` to `max`.
    segs: VecDeque<Seg>,
    rwnd: u64,
    dupacks: u32,
    in_recovery: bool,
    /// RFC 6582 `recover` / RFC 6675 `RecoveryPoint`.
    recover: u64,
    /// Window inflation of Reno/NewReno fast recovery, bytes.
    inflation: u64,
    /// A segment to retransmit at once (fast retransmit, partial ACK).
    rexmit: Option<u64>,
    /// RFC 6582 §3.2 step 5: only the first partial ACK restarts the timer.
    partial_seen: bool,
    srtt: Option<Duration>,
    rttvar: Duration,
    latest_rtt: Duration,
    min_rtt: Option<Duration>,
    backoff: u32,
    rto_deadline: Option<SimTime>,
    /// Pacing: the earliest time of the next transmission.
    pace_next: SimTime,
    /// When every byte had been acknowledged.
    finished_at: Option<SimTime>,
    /// Pacing held a segment back: wake at `pace_next`.
    pace_wait: bool,
    stats: TcpStats,
    timeouts: Vec<TimeoutRecord>,
    // Interval records.
    interval: Duration,
    next_boundary: Option<SimTime>,
    intervals: Vec<IntervalStats>,
    iv_lost: u64,
    iv_events: u64,
    iv_written: u64,
    trace: CcTrace,
    /// Whether [`trace`](Self::trace) keeps samples.
    tracing: bool,
}

impl std::fmt::Debug for TcpSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpSender")
            .field("flow", &self.flow)
            .field("una", &self.una)
            .field("max", &self.max)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl TcpSender {
    /// A sender of `transfer`, its window decided by `cc` (built with
    /// `cfg.segment` as its mss). `epoch` maps virtual time onto the
    /// controller's `Instant`s.
    pub fn new(cfg: TcpConfig, cc: Box<dyn CongestionController>, epoch: Instant, transfer: TcpTransfer) -> Self {
        let TcpTransfer {
            dst,
            flow,
            start,
            amount,
            interval,
        } = transfer;
        let seg = u64::from(cfg.segment.max(1));
        let rwnd = cfg.receive_window;
        let end = match amount {
            Amount::Bytes(n) => Some(n),
            Amount::Until(_) => None,
        };
        let mut s = Self {
            cc,
            epoch,
            dst,
            flow,
            start,
            amount,
            end,
            seg,
            una: 0,
            nxt: 0,
            max: 0,
            segs: VecDeque::new(),
            rwnd,
            dupacks: 0,
            in_recovery: false,
            recover: 0,
            inflation: 0,
            rexmit: None,
            partial_seen: false,
            srtt: None,
            rttvar: Duration::ZERO,
            latest_rtt: Duration::ZERO,
            min_rtt: None,
            backoff: 1,
            rto_deadline: None,
            pace_next: SimTime::ZERO,
            finished_at: None,
            pace_wait: false,
            stats: TcpStats::default(),
            timeouts: Vec::new(),
            interval,
            next_boundary: (!interval.is_zero()).then(|| start + interval),
            intervals: Vec::new(),
            iv_lost: 0,
            iv_events: 0,
            iv_written: 0,
            trace: CcTrace::default(),
            tracing: true,
            cfg,
        };
        s.stats.rto_secs = s.rto().as_secs_f64();
        s
    }

    /// The statistics so far.
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }

    /// Every retransmission timeout, in order.
    pub fn timeouts(&self) -> &[TimeoutRecord] {
        &self.timeouts
    }

    /// Interval records so far (their `bytes` are the sink's to fill in: 0 here).
    pub fn intervals(&self) -> &[IntervalStats] {
        &self.intervals
    }

    /// Keep no controller trace ([`cc_trace`](Self::cc_trace) stays empty).
    pub fn without_cc_trace(mut self) -> Self {
        self.tracing = false;
        self
    }

    /// The controller's state at every change, by the rule on [`CcSample`].
    pub fn cc_trace(&self) -> Vec<CcSample> {
        self.trace.clone().finish()
    }

    /// The controller.
    pub fn controller(&self) -> &dyn CongestionController {
        self.cc.as_ref()
    }

    /// Whether every byte has been acknowledged.
    pub fn is_finished(&self) -> bool {
        self.stats.finished_secs.is_some()
    }

    /// When every byte had been acknowledged (the last ACK's arrival).
    pub fn finished_at(&self) -> Option<SimTime> {
        self.finished_at
    }

    /// The current RTO, backoff included (RFC 6298 §2, §5.5).
    pub fn rto(&self) -> Duration {
        let base = match self.srtt {
            None => self.cfg.initial_rto,
            Some(srtt) => srtt + self.cfg.granularity.max(4 * self.rttvar),
        };
        let base = base.max(self.cfg.min_rto);
        base.saturating_mul(self.backoff).min(self.cfg.max_rto)
    }

    fn instant(&self, t: SimTime) -> Instant {
        t.to_instant(self.epoch)
    }

    fn seg_len(&self, seq: u64) -> u64 {
        match self.end {
            Some(end) => self.seg.min(end.saturating_sub(seq)),
            None => self.seg,
        }
    }

    fn index(&self, seq: u64) -> usize {
        ((seq - self.una) / self.seg) as usize
    }

    /// Whether the congestion window is not what holds the sender back, as
    /// the controller must know (RFC 9002 §7.8: no growth while the window is
    /// not fully used; Linux's `tcp_is_cwnd_limited`, RFC 7661): it has room
    /// for another segment, but the receive window or the end of the data
    /// kept it from being sent. Waiting for the pacer does not count.
    /// Without it a receive-window-limited flow's controller grows far
    /// beyond what it can use, and a loss then halves a window the sender
    /// never had (ns-2 halves `min(cwnd_, window_)`).
    fn app_limited(&self) -> bool {
        let flight = self.max - self.una;
        let cwnd_room = flight + self.seg <= self.cc.window();
        let rwnd_room = self.max + self.seg <= self.una + self.rwnd.max(self.seg);
        let data = self.end.is_none_or(|e| self.max < e);
        cwnd_room && !(rwnd_room && data)
    }

    /// RFC 6675 §4 `pipe`, bytes.
    fn pipe(&self) -> u64 {
        let mut pipe = 0;
        let mut seq = self.una;
        for s in &self.segs {
            let len = self.seg_len(seq);
            if !s.sacked {
                if !s.lost {
                    pipe += len;
                }
                if s.resent {
                    pipe += len;
                }
            }
            seq += len;
        }
        pipe
    }

    /// RFC 6675 §4 `IsLost`: `dupack_threshold` SACKed segments above it.
    fn mark_lost(&mut self) -> u64 {
        let thresh = self.cfg.dupack_threshold;
        let mut above = 0;
        let mut newly = 0;
        for s in self.segs.iter_mut().rev() {
            if s.sacked {
                above += 1;
            } else if above >= thresh && !s.lost && !s.resent {
                s.lost = true;
                newly += 1;
            }
        }
        newly
    }

    fn stopped(&mut self, now: SimTime) {
        if let Amount::Until(stop) = self.amount
            && self.end.is_none()
            && now >= stop
        {
            self.end = Some(self.max);
        }
    }

    fn finish_if_done(&mut self, now: SimTime) {
        if self.stats.finished_secs.is_none() && self.end.is_some_and(|e| self.una >= e) {
            self.stats.finished_secs = Some(now.as_secs_f64());
            self.finished_at = Some(now);
            self.rto_deadline = None;
            self.close_interval(now, true);
        }
    }

    fn close_interval(&mut self, at: SimTime, last: bool) {
        if self.interval.is_zero() {
            return;
        }
        let i = self.intervals.len() as u32;
        let start_secs = (self.interval * i).as_secs_f64();
        let end_secs = at.saturating_duration_since(self.start).as_secs_f64();
        if last && end_secs <= start_secs && !self.intervals.is_empty() {
            self.next_boundary = None;
            return;
        }
        self.intervals.push(IntervalStats {
            start_secs,
            end_secs,
            bytes: 0,
            goodput_bps: 0.0,
            written_bytes: std::mem::take(&mut self.iv_written),
            cwnd_bytes: self.cc.window(),
            srtt_ms: self.srtt.unwrap_or_default().as_secs_f64() * 1e3,
            min_rtt_ms: self.min_rtt.unwrap_or_default().as_secs_f64() * 1e3,
            lost_packets: std::mem::take(&mut self.iv_lost),
            congestion_events: std::mem::take(&mut self.iv_events),
            controller: Some(self.cc.snapshot()),
        });
        self.next_boundary = if last { None } else { Some(at + self.interval) };
    }

    fn advance(&mut self, now: SimTime) {
        while let Some(b) = self.next_boundary
            && b <= now
            && self.stats.finished_secs.is_none()
        {
            self.close_interval(b, false);
        }
        self.stopped(now);
    }

    fn observe(&mut self, now: SimTime) {
        if self.tracing && now >= self.start {
            let s = CcSample::new(now.as_secs_f64(), &self.cc.snapshot());
            self.trace.observe(s);
        }
    }

    fn congestion(&mut self, now: SimTime, kind: CongestionKind, lost_bytes: u64) {
        // The TCP model decides when the window is reduced (once per fast
        // recovery, every timeout), so the event refers to `now`: the
        // controller's own once-per-RTT filter never swallows it.
        let at = self.instant(now);
        self.cc.on_congestion(at, &Congestion::new(kind, at, lost_bytes));
        self.iv_events += 1;
    }

    fn restart_timer(&mut self, now: SimTime) {
        self.rto_deadline = Some(now + self.rto());
    }

    /// RFC 6298 §2.2–2.3.
    fn rtt_sample(&mut self, r: Duration) {
        self.latest_rtt = r;
        self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
        match self.srtt {
            None => {
                self.srtt = Some(r);
                self.rttvar = r / 2;
            }
            Some(srtt) => {
                let diff = srtt.abs_diff(r);
                self.rttvar = (self.rttvar * 3 + diff) / 4;
                self.srtt = Some((srtt * 7 + r) / 8);
            }
        }
        // Karn: a valid sample ends the backoff (RFC 6298 §5.7 and note).
        self.backoff = 1;
        self.stats.srtt_secs = self.srtt.unwrap_or_default().as_secs_f64();
    }

    fn on_ack_packet(&mut self, now: SimTime, a: AckPacket) {
        self.stats.acks_received += 1;
        self.rwnd = a.rwnd;
        if a.ack > self.max {
            return; // acknowledges data never sent: ignore
        }
        if self.cfg.recovery == Recovery::Sack {
            for &(s, e) in &a.sack {
                let mut seq = self.una;
                for i in 0..self.segs.len() {
                    let len = self.seg_len(seq);
                    if seq >= s && seq + len <= e {
                        let seg = &mut self.segs[i];
                        seg.sacked = true;
                        seg.lost = false;
                    }
                    seq += len;
                }
            }
        }
        if a.ack > self.una {
            self.on_new_ack(now, a.ack);
        } else if a.ack == self.una && self.max > self.una && !(a.dup && self.cfg.recovery == Recovery::Gbn) {
            // Go-back-N resends what the sink may already hold; the ACKs of
            // those duplicates say nothing about loss and are not counted.
            self.on_dupack(now);
        }
        if self.cfg.recovery == Recovery::Sack && self.in_recovery {
            self.iv_lost += self.mark_lost();
        }
        let flight = self.max - self.una;
        self.cc.on_end_acks(self.instant(now), flight, false);
        self.finish_if_done(now);
    }

    fn on_new_ack(&mut self, now: SimTime, ack: u64) {
        let acked = ack - self.una;
        // Karn's rule (RFC 6298 §3): no sample when any newly acked segment was resent.
        let mut any_retx = false;
        let mut newest = None;
        let mut seq = self.una;
        let mut covered = Vec::new();
        // What the controller hears as a segment's send time: with TCP's
        // recovery its first transmission, since TCP's recovery is about
        // sequence numbers (RFC 6582's `recover`) and a retransmission
        // belongs to the flight it repairs, so its ACK does not end the
        // controller's recovery period (RFC 9002 §7.3.2 would end it: QUIC
        // sends no segment twice); with `rfc9002` its last one, as a QUIC
        // packet's. RTT samples follow Karn's rule either way.
        let tcp_recovery = self.cfg.controller_recovery == ControllerRecovery::Tcp;
        while seq < ack {
            let Some(s) = self.segs.pop_front() else { break };
            let len = self.seg_len(seq);
            any_retx |= s.retx;
            newest = Some(s.sent);
            covered.push((if tcp_recovery { s.first_sent } else { s.sent }, len));
            seq += len;
        }
        if !any_retx && let Some(sent) = newest {
            self.rtt_sample(now.saturating_duration_since(sent));
        }
        let rtt = RttSample::new(
            self.latest_rtt,
            self.srtt.unwrap_or(self.latest_rtt),
            self.min_rtt.unwrap_or(self.latest_rtt),
        );
        let at = self.instant(now);
        let app_limited = self.app_limited();
        for (sent, bytes) in covered {
            let sent = self.instant(sent);
            self.cc
                .on_ack(at, &Ack::new(sent, bytes, rtt).with_app_limited(app_limited));
        }
        self.una = ack;
        self.nxt = self.nxt.max(ack);
        self.stats.bytes_acked = ack;
        self.stats.consecutive_timeouts = 0;
        let partial = self.in_recovery && ack < self.recover;
        let was_in_recovery = self.in_recovery;
        match self.cfg.recovery {
            Recovery::Reno => {
                // RFC 5681 §3.2 step 6: the first ACK of new data deflates the window.
                self.in_recovery = false;
                self.inflation = 0;
            }
            Recovery::NewReno if partial => {
                // RFC 6582 §3.2 step 3, partial ACK: resend the first unacked
                // segment, deflate by what was acked, add back one segment.
                self.rexmit = Some(self.una);
                self.inflation = self.inflation.saturating_sub(acked);
                if acked >= self.seg {
                    self.inflation += self.seg;
                }
            }
            Recovery::NewReno | Recovery::Sack | Recovery::Gbn if !partial => {
                // RFC 6582 §3.2 step 3 full ACK; RFC 6675 §5 exits at RecoveryPoint.
                self.in_recovery = false;
                self.inflation = 0;
            }
            _ => {}
        }
        if was_in_recovery && !self.in_recovery && self.cfg.controller_recovery == ControllerRecovery::Tcp {
            // After this ACK's own `on_ack` calls: the ACK that ends fast
            // recovery does not grow the window (RFC 6582 §3.2 step 3 sets it
            // to ssthresh), the next one may.
            self.cc.on_recovery_end(at);
        }
        self.dupacks = 0;
        // RFC 6298 §5.2–5.3; RFC 6582 §3.2 step 5: of partial ACKs only the first restarts it.
        if self.una >= self.max {
            self.rto_deadline = None;
        } else if !(partial && self.cfg.recovery == Recovery::NewReno && self.partial_seen) {
            self.restart_timer(now);
        }
        if partial {
            self.partial_seen = true;
        }
    }

    fn on_dupack(&mut self, now: SimTime) {
        self.dupacks += 1;
        if self.in_recovery {
            if matches!(self.cfg.recovery, Recovery::Reno | Recovery::NewReno) {
                // RFC 5681 §3.2 step 4: inflate by one segment per further duplicate.
                self.inflation += self.seg;
            }
            return;
        }
        let sack_loss = self.cfg.recovery == Recovery::Sack && {
            self.mark_lost();
            self.segs.front().is_some_and(|s| s.lost)
        };
        if self.dupacks < self.cfg.dupack_threshold && !sack_loss {
            if self.cfg.limited_transmit && self.cfg.recovery != Recovery::Sack {
                // RFC 3042 §2: one segment beyond the window per duplicate
                // ACK, the window itself unchanged (the allowance goes with
                // the next new ACK, or becomes fast recovery's inflation).
                self.inflation = u64::from(self.dupacks) * self.seg;
            }
            return;
        }
        // RFC 6582 §3.2 step 2 and §4 (and RFC 6675 §5): no new recovery
        // while the cumulative ACK is below `recover` (set by a timeout or a
        // recovery). Reno applies it too, as ns-2's `bugFix_` does.
        if self.una < self.recover {
            return;
        }
        self.in_recovery = true;
        self.partial_seen = false;
        self.recover = self.max;
        self.stats.fast_retransmits += 1;
        self.iv_lost += 1;
        let seg_len = self.seg_len(self.una);
        self.congestion(now, CongestionKind::Loss, seg_len);
        if self.cfg.restart_timer_on_fast_retransmit {
            // ns-2's `reset_rtx_timer(1, 0)` in its duplicate-ACK action;
            // Linux re-arms it when it resends the head of the queue. Not
            // RFC 6298 §5, which restarts it only on new ACKs and timeouts.
            self.restart_timer(now);
        }
        match self.cfg.recovery {
            Recovery::Reno | Recovery::NewReno => {
                // RFC 5681 §3.2 steps 2–3.
                self.rexmit = Some(self.una);
                self.inflation = u64::from(self.cfg.dupack_threshold) * self.seg;
            }
            Recovery::Sack => {
                // RFC 6675 §5 step (4.3): the first hole is lost and is
                // resent at once, whatever `pipe` says; the rest follows
                // NextSeg as `pipe` allows. (Waiting for `pipe` to fall
                // below the halved window delayed it by half a round trip,
                // long enough for a timeout behind a standing queue.)
                if let Some(s) = self.segs.front_mut() {
                    s.lost = true;
                }
                self.rexmit = Some(self.una);
            }
            Recovery::Gbn => {
                self.nxt = self.una;
                self.inflation = 0;
            }
        }
    }

    fn on_rto(&mut self, now: SimTime) {
        self.stats.timeouts += 1;
        self.stats.consecutive_timeouts += 1;
        self.stats.max_consecutive_timeouts = self.stats.max_consecutive_timeouts.max(self.stats.consecutive_timeouts);
        self.iv_lost += 1;
        let flight = self.max - self.una;
        self.congestion(now, CongestionKind::PersistentCongestion, flight);
        // RFC 6298 §5.5: back off; Karn's rule keeps it until a valid sample.
        self.backoff = (self.backoff.saturating_mul(2)).min(self.cfg.max_backoff);
        self.in_recovery = false;
        self.inflation = 0;
        self.dupacks = 0;
        self.rexmit = None;
        // RFC 6582 §4 (and RFC 6675 §5.1): no fast retransmit for what was sent before.
        self.recover = self.max;
        match self.cfg.recovery {
            Recovery::Sack => {
                // RFC 6675 §5.1: resend in order, skipping SACKed segments (the
                // sink never discards SACKed data, so they are kept).
                for s in &mut self.segs {
                    s.resent = false;
                    s.lost = !s.sacked;
                }
                self.in_recovery = true;
                self.partial_seen = false;
            }
            // RFC 6298 §5.4 resends the earliest segment; the rest follow as
            // the window opens (go-back-N, as BSD and ns-2 do).
            _ => self.nxt = self.una,
        }
        self.restart_timer(now);
        self.stats.rto_secs = self.rto().as_secs_f64();
        tracing::trace!(
            at_ns = now.as_nanos(),
            consecutive = self.stats.consecutive_timeouts,
            "TCP retransmission timeout"
        );
        self.timeouts.push(TimeoutRecord {
            at_secs: now.as_secs_f64(),
            next_rto_secs: self.stats.rto_secs,
            consecutive: self.stats.consecutive_timeouts,
        });
    }

    /// The segment to send now, if the windows allow one.
    fn next_segment(&mut self) -> Option<u64> {
        if let Some(seq) = self.rexmit.take()
            && seq >= self.una
            && seq < self.max
        {
            return Some(seq);
        }
        let wnd = self.cc.window();
        let rwnd_ok = |seq: u64, len: u64| seq + len <= self.una + self.rwnd.max(self.seg);
        if self.cfg.recovery == Recovery::Sack {
            let pipe = self.pipe();
            if pipe + self.seg > wnd && pipe > 0 {
                return None;
            }
            // RFC 6675 §4 NextSeg (1): the first hole declared lost.
            let mut seq = self.una;
            for s in &self.segs {
                let len = self.seg_len(seq);
                if s.lost && !s.sacked && !s.resent {
                    return Some(seq);
                }
                seq += len;
            }
            // NextSeg (2): new data.
            return self.new_data(rwnd_ok);
        }
        let flight = self.nxt - self.una;
        if flight > 0 && flight + self.seg > wnd + self.inflation {
            return None;
        }
        if self.nxt < self.max {
            // Go-back-N resend (after a timeout, or a `gbn` fast retransmit).
            let seq = self.nxt;
            return rwnd_ok(seq, self.seg_len(seq)).then_some(seq);
        }
        self.new_data(rwnd_ok)
    }

    fn new_data(&self, rwnd_ok: impl Fn(u64, u64) -> bool) -> Option<u64> {
        let seq = self.max;
        if self.end.is_some_and(|e| seq >= e) {
            return None;
        }
        let len = self.seg_len(seq);
        (len > 0 && rwnd_ok(seq, len)).then_some(seq)
    }

    /// Linux's pacing rate (`tcp_update_pacing_rate`), bytes per second
    /// times 100: `cwnd / SRTT` at [`PACING_SS_PERCENT`] while
    /// `cwnd < ssthresh / 2`, else at [`PACING_CA_PERCENT`]; `None` before
    /// the first RTT sample.
    fn pacing_rate_x100(&self) -> Option<(u128, u128)> {
        let srtt = self.srtt.filter(|s| !s.is_zero())?;
        let snap = self.cc.snapshot();
        let cwnd = snap.cwnd_bytes;
        let slow_start = snap.ssthresh_bytes.is_none_or(|t| cwnd < t / 2);
        let pct = if slow_start {
            PACING_SS_PERCENT
        } else {
            PACING_CA_PERCENT
        };
        Some((u128::from(cwnd) * u128::from(pct), srtt.as_nanos()))
    }

    /// The next transmission may leave `len / rate` after this one (or after
    /// `now` if the sender was idle), as Linux's `tcp_wstamp_ns`.
    fn pace_after(&mut self, now: SimTime, len: u64) {
        let Some((bytes_x100, srtt_ns)) = self.pacing_rate_x100() else {
            return;
        };
        if bytes_x100 == 0 {
            return;
        }
        let gap_ns = u128::from(len) * srtt_ns * 100 / bytes_x100;
        let gap = Duration::from_nanos(u64::try_from(gap_ns).unwrap_or(u64::MAX));
        self.pace_next = self.pace_next.max(now) + gap;
    }

    fn send(&mut self, now: SimTime, seq: u64) -> Datagram {
        let len = self.seg_len(seq);
        if seq >= self.max {
            self.segs.push_back(Seg {
                sent: now,
                first_sent: now,
                retx: false,
                sacked: false,
                lost: false,
                resent: false,
            });
            self.max = seq + len;
            self.iv_written += len;
        } else {
            let i = self.index(seq);
            let s = &mut self.segs[i];
            s.sent = now;
            s.retx = true;
            if s.lost {
                s.lost = false;
                s.resent = true;
            }
            self.stats.retransmits += 1;
        }
        if seq == self.nxt {
            self.nxt = seq + len;
        }
        self.stats.segments_sent += 1;
        self.cc.on_sent(self.instant(now), len);
        // RFC 6298 §5.1.
        if self.rto_deadline.is_none() {
            self.restart_timer(now);
        }
        Datagram {
            dst: self.dst,
            flow: self.flow,
            payload: encode_data(seq, len as usize),
        }
    }
}

impl Host for TcpSender {
    fn on_datagram(&mut self, now: SimTime, _from: Addr, _flow: FlowId, payload: Bytes) {
        self.advance(now);
        if let Some(a) = decode_ack(&payload)
            && self.stats.finished_secs.is_none()
        {
            self.on_ack_packet(now, a);
        }
        self.observe(now);
    }

    fn poll_transmit(&mut self, now: SimTime) -> Option<Datagram> {
        if now < self.start || self.stats.finished_secs.is_some() {
            return None;
        }
        self.stopped(now);
        let paced = self.cfg.pacing && now < self.pace_next;
        self.pace_wait = false;
        let rexmit = self.rexmit;
        let seq = self.next_segment()?;
        if paced {
            // Ready but not yet due: keep the segment for `pace_next`.
            self.rexmit = rexmit;
            self.pace_wait = true;
            return None;
        }
        let d = self.send(now, seq);
        if self.cfg.pacing {
            self.pace_after(now, self.seg_len(seq));
        }
        Some(d)
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        if self.stats.finished_secs.is_some() {
            return None;
        }
        let stop = match self.amount {
            Amount::Until(t) if self.end.is_none() => Some(t),
            _ => None,
        };
        let start = (self.max == 0).then_some(self.start);
        let pace = self.pace_wait.then_some(self.pace_next);
        [self.rto_deadline, self.next_boundary, stop, start, pace]
            .into_iter()
            .flatten()
            .min()
    }

    fn on_timeout(&mut self, now: SimTime) {
        self.advance(now);
        if self.rto_deadline.is_some_and(|t| t <= now) {
            if self.una < self.max {
                self.on_rto(now);
            } else {
                self.rto_deadline = None;
            }
        }
        self.finish_if_done(now);
        self.observe(now);
    }
}

/// What a sink measured.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct SinkReport {
    /// Payload bytes delivered in order (goodput).
    pub bytes: u64,
    /// Seconds from the first segment's arrival to the last in-order delivery.
    pub active_secs: f64,
    /// In-order bytes per interval from the first arrival (the last one partial).
    pub interval_bytes: Vec<u64>,
    /// Complete evaluation slots from the first arrival (empty without a target).
    pub slots: Vec<SlotStats>,
    /// Fraction of slots that met the target.
    pub success_ratio: Option<f64>,
    /// ACKs sent.
    pub acks_sent: u64,
    /// Data segments received (duplicates included).
    pub segments_received: u64,
    /// Segments that arrived entirely below the cumulative ACK.
    pub duplicates: u64,
    /// Segments that failed the payload check or were malformed (always 0 in a correct run).
    pub corrupt: u64,
}

/// The receiving half: cumulative ACKs, optional SACK blocks and delayed ACKs.
#[derive(Debug)]
pub struct TcpSink {
    cfg: TcpConfig,
    rcv_nxt: u64,
    /// Out-of-order data above `rcv_nxt`: start -> end, merged.
    ooo: BTreeMap<u64, u64>,
    /// Starts of recently received out-of-order segments, newest first (RFC 2018 §4).
    recent: VecDeque<u64>,
    peer: Option<(Addr, FlowId)>,
    out: VecDeque<Datagram>,
    unacked: u32,
    ack_deadline: Option<SimTime>,
    first: Option<SimTime>,
    last: Option<SimTime>,
    interval: Duration,
    interval_counts: Vec<u64>,
    slot: Duration,
    slot_counts: Vec<u64>,
    target_bps: f64,
    report: SinkReport,
    delivered_log: Option<Vec<u8>>,
}

impl TcpSink {
    /// A sink with `cfg`'s ACK policy; it counts in-order bytes per `interval`
    /// and judges every `slot` against `target_bps` (0: no slots).
    pub fn new(cfg: TcpConfig, interval: Duration, slot: Duration, target_bps: f64) -> Self {
        Self {
            cfg,
            rcv_nxt: 0,
            ooo: BTreeMap::new(),
            recent: VecDeque::new(),
            peer: None,
            out: VecDeque::new(),
            unacked: 0,
            ack_deadline: None,
            first: None,
            last: None,
            interval,
            interval_counts: Vec::new(),
            slot: if target_bps > 0.0 { slot } else { Duration::ZERO },
            slot_counts: Vec::new(),
            target_bps,
            report: SinkReport::default(),
            delivered_log: None,
        }
    }

    /// Keep a copy of every byte delivered in order (for tests).
    pub fn record_delivery(&mut self) {
        self.delivered_log = Some(Vec::new());
    }

    /// The bytes delivered in order, if [`record_delivery`](Self::record_delivery) was called.
    pub fn delivered_log(&self) -> Option<&[u8]> {
        self.delivered_log.as_deref()
    }

    /// Bytes delivered in order so far.
    pub fn delivered(&self) -> u64 {
        self.rcv_nxt
    }

    /// The report: slots complete by the last delivery are judged.
    pub fn report(&self) -> SinkReport {
        let mut r = self.report.clone();
        r.bytes = self.rcv_nxt;
        let (Some(first), Some(last)) = (self.first, self.last) else {
            return r;
        };
        let active = last.saturating_duration_since(first);
        r.active_secs = active.as_secs_f64();
        r.interval_bytes = self.interval_counts.clone();
        if !self.slot.is_zero() {
            let n = (active.as_nanos() / self.slot.as_nanos()) as usize;
            let mut counts = self.slot_counts.clone();
            counts.resize(n, 0);
            (r.slots, r.success_ratio) = SlotStats::judge(&counts, self.slot, self.target_bps);
        }
        r
    }

    fn count(&mut self, now: SimTime, bytes: u64) {
        let first = *self.first.get_or_insert(now);
        self.last = Some(now);
        let since = now.saturating_duration_since(first).as_nanos();
        for (width, counts) in [
            (self.interval, &mut self.interval_counts),
            (self.slot, &mut self.slot_counts),
        ] {
            if width.is_zero() {
                continue;
            }
            let i = (since / width.as_nanos()) as usize;
            if counts.len() <= i {
                counts.resize(i + 1, 0);
            }
            counts[i] += bytes;
        }
    }

    fn sack_blocks(&self) -> Vec<(u64, u64)> {
        let mut blocks: Vec<(u64, u64)> = Vec::with_capacity(MAX_SACK_BLOCKS);
        for &s in &self.recent {
            if blocks.len() == MAX_SACK_BLOCKS {
                break;
            }
            if let Some((&b, &e)) = self.ooo.range(..=s).next_back()
                && e > s
                && !blocks.contains(&(b, e))
            {
                blocks.push((b, e));
            }
        }
        blocks
    }

    fn ack_now(&mut self, dup: bool) {
        let Some((dst, flow)) = self.peer else { return };
        let a = AckPacket {
            ack: self.rcv_nxt,
            dup,
            rwnd: self.cfg.receive_window,
            sack: if self.cfg.sack { self.sack_blocks() } else { Vec::new() },
        };
        self.out.push_back(Datagram {
            dst,
            flow,
            payload: encode_ack(&a),
        });
        self.report.acks_sent += 1;
        self.unacked = 0;
        self.ack_deadline = None;
    }

    fn on_segment(&mut self, now: SimTime, seq: u64, data: &[u8]) {
        let len = data.len() as u64;
        let end = seq + len;
        if len == 0 || data != pattern(seq, data.len()) {
            self.report.corrupt += 1;
            return;
        }
        self.report.segments_received += 1;
        if end <= self.rcv_nxt {
            self.report.duplicates += 1;
            self.ack_now(true);
            return;
        }
        if seq > self.rcv_nxt {
            if end > self.rcv_nxt + self.cfg.receive_window {
                return; // beyond the advertised window
            }
            // Out of order: keep it, ACK at once (RFC 5681 §4.2).
            self.insert(seq, end);
            self.recent.retain(|&s| s != seq);
            self.recent.push_front(seq);
            self.recent.truncate(4 * MAX_SACK_BLOCKS);
            self.first.get_or_insert(now);
            self.ack_now(false);
            return;
        }
        let filled_gap = !self.ooo.is_empty();
        let old = self.rcv_nxt;
        let new_data = &data[(old - seq) as usize..];
        if let Some(log) = &mut self.delivered_log {
            log.extend_from_slice(new_data);
        }
        self.rcv_nxt = end;
        // Out-of-order data now in sequence.
        while let Some((&b, &e)) = self.ooo.first_key_value() {
            if b > self.rcv_nxt {
                break;
            }
            self.ooo.pop_first();
            if e > self.rcv_nxt {
                if let Some(log) = &mut self.delivered_log {
                    log.extend((self.rcv_nxt..e).map(|i| (i % PATTERN_PERIOD) as u8));
                }
                self.rcv_nxt = e;
            }
        }
        let rcv_nxt = self.rcv_nxt;
        self.recent.retain(|&s| s >= rcv_nxt);
        self.count(now, self.rcv_nxt - old);
        match self.cfg.delayed_ack {
            // RFC 5681 §4.2: a segment that fills a gap is ACKed at once, and
            // at least every second full-sized segment.
            Some(timer) if !filled_gap => {
                self.unacked += 1;
                if self.unacked >= 2 {
                    self.ack_now(false);
                } else if self.ack_deadline.is_none() {
                    self.ack_deadline = Some(now + timer);
                }
            }
            _ => self.ack_now(false),
        }
    }

    fn insert(&mut self, mut b: u64, mut e: u64) {
        if let Some((&pb, &pe)) = self.ooo.range(..=b).next_back()
            && pe >= b
        {
            b = pb;
            e = e.max(pe);
            self.ooo.remove(&pb);
        }
        while let Some((&nb, &ne)) = self.ooo.range(b..).next() {
            if nb > e {
                break;
            }
            e = e.max(ne);
            self.ooo.remove(&nb);
        }
        self.ooo.insert(b, e);
    }
}

impl Host for TcpSink {
    fn on_datagram(&mut self, now: SimTime, from: Addr, flow: FlowId, payload: Bytes) {
        self.peer = Some((from, flow));
        match decode_data(&payload) {
            Some((seq, data)) => self.on_segment(now, seq, data),
            None => self.report.corrupt += 1,
        }
    }

    fn poll_transmit(&mut self, _now: SimTime) -> Option<Datagram> {
        self.out.pop_front()
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        self.ack_deadline
    }

    fn on_timeout(&mut self, now: SimTime) {
        if self.ack_deadline.is_some_and(|t| t <= now) {
            self.ack_now(false);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wire_format_round_trips() {
        let d = encode_data(1234, 1000);
        assert_eq!(d.len(), 1000 + DATA_HEADER_BYTES);
        let (seq, body) = decode_data(&d).unwrap();
        assert_eq!(seq, 1234);
        assert_eq!(body, pattern(1234, 1000));
        let a = AckPacket {
            ack: 5000,
            dup: true,
            rwnd: 65_535,
            sack: vec![(6000, 7000), (9000, 12_000)],
        };
        let b = encode_ack(&a);
        assert_eq!(b.len(), ACK_HEADER_BYTES + 2 * SACK_BLOCK_BYTES);
        assert_eq!(decode_ack(&b), Some(a));
        assert_eq!(decode_ack(&d), None);
        assert_eq!(decode_data(&b), None);
        assert_eq!(decode_ack(&b[..20]), None);
    }

    #[test]
    fn the_rto_follows_rfc_6298() {
        let cfg = TcpConfig {
            min_rto: Duration::from_millis(1),
            ..TcpConfig::default()
        };
        let cc = "newreno".parse::<tput_cc::ControllerSpec>().unwrap().build(1000);
        let t = TcpTransfer {
            dst: Addr::default(),
            flow: 1,
            start: SimTime::ZERO,
            amount: Amount::Bytes(1),
            interval: Duration::ZERO,
        };
        let mut s = TcpSender::new(cfg, cc, Instant::now(), t);
        assert_eq!(s.rto(), Duration::from_secs(1), "RFC 6298 §2.1");
        s.rtt_sample(Duration::from_millis(100));
        // SRTT = 100 ms, RTTVAR = 50 ms: RTO = 100 + 4 * 50.
        assert_eq!(s.rto(), Duration::from_millis(300));
        s.rtt_sample(Duration::from_millis(200));
        // RTTVAR = 3/4 * 50 + 1/4 * 100 = 62.5; SRTT = 7/8 * 100 + 1/8 * 200 = 112.5.
        assert_eq!(s.rto(), Duration::from_micros(112_500 + 250_000));
    }
}
