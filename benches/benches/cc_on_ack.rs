//! Cost of one `on_ack` call per controller, in congestion avoidance at a
//! steady 20 ms RTT (goal for the guarantee controller: <= 50 ns on the
//! 2-core reference machine). Each sample runs batches of 1000 ACKs from one
//! fixed state; divide the reported batch time by 1000 (or read the
//! elements/s throughput).
//!
//! ACKs are 10 us apart, except in the `+slots` cases: 1 ms apart, so a batch
//! spans a second and the guarantee controller closes about three control
//! slots (16 RTTs = 320 ms each) and judges evaluation slots inside it. The
//! `abw=inline` case measures `A` and `P` with the inline estimator instead of
//! reading a shared source. NewReno is the baseline: compare ratios within
//! one run, the machine is shared.
//!
//! The `ack_cycle` group measures what one ACK costs a controller that
//! keeps per-packet send state: `on_sent` + `on_ack` + `on_end_acks` per
//! packet, in a steady flight of 2000 packets (20 ms at one packet per
//! 10 us) after 30 000 such cycles, so that BBR has left Startup. NewReno is
//! again the baseline.
//!
//! `cargo bench -p tput-benches --bench cc_on_ack`

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{BatchSize, Criterion, Throughput, criterion_group, criterion_main};
use tput_cc::{
    Ack, AlgorithmState, BandwidthSource, BbrMode, Congestion, CongestionController, CongestionKind, ControllerSpec,
    RttSample, SharedBandwidth,
};

/// ACKs per measured batch; criterion reports the time per ACK as elements/s.
const BATCH: u64 = 1000;

fn on_ack(c: &mut Criterion) {
    let mut group = c.benchmark_group("on_ack");
    for (s, gap_us, label) in [
        ("newreno", 10, "newreno"),
        ("cubic", 10, "cubic"),
        ("vegas", 10, "vegas"),
        ("ctcp", 10, "ctcp"),
        ("fixed:rate=20Mbit/s", 10, "fixed"),
        ("guarantee:target=20Mbit/s", 10, "guarantee"),
        ("newreno", 1000, "newreno+slots"),
        ("guarantee:target=20Mbit/s", 1000, "guarantee+slots"),
        (
            "guarantee:target=20Mbit/s,mode=paper",
            1000,
            "guarantee+slots,mode=paper",
        ),
        (
            "guarantee:target=20Mbit/s,abw=inline",
            1000,
            "guarantee+slots,abw=inline",
        ),
    ] {
        let spec: ControllerSpec = s.parse().expect("valid spec");
        let gap = Duration::from_micros(gap_us);
        let bw = SharedBandwidth::new();
        bw.set_available(tput_cc::units::Rate::from_mbit_per_sec(80));
        bw.set_physical(tput_cc::units::Rate::from_mbit_per_sec(100));
        let mut cc = spec.build_with(1200, Some(Arc::new(bw) as Arc<dyn BandwidthSource>));
        let rtt = Duration::from_millis(20);
        let sample = RttSample::uniform(rtt);
        let mut now = Instant::now() + Duration::from_secs(1);
        // Leave slow start: grow a little, then one loss.
        for _ in 0..200 {
            now += Duration::from_micros(100);
            cc.on_ack(now, &Ack::new(now - rtt, 1200, sample));
        }
        cc.on_congestion(now, &Congestion::new(CongestionKind::Loss, now - rtt / 2, 1200));
        now += rtt;
        // Every batch starts from the same state (a clone taken here), so the
        // figure does not drift with the number of iterations criterion picks.
        let start = now;
        group.throughput(Throughput::Elements(BATCH));
        group.bench_function(label, |b| {
            b.iter_batched_ref(
                || cc.clone(),
                |cc| {
                    let mut t = start;
                    for _ in 0..BATCH {
                        t += gap;
                        let ack = Ack::new(t - rtt, 1200, sample);
                        cc.on_ack(black_box(t), black_box(&ack));
                    }
                    black_box(cc.window())
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

fn ack_cycle(c: &mut Criterion) {
    let mut group = c.benchmark_group("ack_cycle");
    let gap = Duration::from_micros(10);
    let rtt = Duration::from_millis(20);
    let flight = 2000u32;
    for (s, label) in [("newreno", "newreno"), ("cubic", "cubic"), ("bbr", "bbr")] {
        let spec: ControllerSpec = s.parse().expect("valid spec");
        let mut cc = spec.build(1200);
        let t0 = Instant::now() + Duration::from_secs(1);
        for i in 0..flight {
            cc.on_sent(t0 + gap * i, 1200);
        }
        // One ACK and one send per cycle; packet k was sent at t0 + k * gap
        // and is acked one RTT later.
        let cycle = |cc: &mut Box<dyn CongestionController>, t: Instant| {
            let ack = Ack::new(t - rtt, 1200, RttSample::uniform(rtt));
            cc.on_ack(black_box(t), black_box(&ack));
            cc.on_end_acks(t, u64::from(flight - 1) * 1200, false);
            cc.on_sent(t, 1200);
        };
        let warm = 30_000u32;
        for k in 0..warm {
            cycle(&mut cc, t0 + rtt + gap * k);
        }
        if let AlgorithmState::Bbr { mode, .. } = cc.snapshot().state {
            assert!(mode != BbrMode::Startup, "BBR measured in Startup");
        }
        let start = t0 + rtt + gap * warm;
        group.throughput(Throughput::Elements(BATCH));
        group.bench_function(label, |b| {
            b.iter_batched_ref(
                || cc.clone(),
                |cc| {
                    for k in 0..BATCH as u32 {
                        cycle(cc, start + gap * k);
                    }
                    black_box(cc.window())
                },
                BatchSize::SmallInput,
            )
        });
    }
    group.finish();
}

criterion_group!(benches, on_ack, ack_cycle);
criterion_main!(benches);
