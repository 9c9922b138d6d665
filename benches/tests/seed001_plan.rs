//! Seed 001's sweeps as a plan: the points `--plan` prints run anywhere, in
//! any order, count their timeouts as they run, and `--from` builds the same
//! tables and files from their results as a local run does.

use std::path::Path;
use std::time::Duration;

use tput_benches::repro;
use tput_benches::seed001::{Options, Seed001, Transport};
use tput_lab::plan::{read_points, result_path, write_result};

fn options() -> Options {
    Options {
        duration: Duration::from_millis(600),
        side_duration: Duration::from_millis(300),
        periods: vec![Duration::from_millis(10)],
        occupancies: vec![0.5, 1.0],
        side_occupancies: vec![0.7],
        seeds: vec![1],
        side_seeds: vec![1],
        transports: vec![Transport::TcpNewReno, Transport::QuicNewReno],
        remedies: true,
        sensitivity: false,
        placement: false,
        timeline_duration: Duration::ZERO,
    }
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()))
}

#[test]
fn from_results_run_elsewhere_gives_the_local_run_s_files_byte_for_byte() {
    let tmp_base = tempfile::tempdir().unwrap();
    let base = tmp_base.path().to_path_buf();
    let (local, from, results) = (base.join("local"), base.join("from"), base.join("results"));

    let o = Seed001 { options: options() };
    let (built, measured) = repro::run_measured(&o, &local, 2, None).expect("the local run");
    assert!(!built.failed, "{}", built.text);
    // Half the time cut off in 5 ms pieces: the TCP sender times out.
    let tcp_cut = measured
        .iter()
        .filter_map(|(_, m)| m.as_ref().ok())
        .find(|r| r.point.study == "drop" && r.point.transport == Transport::TcpNewReno && r.point.occupancy == 0.5)
        .expect("the point");
    assert!(tcp_cut.timeouts > 0, "{tcp_cut:?}");

    let (_, points) = repro::plan(&o).expect("a plan");
    // Main: 2 transports x 2 occupancies; side: 4 studies x 2 transports.
    assert_eq!(points.len(), 4 + 8);
    let file = base.join("plan.jsonl");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(&file, tput_lab::plan::plan_text(&points).unwrap()).unwrap();
    let read_back = read_points(&file).expect("the plan parses");
    assert_eq!(read_back, points);
    assert!(
        read_back.iter().all(|p| p.keep.timeouts),
        "every point counts its timeouts"
    );

    // Every point on its own, on two threads, last first.
    let rev: Vec<_> = read_back.iter().rev().collect();
    let ran = tput_lab::sweep::run_parallel(&rev, 2, |p| p.run(), |_, _, _| {});
    for r in ran {
        write_result(&results, &r.expect("the point runs")).unwrap();
    }
    let rebuilt = repro::run(&o, &from, 1, Some(&results)).expect("built from the results");
    assert!(!rebuilt.failed, "{}", rebuilt.text);
    for name in ["tables.txt", "seed001_points.csv", "remedies_tcp_newreno.svg"] {
        assert_eq!(read(&local, name), read(&from, name), "{name} differs");
    }
    assert!(local.join("cpu.csv").exists() && !from.join("cpu.csv").exists());

    std::fs::remove_file(result_path(&results, 0)).unwrap();
    let e = repro::run(&o, &from, 1, Some(&results)).expect_err("point 0 is missing");
    assert!(e.contains("no result for point 0 (drop TCP NewReno"), "{e}");
}
