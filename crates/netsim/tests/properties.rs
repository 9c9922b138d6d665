//! Invariants under random configurations, and run determinism.

mod common;

use std::time::Duration;

use common::{Acker, Recorder, Scripted, WindowSender};
use proptest::prelude::*;
use tput_netsim::*;

fn conserved(s: &LinkStats) -> bool {
    let p =
        s.delivered.packets + s.dropped().packets + s.queued.packets + s.in_transmission.packets + s.in_flight.packets;
    let b = s.delivered.bytes + s.dropped().bytes + s.queued.bytes + s.in_transmission.bytes + s.in_flight.bytes;
    s.offered.packets == p && s.offered.bytes == b && s.in_transmission.packets <= 1
}

fn link_strategy() -> impl Strategy<Value = LinkConfig> {
    let queue = prop_oneof![
        (1u32..20).prop_map(QueueLimit::Packets),
        (1u64..30_000).prop_map(QueueLimit::Bytes),
    ];
    let mode = prop_oneof![
        Just(CutMode::Drop),
        Just(CutMode::Hold),
        Just(CutMode::HoldAbort),
        Just(CutMode::Pause)
    ];
    let cutoff = proptest::option::of((
        100u64..20_000,
        0.05f64..1.0,
        0u64..20_000,
        mode,
        proptest::option::of(0u64..3_000),
    ));
    let loss = proptest::option::of(prop_oneof![
        (0.0f64..0.3).prop_map(RandomLoss::PacketLoss),
        (0.0f64..1e-4).prop_map(RandomLoss::BitErrorRate),
    ]);
    let steps = proptest::collection::vec((1u64..60_000, 100_000u64..50_000_000), 0..3);
    (
        100_000u64..50_000_000,
        0u64..5_000,
        0u32..60,
        queue,
        cutoff,
        loss,
        steps,
    )
        .prop_map(|(rate, delay_us, overhead, queue, cutoff, loss, mut steps)| {
            let mut cfg = LinkConfig::new(Rate::from_bits_per_sec(rate), Duration::from_micros(delay_us))
                .with_overhead(overhead)
                .with_queue(queue);
            if let Some((period_us, frac, phase_us, mode, lead_us)) = cutoff {
                let mut c = CutOff::new(Duration::from_micros(period_us), frac, mode)
                    .with_phase(Duration::from_micros(phase_us));
                if let Some(l) = lead_us {
                    c = c.with_pause_lead(Duration::from_micros(l));
                }
                cfg = cfg.with_cutoff(c);
            }
            if let Some(l) = loss {
                cfg = cfg.with_loss(l);
            }
            steps.sort_by_key(|s| s.0);
            steps.dedup_by_key(|s| s.0);
            cfg.with_rate_schedule(
                steps
                    .into_iter()
                    .map(|(at_us, bps)| RateStep::new(SimTime::from_micros(at_us), Rate::from_bits_per_sec(bps)))
                    .collect(),
            )
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// offered = delivered + dropped + queued + in transmission + in flight,
    /// on every link, at every checkpoint.
    #[test]
    fn links_conserve_packets(
        hops in proptest::collection::vec(link_strategy(), 1..4),
        sends in proptest::collection::vec((0u64..50_000, any::<bool>(), 0usize..1500), 0..250),
        end_us in 1u64..80_000,
        seed in any::<u64>(),
    ) {
        let chain = Chain::build(&hops).unwrap();
        let first = chain.nodes[0];
        let last = *chain.nodes.last().unwrap();
        let mut sim = Simulator::new(chain.topology, seed);
        // An oracle changes how transmissions complete (every one is
        // settled by an event); exercise both paths.
        let oracle = (seed % 2 == 0)
            .then(|| sim.add_oracle(chain.forward[0], [1], Duration::from_millis(10)).unwrap());
        let fwd = Addr::new(last, 2);
        let rev = Addr::new(first, 2);
        sim.attach(fwd, Recorder::default()).unwrap();
        sim.attach(rev, Recorder::default()).unwrap();
        let (mut a, mut b) = (vec![], vec![]);
        for (t, forward, len) in sends {
            let t = SimTime::from_micros(t);
            if forward { a.push((t, fwd, 1, len)) } else { b.push((t, rev, 2, len)) }
        }
        sim.attach(Addr::new(first, 1), Scripted::new(a)).unwrap();
        sim.attach(Addr::new(last, 1), Scripted::new(b)).unwrap();
        let mut ok = true;
        sim.run_until_with(SimTime::from_micros(end_us), Duration::from_micros(3_700), |s| {
            for i in 0..s.link_count() {
                ok &= conserved(&s.link_stats(LinkId(i as u32)));
            }
        });
        prop_assert!(ok);
        if let Some(o) = oracle {
            prop_assert!(o.available() <= o.capacity());
        }
        let m = sim.metrics();
        for l in &m.links {
            prop_assert!(conserved(l), "{:?}", l);
            prop_assert!(l.utilisation <= 1.0 + 1e-9);
        }
        // Every delivered datagram was sent.
        for f in &m.flows {
            prop_assert!(f.delivered.packets <= f.sent.packets);
        }
    }
}

/// 20 window-based toy flows with random start jitter over a lossy dumbbell.
fn twenty_flows(seed: u64) -> (u64, Simulator) {
    let d = Dumbbell::build(&DumbbellConfig::new(
        20,
        LinkConfig::new(Rate::from_mbit_per_sec(100), Duration::from_millis(1)),
        LinkConfig::new(Rate::from_mbit_per_sec(20), Duration::from_millis(5))
            .with_queue(QueueLimit::Packets(30))
            .with_loss(RandomLoss::PacketLoss(0.01)),
    ))
    .unwrap();
    let mut sim = Simulator::new(d.topology.clone(), seed);
    for i in 0..20 {
        let dst = Addr::new(d.receivers[i], 80);
        sim.attach(dst, Acker::new(40)).unwrap();
        let mut rng = sim.rng(i as u64);
        let s = WindowSender::new(dst, i as u32, 8, 1000, &mut rng, Duration::from_millis(50));
        sim.attach(Addr::new(d.senders[i], 1000), s).unwrap();
    }
    sim.run_until(SimTime::from_millis(600));
    for i in 0..sim.link_count() {
        assert!(conserved(&sim.link_stats(LinkId(i as u32))));
    }
    let b = sim.link_stats(d.bottleneck);
    assert!(b.delivered.packets > 1000, "{b:?}");
    assert!(b.dropped_random.packets > 0);
    (sim.trace_hash(), sim)
}

#[test]
fn same_seed_same_trace_other_seed_other_trace() {
    // How fast: `cargo bench -p tput-netsim --bench dumbbell`.
    let (h1, s1) = twenty_flows(11);
    let (h2, s2) = twenty_flows(11);
    let (h3, _) = twenty_flows(12);
    assert_eq!(h1, h2);
    assert_eq!(s1.metrics(), s2.metrics());
    assert_ne!(h1, h3);
}
