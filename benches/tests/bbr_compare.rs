//! The BBR cross-check's smallest point (`tput_benches::bbr_compare`): one
//! flow of our BBR on the 0.1-BDP buffer for the short mode's 5 s gives a
//! sane row.

use std::time::Duration;

use tput_benches::bbr_compare::{Contender, cases, run_case, table};

#[test]
fn one_bbr_flow_on_the_small_buffer_gives_a_sane_row() {
    let case = cases()
        .into_iter()
        .find(|c| c.buffer_bdp < 0.5 && c.groups == [(Contender::ours("bbr"), 1)])
        .expect("the case exists");
    assert_eq!(case.buffer_packets(), 51);
    let row = run_case(&case, Duration::from_secs(5)).expect("runs");
    let numbers = [
        row.utilisation,
        row.qdelay_p50_ms,
        row.qdelay_p99_ms,
        row.loss_rate,
        row.jain,
        row.first_share,
        row.goodput_mbps,
    ];
    assert!(numbers.iter().all(|x| x.is_finite() && *x >= 0.0), "{row:?}");
    assert!(row.utilisation > 0.0 && row.utilisation <= 1.0, "{row:?}");
    assert!(row.goodput_mbps > 0.0 && row.goodput_mbps < 100.0, "{row:?}");
    // 51 packets of 1228 bytes drain in 5.0 ms at 100 Mbit/s.
    assert!(
        row.qdelay_p50_ms <= row.qdelay_p99_ms && row.qdelay_p99_ms <= 5.1,
        "{row:?}"
    );
    assert!(row.loss_rate < 1.0, "{row:?}");
    // One flow: perfectly fair to itself, and all of the goodput.
    assert!(
        (row.jain - 1.0).abs() < 1e-12 && (row.first_share - 1.0).abs() < 1e-12,
        "{row:?}"
    );
    let probe_rtt = row.probe_rtt_share.expect("our BBR reports its state");
    assert!((0.0..1.0).contains(&probe_rtt), "{row:?}");
    let t = table(&[row]);
    assert_eq!(t.lines().count(), 3, "{t}");
    assert!(t.contains("0.1 BDP  bbr"), "{t}");
}
