//! Simulator speed with real QUIC: seed 000's dumbbell (bottleneck 100 Mbit/s,
//! 5 ms, 30 packets; access links 1 Gbit/s, 2.5 ms, 1000 packets) run through
//! `tput_lab::scenario::run`, so every packet is a quinn-proto packet
//! sealed and opened with TLS 1.3 keys and every payload byte is filled and
//! verified.
//!
//! Cases: (a) 1 NewReno flow for 10 s; (b) the Fig. 6 mix, 1
//! `guarantee:target=10Mbit/s` flow (target 10 Mbit/s) + 30 NewReno flows, for
//! 120 s. `TPUT_BENCH_SHORT=1` shortens them to 2 s and 5 s. The simulated time
//! includes the runner's 5 s drain after the scenario's duration.
//!
//! Per case it prints simulated seconds, CPU seconds of the process
//! (`/proc/self/stat` utime + stime, 10 ms resolution; wall time off Linux), wall
//! seconds, packets that crossed a link, link packets per CPU second and the
//! speed-up over real time (simulated / wall seconds), plus the payload MB the
//! receivers verified (a sanity check). The figures also go to
//! `$CARGO_TARGET_DIR/repro/sim_quic.json` (default: the workspace's `target/`).
//!
//! `cargo bench -p tput-benches --bench sim_quic [-- FILTER]` (add `TPUT_BENCH_SHORT=1` for a
//! quick check; `FILTER`, e.g. `b:`, runs only the cases whose name contains it)

use std::fmt::Write as _;
use std::time::{Duration, Instant};

use tput_benches::cpu_secs;
use tput_lab::scenario::{FlowGroup, LinkSpec, Scenario, TopologySpec, run};

fn link(rate: &str, delay: Duration, queue_packets: u32) -> LinkSpec {
    LinkSpec::new(rate.parse().expect("valid rate"), delay).with_queue_packets(queue_packets)
}

fn group(cc: &str, count: u32, target: Option<&str>) -> FlowGroup {
    let g = FlowGroup::new(cc.parse().expect("valid controller spec")).times(count);
    match target {
        Some(t) => g.with_target(t.parse().expect("valid rate")),
        None => g,
    }
}

/// Seed 000's dumbbell carrying `flows` for `secs` simulated seconds.
fn seed000(name: &str, secs: u64, flows: Vec<FlowGroup>) -> Scenario {
    let topology = TopologySpec::dumbbell(
        link("100Mbit/s", Duration::from_millis(5), 30),
        link("1Gbit/s", Duration::from_micros(2500), 1000),
    );
    Scenario {
        name: Some(name.into()),
        ..Scenario::new(Duration::from_secs(secs), topology, flows)
    }
}

struct Row {
    case: &'static str,
    sim: f64,
    cpu: f64,
    wall: f64,
    packets: u64,
    delivered_mb: f64,
}

fn measure(case: &'static str, s: &Scenario) -> Row {
    let (cpu0, wall0) = (cpu_secs(), Instant::now());
    let r = run(s, |_| {}).expect("scenario runs");
    let wall = wall0.elapsed().as_secs_f64();
    let cpu = cpu0.zip(cpu_secs()).map_or(wall, |(a, b)| b - a);
    let errors: usize = r.flows.iter().map(|f| f.errors.len()).sum();
    assert_eq!(errors, 0, "{case}: flows failed: {:?}", r.flows);
    let bytes: u64 = r.flows.iter().map(|f| f.bytes).sum();
    Row {
        case,
        sim: r.simulated_secs,
        cpu,
        wall,
        packets: r.link_packets,
        delivered_mb: bytes as f64 / 1e6,
    }
}

fn main() {
    let short = std::env::var_os("TPUT_BENCH_SHORT").is_some_and(|v| v == "1");
    let (a_secs, b_secs) = if short { (2, 5) } else { (10, 120) };
    let cases = [
        (
            "a: 1 newreno",
            seed000("1 newreno", a_secs, vec![group("newreno", 1, None)]),
        ),
        (
            "b: 1 guarantee + 30 newreno",
            seed000(
                "fig6",
                b_secs,
                vec![
                    group("guarantee:target=10Mbit/s,mode=paper", 1, Some("10Mbit/s")),
                    group("newreno", 30, None),
                ],
            ),
        ),
    ];
    // Like libtest: positional arguments select the cases whose name contains one.
    let filters: Vec<String> = std::env::args().skip(1).filter(|a| !a.starts_with('-')).collect();
    let rows: Vec<Row> = cases
        .iter()
        .filter(|(case, _)| filters.is_empty() || filters.iter().any(|f| case.contains(f.as_str())))
        .map(|(case, s)| measure(case, s))
        .collect();

    let mut table = tput_lab::report::Table::new()
        .left("case", 28)
        .right("sim s", 7)
        .right("cpu s", 7)
        .right("wall s", 7)
        .right("link pkts", 11)
        .right("pkts/cpu-s", 12)
        .right("x real", 8)
        .right("MB recv", 8);
    let mut json = format!("{{\"short\":{short},\"cases\":[");
    for (i, r) in rows.iter().enumerate() {
        let (rate, speedup) = (r.packets as f64 / r.cpu, r.sim / r.wall);
        table.row([
            r.case.to_string(),
            format!("{:.1}", r.sim),
            format!("{:.2}", r.cpu),
            format!("{:.2}", r.wall),
            r.packets.to_string(),
            format!("{rate:.0}"),
            format!("{speedup:.2}"),
            format!("{:.1}", r.delivered_mb),
        ]);
        let _ = write!(
            json,
            "{}{{\"case\":\"{}\",\"simulated_secs\":{},\"cpu_secs\":{},\"wall_secs\":{},\"link_packets\":{},\
             \"link_packets_per_cpu_sec\":{},\"speedup_over_real_time\":{},\"delivered_mb\":{}}}",
            if i == 0 { "" } else { "," },
            r.case,
            r.sim,
            r.cpu,
            r.wall,
            r.packets,
            rate,
            speedup,
            r.delivered_mb
        );
    }
    json.push_str("]}\n");
    print!("{}", table.text());

    let dir = tput_benches::repro_dir();
    let path = dir.join("sim_quic.json");
    match std::fs::create_dir_all(&dir).and_then(|()| std::fs::write(&path, json)) {
        Ok(()) => println!("wrote {}", path.display()),
        Err(e) => eprintln!("could not write {}: {e}", path.display()),
    }
}
