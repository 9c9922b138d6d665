//! Test fixtures shared by the unit tests of the live rendering and of harm:
//! interval records and guarantee snapshots shaped as the transport and the
//! controller produce them.

use tput_cc::{AlgorithmState, Phase, Snapshot};
use tput_transport::IntervalStats;

use crate::scenario::FlowResult;

/// A record of `bytes` verified from `start_secs` to `end_secs`: goodput
/// from those, a 20-ms smoothed and minimum RTT, no loss, no snapshot.
pub(crate) fn interval(start_secs: f64, end_secs: f64, bytes: u64) -> IntervalStats {
    let mut r = IntervalStats::default();
    r.start_secs = start_secs;
    r.end_secs = end_secs;
    r.bytes = bytes;
    r.goodput_bps = bytes as f64 * 8.0 / (end_secs - start_secs);
    r.written_bytes = bytes;
    r.cwnd_bytes = 12_000;
    r.srtt_ms = 20.0;
    r.min_rtt_ms = 20.0;
    r
}

/// A guarantee controller's snapshot in congestion avoidance with a floor
/// of `floor_bytes` (0: its breaker open) and its verdict.
pub(crate) fn guarantee_snapshot(floor_bytes: u64, infeasible: bool) -> Snapshot {
    Snapshot::new(
        floor_bytes.max(1200),
        None,
        Phase::CongestionAvoidance,
        AlgorithmState::Guarantee {
            k: 1.0,
            slot_rtts: 16,
            eval_rtts: 32,
            goal_bytes_per_sec: 0.0,
            control_slot: 1,
            congested: false,
            available_bytes_per_sec: 0.0,
            k_bw: 0.0,
            k_max: None,
            floor_bytes,
            infeasible,
        },
    )
}

/// Flow `flow` of group `group` that did nothing: no controller name, no
/// bytes, no records, no errors. Tests fill in what they look at.
pub(crate) fn empty_flow(flow: u32, group: usize) -> FlowResult {
    FlowResult {
        flow,
        group,
        cc: String::new(),
        bytes: 0,
        start_secs: 0.0,
        active_secs: 0.0,
        intervals: Vec::new(),
        cc_trace: Default::default(),
        slots: Vec::new(),
        success_ratio: None,
        file_times: Vec::new(),
        files: None,
        errors: Vec::new(),
        tcp: None,
    }
}
