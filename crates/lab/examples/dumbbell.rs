//! The seed-000 dumbbell in the simulator: one throughput-guarantee flow with
//! a 20 Mbit/s target against NewReno flows (1, then 5 from 5 s, then 30 from
//! 10 s: the paper's Fig. 4 timeline), real QUIC over a 100 Mbit/s, 5 ms,
//! 30-packet bottleneck, in virtual time.
//!
//! ```sh
//! cargo run --release -p tput-transport --example dumbbell -- [SECONDS] [SEED]
//! ```

use std::process::ExitCode;
use std::time::{Duration, Instant};

use tput_lab::scenario::{FlowGroup, LinkSpec, Scenario, TopologySpec, run};

fn link(rate: &str, delay: Duration, queue: u32) -> LinkSpec {
    LinkSpec::new(rate.parse().expect("valid rate"), delay).with_queue_packets(queue)
}

fn group(cc: &str, count: u32, start_secs: u64) -> FlowGroup {
    FlowGroup::new(cc.parse().expect("valid spec"))
        .times(count)
        .starting(Duration::from_secs(start_secs))
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parse = |i: usize, default: u64, what: &str| -> Result<u64, String> {
        args.get(i).map_or(Ok(default), |s| {
            s.parse().map_err(|_| format!("{what} `{s}` is not a whole number"))
        })
    };
    let (secs, seed) = match (parse(0, 15, "SECONDS"), parse(1, 1, "SEED")) {
        (Ok(s), Ok(seed)) if s >= 1 => (s, seed),
        (Ok(_), Ok(_)) => {
            eprintln!("error: SECONDS must be at least 1");
            return ExitCode::from(2);
        }
        (Err(e), _) | (_, Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let guarantee = group("guarantee:target=20Mbit/s,eval=32rtt,slot=16rtt,mode=paper", 1, 0)
        .with_target("20Mbit/s".parse().expect("valid rate"));
    let mut flows = vec![guarantee, group("newreno", 1, 0)];
    if secs > 5 {
        flows.push(group("newreno", 4, 5));
    }
    if secs > 10 {
        flows.push(group("newreno", 25, 10));
    }
    let topology = TopologySpec::dumbbell(
        link("100Mbit/s", Duration::from_millis(5), 30),
        link("1Gbit/s", Duration::from_micros(2500), 1000),
    );
    let scenario = Scenario {
        name: Some("seed000-fig4".into()),
        seed,
        ..Scenario::new(Duration::from_secs(secs), topology, flows)
    };
    let t = Instant::now();
    let result = match run(&scenario, |_| {}) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let wall = t.elapsed().as_secs_f64();
    let g = &result.flows[0];
    println!(
        "{secs} s simulated in {wall:.2} s wall ({:.1}x real time), {} link packets",
        secs as f64 / wall,
        result.link_packets
    );
    println!("guarantee flow: per-second throughput (Mbit/s) and the controller's slot length s:");
    for (slot, iv) in g.slots.iter().zip(&g.intervals) {
        let s = iv.controller.as_ref().and_then(|c| match &c.state {
            tput_cc::AlgorithmState::Guarantee { slot_rtts, .. } => Some(*slot_rtts),
            _ => None,
        });
        println!(
            "  {:>3} s  {:>5.1} Mbit/s  {}  s={}",
            slot.index,
            slot.throughput_bps / 1e6,
            if slot.met { "met   " } else { "missed" },
            s.map_or("-".into(), |s| s.to_string())
        );
    }
    println!(
        "success ratio {:.2} over {} one-second slots",
        g.success_ratio.unwrap_or(0.0),
        g.slots.len()
    );
    let reno: Vec<f64> = result.flows[1..]
        .iter()
        .map(|f| f.bytes as f64 * 8.0 / 1e6 / secs as f64)
        .collect();
    println!(
        "{} NewReno flows, mean {:.1} Mbit/s",
        reno.len(),
        reno.iter().sum::<f64>() / reno.len() as f64
    );
    println!(
        "bottleneck: utilisation {:.3}, {} queue drops",
        result.bottleneck.utilisation, result.bottleneck.dropped_queue.packets
    );
    ExitCode::SUCCESS
}
