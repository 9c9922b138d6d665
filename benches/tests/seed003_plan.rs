//! Seed 003 as plans, round by round: the searches' rates depend on their
//! earlier results, so `--plan` prints the first round and `--plan --from
//! DIR` each next one until nothing is left; `--from DIR` then builds the
//! same tables and files as a local run.

use std::path::Path;
use std::time::Duration;

use tput_benches::repro;
use tput_benches::seed003::{Options, Seed003};
use tput_lab::plan::{read_points, result_path, write_result};

fn options() -> Options {
    let mut o = Options::short();
    o.window = Duration::from_secs(1);
    o.files_per_flow = 1.0;
    o.drain = Duration::from_secs(5);
    // Finer than the 5 Mbit/s grid of the D_e curves: the bisection needs
    // rates that no first round holds.
    o.resolution_mbps = 2.0;
    o.delays_ms = vec![10.0];
    o.flows = vec![1];
    o.flows_delays_ms = vec![10.0];
    o.sizes_mbit = vec![1.0];
    o.controllers = vec!["newreno".into()];
    o.figures = vec!["delay".into(), "size".into()];
    o
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()))
}

#[test]
fn rounds_of_plans_run_elsewhere_give_the_local_run_s_files_byte_for_byte() {
    let tmp_base = tempfile::tempdir().unwrap();
    let base = tmp_base.path().to_path_buf();
    let (local, from, results) = (base.join("local"), base.join("from"), base.join("results"));
    std::fs::create_dir_all(&results).unwrap();

    let o = Seed003 { options: options() };
    let (built, measured) = repro::run_measured(&o, &local, 2, None).expect("the local run");
    assert!(!built.failed, "{}", built.text);

    // Round by round, each round's points last first into a directory of
    // its own, until the plan is empty.
    let mut rounds = 0;
    let mut simulations = 0;
    loop {
        let points = if rounds == 0 {
            repro::plan(&o).map(|(_, p)| p)
        } else {
            repro::plan_from(&o, &results)
        }
        .expect("a plan");
        if points.is_empty() {
            break;
        }
        rounds += 1;
        assert!(rounds < 10, "the rounds end");
        let file = base.join(format!("round-{rounds}.jsonl"));
        std::fs::write(&file, tput_lab::plan::plan_text(&points).unwrap()).unwrap();
        let points = read_points(&file).expect("the plan parses");
        let dir = results.join(format!("round-{rounds}"));
        for p in points.iter().rev() {
            write_result(&dir, &p.run().unwrap_or_else(|e| panic!("point {}: {e}", p.index))).unwrap();
        }
        simulations += points.len();
    }
    assert!(rounds >= 2, "the bisection needs rounds after the first: {rounds}");
    assert_eq!(simulations, measured.len(), "the same simulations");

    let (rebuilt, remeasured) = repro::run_measured(&o, &from, 1, Some(&results)).expect("built from the results");
    assert!(!rebuilt.failed, "{}", rebuilt.text);
    assert_eq!(remeasured.len(), measured.len(), "the same simulations");
    for name in [
        "tables.txt",
        "wmin.csv",
        "points.csv",
        "delay.svg",
        "delay-de.svg",
        "size.svg",
    ] {
        assert_eq!(read(&local, name), read(&from, name), "{name} differs");
    }

    // A result the figures need is named when it is missing.
    std::fs::remove_file(result_path(&results.join("round-2"), 0)).unwrap();
    let e = repro::run(&o, &from, 1, Some(&results)).expect_err("a result is missing");
    assert!(
        e.contains("no result for ") && e.contains("Mbit/s: run the next round"),
        "{e}"
    );
    assert!(!e.contains('\n'), "one line: {e}");
}
