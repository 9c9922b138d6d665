//! The sending half: a one-way TCP agent whose window a `tput-cc`
//! controller decides. Each job has its module: the RFC 6298 timer
//! ([`rto`]), the scoreboard ([`scoreboard`]), loss recovery, one
//! implementation per rule set ([`recovery`]), the window reduction of fast
//! recovery ([`prr`], RFC 6937), ECN ([`ecn`], RFC 3168), pacing
//! ([`pacing`]) and the interval records ([`intervals`]); this module runs
//! them and speaks to the controller.

use std::time::{Duration, Instant};

use bytes::Bytes;
use tput_cc::{Ack, Congestion, CongestionController, CongestionKind};
use tput_netsim::{Addr, Datagram, Ecn, FlowId, Host, SimTime};

use crate::wire::{AckPacket, decode_ack, encode_data};
use crate::{Amount, CcObserver, IntervalRecord, TcpConfig, TcpStats, TcpTransfer, TimeoutRecord};

mod ecn;
mod intervals;
mod pacing;
mod prr;
mod recovery;
mod rto;
pub(crate) mod scoreboard;

use ecn::EcnSender;
use intervals::IntervalLog;
use pacing::Pacer;
use prr::Prr;
use recovery::{Clock, LossRecovery, SeqSpace};
use rto::RtoTimer;

/// The sending half: a one-way TCP agent whose window a controller decides,
/// watched by `O` ([`CcObserver`]; `()`: by nobody).
pub struct TcpSender<O: CcObserver = ()> {
    cfg: TcpConfig,
    cc: Box<dyn CongestionController>,
    epoch: Instant,
    dst: Addr,
    flow: FlowId,
    start: SimTime,
    amount: Amount,
    /// Sequence numbers, the scoreboard and the state of fast recovery.
    space: SeqSpace,
    /// The rule set of loss recovery.
    recovery: Box<dyn LossRecovery>,
    /// RFC 6937's reduction in fast recovery ([`TcpConfig::prr`]; never
    /// active when it is off).
    prr: Prr,
    /// RFC 3168's sender ([`TcpConfig::ecn`]; inert when it is off).
    ecn: EcnSender,
    timer: RtoTimer,
    pacer: Pacer,
    /// When every byte had been acknowledged.
    finished_at: Option<SimTime>,
    /// SACK recovery with a controller that hears of a segment when a SACK
    /// block first covers it
    /// ([`CongestionController::counts_selective_acks`]); the cumulative
    /// ACK then skips the segments already reported.
    sack_acks: bool,
    stats: TcpStats,
    timeouts: Vec<TimeoutRecord>,
    intervals: IntervalLog,
    /// The (send time, bytes) pairs an ACK reports to the controller,
    /// kept between ACKs so that reporting them allocates nothing.
    acked: Vec<(SimTime, u64)>,
    observer: O,
}

impl<O: CcObserver> std::fmt::Debug for TcpSender<O> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpSender")
            .field("flow", &self.flow)
            .field("una", &self.space.una)
            .field("max", &self.space.max)
            .field("stats", &self.stats)
            .finish_non_exhaustive()
    }
}

impl TcpSender {
    /// A sender of `transfer`, its window decided by `cc` (built with
    /// `cfg.segment` as its mss), watched by nobody. `epoch` maps virtual
    /// time onto the controller's `Instant`s.
    pub fn new(cfg: TcpConfig, cc: Box<dyn CongestionController>, epoch: Instant, transfer: TcpTransfer) -> Self {
        Self::with_observer(cfg, cc, epoch, transfer, ())
    }
}

impl<O: CcObserver> TcpSender<O> {
    /// [`TcpSender::new`] with `observer` watching the controller.
    pub fn with_observer(
        cfg: TcpConfig,
        cc: Box<dyn CongestionController>,
        epoch: Instant,
        transfer: TcpTransfer,
        observer: O,
    ) -> Self {
        let TcpTransfer {
            dst,
            flow,
            start,
            amount,
            interval,
        } = transfer;
        let seg = u64::from(cfg.segment.max(1));
        let end = match amount {
            Amount::Bytes(n) => Some(n),
            Amount::Until(_) => None,
        };
        let sack_acks = cfg.recovery.uses_sack() && cc.counts_selective_acks();
        let timer = RtoTimer::new();
        let stats = TcpStats {
            rto_secs: timer.rto(&cfg).as_secs_f64(),
            ..TcpStats::default()
        };
        Self {
            space: SeqSpace::new(seg, end, cfg.receive_window),
            recovery: recovery::for_config(cfg.recovery),
            prr: Prr::new(cfg.prr_bound),
            ecn: EcnSender::new(cfg.ecn),
            timer,
            pacer: Pacer::default(),
            sack_acks,
            cc,
            epoch,
            dst,
            flow,
            start,
            amount,
            finished_at: None,
            stats,
            timeouts: Vec::new(),
            intervals: IntervalLog::new(start, interval),
            acked: Vec::new(),
            observer,
            cfg,
        }
    }

    /// The statistics so far.
    pub fn stats(&self) -> &TcpStats {
        &self.stats
    }

    /// Every retransmission timeout, in order.
    pub fn timeouts(&self) -> &[TimeoutRecord] {
        &self.timeouts
    }

    /// Interval records so far (the bytes delivered in each are the sink's).
    pub fn intervals(&self) -> &[IntervalRecord] {
        self.intervals.records()
    }

    /// The controller's observer.
    pub fn observer(&self) -> &O {
        &self.observer
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
        self.timer.rto(&self.cfg)
    }

    /// What loss recovery hears of time at `now`.
    fn clock(&self, now: SimTime) -> Clock {
        Clock {
            now,
            srtt: self.timer.srtt(),
            min_rtt: self.timer.min_rtt(),
            rto_at: self.timer.deadline(),
        }
    }

    fn instant(&self, t: SimTime) -> Instant {
        t.to_instant(self.epoch)
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
        let sp = &self.space;
        let flight = sp.max - sp.una;
        let cwnd_room = flight + sp.seg <= self.cc.window();
        let rwnd_room = sp.max + sp.seg <= sp.una + sp.rwnd.max(sp.seg);
        let data = sp.end.is_none_or(|e| sp.max < e);
        cwnd_room && !(rwnd_room && data)
    }

    fn stopped(&mut self, now: SimTime) {
        if let Amount::Until(stop) = self.amount
            && self.space.end.is_none()
            && now >= stop
        {
            self.space.end = Some(self.space.max);
        }
    }

    fn finish_if_done(&mut self, now: SimTime) {
        if self.stats.finished_secs.is_none() && self.space.end.is_some_and(|e| self.space.una >= e) {
            self.stats.finished_secs = Some(now.as_secs_f64());
            self.finished_at = Some(now);
            self.timer.stop();
            self.close_interval(now, true);
        }
    }

    fn close_interval(&mut self, at: SimTime, last: bool) {
        let (srtt, min_rtt) = (self.timer.srtt(), self.timer.min_rtt());
        self.intervals.close(at, last, self.cc.as_ref(), srtt, min_rtt);
    }

    fn advance(&mut self, now: SimTime) {
        while let Some(b) = self.intervals.next_boundary()
            && b <= now
            && self.stats.finished_secs.is_none()
        {
            self.close_interval(b, false);
        }
        self.stopped(now);
    }

    fn observe(&mut self, now: SimTime) {
        if now >= self.start {
            self.observer.observe(now, self.cc.as_ref());
        }
    }

    fn congestion(&mut self, now: SimTime, kind: CongestionKind, lost_bytes: u64) {
        // The TCP model decides when the window is reduced (once per fast
        // recovery, every timeout), so the event refers to `now`: the
        // controller's own once-per-RTT filter never swallows it.
        let at = self.instant(now);
        self.cc.on_congestion(at, &Congestion::new(kind, at, lost_bytes));
        self.intervals.events += 1;
    }

    fn restart_timer(&mut self, now: SimTime) {
        self.timer.restart(now, &self.cfg);
    }

    fn rtt_sample(&mut self, r: Duration) {
        self.timer.sample(r);
        self.stats.srtt_secs = self.timer.srtt().unwrap_or_default().as_secs_f64();
    }

    fn on_ack_packet(&mut self, now: SimTime, a: AckPacket) {
        self.stats.acks_received += 1;
        self.space.rwnd = a.rwnd;
        if a.ack > self.space.max {
            return; // acknowledges data never sent: ignore
        }
        self.recovery.on_ack_begin(now, a.dup);
        let (sack_acks, recovery) = (self.sack_acks, self.cfg.controller_recovery);
        let mut newly = std::mem::take(&mut self.acked);
        newly.clear();
        // RFC 6937 §3 DeliveredData: "change_in(snd.una) + change_in(SACKd)",
        // that is, the bytes newly SACKed plus those the cumulative ACK
        // covers that no SACK had reported.
        let mut delivered = 0;
        self.recovery.on_sack_blocks(&mut self.space, &a.sack, &mut |s| {
            delivered += s.len;
            if sack_acks {
                newly.push((s.reported_sent(recovery), s.len));
            }
        });
        // As the cumulative ACK reports them (`on_new_ack`), with the RTT
        // statistics as they stand: a SACK gives no sample.
        self.report_acked(now, &newly);
        self.acked = newly;
        let sp = &self.space;
        if a.ack > sp.una {
            delivered += self.on_new_ack(now, a.ack, a.tsecr.filter(|_| self.cfg.timestamps));
        } else if a.ack == sp.una && sp.max > sp.una && self.recovery.counts_duplicate(a.dup) {
            self.on_dupack(now);
        }
        let clock = self.clock(now);
        let newly = self.recovery.after_ack(&mut self.space, &self.cfg, clock);
        self.intervals.lost += newly;
        self.lost_outside_recovery(now, newly);
        if self.recovery.take_probe_repair() {
            // RFC 8985 §7.4.2: the tail loss probe repaired a loss; the
            // window is reduced as for a loss, without fast recovery.
            self.congestion(now, CongestionKind::Loss, self.space.seg);
        }
        if self.prr.is_active() {
            if self.space.in_recovery {
                self.prr.on_ack(delivered, self.space.board.pipe(), self.space.seg);
            } else {
                self.prr.leave();
            }
        }
        if self.sack_acks && newly > 0 {
            // A controller that counts SACKs hears of every segment RFC 6675
            // declares lost, as QUIC reports every lost packet (RFC 9002
            // §6.1), not only of the one that started the recovery. The
            // event names a segment sent before the recovery began, so it
            // starts no new recovery period.
            let sent = self.space.board.front().map_or(now, |s| s.first_sent);
            let (at, sent) = (self.instant(now), self.instant(sent));
            let lost = newly * self.space.seg;
            self.cc
                .on_congestion(at, &Congestion::new(CongestionKind::Loss, sent, lost));
        }
        if a.ece {
            self.on_ece(now);
        }
        let flight = self.space.max - self.space.una;
        self.cc.on_end_acks(self.instant(now), flight, false);
        self.finish_if_done(now);
    }

    /// An ACK with ECE (RFC 3168 §6.1.2), after its cumulative ACK and
    /// duplicate-ACK processing: at most one reduction per window of data
    /// and none in loss recovery ([`EcnSender::reacts`]). The reduction is
    /// the controller's congestion event of kind `Ecn`, the one the QUIC
    /// adapter signals for a CE count (RFC 9002 §7.1): each controller
    /// reduces as it does for a loss, and nothing is retransmitted. The
    /// controller's recovery period that the event opens ends by RFC 9002
    /// §7.3.2's rule, when a segment sent after the reduction is
    /// acknowledged: the one that carried CWR, a window later, when the
    /// next ECE may be answered again. No fast recovery runs, so nothing
    /// calls `on_recovery_end`.
    fn on_ece(&mut self, now: SimTime) {
        self.stats.ece_acks += 1;
        if self.ecn.reacts(self.space.una, self.space.in_recovery) {
            self.stats.ecn_reductions += 1;
            self.congestion(now, CongestionKind::Ecn, 0);
            self.ecn.reduced(self.space.max);
        }
    }

    /// Tells the controller of each newly acknowledged segment, as
    /// (what it hears as the send time, bytes), with the RTT statistics as
    /// they stand now.
    fn report_acked(&mut self, now: SimTime, segments: &[(SimTime, u64)]) {
        if segments.is_empty() {
            return;
        }
        let rtt = self.timer.rtt_sample();
        let at = self.instant(now);
        let app_limited = self.app_limited();
        for &(sent, bytes) in segments {
            let sent = self.instant(sent);
            self.cc
                .on_ack(at, &Ack::new(sent, bytes, rtt).with_app_limited(app_limited));
        }
    }

    /// A cumulative ACK that advances the window to `ack`, echoing `tsecr`
    /// if timestamps are on; returns the bytes it covers that no SACK block
    /// had reported.
    fn on_new_ack(&mut self, now: SimTime, ack: u64, tsecr: Option<u64>) -> u64 {
        let acked = ack - self.space.una;
        // Karn's rule (RFC 6298 §3): no sample when any newly acked segment
        // was resent. RTT samples follow it whatever `reported_sent` says.
        let mut any_retx = false;
        let mut newest = None;
        let mut covered = std::mem::take(&mut self.acked);
        covered.clear();
        let mut unsacked = 0;
        let (sack_acks, recovery) = (self.sack_acks, self.cfg.controller_recovery);
        let mut seq = self.space.una;
        let rack = &mut self.recovery;
        self.space.board.pop_acked(ack, |s| {
            rack.on_cum_acked(seq, s);
            seq += s.len;
            any_retx |= s.retx;
            if !s.sacked {
                unsacked += s.len;
            }
            newest = Some(s.sent);
            if !(sack_acks && s.sacked) {
                covered.push((s.reported_sent(recovery), s.len));
            }
        });
        if let Some(ts) = tsecr {
            // RFC 7323 §4.1: every ACK that advances the window gives a
            // sample from its echo; no ambiguity, so Karn's rule is moot.
            self.rtt_sample(Duration::from_nanos(now.as_nanos().saturating_sub(ts)));
        } else if !any_retx && let Some(sent) = newest {
            self.rtt_sample(now.saturating_duration_since(sent));
        }
        self.report_acked(now, &covered);
        self.acked = covered;
        let sp = &mut self.space;
        sp.una = ack;
        sp.nxt = sp.nxt.max(ack);
        self.stats.bytes_acked = ack;
        self.stats.consecutive_timeouts = 0;
        let partial = sp.in_recovery && ack < sp.recover;
        let was_in_recovery = sp.in_recovery;
        let restart = self.recovery.on_new_ack(sp, acked, partial);
        if was_in_recovery && !sp.in_recovery && self.cfg.controller_recovery == crate::ControllerRecovery::Tcp {
            // After this ACK's own `on_ack` calls: the ACK that ends fast
            // recovery does not grow the window (RFC 6582 §3.2 step 3 sets it
            // to ssthresh), the next one may.
            self.cc.on_recovery_end(self.instant(now));
        }
        self.space.dupacks = 0;
        // RFC 6298 §5.2–5.3 (and the rule set's exceptions).
        if self.space.una >= self.space.max {
            self.timer.stop();
        } else if restart {
            self.restart_timer(now);
        }
        unsacked
    }

    fn on_dupack(&mut self, now: SimTime) {
        self.space.dupacks += 1;
        if self.space.in_recovery {
            self.recovery.on_recovery_dupack(&mut self.space);
            return;
        }
        let loss = self.recovery.detects_loss(&mut self.space, &self.cfg);
        if self.space.dupacks < self.cfg.dupack_threshold && !loss {
            self.recovery.on_early_dupack(&mut self.space, &self.cfg);
            return;
        }
        // RFC 6582 §3.2 step 2 and §4 (and RFC 6675 §5): no new recovery
        // while the cumulative ACK is below `recover` (set by a timeout or a
        // recovery). Reno applies it too, as ns-2's `bugFix_` does.
        if self.space.una < self.space.recover {
            return;
        }
        self.intervals.lost += 1;
        self.enter_recovery(now);
    }

    /// A rule set that detects loss by itself (RACK, RFC 8985 §6.2) declared
    /// `newly` segments lost: outside recovery, recovery begins (RFC 8985
    /// §6.2 step 5 and §9.2, with one window reduction per recovery
    /// episode, as RFC 6675 §5 step 4 and RFC 6582 §3.2 step 2 allow).
    fn lost_outside_recovery(&mut self, now: SimTime, newly: u64) {
        if newly > 0
            && self.recovery.enters_on_loss()
            && !self.space.in_recovery
            && self.space.una >= self.space.recover
        {
            self.enter_recovery(now);
        }
    }

    /// Fast recovery begins: one congestion event, the timer, the rule
    /// set's first retransmission, PRR.
    fn enter_recovery(&mut self, now: SimTime) {
        self.space.in_recovery = true;
        self.space.recover = self.space.max;
        self.stats.fast_retransmits += 1;
        let mut lost_bytes = self.space.seg_len(self.space.una);
        if self.sack_acks {
            // Every segment RFC 6675 holds lost now (see `on_ack_packet`).
            lost_bytes = lost_bytes.max(self.space.board.lost() * self.space.seg);
        }
        self.congestion(now, CongestionKind::Loss, lost_bytes);
        self.ecn.reduced(self.space.max);
        if self.cfg.restart_timer_on_fast_retransmit {
            // ns-2's `reset_rtx_timer(1, 0)` in its duplicate-ACK action;
            // Linux re-arms it when it resends the head of the queue. Not
            // RFC 6298 §5, which restarts it only on new ACKs and timeouts.
            self.restart_timer(now);
        }
        self.recovery.on_enter(&mut self.space, &self.cfg);
        if self.cfg.prr {
            // RFC 6937 §3: ssthresh is the controller's window after the
            // reduction just made; RecoverFS the flight now.
            let flight = self.space.max - self.space.una;
            self.prr.enter(self.cc.window(), flight);
        }
    }

    /// RFC 6298 §5.4–5.6: the timer expired.
    fn on_rto(&mut self, now: SimTime) {
        self.stats.timeouts += 1;
        self.stats.consecutive_timeouts += 1;
        self.stats.max_consecutive_timeouts = self.stats.max_consecutive_timeouts.max(self.stats.consecutive_timeouts);
        self.intervals.lost += 1;
        let flight = self.space.max - self.space.una;
        self.congestion(now, CongestionKind::PersistentCongestion, flight);
        self.ecn.reduced(self.space.max);
        // RFC 6298 §5.5: back off; Karn's rule keeps it until a valid sample.
        self.timer.back_off(self.cfg.max_backoff);
        // RFC 6937 applies in fast recovery only; after a timeout the
        // controller's window governs.
        self.prr.leave();
        let sp = &mut self.space;
        sp.in_recovery = false;
        sp.dupacks = 0;
        sp.rexmit = None;
        // RFC 6582 §4 (and RFC 6675 §5.1): no fast retransmit for what was sent before.
        sp.recover = sp.max;
        self.recovery.on_timeout(sp);
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

    /// The rule set's own timer (RACK's reordering timer, RFC 8985 §6.3;
    /// the tail loss probe's PTO, §7.3).
    fn on_recovery_timer(&mut self, now: SimTime) {
        let clock = self.clock(now);
        let out = self.recovery.on_timer(&mut self.space, &self.cfg, clock);
        self.intervals.lost += out.lost;
        self.lost_outside_recovery(now, out.lost);
        if let Some(seq) = out.probe {
            self.space.rexmit = Some(seq);
            self.stats.tail_loss_probes += 1;
            // RFC 8985 §7.3: after the probe, "the sender MUST arm the RTO
            // timer, not the PTO timer".
            self.restart_timer(now);
        }
    }

    /// The segment to send now, if the windows allow one.
    fn next_segment(&mut self) -> Option<u64> {
        let sp = &mut self.space;
        if let Some(seq) = sp.rexmit.take()
            && seq >= sp.una
            && (seq < sp.max || sp.new_data() == Some(seq))
        {
            // A retransmission, or a tail loss probe of new data (RFC 8985 §7.3).
            return Some(seq);
        }
        // RFC 6937 §3: in fast recovery "cwnd = pipe + sndcnt".
        let cwnd = if self.prr.is_active() {
            self.prr.window(sp.board.pipe())
        } else {
            self.cc.window()
        };
        self.recovery.next_segment(sp, cwnd)
    }

    fn send(&mut self, now: SimTime, seq: u64) -> Datagram {
        let sp = &mut self.space;
        let len = sp.seg_len(seq);
        let new_data = seq >= sp.max;
        if new_data {
            sp.board.push(now, len);
            sp.max = seq + len;
            self.intervals.written += len;
        } else {
            sp.board.resend(seq, now);
            self.stats.retransmits += 1;
        }
        if seq == sp.nxt {
            sp.nxt = seq + len;
        }
        self.stats.segments_sent += 1;
        self.prr.on_sent(len);
        self.cc.on_sent(self.instant(now), len);
        // RFC 6298 §5.1: "Every time a packet containing data is sent
        // (including a retransmission), if the timer is not running, start it".
        if self.timer.deadline().is_none() {
            self.restart_timer(now);
        }
        let clock = self.clock(now);
        self.recovery.on_sent(&self.space, &self.cfg, clock);
        let tsval = self.cfg.timestamps.then(|| now.as_nanos());
        // RFC 3168 §6.1.2, §6.1.5: ECT(0) and CWR on new data only.
        let cwr = self.ecn.take_cwr(new_data);
        Datagram::new(self.dst, self.flow, encode_data(seq, len as usize, tsval, cwr))
            .with_ecn(self.ecn.codepoint(new_data))
    }
}

impl<O: CcObserver> Host for TcpSender<O> {
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
        let pacing = Pacer::paces(&self.cfg, self.cc.as_ref());
        let paced = pacing && self.pacer.early(now);
        self.pacer.set_waiting(false);
        let rexmit = self.space.rexmit;
        let seq = self.next_segment()?;
        if paced {
            // Ready but not yet due: keep the segment for the pacer's time.
            self.space.rexmit = rexmit;
            self.pacer.set_waiting(true);
            return None;
        }
        let d = self.send(now, seq);
        if pacing {
            let len = self.space.seg_len(seq);
            self.pacer.sent(now, len, self.cc.as_ref(), self.timer.srtt());
        }
        Some(d)
    }

    fn poll_timeout(&mut self) -> Option<SimTime> {
        if self.stats.finished_secs.is_some() {
            return None;
        }
        let stop = match self.amount {
            Amount::Until(t) if self.space.end.is_none() => Some(t),
            _ => None,
        };
        let start = (self.space.max == 0).then_some(self.start);
        // The earliest of the deadlines that are set (called after every
        // event: a chain of `Option` minimums, no iterator).
        let earliest = |a: Option<SimTime>, b: Option<SimTime>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, None) => a,
            (None, b) => b,
        };
        let t = earliest(self.timer.deadline(), self.recovery.deadline());
        let t = earliest(t, self.intervals.next_boundary());
        let t = earliest(t, stop);
        let t = earliest(t, start);
        earliest(t, self.pacer.wake())
    }

    fn on_timeout(&mut self, now: SimTime) {
        self.advance(now);
        if self.recovery.deadline().is_some_and(|t| t <= now) && self.stats.finished_secs.is_none() {
            self.on_recovery_timer(now);
        }
        if self.timer.deadline().is_some_and(|t| t <= now) {
            if self.space.una < self.space.max {
                self.on_rto(now);
            } else {
                self.timer.stop();
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
    fn a_controller_with_its_own_rate_is_paced_at_it() {
        // 8 Mbit/s = 1 MB/s: one 1000-byte segment per millisecond, from
        // the first segment on (no RTT sample needed), with `pacing` off.
        let cc = "fixed:rate=8Mbit/s"
            .parse::<tput_cc::ControllerSpec>()
            .unwrap()
            .build(1000);
        assert_eq!(cc.pacing_rate(), Some(1_000_000));
        let t = TcpTransfer::new(Addr::default(), 1, SimTime::ZERO, Amount::Bytes(100_000));
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
