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

/// `TPUT_BENCH_N`, `TPUT_BENCH_VARIANTS` and `TPUT_BENCH_TCP_PROFILE`:
/// what they select reaches the plan (the Linux profile in every TCP flow,
/// tested and competing; none in the QUIC ones), and a bad value is a
/// one-line error naming the variable.
#[test]
fn environment_selects_counts_variants_and_the_tcp_profile() {
    use tput_benches::repro::Reproduction;
    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
        let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |k: &str| pairs.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }
    let base = Options {
        competitors: vec!["quic-newreno", "tcp-cubic"],
        targets_pct: vec![10],
        seeds: vec![1],
        figures: vec!["grid".into()],
        ..Options::full()
    };
    let o = base
        .clone()
        .with_env(env(&[
            ("TPUT_BENCH_N", "40, 30"),
            ("TPUT_BENCH_VARIANTS", "tcp-default,default"),
            ("TPUT_BENCH_TCP_PROFILE", "linux"),
        ]))
        .unwrap();
    assert_eq!(o.counts, [40, 30]);
    assert_eq!(o.variants, ["default", "tcp-default"]);
    assert_eq!(o.tcp_profile, tput_tcp::Profile::Linux);
    let points = Guarantee { options: o }.points().unwrap();
    // default against both kinds, tcp-default against both: 4 x 2 counts.
    assert_eq!(points.len(), 8);
    let mut tcp_flows = 0;
    for p in &points {
        for g in &p.scenario.flows {
            let profile = g.tcp.as_ref().and_then(|t| t.profile.as_deref());
            match g.transport {
                tput_lab::scenario::Transport::Tcp => {
                    tcp_flows += 1;
                    assert_eq!(profile, Some("linux"), "{}", p.point.variant);
                }
                _ => assert_eq!(profile, None),
            }
        }
    }
    assert!(tcp_flows > 0);
    // Without the variable: ns-2's defaults, no profile named.
    let ns2 = Guarantee {
        options: base.clone().with_env(env(&[])).unwrap(),
    };
    assert_eq!(ns2.options.tcp_profile, tput_tcp::Profile::Ns2);
    assert_eq!(ns2.options.variants.len(), 8);
    for p in ns2.points().unwrap() {
        for g in &p.scenario.flows {
            assert!(g.tcp.as_ref().is_none_or(|t| t.profile.is_none()));
        }
    }
    for (pairs, named) in [
        (&[("TPUT_BENCH_TCP_PROFILE", "bsd")][..], "TPUT_BENCH_TCP_PROFILE"),
        (&[("TPUT_BENCH_N", "10,many")][..], "TPUT_BENCH_N"),
        (&[("TPUT_BENCH_N", " , ")][..], "TPUT_BENCH_N"),
        (&[("TPUT_BENCH_VARIANTS", "tcp-vegas")][..], "TPUT_BENCH_VARIANTS"),
    ] {
        let e = base.clone().with_env(env(pairs)).unwrap_err();
        assert!(e.starts_with(named) && !e.contains('\n'), "{e}");
    }
}

fn toy_link(mbit_per_sec: u64, steps: &[(u64, u64)]) -> tput_lab::scenario::LinkSpec {
    let mut l = tput_lab::scenario::LinkSpec::new(
        tput_cc::units::Rate::from_bits_per_sec(mbit_per_sec * 1_000_000),
        Duration::from_millis(5),
    )
    .with_queue_packets(30);
    l.rate_schedule = steps
        .iter()
        .map(|&(at, mbit)| tput_lab::scenario::RateChange {
            at: Duration::from_secs(at),
            rate: tput_cc::units::Rate::from_bits_per_sec(mbit * 1_000_000),
        })
        .collect();
    l
}

/// The live safety cases at toy size (4 Mbit/s through the relay on
/// loopback): a target twice the link is never met, is declared
/// infeasible, and the transfer still verifies every byte it sent. What
/// is asserted are verdicts and bytes, not rates or times: the machine's
/// load moves those.
#[test]
fn the_live_safety_toy_declares_an_infeasible_target_and_verifies_its_bytes() {
    let rate = |mbit: u64| tput_cc::units::Rate::from_bits_per_sec(mbit * 1_000_000);
    let case = live::LiveCase::new(
        "toy 200 %",
        toy_link(4, &[]),
        "guarantee:target=8Mbit/s",
        rate(8),
        1,
        Duration::from_secs(7),
    );
    let r = live::run_case(&case).expect("the live run");
    assert!(r.verified && r.error.is_none(), "{r:?}");
    assert!(r.tested_bytes > 0, "{r:?}");
    assert_eq!(r.success, Some(0.0), "8 Mbit/s never fits a 4 Mbit/s link: {r:?}");
    assert!(r.infeasible_intervals > 0 && r.infeasible_at_secs.is_some(), "{r:?}");
    assert!(!r.competitors_per_sec_mbps.is_empty(), "{r:?}");
    let lines = live::case_lines(&r);
    assert!(
        lines.contains("toy 200 %")
            && lines.contains("every byte verified")
            && lines.contains("competitors, Mbit/s per second"),
        "{lines}"
    );
}

/// An overbooked link after a capacity step, at toy size: two connections
/// asking 1.5 Mbit/s each while the relay's link steps from 4 to 1 Mbit/s
/// at 2 s. Every byte is verified, and the slots after the step miss (each
/// connection can have at most the 1 Mbit/s left); whether the breaker has
/// tripped by the end depends on the machine's timing, so it is printed,
/// not asserted.
#[test]
fn the_live_safety_toy_through_a_capacity_step_verifies_its_bytes_and_misses() {
    let case = live::LiveCase {
        tested: 2,
        ..live::LiveCase::new(
            "toy step",
            toy_link(4, &[(2, 1)]),
            "guarantee:target=1.5Mbit/s",
            tput_cc::units::Rate::from_bits_per_sec(1_500_000),
            1,
            Duration::from_secs(8),
        )
    };
    let r = live::run_case(&case).expect("the live run");
    println!("{}", live::case_lines(&r));
    assert!(r.verified && r.error.is_none(), "{r:?}");
    assert!(r.tested_bytes > 0 && r.tested_per_sec_mbps.len() >= 4, "{r:?}");
    assert!(r.success.is_some_and(|s| s < 1.0), "{r:?}");
}

/// The `live-safety` figure at toy size (3-s runs against two NewReno
/// connections, two overbooked ones) through the bench: each of the four
/// cases and its NewReno seat run prints its per-second goodput, verifies
/// every byte, and gets a summary row and its series in the CSVs. Rates,
/// times and verdicts are the machine's, so they are printed, not asserted.
#[test]
fn the_live_safety_figure_runs_each_case_and_its_seat() {
    let tmp = tempfile::tempdir().unwrap();
    let g = Guarantee {
        options: Options {
            figures: vec!["live-safety".into()],
            live_duration: Duration::from_secs(3),
            live_competitors: 2,
            live_overbooked: 2,
            ..Options::short()
        },
    };
    let built = repro::run(&g, tmp.path(), 1, None).expect("the live-safety figure");
    println!("{}", built.text);
    assert!(!built.failed, "{}", built.text);
    let text = &built.text;
    assert!(
        text.contains("== live-safety") && !text.contains("NOT verified"),
        "{text}"
    );
    for name in ["50 %", "120 %", "overbooked 2x50Mbit/s", "step 100-15-100"] {
        assert!(text.contains(&format!("{name}: success")), "{name}: {text}");
        assert!(text.contains(&format!("{name} seat: success")), "{name}: {text}");
    }
    let summary = read(tmp.path(), "live_safety.csv");
    assert_eq!(summary.lines().count(), 1 + 8, "{summary}");
    assert_eq!(
        summary.lines().filter(|l| l.contains(",newreno,")).count(),
        4,
        "{summary}"
    );
    let per_sec = read(tmp.path(), "live_safety_per_second.csv");
    assert!(
        per_sec.lines().any(|l| l.starts_with("step 100-15-100 seat,")),
        "{per_sec}"
    );
}
