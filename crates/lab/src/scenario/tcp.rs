//! The TCP model's records in the lab's terms: its interval records as
//! [`IntervalStats`], its controller watched by the same [`CcTrace`] rule as
//! a QUIC transfer's.

use std::time::Duration;
use tput_cc::CongestionController;
use tput_cc::units::Rate;
use tput_netsim::SimTime;
use tput_tcp::{CcObserver, IntervalRecord};

use tput_transport::{EvalSlot, IntervalStats};

use super::schema::FlowGroup;
use crate::host::{CcSample, CcTrace};

/// The evaluation slot of a TCP flow of `g` (a time slot; 1 s unless the
/// group sets one) and the target its slots are judged against (`None`: no
/// target, no slots).
pub(super) fn slot_and_target(g: &FlowGroup) -> (Duration, Option<Rate>) {
    let slot = match g.eval_slot {
        Some(EvalSlot::Time(d)) => d,
        _ => Duration::from_secs(1),
    };
    (slot, g.target.filter(|t| t.bits_per_sec() > 0))
}

/// `r` as an interval record of a QUIC transfer; its `bytes` and goodput are
/// the sink's to fill in (0 here).
pub(super) fn interval_stats(r: &IntervalRecord) -> IntervalStats {
    let mut s = IntervalStats::default();
    s.start_secs = r.start.as_secs_f64();
    s.end_secs = r.end.as_secs_f64();
    s.written_bytes = r.written_bytes;
    s.cwnd_bytes = r.cwnd_bytes;
    s.srtt_ms = r.srtt.as_secs_f64() * 1e3;
    s.min_rtt_ms = r.min_rtt.as_secs_f64() * 1e3;
    s.lost_packets = r.lost_packets;
    s.congestion_events = r.congestion_events;
    s.controller = Some(r.controller.clone());
    s
}

impl CcObserver for CcTrace {
    fn observe(&mut self, now: SimTime, cc: &dyn CongestionController) {
        self.push(CcSample::new(now.as_secs_f64(), &cc.snapshot()));
    }
}
