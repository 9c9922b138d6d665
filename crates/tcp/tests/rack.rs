//! RACK-TLP (RFC 8985) in the TCP model, beside RFC 6675's SACK recovery
//! on the same scripts, over the scripted path of `common` (virtual time).

mod common;

use std::time::Duration;

use common::*;
use tput_netsim::SimTime;
use tput_tcp::{Amount, Recovery, TcpConfig};

/// How many times segment `g` left the sender.
fn sends_of(o: &Outcome, g: u64) -> usize {
    o.sends.iter().filter(|&&(_, s)| s == g).count()
}

/// RFC 8985 §6.2: the retransmission of segment 30 is lost too. RFC 6675
/// never declares a retransmission lost again, so SACK recovery waits for
/// the retransmission timeout; RACK declares it lost when segments sent
/// after it are delivered, and resends it a round trip later, without a
/// timeout and within the same recovery (one window reduction).
#[test]
fn rack_detects_a_lost_retransmission_without_a_timeout() {
    let n = 200 * SEG;
    for mode in [Recovery::Sack, Recovery::Rack] {
        let o = run(
            cfg(mode),
            "newreno",
            Amount::Bytes(n),
            path(|_, s, k| s == 30 && k <= 2),
            Duration::from_secs(30),
        );
        assert_complete(&o, n);
        let s = o.sender.stats();
        assert_eq!(sends_of(&o, 30), 3, "{mode}: {s:?}");
        match mode {
            Recovery::Sack => assert_eq!((s.fast_retransmits, s.timeouts), (1, 1), "{mode}: {s:?}"),
            _ => {
                assert_eq!(
                    (s.fast_retransmits, s.timeouts, s.retransmits),
                    (1, 0, 2),
                    "{mode}: {s:?}"
                );
                let events: u64 = o.sender.intervals().iter().map(|i| i.congestion_events).sum();
                assert_eq!(events, 1, "{mode}: one reduction for the episode");
                // The second retransmission follows the first by about one
                // round trip (41 ms here), far sooner than the 200 ms RTO.
                let t: Vec<_> = o.sends.iter().filter(|&&(_, g)| g == 30).map(|&(t, _)| t).collect();
                let gap = t[2].saturating_duration_since(t[1]);
                assert!(
                    gap >= Duration::from_millis(40) && gap < Duration::from_millis(120),
                    "{mode}: {gap:?}"
                );
            }
        }
    }
}

/// RFC 8985 §7: the last two segments of a transfer are lost. With no
/// segment after them to draw SACK blocks, RFC 6675 waits for the timeout;
/// RACK-TLP's probe (the last segment again, there being no new data) draws
/// a SACK for it, from which RACK finds the other loss: no timeout.
#[test]
fn a_tail_loss_is_repaired_by_the_probe_without_a_timeout() {
    let n = 60 * SEG;
    for mode in [Recovery::Sack, Recovery::Rack] {
        let o = run(
            cfg(mode),
            "newreno",
            Amount::Bytes(n),
            path(drop_first(&[58, 59])),
            Duration::from_secs(30),
        );
        assert_complete(&o, n);
        let s = o.sender.stats();
        match mode {
            Recovery::Sack => assert_eq!((s.timeouts, s.tail_loss_probes), (1, 0), "{mode}: {s:?}"),
            _ => {
                assert_eq!((s.timeouts, s.tail_loss_probes), (0, 1), "{mode}: {s:?}");
                assert_eq!((sends_of(&o, 58), sends_of(&o, 59)), (2, 2), "{mode}: {s:?}");
            }
        }
    }
}

/// RFC 8985 §7.3: with new data to send, the probe is new data. The whole
/// initial window is lost, so no ACK comes back; before an RTT sample the
/// PTO is the initial RTO, and the probe goes out where the timeout would
/// have fired: its SACK lets RACK find the lost window, no timeout.
#[test]
fn a_probe_sends_new_data_when_there_is_some() {
    let n = 100 * SEG;
    let o = run(
        cfg(Recovery::Rack),
        "newreno",
        Amount::Bytes(n),
        path(|t, _, k| k == 1 && t == SimTime::ZERO),
        Duration::from_secs(30),
    );
    assert_complete(&o, n);
    let s = o.sender.stats();
    assert_eq!((s.timeouts, s.tail_loss_probes), (0, 1), "{s:?}");
    let iw = o.sends.iter().filter(|&&(t, _)| t == SimTime::ZERO).count() as u64;
    assert!(iw >= 2, "{iw}");
    // The probe: the first segment after the initial window, once.
    let probe = o.sends.iter().find(|&&(t, _)| t > SimTime::ZERO).unwrap();
    assert_eq!((probe.0, probe.1), (SimTime::from_secs(1), iw), "{s:?}");
    assert_eq!(sends_of(&o, iw), 1);
    assert!((0..iw).all(|g| sends_of(&o, g) == 2), "{s:?}");
}

/// RFC 8985 §6.2 steps 3-4: once reordering has been seen, a segment
/// overtaken by more than three others, but by less than a quarter of the
/// minimum RTT, is not declared lost. RFC 6675's duplicate threshold
/// resends it (a spurious retransmission); RACK does not.
#[test]
fn reordering_within_the_window_is_not_a_loss() {
    // 10 Mbit/s: one segment every 0.83 ms; 41 ms minimum RTT, so RACK's
    // window is about 10 ms. Segment 40 is overtaken by two segments (RACK
    // learns that the path reorders; below the duplicate threshold), then
    // segment 150 by six (5 ms).
    let n = 300 * SEG;
    for mode in [Recovery::Sack, Recovery::Rack] {
        let mut p = path(|_, _, _| false);
        p.hold = Box::new(|g, _| match g {
            40 => Duration::from_micros(2000),
            150 => Duration::from_millis(5),
            _ => Duration::ZERO,
        });
        let o = run(cfg(mode), "newreno", Amount::Bytes(n), p, Duration::from_secs(30));
        assert_complete(&o, n);
        let s = o.sender.stats();
        match mode {
            Recovery::Sack => assert_eq!((s.fast_retransmits, s.retransmits), (1, 1), "{mode}: {s:?}"),
            _ => assert_eq!(
                (s.fast_retransmits, s.retransmits, s.timeouts),
                (0, 0, 0),
                "{mode}: {s:?}"
            ),
        }
    }
}

/// Losses in one window: one recovery, every hole resent once, as with SACK.
#[test]
fn three_losses_in_one_window_are_one_recovery() {
    let n = 200 * SEG;
    let o = run(
        cfg(Recovery::Rack),
        "newreno",
        Amount::Bytes(n),
        path(drop_first(&[40, 43, 47])),
        Duration::from_secs(30),
    );
    assert_complete(&o, n);
    let s = o.sender.stats();
    assert_eq!((s.fast_retransmits, s.timeouts, s.retransmits), (1, 0, 3), "{s:?}");
}

/// RACK needs the sink's SACK blocks, and takes PRR.
#[test]
fn rack_needs_sack_blocks() {
    let c = TcpConfig {
        sack: false,
        ..cfg(Recovery::Rack)
    };
    let e = c.validate().unwrap_err().to_string();
    assert_eq!(
        e,
        "sack: recovery = \"rack\" needs the sink's SACK blocks (sack = true)"
    );
    let c = TcpConfig {
        prr: true,
        ..cfg(Recovery::Rack)
    };
    assert!(c.validate().is_ok());
}
