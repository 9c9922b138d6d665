//! The PTO counter ([`TimeoutCounter`]) recognises quinn-proto's probe
//! timeouts by its `trace!` event (its message "PTO fired" and its `count`
//! field), which is no API: this test fails loudly if a quinn-proto release
//! renames the message or its fields, instead of seed 001's figures quietly
//! counting no PTOs at all.

use std::time::Duration;

use tput_cc::units::Rate;
use tput_lab::scenario::{CutModeSpec, CutoffSpec, FlowGroup, LinkSpec, RunOptions, Scenario, TopologySpec, run_with};
use tput_lab::timeouts::{Timeout, TimeoutCounter};

/// One NewReno flow for 3 s over a 20 Mbit/s, 5 ms bottleneck; with `cut`,
/// the bottleneck is dead for the second half of every 2 s (the sender
/// still has data: its probe timeouts, RFC 9002 §6.2, must fire and back
/// off through the 1 s outage).
fn run(cut: bool) -> Vec<Timeout> {
    let mut bottleneck = LinkSpec::new(Rate::from_mbit_per_sec(20), Duration::from_millis(5)).with_queue_packets(50);
    if cut {
        bottleneck.cutoff = Some(CutoffSpec {
            period: Duration::from_secs(2),
            connected: 0.5,
            phase: None,
            mode: CutModeSpec::Drop,
            pause_lead: None,
        });
    }
    let access = LinkSpec::new(Rate::from_mbit_per_sec(1000), Duration::from_millis(1));
    let flows = vec![FlowGroup::new("newreno".parse().unwrap())];
    let scenario = Scenario::new(
        Duration::from_secs(3),
        TopologySpec::dumbbell(bottleneck, access),
        flows,
    );
    let (result, timeouts) = TimeoutCounter::run(|| run_with(&scenario, &RunOptions::default(), |_| {}));
    let result = result.expect("the scenario runs");
    let f = &result.flows[0];
    // Through the outages the transfer may not finish within the runner's
    // drain time; without them it must.
    if !cut {
        assert!(f.bytes > 0 && f.errors.is_empty(), "{} bytes, {:?}", f.bytes, f.errors);
    }
    timeouts
}

#[test]
fn a_cut_longer_than_the_probe_timeout_counts_ptos() {
    let timeouts = run(true);
    assert!(
        !timeouts.is_empty(),
        "no PTO counted through a 1 s outage: has quinn-proto's \"PTO fired\" trace event changed?"
    );
    // The probes back off while the link stays dead: consecutive PTOs
    // (quinn-proto's `count` field) are counted as such.
    let most = timeouts.iter().map(|t| t.consecutive).max().unwrap_or(0);
    assert!(most >= 2, "no consecutive PTOs in a 1 s outage: {timeouts:?}");
    // All of them within the run (simulated seconds, not the host's clock).
    assert!(
        timeouts.iter().all(|t| t.at_secs > 0.0 && t.at_secs < 10.0),
        "{timeouts:?}"
    );
}

#[test]
fn a_clean_link_counts_none() {
    let timeouts = run(false);
    assert!(timeouts.is_empty(), "PTOs on a link without outages: {timeouts:?}");
}
