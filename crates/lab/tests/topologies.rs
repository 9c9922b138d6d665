//! Per-group access links, the parking lot, trace-driven links, and which
//! link a run's headline figures come from.

use std::path::Path;
use std::time::Duration;

use tput_lab::report::Summary;
use tput_lab::scenario::{FlowGroup, HeadlineWhy, LinkSpec, Scenario, TopologySpec, run, validate};

fn link(rate: &str, delay_us: u64, queue: u32) -> LinkSpec {
    LinkSpec::new(rate.parse().unwrap(), Duration::from_micros(delay_us)).with_queue_packets(queue)
}

fn group(cc: &str, count: u32) -> FlowGroup {
    FlowGroup::new(cc.parse().unwrap()).times(count)
}

fn shipped(stem: &str) -> Scenario {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(format!("../../scenarios/{stem}.toml"));
    Scenario::from_toml_file(&path).unwrap()
}

/// The shipped seed-001 chain cuts hop 1 (the switch's output); hop 0 never
/// drops. The summary used to report hop 0: `drops: queue 0 cut-off 0` and
/// a flat queue plot, while hop 1 lost hundreds of packets to the cut.
#[test]
fn a_chain_reports_its_congested_hop() {
    let mut s = shipped("seed001-cutoff");
    s.duration = Duration::from_secs(1);
    let r = run(&s, |_| {}).unwrap();
    assert_eq!(r.hops.len(), 2);
    assert_eq!(r.headline.hop, 1, "{:?}", r.headline);
    assert_eq!(r.headline.why, HeadlineWhy::MostDrops);
    assert_eq!(r.window.links[r.hops[0].index()].dropped().packets, 0);
    let cut = r.window.links[r.hops[1].index()].dropped_cutoff.packets;
    assert!(cut > 0);
    let summary = Summary::new(&s, &r);
    assert_eq!(summary.bottleneck.dropped_cutoff, cut);
    assert!(
        summary.bottleneck.link.starts_with("hop 1 of 2"),
        "{}",
        summary.bottleneck.link
    );
    assert!(!r.queue.is_empty() && r.queue.iter().all(|q| q.link == r.hops[1]));
    assert!(
        summary.table().contains(&format!("cut-off {cut} ")),
        "{}",
        summary.table()
    );

    // Named by the scenario, hop 0 it is, whatever the drops.
    let TopologySpec::Chain { headline_hop, .. } = &mut s.topology else {
        panic!("a chain")
    };
    *headline_hop = Some(0);
    let named = run(&s, |_| {}).unwrap();
    assert_eq!((named.headline.hop, named.headline.why), (0, HeadlineWhy::Named));
    assert_eq!(named.trace_hash, r.trace_hash, "the watched link changes no event");
    assert_eq!(named.window.bottleneck.dropped().packets, 0);
}

/// A group's `[flows.access]` gives its flows their own round-trip time:
/// 2 * (2 ms + 2 * 1.5 ms) = 10 ms and 2 * (2 ms + 2 * 24 ms) = 100 ms of
/// propagation (measured: 11.05 and 102.0 ms, with serialization and some
/// queueing behind the other flow).
#[test]
fn groups_with_their_own_access_links_see_their_own_rtt() {
    let fast = group("newreno", 1).with_access(link("1Gbit/s", 1500, 1000));
    let slow = group("newreno", 1).with_access(link("1Gbit/s", 24_000, 1000));
    let s = Scenario::new(
        Duration::from_secs(2),
        TopologySpec::dumbbell(link("10Mbit/s", 2000, 100), link("1Gbit/s", 100, 1000)),
        vec![fast, slow],
    );
    let r = run(&s, |_| {}).unwrap();
    let min_rtt = |f: usize| {
        r.flows[f]
            .intervals
            .iter()
            .map(|i| i.min_rtt_ms)
            .filter(|&m| m > 0.0)
            .fold(f64::INFINITY, f64::min)
    };
    let (a, b) = (min_rtt(0), min_rtt(1));
    // Plus serialization: about 1 ms for a packet at 10 Mbit/s.
    assert!((10.0..12.0).contains(&a), "10 ms group: min RTT {a} ms");
    assert!((100.0..105.0).contains(&b), "100 ms group: min RTT {b} ms");
    assert!(r.flows.iter().all(|f| f.errors.is_empty() && f.bytes > 0));
}

/// A parking lot of three congested hops: one long flow crosses all of
/// them, one cross flow each hop; every hop reports its own counters and
/// the groups that cross it.
#[test]
fn a_parking_lot_shares_each_hop_with_its_cross_traffic() {
    let hop = || link("10Mbit/s", 2000, 30);
    let mut flows = vec![group("newreno", 1)];
    flows.extend((0..3).map(|h| group("newreno", 1).crossing(h, h)));
    let s = Scenario::new(
        Duration::from_secs(4),
        TopologySpec::parking_lot(vec![hop(), hop(), hop()], link("1Gbit/s", 500, 1000)),
        flows,
    );
    let r = run(&s, |_| {}).unwrap();
    assert!(
        r.flows.iter().all(|f| f.errors.is_empty() && f.bytes > 0),
        "{:?}",
        r.flows
    );
    let summary = Summary::new(&s, &r);
    assert_eq!(summary.hops.len(), 3);
    for (h, hs) in summary.hops.iter().enumerate() {
        let groups: Vec<usize> = hs.groups.iter().map(|g| g.group).collect();
        assert_eq!(groups, [0, h + 1], "hop {h}");
        assert!(hs.utilisation > 0.8, "hop {h}: {hs:?}");
        let shares: f64 = hs.groups.iter().map(|g| g.share).sum();
        assert!((shares - 1.0).abs() < 1e-9);
        // The hop carries the bytes of its two groups, and no other.
        let link = &r.window.links[r.hops[h].index()];
        let crossing: u64 = [0, h + 1].iter().map(|&g| r.flows[g].bytes).sum();
        assert!(link.delivered.bytes > crossing, "hop {h}");
        assert!(
            link.delivered.bytes < crossing + r.flows[(h + 1) % 3 + 1].bytes,
            "hop {h}"
        );
    }
    assert!(summary.table().contains("hop 2 (l"), "{}", summary.table());
}

#[test]
fn bad_topology_keys_are_one_line_errors_naming_the_key() {
    let err = |s: &Scenario| validate(s).unwrap_err().to_string();
    let hops = || vec![link("10Mbit/s", 1000, 10), link("10Mbit/s", 1000, 10)];
    let pl = |flows| {
        Scenario::new(
            Duration::from_secs(1),
            TopologySpec::parking_lot(hops(), link("1Gbit/s", 1, 10)),
            flows,
        )
    };
    assert_eq!(
        err(&pl(vec![group("newreno", 1).crossing(1, 2)])),
        "flows[0].last_hop: 2 is past the last hop (1)"
    );
    assert_eq!(
        err(&pl(vec![group("newreno", 1).crossing(1, 0)])),
        "flows[0].first_hop: 1 comes after last_hop 0"
    );
    let mut bad_access = link("1Gbit/s", 1, 10);
    bad_access.loss = Some(2.0);
    assert!(err(&pl(vec![group("newreno", 1).with_access(bad_access)])).contains("flows[0].access: "));
    let chain = Scenario::new(
        Duration::from_secs(1),
        TopologySpec::Chain {
            hops: hops(),
            headline_hop: Some(2),
        },
        vec![group("newreno", 1)],
    );
    assert_eq!(err(&chain), "topology.headline_hop: 2 is past the last hop (1)");
    let chain = Scenario::new(
        Duration::from_secs(1),
        TopologySpec::chain(hops()),
        vec![group("newreno", 1).with_access(link("1Gbit/s", 1, 10))],
    );
    assert!(err(&chain).contains("flows[0].access: a chain's flows share its end hosts"));
    let dumbbell = Scenario::new(
        Duration::from_secs(1),
        TopologySpec::dumbbell(link("10Mbit/s", 1000, 10), link("1Gbit/s", 1, 10)),
        vec![group("newreno", 1).crossing(0, 0)],
    );
    assert_eq!(
        err(&dumbbell),
        "flows[0].first_hop: only flows of a parking lot choose their hops"
    );
    // In a file, an unknown key in `[flows.access]` names its line.
    let text = "duration = \"1s\"\n[topology]\nkind = \"parking_lot\"\n[[topology.hops]]\nrate = \"1Mbit/s\"\ndelay = \"1ms\"\n[topology.access]\nrate = \"1Gbit/s\"\ndelay = \"1ms\"\n[[flows]]\ncc = \"newreno\"\n[flows.access]\nrate = \"1Gbit/s\"\ndelai = \"1ms\"\n";
    let e = Scenario::from_toml_str(text).unwrap_err().to_string();
    assert!(e.starts_with("line 1") && e.contains("unknown field `delai`"), "{e}");
    assert!(!e.contains('\n'));
}

/// A trace-driven bottleneck from a scenario file: the path is relative to
/// the file, and the link delivers at most the trace's opportunities (the
/// shipped 12 Mbit/s trace: one packet a millisecond, 3000 in 3 s), not at
/// its 100 Mbit/s `rate`. (The exact count under a backlog is tested in
/// `tput-netsim`.)
#[test]
fn a_trace_driven_bottleneck_delivers_at_its_opportunities() {
    let dir = std::env::temp_dir().join(format!("tput-trace-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("traces")).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/traces/constant-12mbit.trace");
    std::fs::copy(&shipped, dir.join("traces/c.trace")).unwrap();
    let text = "duration = \"3s\"\n[topology]\nkind = \"dumbbell\"\n\
        [topology.bottleneck]\nrate = \"100Mbit/s\"\ndelay = \"5ms\"\nqueue_packets = 200\ntrace = \"traces/c.trace\"\n\
        [topology.access]\nrate = \"1Gbit/s\"\ndelay = \"1ms\"\n\
        [[flows]]\ncc = \"cubic\"\n";
    let file = dir.join("s.toml");
    std::fs::write(&file, text).unwrap();
    let s = Scenario::from_toml_file(&file).unwrap();
    let r = run(&s, |_| {}).unwrap();
    assert!(r.flows[0].errors.is_empty(), "{:?}", r.flows[0].errors);
    let b = &r.window.bottleneck;
    assert!(b.delivered.packets <= 3000, "{b:?}");
    assert!(b.delivered.packets > 2000, "{b:?}");
    let goodput = r.flows[0].goodput_bps();
    assert!(goodput < 12e6 && goodput > 8e6, "{goodput}");

    // A bad trace names the key, the file and the line.
    std::fs::write(dir.join("traces/c.trace"), "5\n3\n").unwrap();
    let s = Scenario::from_toml_file(&file).unwrap();
    let e = validate(&s).unwrap_err().to_string();
    assert!(
        e.starts_with("topology.bottleneck.trace: ")
            && e.ends_with("c.trace: delivery trace line 2: 3 ms comes before the previous line's 5 ms"),
        "{e}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
