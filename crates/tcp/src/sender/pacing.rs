//! Pacing: at most one segment per `len / rate`, at the controller's own
//! rate or at Linux's rate from the window.

use std::time::Duration;

use tput_cc::CongestionController;
use tput_netsim::SimTime;

use crate::{PACING_CA_PERCENT, PACING_SS_PERCENT, TcpConfig};

/// When the next segment may leave.
#[derive(Debug, Clone, Default)]
pub(super) struct Pacer {
    /// The earliest time of the next transmission (Linux's `tcp_wstamp_ns`).
    next: SimTime,
    /// A segment was held back: the sender wakes at `next`.
    waiting: bool,
}

impl Pacer {
    /// Whether segments are paced: when [`TcpConfig::pacing`] asks for
    /// Linux's rate, or when the controller reports a rate of its own.
    pub(super) fn paces(cfg: &TcpConfig, cc: &dyn CongestionController) -> bool {
        cfg.pacing || cc.pacing_rate().is_some()
    }

    /// Whether a segment may not leave at `now` yet.
    pub(super) fn early(&self, now: SimTime) -> bool {
        now < self.next
    }

    /// Whether a segment waits for the pacer.
    pub(super) fn set_waiting(&mut self, waiting: bool) {
        self.waiting = waiting;
    }

    /// When a held segment is due.
    pub(super) fn wake(&self) -> Option<SimTime> {
        self.waiting.then_some(self.next)
    }

    /// A segment of `len` bytes left at `now`: the next may leave `len /
    /// rate` after it (or after `now` if the sender was idle), as Linux's
    /// `tcp_wstamp_ns`.
    pub(super) fn sent(&mut self, now: SimTime, len: u64, cc: &dyn CongestionController, srtt: Option<Duration>) {
        let Some((bytes_x100, srtt_ns)) = rate_x100(cc, srtt) else {
            return;
        };
        if bytes_x100 == 0 {
            return;
        }
        let gap_ns = u128::from(len) * srtt_ns * 100 / bytes_x100;
        let gap = Duration::from_nanos(u64::try_from(gap_ns).unwrap_or(u64::MAX));
        self.next = self.next.max(now) + gap;
    }
}

/// The pacing rate as bytes times 100 per a number of nanoseconds: the
/// controller's own rate if it reports one (as Linux's BBR sets
/// `sk_pacing_rate`), else Linux's `tcp_update_pacing_rate`: `cwnd / SRTT`
/// at [`PACING_SS_PERCENT`] while `cwnd < ssthresh / 2`, else at
/// [`PACING_CA_PERCENT`]; `None` before the first RTT sample.
fn rate_x100(cc: &dyn CongestionController, srtt: Option<Duration>) -> Option<(u128, u128)> {
    if let Some(rate) = cc.pacing_rate() {
        return Some((u128::from(rate) * 100, 1_000_000_000));
    }
    let srtt = srtt.filter(|s| !s.is_zero())?;
    let snap = cc.snapshot();
    let cwnd = snap.cwnd_bytes;
    let slow_start = snap.ssthresh_bytes.is_none_or(|t| cwnd < t / 2);
    let pct = if slow_start {
        PACING_SS_PERCENT
    } else {
        PACING_CA_PERCENT
    };
    Some((u128::from(cwnd) * u128::from(pct), srtt.as_nanos()))
}
