//! The seed-002 reproduction at toy size: every figure runs, writes its
//! files and reports numbers that obey the application-buffer and window
//! bounds; a point is deterministic.

use std::time::Duration;

use tput_benches::seed002::{
    BUFFER_BYTES, FIGURES, Options, Point, TCP_WINDOW, Variant, buffers_bound, reproduce, scenario, window_bound,
};

fn toy(dir: std::path::PathBuf) -> Options {
    Options {
        jobs: 2,
        duration: Duration::from_secs(4),
        warmup: Duration::from_secs(1),
        rtts_ms: vec![0, 150],
        buffers: vec![1, 4],
        bers: vec![1e-7],
        live_rtts_ms: vec![50],
        live_buffers: vec![4],
        live_duration: Duration::from_secs(3),
        live_warmup: Duration::from_secs(1),
        ..Options::short(dir)
    }
}

#[test]
fn every_figure_runs_at_toy_size_and_obeys_the_bounds() {
    let dir = std::env::temp_dir().join(format!("tput-seed002-test-{}", std::process::id()));
    let o = toy(dir.clone());
    let mut lines = Vec::new();
    let report = reproduce(&o, |l| lines.push(l.to_string())).expect("reproduction runs");
    assert!(report.failures.is_empty(), "{:?}", report.failures);
    // rtt: 2 RTTs x (2 controllers x 2 N + TCP); ber: 2 RTTs x 3.
    assert_eq!(report.points.len(), 16);
    assert_eq!(lines.len(), 17, "one progress line per point: {lines:?}");
    let at = |figure: &str, v: Variant, rtt: u32| {
        report
            .points
            .iter()
            .find(|p| p.point.figure == figure && p.point.variant == v && p.point.rtt_ms == rtt)
            .unwrap_or_else(|| panic!("no {figure} {v:?} {rtt}"))
            .mbps
    };
    for p in &report.points {
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
    assert_eq!(report.live.len(), 1);
    let live = &report.live[0];
    assert!(live.error.is_none(), "{live:?}");
    // Only that it ran and verified its bytes: its rate depends on the
    // machine's load (the bench's table compares it with the simulation).
    assert!(live.verified_bytes > 100_000 && live.mbps > 0.0, "{live:?}");
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
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn unknown_figures_are_refused_by_name() {
    let o = Options {
        figures: vec!["rtt".into(), "fig9".into()],
        ..Options::short(std::env::temp_dir())
    };
    let e = reproduce(&o, |_| {}).expect_err("fig9 does not exist");
    assert!(e.contains("fig9") && e.contains(FIGURES[0]), "{e}");
}

#[test]
fn a_point_is_deterministic() {
    let o = toy(std::env::temp_dir());
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
