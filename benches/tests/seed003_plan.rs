//! Seed 003 as plans, round by round: the searches' rates depend on their
//! earlier results, so `--plan` prints the first round and `--plan --from
//! DIR` each next one until nothing is left; `--from DIR` then builds the
//! same tables and files as a local run.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tput_benches::seed003::{Options, plan, reproduce, reproduce_from};
use tput_lab::plan::{read_points, result_path, write_result};

fn options(out: PathBuf) -> Options {
    let mut o = Options::short(out);
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
    o.jobs = 2;
    o
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()))
}

#[test]
fn rounds_of_plans_run_elsewhere_give_the_local_run_s_files_byte_for_byte() {
    let base = std::env::temp_dir().join(format!("tput-seed003-plan-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&base);
    let (local, from, results) = (base.join("local"), base.join("from"), base.join("results"));
    std::fs::create_dir_all(&results).unwrap();

    let o = options(local.clone());
    let mut lines = Vec::new();
    let report = reproduce(&o, |l| lines.push(l.to_string())).expect("the local run");
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    let local_rounds = lines
        .iter()
        .filter_map(|l| l.strip_prefix("[round ")?.split(':').next())
        .max();

    // Round by round, each round's points last first into a directory of
    // its own, until the plan is empty.
    let mut rounds = 0;
    let mut simulations = 0;
    loop {
        let points = plan(&o, (rounds > 0).then_some(results.as_path())).expect("a plan");
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
    assert_eq!(
        local_rounds,
        Some(rounds.to_string().as_str()),
        "the local run's rounds"
    );
    assert_eq!(simulations, report.runs, "the same simulations");

    let o_from = Options {
        jobs: 1,
        ..options(from.clone())
    };
    let rebuilt = reproduce_from(&o_from, &results).expect("built from the results");
    assert!(rebuilt.failures.is_empty(), "{:?}", rebuilt.failures);
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
    let e = reproduce_from(&o_from, &results).expect_err("a result is missing");
    assert!(
        e.contains("no result for ") && e.contains("Mbit/s: run the next round"),
        "{e}"
    );
    assert!(!e.contains('\n'), "one line: {e}");
    let _ = std::fs::remove_dir_all(&base);
}
