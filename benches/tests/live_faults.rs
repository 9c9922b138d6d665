//! The live fault table at toy size: every fault ends as it should, and
//! the relay's counters show the fault happened.

use std::time::Duration;

use tput_benches::live_faults::{Options, faults, run, table};
use tput_transport::Direction;

#[test]
fn every_fault_ends_verified_or_with_a_clear_error() {
    let o = Options {
        bytes: 3_000_000,
        rate_mbps: 50,
        delay_ms: 2,
        step: Duration::from_millis(100),
        idle_timeout: Duration::from_secs(2),
    };
    let all = faults(o.rate_mbps, o.delay_ms, o.step);
    let rows = run(&o, &all, |_| {}).expect("the harness runs");
    assert_eq!(rows.len(), 2 * all.len());
    let text = table(&rows);
    for r in &rows {
        assert!(r.as_expected, "{text}");
        if r.fault.starts_with("dead") {
            assert!(r.result.contains("timed out"), "{text}");
        } else {
            assert_eq!(r.verified, o.bytes, "{text}");
        }
    }
    let row = |fault: &str, d: Direction| {
        rows.iter()
            .find(|r| r.fault == fault && r.direction == d)
            .expect("a row")
    };
    // The fault is real: the relay dropped or moved what it should.
    let up = |f| row(f, Direction::Upload);
    assert!(up("loss 1%").relay.forward.dropped_random.packets > 0, "{text}");
    assert!(
        up("loss 5% both ways").relay.reverse.dropped_random.packets > 0,
        "{text}"
    );
    assert!(
        up("cut-off 100 ms, 80%").relay.forward.dropped_cutoff.packets > 0,
        "{text}"
    );
    assert_eq!(up("rate /10 and back").relay.forward.rate_bps, 50_000_000, "{text}");
    // A download meets the fault on the reverse link, where its data flows.
    let down = |f| row(f, Direction::Download);
    assert!(down("loss 1%").relay.reverse.dropped_random.packets > 0, "{text}");
    assert_eq!(down("loss 1%").relay.forward.dropped_random.packets, 0, "{text}");
    assert!(
        down("cut-off 100 ms, 80%").relay.reverse.dropped_cutoff.packets > 0,
        "{text}"
    );
    for d in [Direction::Upload, Direction::Download] {
        assert!(row("NAT rebinding / 50 ms", d).relay.rebinds >= 2, "{text}");
    }
}
