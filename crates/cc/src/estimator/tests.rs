//! Tests of the inline estimator: its estimates against known paths, its bias, and the Estimating decorator.

use super::*;
use crate::controller::{AlgorithmState, CongestionKind, RttSample};
use crate::guarantee::{Guarantee, GuaranteeConfig};
use crate::spec::ControllerSpec;
use crate::testutil::{DATAGRAM, Harness, MSS, RTT};
use crate::units::Rate;
use std::collections::VecDeque;

const S: u64 = 1200;

fn rel(est: f64, truth: f64) -> f64 {
    (est - truth) / truth
}

/// An ACK of a `S`-byte packet sent at `sent`, seen at `now`.
fn ack(now: Instant, sent: Instant, min: &mut Duration, srtt: &mut Option<Duration>) -> Ack {
    let latest = now - sent;
    *min = (*min).min(latest);
    let s = srtt.map_or(latest, |s| (s * 7 + latest) / 8);
    *srtt = Some(s);
    Ack {
        sent,
        bytes: S,
        rtt: RttSample {
            latest,
            smoothed: s,
            min: *min,
        },
        app_limited: false,
    }
}

enum Ev {
    Send,
    Ack(Instant),
}

/// Run a list of timed events through `est`; returns every delivery-rate sample.
fn replay(est: &mut InlineEstimator, mut events: Vec<(Instant, Ev)>) -> Vec<f64> {
    events.sort_by_key(|(t, e)| (*t, matches!(e, Ev::Send)));
    let (mut min, mut srtt, mut in_flight, mut samples) = (Duration::MAX, None, 0u64, Vec::new());
    for (now, e) in events {
        match e {
            Ev::Send => {
                est.on_sent(now, S);
                in_flight += S;
            }
            Ev::Ack(sent) => {
                let before = est.rate_samples();
                est.on_ack(now, &ack(now, sent, &mut min, &mut srtt));
                in_flight -= S;
                est.on_end_acks(now, in_flight, false);
                if est.rate_samples() > before {
                    samples.extend(est.last_rate_sample().map(Rate::bytes_per_sec));
                }
            }
        }
    }
    samples
}

/// (a) A train sent at 4R through a bottleneck of R: once the first packet
/// is acknowledged, every delivery-rate sample is R; the pairs' dispersion
/// gives P = R too.
#[test]
fn delivery_rate_samples_measure_the_bottleneck() {
    let t0 = Instant::now();
    let r = 1.25e6; // bytes/s: 10 Mbit/s, 0.96 ms per packet
    let gap_in = Duration::from_secs_f64(S as f64 / (4.0 * r));
    let prop = Duration::from_millis(20);
    let mut events = Vec::new();
    let mut free = t0; // when the bottleneck finishes its current packet
    for i in 0..400u32 {
        let sent = t0 + gap_in * i;
        free = free.max(sent) + Duration::from_secs_f64(S as f64 / r);
        events.push((sent, Ev::Send));
        events.push((free + prop, Ev::Ack(sent)));
    }
    let mut est = InlineEstimator::default();
    let samples = replay(&mut est, events);
    // The first flight's samples include the idle start (the RTT) and are lower.
    let steady: Vec<f64> = samples.iter().copied().filter(|&x| x > 0.9 * r).collect();
    assert!(
        steady.len() > 300,
        "{} of {} samples near R",
        steady.len(),
        samples.len()
    );
    for &x in &steady {
        assert!(rel(x, r).abs() < 0.01, "sample {x} vs R = {r}");
    }
    assert!(samples.iter().all(|&x| x <= r * (1.0 + 1e-9)), "no sample above R");
    assert!(rel(est.available().map(Rate::bytes_per_sec).unwrap(), r).abs() < 0.01);
    assert!(
        rel(est.physical().map(Rate::bytes_per_sec).unwrap(), r).abs() < 0.01,
        "{:?}",
        est.physical().map(Rate::bytes_per_sec)
    );
}

/// (a) ACKs compressed into bursts of 8 cannot push samples above the send rate:
/// the send interval bounds them (draft §3.3, `max(send_elapsed, ack_elapsed)`).
#[test]
fn ack_compression_is_bounded_by_the_send_rate() {
    let t0 = Instant::now();
    let rate = 1e6;
    let gap = Duration::from_secs_f64(S as f64 / rate);
    let prop = Duration::from_millis(10);
    let mut events = Vec::new();
    for i in 0..400u32 {
        let sent = t0 + gap * i;
        let burst_end = t0 + gap * (i / 8 * 8 + 7);
        events.push((sent, Ev::Send));
        events.push((burst_end + prop, Ev::Ack(sent)));
    }
    let mut est = InlineEstimator::default();
    let samples = replay(&mut est, events);
    assert!(samples.len() > 300);
    let max = samples.iter().copied().fold(0.0, f64::max);
    assert!(max <= rate * (1.0 + 1e-6) && max > 0.95 * rate, "max sample {max}");
}

/// Zero and huge durations keep the outputs finite.
#[test]
fn degenerate_times_stay_finite() {
    let t0 = Instant::now();
    let mut est = InlineEstimator::default();
    let rtt = RttSample::uniform(Duration::ZERO);
    for i in 0..100u64 {
        est.on_sent(t0, 1500);
        est.on_ack(
            t0,
            &Ack {
                sent: t0,
                bytes: 1500,
                rtt,
                app_limited: false,
            },
        );
        est.on_end_acks(t0, 0, false);
        let far = t0 + Duration::from_secs(1 << 20) * (i as u32 + 1);
        let rtt = RttSample::uniform(far - t0);
        est.on_ack(
            far,
            &Ack {
                sent: t0,
                bytes: u64::MAX / 4,
                rtt,
                app_limited: true,
            },
        );
        est.on_end_acks(far + Duration::from_nanos(1), u64::MAX, false);
        est.on_sent(far + Duration::from_nanos(1), 1);
        est.on_ack(
            far + Duration::from_nanos(2),
            &Ack {
                sent: far,
                bytes: 1,
                rtt,
                app_limited: false,
            },
        );
    }
    for v in [
        est.available().map(Rate::bytes_per_sec),
        est.physical().map(Rate::bytes_per_sec),
    ]
    .into_iter()
    .flatten()
    {
        assert!((0.0..=MAX_RATE).contains(&v), "{v}");
    }
    let now = t0;
    for v in [est.shared().available(now), est.shared().physical(now)]
        .map(|r| r.map(Rate::bytes_per_sec))
        .into_iter()
        .flatten()
    {
        assert!(v.is_finite() && v >= 0.0, "{v}");
    }
}

/// A fluid FIFO bottleneck of capacity `p` carrying constant-rate cross
/// traffic `x` and one window-limited flow of `S`-byte packets.
struct Fifo {
    p: f64,
    x: f64,
    /// One-way propagation delay each way.
    half_rtt: Duration,
    /// Time of the last arrival and the backlog (all traffic) just after it, bytes.
    last: Instant,
    backlog: f64,
    now: Instant,
    /// In flight: (sent, ack time).
    flight: VecDeque<(Instant, Instant)>,
    min: Duration,
    srtt: Option<Duration>,
    /// Packetised cross traffic: packets of this many bytes every `size / x`
    /// seconds, from `next_cross` on; `None`: a fluid.
    cross_size: Option<f64>,
    next_cross: Instant,
}

impl Fifo {
    fn new(t0: Instant, p: f64, x: f64, rtt0: Duration) -> Self {
        Self {
            cross_size: None,
            next_cross: t0 + Duration::from_micros(7),
            p,
            x,
            half_rtt: rtt0 / 2,
            last: t0,
            backlog: 0.0,
            now: t0,
            flight: VecDeque::new(),
            min: Duration::MAX,
            srtt: None,
        }
    }

    /// Send one packet now; its ACK time follows from the queue it finds.
    fn send(&mut self, est: &mut InlineEstimator) {
        let arrival = self.now + self.half_rtt;
        let backlog = match self.cross_size {
            None => {
                // The backlog drains at P - X while positive (X < P alone never queues).
                let dt = arrival.duration_since(self.last).as_secs_f64();
                (self.backlog - (self.p - self.x) * dt).max(0.0)
            }
            Some(size) => {
                while self.x > 0.0 && self.next_cross <= arrival {
                    let dt = self.next_cross.duration_since(self.last).as_secs_f64();
                    self.backlog = (self.backlog - self.p * dt).max(0.0) + size;
                    self.last = self.next_cross;
                    self.next_cross += Duration::from_secs_f64(size / self.x);
                }
                let dt = arrival.duration_since(self.last).as_secs_f64();
                (self.backlog - self.p * dt).max(0.0)
            }
        };
        let depart = arrival + Duration::from_secs_f64((backlog + S as f64) / self.p);
        self.backlog = backlog + S as f64;
        self.last = arrival;
        self.flight.push_back((self.now, depart + self.half_rtt));
        est.on_sent(self.now, S);
    }

    /// Run with a fixed window of `window` bytes until `until`.
    fn run(&mut self, est: &mut InlineEstimator, window: u64, until: Instant) {
        while (self.flight.len() as u64 + 1) * S <= window {
            self.send(est);
        }
        while let Some(&(sent, at)) = self.flight.front() {
            if at > until {
                break;
            }
            self.flight.pop_front();
            self.now = at;
            est.on_ack(at, &ack(at, sent, &mut self.min, &mut self.srtt));
            est.on_end_acks(at, self.flight.len() as u64 * S, false);
            while (self.flight.len() as u64 + 1) * S <= window {
                self.send(est);
            }
        }
        self.now = until;
    }
}

/// (b) The estimator against the truth `A = P - X` on a shared FIFO bottleneck.
///
/// Bound: in this fluid model a flow whose window exceeds `A * RTT0` keeps a
/// standing queue, and the FIFO then serves it at exactly `P - X`; every
/// steady-state delivery-rate sample is `W / RTT = A` up to one packet per
/// window (the sample counts whole packets), below 0.5% here, and the
/// first flight's back-to-back pairs leave the bottleneck `S / P` apart, so
/// CapProbe's pair gives `P` exactly. We assert 2% on `A` and 1% on `P`.
/// After the flow backs off to half of `A * RTT0` it no longer sees the
/// cross traffic; `A` must hold at `P - X` from the last standing queue.
///
/// The same runs with the cross traffic as 1500-byte packets at constant
/// spacing: a sample then counts the cross packets that happened to
/// interleave with one window, so a sample can miss `A` by about one cross
/// packet per RTT (`1500 / (A * RTT)`, < 1% here); the same bound holds.
#[test]
fn shared_bottleneck_estimates_track_the_truth() {
    let p = 12.5e6; // 100 Mbit/s
    let rtt0 = Duration::from_millis(40);
    for (frac, cross_size) in [0.0, 0.25, 0.5, 0.75]
        .into_iter()
        .flat_map(|f| [(f, None), (f, Some(1500.0))])
        .filter(|&(f, c)| f > 0.0 || c.is_none())
    {
        let x = frac * p;
        let a = p - x;
        let bdp_a = a * rtt0.as_secs_f64();
        let t0 = Instant::now();
        let mut fifo = Fifo::new(t0, p, x, rtt0);
        fifo.cross_size = cross_size;
        let model = if cross_size.is_some() { "packets" } else { "fluid" };
        let mut est = InlineEstimator::default();
        fifo.run(&mut est, (2.0 * bdp_a) as u64, t0 + Duration::from_secs(3));
        let (a1, p1) = (
            est.available().map(Rate::bytes_per_sec).unwrap(),
            est.physical().map(Rate::bytes_per_sec).unwrap(),
        );
        fifo.run(&mut est, (0.5 * bdp_a) as u64, t0 + Duration::from_secs(6));
        let (a2, p2) = (
            est.available().map(Rate::bytes_per_sec).unwrap(),
            est.physical().map(Rate::bytes_per_sec).unwrap(),
        );
        eprintln!(
            "X/P={frac:.2} ({model}): saturated (W=2*A*RTT0): A err {:+.2e}, P err {:+.2e}; \
             backed off (W=A*RTT0/2): A err {:+.2e}, P err {:+.2e}  (X est {:.4} MB/s, truth {:.4})",
            rel(a1, a),
            rel(p1, p),
            rel(a2, a),
            rel(p2, p),
            est.cross_traffic().bytes_per_sec() / 1e6,
            x / 1e6,
        );
        for (what, err, bound) in [
            ("A saturated", rel(a1, a), 0.02),
            ("P saturated", rel(p1, p), 0.01),
            ("A backed off", rel(a2, a), 0.02),
            ("P backed off", rel(p2, p), 0.01),
        ] {
            assert!(
                err.abs() <= bound,
                "X/P={frac} {model}: {what} error {err:+.4} above {bound}"
            );
        }
    }
}

/// (b) The documented bias: a flow that never builds a standing queue never
/// sees the cross traffic, and reports `A = P`, over-estimating by `X`.
#[test]
fn cross_traffic_is_invisible_without_a_standing_queue() {
    let p = 12.5e6;
    let rtt0 = Duration::from_millis(40);
    let x = 0.5 * p;
    let t0 = Instant::now();
    let mut fifo = Fifo::new(t0, p, x, rtt0);
    let mut est = InlineEstimator::default();
    fifo.run(
        &mut est,
        (0.25 * p * rtt0.as_secs_f64()) as u64,
        t0 + Duration::from_secs(4),
    );
    let (a, pe) = (
        est.available().map(Rate::bytes_per_sec).unwrap(),
        est.physical().map(Rate::bytes_per_sec).unwrap(),
    );
    eprintln!(
        "X/P=0.50, never saturated (W=P*RTT0/4): A err {:+.3}% (bias +X/A = +100%), P err {:+.3}%",
        100.0 * rel(a, p - x),
        100.0 * rel(pe, p)
    );
    assert!(rel(pe, p).abs() <= 0.01);
    assert!(rel(a, p).abs() <= 0.01, "reports P: {a}");
    assert_eq!(est.cross_traffic().bytes_per_sec(), 0.0);
}

/// A configured `P` replaces the estimate and caps `A`.
#[test]
fn configured_physical_overrides() {
    let p = 12.5e6;
    let rtt0 = Duration::from_millis(40);
    let t0 = Instant::now();
    let mut fifo = Fifo::new(t0, p, 0.0, rtt0);
    let mut est = InlineEstimator::new(EstimatorConfig {
        physical: Some(Rate::from_bytes_per_sec(5_000_000)),
        ..EstimatorConfig::default()
    });
    assert_eq!(est.shared().physical(t0), Some(Rate::from_bytes_per_sec(5_000_000)));
    fifo.run(
        &mut est,
        (0.2 * p * rtt0.as_secs_f64()) as u64,
        t0 + Duration::from_secs(2),
    );
    assert_eq!(est.physical().map(Rate::bytes_per_sec), Some(5e6));
    assert!(est.available().map(Rate::bytes_per_sec).unwrap() <= 5e6);
    assert_eq!(est.shared().physical(t0), Some(Rate::from_bytes_per_sec(5_000_000)));
}

/// Runs the same events through the decorator and a bare guarantee
/// controller that reads the decorator's estimates; they must agree.
#[derive(Debug, Clone)]
struct Twin {
    decorated: Estimating,
    bare: Guarantee,
}

impl CongestionController for Twin {
    fn on_sent(&mut self, now: Instant, bytes: u64) {
        self.decorated.on_sent(now, bytes);
        self.bare.on_sent(now, bytes);
    }
    fn on_ack(&mut self, now: Instant, ack: &Ack) {
        self.decorated.on_ack(now, ack);
        self.bare.on_ack(now, ack);
    }
    fn on_end_acks(&mut self, now: Instant, in_flight: u64, app_limited: bool) {
        self.decorated.on_end_acks(now, in_flight, app_limited);
        self.bare.on_end_acks(now, in_flight, app_limited);
    }
    fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        self.decorated.on_congestion(now, event);
        self.bare.on_congestion(now, event);
    }
    fn on_mtu_update(&mut self, mtu: u16) {
        self.decorated.on_mtu_update(mtu);
        self.bare.on_mtu_update(mtu);
    }
    fn window(&self) -> u64 {
        assert_eq!(self.decorated.window(), self.bare.window());
        assert_eq!(self.decorated.snapshot(), self.bare.snapshot());
        self.decorated.window()
    }
    fn initial_window(&self) -> u64 {
        self.decorated.initial_window()
    }
    fn snapshot(&self) -> Snapshot {
        self.decorated.snapshot()
    }
    fn clone_box(&self) -> Box<dyn CongestionController> {
        Box::new(self.clone())
    }
}

fn available(snapshot: Snapshot) -> f64 {
    match snapshot.state {
        AlgorithmState::Guarantee {
            available_bytes_per_sec,
            ..
        } => available_bytes_per_sec,
        other => panic!("not a guarantee: {other:?}"),
    }
}

/// (c) Every event reaches the inner controller, after the estimator.
#[test]
fn decorator_forwards_every_event() {
    let config = GuaranteeConfig::new(Rate::from_mbit_per_sec(20));
    let est = InlineEstimator::default();
    let source = Estimating::source(&est);
    let inner = Guarantee::new(config.clone(), DATAGRAM, Some(source.clone()));
    let twin = Twin {
        decorated: Estimating::new(est, Box::new(inner)),
        bare: Guarantee::new(config, DATAGRAM, Some(source)),
    };
    let mut h = Harness::new(twin, RTT);
    for i in 0..16 {
        h.round();
        if i % 3 == 2 {
            h.lose_oldest();
        }
    }
    h.cc.on_mtu_update(1400);
    h.round();
    assert!(h.cc.window() > MSS * 10);
    assert!(available(h.cc.decorated.snapshot()) > 0.0);
    assert!(h.cc.decorated.estimator().available().unwrap().bits_per_sec() > 0);
    let clone = h.cc.decorated.clone_box();
    assert_eq!(clone.window(), h.cc.window());
    assert_eq!(clone.snapshot(), h.cc.decorated.snapshot());
}

/// A boxed controller as a `CongestionController` for the harness.
#[derive(Debug)]
struct Dyn(Box<dyn CongestionController>);

impl CongestionController for Dyn {
    fn on_sent(&mut self, now: Instant, bytes: u64) {
        self.0.on_sent(now, bytes);
    }
    fn on_ack(&mut self, now: Instant, ack: &Ack) {
        self.0.on_ack(now, ack);
    }
    fn on_end_acks(&mut self, now: Instant, in_flight: u64, app_limited: bool) {
        self.0.on_end_acks(now, in_flight, app_limited);
    }
    fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        self.0.on_congestion(now, event);
    }
    fn on_mtu_update(&mut self, mtu: u16) {
        self.0.on_mtu_update(mtu);
    }
    fn window(&self) -> u64 {
        self.0.window()
    }
    fn initial_window(&self) -> u64 {
        self.0.initial_window()
    }
    fn snapshot(&self) -> Snapshot {
        self.0.snapshot()
    }
    fn clone_box(&self) -> Box<dyn CongestionController> {
        self.0.clone_box()
    }
}

fn drive(cc: Box<dyn CongestionController>) -> f64 {
    let mut h = Harness::new(Dyn(cc), RTT);
    assert_eq!(available(h.cc.snapshot()), 0.0);
    for _ in 0..8 {
        h.round();
    }
    h.lose(h.now, CongestionKind::Ecn);
    h.round();
    available(h.cc.snapshot())
}

/// (c) `abw=inline` ignores the builder's source; `auto` uses it if given,
/// the estimator if not.
#[test]
fn spec_abw_selects_the_source() {
    let oracle = SharedBandwidth::new();
    oracle.set_available(Rate::from_mbit_per_sec(1)); // 125 000 B/s
    oracle.set_physical(Rate::from_mbit_per_sec(100));
    let source: Arc<dyn BandwidthSource> = Arc::new(oracle);
    let inline: ControllerSpec = "guarantee:target=20Mbit/s,abw=inline".parse().unwrap();
    let auto: ControllerSpec = "guarantee:target=20Mbit/s".parse().unwrap();

    let a = drive(inline.build_with(1200, Some(source.clone())));
    assert!(a > 0.0 && a != 125_000.0, "inline estimate {a}");
    assert_eq!(drive(auto.build_with(1200, Some(source))), 125_000.0);
    let a = drive(auto.build(1200));
    assert!(a > 0.0, "auto without a source estimates inline: {a}");
}
