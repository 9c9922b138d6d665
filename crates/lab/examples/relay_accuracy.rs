//! How exactly the relay reproduces a link's rate and delay on 127.0.0.1.
//!
//! ```sh
//! cargo run --release -p tput-lab --example relay_accuracy -- RATE DELAY [SIZE] [SECS]
//! cargo run --release -p tput-lab --example relay_accuracy -- 36.864Mbit/s 50ms
//! cargo run --release -p tput-lab --example relay_accuracy -- 1Gbit/s 50ms 8972
//! ```
//!
//! Delay: datagrams of SIZE bytes (default 1200) paced at half the rate, so
//! none waits in the queue; each carries its send time, and the added delay
//! error is its one-way time minus the link's delay and serialization time.
//! Rate: datagrams offered at 1.2 times the rate; the delivered rate is
//! measured at the receiver over the last 90% of the arrivals, in wire bytes
//! (payload plus the link's 28 bytes of overhead).

use std::net::UdpSocket;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tput_cc::units::{Rate, parse_duration};
use tput_lab::live::relay::{Relay, RelayConfig, RelayLinks, RelayStats, parse_link_list, probe};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 2 {
        eprintln!("usage: relay_accuracy RATE DELAY [SIZE] [SECS]");
        std::process::exit(2);
    }
    let rate: Rate = args[0].parse().unwrap_or_else(|e| fail(&format!("{e}")));
    let delay = parse_duration(&args[1]).unwrap_or_else(|e| fail(&format!("{e}")));
    let size: usize = args
        .get(2)
        .map_or(Ok(1200), |s| s.parse())
        .unwrap_or_else(|_| fail("bad SIZE"));
    let secs: f64 = args
        .get(3)
        .map_or(Ok(3.0), |s| s.parse())
        .unwrap_or_else(|_| fail("bad SECS"));
    if !(16..=65_000).contains(&size) {
        fail("SIZE must be 16..=65000 bytes");
    }
    let bps = rate.bits_per_sec() as f64;
    let wire_bits = (size as f64 + 28.0) * 8.0;
    let link = format!("rate={},delay={},queue_packets=100000", args[0], args[1]);
    let links = RelayLinks {
        forward: parse_link_list(&link, "link").unwrap_or_else(|e| fail(&e.to_string())),
        reverse: None,
    };
    let (forward, reverse) = links.configs().unwrap_or_else(|e| fail(&e.to_string()));

    let sink = UdpSocket::bind("127.0.0.1:0").unwrap_or_else(|e| fail(&e.to_string()));
    let to = sink.local_addr().unwrap_or_else(|e| fail(&e.to_string()));
    let (addr_tx, addr_rx) = mpsc::channel();
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let relay = thread::spawn(move || -> RelayStats {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap_or_else(|e| fail(&e.to_string()));
        rt.block_on(async move {
            let relay = Relay::bind(RelayConfig {
                listen: "127.0.0.1:0".parse().unwrap_or_else(|_| fail("address")),
                to,
                forward,
                reverse,
                seed: 1,
            })
            .await
            .unwrap_or_else(|e| fail(&e.to_string()));
            let _ = addr_tx.send(relay.local_addr().unwrap_or_else(|e| fail(&e.to_string())));
            let stop = async move {
                let _ = stop_rx.await;
            };
            relay
                .run(stop, Duration::ZERO, |_| {})
                .await
                .unwrap_or_else(|e| fail(&e.to_string()))
        })
    });
    let addr = addr_rx.recv().unwrap_or_else(|_| fail("the relay did not start"));

    let pps = bps / wire_bits;
    let blast = |pps: f64, count: u64| {
        probe::blast(addr, &sink, size, pps, count, Duration::from_secs(2)).unwrap_or_else(|e| fail(&e.to_string()))
    };
    let paced = blast(pps * 0.5, (pps * 0.5 * secs) as u64);
    let expect_ns = delay.as_nanos() as f64 + wire_bits / bps * 1e9;
    let mut err: Vec<f64> = paced
        .iter()
        .map(|a| (a.one_way_ns() as f64 - expect_ns) / 1e6)
        .collect();
    err.sort_by(f64::total_cmp);
    let q = |p: f64| {
        err.get(((err.len() as f64 * p) as usize).min(err.len().saturating_sub(1)))
            .copied()
    };

    let flood = blast(pps * 1.2, (pps * 1.2 * secs) as u64);
    drop(stop_tx);
    let stats = relay.join().unwrap_or_else(|_| fail("the relay panicked"));
    let first = flood.len() / 10;
    let measured = if flood.len() > first + 1 {
        let span = (flood[flood.len() - 1].at_ns - flood[first].at_ns) as f64 / 1e9;
        (flood.len() - 1 - first) as f64 * wire_bits / span
    } else {
        0.0
    };
    println!(
        "link {} {}, {size}-byte datagrams, {secs} s per phase",
        args[0], args[1]
    );
    println!(
        "delay: {} of {} received; added delay error (ms): min {:.3} p50 {:.3} p99 {:.3} max {:.3}",
        paced.len(),
        (pps * 0.5 * secs) as u64,
        q(0.0).unwrap_or(f64::NAN),
        q(0.5).unwrap_or(f64::NAN),
        q(0.99).unwrap_or(f64::NAN),
        err.last().copied().unwrap_or(f64::NAN),
    );
    println!(
        "rate: delivered {:.3} Mbit/s of {:.3} configured ({:+.3}%)",
        measured / 1e6,
        bps / 1e6,
        (measured / bps - 1.0) * 100.0
    );
    let f = &stats.forward;
    println!(
        "receiver: {} datagrams received of {} the relay sent (the rest were lost in the operating system)",
        paced.len() + flood.len(),
        f.delivered.packets
    );
    println!(
        "relay: departures late p50 {:.0} us p99 {:.0} us max {:.0} us; overload drops {}; queue drops {}",
        f.late_p50_us, f.late_p99_us, f.late_max_us, f.dropped_overload.packets, f.dropped_queue.packets
    );
}

fn fail(msg: &str) -> ! {
    eprintln!("relay_accuracy: {msg}");
    std::process::exit(2)
}
