//! The TCP model on hand-built loss patterns: sender and sink driven through
//! the `Host` trait by a scripted path (a serializing forward link with a
//! fixed delay, a plain delay back) that drops exactly the data packets a
//! test names.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::time::{Duration, Instant};

use bytes::Bytes;
use proptest::prelude::*;
use tput_netsim::{Addr, Host, NodeId, SimTime};
use tput_tcp::{Amount, CcObserver, ControllerRecovery, Recovery, TcpConfig, TcpSender, TcpSink, TcpTransfer};

const SEG: u64 = 1000;

/// Which data transmissions are lost: (segment index, transmission number from 1).
type DropRule = Box<dyn FnMut(SimTime, u64, u32) -> bool>;

struct Path {
    rate_bps: u64,
    delay: Duration,
    drop: DropRule,
}

/// A packet on its way: (arrival, order, to the sink, payload).
type InFlight = (SimTime, u64, bool, Vec<u8>);

/// The controller's window at every change: (seconds, bytes).
#[derive(Default)]
struct Windows(Vec<(f64, u64)>);

impl CcObserver for Windows {
    fn observe(&mut self, now: SimTime, cc: &dyn tput_cc::CongestionController) {
        let w = cc.window();
        if self.0.last().is_none_or(|&(_, last)| last != w) {
            self.0.push((now.as_secs_f64(), w));
        }
    }
}

struct Outcome {
    sender: TcpSender<Windows>,
    sink: TcpSink,
    /// When each data packet left the sender, and its segment index.
    sends: Vec<(SimTime, u64)>,
    /// When each data packet that was not dropped reached the sink, and its
    /// segment index.
    arrivals: Vec<(SimTime, u64)>,
}

fn seq_of(p: &Bytes) -> u64 {
    u64::from_be_bytes(p[4..12].try_into().unwrap())
}

/// Run `n` bytes (or until `Amount::Until`) over `path` until the sender has
/// finished or `limit` of virtual time has passed.
fn run(cfg: TcpConfig, cc: &str, amount: Amount, mut path: Path, limit: Duration) -> Outcome {
    let epoch = Instant::now();
    let a = Addr::new(NodeId(0), 1);
    let b = Addr::new(NodeId(1), 2);
    let spec: tput_cc::ControllerSpec = cc.parse().unwrap();
    let transfer = TcpTransfer::new(b, 1, SimTime::ZERO, amount).with_interval(Duration::from_secs(1));
    let cc = spec.build(cfg.segment as u16);
    let mut sender = TcpSender::with_observer(cfg.clone(), cc, epoch, transfer, Windows::default());
    let mut sink = TcpSink::new(cfg.clone(), Duration::from_secs(1), None);
    sink.record_delivery();
    let mut heap: BinaryHeap<Reverse<InFlight>> = BinaryHeap::new();
    let mut order = 0u64;
    let mut link_free = SimTime::ZERO;
    let mut sends: HashMap<u64, u32> = HashMap::new();
    let mut now = SimTime::ZERO;
    let mut send_times = Vec::new();
    let mut arrivals = Vec::new();
    let end = SimTime::from_duration(limit);
    loop {
        while let Some(d) = sender.poll_transmit(now) {
            send_times.push((now, seq_of(&d.payload) / SEG));
            let wire_bits = (d.payload.len() as u64 + 28) * 8;
            let ser = Duration::from_nanos(wire_bits * 1_000_000_000 / path.rate_bps);
            link_free = link_free.max(now) + ser;
            let seg = seq_of(&d.payload) / SEG;
            let k = sends.entry(seg).or_default();
            *k += 1;
            if !(path.drop)(now, seg, *k) {
                order += 1;
                arrivals.push((link_free + path.delay, seg));
                heap.push(Reverse((link_free + path.delay, order, true, d.payload.to_vec())));
            }
        }
        while let Some(d) = sink.poll_transmit(now) {
            order += 1;
            heap.push(Reverse((now + path.delay, order, false, d.payload.to_vec())));
        }
        if sender.is_finished() {
            break;
        }
        let next = [
            heap.peek().map(|Reverse(e)| e.0),
            sender.poll_timeout(),
            sink.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        let Some(next) = next.filter(|&t| t <= end) else { break };
        now = next;
        if heap.peek().is_some_and(|Reverse(e)| e.0 == now) {
            let Reverse((_, _, to_sink, p)) = heap.pop().unwrap();
            if to_sink {
                sink.on_datagram(now, a, 1, tput_netsim::Ecn::NotEct, Bytes::from(p));
            } else {
                sender.on_datagram(now, b, 1, tput_netsim::Ecn::NotEct, Bytes::from(p));
            }
        } else {
            if sender.poll_timeout().is_some_and(|t| t <= now) {
                sender.on_timeout(now);
            }
            if sink.poll_timeout().is_some_and(|t| t <= now) {
                sink.on_timeout(now);
            }
        }
    }
    Outcome {
        sender,
        sink,
        sends: send_times,
        arrivals,
    }
}

fn cfg(recovery: Recovery) -> TcpConfig {
    TcpConfig {
        recovery,
        sack: recovery == Recovery::Sack,
        ..TcpConfig::default()
    }
}

/// 10 Mbit/s, 20 ms one way.
fn path(drop: impl FnMut(SimTime, u64, u32) -> bool + 'static) -> Path {
    Path {
        rate_bps: 10_000_000,
        delay: Duration::from_millis(20),
        drop: Box::new(drop),
    }
}

fn drop_first(segs: &'static [u64]) -> impl FnMut(SimTime, u64, u32) -> bool {
    move |_, s, k| k == 1 && segs.contains(&s)
}

const ALL: [Recovery; 4] = [Recovery::Reno, Recovery::NewReno, Recovery::Sack, Recovery::Gbn];

/// Every byte arrived once, in order, and the sender knows it.
fn assert_complete(o: &Outcome, n: u64) {
    assert!(o.sender.is_finished(), "sender unfinished: {:?}", o.sender.stats());
    assert_eq!(o.sink.delivered(), n);
    let log = o.sink.delivered_log().unwrap();
    assert_eq!(log.len() as u64, n);
    assert!(
        log.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8),
        "delivered bytes out of order"
    );
    assert_eq!(o.sink.report().corrupt, 0);
}

#[test]
fn one_loss_is_one_fast_retransmit_in_every_mode() {
    let n = 200 * SEG;
    for mode in ALL {
        let o = run(
            cfg(mode),
            "newreno",
            Amount::Bytes(n),
            path(drop_first(&[30])),
            Duration::from_secs(30),
        );
        assert_complete(&o, n);
        let s = o.sender.stats();
        assert_eq!(s.fast_retransmits, 1, "{mode}: {s:?}");
        assert_eq!(s.timeouts, 0, "{mode}: {s:?}");
        if mode == Recovery::Gbn {
            assert!(s.retransmits > 1, "{mode}: go-back-N resends the window: {s:?}");
        } else {
            assert_eq!(s.retransmits, 1, "{mode}: {s:?}");
        }
        let snap = o.sender.controller().snapshot();
        assert!(snap.ssthresh_bytes.is_some(), "{mode}: the loss reached the controller");
        let events: u64 = o.sender.intervals().iter().map(|i| i.congestion_events).sum();
        assert_eq!(events, 1, "{mode}");
    }
}

#[test]
fn three_losses_in_one_window() {
    let n = 200 * SEG;
    for mode in ALL {
        let o = run(
            cfg(mode),
            "newreno",
            Amount::Bytes(n),
            path(drop_first(&[40, 43, 47])),
            Duration::from_secs(30),
        );
        assert_complete(&o, n);
        let s = o.sender.stats();
        match mode {
            // Reno leaves fast recovery at the first partial ACK: the other
            // two losses cost another reduction or a timeout.
            Recovery::Reno => assert!(s.fast_retransmits + s.timeouts >= 2, "{mode}: {s:?}"),
            Recovery::NewReno | Recovery::Sack => {
                assert_eq!(
                    (s.fast_retransmits, s.timeouts, s.retransmits),
                    (1, 0, 3),
                    "{mode}: {s:?}"
                )
            }
            Recovery::Gbn => assert_eq!((s.fast_retransmits, s.timeouts), (1, 0), "{mode}: {s:?}"),
            other => panic!("no expectation for {other}"),
        }
    }
}

#[test]
fn a_lost_retransmission_ends_in_a_timeout() {
    let n = 200 * SEG;
    for mode in ALL {
        let o = run(
            cfg(mode),
            "newreno",
            Amount::Bytes(n),
            path(|_, s, k| s == 30 && k <= 2),
            Duration::from_secs(30),
        );
        assert_complete(&o, n);
        let s = o.sender.stats();
        assert_eq!((s.fast_retransmits, s.timeouts), (1, 1), "{mode}: {s:?}");
        assert_eq!(s.consecutive_timeouts, 0, "{mode}: new data was acked after it");
    }
}

#[test]
fn timeouts_back_off_exponentially_up_to_the_cap() {
    for mode in ALL {
        let mut c = cfg(mode);
        c.max_backoff = 8;
        let n = 1000 * SEG;
        // Every data packet is lost from 0.5 s to 12 s.
        let blackout = |t: SimTime, _, _| t >= SimTime::from_millis(500) && t < SimTime::from_secs(12);
        let o = run(c, "newreno", Amount::Bytes(n), path(blackout), Duration::from_secs(60));
        assert_complete(&o, n);
        let t = o.sender.timeouts();
        assert!(t.len() >= 5, "{mode}: {t:?}");
        let base = t[0].next_rto_secs / 2.0;
        assert!(base >= 0.2 - 1e-9, "{mode}: the minimum RTO holds: {t:?}");
        for (i, r) in t.iter().enumerate() {
            assert_eq!(r.consecutive, i as u32 + 1, "{mode}: {t:?}");
            let factor = 2f64.powi(i as i32 + 1).min(8.0);
            assert!(
                (r.next_rto_secs - base * factor).abs() < 1e-9,
                "{mode}: timeout {i}: {t:?}"
            );
            if i > 0 {
                let gap = r.at_secs - t[i - 1].at_secs;
                assert!(
                    (gap - t[i - 1].next_rto_secs).abs() < 1e-6,
                    "{mode}: timeout {i} after {gap}: {t:?}"
                );
            }
        }
        let s = o.sender.stats();
        assert_eq!(s.max_consecutive_timeouts as usize, t.len(), "{mode}");
        assert_eq!(s.consecutive_timeouts, 0, "{mode}: reset by the ACK of new data");
    }
}

#[test]
fn a_receive_window_limits_throughput_to_rwnd_per_rtt() {
    let mut c = cfg(Recovery::NewReno);
    c.receive_window = 10 * SEG;
    let p = Path {
        rate_bps: 100_000_000,
        delay: Duration::from_millis(50),
        drop: Box::new(|_, _, _| false),
    };
    let stop = SimTime::from_secs(10);
    let o = run(c, "newreno", Amount::Until(stop), p, Duration::from_secs(20));
    let r = o.sink.report();
    let rate = r.bytes as f64 / r.active.as_secs_f64();
    // 10 000 bytes per 100 ms RTT (plus 10 serializations of 83 us).
    let expected = 10.0 * SEG as f64 / (0.1 + 10.0 * 1040.0 * 8.0 / 1e8);
    assert!((rate / expected - 1.0).abs() < 0.03, "{rate} B/s, expected {expected}");
    // The controller's window is not the limit, and it stops growing once
    // it has room the receive window does not let the sender use (RFC 9002
    // §7.8): it ends within a segment or two of the receive window.
    let w = o.sender.controller().window();
    assert!(w > 10 * SEG && w <= 12 * SEG, "controller window {w}");
}

#[test]
fn delayed_acks_halve_the_ack_count() {
    let n = 400 * SEG;
    let mut acks = Vec::new();
    for delayed in [None, Some(Duration::from_millis(100))] {
        let mut c = cfg(Recovery::NewReno);
        c.delayed_ack = delayed;
        let o = run(
            c,
            "newreno",
            Amount::Bytes(n),
            path(|_, _, _| false),
            Duration::from_secs(30),
        );
        assert_complete(&o, n);
        acks.push(o.sink.report().acks_sent);
    }
    assert_eq!(acks[0], 400);
    assert!((200..=205).contains(&acks[1]), "{acks:?}");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn no_drop_pattern_loses_or_duplicates_bytes(
        drops in proptest::collection::btree_set(0u32..400, 0..40),
        mode in 0usize..4,
        delayed in any::<bool>(),
        tail in 1u64..SEG,
    ) {
        let mode = ALL[mode];
        let mut c = cfg(mode);
        c.delayed_ack = delayed.then_some(Duration::from_millis(40));
        let n = 120 * SEG + tail;
        let mut count = 0u32;
        let drop = move |_: SimTime, _: u64, _: u32| {
            count += 1;
            drops.contains(&(count - 1))
        };
        let o = run(c, "newreno", Amount::Bytes(n), path(drop), Duration::from_secs(3600));
        prop_assert!(o.sender.is_finished(), "{mode}: {:?}", o.sender.stats());
        let log = o.sink.delivered_log().unwrap();
        prop_assert_eq!(log.len() as u64, n);
        prop_assert!(log.iter().enumerate().all(|(i, &b)| b == (i % 251) as u8));
        prop_assert_eq!(o.sender.stats().bytes_acked, n);
    }
}

#[test]
fn limited_transmit_turns_a_small_window_timeout_into_a_fast_retransmit() {
    // A window of 3 segments and the first one lost: two duplicate ACKs, one
    // short of the threshold. RFC 3042's two extra segments bring the third.
    let n = 10 * SEG;
    for mode in [Recovery::Reno, Recovery::NewReno, Recovery::Gbn] {
        for limited_transmit in [false, true] {
            let c = TcpConfig {
                limited_transmit,
                ..cfg(mode)
            };
            let o = run(
                c,
                "newreno:iw=3",
                Amount::Bytes(n),
                path(drop_first(&[0])),
                Duration::from_secs(30),
            );
            assert_complete(&o, n);
            let s = o.sender.stats();
            let want = if limited_transmit { (1, 0) } else { (0, 1) };
            assert_eq!(
                (s.fast_retransmits, s.timeouts),
                want,
                "{mode}, LT {limited_transmit}: {s:?}"
            );
        }
    }
}

#[test]
fn the_initial_rto_is_settable() {
    // One segment, lost on its first transmission: nothing but the initial
    // RTO brings it back (RFC 6298 §2.1: 1 s; ns-2's default: 3 s).
    for initial in [Duration::from_secs(1), Duration::from_secs(3)] {
        let c = TcpConfig {
            initial_rto: initial,
            ..cfg(Recovery::NewReno)
        };
        let o = run(
            c,
            "newreno:iw=1",
            Amount::Bytes(SEG),
            path(drop_first(&[0])),
            Duration::from_secs(30),
        );
        assert_complete(&o, SEG);
        let t = o.sender.timeouts();
        assert_eq!(t.len(), 1, "{t:?}");
        assert!((t[0].at_secs - initial.as_secs_f64()).abs() < 1e-9, "{t:?}");
    }
    let bad = TcpConfig {
        initial_rto: Duration::ZERO,
        ..cfg(Recovery::NewReno)
    };
    let err = bad.validate().unwrap_err();
    assert_eq!(err, tput_tcp::ConfigError::InitialRto);
    assert!(err.to_string().starts_with("initial_rto:"), "{err}");
}

#[test]
fn a_fast_retransmit_restarts_the_retransmission_timer_when_asked() {
    // Segment 30 and its fast retransmission are lost: a timeout resends it.
    // With the restart (ns-2, Linux) the timeout comes one RTO after the fast
    // retransmit; without it (RFC 6298 §5) one RTO after the last ACK of new
    // data, which came before the duplicates: earlier.
    let mut at = Vec::new();
    for restart in [true, false] {
        let c = TcpConfig {
            restart_timer_on_fast_retransmit: restart,
            ..cfg(Recovery::NewReno)
        };
        let n = 200 * SEG;
        let o = run(
            c,
            "newreno",
            Amount::Bytes(n),
            path(|_, s, k| s == 30 && k <= 2),
            Duration::from_secs(30),
        );
        assert_complete(&o, n);
        let s = o.sender.stats();
        assert_eq!((s.fast_retransmits, s.timeouts), (1, 1), "restart {restart}: {s:?}");
        at.push(o.sender.timeouts()[0].at_secs);
    }
    // The fast retransmit comes with the third duplicate ACK, 27 ms after the
    // last ACK of new data here.
    assert!(at[0] > at[1] && at[0] - at[1] < 0.1, "{at:?}");
}

/// When the window first grows after its first reduction, and when the
/// reduction happened (seconds).
fn growth_after_reduction(o: &Outcome) -> (f64, f64) {
    let t = &o.sender.observer().0;
    let i = t.windows(2).position(|w| w[1].1 < w[0].1).expect("a reduction");
    let (reduced_at, reduced) = t[i + 1];
    let &(grew_at, _) = t[i + 1..].iter().find(|s| s.1 > reduced).expect("growth after it");
    (reduced_at, grew_at)
}

#[test]
fn the_controller_does_not_grow_until_fast_recovery_ends() {
    // Three losses in one window. NewReno's fast recovery resends one hole
    // per partial ACK and ends with the ACK that covers `recover`, three
    // round trips (about 45 ms each here) after the fast retransmit; the
    // window must not grow before it (RFC 6582 §3.2). With RFC 9002's rule
    // the second retransmission, sent after the reduction, ends the
    // controller's recovery with its partial ACK, a round trip earlier.
    // Counting ACKs (RFC 5681 §3.1), every ACK outside recovery grows the
    // window, so the first growth shows when the period ended.
    let mut grow_after = Vec::new();
    for rule in [ControllerRecovery::Tcp, ControllerRecovery::Rfc9002] {
        let c = TcpConfig {
            controller_recovery: rule,
            ..cfg(Recovery::NewReno)
        };
        let n = 400 * SEG;
        let o = run(
            c,
            "newreno:count=acks",
            Amount::Bytes(n),
            path(drop_first(&[100, 103, 107])),
            Duration::from_secs(30),
        );
        assert_complete(&o, n);
        assert_eq!(o.sender.stats().fast_retransmits, 1);
        let (reduced, grew) = growth_after_reduction(&o);
        grow_after.push(grew - reduced);
    }
    let (tcp, rfc) = (grow_after[0], grow_after[1]);
    assert!((0.15..0.20).contains(&tcp), "{grow_after:?}");
    assert!((0.035..0.06).contains(&(tcp - rfc)), "{grow_after:?}");
}

#[test]
fn pacing_spreads_a_window_over_the_round_trip() {
    // 100 Mbit/s, 50 ms each way: unpaced, slow start sends each window back
    // to back (one serialisation, 83 us, apart); paced at 2 x cwnd / SRTT
    // (slow start) the segments leave SRTT / (2 cwnd) apart.
    let fast = || Path {
        rate_bps: 100_000_000,
        delay: Duration::from_millis(50),
        drop: Box::new(|_, _, _| false),
    };
    let n = 300 * SEG;
    let mut gaps = Vec::new();
    for pacing in [false, true] {
        let c = TcpConfig {
            pacing,
            ..cfg(Recovery::NewReno)
        };
        let o = run(c, "newreno", Amount::Bytes(n), fast(), Duration::from_secs(30));
        assert_complete(&o, n);
        // Sends after the first RTT sample (the initial window leaves at 0).
        let later: Vec<f64> = o.sends.iter().skip(10).map(|(t, _)| t.as_secs_f64()).collect();
        let min_gap = later.windows(2).map(|w| w[1] - w[0]).fold(f64::INFINITY, f64::min);
        gaps.push((min_gap, o.sender.stats().finished_secs.unwrap()));
    }
    let ((unpaced, t_unpaced), (paced, t_paced)) = (gaps[0], gaps[1]);
    assert!(unpaced < 1e-9, "unpaced sends leave together: {gaps:?}");
    // The largest slow-start window here is under 300 segments: a gap of at
    // least 100 ms / 600.
    assert!(paced > 0.1 / 600.0, "{gaps:?}");
    // Pacing at twice the window per RTT costs little time in slow start.
    assert!(t_paced < t_unpaced * 1.3, "{gaps:?}");
}

#[test]
fn sack_resends_the_first_hole_at_once() {
    // RFC 6675 §5 step (4.3): on entering recovery the first hole is resent
    // at once, though `pipe` (the whole window) exceeds the halved window.
    // A 100 Mbit/s path with 50 ms each way: segment 300 is lost in slow
    // start; its retransmission must leave with the third duplicate ACK,
    // one round trip after the original (not half a round trip later, when
    // `pipe` has fallen below the halved window).
    let p = Path {
        rate_bps: 100_000_000,
        delay: Duration::from_millis(50),
        drop: Box::new(drop_first(&[300])),
    };
    let n = 1000 * SEG;
    let o = run(
        cfg(Recovery::Sack),
        "newreno",
        Amount::Bytes(n),
        p,
        Duration::from_secs(30),
    );
    assert_complete(&o, n);
    let s = o.sender.stats();
    assert_eq!((s.fast_retransmits, s.timeouts, s.retransmits), (1, 0, 1), "{s:?}");
    let sent: Vec<f64> = o
        .sends
        .iter()
        .filter(|&&(_, g)| g == 300)
        .map(|(t, _)| t.as_secs_f64())
        .collect();
    assert_eq!(sent.len(), 2, "{sent:?}");
    // The third duplicate ACK comes a round trip (100 ms plus the slow-start
    // queue, under 7 ms here) after the original left; waiting for `pipe`
    // to fall below the halved window took a round trip more (206 ms).
    let gap = sent[1] - sent[0];
    assert!((0.100..0.110).contains(&gap), "resent {gap} s after the original");
}

/// RFC 7323 timestamps: the ACK of a retransmitted segment gives an RTT
/// sample (§4.1), which ends the RTO backoff (RFC 6298 §5.7). Without them
/// Karn's rule takes no sample from it and the backoff stays. The last of
/// 40 segments is lost twice: two timeouts, the backoff at 4, then the
/// third transmission is acknowledged.
#[test]
fn timestamps_let_the_ack_of_a_retransmission_end_the_backoff() {
    let n = 40 * SEG;
    let mut rtos = Vec::new();
    for timestamps in [false, true] {
        let c = TcpConfig {
            timestamps,
            ..cfg(Recovery::Sack)
        };
        let o = run(
            c,
            "newreno",
            Amount::Bytes(n),
            path(|_, s, k| s == 39 && k <= 2),
            Duration::from_secs(30),
        );
        assert_complete(&o, n);
        let s = o.sender.stats();
        assert_eq!(
            (s.timeouts, s.max_consecutive_timeouts),
            (2, 2),
            "timestamps {timestamps}: {s:?}"
        );
        rtos.push(o.sender.rto());
    }
    // 20 ms one way: SRTT ~40 ms, so the RTO is the 200 ms minimum.
    assert_eq!(rtos[0], Duration::from_millis(800), "backed off: 4 x 200 ms");
    assert_eq!(
        rtos[1],
        Duration::from_millis(200),
        "the echoed sample ended the backoff"
    );
}

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
    let mut at_once = std::collections::BTreeMap::new();
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
