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
            usage.on_sent(MSS);
            flight.push_back(now);
        }
        let Some(&oldest) = flight.front() else { break };
        now = now.max(oldest + rtt);
        let rtt_sample = RttSample::uniform(rtt);
        for _ in 0..ack_every {
            let Some(sent) = flight.pop_front() else { break };
            let app_limited = judge && !usage.window_used(cc.window(), || cc.snapshot().phase == Phase::SlowStart);
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
