//! Cost of one `on_ack` call per controller, in congestion avoidance at a
//! steady 20 ms RTT (issue target: <= 50 ns on the 2-core reference machine).
//!
//! `cargo bench -p tput-benches --bench cc_on_ack`

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use tput_cc::{Ack, BandwidthSource, Congestion, CongestionKind, ControllerSpec, RttSample, SharedBandwidth};

fn on_ack(c: &mut Criterion) {
    let mut group = c.benchmark_group("on_ack");
    for s in [
        "newreno",
        "cubic",
        "vegas",
        "ctcp",
        "fixed:rate=20Mbit/s",
        "guarantee:target=20Mbit/s",
    ] {
        let spec: ControllerSpec = s.parse().expect("valid spec");
        let bw = SharedBandwidth::new();
        bw.set_available(80_000_000);
        bw.set_physical(100_000_000);
        let mut cc = spec.build_with(1200, Some(Arc::new(bw) as Arc<dyn BandwidthSource>));
        let rtt = Duration::from_millis(20);
        let sample = RttSample::uniform(rtt);
        let mut now = Instant::now() + Duration::from_secs(1);
        // Leave slow start: grow a little, then one loss.
        for _ in 0..200 {
            now += Duration::from_micros(100);
            cc.on_ack(
                now,
                &Ack {
                    sent: now - rtt,
                    bytes: 1200,
                    rtt: sample,
                    app_limited: false,
                },
            );
        }
        cc.on_congestion(
            now,
            &Congestion {
                kind: CongestionKind::Loss,
                sent: now - rtt / 2,
                lost_bytes: 1200,
            },
        );
        now += rtt;
        group.bench_function(spec.name(), |b| {
            b.iter(|| {
                now += Duration::from_micros(10);
                let ack = Ack {
                    sent: now - rtt,
                    bytes: 1200,
                    rtt: sample,
                    app_limited: false,
                };
                cc.on_ack(black_box(now), black_box(&ack));
                black_box(cc.window())
            })
        });
    }
    group.finish();
}

criterion_group!(benches, on_ack);
criterion_main!(benches);
