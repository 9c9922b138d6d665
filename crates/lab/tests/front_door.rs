//! Figures mean what their labels say: an interval's goodput is over the
//! interval it names, so no interval of a transfer through a link beats
//! the link's rate, the last one (which takes what was still queued when
//! sending stopped) included.

use std::time::Duration;

use tput_lab::scenario::{FlowGroup, LinkSpec, Scenario, TopologySpec, run};

#[test]
fn no_interval_beats_the_link_rate_and_the_last_ends_when_its_bytes_arrived() {
    let rate_bps = 20e6;
    // A queue that holds much data when sending stops.
    let link = LinkSpec::new("20Mbit/s".parse().unwrap(), Duration::from_millis(10)).with_queue_packets(5000);
    let sc = Scenario {
        seed: 1,
        ..Scenario::new(
            Duration::from_secs(2),
            TopologySpec::chain(vec![link]),
            vec![FlowGroup::new("cubic".parse().unwrap())],
        )
    };
    let result = run(&sc, |_| {}).unwrap();
    let f = &result.flows[0];
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    assert!(f.intervals.len() >= 2, "{:?}", f.intervals);
    for i in &f.intervals {
        assert!(
            i.goodput_bps <= rate_bps,
            "{:.2}-{:.2} s: {:.2} Mbit/s on a 20 Mbit/s link",
            i.start_secs,
            i.end_secs,
            i.goodput_bps / 1e6
        );
    }
    let last = f.intervals.last().unwrap();
    assert!(last.end_secs > 2.0, "the last interval ends at {:.3} s", last.end_secs);
    let total: u64 = f.intervals.iter().map(|i| i.bytes).sum();
    assert_eq!(total, f.bytes, "the intervals add up to the transfer");
}

/// On a lossy link an interval's goodput is still what arrived in it: a
/// retransmission that fills a hole counts its own bytes, not the bytes
/// that arrived behind the hole before it. (Counted in order, as they were
/// read, those lifted quarter-second intervals of this run to 22-27 Mbit/s
/// on the 20 Mbit/s link.) The transfer still finishes with every byte.
#[test]
fn no_interval_beats_the_rate_of_a_lossy_link() {
    // A fixed-rate sender at twice the link's rate into a 30-packet queue,
    // with 1 % random loss on top: holes all the time, and a busy link.
    let sc = Scenario::from_toml_str(
        "duration = \"4s\"\nseed = 1\ninterval = \"250ms\"\n[topology]\nkind = \"chain\"\n[[topology.hops]]\n\
         rate = \"20Mbit/s\"\ndelay = \"50ms\"\nqueue_packets = 30\nloss = 0.01\n\
         [[flows]]\ncc = \"fixed:rate=40Mbit/s\"\n",
    )
    .unwrap();
    let result = run(&sc, |_| {}).unwrap();
    let f = &result.flows[0];
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    assert!(f.intervals.len() >= 16, "{:?}", f.intervals);
    let lost: u64 = f.intervals.iter().map(|i| i.lost_packets).sum();
    assert!(lost > 1000, "a lossy run: {lost} packets lost");
    // Virtual time, no tolerance: in 250 ms the link carries at most 510
    // datagrams of 1228 wire bytes, and their payload is less than that.
    for i in &f.intervals {
        assert!(
            i.goodput_bps <= 20e6,
            "{:.2}-{:.2} s: {:.2} Mbit/s on a 20 Mbit/s link",
            i.start_secs,
            i.end_secs,
            i.goodput_bps / 1e6
        );
    }
    let busiest = f.intervals.iter().map(|i| i.goodput_bps).fold(0.0, f64::max);
    assert!(busiest > 15e6, "the link was busy: {busiest} bit/s at most");
    let total: u64 = f.intervals.iter().map(|i| i.bytes).sum();
    assert_eq!(total, f.bytes, "the intervals add up to the transfer");
    assert!(f.goodput_bps() <= 20e6, "{} bit/s", f.goodput_bps());
}

#[test]
fn a_rate_change_after_the_end_is_an_error_naming_it() {
    // iperf3's `10M` is a rate in a scenario too.
    let scenario = |at: &str| {
        Scenario::from_toml_str(&format!(
            "duration = \"5s\"\n[topology]\nkind = \"chain\"\n[[topology.hops]]\nrate = \"10M\"\ndelay = \"5ms\"\n\
             rate_schedule = [{{ at = \"1s\", rate = \"5M\" }}, {{ at = \"{at}\", rate = \"10Mbit/s\" }}]\n\
             [[flows]]\ncc = \"cubic\"\n"
        ))
        .and_then(|s| tput_lab::scenario::validate(&s).map(|()| s))
    };
    let ok = scenario("4s").unwrap();
    let TopologySpec::Chain { hops, .. } = &ok.topology else {
        panic!("a chain")
    };
    assert_eq!(hops[0].rate.bits_per_sec(), 10_000_000);
    for late in ["5s", "6s"] {
        let e = scenario(late).unwrap_err().to_string();
        assert!(
            e.contains("topology.hops[0].rate_schedule[1]") && e.contains("scenario's end"),
            "{e}"
        );
    }
}

#[test]
fn a_file_workload_is_active_for_its_own_span_not_the_sum_of_its_files() {
    // Files of 5 Mbit every 100 ms on average over a 10 Mbit/s link: they
    // overlap, and their summed times exceed the run.
    let sc = Scenario::from_toml_str(
        "duration = \"2s\"\nseed = 3\n[topology]\nkind = \"chain\"\n[[topology.hops]]\nrate = \"10Mbit/s\"\ndelay = \"10ms\"\n\
         [[flows]]\ncc = \"newreno\"\nfiles = { mean_gap = \"100ms\", mean_size = \"2Mbit\", shape = 2.5, drain = \"5s\" }\n",
    )
    .unwrap();
    let result = run(&sc, |_| {}).unwrap();
    let f = &result.flows[0];
    let files = f.files.as_ref().expect("a file workload");
    let summed: f64 = files.transfer_secs.iter().sum();
    assert!(summed > 2.0, "the files overlap: {summed} s summed");
    assert!(
        (f.active_secs - (2.0 - f.start_secs)).abs() < 1e-9,
        "{} s",
        f.active_secs
    );
    let want = f.bytes as f64 * 8.0 / f.active_secs;
    assert!((f.goodput_bps() - want).abs() < 1e-6, "{} {want}", f.goodput_bps());
}
