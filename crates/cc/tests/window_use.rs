//! RFC 9002 §7.8 for every controller: a sender that never fills its window
//! (held back by its own rate, the CPU or flow control, while quinn-proto
//! calls it not application-limited) does not grow that window without
//! bound. The transport side is [`WindowUse`], as quinn-proto's adapter
//! drives it: `on_sent` per transmission, the verdict for each ACK, then
//! `on_end_acks` with what stays in flight.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use tput_cc::{Ack, BandwidthSource, ControllerSpec, Phase, RttSample, SharedBandwidth, WindowUse};

const MSS: u64 = 1200;

fn specs() -> Vec<ControllerSpec> {
    [
        "newreno",
        "newreno:count=acks",
        "cubic",
        "cubic:fast_convergence=false,reno_friendly=false",
        "vegas",
        "ctcp",
        "fixed:rate=1Mbit/s",
        "guarantee:target=20Mbit/s",
        "guarantee:target=20Mbit/s,mode=paper",
        "guarantee:target=20Mbit/s,abw=inline",
        "bbr",
    ]
    .iter()
    .map(|s| s.parse().unwrap())
    .collect()
}

/// The largest window `spec` reaches over `rounds` round trips of `rtt` when
/// the sender never has more than `cap` packets in flight and the receiver
/// acknowledges every `ack_every` packets. `judge` false leaves out the
/// window-use verdict (the adapter before RFC 9002 §7.8 was applied).
fn largest_window(spec: &ControllerSpec, cap: u64, rtt: Duration, ack_every: usize, rounds: u32, judge: bool) -> u64 {
    let bw = SharedBandwidth::new();
    bw.set_physical(tput_cc::units::Rate::from_mbit_per_sec(1000));
    let source: Arc<dyn BandwidthSource> = Arc::new(bw);
    let mut cc = spec.build_with(MSS as u16, Some(source));
    let mut usage = WindowUse::new();
    let t0 = Instant::now();
    let mut now = t0;
    let mut flight: VecDeque<Instant> = VecDeque::new();
    let mut largest = cc.window();
    let end = t0 + rtt * rounds;
    while now < end {
        // The sender fills what its own limit and the window allow.
        while (flight.len() as u64) < cap && (flight.len() as u64 + 1) * MSS <= cc.window() {
            cc.on_sent(now, MSS);
            usage.on_sent(now, MSS);
            flight.push_back(now);
        }
        let Some(&oldest) = flight.front() else { break };
        now = now.max(oldest + rtt);
        let rtt_sample = RttSample::uniform(rtt);
        for _ in 0..ack_every {
            let Some(sent) = flight.pop_front() else { break };
            let app_limited =
                judge && !usage.window_used(now, cc.window(), rtt, || cc.snapshot().phase == Phase::SlowStart);
            cc.on_ack(now, &Ack::new(sent, MSS, rtt_sample).with_app_limited(app_limited));
        }
        let in_flight = flight.len() as u64 * MSS;
        usage.on_end_acks(in_flight);
        cc.on_end_acks(now, in_flight, false);
        largest = largest.max(cc.window());
    }
    largest
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    /// The window stays within twice the flight the sender uses (RFC 7661
    /// §4.3's validated window; three times in slow start), plus one ACK
    /// batch's growth, or at its initial size; BBR's within its model's bound.
    #[test]
    fn an_unused_window_does_not_grow(cap in 1u64..40, rtt_ms in 1u64..60, ack_every in 1usize..3) {
        let rtt = Duration::from_millis(rtt_ms);
        for spec in specs() {
            let initial = spec.build(MSS as u16).window();
            // Three times the flight in slow start, twice in congestion avoidance.
            let mut bound = initial.max(3 * cap * MSS + 2 * MSS * ack_every as u64);
            if spec.name() == "bbr" {
                // BBR's window follows its model, not ACKs (draft-ietf-ccwg-bbr-06
                // §5.6.4): twice the estimated BDP plus its quantization budget
                // and the aggregation allowance. This sender's back-to-back
                // sends inflate its bandwidth samples: the bound is that the
                // window stays proportional to the flight (5.5 times it here,
                // the same after 300 or 3000 round trips).
                bound = initial.max(6 * cap * MSS) + 8 * MSS;
            }
            let largest = largest_window(&spec, cap, rtt, ack_every, 300, true);
            prop_assert!(largest <= bound, "{spec}: window reached {largest} bytes with {cap} packets in flight at most (bound {bound})");
        }
    }
}

/// Without the verdict the same sender's window grows far beyond its flight
/// (the test above can fail), and a sender that fills its window still grows it.
#[test]
fn the_verdict_is_what_holds_the_window() {
    let rtt = Duration::from_millis(10);
    for spec in ["newreno", "cubic", "vegas", "ctcp", "guarantee:target=20Mbit/s"] {
        let spec: ControllerSpec = spec.parse().unwrap();
        let unjudged = largest_window(&spec, 10, rtt, 1, 300, false);
        assert!(unjudged > 100 * MSS, "{spec}: {unjudged}");
        let judged = largest_window(&spec, 10, rtt, 1, 300, true);
        assert!(judged <= 32 * MSS, "{spec}: {judged}");
        let filled = largest_window(&spec, 1_000, rtt, 1, 100, true);
        assert!(filled > 100 * MSS, "{spec}: a window-limited sender stayed at {filled}");
    }
}

/// The largest window `spec` reaches when the sender sends one packet every
/// `rtt / per_rtt` (its own rate limit; the window never holds it back) and
/// the receiver stalls now and then: every 50 round trips its
/// acknowledgements stop for 1, 2, ... `stalls` round trips and then arrive
/// together, as from a receiver the CPU did not run. During a stall the
/// flight grows by the sender's rate, so it can reach half the window and
/// more although the window limits nothing. Returns the largest window and
/// the largest smoothed RTT (RFC 9002 §5.3, from the largest acknowledged
/// packet of each batch, as quinn-proto takes it).
fn window_under_stalls(spec: &ControllerSpec, per_rtt: u64, rtt: Duration, stalls: u32) -> (u64, Duration) {
    let bw = SharedBandwidth::new();
    bw.set_physical(tput_cc::units::Rate::from_mbit_per_sec(1000));
    let source: Arc<dyn BandwidthSource> = Arc::new(bw);
    let mut cc = spec.build_with(MSS as u16, Some(source));
    let mut usage = WindowUse::new();
    let t0 = Instant::now();
    let gap = rtt / per_rtt as u32;
    // Stall j (from 1) holds acknowledgements from 50 j RTTs for j RTTs.
    let stall_end = |at: Instant| -> Instant {
        let rtts = at.saturating_duration_since(t0).as_secs_f64() / rtt.as_secs_f64();
        let j = (rtts / 50.0).floor() as u32;
        let into = rtts - 50.0 * j as f64;
        if j >= 1 && j <= stalls && into < j as f64 {
            t0 + rtt.mul_f64(50.0 * j as f64 + j as f64)
        } else {
            at
        }
    };
    let end = t0 + rtt * (50 * (stalls + 1));
    let mut next_send = t0;
    // (arrival of the acknowledgement, send time), in arrival order.
    let mut acks: VecDeque<(Instant, Instant)> = VecDeque::new();
    let mut in_flight = 0u64;
    let mut srtt = rtt;
    let mut largest = cc.window();
    let mut largest_srtt = srtt;
    while next_send < end {
        let next_ack = acks.front().map(|a| a.0);
        if next_ack.is_some_and(|a| a <= next_send) {
            let now = next_ack.unwrap();
            let mut newest = None;
            while let Some(&(at, sent)) = acks.front() {
                if at != now {
                    break;
                }
                acks.pop_front();
                let sample = RttSample::new(now - sent, srtt, rtt);
                let app_limited = !usage.window_used(now, cc.window(), srtt, || {
                    matches!(cc.snapshot().phase, Phase::SlowStart | Phase::ConservativeSlowStart)
                });
                cc.on_ack(now, &Ack::new(sent, MSS, sample).with_app_limited(app_limited));
                in_flight -= MSS;
                newest = Some(sent);
            }
            if let Some(sent) = newest {
                srtt = (srtt * 7 + (now - sent)) / 8;
            }
            usage.on_end_acks(in_flight);
            cc.on_end_acks(now, in_flight, false);
            largest = largest.max(cc.window());
            largest_srtt = largest_srtt.max(srtt);
        } else {
            let now = next_send;
            if in_flight + MSS <= cc.window() {
                cc.on_sent(now, MSS);
                usage.on_sent(now, MSS);
                in_flight += MSS;
                let arrival = stall_end(now + rtt);
                acks.push_back((arrival, now));
            }
            next_send += gap;
        }
    }
    (largest, largest_srtt)
}

/// Stalls in [`window_under_stalls`]: the longest holds acknowledgements
/// for this many round trips.
const STALLS: u32 = 24;

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// A receiver's stalls let a rate-limited sender's flight grow for a
    /// while although its window limits nothing: the window still stays
    /// within a few times what the sender sends in a smoothed RTT (three
    /// times in slow start, plus one packet per acknowledgement of the
    /// batch that decides; BBR's within its model's bound and its allowance
    /// for aggregation), however long the stalls grow, where it used to grow
    /// by each stall's flight.
    #[test]
    fn a_receivers_stalls_do_not_grow_an_unused_window(per_rtt in 2u64..24, rtt_ms in 2u64..40) {
        let rtt = Duration::from_millis(rtt_ms);
        for spec in specs() {
            let initial = spec.build(MSS as u16).window();
            let (largest, srtt) = window_under_stalls(&spec, per_rtt, rtt, STALLS);
            let per_srtt = (per_rtt as f64 * srtt.as_secs_f64() / rtt.as_secs_f64()).ceil() as u64 * MSS;
            let mut bound = initial.max(3 * per_srtt + per_srtt + 2 * MSS);
            if spec.name() == "bbr" {
                // BBR's window is its model's (draft-ietf-ccwg-bbr-06
                // §5.6.4), not grown per ACK, and carries an allowance for
                // ACK aggregation (§5.5.9), of which a stall's release is
                // one: the model's bound of the test above plus the flight
                // of the longest stall.
                bound = initial.max(6 * per_srtt) + 8 * MSS + per_rtt * u64::from(STALLS) * MSS;
            }
            prop_assert!(
                largest <= bound,
                "{spec}: window reached {largest} bytes sending {per_rtt} packets per {rtt_ms} ms RTT (srtt up to {srtt:?}; bound {bound})"
            );
        }
    }
}
