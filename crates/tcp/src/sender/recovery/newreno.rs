//! NewReno: RFC 6582 §3.2's fast recovery with partial ACKs (ns-2's
//! `Agent/TCP/Newreno`).

use super::{LossRecovery, SeqSpace, limited_transmit};
use crate::TcpConfig;

/// NewReno's fast recovery: partial ACKs resend the next hole, and recovery
/// lasts until everything sent before it is acknowledged.
#[derive(Debug, Default)]
pub(super) struct NewReno {
    /// Window inflation, bytes.
    inflation: u64,
    /// A partial ACK came in this recovery (RFC 6582 §3.2 step 5: only the
    /// first restarts the timer).
    partial_seen: bool,
}

impl LossRecovery for NewReno {
    fn on_new_ack(&mut self, sp: &mut SeqSpace, acked: u64, partial: bool) -> bool {
        if !partial {
            // RFC 6582 §3.2 step 3, full acknowledgment: "Set cwnd to ...
            // ssthresh" (the deflation) and exit fast recovery.
            sp.in_recovery = false;
            self.inflation = 0;
            return true;
        }
        // Step 3, partial acknowledgment: "retransmit the first
        // unacknowledged segment ... deflate the congestion window by the
        // amount of new data acknowledged ... If the partial ACK acknowledges
        // at least one SMSS of new data, then add back SMSS bytes".
        sp.rexmit = Some(sp.una);
        self.inflation = self.inflation.saturating_sub(acked);
        if acked >= sp.seg {
            self.inflation += sp.seg;
        }
        // Step 5: "For the first partial ACK that arrives during fast
        // recovery, also reset the retransmit timer."
        let first = !self.partial_seen;
        self.partial_seen = true;
        first
    }

    fn on_recovery_dupack(&mut self, sp: &mut SeqSpace) {
        // Step 4 (RFC 5681 §3.2 step 4): inflate by one segment.
        self.inflation += sp.seg;
    }

    fn on_early_dupack(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig) {
        limited_transmit(sp, cfg, &mut self.inflation);
    }

    fn on_enter(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig) {
        // Step 2 (RFC 5681 §3.2 steps 2–3): resend, inflate by the threshold.
        self.partial_seen = false;
        sp.rexmit = Some(sp.una);
        self.inflation = u64::from(cfg.dupack_threshold) * sp.seg;
    }

    fn on_timeout(&mut self, sp: &mut SeqSpace) {
        // RFC 6298 §5.4, then go-back-N as BSD and ns-2.
        self.inflation = 0;
        sp.nxt = sp.una;
    }

    fn next_segment(&self, sp: &SeqSpace, cwnd: u64) -> Option<u64> {
        sp.next_in_window(cwnd, self.inflation)
    }
}
