//! Simulated link packets per CPU-second through a 40-pair dumbbell.
//!
//! Each pair runs an ACK-clocked window source (20 x 1000 B datagrams in
//! flight) and a receiver that answers every datagram with a 40 B ACK. The
//! windows fit in the path's bandwidth-delay product plus the bottleneck
//! queue, so the 1 Gbit/s bottleneck runs full without losses. One "element"
//! is one packet crossing one link.

// `criterion_group!` generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::Duration;

use bytes::Bytes;
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use tput_netsim::{
    Addr, Datagram, Dumbbell, DumbbellConfig, Ecn, FlowId, Host, LinkConfig, QueueLimit, Rate, SimTime, Simulator,
};

struct Source {
    dst: Addr,
    flow: FlowId,
    window: u32,
    in_flight: u32,
    payload: Bytes,
}

impl Host for Source {
    fn on_datagram(&mut self, _: SimTime, _: Addr, _: FlowId, _: Ecn, _: Bytes) {
        self.in_flight -= 1;
    }
    fn poll_transmit(&mut self, _: SimTime) -> Option<Datagram> {
        if self.in_flight >= self.window {
            return None;
        }
        self.in_flight += 1;
        // A reference-counted clone: the payload content is irrelevant here.
        Some(Datagram {
            dst: self.dst,
            flow: self.flow,
            ecn: Ecn::NotEct,
            payload: self.payload.clone(),
        })
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        None
    }
    fn on_timeout(&mut self, _: SimTime) {}
}

struct Sink {
    pending: Option<(Addr, FlowId)>,
    ack: Bytes,
}

impl Host for Sink {
    fn on_datagram(&mut self, _: SimTime, from: Addr, flow: FlowId, _: Ecn, _: Bytes) {
        self.pending = Some((from, flow));
    }
    fn poll_transmit(&mut self, _: SimTime) -> Option<Datagram> {
        let (dst, flow) = self.pending.take()?;
        Some(Datagram {
            dst,
            flow,
            ecn: Ecn::NotEct,
            payload: self.ack.clone(),
        })
    }
    fn poll_timeout(&mut self) -> Option<SimTime> {
        None
    }
    fn on_timeout(&mut self, _: SimTime) {}
}

fn build() -> (Simulator, tput_netsim::LinkId) {
    let d = Dumbbell::build(&DumbbellConfig::new(
        40,
        LinkConfig::new(Rate::from_gbit_per_sec(10), Duration::from_micros(500)),
        LinkConfig::new(Rate::from_gbit_per_sec(1), Duration::from_millis(2)).with_queue(QueueLimit::Packets(1000)),
    ))
    .expect("valid dumbbell");
    let mut sim = Simulator::new(d.topology.clone(), 1);
    let data = Bytes::from(vec![0u8; 1000]);
    let ack = Bytes::from(vec![0u8; 40]);
    for i in 0..40 {
        let dst = Addr::new(d.receivers[i], 80);
        sim.attach(
            dst,
            Sink {
                pending: None,
                ack: ack.clone(),
            },
        )
        .expect("free address");
        sim.attach(
            Addr::new(d.senders[i], 1000),
            Source {
                dst,
                flow: i as u32,
                window: 20,
                in_flight: 0,
                payload: data.clone(),
            },
        )
        .expect("free address");
    }
    (sim, d.bottleneck)
}

const SIM_TIME: SimTime = SimTime::from_secs(1);

fn bench(c: &mut Criterion) {
    let (mut sim, bottleneck) = build();
    sim.run_until(SIM_TIME);
    let link_packets = sim.link_packets();
    let b = sim.link_stats(bottleneck);
    assert_eq!(b.dropped().packets, 0, "the bench scenario must not drop");
    assert!(b.utilisation > 0.95, "bottleneck not saturated: {b:?}");

    let mut g = c.benchmark_group("dumbbell");
    g.throughput(Throughput::Elements(link_packets));
    g.sample_size(10);
    g.bench_function("40_pairs_1s_link_packets", |bench| {
        bench.iter(|| {
            let (mut sim, _) = build();
            sim.run_until(SIM_TIME);
            black_box(sim.link_packets())
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
