//! The seed-001 reproduction at toy size: the sweep, its tables, CSV and
//! SVG files, and the timeline run; the numbers obey the link's physics.

use std::time::Duration;

use tput_benches::repro;
use tput_benches::seed001::{Options, Placement, Point, Seed001, Transport, collapsed, link_bound_mbps, threshold};
use tput_lab::scenario::CutModeSpec;

#[test]
fn the_sweep_runs_at_toy_size_and_writes_its_files() {
    let tmp_dir = tempfile::tempdir().unwrap();
    let dir = tmp_dir.path().to_path_buf();
    let options = Options {
        duration: Duration::from_millis(300),
        side_duration: Duration::from_millis(300),
        periods: vec![Duration::from_micros(10), Duration::from_millis(1)],
        occupancies: vec![0.7, 1.0],
        side_occupancies: vec![0.7],
        seeds: vec![1],
        side_seeds: vec![1],
        transports: vec![Transport::TcpSack, Transport::QuicNewReno],
        remedies: true,
        sensitivity: false,
        placement: false,
        timeline_duration: Duration::from_millis(300),
    };
    let (built, measured) = repro::run_measured(&Seed001 { options }, &dir, 2, None).expect("reproduction runs");
    assert!(!built.failed, "{}", built.text);
    let points: Vec<_> = measured
        .into_iter()
        .map(|(_, m)| m.expect("every point measured"))
        .collect();
    // Main: 2 transports x 2 periods x 2 occupancies; side: 4 studies x 2 x 2.
    assert_eq!(points.len(), 8 + 16);
    let get = |study: &str, t: Transport, period_us: u64, occ: f64| {
        points
            .iter()
            .find(|r| {
                r.point.study == study
                    && r.point.transport == t
                    && r.point.period == Duration::from_micros(period_us)
                    && r.point.occupancy == occ
            })
            .unwrap_or_else(|| panic!("no point {study} {t:?} {period_us} {occ}"))
    };
    for t in [Transport::TcpSack, Transport::QuicNewReno] {
        // Uncut: close to the 1 Gbit/s line rate (payload of 1500-byte packets).
        let full = get("drop", t, 1000, 1.0);
        assert!(full.throughput_mbps > 800.0, "{full:?}");
        assert_eq!((full.timeouts, full.cut_losses), (0, 0), "{full:?}");
        // At a 10 us period no 12 us frame fits a connected interval: the
        // link passes nothing in any mode, whatever the transport.
        for study in ["drop", "hold", "pause", "hold_abort"] {
            let p = get(study, t, 10, 0.7);
            assert_eq!(p.throughput_mbps, 0.0, "{p:?}");
        }
        // Drop in the switch at 1 ms, 70 %: timeouts and a collapse.
        let d = get("drop", t, 1000, 0.7);
        assert!(d.timeouts > 0 && d.cut_losses > 0, "{d:?}");
        assert!(collapsed(d.throughput_mbps, 0.7, full.throughput_mbps), "{d:?}");
        // The guarded hold and pause lose nothing to the cut and keep most of
        // the connected share; hold queues in the switch, pause in the sender.
        let h = get("hold", t, 1000, 0.7);
        let p = get("pause", t, 1000, 0.7);
        for r in [h, p] {
            assert_eq!(r.cut_losses, 0, "{r:?}");
            assert!(r.throughput_mbps > 0.5 * 0.7 * full.throughput_mbps, "{r:?}");
            // (Bytes still queued at the end drain after it and count.)
            assert!(r.throughput_mbps < full.throughput_mbps, "{r:?}");
        }
        assert!(h.switch_hw_packets > p.switch_hw_packets, "{h:?} {p:?}");
        assert!(p.sender_hw_packets > 0 && p.added_delay_ms > 0.0, "{p:?}");
    }
    // Files: the table, the CSV, a chart per transport, the timelines.
    let text = std::fs::read_to_string(dir.join("tables.txt")).unwrap();
    assert!(
        text.contains("Collapse threshold") && text.contains("most tolerant"),
        "{text}"
    );
    let csv = std::fs::read_to_string(dir.join("seed001_points.csv")).unwrap();
    assert_eq!(csv.lines().count(), 1 + 24);
    for f in [
        "throughput_vs_occupancy_tcp_sack.svg",
        "throughput_vs_occupancy_quic_newreno.svg",
        "remedies_quic_newreno.svg",
        "timeline_tcp_sack_89.svg",
        "timeline_quic_newreno_89.csv",
    ] {
        let body = std::fs::read_to_string(dir.join(f)).unwrap_or_else(|e| panic!("{f}: {e}"));
        assert!(body.len() > 100, "{f}");
    }
}

#[test]
fn thresholds_and_link_bounds() {
    // A curve that collapses below 0.9 (full rate 1000).
    let c = [(0.5, 10.0), (0.8, 20.0), (0.9, 800.0), (0.95, 900.0), (1.0, 1000.0)];
    assert_eq!(threshold(&c, 1000.0), Some(0.9));
    assert_eq!(threshold(&[(0.5, 400.0), (0.9, 800.0)], 1000.0), Some(0.5));
    assert_eq!(threshold(&[(0.5, 0.0), (0.9, 1.0)], 1000.0), None);
    // 1 ms at 50 %: 500 us hold 41 whole 12 us frames.
    let b = link_bound_mbps(Duration::from_millis(1), 0.5, 1460);
    assert!((b - 41.0 * 1460.0 * 8.0 / 1e-3 / 1e6).abs() < 1e-6, "{b}");
    assert_eq!(link_bound_mbps(Duration::from_micros(10), 0.99, 1460), 0.0);
}

#[test]
fn the_cut_sits_in_the_switch_or_on_the_senders_link() {
    let p = Point {
        study: "drop",
        transport: Transport::QuicCubic,
        period: Duration::from_millis(1),
        occupancy: 0.89,
        seed: 2,
        mode: CutModeSpec::Drop,
        placement: Placement::Switch,
        delay: Duration::from_micros(10),
        switch_queue: 1000,
        duration: Duration::from_secs(1),
    };
    let s = p.scenario();
    let tput_lab::scenario::TopologySpec::Chain { hops, .. } = &s.topology else {
        panic!("a chain")
    };
    assert!(hops[0].cutoff.is_none() && hops[1].cutoff.is_some());
    assert_eq!(s.mtu, 1472, "1500-byte IP packets");
    // The phase is a fixed fraction of the period per seed, inside it.
    assert!(p.phase() < p.period && p.phase() > Duration::ZERO);
    let q = Point {
        placement: Placement::SenderLink,
        ..p.clone()
    };
    let tput_lab::scenario::TopologySpec::Chain { hops, .. } = &q.scenario().topology else {
        panic!("a chain")
    };
    assert!(hops[0].cutoff.is_some() && hops[1].cutoff.is_none());
}
