//! Proportional Rate Reduction (RFC 6937) in the TCP model's SACK fast
//! recovery, over the scripted path of `common`.

mod common;

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use common::*;
use tput_netsim::SimTime;
use tput_tcp::{Amount, PrrBound, Recovery, TcpConfig};

/// Fast recovery as the sender sees it: (segments sent, segments the ACKs
/// reported delivered) at each send from the fast retransmit of `first`
/// until the ACK of its retransmission, which ends recovery here (one
/// loss); ACKs come back 20 ms after each arrival, one per segment.
fn recovery_trace(o: &Outcome, first: u64) -> Vec<(u64, u64)> {
    let back = Duration::from_millis(20);
    let resent = o
        .sends
        .iter()
        .filter(|&&(_, g)| g == first)
        .nth(1)
        .expect("a retransmission")
        .0;
    let rexmit_index = o.sends.iter().position(|&(t, g)| g == first && t == resent).unwrap();
    // The first transmission was dropped: the one arrival is the retransmission's.
    let ended = o.arrivals.iter().find(|&&(_, g)| g == first).unwrap().0 + back;
    let mut delivered_at: Vec<SimTime> = o.arrivals.iter().map(|&(a, _)| a + back).collect();
    delivered_at.sort();
    o.sends[rexmit_index..]
        .iter()
        .take_while(|&&(t, _)| t < ended)
        .enumerate()
        .map(|(i, &(t, _))| {
            let delivered = delivered_at.iter().filter(|&&d| d >= resent && d <= t).count() as u64;
            (i as u64 + 1, delivered)
        })
        .collect()
}

/// RFC 6937: with PRR, fast recovery sends `ssthresh / RecoverFS` of what
/// each ACK reports delivered, from the fast retransmit on; without it
/// (RFC 6675 alone) the sender is silent until `pipe` falls below the
/// halved window, half the recovery, then sends one for one. Both send
/// about `ssthresh` in the round trip of recovery, and neither bursts when
/// it ends. One loss in slow start, NewReno halving the window.
#[test]
fn prr_sends_in_proportion_to_what_is_delivered() {
    let n = 400 * SEG;
    let mut totals = Vec::new();
    for prr in [false, true] {
        let c = TcpConfig {
            prr,
            ..cfg(Recovery::Sack)
        };
        let o = run(
            c,
            "newreno",
            Amount::Bytes(n),
            path(drop_first(&[100])),
            Duration::from_secs(30),
        );
        assert_complete(&o, n);
        let s = o.sender.stats();
        assert_eq!(
            (s.fast_retransmits, s.timeouts, s.retransmits),
            (1, 0, 1),
            "prr {prr}: {s:?}"
        );
        // The controller's window after its reduction: RFC 6937's ssthresh.
        let w = &o.sender.observer().0;
        let i = w.windows(2).position(|p| p[1].1 < p[0].1).expect("a reduction");
        let ssthresh = w[i + 1].1 / SEG;
        let trace = recovery_trace(&o, 100);
        let &(out, delivered) = trace.last().unwrap();
        // The whole flight at the fast retransmit is delivered in recovery
        // (its first segment by the retransmission): RecoverFS.
        let recover_fs = delivered;
        assert!(recover_fs > 80, "prr {prr}: {trace:?}");
        assert!(
            out.abs_diff(ssthresh) <= 2,
            "prr {prr}: sent {out} in recovery, ssthresh {ssthresh}"
        );
        if prr {
            // RFC 6937 §3: "sndcnt = CEIL(prr_delivered * ssthresh /
            // RecoverFS) - prr_out" at every ACK, the fast retransmit aside.
            for &(out, delivered) in &trace {
                let due = (delivered * ssthresh).div_ceil(recover_fs);
                assert!(
                    out.abs_diff(due) <= 2,
                    "sent {out} for {delivered} delivered: {trace:?}"
                );
            }
        } else {
            // RFC 6675: nothing after the retransmission until `pipe` is
            // below ssthresh, when more than a third of the flight is delivered.
            assert!(trace[1].1 > recover_fs / 3, "{trace:?}");
        }
        // No burst: at most two segments leave at one instant, from the fast
        // retransmit until a round trip after recovery ends.
        let resent = o.sends.iter().filter(|&&(_, g)| g == 100).nth(1).unwrap().0;
        let later = resent + Duration::from_millis(100);
        let mut at_once = HashMap::new();
        for &(t, _) in o.sends.iter().filter(|&&(t, _)| t >= resent && t < later) {
            *at_once.entry(t).or_insert(0u32) += 1;
        }
        let burst = at_once.values().copied().max().unwrap();
        assert!(burst <= 2, "prr {prr}: {burst} segments at once");
        totals.push(o.sender.stats().finished_secs.unwrap());
    }
    // The same loss costs the same time either way.
    assert!((totals[0] - totals[1]).abs() < 0.01, "{totals:?}");
}

#[test]
fn prr_needs_sack_recovery() {
    for mode in ALL {
        let c = TcpConfig { prr: true, ..cfg(mode) };
        assert_eq!(c.validate().is_ok(), mode == Recovery::Sack, "{mode}");
    }
    assert!(!TcpConfig::default().prr, "off by default");
}

/// RFC 6937 §3 PRR-SSRB: 30 segments lost in a row take `pipe` below
/// `ssthresh` (lost segments leave it), and the sender slow-starts back:
/// "limit = MAX(prr_delivered - prr_out, DeliveredData) + MSS", so each ACK
/// (one segment delivered here) lets out at most two segments — never a
/// burst of `ssthresh - pipe` — and the holes are repaired without a
/// timeout.
#[test]
fn prr_ssrb_catches_up_at_most_one_segment_beyond_each_ack() {
    let n = 400 * SEG;
    let c = TcpConfig {
        prr: true,
        ..cfg(Recovery::Sack)
    };
    let burst = |_: SimTime, s: u64, k: u32| k == 1 && (100..130).contains(&s);
    let o = run(c, "newreno", Amount::Bytes(n), path(burst), Duration::from_secs(30));
    assert_complete(&o, n);
    let s = o.sender.stats();
    assert_eq!((s.fast_retransmits, s.timeouts, s.retransmits), (1, 0, 30), "{s:?}");
    let resent = o.sends.iter().filter(|&&(_, g)| g == 100).nth(1).unwrap().0;
    let mut at_once = BTreeMap::new();
    for &(t, _) in o
        .sends
        .iter()
        .filter(|&&(t, _)| t >= resent && t < resent + Duration::from_millis(150))
    {
        *at_once.entry(t).or_insert(0u32) += 1;
    }
    let per_ack: Vec<u32> = at_once.into_values().collect();
    assert_eq!(per_ack.iter().max(), Some(&2), "{per_ack:?}");
    // The catch-up (two per ACK) runs for a stretch, not one ACK.
    assert!(per_ack.iter().filter(|&&k| k == 2).count() >= 10, "{per_ack:?}");
}

/// RFC 6937 §3 PRR-CRB, the conservative bound: "limit = prr_delivered -
/// prr_out", so from the fast retransmit to the end of recovery the sender
/// never has sent more than the ACKs have reported delivered (but for RFC
/// 6675's forced retransmission of the first hole, one segment sent before
/// anything is delivered). 80 segments lost in a row take `pipe` far below
/// `ssthresh`; SSRB, which adds a segment per ACK while it catches up, gets
/// 24 segments ahead of what was delivered, CRB none. Both repair every
/// hole without a timeout.
#[test]
fn prr_crb_never_sends_more_than_was_delivered() {
    let n = 400 * SEG;
    let mut ahead = Vec::new();
    for bound in [PrrBound::Crb, PrrBound::Ssrb] {
        let c = TcpConfig {
            prr: true,
            prr_bound: bound,
            ..cfg(Recovery::Sack)
        };
        let burst = |_: SimTime, s: u64, k: u32| k == 1 && (100..180).contains(&s);
        let o = run(c, "newreno", Amount::Bytes(n), path(burst), Duration::from_secs(30));
        assert_complete(&o, n);
        let s = o.sender.stats();
        assert_eq!(
            (s.fast_retransmits, s.timeouts, s.retransmits),
            (1, 0, 80),
            "{bound}: {s:?}"
        );
        // Recovery: from the fast retransmit of segment 100 to the ACK
        // that covers the last hole's retransmission (segment 179). One ACK
        // per arrival here, each reporting one segment delivered.
        let resent = o.sends.iter().filter(|&&(_, g)| g == 100).nth(1).unwrap().0;
        let end = o.acks.iter().find(|a| a.1 > 179 * SEG && a.0 > resent).unwrap().0;
        let most_ahead = o
            .sends
            .iter()
            .filter(|&&(t, _)| t >= resent && t < end)
            .enumerate()
            .map(|(i, &(t, _))| {
                let delivered = o.acks.iter().filter(|a| a.0 >= resent && a.0 <= t).count() as i64;
                i as i64 + 1 - delivered
            })
            .max()
            .unwrap();
        ahead.push(most_ahead);
    }
    assert!(
        ahead[0] <= 1,
        "CRB ahead of what was delivered by {} segments",
        ahead[0]
    );
    assert!(ahead[1] > 10, "SSRB ahead by {} segments", ahead[1]);
}
