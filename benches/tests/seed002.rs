//! The seed-002 reproduction at toy size: every figure runs, writes its
//! files and reports numbers that obey the application-buffer and window
//! bounds; a point is deterministic.

use std::time::Duration;

use tput_benches::repro;
use tput_benches::seed002::{
    BUFFER_BYTES, FIGURES, Options, Point, Seed002, TCP_WINDOW, Variant, buffers_bound, scenario, window_bound,
};

fn toy() -> Options {
    Options {
        duration: Duration::from_secs(4),
        warmup: Duration::from_secs(1),
        rtts_ms: vec![0, 150],
        buffers: vec![1, 4],
        bers: vec![1e-7],
        live_rtts_ms: vec![50],
        live_buffers: vec![4],
        live_duration: Duration::from_secs(3),
        live_warmup: Duration::from_secs(1),
        ..Options::short()
    }
}

#[test]
fn every_figure_runs_at_toy_size_and_obeys_the_bounds() {
    let tmp_dir = tempfile::tempdir().unwrap();
    let dir = tmp_dir.path().to_path_buf();
    let (built, measured) = repro::run_measured(&Seed002 { options: toy() }, &dir, 2, None).expect("reproduction runs");
    // Failed points and failed live transfers alike.
    assert!(!built.failed, "{}", built.text);
    let points: Vec<_> = measured
        .into_iter()
        .map(|(_, m)| m.expect("every point measured"))
        .collect();
    // rtt: 2 RTTs x (2 controllers x 2 N + TCP); ber: 2 RTTs x 3.
    assert_eq!(points.len(), 16);
    let at = |figure: &str, v: Variant, rtt: u32| {
        points
            .iter()
            .find(|p| p.point.figure == figure && p.point.variant == v && p.point.rtt_ms == rtt)
            .unwrap_or_else(|| panic!("no {figure} {v:?} {rtt}"))
            .mbps
    };
    for p in &points {
        // Verified payload can never exceed the bottleneck's raw rate.
        assert!(p.mbps > 0.5 && p.mbps < 36.864, "{p:?}");
    }
    for cubic in [true, false] {
        let one = at("rtt", Variant::Quic { cubic, n: 1 }, 150);
        let four = at("rtt", Variant::Quic { cubic, n: 4 }, 150);
        let r = at("rtt", Variant::Quic { cubic, n: 4 }, 0) * 1e6;
        let bound = buffers_bound(1, BUFFER_BYTES, r, 0.150) / 1e6;
        assert!(one < bound * 1.03 && one > bound * 0.7, "N=1 {one} vs bound {bound}");
        assert!(four > 1.8 * one, "N=4 {four} vs N=1 {one}");
    }
    let tcp = at("rtt", Variant::TcpWindowLimited, 150);
    let bound = window_bound(TCP_WINDOW, 36e6, 0.150) / 1e6;
    assert!(tcp < bound * 1.03 && tcp > bound * 0.8, "TCP {tcp} vs {bound}");
    // One live transfer, as `live.csv` has it: only that it ran and
    // verified its bytes (its rate depends on the machine's load; the
    // bench's table compares it with the simulation).
    let live = std::fs::read_to_string(dir.join("live.csv")).expect("live.csv");
    let rows: Vec<Vec<&str>> = live.lines().skip(1).map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 1, "{live}");
    let (mbps, verified, error) = (rows[0][2], rows[0][6], rows[0][9]);
    assert!(error.is_empty(), "{live}");
    assert!(
        verified.parse::<u64>().unwrap() > 100_000 && mbps.parse::<f64>().unwrap() > 0.0,
        "{live}"
    );
    for name in [
        "tables.txt",
        "points.csv",
        "rtt_cubic.svg",
        "rtt_newreno.svg",
        "rtt_normalised.svg",
        "ber.svg",
        "live.csv",
        "live.svg",
    ] {
        let path = dir.join(name);
        let len = std::fs::metadata(&path).map(|m| m.len()).unwrap_or(0);
        assert!(len > 100, "{} missing or empty", path.display());
    }
    let tables = std::fs::read_to_string(dir.join("tables.txt")).expect("tables");
    for heading in [
        "Throughput vs RTT (simulated)",
        "normalised",
        "beside the paper's claims",
        "BER 1e-7: packet loss p = 9.82e-4",
        "Live vs simulated",
    ] {
        assert!(tables.contains(heading), "no {heading:?} in\n{tables}");
    }
}

#[test]
fn unknown_figures_are_refused_by_name() {
    let options = Options {
        figures: vec!["rtt".into(), "fig9".into()],
        ..Options::short()
    };
    let e = repro::plan(&Seed002 { options }).expect_err("fig9 does not exist");
    assert!(e.contains("fig9") && e.contains(FIGURES[0]), "{e}");
}

#[test]
fn a_point_is_deterministic() {
    let o = toy();
    let p = Point {
        figure: "ber",
        variant: Variant::Quic { cubic: false, n: 2 },
        rtt_ms: 50,
        ber: 1e-7,
    };
    let a = tput_lab::scenario::run(&scenario(&p, &o), |_| {}).expect("runs");
    let b = tput_lab::scenario::run(&scenario(&p, &o), |_| {}).expect("runs");
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.flows[0].bytes, b.flows[0].bytes);
    assert!(a.bottleneck.dropped_random.packets > 0, "p = 1e-3 over 4 s");
}
