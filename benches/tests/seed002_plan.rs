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

/// `TPUT_BENCH_TCP_PROFILE` and `TPUT_BENCH_TCP_ONLY`: the Linux profile
/// reaches every TCP-model point with the variant's receive window and
/// window scaling (go-back-N keeping its recovery), `TCP_ONLY` leaves the
/// QUIC points out, and a bad value is a one-line error naming the variable.
#[test]
fn environment_selects_the_tcp_profile_and_tcp_only() {
    use tput_benches::repro::Reproduction;
    use tput_benches::seed002::{Variant, tcp_spec};
    use tput_tcp::{Profile, Recovery};
    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }
    let o = options()
        .with_env(env(&[
            ("TPUT_BENCH_TCP_PROFILE", "linux"),
            ("TPUT_BENCH_TCP_ONLY", "1"),
        ]))
        .unwrap();
    assert_eq!(o.tcp_profile, Profile::Linux);
    assert!(o.tcp_only);
    let points = Seed002 { options: o }.points().unwrap();
    // rtt: the 53 KiB TCP at two RTTs; ber: SACK and go-back-N at two RTTs.
    assert_eq!(points.len(), 2 + 4);
    for p in &points {
        let g = &p.scenario.flows[0];
        assert_eq!(g.transport, tput_lab::scenario::Transport::Tcp);
        let t = g.tcp.as_ref().unwrap();
        assert_eq!(t.profile.as_deref(), Some("linux"));
        let c = t.config().unwrap();
        assert!(c.timestamps && c.delayed_ack.is_some());
        match p.point.variant {
            Variant::TcpWindowLimited => {
                assert_eq!(c.receive_window, 53 * 1024);
                assert_eq!(c.recovery, Recovery::Rack);
            }
            Variant::TcpSack => assert!(c.recovery == Recovery::Rack && c.prr),
            Variant::TcpGbn => assert!(c.recovery == Recovery::Gbn && !c.sack && !c.prr),
            v => panic!("{v:?} is not a TCP point"),
        }
    }
    // The default: every point, ns-2's settings as before.
    let all = options().with_env(env(&[])).unwrap();
    assert_eq!(all.tcp_profile, Profile::Ns2);
    assert!(Seed002 { options: all }.points().unwrap().len() > points.len());
    let ns2 = tcp_spec(Variant::TcpSack, Profile::Ns2);
    assert!(ns2.profile.is_none() && ns2.config().unwrap().recovery == Recovery::Sack);
    for (k, v) in [("TPUT_BENCH_TCP_PROFILE", "aix"), ("TPUT_BENCH_TCP_ONLY", "yes")] {
        let e = options().with_env(env(&[(k, v)])).unwrap_err();
        assert!(e.starts_with(k) && !e.contains('\n'), "{e}");
    }
}
