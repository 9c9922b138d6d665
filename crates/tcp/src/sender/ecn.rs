//! The sender's half of ECN (RFC 3168 §6.1): which codepoint a segment
//! carries, when it carries CWR, and whether an ECN-Echo reduces the window.
//! The reduction itself is the controller's: the sender signals a
//! [`CongestionKind::Ecn`](tput_cc::CongestionKind::Ecn) event, which every
//! controller answers as it answers a loss (RFC 9002 §7.1 for QUIC, where
//! the same event carries a CE count; RFC 9438 §4.6 for CUBIC), so this
//! module only decides *when*.

use tput_netsim::Ecn;

/// RFC 3168 §6.1.2's state of an ECN-capable sender.
#[derive(Debug, Clone, Default)]
pub(super) struct EcnSender {
    /// ECN is on ([`TcpConfig::ecn`](crate::TcpConfig::ecn)).
    on: bool,
    /// The window was reduced and no new segment has carried CWR since.
    cwr_pending: bool,
    /// One past the highest byte sent when the window was last reduced:
    /// no ECN-Echo reduces it again until the cumulative ACK has passed
    /// it, one window of data later.
    high: Option<u64>,
}

impl EcnSender {
    pub(super) fn new(on: bool) -> Self {
        Self { on, ..Self::default() }
    }

    /// The codepoint of a data segment: ECT(0) for new data (§6.1.2: the
    /// sender "sets an ECT codepoint"), Not-ECT for a retransmission (§6.1.5:
    /// "the TCP data sender MUST NOT set either an ECT codepoint or the CWR
    /// bit on retransmitted packets"), and Not-ECT without ECN.
    pub(super) fn codepoint(&self, new_data: bool) -> Ecn {
        if self.on && new_data { Ecn::Ect0 } else { Ecn::NotEct }
    }

    /// Whether this segment carries CWR, and if so it is sent now (§6.1.2:
    /// "the TCP sender sets the CWR flag in the TCP header of the first new
    /// data packet sent after the window reduction").
    pub(super) fn take_cwr(&mut self, new_data: bool) -> bool {
        let cwr = self.on && new_data && self.cwr_pending;
        if cwr {
            self.cwr_pending = false;
        }
        cwr
    }

    /// The window was reduced, for any reason (§6.1.2: "because of a
    /// retransmit timeout, a Fast Retransmit, or in response to an ECN
    /// Notification"), with `max` sent so far: CWR goes on the next new
    /// segment, and ECN-Echoes of the same window are not answered again.
    pub(super) fn reduced(&mut self, max: u64) {
        if self.on {
            self.cwr_pending = true;
            self.high = Some(max);
        }
    }

    /// Whether an ACK with ECE reduces the window, the cumulative ACK at
    /// `una` after it, `in_recovery` whether loss recovery runs. §6.1.2:
    /// "the TCP source should not react to congestion indications more than
    /// once every window of data (or more loosely, more than once every
    /// round-trip time)", and "the TCP sender should not decrease the
    /// slow-start threshold, ssthresh, if it has been decreased within the
    /// last round trip time": not during a loss recovery, and not until
    /// `una` is beyond the data sent at the last reduction. Beyond, not at:
    /// the segment that carried CWR starts there, so the ACK that reaches
    /// exactly `high` still answers data sent before the sink saw CWR
    /// (Linux's `tcp_fastretrans_alert` holds its CWR state the same way).
    pub(super) fn reacts(&self, una: u64, in_recovery: bool) -> bool {
        self.on && !in_recovery && self.high.is_none_or(|h| una > h)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_reduction_per_window_and_cwr_on_the_next_new_segment() {
        let mut e = EcnSender::new(true);
        assert_eq!(e.codepoint(true), Ecn::Ect0);
        assert_eq!(e.codepoint(false), Ecn::NotEct, "a retransmission");
        assert!(e.reacts(0, false));
        assert!(!e.reacts(0, true), "in loss recovery");
        e.reduced(10_000);
        assert!(!e.take_cwr(false), "never on a retransmission");
        assert!(e.take_cwr(true));
        assert!(!e.take_cwr(true), "once");
        for una in [5_000, 10_000] {
            assert!(!e.reacts(una, false), "the same window at {una}");
        }
        assert!(e.reacts(11_000, false));

        let off = EcnSender::new(false);
        assert_eq!(off.codepoint(true), Ecn::NotEct);
        assert!(!off.reacts(1, false));
    }
}
