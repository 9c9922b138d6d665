//! The guarantee bench through the reproduction framework: the plan's points
//! run anywhere and `--from` builds the local run's files byte for byte; the
//! live figure's toy version verifies every byte.

use std::path::Path;
use std::time::Duration;

use tput_benches::guarantee::{COMPETITORS, Guarantee, Options, competitors_from, live};
use tput_benches::repro;
use tput_lab::plan::{plan_text, read_points, write_result};

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()))
}

#[test]
fn from_results_run_elsewhere_gives_the_local_run_s_files_byte_for_byte() {
    let tmp_base = tempfile::tempdir().unwrap();
    let base = tmp_base.path().to_path_buf();
    let (local, from, results) = (base.join("local"), base.join("from"), base.join("results"));
    let g = Guarantee {
        options: Options {
            duration: Duration::from_secs(2),
            counts: vec![5],
            targets_pct: vec![20],
            seeds: vec![1],
            figures: vec!["grid".into(), "overbooked".into()],
            ..Options::short()
        },
    };
    let built = repro::run(&g, &local, 2, None).expect("the local run");
    assert!(!built.failed, "{}", built.text);
    let (_, points) = repro::plan(&g).expect("a plan");
    // Every variant against the competitors it meets (QUIC BBR: the
    // default, the paper's mode and NewReno in the seat; TCP BBR: their TCP
    // versions), and three overbooked runs.
    assert_eq!(points.len(), 31 + 3);
    let file = base.join("plan.jsonl");
    std::fs::write(&file, plan_text(&points).unwrap()).unwrap();
    for p in read_points(&file).expect("the plan parses").iter().rev() {
        write_result(&results, &p.run().unwrap_or_else(|e| panic!("point {}: {e}", p.index))).unwrap();
    }
    let rebuilt = repro::run(&g, &from, 1, Some(&results)).expect("built from the results");
    assert!(!rebuilt.failed, "{}", rebuilt.text);
    for name in [
        "tables.txt",
        "points.csv",
        "success_quic-newreno_20.svg",
        "cost_default_tcp-reno_20.svg",
    ] {
        assert_eq!(read(&local, name), read(&from, name), "{name} differs");
    }
    let tables = read(&local, "tables.txt");
    assert!(
        tables.contains("== grid: success ratio") && tables.contains("== overbooked"),
        "{tables}"
    );
    assert!(local.join("cpu.csv").exists() && !from.join("cpu.csv").exists());
    // A missing result is named.
    std::fs::remove_file(tput_lab::plan::result_path(&results, 3)).unwrap();
    let e = repro::run(&g, &from, 1, Some(&results)).unwrap_err();
    assert!(e.contains("no result for point 3"), "{e}");
}

/// One guarantee connection against two NewReno connections through the
/// relay for 3 s: every byte verified, the success ratio judged (its value
/// depends on the machine's load, so it is not asserted).
#[test]
fn the_live_toy_verifies_every_byte() {
    let rows = live::run(&[live::TESTED[0]], &["newreno"], Duration::from_secs(3), 2, |_| {}).expect("the live run");
    assert_eq!(rows.len(), 1);
    let r = &rows[0];
    assert!(r.verified, "{r:?}");
    assert!(r.error.is_none(), "{r:?}");
    assert!((0.0..=1.0).contains(&r.success), "{r:?}");
    assert!(r.tested_mbps > 0.0 && r.competitor_mbps > 0.0, "{r:?}");
    let t = live::table(&rows, Duration::from_secs(3));
    assert!(
        t.contains("default") && t.contains("2 x newreno") && t.contains(" yes "),
        "{t}"
    );
}

#[test]
fn competitor_lists_keep_table_order_and_name_unknown_kinds() {
    assert_eq!(
        competitors_from("tcp-cubic, quic-bbr").unwrap(),
        ["quic-bbr", "tcp-cubic"]
    );
    assert_eq!(competitors_from(&COMPETITORS.join(",")).unwrap(), COMPETITORS);
    let e = competitors_from("quic-bbr,quic-vegas").unwrap_err();
    assert!(e.contains("quic-vegas") && e.contains("quic-bbr"), "{e}");
    assert!(competitors_from(" , ").unwrap_err().contains("no competitor"));
}
