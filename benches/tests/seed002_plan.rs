//! Seed 002's simulations as a plan: the points `--plan` prints run
//! anywhere, in any order, and `--from` builds the same tables and files
//! from their results as a local run does.

use std::path::Path;
use std::time::Duration;

use tput_benches::repro;
use tput_benches::seed002::{Options, Seed002};
use tput_lab::plan::{read_points, result_path, write_result};

fn options() -> Options {
    Options {
        duration: Duration::from_secs(3),
        warmup: Duration::from_secs(1),
        rtts_ms: vec![0, 100],
        buffers: vec![1, 4],
        bers: vec![1e-7],
        figures: vec!["rtt".into(), "ber".into()],
        ..Options::short()
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

    let o = Seed002 { options: options() };
    let (built, measured) = repro::run_measured(&o, &local, 2, None).expect("the local run");
    assert!(!built.failed, "{}", built.text);
    assert!(!local.join("live.csv").exists(), "no live figure asked for");

    let (_, points) = repro::plan(&o).expect("a plan");
    // rtt: 2 RTTs x (2 controllers x 2 N + TCP); ber: 2 RTTs x 3.
    assert_eq!(points.len(), 16);
    assert_eq!(points.len(), measured.len());
    let file = base.join("plan.jsonl");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(&file, tput_lab::plan::plan_text(&points).unwrap()).unwrap();
    let read_back = read_points(&file).expect("the plan parses");
    assert_eq!(read_back, points);

    // Every point on its own, even indices first, then odd ones.
    let order = read_back.iter().step_by(2).chain(read_back.iter().skip(1).step_by(2));
    for p in order {
        let r = p.run().unwrap_or_else(|e| panic!("point {}: {e}", p.index));
        write_result(&results, &r).unwrap();
    }
    let (rebuilt, remeasured) = repro::run_measured(&o, &from, 1, Some(&results)).expect("built from the results");
    assert!(!rebuilt.failed, "{}", rebuilt.text);
    assert_eq!(remeasured, measured);
    for name in [
        "tables.txt",
        "points.csv",
        "rtt_cubic.svg",
        "rtt_normalised.svg",
        "ber.svg",
    ] {
        assert_eq!(read(&local, name), read(&from, name), "{name} differs");
    }
    assert!(local.join("cpu.csv").exists() && !from.join("cpu.csv").exists());

    std::fs::remove_file(result_path(&results, 15)).unwrap();
    let e = repro::run(&o, &from, 1, Some(&results)).expect_err("point 15 is missing");
    assert!(
        e.contains("no result for point 15 (ber TCP go-back-N rtt=100ms ber=1e-7)"),
        "{e}"
    );
    let other = Seed002 {
        options: Options {
            rtts_ms: vec![0, 50],
            ..options()
        },
    };
    let e = repro::run(&other, &from, 1, Some(&results)).expect_err("other RTTs, another plan");
    assert!(e.contains("not of this plan"), "{e}");
}
