//! The sender's scoreboard: every segment from the cumulative ACK to the
//! highest byte sent, with what RFC 6675 §4 needs (SACKed, lost, resent)
//! and what the RTT estimate and the controller need (send times, Karn's
//! flag).
//!
//! Segments are `seg` bytes apart (the last of a transfer may be shorter),
//! so a sequence number names its slot by arithmetic, and a SACK block
//! touches only the segments it covers. Beside the segments the board keeps
//! `pipe` as a running sum, the sequence numbers of the segments in the
//! states RFC 6675's procedures look for (SACKed; declared lost and not yet
//! resent) and where the segments neither SACKed nor lost nor resent may
//! begin, so that no step of an ACK walks the whole window.

use std::collections::{BTreeSet, VecDeque};

use tput_netsim::SimTime;

use crate::ControllerRecovery;

/// One segment on the board.
#[derive(Debug, Clone, Copy)]
pub(super) struct Seg {
    /// Payload bytes.
    pub(super) len: u64,
    /// Last transmission.
    pub(super) sent: SimTime,
    /// First transmission.
    pub(super) first_sent: SimTime,
    /// Ever retransmitted (Karn's rule: no RTT sample).
    pub(super) retx: bool,
    /// Covered by a SACK block.
    pub(super) sacked: bool,
    /// Declared lost (RFC 6675 `IsLost`, or a timeout) and not yet resent.
    pub(super) lost: bool,
    /// Resent since it was declared lost (counts in `pipe`).
    pub(super) resent: bool,
}

impl Seg {
    /// What the controller hears as the segment's send time: with TCP's
    /// recovery its first transmission, since TCP's recovery is about
    /// sequence numbers (RFC 6582's `recover`) and a retransmission belongs
    /// to the flight it repairs, so its ACK does not end the controller's
    /// recovery period (RFC 9002 §7.3.2 would end it: QUIC sends no segment
    /// twice); with `rfc9002` its last one, as a QUIC packet's.
    pub(super) fn reported_sent(&self, recovery: ControllerRecovery) -> SimTime {
        match recovery {
            ControllerRecovery::Tcp => self.first_sent,
            ControllerRecovery::Rfc9002 => self.sent,
        }
    }

    /// The segment's share of RFC 6675 §4 `pipe`: "(a) If IsLost (S1) returns
    /// false: Pipe is incremented by 1 octet. (b) If S1 <= HighRxt: Pipe is
    /// incremented by 1 octet." A SACKed segment is not in the network.
    fn pipe(&self) -> u64 {
        if self.sacked {
            0
        } else {
            (u64::from(!self.lost) + u64::from(self.resent)) * self.len
        }
    }

    /// NextSeg (1)'s candidate: a hole declared lost, not yet resent.
    fn is_hole(&self) -> bool {
        self.lost && !self.sacked && !self.resent
    }

    /// A segment `IsLost` may still declare lost.
    fn is_unmarked(&self) -> bool {
        !self.sacked && !self.lost && !self.resent
    }
}

/// The segments from the cumulative ACK to the highest byte sent.
#[derive(Debug, Clone)]
pub(super) struct Scoreboard {
    /// Segment size (all but the last of a transfer).
    seg: u64,
    /// Sequence number of `segs[0]`.
    una: u64,
    segs: VecDeque<Seg>,
    /// RFC 6675 `pipe`, bytes: the sum of [`Seg::pipe`].
    pipe: u64,
    /// Segments with `lost` set.
    lost: u64,
    /// Sequence numbers of SACKed segments.
    sacked: BTreeSet<u64>,
    /// Sequence numbers of [holes](Seg::is_hole).
    holes: BTreeSet<u64>,
    /// No segment below this sequence number is
    /// [unmarked](Seg::is_unmarked). A segment is unmarked from its first
    /// transmission until it is SACKed, declared lost or resent, and never
    /// again after (SACKed stays SACKed, a resent segment is lost or resent
    /// from then on), and new segments join above every other one: so once
    /// [`mark_lost`](Self::mark_lost) has marked everything below its limit,
    /// nothing there is unmarked for the rest of the run, and the next call
    /// starts here instead of at the cumulative ACK (a set of the unmarked
    /// segments cost an insertion per segment sent and a removal per
    /// segment acknowledged).
    unmarked_from: u64,
}

impl Scoreboard {
    pub(super) fn new(seg: u64) -> Self {
        Self {
            seg,
            una: 0,
            segs: VecDeque::new(),
            pipe: 0,
            lost: 0,
            sacked: BTreeSet::new(),
            holes: BTreeSet::new(),
            unmarked_from: 0,
        }
    }

    fn seq(&self, i: usize) -> u64 {
        self.una + i as u64 * self.seg
    }

    fn index(&self, seq: u64) -> usize {
        ((seq - self.una) / self.seg) as usize
    }

    /// Add (`add`) or remove segment `seq`'s part in the running sums and sets.
    fn account(&mut self, seq: u64, s: &Seg, add: bool) {
        let set = |set: &mut BTreeSet<u64>, member: bool| {
            if member {
                if add {
                    set.insert(seq);
                } else {
                    set.remove(&seq);
                }
            }
        };
        set(&mut self.sacked, s.sacked);
        set(&mut self.holes, s.is_hole());
        if add {
            self.pipe += s.pipe();
            self.lost += u64::from(s.lost);
        } else {
            self.pipe -= s.pipe();
            self.lost -= u64::from(s.lost);
        }
    }

    /// Change segment `i` by `f`, keeping the sums and sets true.
    fn update<R>(&mut self, i: usize, f: impl FnOnce(&mut Seg) -> R) -> R {
        let seq = self.seq(i);
        let mut s = self.segs[i];
        self.account(seq, &s, false);
        let r = f(&mut s);
        self.account(seq, &s, true);
        self.segs[i] = s;
        r
    }

    /// A new segment of `len` bytes, sent at `now`, after the last one.
    pub(super) fn push(&mut self, now: SimTime, len: u64) {
        let s = Seg {
            len,
            sent: now,
            first_sent: now,
            retx: false,
            sacked: false,
            lost: false,
            resent: false,
        };
        let seq = self.seq(self.segs.len());
        self.account(seq, &s, true);
        self.segs.push_back(s);
    }

    /// Segment `seq` sent again at `now`: a retransmission (Karn's flag), and
    /// if it was declared lost, resent (RFC 6675 `HighRxt`).
    pub(super) fn resend(&mut self, seq: u64, now: SimTime) {
        let i = self.index(seq);
        self.update(i, |s| {
            s.sent = now;
            s.retx = true;
            if s.lost {
                s.lost = false;
                s.resent = true;
            }
        });
    }

    /// Remove the segments below `ack` (a cumulative ACK); each comes back
    /// with its length.
    pub(super) fn pop_acked(&mut self, ack: u64, mut each: impl FnMut(&Seg)) {
        while self.una < ack {
            let Some(s) = self.segs.pop_front() else { break };
            let seq = self.una;
            self.account(seq, &s, false);
            self.una = seq + s.len;
            each(&s);
        }
        self.una = ack;
    }

    /// Mark the segments wholly inside the SACK block `[start, end)` (RFC
    /// 2018 §3) as SACKed; `newly` hears of each one not SACKed before.
    pub(super) fn sack(&mut self, start: u64, end: u64, mut newly: impl FnMut(&Seg)) {
        self.sack_seq(start, end, |_, s| newly(s));
    }

    /// [`sack`](Self::sack), `newly` hearing each segment's sequence number too.
    pub(super) fn sack_seq(&mut self, start: u64, end: u64, mut newly: impl FnMut(u64, &Seg)) {
        let first = if start <= self.una {
            0
        } else {
            (start - self.una).div_ceil(self.seg) as usize
        };
        for i in first..self.segs.len() {
            if self.seq(i) + self.segs[i].len > end {
                break;
            }
            if !self.segs[i].sacked {
                newly(self.seq(i), &self.segs[i]);
            }
            self.update(i, |s| {
                s.sacked = true;
                s.lost = false;
            });
        }
    }

    /// RFC 6675 §4 `IsLost`: "The routine returns true when either DupThresh
    /// discontiguous SACKed sequences have arrived above 'SeqNum' or more
    /// than (DupThresh - 1) * SMSS bytes with sequence numbers greater than
    /// 'SeqNum' have been SACKed", counted in whole segments here: every
    /// segment with `dupack_threshold` SACKed segments above it, not SACKed,
    /// not yet declared lost or resent, is now declared lost. Returns how
    /// many.
    pub(super) fn mark_lost(&mut self, dupack_threshold: u32) -> u64 {
        let Some(&limit) = self.sacked.iter().rev().nth(dupack_threshold as usize - 1) else {
            return 0;
        };
        let mut newly = 0;
        let mut i = self.index(self.unmarked_from.max(self.una));
        while i < self.segs.len() && self.seq(i) < limit {
            if self.segs[i].is_unmarked() {
                self.update(i, |s| s.lost = true);
                newly += 1;
            }
            i += 1;
        }
        self.unmarked_from = self.unmarked_from.max(limit);
        newly
    }

    /// RFC 6675 §5.1, after a timeout: every segment not SACKed is lost, none
    /// is resent.
    pub(super) fn all_lost(&mut self) {
        for i in 0..self.segs.len() {
            self.update(i, |s| {
                s.resent = false;
                s.lost = !s.sacked;
            });
        }
    }

    /// Declare the first segment lost (RFC 6675 §5 step 4.3: the first hole).
    pub(super) fn first_lost(&mut self) {
        if !self.segs.is_empty() {
            self.update(0, |s| s.lost = true);
        }
    }

    /// Declare segment `seq` lost (RFC 8985 §6.2 step 5: RACK's time-based
    /// rule), a retransmission of it included: it is a hole to resend again.
    /// Returns whether it was not declared lost before.
    pub(super) fn mark_lost_at(&mut self, seq: u64) -> bool {
        let i = self.index(seq);
        self.update(i, |s| {
            let newly = !s.lost && !s.sacked;
            if newly {
                s.lost = true;
                s.resent = false;
            }
            newly
        })
    }

    /// Every segment with its sequence number, from the cumulative ACK up.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u64, &Seg)> {
        self.segs.iter().enumerate().map(|(i, s)| (self.seq(i), s))
    }

    /// Segments covered by SACK blocks.
    pub(super) fn sacked_count(&self) -> u64 {
        self.sacked.len() as u64
    }

    /// The first segment, at the cumulative ACK.
    pub(super) fn front(&self) -> Option<&Seg> {
        self.segs.front()
    }

    /// RFC 6675 §4 NextSeg (1): the first hole declared lost and not yet resent.
    pub(super) fn first_hole(&self) -> Option<u64> {
        self.holes.first().copied()
    }

    /// RFC 6675 §4 `pipe`, bytes.
    pub(super) fn pipe(&self) -> u64 {
        self.pipe
    }

    /// Segments declared lost and not resent.
    pub(super) fn lost(&self) -> u64 {
        self.lost
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The same board by full scans, as the rules read.
    fn naive_pipe(b: &Scoreboard) -> u64 {
        b.segs
            .iter()
            .filter(|s| !s.sacked)
            .map(|s| if s.lost { 0 } else { s.len } + if s.resent { s.len } else { 0 })
            .sum()
    }

    fn naive_mark_lost(segs: &mut [Seg], thresh: u32) -> u64 {
        let (mut above, mut newly) = (0, 0);
        for s in segs.iter_mut().rev() {
            if s.sacked {
                above += 1;
            } else if above >= thresh && !s.lost && !s.resent {
                s.lost = true;
                newly += 1;
            }
        }
        newly
    }

    #[derive(Debug, Clone)]
    enum Op {
        Send,
        Sack(u64, u64),
        MarkLost,
        Resend(u64),
        Timeout,
        Ack(u64),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            3 => Just(Op::Send),
            3 => (0u64..40, 1u64..6).prop_map(|(a, n)| Op::Sack(a, n)),
            2 => Just(Op::MarkLost),
            1 => (0u64..40).prop_map(Op::Resend),
            1 => Just(Op::Timeout),
            1 => (0u64..4).prop_map(Op::Ack),
        ]
    }

    proptest! {
        /// The running sums and sets agree with full scans of the segments.
        #[test]
        fn the_board_agrees_with_full_scans(ops in prop::collection::vec(op(), 1..120)) {
            const SEG: u64 = 100;
            let mut b = Scoreboard::new(SEG);
            let mut naive: Vec<Seg> = Vec::new();
            let mut max = 0;
            let t = SimTime::ZERO;
            for op in ops {
                match op {
                    Op::Send => {
                        b.push(t, SEG);
                        naive.push(b.segs[b.segs.len() - 1]);
                        max += SEG;
                    }
                    Op::Sack(a, n) => {
                        let start = b.una + a * SEG;
                        let mut got = Vec::new();
                        b.sack(start, start + n * SEG, |s| got.push(s.first_sent));
                        let mut want = 0;
                        for (i, s) in naive.iter_mut().enumerate() {
                            let seq = b.una + i as u64 * SEG;
                            if seq >= start && seq + SEG <= start + n * SEG {
                                want += u64::from(!s.sacked);
                                s.sacked = true;
                                s.lost = false;
                            }
                        }
                        prop_assert_eq!(got.len() as u64, want);
                    }
                    Op::MarkLost => {
                        prop_assert_eq!(b.mark_lost(3), naive_mark_lost(&mut naive, 3));
                    }
                    Op::Resend(i) => {
                        if (i as usize) < naive.len() {
                            b.resend(b.una + i * SEG, t);
                            let s = &mut naive[i as usize];
                            s.retx = true;
                            if s.lost {
                                s.lost = false;
                                s.resent = true;
                            }
                        }
                    }
                    Op::Timeout => {
                        b.all_lost();
                        for s in &mut naive {
                            s.resent = false;
                            s.lost = !s.sacked;
                        }
                    }
                    Op::Ack(n) => {
                        let ack = (b.una + n * SEG).min(max);
                        let mut popped = 0;
                        b.pop_acked(ack, |_| popped += 1);
                        naive.drain(..popped);
                    }
                }
                let first_hole = naive.iter().position(|s| s.lost && !s.sacked && !s.resent);
                prop_assert_eq!(b.first_hole(), first_hole.map(|i| b.una + i as u64 * SEG));
                prop_assert_eq!(b.pipe(), naive_pipe(&b));
                prop_assert_eq!(b.lost(), naive.iter().filter(|s| s.lost).count() as u64);
                let flags = |s: &Seg| (s.sacked, s.lost, s.resent, s.retx);
                prop_assert!(b.segs.iter().map(flags).eq(naive.iter().map(flags)));
            }
        }
    }
}
