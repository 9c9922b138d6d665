//! The seed-000 reproduction at toy size: every figure runs, writes its
//! files and reports sane numbers; the timeline is deterministic.

use std::time::Duration;

use tput_benches::repro;
use tput_benches::seed000::{FIGURES, Measured, Options, Seed000, timeline};

#[test]
fn every_figure_runs_at_toy_size_and_writes_its_files() {
    let tmp_dir = tempfile::tempdir().unwrap();
    let dir = tmp_dir.path().to_path_buf();
    let options = Options {
        point_duration: Duration::from_secs(3),
        timeline_duration: Duration::from_secs(6),
        reno_counts: vec![2],
        targets_pct: vec![10],
        seeds: vec![1],
        ..Options::short()
    };
    let (built, measured) = repro::run_measured(&Seed000 { options }, &dir, 2, None).expect("reproduction runs");
    assert!(!built.failed, "{}", built.text);
    assert_eq!(measured.len(), 12, "one measurement per simulation");
    let mut points = Vec::new();
    let mut timeline = None;
    for (_, m) in measured {
        match m.expect("every point measured") {
            Measured::Point(p) => points.push(p),
            Measured::Timeline(t) => timeline = Some(t),
        }
    }
    // fig6: guarantee, newreno, fixed; fig6-inline and fig6-eq45: one each;
    // fig7: independent, coordinated; fig6-tcp: the 2 x 2.
    assert_eq!(points.len(), 11);
    let point = |variant: &str| {
        points
            .iter()
            .find(|p| p.variant == variant)
            .unwrap_or_else(|| panic!("no {variant} point"))
    };
    // With only 2 Reno flows a 10% target is easy: the paper's controller
    // meets it in every slot (its Fig. 6 at x = 2), and never does worse than
    // plain NewReno in the same seat.
    assert_eq!(point("guarantee").success, 1.0, "{:?}", point("guarantee"));
    assert!(point("guarantee").success >= point("newreno").success);
    for p in &points {
        assert!(p.tested_mbps > 0.0 && p.reno_mbps > 0.0, "{p:?}");
        if !p.variant.starts_with("5 ") {
            assert_eq!(
                p.success, p.aggregate_success,
                "one flow judged alone or as a group: {p:?}"
            );
        }
    }
    // Every cell of the 2 x 2 runs its guarantee flow over the transport it
    // names, against competitors that move data, and the bottleneck is idle
    // for a fraction in [0, 1).
    for variant in [
        "QUIC vs QUIC NewReno",
        "QUIC vs TCP Reno",
        "TCP vs QUIC NewReno",
        "TCP vs TCP Reno",
    ] {
        let p = point(variant);
        assert_eq!(p.figure, "fig6-tcp");
        assert!((0.0..1.0).contains(&p.idle), "{p:?}");
        assert!(p.tested_mbps > 0.0 && p.reno_mbps > 0.0, "{p:?}");
        if variant == "TCP vs QUIC NewReno" {
            // The guarantee flow over the TCP model with Reno recovery against
            // QUIC NewReno times out about twice a second (30 s: 68 timeouts,
            // 4 of 46 slots met), so 3 s may hold no met slot: it is judged
            // at full size (see the module docs).
            continue;
        }
        assert!(p.success > 0.0, "2 competitors leave room for 10%: {p:?}");
    }
    // The fixed window sends at most its rate: cwnd = 10 Mbit/s * min RTT.
    let fixed = point("fixed");
    assert!(fixed.tested_mbps < 10.5, "{fixed:?}");
    let t = timeline.as_ref().expect("fig4 ran");
    assert_eq!(t.phases.len(), 2, "0-5 s and 5-6 s");
    assert!(t.samples.len() >= 55, "{} samples of 100 ms", t.samples.len());
    for name in [
        "tables.txt",
        "points.csv",
        "summary_10pct.csv",
        "fig4_timeline.csv",
        "fig4_cwnd.svg",
        "fig5_slot.svg",
        "fig6_10pct.svg",
        "fig6_inline_10pct.svg",
        "fig6_eq45_10pct.svg",
        "fig7_10pct.svg",
        "fig6_tcp_10pct.svg",
    ] {
        let path = dir.join(name);
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        assert!(len > 100, "{} missing or empty", path.display());
    }
    let tables = std::fs::read_to_string(dir.join("tables.txt")).expect("tables");
    for heading in [
        "Fig. 4/5",
        "Fig. 6, target 10%",
        "inline estimator",
        "eqs. 4/5",
        "Fig. 7",
        "Fig. 6 over TCP, target 10%",
        "idle fraction",
        "(no x >= 15 in this run: no verdict)",
    ] {
        assert!(tables.contains(heading), "no {heading:?} in\n{tables}");
    }
}

#[test]
fn unknown_figures_are_refused_by_name() {
    let options = Options {
        figures: vec!["fig6".into(), "fig9".into()],
        ..Options::short()
    };
    let e = repro::plan(&Seed000 { options }).expect_err("fig9 does not exist");
    assert!(e.contains("fig9") && e.contains(FIGURES[0]), "{e}");
}

#[test]
fn the_timeline_is_deterministic_per_seed() {
    let a = timeline(Duration::from_secs(2), 7).expect("runs");
    let b = timeline(Duration::from_secs(2), 7).expect("runs");
    assert_eq!(a.samples, b.samples);
    assert_eq!(a.slots, b.slots);
    let c = timeline(Duration::from_secs(2), 8).expect("runs");
    assert_ne!(a.samples, c.samples, "another seed, other start phases");
}
