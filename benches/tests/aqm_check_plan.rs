//! The queue disciplines' cross-check on the reproduction framework at toy
//! size (our side only): a local run and a build from its plan points'
//! results run elsewhere give the same tables and files.

use tput_benches::aqm_check::{Aqm, AqmCheck, Options};
use tput_benches::repro;
use tput_lab::plan::write_result;

#[test]
fn results_run_elsewhere_build_the_local_run_s_tables() {
    let options = Options {
        parts: vec![Aqm::FqCodel],
        seeds: 1,
        secs: 2,
        references: false,
        ..Options::short()
    };
    let t = AqmCheck::new(options);
    let tmp = tempfile::tempdir().unwrap();
    let (local, from, results) = (
        tmp.path().join("local"),
        tmp.path().join("from"),
        tmp.path().join("results"),
    );
    let (built, measured) = repro::run_measured(&t, &local, 2, None).expect("runs");
    assert!(!built.failed, "{}", built.text);
    assert_eq!(measured.len(), 3, "1 and 10 NewReno, CUBIC+BBR");
    for (case, m) in &measured {
        let m = m.as_ref().expect("measured");
        assert_eq!(m.bytes.len(), case.flows.count());
        assert!(m.utilisation > 0.3 && m.utilisation <= 1.0, "{case:?}: {m:?}");
        assert!(
            m.sojourn_p99_ms.is_some_and(|p| p >= m.sojourn_p50_ms.unwrap()),
            "{m:?}"
        );
    }
    assert!(built.text.contains("fq_codel 10newreno"), "{}", built.text);
    let csv = std::fs::read_to_string(local.join("aqm_check.csv")).unwrap();
    assert!(csv.contains("\nfq_codel 1newreno,utilisation,"), "{csv}");

    let (_, plan) = repro::plan(&t).unwrap();
    for p in plan.iter().rev() {
        write_result(&results, &p.run().unwrap()).unwrap();
    }
    let rebuilt = repro::run(&t, &from, 1, Some(&results)).expect("built from the results");
    assert!(!rebuilt.failed, "{}", rebuilt.text);
    for name in ["tables.txt", "aqm_check.csv", "runs.csv"] {
        let read = |d: &std::path::Path| std::fs::read_to_string(d.join(name)).unwrap();
        assert_eq!(read(&local), read(&from), "{name} differs");
    }
}
