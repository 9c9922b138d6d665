//! Runs the `quinn_guarantee` example: one server `TransportConfig` with the
//! guarantee serves several real `quinn` connections over 127.0.0.1, each
//! with its own probe and verdict. Goodput on a shared machine is not
//! asserted; what each connection's probe reports is.

#[path = "../examples/quinn_guarantee.rs"]
mod example;

use example::Verdict;
use tput_cc::{AlgorithmState, ControllerSpec};

#[test]
fn every_connection_has_its_own_probe_and_verdict() {
    let conns = example::run("20Mbit/s", 3, 1 << 20).expect("the transfers succeed");
    assert_eq!(conns.len(), 3);
    for c in &conns {
        assert_eq!(c.bytes, 1 << 20);
        assert!(matches!(c.snapshot.state, AlgorithmState::Guarantee { .. }), "{c:?}");
        assert_eq!(c.verdict, Verdict::of(&c.snapshot, c.goodput_bps(), 20e6));
    }
}

#[test]
fn verdicts_follow_the_snapshot_and_the_goodput() {
    // A guarantee controller's own snapshot, its verdict flag set as asked.
    let spec: ControllerSpec = "guarantee:target=20Mbit/s".parse().unwrap();
    let snap = |flag: bool| {
        let mut snap = spec.build(1200).snapshot();
        let AlgorithmState::Guarantee { infeasible, .. } = &mut snap.state else {
            panic!("not a guarantee snapshot: {:?}", snap.state)
        };
        *infeasible = flag;
        snap
    };
    assert_eq!(Verdict::of(&snap(false), 21e6, 20e6), Verdict::Met);
    assert_eq!(Verdict::of(&snap(false), 19e6, 20e6), Verdict::Missed);
    assert_eq!(Verdict::of(&snap(true), 21e6, 20e6), Verdict::Infeasible);
    assert_eq!(Verdict::Infeasible.to_string(), "infeasible");
}

#[test]
fn a_bad_target_is_an_error() {
    let e = example::run("fast", 1, 1000).unwrap_err();
    assert!(e.to_string().contains("fast"), "{e}");
}
