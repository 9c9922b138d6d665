//! RACK-TLP (RFC 8985): time-based loss detection over RFC 6675's
//! scoreboard, and the tail loss probe. Linux's loss detection since 4.18.
//!
//! RACK ("recent acknowledgement", §6) remembers when the latest-sent
//! segment that has been delivered was sent (`RACK.xmit_ts`); any segment
//! sent a reordering window (`RACK.reo_wnd`) or more before it and still
//! not delivered is lost (§6.2 step 5). Because the rule reads transmission
//! times, not sequence numbers, a retransmission is judged like any other
//! segment: when a segment sent after it is delivered and the window has
//! passed, it is lost again and resent, one round trip later, where RFC
//! 6675 waits for the retransmission timeout. A segment whose window has not
//! passed yet arms the RACK timer (§6.3).
//!
//! TLP (§7): when the flight has drawn no ACK for a probe timeout (PTO,
//! about two round trips), one segment goes out beyond the window (new data
//! if there is any, else the last segment), so that the ACK it draws lets
//! RACK find a tail loss without waiting for the retransmission timeout.
//!
//! What the sender sends in recovery is RFC 6675's `NextSeg` as with SACK
//! recovery (holes first, then new data, as `pipe` allows), with PRR's
//! window when PRR is on (RFC 8985 §9.2 and Linux pair RACK with PRR).

use std::time::Duration;

use tput_netsim::SimTime;

use super::{Clock, LossRecovery, SeqSpace, TimerOutcome, sack::Sack};
use crate::TcpConfig;
use crate::sender::scoreboard::Seg;

/// RFC 8985 §6.2 step 4: how many recoveries a reordering window widened by
/// a DSACK lasts ("RACK.reo_wnd_persist = 16").
const REO_WND_PERSIST: u32 = 16;

/// A segment this ACK delivered (cumulatively or by SACK): RFC 8985 §6.1's
/// `Segment.xmit_ts`, `Segment.end_seq` and `Segment.retransmitted`.
#[derive(Debug, Clone, Copy)]
struct Delivered {
    xmit_ts: SimTime,
    end_seq: u64,
    retransmitted: bool,
}

/// RFC 8985 §6.2 `RACK_sent_after(t1, seq1, t2, seq2)`: sent later, the
/// higher sequence number breaking a tie of times.
fn sent_after(t1: SimTime, seq1: u64, t2: SimTime, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}

/// RACK-TLP's state (RFC 8985 §6.1, §7.1).
#[derive(Debug)]
pub(super) struct Rack {
    /// `RACK.xmit_ts` and `RACK.end_seq`: the latest-sent segment delivered.
    latest: Option<(SimTime, u64)>,
    /// `RACK.rtt`: the round trip of that segment.
    rtt: Duration,
    /// `RACK.fack`: the highest `end_seq` delivered.
    fack: u64,
    /// `RACK.reord`: reordering has been seen.
    reord: bool,
    /// `RACK.dsack_round`: `SND.NXT` when the last DSACK widened the window.
    dsack_round: Option<u64>,
    /// `RACK.reo_wnd_mult`.
    reo_wnd_mult: u32,
    /// `RACK.reo_wnd_persist`.
    reo_wnd_persist: u32,
    /// The RACK timer (§6.3), if armed.
    reo_timer: Option<SimTime>,
    /// The PTO timer (§7.2), if armed.
    pto: Option<SimTime>,
    /// `TLP.end_seq`: `SND.NXT` after the probe, while a probe is out.
    tlp_end: Option<u64>,
    /// `TLP.is_retrans`: the probe was a retransmission.
    tlp_is_retrans: bool,
    /// The probe repaired a loss (§7.4.2): the sender reduces its window.
    tlp_repaired: bool,
    /// This ACK's time, and whether it reports a duplicate (the sink's
    /// DSACK, RFC 2883).
    now: SimTime,
    dsack: bool,
    /// The segments this ACK delivered.
    delivered: Vec<Delivered>,
}

impl Default for Rack {
    fn default() -> Self {
        Self {
            latest: None,
            rtt: Duration::ZERO,
            fack: 0,
            reord: false,
            dsack_round: None,
            reo_wnd_mult: 1,
            reo_wnd_persist: 0,
            reo_timer: None,
            pto: None,
            tlp_end: None,
            tlp_is_retrans: false,
            tlp_repaired: false,
            now: SimTime::ZERO,
            dsack: false,
            delivered: Vec::new(),
        }
    }
}

impl Rack {
    fn deliver(&mut self, seq: u64, s: &Seg) {
        self.delivered.push(Delivered {
            xmit_ts: s.sent,
            end_seq: seq + s.len,
            retransmitted: s.retx,
        });
    }

    /// RFC 8985 §6.2 steps 2-3, `RACK_update()` and
    /// `RACK_detect_reordering()`, over the segments this ACK delivered, in
    /// the order they were sent.
    fn update(&mut self, min_rtt: Option<Duration>) {
        let mut delivered = std::mem::take(&mut self.delivered);
        delivered.sort_by_key(|d| (d.xmit_ts, d.end_seq));
        for d in &delivered {
            let rtt = self.now.saturating_duration_since(d.xmit_ts);
            // Step 2: "If Segment.retransmitted is TRUE: ... If rtt <
            // min_RTT: Return" — the ACK is for the original transmission,
            // so the retransmission's time says nothing. (The model's
            // timestamp echo names the segment that last advanced the
            // window, not this one, so the TSecr test is not used.)
            if d.retransmitted && min_rtt.is_some_and(|m| rtt < m) {
                continue;
            }
            self.rtt = rtt;
            if self.latest.is_none_or(|(t, e)| sent_after(d.xmit_ts, d.end_seq, t, e)) {
                self.latest = Some((d.xmit_ts, d.end_seq));
            }
        }
        // Step 3: "If Segment.end_seq > RACK.fack: RACK.fack =
        // Segment.end_seq; Else if Segment.end_seq < RACK.fack AND
        // Segment.retransmitted is FALSE: RACK.reord = TRUE".
        for d in &delivered {
            if d.end_seq > self.fack {
                self.fack = d.end_seq;
            } else if d.end_seq < self.fack && !d.retransmitted {
                self.reord = true;
            }
        }
        delivered.clear();
        self.delivered = delivered;
    }

    /// RFC 8985 §6.2 step 4, `RACK_update_reo_wnd()`'s window (the DSACK
    /// bookkeeping is in `on_ack_begin` and at the end of recovery): zero
    /// while no reordering has been seen and either recovery is on or
    /// `DupThresh` segments are SACKed (RACK then acts as RFC 6675's
    /// duplicate threshold does); else `min_RTT / 4` times the multiplier,
    /// at most `SRTT`.
    fn reo_wnd(&self, sp: &SeqSpace, cfg: &TcpConfig, clock: Clock) -> Duration {
        if !self.reord && (sp.in_recovery || sp.board.sacked_count() >= u64::from(cfg.dupack_threshold)) {
            return Duration::ZERO;
        }
        let min_rtt = clock.min_rtt.unwrap_or_default();
        let w = min_rtt * self.reo_wnd_mult / 4;
        clock.srtt.map_or(w, |s| w.min(s))
    }

    /// RFC 8985 §6.2 step 5, `RACK_detect_loss()`, and §6.3's timer: every
    /// segment not delivered and sent before `RACK.xmit_ts` whose
    /// `xmit_ts + RACK.rtt + RACK.reo_wnd` has passed is lost; the others
    /// arm the RACK timer for the latest of their deadlines ("timeout =
    /// max(remaining, timeout)"). Returns how many were newly declared lost.
    fn detect_loss(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig, clock: Clock) -> u64 {
        self.reo_timer = None;
        let Some((xmit_ts, end_seq)) = self.latest else {
            return 0;
        };
        let reo_wnd = self.reo_wnd(sp, cfg, clock);
        let mut lost = Vec::new();
        let mut timer: Option<SimTime> = None;
        for (seq, s) in sp.board.iter() {
            // Delivered, or already lost and not yet resent (§6.2: "If
            // Segment.lost is TRUE and not retransmitted, skip").
            if s.sacked || s.lost {
                continue;
            }
            if !sent_after(xmit_ts, end_seq, s.sent, seq + s.len) {
                continue;
            }
            let deadline = s.sent + self.rtt + reo_wnd;
            if deadline <= clock.now {
                lost.push(seq);
            } else {
                timer = timer.max(Some(deadline));
            }
        }
        self.reo_timer = timer;
        lost.into_iter().filter(|&seq| sp.board.mark_lost_at(seq)).count() as u64
    }

    /// RFC 8985 §7.2: arm the PTO when the connection is open (not in
    /// recovery, no RACK timer pending), data is in flight and no probe is
    /// out; "PTO = 2 * SRTT", plus the sink's worst-case delayed-ACK time
    /// when one segment is in flight, 1 s (the initial RTO) before an RTT
    /// sample, and never after the RTO would fire.
    fn arm_pto(&mut self, sp: &SeqSpace, cfg: &TcpConfig, clock: Clock) {
        self.pto = None;
        if sp.in_recovery || self.tlp_end.is_some() || self.reo_timer.is_some() || sp.max == sp.una {
            return;
        }
        let pto = match clock.srtt {
            Some(srtt) => {
                let mut pto = 2 * srtt;
                if sp.max - sp.una <= sp.seg {
                    // "If FlightSize is one segment, PTO += WCDelAckT": the
                    // model knows its sink's delayed-ACK timer (none: zero).
                    pto += cfg.delayed_ack.unwrap_or_default();
                }
                pto
            }
            None => cfg.initial_rto,
        };
        let at = clock.now + pto;
        self.pto = Some(clock.rto_at.map_or(at, |rto| at.min(rto)));
    }

    /// RFC 8985 §7.4.2, `TLP_process_ack()`: once the cumulative ACK covers
    /// the probe, a retransmitted probe repaired a loss (the window is
    /// reduced) unless the sink reports it a duplicate (both copies
    /// arrived); a new-data probe leaves any loss to RACK.
    fn process_tlp_ack(&mut self, sp: &SeqSpace) {
        let Some(end) = self.tlp_end else { return };
        if sp.una < end {
            return;
        }
        if !self.tlp_is_retrans || self.dsack {
            self.tlp_end = None;
        } else if sp.una > end {
            // "The loss probe repaired a loss": reduce, once.
            self.tlp_repaired = true;
            self.tlp_end = None;
        }
        // `una == end` without a DSACK: wait for the DSACK the original's
        // arrival may still bring, or for an ACK beyond the probe.
    }
}

impl LossRecovery for Rack {
    fn on_ack_begin(&mut self, now: SimTime, dsack: bool) {
        self.now = now;
        self.dsack = dsack;
    }

    fn on_sack_blocks(&mut self, sp: &mut SeqSpace, blocks: &[(u64, u64)], newly: &mut dyn FnMut(&Seg)) {
        for &(start, end) in blocks {
            let mut delivered = Vec::new();
            sp.board.sack_seq(start, end, |seq, s| {
                newly(s);
                delivered.push((seq, *s));
            });
            for (seq, s) in delivered {
                self.deliver(seq, &s);
            }
        }
    }

    fn on_cum_acked(&mut self, seq: u64, s: &Seg) {
        if !s.sacked {
            self.deliver(seq, s);
        }
    }

    fn counts_duplicate(&self, _dup: bool) -> bool {
        // RFC 8985 §6: loss is detected by time, not by counting duplicate
        // ACKs; recovery starts when RACK declares a segment lost.
        false
    }

    fn enters_on_loss(&self) -> bool {
        true
    }

    fn on_new_ack(&mut self, sp: &mut SeqSpace, _acked: u64, partial: bool) -> bool {
        // As RFC 6675 §5: recovery ends when the cumulative ACK reaches
        // RecoveryPoint.
        if sp.in_recovery && !partial {
            sp.in_recovery = false;
            // RFC 8985 §6.2 step 4: "Else if exiting Fast or RTO recovery:
            // RACK.reo_wnd_persist -= 1; If RACK.reo_wnd_persist <= 0:
            // RACK.reo_wnd_mult = 1".
            self.reo_wnd_persist = self.reo_wnd_persist.saturating_sub(1);
            if self.reo_wnd_persist == 0 {
                self.reo_wnd_mult = 1;
            }
        }
        true
    }

    fn on_enter(&mut self, sp: &mut SeqSpace, _cfg: &TcpConfig) {
        // The first hole RACK declared lost goes out at once, whatever the
        // window (RFC 6675 §5 step 4.3; Linux's PRR lets the fast
        // retransmit out too). The PTO is not armed in recovery (§7.2),
        // and a probe still out is forgotten.
        sp.rexmit = sp.board.first_hole();
        self.pto = None;
        self.tlp_end = None;
    }

    fn on_timeout(&mut self, sp: &mut SeqSpace) {
        // RFC 6675 §5.1 as with SACK recovery: everything not SACKed is
        // lost and resent in order; RACK goes on judging the
        // retransmissions (RFC 8985 §6.3 runs in RTO recovery too).
        sp.board.all_lost();
        sp.in_recovery = true;
        self.pto = None;
        self.reo_timer = None;
        self.tlp_end = None;
    }

    fn after_ack(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig, clock: Clock) -> u64 {
        // RFC 8985 §6.2 step 4's DSACK adaptation: "If RACK.dsack_round is
        // not None AND SND.UNA >= RACK.dsack_round: RACK.dsack_round = None;
        // If RACK.dsack_round is None AND ACK has a DSACK option:
        // RACK.dsack_round = SND.NXT; RACK.reo_wnd_mult += 1;
        // RACK.reo_wnd_persist = 16".
        if self.dsack_round.is_some_and(|r| sp.una >= r) {
            self.dsack_round = None;
        }
        if self.dsack_round.is_none() && self.dsack {
            self.dsack_round = Some(sp.max);
            self.reo_wnd_mult += 1;
            self.reo_wnd_persist = REO_WND_PERSIST;
        }
        self.update(clock.min_rtt);
        self.process_tlp_ack(sp);
        let lost = self.detect_loss(sp, cfg, clock);
        self.arm_pto(sp, cfg, clock);
        lost
    }

    fn take_probe_repair(&mut self) -> bool {
        std::mem::take(&mut self.tlp_repaired)
    }

    fn deadline(&self) -> Option<SimTime> {
        [self.reo_timer, self.pto].into_iter().flatten().min()
    }

    fn on_timer(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig, clock: Clock) -> TimerOutcome {
        let now = clock.now;
        if self.reo_timer.is_some_and(|t| t <= now) {
            // RFC 8985 §6.3: "When the RACK reordering timer expires: ...
            // RACK_detect_loss_and_arm_timer()", then recovery retransmits.
            let lost = self.detect_loss(sp, cfg, clock);
            return TimerOutcome { lost, probe: None };
        }
        if self.pto.is_none_or(|t| t > now) {
            return TimerOutcome::default();
        }
        self.pto = None;
        // RFC 8985 §7.3: "If such a segment is available and the receive
        // window allows, send one new segment ... Else, retransmit the
        // highest-sequence segment sent so far"; `TLP.end_seq = SND.NXT`.
        let probe = if let Some(seq) = sp.new_data() {
            self.tlp_is_retrans = false;
            self.tlp_end = Some(seq + sp.seg_len(seq));
            Some(seq)
        } else {
            let last = sp.board.iter().last().filter(|(_, s)| !s.sacked).map(|(seq, _)| seq);
            self.tlp_is_retrans = true;
            self.tlp_end = last.map(|_| sp.max);
            last
        };
        TimerOutcome { lost: 0, probe }
    }

    fn on_sent(&mut self, sp: &SeqSpace, cfg: &TcpConfig, clock: Clock) {
        // RFC 8985 §7.2: (re)arm the PTO after new data goes out.
        self.arm_pto(sp, cfg, clock);
    }

    fn next_segment(&self, sp: &SeqSpace, cwnd: u64) -> Option<u64> {
        Sack.next_segment(sp, cwnd)
    }
}
