//! Random impairment schedules on the bottleneck (loss, bit errors, periodic
//! cut-offs in every mode, rate steps): every transfer ends, either with
//! every byte verified or with an error that says why; none hangs, none
//! delivers a wrong byte (the receiver checks each one against the pattern).

use std::time::Duration;

use proptest::prelude::*;
use tput_cc::units::Rate;
use tput_lab::scenario::{CutModeSpec, CutoffSpec, FlowGroup, LinkSpec, RateChange, Scenario, TopologySpec, run};

fn impaired_link() -> impl Strategy<Value = LinkSpec> {
    (
        prop_oneof![Just(None), (0.0f64..0.2).prop_map(Some)],
        prop_oneof![
            Just(None),
            (1u64..50, 0.3f64..1.0, 0usize..3).prop_map(|(period_ms, connected, mode)| Some(CutoffSpec {
                period: Duration::from_millis(period_ms),
                connected,
                phase: None,
                mode: [CutModeSpec::Drop, CutModeSpec::Hold, CutModeSpec::Pause][mode],
                pause_lead: None,
            })),
        ],
        prop::collection::vec((100u64..1900, 1u64..50), 0..3),
        5u32..200,
    )
        .prop_map(|(loss, cutoff, steps, queue)| {
            let mut l = LinkSpec::new(Rate::from_mbit_per_sec(20), Duration::from_millis(5)).with_queue_packets(queue);
            l.loss = loss;
            l.cutoff = cutoff;
            let mut at: Vec<(u64, u64)> = steps;
            at.sort_unstable();
            at.dedup_by_key(|s| s.0);
            l.rate_schedule = at
                .into_iter()
                .map(|(ms, mbit)| RateChange {
                    at: Duration::from_millis(ms),
                    rate: Rate::from_mbit_per_sec(mbit),
                })
                .collect();
            l
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, .. ProptestConfig::default() })]

    #[test]
    fn every_transfer_ends_verified_or_with_a_reason(
        link in impaired_link(),
        cc in prop::sample::select(vec!["newreno", "cubic", "vegas"]),
        bytes in prop_oneof![Just(None), (10_000u64..400_000).prop_map(Some)],
        seed in 0u64..1000,
    ) {
        let access = LinkSpec::new(Rate::from_mbit_per_sec(1000), Duration::from_millis(1));
        let mut g = FlowGroup::new(cc.parse().unwrap()).times(2);
        g.bytes = bytes;
        let scenario = Scenario {
            seed,
            ..Scenario::new(Duration::from_secs(2), TopologySpec::dumbbell(link.clone(), access), vec![g])
        };
        let result = run(&scenario, |_| {}).expect("a valid scenario runs");
        for f in &result.flows {
            if f.errors.is_empty() {
                // Verified end: a byte-count transfer delivered exactly its bytes.
                if let Some(b) = bytes {
                    prop_assert_eq!(f.bytes, b, "flow {} over {:?}", f.flow, link);
                }
            } else {
                // An error names its cause; no error is about a corrupted byte.
                for e in &f.errors {
                    prop_assert!(!e.is_empty());
                    prop_assert!(!e.contains("does not match the pattern"), "{}", e);
                }
            }
        }
        // The run ended: within the scenario plus its drain.
        prop_assert!(result.simulated_secs <= 2.0 + 5.0 + 1e-9);
    }
}
