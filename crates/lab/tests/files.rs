//! File workloads (seed 003): every file accounted for, the TCP model and QUIC
//! fed the same files, transfer and total times.

use std::time::Duration;

use tput_lab::files::{FileStats, pooled, pooled_mean};
use tput_lab::scenario::{
    FilesSpec, FlowGroup, LinkSpec, Scenario, ScenarioResult, TcpSpec, TopologySpec, Transport, run, validate,
};

/// `flows` flows of 40 kB files every 200 ms on average (1.6 Mbit/s each)
/// for `window`, over a bottleneck of `rate` and 10 ms.
fn scenario(transport: Transport, rate: &str, flows: u32, window: Duration, drain: Option<Duration>) -> Scenario {
    let bottleneck = LinkSpec::new(rate.parse().unwrap(), Duration::from_millis(10)).with_queue_packets(50);
    let access = LinkSpec::new("1Gbit/s".parse().unwrap(), Duration::from_millis(1));
    let mut g = FlowGroup::new("newreno".parse().unwrap()).times(flows);
    g.files = Some(FilesSpec {
        mean_gap: Duration::from_millis(200),
        mean_size: 40_000,
        shape: 2.5,
        drain,
    });
    if transport == Transport::Tcp {
        g = g.over_tcp(TcpSpec::default());
    }
    let mut s = Scenario::new(window, TopologySpec::dumbbell(bottleneck, access), vec![g]);
    s.seed = 7;
    s
}

fn files(r: &ScenarioResult) -> FileStats {
    pooled(
        r.flows
            .iter()
            .map(|f| f.files.as_ref().expect("a file workload has file stats")),
    )
}

fn sorted(v: &[u64]) -> Vec<u64> {
    let mut v = v.to_vec();
    v.sort_unstable();
    v
}

#[test]
fn tcp_and_quic_see_the_same_files_and_all_complete() {
    let window = Duration::from_secs(3);
    let q = run(&scenario(Transport::Quic, "50Mbit/s", 2, window, None), |_| {}).unwrap();
    let t = run(&scenario(Transport::Tcp, "50Mbit/s", 2, window, None), |_| {}).unwrap();
    let (fq, ft) = (files(&q), files(&t));
    assert!(fq.started >= 10, "{} files", fq.started);
    assert_eq!(fq.started, ft.started);
    for f in [&fq, &ft] {
        assert_eq!(f.completed() as u64, f.started, "{f:?}");
        assert_eq!(f.lost(), 0);
        assert_eq!(f.transfer_secs.len(), f.total_secs.len());
        assert_eq!(f.transfer_secs.len(), f.sizes.len());
    }
    // The same sizes (each flow's arrivals come from the seed and the flow alone).
    assert_eq!(sorted(&fq.sizes), sorted(&ft.sizes));
    for (q, t) in q.flows.iter().zip(&t.flows) {
        let (q, t) = (q.files.as_ref().unwrap(), t.files.as_ref().unwrap());
        assert_eq!(q.started, t.started);
        assert_eq!(sorted(&q.sizes), sorted(&t.sizes));
    }
    // The TCP model's flow result counts the delivered bytes.
    assert_eq!(
        t.flows.iter().map(|f| f.bytes).sum::<u64>(),
        ft.sizes.iter().sum::<u64>()
    );
    // A transfer takes at least the file's serialisation at 50 Mbit/s, and
    // the total time (creation to the sender's confirmation of the last byte)
    // adds a round trip to the transfer: QUIC's handshake one more (and the
    // report's way back), the TCP model (no handshake) the first segment's
    // way there and the last ACK's way back (12 ms each).
    for (f, least_extra, most_extra) in [(&fq, 0.036, 1.0), (&ft, 0.023, 0.035)] {
        for ((&tr, &tot), &b) in f.transfer_secs.iter().zip(&f.total_secs).zip(&f.sizes) {
            assert!(tr >= b as f64 * 8.0 / 50e6, "{tr} s for {b} bytes");
            let extra = tot - tr;
            assert!(
                (least_extra..most_extra).contains(&extra),
                "total {tot} s vs transfer {tr} s"
            );
        }
    }
}

#[test]
fn files_running_at_the_end_are_counted_not_dropped() {
    // 3 flows of 1.6 Mbit/s through 2 Mbit/s: a backlog builds up.
    let window = Duration::from_secs(4);
    for transport in [Transport::Tcp, Transport::Quic] {
        let short = run(
            &scenario(transport, "2Mbit/s", 3, window, Some(Duration::from_millis(1))),
            |_| {},
        )
        .unwrap();
        let f = files(&short);
        assert!(f.unfinished > 0, "{transport:?}: {f:?}");
        assert_eq!(f.completed() as u64 + f.lost(), f.started, "{transport:?}: {f:?}");
        // Given time, the same files finish.
        let long = run(
            &scenario(transport, "2Mbit/s", 3, window, Some(Duration::from_secs(120))),
            |_| {},
        )
        .unwrap();
        let g = files(&long);
        assert_eq!(g.started, f.started, "{transport:?}");
        assert_eq!(g.unfinished, 0, "{transport:?}: {g:?}");
        assert_eq!(g.completed() as u64 + g.refused + g.failed, g.started);
        assert!(g.completed() > f.completed());
        // The slow files that were cut off are the long ones: dropping them
        // biased D_e downwards.
        assert!(g.mean_total_secs().unwrap() > f.mean_total_secs().unwrap());
        assert!(g.mean_transfer_secs().unwrap() > f.mean_transfer_secs().unwrap());
    }
}

#[test]
fn de_is_pooled_over_files_not_a_mean_of_flow_means() {
    let a = FileStats {
        started: 3,
        transfer_secs: vec![1.0, 1.0, 1.0],
        total_secs: vec![1.5, 1.5, 1.5],
        sizes: vec![1, 1, 1],
        ..FileStats::default()
    };
    let b = FileStats {
        started: 2,
        transfer_secs: vec![4.0],
        total_secs: vec![5.0],
        sizes: vec![1],
        unfinished: 1,
        ..FileStats::default()
    };
    // D_e from total times: (1.5 + 1.5 + 1.5 + 5) / 4, not (1.5 + 5) / 2.
    assert_eq!(pooled_mean([&a, &b]), Some((4.5 + 5.0) / 4.0));
    let all = pooled([&a, &b]);
    assert_eq!(all.started, 5);
    assert_eq!(all.completed(), 4);
    assert_eq!(all.lost(), 1);
    assert_eq!(all.mean_transfer_secs(), Some(1.75));
    assert_eq!(pooled_mean([&FileStats::default()]), None);
}

#[test]
fn file_runs_are_deterministic_per_seed() {
    for transport in [Transport::Tcp, Transport::Quic] {
        let s = scenario(transport, "20Mbit/s", 2, Duration::from_secs(2), None);
        let (a, b) = (run(&s, |_| {}).unwrap(), run(&s, |_| {}).unwrap());
        assert_eq!(a.trace_hash, b.trace_hash);
        assert_eq!(files(&a), files(&b));
    }
}

#[test]
fn bad_file_settings_are_one_line_errors() {
    let mut s = scenario(Transport::Tcp, "20Mbit/s", 1, Duration::from_secs(2), None);
    assert!(validate(&s).is_ok(), "files run over the TCP model");
    s.flows[0].files.as_mut().unwrap().drain = Some(Duration::from_secs(7200));
    let e = validate(&s).unwrap_err().to_string();
    assert!(e.contains("files.drain") && !e.contains('\n'), "{e}");
    let text = r#"
        duration = "2s"
        [topology]
        kind = "dumbbell"
        bottleneck = { rate = "10Mbit/s", delay = "10ms" }
        access = { rate = "1Gbit/s", delay = "1ms" }
        [[flows]]
        cc = "cubic"
        transport = "tcp"
        files = { mean_gap = "1s", mean_size = "1Mbit", shape = 2.5, drain = "20s" }
    "#;
    let s = Scenario::from_toml_str(text).unwrap();
    assert_eq!(s.flows[0].files.as_ref().unwrap().drain, Some(Duration::from_secs(20)));
    let bad = text.replace("drain = \"20s\"", "drain = \"soon\"");
    assert!(Scenario::from_toml_str(&bad).is_err());
}

#[test]
fn the_summary_reports_pooled_de_and_lost_files() {
    let s = scenario(
        Transport::Tcp,
        "2Mbit/s",
        3,
        Duration::from_secs(4),
        Some(Duration::from_millis(1)),
    );
    let r = run(&s, |_| {}).unwrap();
    let f = files(&r);
    let summary = tput_lab::report::Summary::new(&s, &r);
    let table = summary.table();
    let line = format!(
        "files: {} completed, {} refused/failed/unfinished; mean file time (D_e: creation at the sender to its \
         last byte confirmed) {:.3} s, transfer time (first arrival to last byte) {:.3} s",
        f.completed(),
        f.lost(),
        f.mean_total_secs().unwrap(),
        f.mean_transfer_secs().unwrap()
    );
    assert!(table.contains(&line), "{table}\nwanted: {line}");
    assert_eq!(summary.flows.iter().filter_map(|x| x.files_lost).sum::<u64>(), f.lost());
}

#[test]
fn files_beyond_the_servers_connection_limit_are_counted_as_refused() {
    // 100 files of ~40 kB arrive within about a second into 1 Mbit/s: far
    // more than the QUIC server's 64 connections at once.
    let bottleneck = LinkSpec::new("1Mbit/s".parse().unwrap(), Duration::from_millis(10)).with_queue_packets(50);
    let access = LinkSpec::new("1Gbit/s".parse().unwrap(), Duration::from_millis(1));
    let mut g = FlowGroup::new("newreno".parse().unwrap());
    g.files = Some(FilesSpec {
        mean_gap: Duration::from_millis(10),
        mean_size: 40_000,
        shape: 2.5,
        drain: Some(Duration::from_secs(2)),
    });
    let mut s = Scenario::new(
        Duration::from_secs(1),
        TopologySpec::dumbbell(bottleneck, access),
        vec![g],
    );
    s.seed = 3;
    let r = run(&s, |_| {}).unwrap();
    let f = files(&r);
    assert!(f.started > 64, "{f:?}");
    assert!(f.refused > 0, "{f:?} {:?}", r.flows[0].errors.first());
    assert_eq!(f.completed() as u64 + f.lost(), f.started, "{f:?}");
}
