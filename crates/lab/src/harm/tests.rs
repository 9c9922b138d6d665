use std::time::Duration;

use tput_cc::Snapshot;
use tput_cc::units::Rate;
use tput_netsim::{Counter, LinkId, LinkStats, QueueSample, SimTime};
use tput_transport::IntervalStats;

use super::*;
use crate::fixtures::{empty_flow, guarantee_snapshot, interval};
use crate::scenario::{FlowGroup, MeasuredWindow, RateChange};

fn mbit(x: f64) -> Rate {
    Rate::from_bits_per_sec((x * 1e6) as u64)
}

/// A 10-s scenario: a 10 Mbit/s guarantee flow and two NewReno flows on a
/// 100 Mbit/s bottleneck that drops to 50 Mbit/s at 5 s.
fn scenario() -> Scenario {
    let bottleneck = LinkSpec {
        rate_schedule: vec![RateChange {
            at: Duration::from_secs(5),
            rate: mbit(50.0),
        }],
        ..LinkSpec::new(mbit(100.0), Duration::from_millis(5)).with_queue_packets(30)
    };
    let access = LinkSpec::new(mbit(1000.0), Duration::from_millis(1));
    let g = FlowGroup::new("guarantee:target=10Mbit/s".parse().unwrap()).with_target(mbit(10.0));
    let c = FlowGroup::new("newreno".parse().unwrap()).times(2);
    Scenario::new(
        Duration::from_secs(10),
        TopologySpec::dumbbell(bottleneck, access),
        vec![g, c],
    )
}

/// One 1-s record per entry of `mbps`, starting at the flow's start.
fn records(mbps: &[f64], snapshots: Option<&[Snapshot]>) -> Vec<IntervalStats> {
    mbps.iter()
        .enumerate()
        .map(|(i, &m)| {
            let mut r = interval(i as f64, i as f64 + 1.0, (m * 1e6 / 8.0) as u64);
            r.goodput_bps = m * 1e6;
            r.controller = snapshots.map(|s| s[i].clone());
            r
        })
        .collect()
}

fn flow(id: u32, group: usize, start: f64, mbps: &[f64], snapshots: Option<&[Snapshot]>) -> FlowResult {
    let recs = records(mbps, snapshots);
    FlowResult {
        bytes: recs.iter().map(|r| r.bytes).sum(),
        start_secs: start,
        active_secs: mbps.len() as f64,
        intervals: recs,
        ..empty_flow(id, group)
    }
}

/// A run's result: `dropped` of `offered` packets lost at the bottleneck,
/// packets waiting `sojourn_ms` (p50, p99) there, and 1-s queue samples of
/// `queue_bytes` (which harm does not read: they are there to show it).
fn result(
    flows: Vec<FlowResult>,
    dropped: u64,
    offered: u64,
    sojourn_ms: (f64, f64),
    queue_bytes: &[u64],
) -> ScenarioResult {
    let mut link = LinkStats::default();
    link.offered = Counter::new(offered, 0);
    link.dropped_queue = Counter::new(dropped, 0);
    link.sojourn_p50_ns = (sojourn_ms.0 * 1e6) as u64;
    link.sojourn_p99_ns = (sojourn_ms.1 * 1e6) as u64;
    ScenarioResult {
        name: None,
        flows,
        bottleneck: link.clone(),
        links: vec![link.clone()],
        queue: queue_bytes
            .iter()
            .enumerate()
            .map(|(i, &b)| QueueSample::new(SimTime::from_secs(i as u64 + 1), LinkId(0), Counter::new(b / 1200, b)))
            .collect(),
        delivered: Vec::new(),
        trace_hash: 0,
        link_packets: 0,
        events_processed: 0,
        simulated_secs: 10.0,
        aggregates: Vec::new(),
        window: MeasuredWindow {
            end_secs: 10.0,
            bottleneck: link.clone(),
            links: vec![link],
        },
        hops: vec![LinkId(0)],
        headline: Default::default(),
    }
}

#[test]
fn the_seat_is_the_guarantee_groups_and_the_twin_puts_newreno_there() {
    let s = scenario();
    assert_eq!(seat_groups(&s), [0]);
    let twin = baseline_twin(&s, &[0]);
    assert_eq!(twin.flows[0].cc.name(), "newreno");
    assert_eq!(
        twin.flows[0].target, s.flows[0].target,
        "judged against the same target"
    );
    assert_eq!(twin.flows[1], s.flows[1]);
    assert_eq!(twin.seed, s.seed);
    assert!(seat_groups(&twin).is_empty());
}

#[test]
fn records_spread_over_the_seconds_they_overlap() {
    let mut bins = vec![0.0; 3];
    // 8 Mbit in [0.5, 1.5) and 4 Mbit in [1.5, 2.5): half of each in each second.
    let r = records(&[8.0, 4.0], None);
    bin_goodput(&r, 0.5, &mut bins);
    assert_eq!(bins, [4e6, 6e6, 2e6]);
}

#[test]
fn a_digest_reads_goodput_drops_capacity_delay_and_the_breaker() {
    let s = scenario();
    // The seat: 10 Mbit/s for 4 s, its breaker open in seconds 4-5, then a
    // retry (floor engaged, still declared infeasible), then the target met.
    let open = guarantee_snapshot(0, true);
    let retry = guarantee_snapshot(50_000, true);
    let met = guarantee_snapshot(25_000, false);
    let snaps = [
        met.clone(),
        met.clone(),
        met.clone(),
        met.clone(),
        open.clone(),
        open,
        retry.clone(),
        retry,
        met.clone(),
        met,
    ];
    let seat = flow(1, 0, 0.0, &[10.0; 10], Some(&snaps));
    let a = flow(2, 1, 0.0, &[40.0; 10], None);
    let b = flow(3, 1, 0.0, &[30.0; 10], None);
    // Queue samples of 0 .. 9 x 12 500 bytes at 1 .. 10 s (0 to 18 ms of
    // queue at the sampled instants); the packets themselves waited 0.5 ms
    // (median) and 24 ms (99th percentile).
    let queue: Vec<u64> = (0..10).map(|i| i * 12_500).collect();
    let r = result(vec![seat, a, b], 30, 1000, (0.5, 24.0), &queue);
    let d = digest(&s, &r, &[0]).unwrap();
    assert_eq!(d.seat_flows, 1);
    assert_eq!(d.target_bps, 10e6);
    assert_eq!(d.seat_bps, 10e6);
    assert_eq!(d.competitor_bps, [40e6, 30e6]);
    assert_eq!(d.drop_rate, 0.03);
    // 80 Mbit/s over 5 s at 100 and 5 s at 50: 800 / 750.
    assert!((d.goodput_utilisation - 800.0 / 750.0).abs() < 1e-12);
    // The delay is the packets' sojourn times, not the samples' (8 and 18 ms).
    assert_eq!(d.queue_delay_p50_secs, Some(0.0005));
    assert_eq!(d.queue_delay_p99_secs, Some(0.024));
    assert_eq!(d.seconds.len(), 10);
    assert_eq!(d.seconds[3].capacity_bps, 100e6);
    assert_eq!(d.seconds[5].capacity_bps, 50e6);
    assert_eq!(d.seconds[2].competitors_bps, 70e6);
    let open: Vec<bool> = d.seconds.iter().map(|x| x.breaker_open).collect();
    assert_eq!(
        open,
        [false, false, false, false, true, true, false, false, false, false],
        "open only while the floor is off, not during the retry"
    );
    assert_eq!(d.infeasible_at_secs, Some(5.0));
    // A floor of 50 000 bytes per 20 ms: 20 Mbit/s.
    assert!((d.seconds[6].floor_bps - 20e6).abs() < 1e-6);
    assert_eq!(d.seconds[4].floor_bps, 0.0);
}

#[test]
fn harm_compares_against_newreno_in_the_seat() {
    let s = scenario();
    let q = [12_500u64; 10];
    // Beside NewReno: the seat gets 4, the competitors 40 and 30 Mbit/s.
    let base = result(
        vec![
            flow(1, 0, 0.0, &[4.0; 10], None),
            flow(2, 1, 0.0, &[40.0; 10], None),
            flow(3, 1, 0.0, &[30.0; 10], None),
        ],
        10,
        1000,
        (1.0, 3.0),
        &q,
    );
    // Beside the guarantee: the seat gets 10; one competitor loses 4, the
    // other 2 (in second 3 both drop to half).
    let mut a = [36.0; 10];
    let mut b = [28.0; 10];
    a[3] = 20.0;
    b[3] = 15.0;
    let tested = result(
        vec![
            flow(1, 0, 0.0, &[10.0; 10], None),
            flow(2, 1, 0.0, &a, None),
            flow(3, 1, 0.0, &b, None),
        ],
        50,
        1000,
        (2.5, 9.0),
        &[25_000u64; 10],
    );
    let h = compare(&s, &tested, &base, &[0]).unwrap();
    assert_eq!(h.competitors, 2);
    assert_eq!(h.seat_bps.tested, 10e6);
    assert_eq!(h.seat_bps.baseline, 4e6);
    // Losses: 40 - 34.4 = 5.6 and 30 - 26.7 = 3.3 Mbit/s; mean 4.45.
    assert!(
        (h.loss_per_competitor_bps - 4.45e6).abs() < 1.0,
        "{}",
        h.loss_per_competitor_bps
    );
    assert!((h.worst_competitor_loss_bps - 5.6e6).abs() < 1.0);
    // (10 - 4) / 2 = 3 Mbit/s explained per competitor.
    assert!((h.explained_by_target_bps - 3e6).abs() < 1e-6);
    assert!((h.explained_by_seat_bps - 3e6).abs() < 1e-6);
    assert!((h.loss_over_explained.unwrap() - 4.45 / 3.0).abs() < 1e-6);
    assert!((h.drop_rate.increase() - 0.04).abs() < 1e-12);
    // Per-packet sojourn: 2.5 / 9 ms beside the guarantee, 1 / 3 ms beside NewReno.
    let p50 = h.queue_delay_p50_secs.unwrap();
    assert!(
        (p50.tested - 0.0025).abs() < 1e-12 && (p50.baseline - 0.001).abs() < 1e-12,
        "{p50:?}"
    );
    assert!((h.queue_delay_p99_secs.unwrap().increase() - 0.006).abs() < 1e-12);
    // Second 3: 35 of 70 Mbit/s; seconds 2-3 or 3-4: (35 + 64) / 140.
    assert_eq!(h.worst_windows.len(), 2);
    assert_eq!((h.worst_windows[0].secs, h.worst_windows[0].start_secs), (1, 3.0));
    assert!((h.worst_windows[0].share - 0.5).abs() < 1e-9);
    assert_eq!(h.worst_windows[1].secs, 2);
    assert!((h.worst_windows[1].share - 99.0 / 140.0).abs() < 1e-9);
    assert_eq!(h.file_time_p50_secs, None);
    let t = h.table();
    assert!(t.contains("RFC 9743") && t.contains("worst 2-s window: 0.71"), "{t}");
    // Not twins: a competitor more on one side.
    let mut other = base.clone();
    other.flows.push(flow(4, 1, 0.0, &[1.0; 10], None));
    let e = compare(&s, &tested, &other, &[0]).unwrap_err();
    assert!(e.to_string().contains("not twins"), "{e}");
}

#[test]
fn a_target_below_the_fair_share_explains_nothing() {
    let t = RunDigest {
        seat_bps: 5e6,
        target_bps: 2e6,
        competitor_bps: vec![10e6],
        ..RunDigest::default()
    };
    let b = RunDigest {
        seat_bps: 5e6,
        competitor_bps: vec![10e6],
        ..RunDigest::default()
    };
    let h = harm(&t, &b).unwrap();
    assert_eq!(h.explained_by_target_bps, 0.0);
    assert_eq!(h.loss_over_explained, None);
    assert_eq!(h.loss_per_competitor_bps, 0.0);
    assert!(h.worst_windows.is_empty(), "no records, no windows");
}

#[test]
fn drops_count_the_aqm_and_marks_apart_and_no_packet_means_no_delay() {
    let s = scenario();
    let mut r = result(vec![flow(1, 0, 0.0, &[10.0; 10], None)], 10, 1000, (1.0, 2.0), &[]);
    r.window.bottleneck.dropped_aqm = Counter::new(20, 0);
    r.window.bottleneck.marked = Counter::new(50, 0);
    let d = digest(&s, &r, &[0]).unwrap();
    assert_eq!((d.drop_rate, d.mark_rate), (0.03, 0.05));
    let h = harm(&d, &d).unwrap();
    assert!(h.table().contains("bottleneck CE marks"), "{}", h.table());
    let idle = result(vec![flow(1, 0, 0.0, &[0.0; 10], None)], 0, 0, (0.0, 0.0), &[1200; 10]);
    let d = digest(&s, &idle, &[0]).unwrap();
    assert_eq!((d.queue_delay_p50_secs, d.queue_delay_p99_secs), (None, None));
}

/// A real run: harm's delay is the bottleneck's own per-packet counters.
#[test]
fn a_simulated_runs_delay_is_its_bottlenecks_sojourn_percentiles() {
    let s = Scenario::from_toml_str(
        r#"
        duration = "4s"
        [topology]
        kind = "dumbbell"
        bottleneck = { rate = "20Mbit/s", delay = "5ms", queue_packets = 60 }
        access = { rate = "1Gbit/s", delay = "1ms" }
        [[flows]]
        cc = "guarantee:target=8Mbit/s"
        target = "8Mbit/s"
        [[flows]]
        cc = "newreno"
        count = 3
    "#,
    )
    .unwrap();
    let r = crate::scenario::run(&s, |_| {}).unwrap();
    let d = digest(&s, &r, &[0]).unwrap();
    let w = &r.window.bottleneck;
    assert!(w.sojourn_p99_ns > w.sojourn_p50_ns, "a queue formed: {w:?}");
    assert_eq!(d.queue_delay_p50_secs, Some(w.sojourn_p50_ns as f64 / 1e9));
    assert_eq!(d.queue_delay_p99_secs, Some(w.sojourn_p99_ns as f64 / 1e9));
}
