//! HyStart++ (RFC 9406) leaves the initial slow start before the first loss
//! on a path where plain slow start overshoots: 100 Mbit/s, 100 ms RTT, a
//! DropTail queue of two bandwidth-delay products, one flow, in virtual
//! time, over QUIC and over the TCP model.

use tput_cc::Phase;
use tput_lab::scenario::{FlowResult, Scenario, run};

/// One 1.6-s upload with `cc` over `transport` on the long fat path, and the
/// tested flow's result.
fn upload(cc: &str, transport: &str) -> FlowResult {
    // 2 x BDP = 2 x 100 Mbit/s x 100 ms = 2.5 MB: 2083 QUIC datagrams of
    // 1200 bytes, 2500 TCP segments of 1000 bytes.
    let queue = if transport == "tcp" { 2500 } else { 2083 };
    let tcp = if transport == "tcp" {
        r#", "tcp": { "recovery": "sack" }"#
    } else {
        ""
    };
    // QUIC's flow control must not cap the window below the path's 3 BDP
    // (quinn-proto's default stream window is about one BDP here), nor
    // let plain slow start overshoot so far that quinn-proto's receiver meets
    // more than its 1024 gaps in one stream and closes the connection.
    let rwnd = if transport == "quic" {
        r#", "receive_window": "4MiB""#
    } else {
        ""
    };
    let scenario: Scenario = serde_json::from_str(&format!(
        r#"{{
            "duration": "1.6s",
            "interval": "100ms",
            "topology": {{ "kind": "dumbbell",
                "bottleneck": {{ "rate": "100Mbit/s", "delay": "48ms", "queue_packets": {queue} }},
                "access": {{ "rate": "1Gbit/s", "delay": "1ms", "queue_packets": 10000 }} }},
            "flows": [ {{ "cc": "{cc}", "transport": "{transport}"{rwnd}{tcp} }} ]
        }}"#
    ))
    .unwrap();
    let result = run(&scenario, |_| {}).unwrap();
    let flow = result.flows.into_iter().next().unwrap();
    assert!(flow.errors.is_empty(), "{cc} over {transport}: {:?}", flow.errors);
    flow
}

/// The first interval whose record shows `pred` true.
fn first(flow: &FlowResult, pred: impl Fn(&tput_transport::IntervalStats) -> bool) -> Option<usize> {
    flow.intervals.iter().position(pred)
}

/// The first interval in which a packet was lost, and the first that ends
/// outside standard slow start.
fn loss_and_exit(flow: &FlowResult) -> (Option<usize>, Option<usize>) {
    let loss = first(flow, |i| i.lost_packets > 0);
    let exit = first(flow, |i| {
        i.controller
            .as_ref()
            .is_some_and(|s| s.phase != Phase::SlowStart || s.ssthresh_bytes.is_some())
    });
    (loss, exit)
}

#[test]
fn hystart_leaves_slow_start_before_the_first_loss_over_quic_and_tcp() {
    // The TCP model runs unoptimised in tests: one controller over it.
    for (cc, transport) in [("newreno", "quic"), ("cubic", "quic"), ("cubic", "tcp")] {
        let plain = upload(cc, transport);
        let (plain_loss, plain_exit) = loss_and_exit(&plain);
        // The path is one where plain slow start overshoots into loss,
        // and leaves slow start only then.
        let plain_loss = plain_loss.unwrap_or_else(|| panic!("{cc} over {transport}: plain slow start lost nothing"));
        assert!(
            plain_exit >= Some(plain_loss),
            "{cc} over {transport}: {plain_exit:?} {plain_loss}"
        );

        let with = upload(&format!("{cc}:hystart=true"), transport);
        let (loss, exit) = loss_and_exit(&with);
        let exit = exit.unwrap_or_else(|| panic!("{cc}:hystart=true over {transport}: never left slow start"));
        assert!(
            loss.is_none_or(|l| exit < l),
            "{cc}:hystart=true over {transport}: left slow start in interval {exit}, first loss in {loss:?}"
        );
        let lost = |f: &FlowResult| f.intervals.iter().map(|i| i.lost_packets).sum::<u64>();
        eprintln!(
            "{cc} over {transport}: plain slow start lost {} packets (first in interval {plain_loss}); \
                 HyStart++ left it in interval {exit} and lost {} (first in {loss:?})",
            lost(&plain),
            lost(&with)
        );
    }
}
