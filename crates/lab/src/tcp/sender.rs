//! The sending half: segments, loss recovery, the retransmission timer and
//! pacing, with the window of a `tput-cc` controller.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use tput_cc::{Ack, Congestion, CongestionController, CongestionKind, RttSample};
use tput_netsim::{Addr, Datagram, Ecn, FlowId, Host, SimTime};
use tput_transport::IntervalStats;

use super::wire::{AckPacket, decode_ack, encode_data};
use super::{
    Amount, ControllerRecovery, PACING_CA_PERCENT, PACING_SS_PERCENT, Recovery, TcpConfig, TcpStats, TcpTransfer,
    TimeoutRecord,
};
use crate::host::{CcSample, CcTrace};

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

impl Seg {
    /// What the controller hears as the segment's send time: with TCP's
    /// recovery its first transmission, since TCP's recovery is about
    /// sequence numbers (RFC 6582's `recover`) and a retransmission belongs
    /// to the flight it repairs, so its ACK does not end the controller's
    /// recovery period (RFC 9002 §7.3.2 would end it: QUIC sends no segment
    /// twice); with `rfc9002` its last one, as a QUIC packet's.
    fn reported_sent(&self, recovery: ControllerRecovery) -> SimTime {
        match recovery {
            ControllerRecovery::Tcp => self.first_sent,
            ControllerRecovery::Rfc9002 => self.sent,
        }
    }
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
    /// SACK recovery with a controller that hears of a segment when a SACK
    /// block first covers it
    /// ([`CongestionController::counts_selective_acks`]); the cumulative
    /// ACK then skips the segments already reported.
    sack_acks: bool,
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
        let sack_acks = cfg.recovery == Recovery::Sack && cc.counts_selective_acks();
        let mut s = Self {
            sack_acks,
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
        let mut record = IntervalStats::default();
        record.start_secs = start_secs;
        record.end_secs = end_secs;
        record.written_bytes = std::mem::take(&mut self.iv_written);
        record.cwnd_bytes = self.cc.window();
        record.srtt_ms = self.srtt.unwrap_or_default().as_secs_f64() * 1e3;
        record.min_rtt_ms = self.min_rtt.unwrap_or_default().as_secs_f64() * 1e3;
        record.lost_packets = std::mem::take(&mut self.iv_lost);
        record.congestion_events = std::mem::take(&mut self.iv_events);
        record.controller = Some(self.cc.snapshot());
        self.intervals.push(record);
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
            let recovery = self.cfg.controller_recovery;
            let mut newly = Vec::new();
            for &(s, e) in &a.sack {
                let mut seq = self.una;
                for i in 0..self.segs.len() {
                    let len = self.seg_len(seq);
                    if seq >= s && seq + len <= e {
                        let seg = &mut self.segs[i];
                        if !seg.sacked && self.sack_acks {
                            newly.push((seg.reported_sent(recovery), len));
                        }
                        seg.sacked = true;
                        seg.lost = false;
                    }
                    seq += len;
                }
            }
            // As the cumulative ACK reports them (`on_new_ack`), with the
            // RTT statistics as they stand: a SACK gives no sample.
            self.report_acked(now, newly);
        }
        if a.ack > self.una {
            self.on_new_ack(now, a.ack, a.tsecr.filter(|_| self.cfg.timestamps));
        } else if a.ack == self.una && self.max > self.una && !(a.dup && self.cfg.recovery == Recovery::Gbn) {
            // Go-back-N resends what the sink may already hold; the ACKs of
            // those duplicates say nothing about loss and are not counted.
            self.on_dupack(now);
        }
        if self.cfg.recovery == Recovery::Sack && self.in_recovery {
            let newly = self.mark_lost();
            self.iv_lost += newly;
            if self.sack_acks && newly > 0 {
                // A controller that counts SACKs hears of every segment
                // RFC 6675 declares lost, as QUIC reports every lost packet
                // (RFC 9002 §6.1), not only of the one that started the
                // recovery. The event names a segment sent before the
                // recovery began, so it starts no new recovery period.
                let sent = self.segs.front().map_or(now, |s| s.first_sent);
                let (at, sent) = (self.instant(now), self.instant(sent));
                self.cc
                    .on_congestion(at, &Congestion::new(CongestionKind::Loss, sent, newly * self.seg));
            }
        }
        let flight = self.max - self.una;
        self.cc.on_end_acks(self.instant(now), flight, false);
        self.finish_if_done(now);
    }

    /// Tells the controller of each newly acknowledged segment, as
    /// (what it hears as the send time, bytes), with the RTT statistics as
    /// they stand now.
    fn report_acked(&mut self, now: SimTime, segments: Vec<(SimTime, u64)>) {
        if segments.is_empty() {
            return;
        }
        let rtt = RttSample::new(
            self.latest_rtt,
            self.srtt.unwrap_or(self.latest_rtt),
            self.min_rtt.unwrap_or(self.latest_rtt),
        );
        let at = self.instant(now);
        let app_limited = self.app_limited();
        for (sent, bytes) in segments {
            let sent = self.instant(sent);
            self.cc
                .on_ack(at, &Ack::new(sent, bytes, rtt).with_app_limited(app_limited));
        }
    }

    /// A cumulative ACK that advances the window to `ack`, echoing `tsecr`
    /// if timestamps are on.
    fn on_new_ack(&mut self, now: SimTime, ack: u64, tsecr: Option<u64>) {
        let acked = ack - self.una;
        // Karn's rule (RFC 6298 §3): no sample when any newly acked segment was resent.
        let mut any_retx = false;
        let mut newest = None;
        let mut seq = self.una;
        let mut covered = Vec::new();
        // RTT samples follow Karn's rule whatever `reported_sent` says.
        let recovery = self.cfg.controller_recovery;
        while seq < ack {
            let Some(s) = self.segs.pop_front() else { break };
            let len = self.seg_len(seq);
            any_retx |= s.retx;
            newest = Some(s.sent);
            if !(self.sack_acks && s.sacked) {
                covered.push((s.reported_sent(recovery), len));
            }
            seq += len;
        }
        if let Some(ts) = tsecr {
            // RFC 7323 §4.1: every ACK that advances the window gives a
            // sample from its echo; no ambiguity, so Karn's rule is moot.
            self.rtt_sample(Duration::from_nanos(now.as_nanos().saturating_sub(ts)));
        } else if !any_retx && let Some(sent) = newest {
            self.rtt_sample(now.saturating_duration_since(sent));
        }
        self.report_acked(now, covered);
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
            self.cc.on_recovery_end(self.instant(now));
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
        let mut lost_bytes = self.seg_len(self.una);
        if self.sack_acks {
            // Every segment RFC 6675 holds lost now (see `on_ack_packet`).
            let lost = self.segs.iter().filter(|s| s.lost).count() as u64;
            lost_bytes = lost_bytes.max(lost * self.seg);
        }
        self.congestion(now, CongestionKind::Loss, lost_bytes);
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

    /// Whether segments are paced: when [`TcpConfig::pacing`] asks for
    /// Linux's rate, or when the controller reports a rate of its own.
    fn paces(&self) -> bool {
        self.cfg.pacing || self.cc.pacing_rate().is_some()
    }

    /// The pacing rate as bytes times 100 per a number of nanoseconds: the
    /// controller's own rate if it reports one (as Linux's BBR sets
    /// `sk_pacing_rate`), else Linux's `tcp_update_pacing_rate`: `cwnd /
    /// SRTT` at [`PACING_SS_PERCENT`] while `cwnd < ssthresh / 2`, else at
    /// [`PACING_CA_PERCENT`]; `None` before the first RTT sample.
    fn pacing_rate_x100(&self) -> Option<(u128, u128)> {
        if let Some(rate) = self.cc.pacing_rate() {
            return Some((u128::from(rate) * 100, 1_000_000_000));
        }
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
            ecn: Ecn::NotEct,
            payload: encode_data(seq, len as usize, self.cfg.timestamps.then(|| now.as_nanos())),
        }
    }
}

impl Host for TcpSender {
    fn on_datagram(&mut self, now: SimTime, _from: Addr, _flow: FlowId, _: Ecn, payload: Bytes) {
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
        let pacing = self.paces();
        let paced = pacing && now < self.pace_next;
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
        if pacing {
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

#[cfg(test)]
mod tests {
    use super::*;

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
    #[test]
    fn a_controller_with_its_own_rate_is_paced_at_it() {
        // 8 Mbit/s = 1 MB/s: one 1000-byte segment per millisecond, from
        // the first segment on (no RTT sample needed), with `pacing` off.
        let cc = "fixed:rate=8Mbit/s"
            .parse::<tput_cc::ControllerSpec>()
            .unwrap()
            .build(1000);
        assert_eq!(cc.pacing_rate(), Some(1_000_000));
        let t = TcpTransfer {
            dst: Addr::default(),
            flow: 1,
            start: SimTime::ZERO,
            amount: Amount::Bytes(100_000),
            interval: Duration::ZERO,
        };
        let mut s = TcpSender::new(TcpConfig::default(), cc, Instant::now(), t);
        let ms = |m: u64| SimTime::from_nanos(m * 1_000_000);
        assert!(s.poll_transmit(ms(0)).is_some());
        assert!(s.poll_transmit(ms(0)).is_none(), "a second segment at once");
        assert_eq!(s.poll_timeout(), Some(ms(1)), "the next one is due 1 ms later");
        assert!(s.poll_transmit(SimTime::from_nanos(999_999)).is_none());
        assert!(s.poll_transmit(ms(1)).is_some());
        assert!(s.poll_transmit(ms(2)).is_some());
        assert_eq!(s.stats().segments_sent, 3);

        // A controller without a rate, with `pacing` off: back to back.
        let cc = "newreno".parse::<tput_cc::ControllerSpec>().unwrap().build(1000);
        let mut s = TcpSender::new(TcpConfig::default(), cc, Instant::now(), t);
        assert!(s.poll_transmit(ms(0)).is_some());
        assert!(s.poll_transmit(ms(0)).is_some());
    }
}
