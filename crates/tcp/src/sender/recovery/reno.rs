//! Reno: RFC 5681 §3.2's fast retransmit and fast recovery (ns-2's
//! `Agent/TCP/Reno`).

use super::{LossRecovery, SeqSpace, limited_transmit};
use crate::TcpConfig;

/// Reno's fast recovery: it ends with the first ACK of new data (and is
/// NewReno's too, but for partial ACKs).
#[derive(Debug, Default)]
pub(super) struct Reno {
    /// Window inflation, bytes.
    inflation: u64,
}

impl Reno {
    /// RFC 6582 §3.2 step 3's deflation after a partial ACK of `acked`
    /// bytes: "deflate the congestion window by the amount of new data
    /// acknowledged", then add back one segment if it covered one.
    pub(super) fn deflate(&mut self, acked: u64, seg: u64) {
        self.inflation = self.inflation.saturating_sub(acked);
        if acked >= seg {
            self.inflation += seg;
        }
    }
}

impl LossRecovery for Reno {
    fn on_new_ack(&mut self, sp: &mut SeqSpace, _acked: u64, _partial: bool) -> bool {
        // RFC 5681 §3.2 step 6: "When the next ACK arrives that acknowledges
        // previously unacknowledged data, a TCP MUST set cwnd to ssthresh
        // (the value set in step 2). This is termed 'deflating' the window."
        sp.in_recovery = false;
        self.inflation = 0;
        true
    }

    fn on_recovery_dupack(&mut self, sp: &mut SeqSpace) {
        // Step 4: "For each additional duplicate ACK received (after the
        // third), cwnd MUST be incremented by SMSS."
        self.inflation += sp.seg;
    }

    fn on_early_dupack(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig) {
        limited_transmit(sp, cfg, &mut self.inflation);
    }

    fn on_enter(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig) {
        // Steps 2–3: resend the lost segment, "cwnd MUST be set to ssthresh
        // plus 3*SMSS", the segments that left the network.
        sp.rexmit = Some(sp.una);
        self.inflation = u64::from(cfg.dupack_threshold) * sp.seg;
    }

    fn on_timeout(&mut self, sp: &mut SeqSpace) {
        // RFC 6298 §5.4 resends the earliest segment; the rest follow as
        // the window opens (go-back-N, as BSD and ns-2 do).
        self.inflation = 0;
        sp.nxt = sp.una;
    }

    fn next_segment(&self, sp: &SeqSpace, cwnd: u64) -> Option<u64> {
        sp.next_in_window(cwnd, self.inflation)
    }
}
