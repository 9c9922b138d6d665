//! Seed 000 as a plan: the points `--plan` prints run anywhere, in any
//! order, and `--from` builds the same tables and files from their results
//! as a local run does.

use std::path::Path;
use std::time::Duration;

use tput_benches::repro;
use tput_benches::seed000::{Options, Seed000};
use tput_lab::plan::{read_points, result_path, write_result};

fn options() -> Options {
    Options {
        point_duration: Duration::from_secs(2),
        timeline_duration: Duration::from_secs(6),
        reno_counts: vec![1],
        targets_pct: vec![10],
        seeds: vec![1],
        figures: ["fig4", "fig6", "fig7", "fig6-tcp"].map(String::from).to_vec(),
        ..Options::full()
    }
}

fn plan(s: &Seed000) -> Result<Vec<tput_lab::plan::Point>, String> {
    repro::plan(s).map(|(_, p)| p)
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{}/{name}: {e}", dir.display()))
}

#[test]
fn from_results_run_elsewhere_gives_the_local_run_s_files_byte_for_byte() {
    let tmp_base = tempfile::tempdir().unwrap();
    let base = tmp_base.path().to_path_buf();
    let (local, from, results) = (base.join("local"), base.join("from"), base.join("results"));

    let o = Seed000 { options: options() };
    let built = repro::run(&o, &local, 2, None).expect("the local run");
    assert!(!built.failed, "{}", built.text);

    // The plan as --plan prints it reads back as a plan file.
    let points = plan(&o).expect("a plan");
    assert_eq!(points.len(), 1 + 3 + 2 + 4, "timeline, fig6, fig7, fig6-tcp");
    assert_eq!(points[0].vary["figure"], "fig4");
    let file = base.join("plan.jsonl");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::write(&file, tput_lab::plan::plan_text(&points).unwrap()).unwrap();
    let read_back = read_points(&file).expect("the plan parses");
    assert_eq!(read_back, points);
    assert_eq!(plan(&o).unwrap(), points, "the plan is a function of the options");

    // Run every point as `tputctl sweep run --index N` would, last first,
    // on one thread: another order and job count than the local run's.
    for p in read_back.iter().rev() {
        let r = p.run().unwrap_or_else(|e| panic!("point {}: {e}", p.index));
        write_result(&results, &r).unwrap();
    }
    let rebuilt = repro::run(&o, &from, 1, Some(&results)).expect("built from the results");
    assert!(!rebuilt.failed, "{}", rebuilt.text);
    for name in [
        "tables.txt",
        "points.csv",
        "summary_10pct.csv",
        "fig4_timeline.csv",
        "fig4_slots.csv",
        "fig4_cwnd.svg",
        "fig6_10pct.svg",
        "fig7_10pct.svg",
        "fig6_tcp_10pct.svg",
    ] {
        assert_eq!(read(&local, name), read(&from, name), "{name} differs");
    }
    assert!(read(&local, "tables.txt").contains("Fig. 4/5"));
    assert!(local.join("cpu.csv").exists() && !from.join("cpu.csv").exists());

    // A missing result is named; so are results of another plan.
    std::fs::remove_file(result_path(&results, 3)).unwrap();
    let e = repro::run(&o, &from, 1, Some(&results)).expect_err("point 3 is missing");
    assert!(e.contains("no result for point 3 (fig6 fixed 10% n=1 seed 1)"), "{e}");
    assert!(!e.contains('\n'), "one line: {e}");
    let other = Seed000 {
        options: Options {
            seeds: vec![2],
            ..options()
        },
    };
    let e = repro::run(&other, &from, 1, Some(&results)).expect_err("another seed, another plan");
    assert!(e.contains("not of this plan"), "{e}");
}

#[test]
fn the_arguments_choose_plan_from_or_a_local_run() {
    use tput_benches::Mode;
    let parse = |a: &[&str]| Mode::parse(a.iter().map(|s| s.to_string()));
    assert_eq!(parse(&["--bench"]), Ok(Mode::Run));
    assert_eq!(parse(&["--bench", "--plan"]), Ok(Mode::Plan));
    assert_eq!(parse(&["--from", "res", "--bench"]), Ok(Mode::From("res".into())));
    assert!(parse(&["--from"]).unwrap_err().contains("--from needs a directory"));
    assert_eq!(parse(&["--plan", "--from", "x"]), Ok(Mode::PlanFrom("x".into())));
    assert!(parse(&["--plan", "--plan"]).unwrap_err().contains("once"));
    assert!(parse(&["--from", "x", "--from", "y"]).unwrap_err().contains("once"));
    assert!(parse(&["--plans"]).unwrap_err().contains("`--plans`"));
}

/// `TPUT_BENCH_N` and `TPUT_BENCH_TCP_PROFILE`: the counts become the x
/// axis, the Linux profile reaches every TCP-model flow of `fig6-tcp`
/// (tested and competing) and no QUIC flow, and a bad value is a one-line
/// error naming the variable.
#[test]
fn environment_selects_counts_and_the_tcp_profile() {
    use tput_benches::repro::Reproduction;
    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }
    let base = Options {
        figures: vec!["fig6-tcp".into()],
        ..options()
    };
    let o = base
        .clone()
        .with_env(env(&[("TPUT_BENCH_N", "10,30"), ("TPUT_BENCH_TCP_PROFILE", "linux")]))
        .unwrap();
    assert_eq!(o.reno_counts, [10, 30]);
    assert_eq!(o.tcp_profile, tput_tcp::Profile::Linux);
    let points = Seed000 { options: o }.points().unwrap();
    // The 2 x 2 at two counts.
    assert_eq!(points.len(), 8);
    let (mut tcp, mut quic) = (0, 0);
    for p in &points {
        for g in &p.scenario.flows {
            let profile = g.tcp.as_ref().and_then(|t| t.profile.as_deref());
            if g.transport == tput_lab::scenario::Transport::Tcp {
                tcp += 1;
                assert_eq!(profile, Some("linux"));
            } else {
                quic += 1;
                assert_eq!(profile, None);
            }
        }
    }
    assert!(tcp > 0 && quic > 0);
    let ns2 = Seed000 {
        options: base.clone().with_env(env(&[])).unwrap(),
    };
    assert_eq!(ns2.options.tcp_profile, tput_tcp::Profile::Ns2);
    for p in ns2.points().unwrap() {
        assert!(
            p.scenario
                .flows
                .iter()
                .all(|g| g.tcp.as_ref().is_none_or(|t| t.profile.is_none()))
        );
    }
    for (k, v) in [
        ("TPUT_BENCH_TCP_PROFILE", "freebsd"),
        ("TPUT_BENCH_N", "ten"),
        ("TPUT_BENCH_N", ","),
    ] {
        let e = base.clone().with_env(env(&[(k, v)])).unwrap_err();
        assert!(e.starts_with(k) && !e.contains('\n'), "{e}");
    }
}
