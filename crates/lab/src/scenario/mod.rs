//! Declarative simulated experiments: a topology, groups of QUIC flows, a
//! duration and a seed, run in `tput-netsim` with the same nodes as live
//! transfers. A [`Scenario`] deserializes from TOML/JSON (every key
//! documented in `docs/scenarios.md`; unknown keys are errors), and
//! [`run`] is a pure function of it: same scenario, same result, bit for bit.

mod build;
mod results;
mod run;
mod schema;
mod serde_helpers;
mod tcp;
mod validate;

pub use results::*;
pub use run::{RunOptions, run, run_with};
pub use schema::*;
pub use validate::{link_config, validate};

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use tput_transport::{Direction, SlotStats};

    use crate::host::CcSample;

    use super::*;

    fn flow(group: usize, slots_bps: &[f64]) -> FlowResult {
        FlowResult {
            cc: "guarantee".into(),
            slots: slots_bps
                .iter()
                .enumerate()
                .map(|(i, &t)| {
                    let mut s = SlotStats::default();
                    s.index = i as u64;
                    s.start_secs = i as f64;
                    s.bytes = (t / 8.0) as u64;
                    s.throughput_bps = t;
                    s
                })
                .collect(),
            ..crate::fixtures::empty_flow(1, group)
        }
    }

    #[test]
    fn the_controller_trace_shows_every_reduction() {
        let link = LinkSpec::new("20Mbit/s".parse().unwrap(), Duration::from_millis(10)).with_queue_packets(20);
        let access = LinkSpec::new("1Gbit/s".parse().unwrap(), Duration::from_millis(1));
        let mut download = FlowGroup::new("newreno".parse().unwrap());
        download.direction = Some(Direction::Download);
        let mut s = Scenario::new(
            Duration::from_secs(4),
            TopologySpec::dumbbell(link, access),
            vec![FlowGroup::new("newreno".parse().unwrap()), download],
        );
        s.interval = Duration::from_millis(500);
        let r = run(&s, |_| {}).unwrap();
        let up = &r.flows[0];
        assert!(up.errors.is_empty(), "{:?}", up.errors);
        let t = up.cc_trace.to_vec();
        assert!(!up.intervals.is_empty());
        assert!(
            t.len() > 10 * up.intervals.len(),
            "{} samples, {} intervals",
            t.len(),
            up.intervals.len()
        );
        assert!(t.windows(2).all(|w| w[0].time_secs <= w[1].time_secs), "in time order");
        assert!(t.iter().all(|c| c.time_secs <= r.simulated_secs && c.k.is_none()));
        let reductions = t.windows(2).filter(|w| w[1].cwnd_bytes < w[0].cwnd_bytes).count();
        assert!(reductions >= 1, "no window reduction in {} samples", t.len());
        assert!(t.iter().any(|c| c.ssthresh_bytes.is_some()), "a loss sets ssthresh");
        // Pure growth is kept at most once per millisecond.
        for w in t.windows(3) {
            let grows =
                |a: &CcSample, b: &CcSample| b.cwnd_bytes > a.cwnd_bytes && a.ssthresh_bytes == b.ssthresh_bytes;
            if grows(&w[0], &w[1]) && grows(&w[1], &w[2]) {
                assert!(
                    w[2].time_secs - w[0].time_secs >= crate::host::TRACE_MIN_GAP_SECS - 1e-12,
                    "{w:?}"
                );
            }
        }
        // Downloads are not traced (their controller is on the server) and run as before.
        assert!(r.flows[1].cc_trace.is_empty());
        assert!(r.flows[1].errors.is_empty() && r.flows[1].bytes > 0, "{:?}", r.flows[1]);
    }

    #[test]
    fn a_group_is_judged_on_the_sum_of_its_common_slots() {
        let a = flow(0, &[6e6, 2e6, 5e6, 9e6]);
        let b = flow(0, &[5e6, 7e6, 4e6]);
        let r = AggregateResult::judge(0, 10e6, &[&a, &b]);
        // Slot 3 exists for `a` only: left out.
        assert_eq!(r.slot_throughput_bps, [11e6, 9e6, 9e6]);
        assert_eq!(r.slots_met, 1);
        assert_eq!(r.success_ratio, Some(1.0 / 3.0));
        assert_eq!(r.flows, 2);
        // No target, or no slot: no ratio.
        assert_eq!(AggregateResult::judge(0, 0.0, &[&a]).success_ratio, None);
        assert_eq!(AggregateResult::judge(0, 1e6, &[]).success_ratio, None);
        // A member that never connected adds 0 to the others' slots.
        let mut never = flow(0, &[]);
        never.success_ratio = Some(0.0);
        let r = AggregateResult::judge(0, 10e6, &[&a, &b, &never]);
        assert_eq!(r.slot_throughput_bps, [11e6, 9e6, 9e6]);
        assert_eq!(r.success_ratio, Some(1.0 / 3.0));
        assert_eq!(AggregateResult::judge(0, 10e6, &[&never]).success_ratio, Some(0.0));
    }

    #[test]
    fn only_guarantee_controllers_that_read_the_oracle_are_aggregated() {
        let link = LinkSpec::new("20Mbit/s".parse().unwrap(), Duration::from_millis(10));
        let access = LinkSpec::new("1Gbit/s".parse().unwrap(), Duration::from_millis(1));
        let group = |cc: &str| {
            let mut g = FlowGroup::new(cc.parse().unwrap()).times(2).aggregated();
            g.eval_slot = Some(tput_cc::EvalSlot::Time(Duration::from_secs(1)));
            Scenario::new(
                Duration::from_secs(2),
                TopologySpec::dumbbell(link.clone(), access.clone()),
                vec![g],
            )
        };
        assert!(validate(&group("guarantee:target=1Mbit/s")).is_ok());
        let e = validate(&group("newreno")).unwrap_err().to_string();
        assert!(
            e.contains("aggregate coordinates guarantee controllers, not `newreno`"),
            "{e}"
        );
        let e = validate(&group("guarantee:target=1Mbit/s,abw=inline"))
            .unwrap_err()
            .to_string();
        assert!(e.contains("aggregate needs abw=auto"), "{e}");
    }

    #[test]
    fn a_judged_flow_that_never_connected_met_none_of_its_slots() {
        // Every packet lost: no handshake, no slot.
        let link = LinkSpec {
            loss: Some(1.0),
            ..LinkSpec::new("20Mbit/s".parse().unwrap(), Duration::from_millis(10)).with_queue_packets(20)
        };
        let access = LinkSpec::new("1Gbit/s".parse().unwrap(), Duration::from_millis(1));
        let mut judged = FlowGroup::new("guarantee:target=1Mbit/s".parse().unwrap())
            .with_target("1Mbit/s".parse().unwrap())
            .times(2)
            .aggregated();
        judged.eval_slot = Some(tput_cc::EvalSlot::Time(Duration::from_secs(1)));
        let s = Scenario::new(
            Duration::from_secs(2),
            TopologySpec::dumbbell(link, access),
            vec![judged, FlowGroup::new("newreno".parse().unwrap())],
        );
        let r = run(&s, |_| {}).unwrap();
        let f = &r.flows[0];
        assert!(f.bytes == 0 && !f.errors.is_empty() && f.slots.is_empty(), "{f:?}");
        assert_eq!(f.success_ratio, Some(0.0), "judged: 0, not unknown");
        assert_eq!(r.flows[2].success_ratio, None, "no target: not judged");
        assert_eq!(r.aggregates[0].success_ratio, Some(0.0), "the group, judged as one");
        let table = crate::report::Summary::new(&s, &r).table();
        let line = table.lines().find(|l| l.trim_start().starts_with("1 ")).unwrap();
        assert!(line.contains("0.00 (0/0)"), "{table}");
    }
}
