//! Runs the `quinn_client_server` example's transfer: a tput-cc controller
//! driving a real `quinn` connection over 127.0.0.1.

#[path = "../examples/quinn_client_server.rs"]
mod example;

use tput_cc::{AlgorithmState, initial_window};

#[test]
fn cubic_drives_a_real_quinn_connection_over_loopback() {
    let report = example::run("cubic", 4 << 20).expect("transfer succeeds");
    assert_eq!(report.bytes, 4 << 20);
    assert!(report.goodput_bps() > 0.0);
    // The probe reports the sending controller, which saw the ACK stream: a
    // CUBIC snapshot whose window grew beyond the initial one in slow start.
    assert!(
        matches!(report.snapshot.state, AlgorithmState::Cubic { .. }),
        "{report:?}"
    );
    assert!(report.snapshot.cwnd_bytes > initial_window(1200), "{report:?}");
}

#[test]
fn a_bad_spec_is_an_error() {
    let err = example::run("no-such-controller", 1000).unwrap_err();
    assert!(err.to_string().contains("no-such-controller"), "{err}");
}
