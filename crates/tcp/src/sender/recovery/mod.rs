//! Loss recovery: one trait, [`LossRecovery`], with an implementation per
//! rule set — Reno (RFC 5681 §3.2), NewReno (RFC 6582 §3.2), SACK (RFC
//! 6675), RACK-TLP (RFC 8985) and go-back-N — over the sequence space they share
//! ([`SeqSpace`]). The sender calls the trait at each step of an ACK, a
//! duplicate ACK, a timeout and a transmission; the rules that differ
//! between the sets live in their implementations.
//! How much a set may send in fast
//! recovery is the window the sender passes it: the controller's, or PRR's
//! (RFC 6937, the sender's `prr` module). RACK-TLP (RFC 8985) also has
//! timers of its own, which the sender runs beside the RTO
//! ([`LossRecovery::deadline`]).

use std::fmt::Debug;
use std::time::Duration;

use tput_netsim::SimTime;

use super::scoreboard::{Scoreboard, Seg};
use crate::{Recovery, TcpConfig};

mod gbn;
mod newreno;
mod rack;
mod reno;
mod sack;

/// What the sender knows of time when it asks a rule set that reads it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Clock {
    /// Now.
    pub(super) now: SimTime,
    /// RFC 6298 `SRTT`, once there is a sample.
    pub(super) srtt: Option<Duration>,
    /// The smallest RTT sample so far.
    pub(super) min_rtt: Option<Duration>,
    /// When the retransmission timer fires, if it runs.
    pub(super) rto_at: Option<SimTime>,
}

/// What a rule set's own timer did ([`LossRecovery::on_timer`]).
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct TimerOutcome {
    /// Segments newly declared lost.
    pub(super) lost: u64,
    /// A segment to send at once beyond the window (a tail loss probe):
    /// below `max`, a retransmission; at `max`, new data.
    pub(super) probe: Option<u64>,
}

/// The sequence space of the sender, which loss recovery reads and moves.
#[derive(Debug, Clone)]
pub(super) struct SeqSpace {
    /// Segment size, bytes.
    pub(super) seg: u64,
    /// Total bytes, once known.
    pub(super) end: Option<u64>,
    /// RFC 9293 `SND.UNA`: the first byte not acknowledged.
    pub(super) una: u64,
    /// The next byte to send in order (behind `max` after a go-back-N rewind).
    pub(super) nxt: u64,
    /// One past the highest byte sent.
    pub(super) max: u64,
    /// The sink's receive window, bytes.
    pub(super) rwnd: u64,
    /// The segments from `una` to `max`.
    pub(super) board: Scoreboard,
    /// A segment to send at once (fast retransmit, partial ACK).
    pub(super) rexmit: Option<u64>,
    /// In fast recovery (or, with SACK, in RFC 6675 §5.1's recovery after a timeout).
    pub(super) in_recovery: bool,
    /// RFC 6582 `recover` / RFC 6675 `RecoveryPoint`.
    pub(super) recover: u64,
    /// Duplicate ACKs in a row.
    pub(super) dupacks: u32,
}

impl SeqSpace {
    pub(super) fn new(seg: u64, end: Option<u64>, rwnd: u64) -> Self {
        Self {
            seg,
            end,
            una: 0,
            nxt: 0,
            max: 0,
            rwnd,
            board: Scoreboard::new(seg),
            rexmit: None,
            in_recovery: false,
            recover: 0,
            dupacks: 0,
        }
    }

    /// Length of the segment at `seq` (the last one may be short).
    pub(super) fn seg_len(&self, seq: u64) -> u64 {
        match self.end {
            Some(end) => self.seg.min(end.saturating_sub(seq)),
            None => self.seg,
        }
    }

    /// Whether `[seq, seq + len)` lies inside the receive window.
    fn rwnd_allows(&self, seq: u64, len: u64) -> bool {
        seq + len <= self.una + self.rwnd.max(self.seg)
    }

    /// The next new segment, if there is data and the receive window has room.
    pub(super) fn new_data(&self) -> Option<u64> {
        let seq = self.max;
        if self.end.is_some_and(|e| seq >= e) {
            return None;
        }
        let len = self.seg_len(seq);
        (len > 0 && self.rwnd_allows(seq, len)).then_some(seq)
    }

    /// The next segment of a window-based sender (Reno, NewReno, go-back-N):
    /// none while the flight fills the window plus `inflation` (RFC 5681
    /// §3.2's artificial inflation and RFC 3042's allowance); else the next
    /// segment to resend after a go-back-N rewind, else new data.
    fn next_in_window(&self, cwnd: u64, inflation: u64) -> Option<u64> {
        let flight = self.nxt - self.una;
        if flight > 0 && flight + self.seg > cwnd + inflation {
            return None;
        }
        if self.nxt < self.max {
            // Go-back-N resend (after a timeout, or a `gbn` fast retransmit).
            let seq = self.nxt;
            return self.rwnd_allows(seq, self.seg_len(seq)).then_some(seq);
        }
        self.new_data()
    }
}

/// One rule set of loss recovery. The sender does what every set does
/// (counting, the controller's events, the timer) and asks the set at each
/// step where they differ.
pub(super) trait LossRecovery: Debug {
    /// An ACK arrived at `now`; `dsack`: it answers a segment the sink
    /// already had (RFC 2883's D-SACK). Before any other call for the ACK.
    fn on_ack_begin(&mut self, _now: SimTime, _dsack: bool) {}

    /// The SACK blocks of an ACK (RFC 2018), before its cumulative ACK is
    /// processed; `newly` hears of each segment a block covers for the
    /// first time. Ignored by the sets without a scoreboard.
    fn on_sack_blocks(&mut self, _sp: &mut SeqSpace, _blocks: &[(u64, u64)], _newly: &mut dyn FnMut(&Seg)) {}

    /// Segment `seq` left the board under a cumulative ACK (before
    /// [`on_new_ack`](Self::on_new_ack)).
    fn on_cum_acked(&mut self, _seq: u64, _s: &Seg) {}

    /// Whether the sender enters fast recovery when [`after_ack`](Self::after_ack)
    /// or [`on_timer`](Self::on_timer) declares a segment lost outside
    /// recovery (RACK-TLP), rather than on duplicate ACKs.
    fn enters_on_loss(&self) -> bool {
        false
    }

    /// Whether an ACK that does not advance `una` counts as a duplicate
    /// ACK; `dup`: it answers a segment the sink already had.
    fn counts_duplicate(&self, _dup: bool) -> bool {
        true
    }

    /// A cumulative ACK advanced `una` by `acked` bytes (`partial`: in
    /// recovery and below `recover`). Ends recovery (clears
    /// [`SeqSpace::in_recovery`]) or goes on with it; returns whether the
    /// retransmission timer restarts (RFC 6298 §5.3).
    fn on_new_ack(&mut self, sp: &mut SeqSpace, acked: u64, partial: bool) -> bool;

    /// A further duplicate ACK during recovery.
    fn on_recovery_dupack(&mut self, _sp: &mut SeqSpace) {}

    /// Outside recovery, on a duplicate ACK: whether the set holds the
    /// first segment lost whatever the count of duplicates (RFC 6675 §5).
    fn detects_loss(&mut self, _sp: &mut SeqSpace, _cfg: &TcpConfig) -> bool {
        false
    }

    /// A duplicate ACK below the threshold, outside recovery.
    fn on_early_dupack(&mut self, _sp: &mut SeqSpace, _cfg: &TcpConfig) {}

    /// Fast retransmit: recovery begins (the sender has set `recover`).
    fn on_enter(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig);

    /// A retransmission timeout, after the sender left fast recovery.
    fn on_timeout(&mut self, sp: &mut SeqSpace);

    /// After an ACK: segments newly declared lost.
    fn after_ack(&mut self, _sp: &mut SeqSpace, _cfg: &TcpConfig, _clock: Clock) -> u64 {
        0
    }

    /// After [`after_ack`](Self::after_ack): whether a tail loss probe was
    /// found to have repaired a loss (RFC 8985 §7.4.2), for which the
    /// sender reduces its window once, outside fast recovery.
    fn take_probe_repair(&mut self) -> bool {
        false
    }

    /// When the set's own timer fires (RACK's reordering timer, TLP's PTO).
    fn deadline(&self) -> Option<SimTime> {
        None
    }

    /// The set's own timer, at or after [`deadline`](Self::deadline).
    fn on_timer(&mut self, _sp: &mut SeqSpace, _cfg: &TcpConfig, _clock: Clock) -> TimerOutcome {
        TimerOutcome::default()
    }

    /// A segment was sent (the board and `max` already updated).
    fn on_sent(&mut self, _sp: &SeqSpace, _cfg: &TcpConfig, _clock: Clock) {}

    /// The segment to send next (a pending [`SeqSpace::rexmit`] aside), if
    /// the windows allow one; `cwnd` is the controller's window.
    fn next_segment(&self, sp: &SeqSpace, cwnd: u64) -> Option<u64>;
}

/// The rule set `r` names.
pub(super) fn for_config(r: Recovery) -> Box<dyn LossRecovery> {
    match r {
        Recovery::Reno => Box::new(reno::Reno::default()),
        Recovery::NewReno => Box::new(newreno::NewReno::default()),
        Recovery::Sack => Box::new(sack::Sack),
        Recovery::Gbn => Box::new(gbn::Gbn::default()),
        Recovery::Rack => Box::new(rack::Rack::default()),
    }
}

/// RFC 3042 §2: each of the first duplicate ACKs below the threshold lets
/// one segment beyond the window out, the window itself unchanged (the
/// allowance goes with the next new ACK, or becomes fast recovery's
/// inflation).
fn limited_transmit(sp: &SeqSpace, cfg: &TcpConfig, inflation: &mut u64) {
    if cfg.limited_transmit {
        *inflation = u64::from(sp.dupacks) * sp.seg;
    }
}
