//! The application-buffer model (scenario keys `buffers`, `buffer_size`,
//! `receive_window`) over the simulator: every byte verified, throughput
//! bounded by the model's arithmetic (Miyake, Kato, Suzuki 1995: one buffer
//! of B bytes per B / R + RTT), and the TCP model's `window_scaling` key.

use std::time::Duration;

use tput_lab::scenario::{FlowGroup, LinkSpec, Scenario, TcpSpec, TopologySpec, run, validate};

const RATE_BPS: f64 = 20e6;
const BUFFER: u64 = 128 << 10;

/// One QUIC flow over a 20 Mbit/s bottleneck, RTT about 100 ms, no loss.
fn scenario(flow: FlowGroup, secs: u64) -> Scenario {
    let bottleneck = LinkSpec::new("20Mbit/s".parse().unwrap(), Duration::from_millis(48)).with_queue_packets(1000);
    let access = LinkSpec::new("1Gbit/s".parse().unwrap(), Duration::from_millis(1));
    let mut s = Scenario::new(
        Duration::from_secs(secs),
        TopologySpec::dumbbell(bottleneck, access),
        vec![flow.with_start_jitter(Duration::ZERO)],
    );
    s.seed = 3;
    s
}

fn bulk(buffers: Option<u32>, bytes: u64) -> tput_lab::scenario::FlowResult {
    let mut g = FlowGroup::new("cubic".parse().unwrap());
    g.bytes = Some(bytes);
    if let Some(n) = buffers {
        g = g.with_buffers(n, BUFFER);
    }
    let r = run(&scenario(g, 20), |_| {}).expect("runs");
    let f = r.flows[0].clone();
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    assert_eq!(f.bytes, bytes, "every byte delivered and verified");
    f
}

#[test]
fn one_buffer_in_flight_waits_a_round_trip_per_buffer_and_four_do_not() {
    let bytes = 16 * BUFFER;
    let one = bulk(Some(1), bytes);
    let four = bulk(Some(4), bytes);
    let free = bulk(None, bytes);
    let rtt = 0.1;
    // A buffer is written at most at the link rate, then its last byte
    // needs a round trip to be acknowledged before the next one starts.
    let bound = BUFFER as f64 * 8.0 / (BUFFER as f64 * 8.0 / RATE_BPS + rtt);
    assert!(
        one.goodput_bps() < bound * 1.02,
        "one buffer: {:.2} Mbit/s above the model's {:.2}",
        one.goodput_bps() / 1e6,
        bound / 1e6
    );
    assert!(
        one.goodput_bps() > bound * 0.6,
        "one buffer: {:.2} Mbit/s, model {:.2}",
        one.goodput_bps() / 1e6,
        bound / 1e6
    );
    assert!(
        four.goodput_bps() > 1.3 * one.goodput_bps(),
        "four buffers {:.2} vs one {:.2} Mbit/s",
        four.goodput_bps() / 1e6,
        one.goodput_bps() / 1e6
    );
    // Four buffers of 128 KiB cover the 250 KB bandwidth-delay product:
    // about as fast as one unbounded stream.
    assert!(
        four.goodput_bps() > 0.85 * free.goodput_bps(),
        "four buffers {:.2} vs one stream {:.2} Mbit/s",
        four.goodput_bps() / 1e6,
        free.goodput_bps() / 1e6
    );
}

#[test]
fn a_timed_transfer_with_buffers_ends_cleanly_and_is_deterministic() {
    let g = FlowGroup::new("newreno".parse().unwrap()).with_buffers(2, BUFFER);
    let s = scenario(g, 3);
    let a = run(&s, |_| {}).expect("runs");
    assert!(a.flows[0].errors.is_empty(), "{:?}", a.flows[0].errors);
    assert!(a.flows[0].bytes > 4 * BUFFER, "{} bytes", a.flows[0].bytes);
    let b = run(&s, |_| {}).expect("runs");
    assert_eq!(a.trace_hash, b.trace_hash);
    assert_eq!(a.flows[0].bytes, b.flows[0].bytes);
}

#[test]
fn a_small_quic_receive_window_limits_the_flow() {
    let mut g = FlowGroup::new("cubic".parse().unwrap());
    g.receive_window = Some(53_000);
    let r = run(&scenario(g, 4), |_| {}).expect("runs");
    let f = &r.flows[0];
    assert!(f.errors.is_empty(), "{:?}", f.errors);
    // At most one window per round trip (about 100 ms): 4.24 Mbit/s.
    let bound = 53_000.0 * 8.0 / 0.1;
    assert!(f.goodput_bps() < bound * 1.05, "{:.2} Mbit/s", f.goodput_bps() / 1e6);
    assert!(f.goodput_bps() > bound * 0.5, "{:.2} Mbit/s", f.goodput_bps() / 1e6);
}

#[test]
fn bad_buffer_and_window_keys_are_named() {
    let base = || FlowGroup::new("cubic".parse().unwrap());
    let mut size_only = base();
    size_only.buffer_size = Some(1000);
    let mut download = base().with_buffers(2, 1000);
    download.direction = Some(tput_transport::Direction::Download);
    let tcp = |t: TcpSpec| FlowGroup::new("newreno".parse().unwrap()).over_tcp(t);
    let cases = [
        (size_only, "flows[0].buffer_size: needs buffers"),
        (base().with_buffers(0, 1000), "0 application buffers"),
        (base().with_buffers(65, 1000), "65 application buffers"),
        (base().with_buffers(2, 0), "buffers of 0 bytes"),
        (download, "flows[0].buffers: uploads only"),
        (tcp(TcpSpec::default()).with_buffers(2, 1000), "QUIC only"),
    ];
    for (g, want) in cases {
        let e = validate(&scenario(g, 2)).expect_err(want).to_string();
        assert!(e.contains(want), "{e} lacks {want}");
    }
    // Without window scaling the TCP header's 16-bit field caps the window.
    let unscaled = |w: Option<u64>| TcpSpec {
        window_scaling: Some(false),
        receive_window: w,
        ..TcpSpec::default()
    };
    let e = run(&scenario(tcp(unscaled(Some(100_000))), 2), |_| {})
        .expect_err("too large")
        .to_string();
    assert!(e.contains("needs window scaling"), "{e}");
    let ok = run(&scenario(tcp(unscaled(Some(53_000))), 2), |_| {}).expect("53 KB fits");
    assert!(ok.flows[0].bytes > 0);
    let text = "duration = \"2s\"\n[topology]\nkind = \"dumbbell\"\n[topology.bottleneck]\nrate = \"10Mbit/s\"\ndelay = \"5ms\"\n[topology.access]\nrate = \"1Gbit/s\"\ndelay = \"1ms\"\n[[flows]]\ncc = \"cubic\"\nbuffers = 4\nbuffer_size = \"512KiB\"\nreceive_window = \"1MiB\"\n";
    let s = Scenario::from_toml_str(text).expect("parses");
    assert_eq!(
        s.flows[0].app_buffers().map(|b| (b.count, b.size)),
        Some((4, 512 << 10))
    );
    assert_eq!(s.flows[0].receive_window, Some(1 << 20));
}
