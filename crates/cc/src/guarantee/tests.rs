use super::floor::Floor;
use super::*;
use crate::bandwidth::SharedBandwidth;
use crate::controller::{CongestionKind, Phase, RttSample, min_window};
use crate::testutil::*;

const MS: Duration = Duration::from_millis(1);

/// The `AlgorithmState::Guarantee` fields of a snapshot.
#[derive(Debug, PartialEq)]
struct State {
    k: f64,
    slot_rtts: u32,
    eval_rtts: u32,
    goal: f64,
    control_slot: u32,
    congested: bool,
    available: f64,
}

fn state(cc: &Guarantee) -> State {
    match cc.snapshot().state {
        AlgorithmState::Guarantee {
            k,
            slot_rtts,
            eval_rtts,
            goal_bytes_per_sec,
            control_slot,
            congested,
            available_bytes_per_sec,
            ..
        } => State {
            k,
            slot_rtts,
            eval_rtts,
            goal: goal_bytes_per_sec,
            control_slot,
            congested,
            available: available_bytes_per_sec,
        },
        other => panic!("not a guarantee snapshot: {other:?}"),
    }
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

#[track_caller]
fn assert_close(a: f64, b: f64) {
    assert!(close(a, b), "{a} != {b}");
}

/// The paper's mode: most tests here check §2's rules.
fn config(target_bytes_per_sec: u64, eval: EvalSlot, slot: Option<u32>) -> GuaranteeConfig {
    GuaranteeConfig {
        eval,
        slot_rtts: slot,
        ..GuaranteeConfig::paper(Rate::from_bytes_per_sec(target_bytes_per_sec))
    }
}

fn harness(config: GuaranteeConfig, bw: Option<&SharedBandwidth>) -> Harness<Guarantee> {
    let source = bw.map(|b| Arc::new(b.clone()) as Arc<dyn BandwidthSource>);
    Harness::new(Guarantee::new(config, DATAGRAM, source), RTT)
}

/// Acknowledge `bytes` at `t0 + ms` (sent one RTT earlier; srtt = min RTT = 20 ms).
fn ack_at(h: &mut Harness<Guarantee>, t0: Instant, ms: u64, bytes: u64) {
    h.now = t0 + Duration::from_millis(ms);
    h.ack(bytes);
}

/// Bytes per second as SharedBandwidth's bits per second.
fn bits(bytes_per_sec: u64) -> Rate {
    Rate::from_bytes_per_sec(bytes_per_sec)
}

// ---- Reno base -------------------------------------------------------

#[test]
fn slow_start_is_reno() {
    let mut h = harness(config(1000, EvalSlot::Rtts(32), None), None);
    assert_eq!(h.cc.window(), 12_000);
    h.round();
    assert_eq!(h.cc.window(), 24_000);
    h.round();
    assert_eq!(h.cc.window(), 48_000);
    assert_eq!(h.cc.snapshot().phase, Phase::SlowStart);
    assert_eq!(h.cc.snapshot().ssthresh_bytes, None);
}

#[test]
fn loss_halves_once_per_round_trip() {
    let mut h = harness(config(1000, EvalSlot::Rtts(32), None), None);
    h.round();
    h.round();
    let before = h.cc.window(); // 48_000
    let sent = h.now - RTT / 2;
    for _ in 0..3 {
        h.lose(sent, CongestionKind::Loss);
    }
    assert_eq!(h.cc.window(), before / 2);
    assert_eq!(h.cc.snapshot().ssthresh_bytes, Some(before / 2));
    assert_eq!(h.cc.snapshot().phase, Phase::Recovery);
    h.ack_sent_at(sent, MSS); // sent before the reduction: no growth
    assert_eq!(h.cc.window(), before / 2);
    // Recovery ends with the ACK of a packet sent after it began; that ACK
    // counts towards growth: with k = 1, one mss per 24_000 bytes acked,
    // so the 20th such ACK grows the window to 25_200.
    h.advance(RTT + MS);
    h.ack(MSS);
    assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance);
    assert_eq!(h.cc.k(), 1.0);
    for _ in 0..18 {
        h.ack(MSS);
    }
    assert_eq!(h.cc.window(), 24_000);
    h.ack(MSS);
    assert_eq!(h.cc.window(), 25_200);
    h.lose(h.now - RTT / 4, CongestionKind::Loss);
    assert_eq!(h.cc.window(), 12_600);
    // ECN reduces like loss.
    h.advance(RTT);
    h.lose(h.now, CongestionKind::Ecn);
    assert_eq!(h.cc.window(), 6_300);
}

#[test]
fn congestion_avoidance_at_k_min_is_reno() {
    let mut h = harness(config(1000, EvalSlot::Rtts(32), None), None);
    h.round();
    h.lose(h.now - RTT / 2, CongestionKind::Loss); // cwnd = ssthresh = 12_000
    assert_eq!(h.cc.window(), 12_000);
    h.round(); // acks of the flight sent before the reduction: no growth
    assert_eq!(h.cc.window(), 12_000);
    // 10 acks of 1200 bytes: one window acknowledged, one mss more
    // (eq. (1) with k = 1, counted as RFC 9002 §7.3.3 counts it).
    h.round();
    assert_eq!(h.cc.k(), 1.0);
    assert_eq!(h.cc.window(), 13_200);
    assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance);
}

#[test]
fn persistent_congestion_collapses_to_minimum_window_and_slow_starts() {
    let mut h = harness(config(1000, EvalSlot::Rtts(32), None), None);
    h.round();
    h.round();
    h.lose(h.now - RTT, CongestionKind::PersistentCongestion);
    assert_eq!(h.cc.window(), min_window(MSS));
    assert_eq!(h.cc.snapshot().ssthresh_bytes, Some(24_000));
    assert_eq!(h.cc.snapshot().phase, Phase::SlowStart);
    h.flight.clear();
    h.advance(RTT);
    h.round();
    assert_eq!(h.cc.window(), 4 * MSS);
}

// ---- the slope k -----------------------------------------------------

#[test]
fn rtts_elapsed_steps_like_the_division() {
    // Irregular ACK gaps, small and large, against (now - start) / srtt.
    let t0 = Instant::now();
    for srtt_us in [1u64, 7, 20_000, 123_457] {
        let srtt = Duration::from_micros(srtt_us);
        let mut slots = Slots::new(t0, srtt, 1.0);
        let mut now = t0;
        let mut x = 12345u64;
        for _ in 0..2000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let gap = match x >> 60 {
                0 => srtt * 20,
                1..=3 => srtt + Duration::from_nanos(x % 1000),
                _ => Duration::from_nanos((x >> 20) % (srtt_us * 400 + 1)),
            };
            now += gap;
            let want = nanos(now - t0) / nanos(srtt);
            assert_eq!(
                slots.rtts_elapsed(nanos(now - t0)),
                want,
                "srtt {srtt:?} at {:?}",
                now - t0
            );
        }
    }
}

#[test]
fn k_bw_closed_form() {
    // m = 8 - 2 - 1 = 5: 2 * (100 - 5*10 - 20) / (5*6) = 60 / 30.
    assert_eq!(Guarantee::k_bw(100.0, 8.0, 2.0, 10.0, 20.0), 2.0);
    // m = 16 - 0 - 1 = 15: 2 * (2000 - 15*19 - 10) / (15*16) = 3410 / 240.
    assert_close(Guarantee::k_bw(2000.0, 16.0, 0.0, 19.0, 10.0), 3410.0 / 240.0);
    // m = 1 is the formula itself: 2 * (40 - 10 - 1) / 2 = 29.
    assert_eq!(Guarantee::k_bw(40.0, 2.0, 0.0, 10.0, 1.0), 29.0);
    // m <= 0 is defined as m = 1: missing - cwnd = (100 - 60) - 10.
    assert_eq!(Guarantee::k_bw(100.0, 8.0, 7.0, 10.0, 60.0), 30.0);
    assert_eq!(Guarantee::k_bw(100.0, 8.0, 9.0, 10.0, 60.0), 30.0);
    // Ahead of the goal: negative.
    assert!(Guarantee::k_bw(10.0, 8.0, 2.0, 10.0, 20.0) < 0.0);
}

#[test]
fn controller_uses_k_bw_including_the_slot_end_rule() {
    // goal = 7.5e6 B/s * 20 ms * 8 / 1200 B = 1000 packets per control slot.
    let mut h = harness(config(7_500_000, EvalSlot::Rtts(16), Some(8)), None);
    let t0 = h.now;
    ack_at(&mut h, t0, 20, MSS); // slot starts; n = 0, m = 7, cwnd 10, acked 1
    assert_close(h.cc.k(), 2.0 * (1000.0 - 7.0 * 10.0 - 1.0) / (7.0 * 8.0));
    assert_close(h.cc.k(), Guarantee::k_bw(1000.0, 8.0, 0.0, 10.0, 1.0));
    ack_at(&mut h, t0, 20 + 45, MSS); // n = 2, m = 5, cwnd 11, acked 2
    assert_close(h.cc.k(), 2.0 * (1000.0 - 5.0 * 11.0 - 2.0) / (5.0 * 6.0));
    ack_at(&mut h, t0, 20 + 150, MSS); // n = 7, m = 0 -> 1: 1000 - 3 - 12
    assert_close(h.cc.k(), 985.0);
    assert_close(h.cc.k(), Guarantee::k_bw(1000.0, 8.0, 7.0, 12.0, 3.0));
    assert_eq!(state(&h.cc).control_slot, 1);
}

#[test]
fn k_stays_at_k_min_when_the_goal_is_met_easily() {
    let bw = SharedBandwidth::new();
    bw.set_available(Rate::from_mbit_per_sec(1000));
    let mut h = harness(config(1000, EvalSlot::Rtts(32), None), Some(&bw));
    for _ in 0..4 {
        h.round();
        assert_eq!(h.cc.k(), 1.0);
    }
    h.lose(h.now - RTT / 2, CongestionKind::Loss);
    for _ in 0..40 {
        h.round();
        assert_eq!(h.cc.k(), 1.0);
    }
    let st = state(&h.cc);
    assert_eq!(st.available, 125_000_000.0);
    assert!(!st.congested);
}

#[test]
fn k_rises_above_k_min_when_behind() {
    let bw = SharedBandwidth::new();
    bw.set_available(Rate::from_mbit_per_sec(1000)); // A*srtt = 2083.3 packets: no clamp
    let mut h = harness(config(7_500_000, EvalSlot::Rtts(32), None), Some(&bw));
    h.round();
    // Last of the 10 ACKs: s = 16, goal = 7.5e6*0.02*16/1200 = 2000 packets,
    // n = 0, m = 15, cwnd 19 before its growth, acked 10.
    assert_close(h.cc.k(), 2.0 * (2000.0 - 15.0 * 19.0 - 10.0) / (15.0 * 16.0));
    assert!(h.cc.k() > 14.0);
    // In congestion avoidance the window grows k packets per RTT, not one.
    h.lose(h.now - RTT / 2, CongestionKind::Loss);
    h.round();
    let w = h.cc.window();
    h.round();
    assert!(h.cc.window() > w + 5 * MSS, "{} -> {}", w, h.cc.window());
}

#[test]
fn k_is_clamped_by_uncongested_k_max() {
    // A*srtt = 1.5e6 B/s * 20 ms / 1200 B = 25 packets; k_max = 25 - 2*10 = 5.
    let bw = SharedBandwidth::new();
    bw.set_available(bits(1_500_000));
    let mut h = harness(config(7_500_000, EvalSlot::Rtts(32), None), Some(&bw));
    let t0 = h.now;
    ack_at(&mut h, t0, 20, MSS);
    let k_bw = Guarantee::k_bw(2000.0, 16.0, 0.0, 10.0, 1.0);
    assert!(k_bw > 15.0);
    assert_close(h.cc.k(), 5.0);
    assert_eq!(state(&h.cc).available, 1_500_000.0);
    // kmax_cwnd = 1 (eqs. (4)/(5) as printed): 25 - 10 = 15, still below k_bw.
    let mut c = config(7_500_000, EvalSlot::Rtts(32), None);
    c.kmax_cwnd = 1.0;
    let mut h = harness(c, Some(&bw));
    ack_at(&mut h, t0, 20, MSS);
    assert_close(h.cc.k(), 15.0);
    // k_max below k_min: k = k_min.
    bw.set_available(bits(1_200_000)); // 20 - 2*10 = 0
    let mut h = harness(config(7_500_000, EvalSlot::Rtts(32), None), Some(&bw));
    ack_at(&mut h, t0, 20, MSS);
    assert_eq!(h.cc.k(), 1.0);
}

/// Slot 1 (40 ms) misses; at the first ACK of slot 2 the congested k_max applies.
fn congested_k(physical_source: Option<u64>, physical_config: Option<u64>) -> (f64, State) {
    let bw = SharedBandwidth::new();
    if let Some(p) = physical_source {
        bw.set_physical(bits(p));
    }
    let mut c = config(1_200_000, EvalSlot::Rtts(8), Some(2));
    c.physical = physical_config.map(Rate::from_bytes_per_sec);
    let mut h = harness(c, Some(&bw));
    let t0 = h.now;
    bw.set_available(bits(1_200_000));
    ack_at(&mut h, t0, 20, MSS);
    // Uncongested: k_max = 1.2e6*0.02/1200 - 2*10 = 0, k_bw = 29: k = k_min.
    assert_eq!(h.cc.k(), 1.0);
    bw.set_available(bits(2_400_000));
    ack_at(&mut h, t0, 30, MSS);
    bw.set_available(bits(2_400_000));
    ack_at(&mut h, t0, 60, MSS);
    (h.cc.k(), state(&h.cc))
}

#[test]
fn k_is_clamped_by_congested_k_max() {
    // Slot 1 = [20, 60) ms: 2400 B / 40 ms = 60 kB/s < g_1 = 1.2 MB/s: missed.
    // g_2 = 1.2e6 + 1.2e6 - 6e4 = 2.34e6. avgA_1 is time-weighted:
    // (1.2e6 * 10 ms + 2.4e6 * 30 ms) / 40 ms = 2.1e6 (the plain mean would be 1.8e6).
    // k_max = (2.4e6 + 2.34e6 - 2.1e6) * 0.02 / 1200 - 2 * 12 = 44 - 24 = 20;
    // k_bw = 2 * (78 - 1*12 - 1) / 2 = 65.
    let (k, st) = congested_k(None, None);
    assert!(st.congested);
    assert_eq!(st.control_slot, 2);
    assert_close(st.goal, 2_340_000.0);
    assert_close(k, 20.0);
    // P = 1.8e6 B/s < 2.64e6: k_max = 1.8e6 * 0.02 / 1200 - 24 = 6,
    // from the source or from the configuration.
    assert_close(congested_k(Some(1_800_000), None).0, 6.0);
    assert_close(congested_k(None, Some(1_800_000)).0, 6.0);
    assert_close(congested_k(Some(1_800_000), Some(100_000_000)).0, 6.0);
}

#[test]
fn without_a_there_is_no_uncongested_k_max_and_p_bounds_the_congested_one() {
    let mut c = config(1_200_000, EvalSlot::Rtts(8), Some(2));
    c.physical = Some(Rate::from_bytes_per_sec(1_800_000));
    let mut h = harness(c, None);
    let t0 = h.now;
    ack_at(&mut h, t0, 20, MSS);
    assert_close(h.cc.k(), 29.0); // k_bw unclamped
    assert_eq!(state(&h.cc).available, 0.0);
    ack_at(&mut h, t0, 40, MSS);
    ack_at(&mut h, t0, 60, MSS); // slot 1 missed: k_max = P*srtt - 2*cwnd = 30 - 24
    assert!(state(&h.cc).congested);
    assert_close(h.cc.k(), 6.0);
}

// ---- goals and slots -------------------------------------------------

#[test]
fn deficit_carries_to_the_next_control_slot_and_is_discarded_at_the_evaluation_end() {
    // d = 4, s = 2: two control slots of 40 ms; one 1200 B ACK per 20 ms.
    let mut h = harness(config(1_200_000, EvalSlot::Rtts(4), Some(2)), None);
    let t0 = h.now;
    ack_at(&mut h, t0, 20, MSS);
    ack_at(&mut h, t0, 40, MSS);
    let st = state(&h.cc);
    assert_eq!((st.control_slot, st.goal, st.congested), (1, 1_200_000.0, false));
    ack_at(&mut h, t0, 60, MSS); // tput_1 = 2400 B / 40 ms = 60 kB/s
    let st = state(&h.cc);
    assert_eq!(st.control_slot, 2);
    assert_close(st.goal, 1_200_000.0 + (1_200_000.0 - 60_000.0));
    assert!(st.congested);
    ack_at(&mut h, t0, 80, MSS);
    ack_at(&mut h, t0, 100, MSS); // slot 2 ends, and with it the evaluation slot
    let st = state(&h.cc);
    assert_eq!((st.control_slot, st.goal, st.congested), (1, 1_200_000.0, false));
    assert_close(h.cc.last_eval_throughput().unwrap(), 4800.0 / 0.08);
    assert_eq!(h.cc.evaluations(), (1, 0));
    assert_eq!(h.cc.slot_rtts(), Some(2)); // would halve, but 2 is the floor

    // A surplus carries too: g_2 = 1000 + (1000 - 60000) < 0.
    let mut h = harness(config(1000, EvalSlot::Rtts(4), Some(2)), None);
    for ms in [20, 40, 60] {
        ack_at(&mut h, t0, ms, MSS);
    }
    let st = state(&h.cc);
    assert_eq!(st.control_slot, 2);
    assert_close(st.goal, -58_000.0);
    assert!(!st.congested);
    assert_eq!(h.cc.k(), 1.0);
}

// ---- aggregate -------------------------------------------------------

#[test]
fn a_lone_aggregate_member_behaves_as_the_paper_controller() {
    let bw = SharedBandwidth::new();
    bw.set_available(bits(2_000_000));
    let group = Aggregate::new();
    let c = config(1_200_000, EvalSlot::Rtts(8), Some(2));
    let mut alone = harness(c.clone(), Some(&bw));
    let mut member = harness(c, Some(&bw));
    member.cc = member.cc.with_aggregate(&group);
    member.now = alone.now;
    for h in [&mut alone, &mut member] {
        // Slow start to ~80 packets, then congestion avoidance with a loss
        // every 6 rounds: control and evaluation slots close, goals carry.
        for r in 0..40 {
            h.round();
            if r % 6 == 2 {
                h.lose_oldest();
            }
        }
    }
    assert_eq!(member.cc.snapshot(), alone.cc.snapshot());
    assert_eq!(member.cc.k(), alone.cc.k());
    assert_eq!(member.cc.evaluations(), alone.cc.evaluations());
    assert!(alone.cc.evaluations().0 >= 2, "{:?}", alone.cc.evaluations());
}

#[test]
fn aggregate_members_split_the_headroom_and_pool_their_carry() {
    // A = 1.5e6 B/s for the group. Member b reports a rate of 10 packets
    // per 20 ms = 600 kB/s; a (same target, same rate) then gets
    // A_a = 600e3 + 0.5 * (1.5e6 - 1.2e6) = 750 kB/s instead of 1.5e6:
    // k_max = 750e3 * 0.02 / 1200 - 2 * 10 = -7.5 -> k = k_min (alone: 5).
    let bw = SharedBandwidth::new();
    bw.set_available(bits(1_500_000));
    let group = Aggregate::new();
    let c = config(7_500_000, EvalSlot::Rtts(32), None);
    let mut a = harness(c.clone(), Some(&bw));
    a.cc = a.cc.with_aggregate(&group);
    let mut b = harness(c, Some(&bw));
    b.cc = b.cc.with_aggregate(&group);
    b.now = a.now;
    let t0 = a.now;
    ack_at(&mut b, t0, 20, MSS);
    ack_at(&mut a, t0, 20, MSS);
    assert_eq!(state(&a.cc).available, 750_000.0);
    assert_eq!(a.cc.k(), 1.0);
    drop(b);
    ack_at(&mut a, t0, 21, MSS);
    assert_eq!(state(&a.cc).available, 1_500_000.0);
    // Alone again: k_max = 25 - 2 * 11 (slow start grew cwnd by one packet).
    assert_close(a.cc.k(), 3.0);
}

#[test]
fn a_member_ahead_lowers_the_goal_of_one_behind() {
    // d = 4, s = 2 as in the carry test (control slots of 40 ms). Member b
    // delivers 120 kB in its first slot (ahead), member a 2400 B (behind).
    let group = Aggregate::new();
    let c = config(1_200_000, EvalSlot::Rtts(4), Some(2));
    let mut a = harness(c.clone(), None);
    a.cc = a.cc.with_aggregate(&group);
    let mut b = harness(c, None);
    b.cc = b.cc.with_aggregate(&group);
    b.now = a.now;
    let t0 = a.now;
    ack_at(&mut b, t0, 20, MSS);
    ack_at(&mut b, t0, 40, 120_000 - MSS);
    ack_at(&mut b, t0, 60, MSS); // tput_b = 120 kB / 40 ms = 3e6: carry -1.8e6
    assert_close(state(&b.cc).goal, 1_200_000.0 - 0.5 * 1_800_000.0);
    for ms in [20, 40, 60] {
        ack_at(&mut a, t0, ms, MSS); // tput_a = 60e3: carry +1.14e6
    }
    // Pooled carry: -1.8e6 + 1.14e6 = -0.66e6, half of it each.
    assert_close(state(&a.cc).goal, 1_200_000.0 - 330_000.0);
    // Alone, a would chase 2.34e6.
}

#[test]
fn a_long_gap_closes_one_slot_over_the_whole_gap() {
    let mut h = harness(config(1_200_000, EvalSlot::Rtts(8), Some(2)), None);
    let t0 = h.now;
    ack_at(&mut h, t0, 20, MSS);
    ack_at(&mut h, t0, 220, MSS); // five slots' worth of silence
    let st = state(&h.cc);
    assert_eq!(st.control_slot, 2);
    // tput_1 = 1200 B / 200 ms = 6 kB/s.
    assert_close(st.goal, 2.0 * 1_200_000.0 - 6_000.0);
    ack_at(&mut h, t0, 240, MSS);
    assert_eq!(state(&h.cc).control_slot, 2); // the new slot started at 220 ms
}

#[test]
fn s_halves_when_congested_and_missed() {
    // d = 8, s = 4: two control slots of 80 ms; 60 kB/s against 1.2 MB/s.
    let mut h = harness(config(1_200_000, EvalSlot::Rtts(8), Some(4)), None);
    let t0 = h.now;
    for ms in (20..=340).step_by(20) {
        ack_at(&mut h, t0, ms, MSS);
        let expected = if ms < 180 { 4 } else { 2 };
        assert_eq!(h.cc.slot_rtts(), Some(expected), "at {ms} ms");
        assert_eq!(state(&h.cc).slot_rtts, expected);
    }
    // The second evaluation slot (4 x 40 ms) ended at 340 ms: s stays at 2.
    assert_eq!(h.cc.evaluations(), (2, 0));

    // s = d: the single control slot missing its goal counts as congested.
    let mut h = harness(config(1_200_000, EvalSlot::Rtts(8), Some(8)), None);
    for ms in (20..=180).step_by(20) {
        ack_at(&mut h, t0, ms, MSS);
    }
    assert_eq!(h.cc.evaluations(), (1, 0));
    assert_eq!(h.cc.slot_rtts(), Some(4));
}

#[test]
fn s_doubles_when_uncongested_met_and_fast_enough() {
    // d = 8, s = 2; 60 kB/s against 1 kB/s; cwnd/srtt >= 12000 B / 20 ms.
    let mut h = harness(config(1000, EvalSlot::Rtts(8), Some(2)), None);
    let t0 = h.now;
    for ms in (20..=500).step_by(20) {
        ack_at(&mut h, t0, ms, MSS);
        let expected = match ms {
            ..180 => 2,    // first evaluation slot: 4 x 40 ms
            180..340 => 4, // second: 2 x 80 ms
            _ => 8,        // third: 1 x 160 ms, ends at 500 ms; 8 = d is the ceiling
        };
        assert_eq!(h.cc.slot_rtts(), Some(expected), "at {ms} ms");
    }
    assert_eq!(h.cc.evaluations(), (3, 3));
    assert_eq!(state(&h.cc).eval_rtts, 8);
}

#[test]
fn s_stays_otherwise() {
    // d = 16, s = 4: four control slots of 80 ms, evaluation slot [20, 340) ms.
    let t0 = Instant::now();
    // (a) Uncongested and met, but cwnd/srtt = 12000 B / 20 ms = 600 kB/s < 900 kB/s.
    // ACK frames of 24 000 B every 20 ms: 1.2 MB/s; app-limited, so cwnd stays.
    let mut h = harness(config(900_000, EvalSlot::Rtts(16), Some(4)), None);
    h.app_limited = true;
    for ms in (20..=340).step_by(20) {
        ack_at(&mut h, t0, ms, 24_000);
    }
    assert_eq!(h.cc.window(), 12_000);
    assert_eq!(h.cc.evaluations(), (1, 1));
    assert!(!state(&h.cc).congested);
    assert_eq!(h.cc.slot_rtts(), Some(4));
    // Same with target 600 kB/s = cwnd/srtt: it doubles (the boundary case).
    let mut h = harness(config(600_000, EvalSlot::Rtts(16), Some(4)), None);
    h.app_limited = true;
    for ms in (20..=340).step_by(20) {
        ack_at(&mut h, t0, ms, 24_000);
    }
    assert_eq!(h.cc.slot_rtts(), Some(8));

    // (b) Congested (slot 1: 4800 B / 80 ms = 60 kB/s < 600 kB/s) but met:
    // (4800 + 12 * 24000) B / 320 ms = 915 kB/s >= 600 kB/s.
    let mut h = harness(config(600_000, EvalSlot::Rtts(16), Some(4)), None);
    h.app_limited = true;
    for ms in (20..=340).step_by(20) {
        ack_at(&mut h, t0, ms, if ms < 100 { MSS } else { 24_000 });
        if ms == 100 {
            assert!(state(&h.cc).congested);
        }
    }
    assert_close(h.cc.last_eval_throughput().unwrap(), 915_000.0);
    assert_eq!(h.cc.evaluations(), (1, 1));
    assert_eq!(h.cc.slot_rtts(), Some(4));
}

#[test]
fn eval_time_is_rounded_to_a_power_of_two_in_log_scale() {
    let cases = [
        (1000, None, 64, 32),  // 50 -> 2^round(5.64) = 64
        (928, None, 64, 32),   // 46.4 -> 2^round(5.54) = 64 (linear rounding: 32)
        (900, None, 32, 16),   // 45 -> 2^round(5.49) = 32
        (640, None, 32, 16),   // exactly 32
        (10, None, 2, 2),      // 0.5 -> at least 2
        (100, Some(16), 4, 4), // 5 -> 4; the configured s is clamped to d
    ];
    for (ms, slot, d, s) in cases {
        let mut h = harness(config(1000, EvalSlot::Time(Duration::from_millis(ms)), slot), None);
        assert_eq!((h.cc.eval_rtts(), h.cc.slot_rtts()), (None, None));
        assert_eq!(state(&h.cc).eval_rtts, 0);
        h.advance(RTT);
        h.ack(MSS);
        assert_eq!(h.cc.eval_rtts(), Some(d), "{ms} ms");
        assert_eq!(h.cc.slot_rtts(), Some(s), "{ms} ms");
        // d is fixed once: a smaller min RTT later does not change it.
        h.rtt = RTT / 2;
        h.advance(RTT);
        h.ack(MSS);
        assert_eq!(h.cc.eval_rtts(), Some(d));
    }
}

#[test]
fn survives_odd_inputs() {
    // Zero and Duration::MAX RTTs reach the slot-end test and n_j; with an
    // oracle that reads 0 and u64::MAX / 2 bits per second in turn.
    for a in [0, u64::MAX / 2] {
        let bw = SharedBandwidth::new();
        bw.set_available(Rate::from_bits_per_sec(a));
        bw.set_physical(Rate::from_mbit_per_sec(100));
        let mut cc = Guarantee::new(
            config(20_000_000, EvalSlot::Rtts(4), Some(2)),
            DATAGRAM,
            Some(Arc::new(bw)),
        );
        crate::testutil::fuzz_odd_inputs(&mut cc, |cc| assert!(cc.k().is_finite() && cc.k() >= 1.0));
    }
}

#[test]
fn window_is_finite_and_at_least_the_minimum() {
    let bw = SharedBandwidth::new();
    bw.set_available(Rate::from_bits_per_sec(u64::MAX / 2));
    let mut h = harness(config(u64::MAX / 16, EvalSlot::Rtts(2), None), Some(&bw));
    h.round();
    h.lose(h.now - RTT / 2, CongestionKind::Loss);
    for _ in 0..20 {
        h.advance(RTT);
        h.ack(MSS);
    }
    assert!(h.cc.k().is_finite());
    assert!(h.cc.window() >= min_window(MSS));
    assert_eq!(h.cc.snapshot().cwnd_bytes, h.cc.window());
    h.lose(h.now, CongestionKind::PersistentCongestion);
    assert_eq!(h.cc.window(), min_window(MSS));
}

// ---- floor mode ------------------------------------------------------

/// Floor mode with d = 4, s = 2 (evaluation slots of 80 ms at a 20 ms RTT)
/// and a goodput target whose acknowledged-byte rate is `acked_bytes_per_sec`
/// (the default QUIC overhead of 35 bytes per 1200-byte packet added).
fn floor_config(acked_bytes_per_sec: u64) -> GuaranteeConfig {
    let goodput = acked_bytes_per_sec * (MSS - u64::from(QUIC_OVERHEAD)) / MSS;
    GuaranteeConfig {
        eval: EvalSlot::Rtts(4),
        slot_rtts: Some(2),
        ..GuaranteeConfig::new(Rate::from_bytes_per_sec(goodput))
    }
}

fn floor_bytes(cc: &Guarantee) -> (u64, bool) {
    match cc.snapshot().state {
        AlgorithmState::Guarantee {
            floor_bytes,
            infeasible,
            ..
        } => (floor_bytes, infeasible),
        other => panic!("not a guarantee snapshot: {other:?}"),
    }
}

#[test]
fn the_default_mode_is_the_floor_and_the_paper_mode_has_none() {
    assert_eq!(
        GuaranteeConfig::new(Rate::from_mbit_per_sec(1)).mode,
        GuaranteeMode::Floor
    );
    let mut paper = harness(config(1_800_000, EvalSlot::Rtts(4), Some(2)), None);
    paper.round();
    assert_eq!(paper.cc.floor_window(), 0);
    assert_eq!(paper.cc.floor_factor(), None);
    assert_eq!(floor_bytes(&paper.cc), (0, false));
}

#[test]
fn a_loss_cuts_no_lower_than_the_floor() {
    // bw = 1.8e6 acknowledged B/s, srtt 20 ms, f = 1: floor = 36 000 bytes.
    let mut floor = harness(floor_config(1_800_000), None);
    let mut paper = harness(config(1_800_000, EvalSlot::Rtts(4), Some(2)), None);
    for h in [&mut floor, &mut paper] {
        h.round();
        h.round();
        assert_eq!(h.cc.window(), 48_000);
    }
    assert_eq!(floor.cc.floor_factor(), Some(1.0));
    let got = floor.cc.floor_window();
    assert!((35_990..=36_000).contains(&got), "{got}");
    assert_eq!(floor_bytes(&floor.cc).0, got);
    for h in [&mut floor, &mut paper] {
        let sent = h.now - RTT / 2;
        h.lose(sent, CongestionKind::Loss);
        h.lose(sent, CongestionKind::Loss); // once per round trip
    }
    assert_eq!(paper.cc.window(), 24_000);
    assert_eq!(floor.cc.window(), got);
    assert_eq!(floor.cc.snapshot().ssthresh_bytes, Some(got));
    // ECN is a congestion signal like loss (RFC 9002 §7.1): same floor.
    floor.advance(RTT);
    floor.round();
    let w = floor.cc.window();
    floor.lose(floor.now, CongestionKind::Ecn);
    assert_eq!(floor.cc.window(), (w / 2).max(got));
}

#[test]
fn a_loss_below_the_floor_keeps_the_window_and_slow_start_climbs_to_the_floor() {
    let mut h = harness(floor_config(1_800_000), None);
    h.round(); // cwnd 24 000 < floor 36 000
    assert_eq!(h.cc.window(), 24_000);
    let floor = h.cc.floor_window();
    h.lose(h.now - RTT / 2, CongestionKind::Loss);
    assert_eq!(h.cc.window(), 24_000, "a loss never raises nor cuts below the floor");
    assert_eq!(h.cc.snapshot().ssthresh_bytes, Some(floor));
    h.advance(RTT);
    h.round(); // packets sent before the loss: no growth
    assert_eq!(h.cc.window(), 24_000);
    h.round(); // slow start up to the floor, then the slope
    assert_eq!(h.cc.snapshot().ssthresh_bytes, Some(floor));
    assert_eq!(h.cc.snapshot().phase, Phase::CongestionAvoidance);
    assert!(h.cc.window() >= floor, "{} vs {floor}", h.cc.window());
}

#[test]
fn persistent_congestion_still_collapses_the_window_but_keeps_the_floor_as_ssthresh() {
    let mut h = harness(floor_config(1_800_000), None);
    h.round();
    h.round();
    let floor = h.cc.floor_window();
    h.lose(h.now, CongestionKind::PersistentCongestion);
    assert_eq!(h.cc.window(), min_window(MSS));
    assert_eq!(h.cc.snapshot().ssthresh_bytes, Some(floor));
    assert_eq!(h.cc.snapshot().phase, Phase::SlowStart);
}

#[test]
fn the_target_counts_goodput() {
    // 1 165 000 B/s of goodput is 1 200 000 acknowledged B/s with 35 of every
    // 1200 bytes in headers; overhead=0 (a payload-counting transport) keeps it.
    let target = Rate::from_bytes_per_sec(1_165_000);
    let run = |overhead: Option<u32>| {
        let c = GuaranteeConfig {
            overhead,
            eval: EvalSlot::Rtts(4),
            slot_rtts: Some(2),
            ..GuaranteeConfig::new(target)
        };
        let mut h = harness(c, None);
        h.round();
        h.cc.floor_window()
    };
    assert_eq!(run(None), 24_000);
    assert_eq!(run(Some(0)), 23_300);
    assert_eq!(GuaranteeConfig::paper(target).overhead_bytes(), 0);
}

/// Acknowledge `per_rtt` bytes every 20 ms for `rtts` round trips from `t0 + start_ms`.
fn trickle(h: &mut Harness<Guarantee>, t0: Instant, start_ms: u64, rtts: u64, per_rtt: u64) -> u64 {
    for i in 0..rtts {
        ack_at(h, t0, start_ms + 20 * i, per_rtt);
    }
    start_ms + 20 * rtts
}

#[test]
fn the_breaker_trips_after_missed_slots_reports_infeasible_and_retries() {
    // Evaluation slots of 80 ms (4 ACKs); 1200 B per 20 ms = 60 kB/s against 1.2 MB/s.
    let mut h = harness(floor_config(1_200_000), None);
    let t0 = h.now;
    let ms = trickle(&mut h, t0, 20, 8, MSS); // two slots missed
    assert!(!h.cc.infeasible());
    assert!(h.cc.floor_window() > 0);
    assert_eq!(h.cc.floor_factor(), Some(2.0), "a deep miss: the largest floor");
    trickle(&mut h, t0, ms, 5, MSS); // the third ends at the first ACK after 260 ms
    assert!(h.cc.infeasible());
    assert_eq!(h.cc.breaker_trips(), 1);
    assert_eq!(h.cc.evaluations(), (3, 0));
    assert_eq!(floor_bytes(&h.cc), (0, true));
    assert_eq!(h.cc.k(), 1.0, "open breaker: plain Reno");
    // A loss now is Reno's halving.
    h.round();
    let w = h.cc.window();
    h.lose(h.now - RTT / 2, CongestionKind::Loss);
    assert_eq!(h.cc.window(), (w / 2).max(min_window(MSS)));
    // After the off period (8 slots) the floor is back, still infeasible.
    let mut now_ms = h.now.duration_since(t0).as_millis() as u64 + 20;
    while h.cc.floor_window() == 0 {
        now_ms = trickle(&mut h, t0, now_ms, 1, MSS);
    }
    assert_eq!(h.cc.evaluations().0, 3 + u64::from(Floor::FIRST_BACKOFF));
    assert!(h.cc.infeasible());
    // The retry ramps from 1.5x what Reno got (60 kB/s): 90 kB/s * 20 ms,
    // and the slope does not chase the whole target meanwhile.
    assert!((1790..=1800).contains(&h.cc.floor_window()), "{}", h.cc.floor_window());
    trickle(&mut h, t0, now_ms, 1, MSS);
    now_ms += 20;
    assert_eq!(h.cc.k(), 1.0);
    // A slot that meets the target clears the verdict.
    now_ms = trickle(&mut h, t0, now_ms, 4, 60_000);
    trickle(&mut h, t0, now_ms, 1, 60_000);
    assert!(!h.cc.infeasible());
    assert_eq!(h.cc.breaker_trips(), 1);
}

#[test]
fn an_easy_target_lowers_the_floor_to_its_minimum() {
    // 60 kB per 20 ms = 3 MB/s against 1.2 MB/s: f falls by 0.02 a slot from 1 to 0.5.
    let mut h = harness(floor_config(1_200_000), None);
    let t0 = h.now;
    trickle(&mut h, t0, 20, 4 * 24 + 1, 60_000);
    assert_eq!(h.cc.evaluations(), (24, 24));
    assert!((h.cc.floor_factor().unwrap() - (1.0 - 24.0 * Floor::MAX_STEP_DOWN)).abs() < 1e-9);
    trickle(&mut h, t0, 20 * (4 * 24 + 2), 8, 60_000);
    assert_eq!(h.cc.floor_factor(), Some(Floor::MIN_FACTOR));
    assert!(!h.cc.infeasible());
}

#[test]
fn aggregate_floors_share_half_the_physical_bandwidth() {
    // Two members, 1.8e6 acknowledged B/s each (f = 1); P = 3.2e6 B/s
    // (each target within 0.6 P): floors may claim 1.6e6 together, 0.8e6
    // each: 16 000 bytes at 20 ms.
    let bw = SharedBandwidth::new();
    bw.set_physical(bits(3_200_000));
    let group = Aggregate::new();
    let mut a = harness(floor_config(1_800_000), Some(&bw));
    a.cc = a.cc.with_aggregate(&group);
    let mut b = harness(floor_config(1_800_000), Some(&bw));
    b.cc = b.cc.with_aggregate(&group);
    b.now = a.now;
    b.round();
    a.round();
    assert!(
        (15_990..=16_000).contains(&a.cc.floor_window()),
        "{}",
        a.cc.floor_window()
    );
    drop(b);
    a.round(); // alone: 1.8e6 > 1.6e6 still, the cap binds at 32 000
    assert!(
        (31_990..=32_000).contains(&a.cc.floor_window()),
        "{}",
        a.cc.floor_window()
    );
    // Without a known P there is no cap.
    let group = Aggregate::new();
    let mut c = harness(floor_config(1_800_000), None);
    c.cc = c.cc.with_aggregate(&group);
    c.round();
    assert!(c.cc.floor_window() >= 35_990);
}

// ---- a floor that knows its path -------------------------------------

/// A path in virtual time, one round trip per step: the flow's packets fill
/// a pipe of `share * base` bytes and a DropTail queue of `queue` bytes;
/// whatever the window holds beyond that is dropped (the last packets of
/// the round). The RTT is `base` plus the flow's own queueing delay.
struct Path {
    share: f64,
    base: Duration,
    queue: u64,
}

/// What [`Path::run`] saw.
#[derive(Debug, Default)]
struct PathRun {
    sent: u64,
    lost: u64,
    /// Evaluation slots completed when the target was first declared infeasible.
    infeasible_after: Option<u64>,
    /// Largest floor window seen, bytes.
    max_floor: u64,
}

impl Path {
    fn run(&self, cc: &mut Guarantee, t0: Instant, rounds: u32) -> (PathRun, Instant) {
        let mut now = t0;
        let mut run = PathRun::default();
        let pipe = self.share * self.base.as_secs_f64();
        for _ in 0..rounds {
            let packets = (cc.window() / MSS).max(1);
            let fits = ((pipe as u64 + self.queue) / MSS).max(1);
            let delivered = packets.min(fits);
            let queued = (delivered * MSS).saturating_sub(pipe as u64);
            let rtt = self.base + Duration::from_secs_f64(queued as f64 / self.share);
            let start = now;
            now += rtt;
            let sample = RttSample::new(rtt, rtt, self.base);
            for i in 0..delivered {
                cc.on_ack(now, &Ack::new(start + Duration::from_nanos(i + 1), MSS, sample));
            }
            cc.on_end_acks(now, 0, false);
            let lost = packets - delivered;
            if lost > 0 {
                let sent = start + Duration::from_nanos(packets);
                cc.on_congestion(now, &Congestion::new(CongestionKind::Loss, sent, lost * MSS));
            }
            run.sent += packets;
            run.lost += lost;
            run.max_floor = run.max_floor.max(cc.floor_window());
            if cc.infeasible() && run.infeasible_after.is_none() {
                run.infeasible_after = Some(cc.evaluations().0);
            }
        }
        (run, now)
    }
}

/// Floor mode, evaluation slots of 8 RTTs (control slots of 4), for an
/// acknowledged-byte target of `acked_bytes_per_sec`.
fn path_config(acked_bytes_per_sec: u64) -> GuaranteeConfig {
    GuaranteeConfig {
        eval: EvalSlot::Rtts(8),
        slot_rtts: Some(4),
        ..floor_config(acked_bytes_per_sec)
    }
}

#[test]
fn an_infeasible_target_is_declared_after_two_slots() {
    // The path carries 1 MB/s for this flow (20 ms, a 10-packet queue); the
    // target is twice that. The floor holds more than fits and loses about
    // half its packets in every round it binds: the second slot loses more
    // than 8 % of them, evidence of an overbooked path (overbooked.rs), and
    // the breaker trips after two slots, not three.
    let path = Path {
        share: 1_000_000.0,
        base: RTT,
        queue: 10 * MSS,
    };
    let mut cc = Guarantee::new(path_config(2_000_000), DATAGRAM, None);
    let (run, _) = path.run(&mut cc, Instant::now(), 400);
    assert_eq!(run.infeasible_after, Some(2), "{run:?}");
    assert!(cc.breaker_trips() >= 1);
}

#[test]
fn a_feasible_target_still_holds_on_the_path() {
    // The same path, a target of 80 % of what it carries: no loss rule fires.
    let path = Path {
        share: 1_000_000.0,
        base: RTT,
        queue: 10 * MSS,
    };
    let mut cc = Guarantee::new(path_config(800_000), DATAGRAM, None);
    let (run, _) = path.run(&mut cc, Instant::now(), 400);
    let (done, met) = cc.evaluations();
    assert!(met + 1 >= done, "{met} of {done} slots met ({run:?})");
    assert_eq!(cc.breaker_trips(), 0);
    assert!(!cc.infeasible());
}

#[test]
fn the_floor_never_exceeds_the_paths_bandwidth_delay_product() {
    // P = 2.5 MB/s at a 20 ms minimum RTT: 50 000 bytes, whatever the
    // smoothed RTT (which the queue inflates). The target, 1.4e6 B/s, is
    // within 0.6 P: a floor of 28 000 bytes at 20 ms, 84 000 at 60 ms.
    let bw = SharedBandwidth::new();
    bw.set_physical(bits(2_500_000));
    let mut h = harness(floor_config(1_400_000), Some(&bw));
    h.round();
    h.round();
    assert!(
        (27_990..=28_000).contains(&h.cc.floor_window()),
        "{}",
        h.cc.floor_window()
    );
    h.srtt = Some(RTT * 3);
    h.rtt = RTT * 3;
    h.round();
    assert_eq!(h.cc.floor_window(), 50_000);
    // Without P: f * bw * srtt.
    let mut h = harness(floor_config(3_000_000), None);
    h.round();
    assert!(h.cc.floor_window() >= 59_990, "{}", h.cc.floor_window());
}

#[test]
fn the_flow_paces_at_the_floor_while_the_floor_binds() {
    // bw = 1.8e6 acknowledged B/s, srtt 20 ms, f = 1: floor = 36 000 bytes.
    let mut floor = harness(floor_config(1_800_000), None);
    let mut paper = harness(config(1_800_000, EvalSlot::Rtts(4), Some(2)), None);
    assert_eq!(floor.cc.pacing_rate(), None, "no RTT yet");
    floor.round(); // cwnd 24 000 < 2 x floor: paced at floor / srtt
    paper.round();
    assert_eq!(paper.cc.pacing_rate(), None, "the paper's mode never paces");
    let w = floor.cc.floor_window();
    let rate = floor.cc.pacing_rate().expect("paced below two floor windows");
    let want = w as f64 / RTT.as_secs_f64();
    assert!((rate as f64 - want).abs() <= 1.0, "{rate} vs {want}");
    floor.round(); // 48 000: max(cwnd, floor) / srtt
    let rate = floor.cc.pacing_rate().expect("still below two floor windows");
    let want = floor.cc.window() as f64 / RTT.as_secs_f64();
    assert!((rate as f64 - want).abs() <= 1.0, "{rate} vs {want}");
    // Two floor windows and more: the next halving would not reach the
    // floor, which does not bind, and the transport's own pacing stands.
    floor.round();
    assert!(
        floor.cc.window() >= 2 * floor.cc.floor_window(),
        "{}",
        floor.cc.window()
    );
    assert_eq!(floor.cc.pacing_rate(), None);
}

#[test]
fn a_target_above_the_path_share_is_declared_infeasible_and_runs_as_reno() {
    // P = 2.4e6 B/s; 0.6 P = 1.44e6 < bw = 1.8e6: infeasible from the first ACK on.
    let bw = SharedBandwidth::new();
    bw.set_physical(bits(2_400_000));
    let mut h = harness(floor_config(1_800_000), Some(&bw));
    h.round();
    h.round();
    assert_eq!(floor_bytes(&h.cc), (0, true));
    assert_eq!((h.cc.k(), h.cc.pacing_rate()), (1.0, None));
    let w = h.cc.window();
    h.lose(h.now - RTT / 2, CongestionKind::Loss);
    assert_eq!(h.cc.window(), w / 2, "Reno's halving, no floor");
    // The path grows: the floor is back, the verdict gone.
    bw.set_physical(bits(4_000_000));
    h.advance(RTT);
    h.round();
    let (floor, infeasible) = floor_bytes(&h.cc);
    assert!(floor > 0 && !infeasible, "{floor} {infeasible}");
}

#[test]
fn a_slot_in_which_capacity_came_back_does_not_raise_the_floor() {
    // bw = 1.8e6 acknowledged B/s; P = 4e6 (0.6 P = 2.4e6: feasible).
    let bw = SharedBandwidth::new();
    bw.set_physical(bits(4_000_000));
    let mut h = harness(floor_config(1_800_000), Some(&bw));
    let t0 = h.now;
    // Met slots at 3 MB/s: f comes down from 1 by 0.02 a slot.
    let mut ms = trickle(&mut h, t0, 20, 4 * 5 + 1, 60_000);
    let before = h.cc.floor_factor().unwrap();
    assert!(before < 1.0 && !h.cc.infeasible(), "{before}");
    // Capacity drops to P = 2e6 (0.6 P = 1.2e6 < bw): infeasible at once,
    // and the flow gets next to nothing for a few slots.
    bw.set_physical(bits(2_000_000));
    ms = trickle(&mut h, t0, ms, 4 * 3, MSS);
    assert!(h.cc.infeasible() && h.cc.floor_window() == 0);
    // Until the ACK that begins a slot, the path still too small.
    let done = h.cc.evaluations().0;
    while h.cc.evaluations().0 == done {
        ms = trickle(&mut h, t0, ms, 1, MSS);
    }
    // Capacity comes back within that slot, which then ends with a
    // throughput far below the target (0.03 bw): a deep miss.
    bw.set_physical(bits(4_000_000));
    let done = h.cc.evaluations().0;
    while h.cc.evaluations().0 == done {
        ms = trickle(&mut h, t0, ms, 1, MSS);
    }
    // Not judged: f as before the drop (not 2), no miss held against the target.
    assert_eq!(h.cc.floor_factor(), Some(before));
    assert!(!h.cc.infeasible());
    let floor = Floor::window(before * h.cc.bw, RTT);
    assert!(
        h.cc.floor_window().abs_diff(floor) <= 1,
        "{} vs {floor}",
        h.cc.floor_window()
    );
    // The next slot, wholly on the full path, is judged: a miss raises f.
    let done = h.cc.evaluations().0;
    while h.cc.evaluations().0 == done {
        ms = trickle(&mut h, t0, ms, 1, MSS);
    }
    assert_eq!(h.cc.floor_factor(), Some(Floor::MAX_FACTOR));
}

/// Misses at 5 datagrams per 20 ms (300 kB/s against 1.2 MB/s) with one
/// ECN event every `ecn_every` ACKs (none if 0): the evaluation slots
/// completed when the target is first declared infeasible.
fn slots_to_infeasible(ecn_every: u64) -> u64 {
    let mut h = harness(floor_config(1_200_000), None);
    let t0 = h.now;
    for i in 0..40 {
        ack_at(&mut h, t0, 20 + 20 * i, 5 * MSS);
        if ecn_every > 0 && i % ecn_every == 0 {
            h.lose(h.now - RTT / 2, CongestionKind::Ecn);
        }
        if h.cc.infeasible() {
            return h.cc.evaluations().0;
        }
    }
    panic!("never infeasible");
}

#[test]
fn ecn_marks_count_as_evidence_of_an_infeasible_target_like_losses() {
    // Without marks: three missed slots trip the breaker.
    assert_eq!(slots_to_infeasible(0), 3);
    // An ECN event at every ACK: one marked datagram per 5 acknowledged,
    // 20 % of what was sent, above the 15 % loss limit. The second slot
    // (the first holds slow start) is lossy and counts twice: two slots.
    assert_eq!(slots_to_infeasible(1), 2);
    // A mark every other ACK (10 %) is within the 15 % loss limit but above
    // the overbooked path's 8 % (`overbooked.rs`), which applies from the
    // third slot on (the second's limit is 15 %): the breaker opens at the
    // third slot, as much evidence as three plain misses.
    assert_eq!(slots_to_infeasible(2), 3);
    // A mark every fourth ACK (5 %) is within both: three slots, as without
    // marks.
    assert_eq!(slots_to_infeasible(4), 3);
}

/// `f` before and after a slot that misses (0.7 bw), `f` having come down
/// to about 1.2 through met slots, and the breaker trips by then; with
/// `ecn`, four ECN events after each of its ACKs (22 % of the datagrams it
/// acknowledged).
fn f_around_a_missed_slot(ecn: bool) -> (f64, Option<f64>, u64) {
    let mut h = harness(floor_config(1_200_000), None);
    let t0 = h.now;
    // The first slot misses at 0.5 bw: f = 2.
    let mut ms = 20;
    while h.cc.evaluations().0 == 0 {
        ms = trickle(&mut h, t0, ms, 1, 12_000);
    }
    assert_eq!(h.cc.floor_factor(), Some(2.0));
    // Met slots at 2.5 bw bring f down by 0.02 a slot; then one at 1.25 bw
    // (the ACK that ends a slot counts in the next).
    while h.cc.floor_factor().unwrap() > 1.2 + 1e-9 {
        ms = trickle(&mut h, t0, ms, 1, 60_000);
    }
    let done = h.cc.evaluations().0;
    while h.cc.evaluations().0 == done {
        ms = trickle(&mut h, t0, ms, 1, 30_000);
    }
    let f = h.cc.floor_factor().unwrap();
    // The slot: 30 000 + 3 x 12 000 bytes in 80 ms.
    let done = h.cc.evaluations().0;
    while h.cc.evaluations().0 == done {
        ms = trickle(&mut h, t0, ms, 1, 12_000);
        if ecn && h.cc.evaluations().0 == done {
            for _ in 0..4 {
                h.lose(h.now - RTT / 2, CongestionKind::Ecn);
            }
        }
    }
    (f, h.cc.floor_factor(), h.cc.breaker_trips())
}

#[test]
fn an_ecn_marked_slot_never_raises_the_floor() {
    // Clean, the miss raises f (to its cap); marked, it does not: 22 %
    // marked is evidence of an overbooked path (`overbooked.rs`), which
    // opens the breaker at once instead, as a slot that lost as much does.
    let (f, after, trips) = f_around_a_missed_slot(false);
    assert_eq!(trips, 0);
    let after = after.expect("clean: still engaged");
    assert!(after > 1.5 * f, "clean: {f} -> {after}");
    let (f, after, trips) = f_around_a_missed_slot(true);
    assert_eq!(trips, 1, "marked: the breaker opens");
    assert!(after.is_none_or(|a| a <= f), "marked: {f} -> {after:?}");
}
