//! Proportional Rate Reduction (RFC 6937): how much the sender may send
//! during fast recovery. Without it, RFC 6675 lets the sender out whenever
//! `pipe` is below the reduced window, so it falls silent for about half a
//! round trip and then sends the rest at once; with it, each ACK lets out
//! data in proportion to what the ACK reports delivered (RFC 6937 §3), so
//! the flight falls smoothly to `ssthresh` by the end of recovery, and never
//! below it by more than the reduction bound allows (§3: PRR-SSRB by
//! default, PRR-CRB on request, [`PrrBound`]).
//!
//! It serves any recovery that measures `pipe` (RFC 6675's SACK recovery;
//! RACK-TLP's, RFC 8985 §9.2, names PRR as its reduction too). It is active
//! only in fast recovery: after a timeout the window is the controller's.

use crate::PrrBound;

/// RFC 6937 §3's state, in bytes.
#[derive(Debug, Clone, Default)]
pub(super) struct Prr {
    /// The reduction bound while `pipe` is below `ssthresh`.
    bound: PrrBound,
    /// In a fast recovery that PRR paces.
    active: bool,
    /// RFC 6937 §3 `ssthresh`: the window the controller chose for after
    /// recovery.
    ssthresh: u64,
    /// RFC 6937 §3 `RecoverFS`: the flight size when recovery began.
    recover_fs: u64,
    /// RFC 6937 §3 `prr_delivered`: bytes delivered to the receiver since
    /// recovery began.
    delivered: u64,
    /// RFC 6937 §3 `prr_out`: bytes sent since recovery began.
    out: u64,
    /// What the last ACK's `sndcnt` still lets out, bytes.
    allowance: u64,
}

impl Prr {
    /// PRR with reduction bound `bound`, not active until [`enter`](Self::enter).
    pub(super) fn new(bound: PrrBound) -> Self {
        Self {
            bound,
            ..Self::default()
        }
    }

    /// RFC 6937 §3, at the beginning of recovery: "ssthresh =
    /// CongCtrlAlg() // Target cwnd after recovery; prr_delivered = 0;
    /// prr_out = 0; RecoverFS = snd.nxt - snd.una // FlightSize at the start
    /// of recovery". `ssthresh` is the controller's window after its
    /// reduction.
    pub(super) fn enter(&mut self, ssthresh: u64, flight: u64) {
        *self = Self {
            bound: self.bound,
            active: true,
            ssthresh,
            recover_fs: flight.max(1),
            ..Self::default()
        };
    }

    /// Recovery is over (its end, or a timeout): the controller's window
    /// governs again. RFC 6937 §3 leaves `cwnd` at `ssthresh` after
    /// recovery (the controller's window, which it set on entry).
    pub(super) fn leave(&mut self) {
        self.active = false;
        self.allowance = 0;
    }

    /// Whether PRR governs the window now.
    pub(super) fn is_active(&self) -> bool {
        self.active
    }

    /// On every ACK during recovery, with its `delivered` bytes (RFC 6937 §3:
    /// "DeliveredData = change_in(snd.una) + change_in(SACKd)") and `pipe`
    /// (RFC 6675's, after the ACK); `seg` is the MSS.
    pub(super) fn on_ack(&mut self, delivered: u64, pipe: u64, seg: u64) {
        if !self.active {
            return;
        }
        // RFC 6937 §3: "prr_delivered += DeliveredData".
        self.delivered += delivered;
        let sndcnt = if pipe > self.ssthresh {
            // RFC 6937 §3, Proportional Rate Reduction: "sndcnt =
            // CEIL(prr_delivered * ssthresh / RecoverFS) - prr_out".
            let target = (u128::from(self.delivered) * u128::from(self.ssthresh)).div_ceil(u128::from(self.recover_fs));
            u64::try_from(target).unwrap_or(u64::MAX).saturating_sub(self.out)
        } else {
            let limit = match self.bound {
                // RFC 6937 §3, the reduction bound PRR-SSRB (the RFC's
                // default): "limit = MAX(prr_delivered - prr_out,
                // DeliveredData) + MSS" — slow start back towards
                // ssthresh, at most one segment beyond what was delivered.
                PrrBound::Ssrb => self.delivered.saturating_sub(self.out).max(delivered) + seg,
                // RFC 6937 §3, PRR-CRB: "limit = prr_delivered - prr_out"
                // — strict packet conservation: never more out than in.
                PrrBound::Crb => self.delivered.saturating_sub(self.out),
            };
            // RFC 6937 §3: "sndcnt = MIN(ssthresh - pipe, limit)".
            (self.ssthresh - pipe).min(limit)
        };
        self.allowance = sndcnt;
    }

    /// The window the sender uses now: RFC 6937 §3 "cwnd = pipe + sndcnt",
    /// with what of `sndcnt` is still unsent.
    pub(super) fn window(&self, pipe: u64) -> u64 {
        pipe + self.allowance
    }

    /// RFC 6937 §3, on any data transmission or retransmission: "prr_out +=
    /// (data sent)".
    pub(super) fn on_sent(&mut self, len: u64) {
        if self.active {
            self.out += len;
            self.allowance = self.allowance.saturating_sub(len);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn above_ssthresh_it_sends_ssthresh_over_recover_fs_of_what_is_delivered() {
        // RFC 6937 §3's example shape: RecoverFS 20 segments, ssthresh 10.
        let mut p = Prr::default();
        p.enter(10_000, 20_000);
        let mut sent = 0;
        for _ in 0..10 {
            p.on_ack(1000, 15_000, 1000);
            while p.window(15_000) >= 15_000 + 1000 {
                p.on_sent(1000);
                sent += 1000;
            }
        }
        // 10 segments delivered, half of them sent again: one every other ACK.
        assert_eq!(sent, 5000);
    }

    #[test]
    fn below_ssthresh_ssrb_allows_one_segment_beyond_what_was_delivered() {
        let mut p = Prr::default();
        p.enter(10_000, 20_000);
        // pipe far below ssthresh (a burst of losses): catch up, but at most
        // DeliveredData + 1 MSS on this ACK.
        p.on_ack(1000, 2000, 1000);
        assert_eq!(p.window(2000), 2000 + 2000);
        // and never beyond ssthresh.
        p.on_ack(5000, 9500, 1000);
        assert_eq!(p.window(9500), 10_000);
    }

    #[test]
    fn below_ssthresh_crb_sends_no_more_than_was_delivered() {
        // RFC 6937 §3 PRR-CRB: "limit = prr_delivered - prr_out". RecoverFS
        // 20 segments, ssthresh 10, a burst of losses has taken pipe to 2.
        let mut p = Prr::new(PrrBound::Crb);
        p.enter(10_000, 20_000);
        // One segment delivered, none sent: one may go, where SSRB lets two.
        p.on_ack(1000, 2000, 1000);
        assert_eq!(p.window(2000), 2000 + 1000);
        p.on_sent(1000);
        assert_eq!(p.window(3000), 3000, "the allowance is spent");
        // An ACK that delivers nothing new (prr_delivered == prr_out) lets
        // nothing out, where SSRB would still allow one MSS.
        p.on_ack(0, 3000, 1000);
        assert_eq!(p.window(3000), 3000);
        let mut ssrb = Prr::new(PrrBound::Ssrb);
        ssrb.enter(10_000, 20_000);
        ssrb.on_ack(1000, 2000, 1000);
        ssrb.on_sent(1000);
        ssrb.on_ack(0, 3000, 1000);
        assert_eq!(ssrb.window(3000), 4000, "SSRB's extra MSS");
        // Over a run of ACKs that each deliver one segment with pipe below
        // ssthresh, CRB sends one for one: what it has sent never exceeds
        // what was delivered, and the flight stays where the losses left it.
        let (mut delivered, mut out, mut pipe) = (1000, 1000, 3000);
        for _ in 0..20 {
            delivered += 1000;
            pipe -= 1000;
            p.on_ack(1000, pipe, 1000);
            while p.window(pipe) >= pipe + 1000 {
                p.on_sent(1000);
                out += 1000;
                pipe += 1000;
            }
            assert!(out <= delivered, "out {out} > delivered {delivered}");
        }
        assert_eq!((out, pipe), (delivered, 3000), "one for one");
    }
}
