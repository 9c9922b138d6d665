//! The TCP model's side of the ns-2 cross-check (`tput_benches::tcp_ns2`),
//! pinned at a small size: the model is deterministic per seed, so any change
//! to it, the controller or the simulator shows here first.

use std::time::Duration;

use tput_benches::tcp_ns2::{Case, Model, Variant, run_model};

/// Two background flows and the tagged one, Reno, the model with ns-2's
/// rules (`Model::Ns2`), 5 s.
///
/// Recorded from the model. ns-2 2.35 on the same case
/// (`ns benches/ns2/tcp_compare.tcl 2 1 reno 5`; its own start instants)
/// delivers 16 315 000, 12 468 000 and 10 961 000 bytes with 1, 1 and 2
/// timeouts, bottleneck utilisation 0.668 (the model: 2, 1 and 2 timeouts,
/// 0.575; before ns-2's rules 1, 1 and 2 and 0.593 over the run with its
/// drain): in both, every flow's first slow start overflows the 30-packet
/// queue, and Reno (one retransmission per fast recovery) leaves each flow to
/// a timeout.
#[test]
fn three_reno_flows_for_five_seconds_deliver_the_recorded_bytes() {
    let case = Case {
        n_background: 2,
        seed: 1,
        variant: Variant::Reno,
        duration: Duration::from_secs(5),
    };
    let m = run_model(&case, Model::Ns2).expect("runs");
    assert_eq!(m.bytes, vec![9_666_000, 13_047_000, 11_713_000], "{m:?}");
    assert_eq!(m.timeouts, vec![2, 1, 2], "{m:?}");
    assert!((m.utilisation - 0.574_612_48).abs() < 1e-9, "{m:?}");
    assert_eq!((m.tagged_10, m.tagged_20), (0.75, 0.5), "{m:?}");
    // The same run again gives the same numbers.
    assert_eq!(run_model(&case, Model::Ns2).expect("runs"), m);
}

/// ns-2's initial window of 2 segments is slower to start than RFC 9002's 10:
/// in a flow's first half second or so, the model with ns-2's windows delivers less.
#[test]
fn ns2_windows_start_slower_than_rfc9002() {
    let case = Case {
        n_background: 0,
        seed: 1,
        variant: Variant::NewReno,
        duration: Duration::from_millis(1500),
    };
    let ns2 = run_model(&case, Model::Ns2).expect("runs");
    let rfc = run_model(&case, Model::Rfc9002).expect("runs");
    assert!(ns2.bytes[0] < rfc.bytes[0], "{ns2:?} vs {rfc:?}");
}
