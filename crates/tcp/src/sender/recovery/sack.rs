//! SACK recovery: RFC 6675's conservative loss recovery over the sink's
//! SACK blocks (RFC 2018), ns-2's `Agent/TCP/Sack1`.

use super::{Clock, LossRecovery, SeqSpace};
use crate::TcpConfig;
use crate::sender::scoreboard::Seg;

/// RFC 6675: the scoreboard, `pipe` in place of window inflation, and the
/// retransmission of every hole the scoreboard declares lost.
#[derive(Debug, Default)]
pub(super) struct Sack;

impl LossRecovery for Sack {
    fn on_sack_blocks(&mut self, sp: &mut SeqSpace, blocks: &[(u64, u64)], newly: &mut dyn FnMut(&Seg)) {
        for &(start, end) in blocks {
            sp.board.sack(start, end, &mut *newly);
        }
    }

    fn on_new_ack(&mut self, sp: &mut SeqSpace, _acked: u64, partial: bool) -> bool {
        // RFC 6675 §5: recovery ends when the cumulative ACK reaches
        // RecoveryPoint ("the TCP MUST exit loss recovery").
        if !partial {
            sp.in_recovery = false;
        }
        true
    }

    fn detects_loss(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig) -> bool {
        // RFC 6675 §5 step (2): "If DupAcks < DupThresh but IsLost (HighACK
        // + 1) returns true -- indicating at least three segments have
        // arrived above the current cumulative acknowledgment point, which
        // is taken to indicate loss -- go to step (4)."
        sp.board.mark_lost(cfg.dupack_threshold);
        sp.board.front().is_some_and(|s| s.lost)
    }

    fn on_enter(&mut self, sp: &mut SeqSpace, _cfg: &TcpConfig) {
        // RFC 6675 §5 step (4.3): the first hole is lost and is resent at
        // once, whatever `pipe` says; the rest follows NextSeg as `pipe`
        // allows. (Waiting for `pipe` to fall below the halved window
        // delayed it by half a round trip, long enough for a timeout behind
        // a standing queue.)
        sp.board.first_lost();
        sp.rexmit = Some(sp.una);
    }

    fn on_timeout(&mut self, sp: &mut SeqSpace) {
        // RFC 6675 §5.1: resend in order, skipping SACKed segments (the sink
        // never discards SACKed data, so they are kept); no fast retransmit
        // for what was sent before (RecoveryPoint = HighData).
        sp.board.all_lost();
        sp.in_recovery = true;
    }

    fn after_ack(&mut self, sp: &mut SeqSpace, cfg: &TcpConfig, _clock: Clock) -> u64 {
        // RFC 6675 §5 step (C): every segment IsLost now holds lost.
        if sp.in_recovery {
            sp.board.mark_lost(cfg.dupack_threshold)
        } else {
            0
        }
    }

    fn next_segment(&self, sp: &SeqSpace, cwnd: u64) -> Option<u64> {
        // RFC 6675 §5 step (C): "If cwnd - pipe >= 1 SMSS, there exists
        // previously unsent data, and the receiver's advertised window
        // allows, transmit ..."; at least one segment when nothing is in
        // the pipe.
        let pipe = sp.board.pipe();
        if pipe + sp.seg > cwnd && pipe > 0 {
            return None;
        }
        // NextSeg (1): the first hole declared lost.
        if let Some(seq) = sp.board.first_hole() {
            return Some(seq);
        }
        // NextSeg (2): new data.
        sp.new_data()
    }
}
