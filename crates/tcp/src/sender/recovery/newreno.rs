//! NewReno: RFC 6582 §3.2's fast recovery with partial ACKs (ns-2's
//! `Agent/TCP/Newreno`).

use super::reno::Reno;
use super::{LossRecovery, SeqSpace};
use crate::TcpConfig;

/// NewReno's fast recovery: Reno's (RFC 6582 §3.2 modifies RFC 5681's),
/// except that partial ACKs resend the next hole and recovery lasts until
/// everything sent before it is acknowledged.
#[derive(Debug, Default)]
pub(super) struct NewReno {
    /// Fast retransmit, inflation and timeouts as Reno's.
    reno: Reno,
    /// A partial ACK came in this recovery (RFC 6582 §3.2 step 5: only the
    /// first restarts the timer).
    partial_seen: bool,
}

impl LossRecovery for NewReno {
    fn on_new_ack(&mut self, sp: &mut SeqSpace, acked: u64, partial: bool) -> bool {
        if !partial {
            // RFC 6582 §3.2 step 3, full acknowledgment: "Set cwnd to ...
            // ssthresh" (the deflation) and exit fast recovery, as Reno's
            // first ACK of new data does.
            return self.reno.on_new_ack(sp, acked, partial);
        }
        // Step 3, partial acknowledgment: "retransmit the first
        // unacknowledged segment ... deflate the congestion window by the
        // amount of new data acknowledged ... If the partial ACK acknowledges
        // at least one SMSS of new data, then add back SMSS bytes".
        sp.rexmit = Some(sp.una);
        self.reno.deflate(acked, sp.seg);
        // Step 5: "For the first partial ACK that arrives during fast
        // recovery, also reset the retransmit timer."
        let first = !self.partial_seen;
        self.partial_seen = true;
        first
    }

    fn on_recovery_dupack(&mut self, sp: &mut SeqSpace) {
        // Step 4 (RFC 5681 §3.2 step 4).
        self.reno.on_recovery_dupack(sp);
    }

    fn on_early_dupack(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig) {
        self.reno.on_early_dupack(sp, cfg);
    }

    fn on_enter(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig) {
        // Step 2 (RFC 5681 §3.2 steps 2–3).
        self.partial_seen = false;
        self.reno.on_enter(sp, cfg);
    }

    fn on_timeout(&mut self, sp: &mut SeqSpace) {
        self.reno.on_timeout(sp);
    }

    fn next_segment(&self, sp: &SeqSpace, cwnd: u64) -> Option<u64> {
        self.reno.next_segment(sp, cwnd)
    }
}
