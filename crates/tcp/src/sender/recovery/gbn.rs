//! Go-back-N: after a fast retransmit or a timeout, everything from the
//! first unacknowledged segment is sent again.

use super::{LossRecovery, SeqSpace, limited_transmit};
use crate::TcpConfig;

/// Go-back-N recovery.
#[derive(Debug, Default)]
pub(super) struct Gbn {
    /// RFC 3042's allowance, bytes.
    inflation: u64,
}

impl LossRecovery for Gbn {
    fn counts_duplicate(&self, dup: bool) -> bool {
        // Go-back-N resends what the sink may already hold; the ACKs of
        // those duplicates say nothing about loss and are not counted.
        !dup
    }

    fn on_new_ack(&mut self, sp: &mut SeqSpace, _acked: u64, partial: bool) -> bool {
        // Recovery ends once everything sent before it is acknowledged.
        if !partial {
            sp.in_recovery = false;
            self.inflation = 0;
        }
        true
    }

    fn on_early_dupack(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig) {
        limited_transmit(sp, cfg, &mut self.inflation);
    }

    fn on_enter(&mut self, sp: &mut SeqSpace, _cfg: &TcpConfig) {
        sp.nxt = sp.una;
        self.inflation = 0;
    }

    fn on_timeout(&mut self, sp: &mut SeqSpace) {
        self.inflation = 0;
        sp.nxt = sp.una;
    }

    fn next_segment(&self, sp: &SeqSpace, cwnd: u64) -> Option<u64> {
        sp.next_in_window(cwnd, self.inflation)
    }
}
