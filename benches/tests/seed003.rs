//! Seed 003's reproduction at toy size: the `W_min` search on a known curve,
//! and every figure's files from a tiny run.

use std::time::Duration;

use tput_benches::repro;
use tput_benches::seed003::{Options, RatePoint, Seed003, Setup, passes, search_with};
use tput_lab::files::FileStats;
use tput_lab::scenario::Transport;

/// A point whose `D_e` is `de` seconds over one completed file.
fn point(rate: f64, de: f64) -> RatePoint {
    RatePoint {
        rate_mbps: rate,
        files: FileStats {
            started: 1,
            transfer_secs: vec![de],
            total_secs: vec![de],
            sizes: vec![1],
            ..FileStats::default()
        },
        ..RatePoint::default()
    }
}

#[test]
fn the_search_finds_the_crossing_to_its_resolution() {
    // D_e = 1 s at 100 Mbit/s, rising as the rate falls: 1 + (100 - r) / 200
    // crosses 1.1 at r = 80 exactly; 1 + (100 - r) / 330 at r = 67.
    for (slope, expect) in [(200.0, 80.0), (330.0, 67.0), (1e9, 10.0)] {
        let mut tried = Vec::new();
        let (wmin, reference, points) = search_with(5.0, 1.0, |r| {
            tried.push(r);
            Ok(point(r, 1.0 + (100.0 - r) / slope))
        })
        .unwrap();
        assert_eq!(reference.de(), 1.0);
        assert_eq!(tried[0], 100.0, "the reference first, once");
        assert_eq!(tried.iter().filter(|&&r| r == 100.0).count(), 1);
        assert!(
            (wmin - expect).abs() <= 1.0 + 1e-9,
            "slope {slope}: W_min {wmin}, expected {expect}"
        );
        // The rate found passes; the one a resolution step below (if tried) fails.
        let found = points.iter().find(|p| p.rate_mbps == wmin).unwrap();
        assert!(found.pass);
        assert!(points.iter().filter(|p| p.rate_mbps < wmin).all(|p| !p.pass));
        assert!(tried.len() <= 1 + 9 + 4, "{tried:?}");
    }
}

#[test]
fn rates_at_or_below_the_load_fail_without_a_run_and_lost_files_fail() {
    let mut tried = Vec::new();
    let (wmin, _, points) = search_with(45.0, 1.0, |r| {
        tried.push(r);
        Ok(point(r, 1.0))
    })
    .unwrap();
    assert!(tried.iter().all(|&r| r > 45.0), "{tried:?}");
    assert!(points.iter().any(|p| p.overloaded && p.rate_mbps <= 45.0));
    assert!((wmin - 46.0).abs() <= 1.0, "{wmin}");
    // A point that lost a file fails even when its D_e is small.
    let reference = point(100.0, 1.0);
    let mut p = point(90.0, 0.5);
    assert!(passes(&p, &reference));
    p.files.unfinished = 1;
    assert!(!passes(&p, &reference));
}

#[test]
fn every_figure_runs_at_toy_size_and_writes_its_files() {
    let tmp_dir = tempfile::tempdir().unwrap();
    let dir = tmp_dir.path().to_path_buf();
    let mut o = Options::short();
    o.window = Duration::from_secs(1);
    o.files_per_flow = 1.0;
    o.drain = Duration::from_secs(5);
    o.resolution_mbps = 40.0;
    o.delays_ms = vec![10.0];
    o.flows = vec![1];
    o.flows_delays_ms = vec![10.0];
    o.sizes_mbit = vec![1.0];
    o.controllers = vec!["newreno".into()];
    let s3 = Seed003 { options: o };
    let (built, measured) = repro::run_measured(&s3, &dir, 2, None).unwrap();
    assert!(!built.failed, "{}", built.text);
    let r = s3.report(&measured).unwrap();
    assert!(r.failures.is_empty(), "{:?}", r.failures);
    // Every simulation ran once.
    let cpu = std::fs::read_to_string(dir.join("cpu.csv")).unwrap();
    assert_eq!(cpu.lines().count(), 1 + measured.len(), "{cpu}");
    // The D_e-vs-rate curves ran on their grid above the offered load.
    assert!(!r.curves.is_empty());
    assert!(
        r.curves
            .iter()
            .all(|(s, p)| p.rate_mbps > s.offered_mbps() && p.files.started > 0)
    );
    // Shared configurations run once: delay, buffer's 100-packet curve and
    // iw's newreno are one setup per transport.
    let paper = Setup::paper(Transport::Tcp, "newreno", 10.0);
    assert_eq!(r.searches.iter().filter(|(s, _)| *s == paper).count(), 1);
    for (_, s) in &r.searches {
        assert!((10.0..=100.0).contains(&s.wmin_mbps), "{s:?}");
        assert!(s.reference.files.completed() > 0, "{s:?}");
    }
    for name in [
        "delay.svg",
        "delay-de.svg",
        "flows-short.svg",
        "size.svg",
        "buffer.svg",
        "iw.svg",
        "iw-de.svg",
        "wmin.csv",
        "points.csv",
        "tables.txt",
    ] {
        let text = std::fs::read_to_string(dir.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert!(text.len() > 100, "{name}");
        if name.ends_with(".svg") {
            assert!(
                text.contains("<svg") && text.contains("W_min") || text.contains("D_e"),
                "{name}"
            );
        }
    }
    assert!(built.text.contains("paper 60"), "{}", built.text);
    assert!(built.text.contains("newreno:iw=2"), "{}", built.text);
    let csv = std::fs::read_to_string(dir.join("wmin.csv")).unwrap();
    assert!(csv.lines().count() > 4);
}

#[test]
fn unknown_figures_are_refused_by_name() {
    let mut o = Options::short();
    o.figures = vec!["fig9".into()];
    let e = repro::plan(&Seed003 { options: o }).unwrap_err();
    assert!(e.contains("fig9") && e.contains("delay"), "{e}");
}
