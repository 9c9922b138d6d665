//! The bench's selection and summary of the live fault table (the table
//! itself runs, at toy size, in `tput-lab`'s relay tests).

use tput_benches::live_faults::{Options, Row, faults, select, summary};
use tput_lab::live::relay::RelayStats;
use tput_transport::Direction;

#[test]
fn faults_are_selected_by_name_parts() {
    let all = faults(&Options::full());
    let names = |v: Vec<tput_benches::live_faults::Fault>| v.into_iter().map(|f| f.name).collect::<Vec<_>>();
    assert_eq!(names(select(all.clone(), None)).len(), all.len());
    assert_eq!(
        names(select(all.clone(), Some("80%; DEAD"))),
        vec!["cut-off 100 ms, 80%".to_string(), "dead after 1000 ms".to_string()]
    );
    assert!(select(all, Some("no such fault")).is_empty());
}

#[test]
fn the_summary_counts_runs_as_expected_per_fault_and_direction() {
    let row = |direction, secs, problems: Vec<String>| Row {
        fault: "cut-off 100 ms, 80%".into(),
        direction,
        bytes: 10,
        verified: 10,
        secs,
        result: "ok".into(),
        min_rtt_ms: None,
        problems,
        relay: RelayStats::default(),
    };
    let rows = vec![
        row(Direction::Upload, 2.0, vec![]),
        row(Direction::Download, 3.0, vec![]),
        row(Direction::Upload, 4.0, vec!["not complete".into()]),
    ];
    let s = summary(&rows);
    assert!(s.contains("| cut-off 100 ms, 80% | Upload | 1 of 2 | 2.0-4.0 |"), "{s}");
    assert!(
        s.contains("| cut-off 100 ms, 80% | Download | 1 of 1 | 3.0-3.0 |"),
        "{s}"
    );
}
