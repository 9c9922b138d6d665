//! The ns-2 cross-check on the reproduction framework at toy size (the
//! model's side only): a local run and a build from its plan points' results
//! run elsewhere give the same tables and files.

use std::time::Duration;

use tput_benches::repro;
use tput_benches::tcp_ns2::{Options, TcpNs2, Variant};
use tput_lab::plan::write_result;

#[test]
fn the_dumbbell_part_from_results_run_elsewhere_is_the_local_run() {
    let options = Options {
        parts: vec!["dumbbell".into()],
        ns: vec![0],
        seeds: 1,
        variants: vec![Variant::Reno],
        duration: Duration::from_secs(2),
        ns2: false,
        ..Options::short()
    };
    let t = TcpNs2::new(options);
    let tmp = tempfile::tempdir().unwrap();
    let (local, from, results) = (
        tmp.path().join("local"),
        tmp.path().join("from"),
        tmp.path().join("results"),
    );
    let (built, measured) = repro::run_measured(&t, &local, 2, None).expect("runs");
    assert!(!built.failed, "{}", built.text);
    assert_eq!(measured.len(), 2, "the model's two settings");
    assert!(built.text.contains("\nreno\nN = 0"), "{}", built.text);
    for side in ["model ns-2 rules", "model before"] {
        assert!(built.text.contains(&format!("        {side} ")), "{}", built.text);
    }
    let csv = std::fs::read_to_string(local.join("tcp_ns2.csv")).unwrap();
    assert_eq!(csv.lines().count(), 3, "{csv}");
    assert!(csv.contains("\nreno,0,1,model ns-2 rules,"), "{csv}");

    let (_, plan) = repro::plan(&t).unwrap();
    for p in plan.iter().rev() {
        write_result(&results, &p.run().unwrap()).unwrap();
    }
    let rebuilt = repro::run(&t, &from, 1, Some(&results)).expect("built from the results");
    assert!(!rebuilt.failed, "{}", rebuilt.text);
    for name in ["tables.txt", "tcp_ns2.csv"] {
        let read = |d: &std::path::Path| std::fs::read_to_string(d.join(name)).unwrap();
        assert_eq!(read(&local), read(&from), "{name} differs");
    }
}
