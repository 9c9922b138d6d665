//! The BBR cross-check's smallest point (`tput_benches::bbr_compare`): one
//! flow of our BBR on the 0.1-BDP buffer for the short mode's 5 s gives a
//! sane row, and the table built from its plan point's result run
//! elsewhere is the local run's.

use tput_benches::bbr_compare::{BbrCompare, Contender, Options};
use tput_benches::repro;
use tput_lab::plan::write_result;

#[test]
fn one_bbr_flow_on_the_small_buffer_gives_a_sane_row() {
    let mut options = Options::short();
    options
        .cases
        .retain(|c| c.buffer_bdp < 0.5 && c.groups == [(Contender::ours("bbr"), 1)]);
    assert_eq!(options.cases.len(), 1);
    assert_eq!(options.cases[0].buffer_packets(), 51);
    let b = BbrCompare { options };
    let tmp = tempfile::tempdir().unwrap();
    let (local, from, results) = (
        tmp.path().join("local"),
        tmp.path().join("from"),
        tmp.path().join("results"),
    );
    let (built, measured) = repro::run_measured(&b, &local, 1, None).expect("runs");
    assert!(!built.failed, "{}", built.text);
    let row = measured[0].1.clone().expect("measured");
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
    // Our BBR reports its state in its interval records; a 5-s run from
    // start-up spends some of it in ProbeRTT only if its min-RTT filter
    // expired, and never most of it.
    let probe_rtt = row.probe_rtt_share.expect("our BBR reports its state");
    assert!((0.0..0.5).contains(&probe_rtt), "{row:?}");
    // A header, a line of units, the row.
    let table: Vec<&str> = built.text.lines().skip_while(|l| !l.starts_with("case")).collect();
    assert_eq!(table.len(), 3, "{}", built.text);
    assert!(table[2].starts_with("0.1 BDP  bbr "), "{}", built.text);
    let csv = std::fs::read_to_string(local.join("bbr_compare.csv")).unwrap();
    assert!(csv.starts_with("case,util,goodput (Mbit/s),"), "{csv}");
    assert_eq!(csv.lines().count(), 2, "{csv}");

    // The plan point run elsewhere gives the same table.
    let (_, plan) = repro::plan(&b).unwrap();
    assert_eq!(plan.len(), 1);
    write_result(&results, &plan[0].run().unwrap()).unwrap();
    let rebuilt = repro::run(&b, &from, 1, Some(&results)).expect("built from the result");
    let read = |d: &std::path::Path| std::fs::read_to_string(d.join("tables.txt")).unwrap();
    assert_eq!(read(&local), read(&from));
    assert!(!rebuilt.failed);
}
