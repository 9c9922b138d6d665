//! `tputctl relay`: UDP through simulated links.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use tput_lab::live::relay::{self, RelayConfig, RelayLinks, RelayStats};
use tput_lab::scenario::LinkSpec;

use crate::args::*;
use crate::runtime;
use crate::{Failure, outln};

pub(crate) const RELAY_AFTER_HELP: &str = "\
A link is a comma-separated key=value list with the keys of a scenario's link table
(docs/scenarios.md); rate and delay are required:
  rate=RATE            link rate (required), e.g. 36.864Mbit/s, 1Gbit/s or iperf3's 10M
                       (k, M, G = 1000^n; bit/s or B/s)
  delay=DUR            one-way propagation delay (required), e.g. 50ms, 250us
  queue_packets=N      DropTail capacity in packets (default 1000), or
  queue_bytes=SIZE     DropTail capacity in wire bytes, e.g. 64KiB
  overhead_bytes=N     header bytes added to each datagram on the link (default 28: IPv4 + UDP)
  loss=P               random packet loss probability, 0..1, or
  ber=P                bit error rate, 0..1 (a packet of n wire bytes: 1 - (1 - ber)^(8n))
  cutoff.period=DUR, cutoff.connected=FRACTION, cutoff.mode=drop|hold|hold_abort|pause,
  cutoff.phase=DUR, cutoff.pause_lead=DUR
                       a periodic cut-off (pause: an IEEE 802.3x PAUSE before each cut)
  rate_schedule=AT:RATE;AT:RATE...
                       rate steps, times from the relay's start, e.g. 5s:10Mbit/s;10s:36.864Mbit/s
  trace=FILE           deliver at the opportunities of a Mahimahi packet-delivery trace (one line
                       per MTU-sized packet, in ms from the relay's start, repeating) instead of at
                       rate (which --reverse keeps), e.g. scenarios/traces/lte-markov-a.trace
  aqm=drop_tail|codel|fq_codel|red
                       the queue discipline (default drop_tail), limited by queue_packets/queue_bytes:
                       CoDel (RFC 8289), FQ-CoDel (RFC 8290), RED (Floyd & Jacobson 1993, as ns-2)
  aqm.target=DUR, aqm.interval=DUR
                       codel, fq_codel: target (default 5ms) and interval (default 100ms)
  aqm.ecn=true|false   mark ECN-capable packets instead of dropping (default: fq_codel on, others off)
  aqm.quantum=BYTES, aqm.flows=N
                       fq_codel: DRR quantum (default 1514) and flow queues (default 1024; flows are
                       told apart by client address and port)
  aqm.min_th=P, aqm.max_th=P, aqm.max_p=X, aqm.weight=W, aqm.gentle=BOOL, aqm.bytes=BOOL,
  aqm.mean_packet=BYTES, aqm.wait=BOOL
                       red: thresholds in packets (default 5, 15), max_p (0.1), queue weight (0.002),
                       gentle (true), byte mode (false), mean packet size (1000), wait (true)
Example: tputctl relay --listen 127.0.0.1:4434 --to 127.0.0.1:4433 \\
           --forward \"rate=36.864Mbit/s,delay=50ms,queue_bytes=64KiB,ber=1e-8\"
--reverse defaults to --forward without its impairments (cut-off, rate schedule, loss, trace).
--config FILE holds [forward] and [reverse] tables with the same keys (cutoff as a table,
rate_schedule as [{ at = \"5s\", rate = \"10Mbit/s\" }]).
ECN: the relay reads each datagram's ECN field (IP_TOS / IPV6_TCLASS) and sends it on with the
codepoint the link gives back: unchanged, or CE where a queue with aqm.ecn=true marked an
ECN-capable datagram instead of dropping it (RFC 3168 §5). tputctl send/serve/loopback send
ECT(0) by default (--no-ecn: Not-ECT), so their transfers see marks, not AQM drops.
Every --interval: delivered rate and counters per direction; at exit (Ctrl-C or --time):
totals, drops by cause (queue = overflow, aqm, cutoff, random, overload = the relay could not
keep up), CE marks, the queue's high-water mark, the queueing delay (p50, p99) and how late
departures left (p50, p99, max); then per client address: offered, delivered, lost, marked and
its own queueing delay p50/p99 (with fq_codel, its flow queue's).
-v logs every cut-off and rate step.
Units: durations as 250us, 5ms, 2s (bare numbers: seconds); sizes as 1000B, 64KiB.";

#[derive(Args)]
pub(crate) struct RelayArgs {
    /// Address clients send to (the relay's own).
    #[arg(long, value_parser = parse_socket_addr)]
    listen: SocketAddr,
    /// Address of the server the datagrams go to.
    #[arg(long, value_parser = parse_socket_addr)]
    to: SocketAddr,
    /// The link from clients to the server, as key=value,... (see below).
    #[arg(long, value_name = "LINK", value_parser = parse_link, required_unless_present = "config", conflicts_with = "config")]
    forward: Option<LinkSpec>,
    /// The link from the server to clients [default: --forward without impairments].
    #[arg(long, value_name = "LINK", value_parser = parse_link, conflicts_with = "config")]
    reverse: Option<LinkSpec>,
    /// A TOML file with a `[forward]` and an optional `[reverse]` link table (instead of --forward/--reverse).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Seed of the links' random losses.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Statistics interval, e.g. 1s or 0.5; 0 for none.
    #[arg(short = 'i', long, default_value = "1s", value_parser = parse_secs)]
    interval: Duration,
    /// Stop after this long, e.g. 30s or 30 [default: until Ctrl-C].
    #[arg(short = 't', long, value_parser = parse_secs)]
    time: Option<Duration>,
    /// Emulate a NAT rebinding: every this long, move each client to a new
    /// upstream source port (the server sees the client's address change;
    /// QUIC migrates the connection, RFC 9000 §9.3), e.g. 2s [default: never].
    #[arg(long, value_name = "DURATION", value_parser = parse_secs)]
    rebind_every: Option<Duration>,
    /// One JSON document at exit instead of text.
    #[arg(short = 'J', long)]
    json: bool,
}

pub(crate) fn parse_link(s: &str) -> Result<LinkSpec, String> {
    relay::parse_link_list(s, "link").map_err(|e| e.to_string())
}

pub(crate) fn run(args: RelayArgs) -> Result<bool, Failure> {
    let links = match (&args.config, &args.forward) {
        (Some(path), _) => RelayLinks::from_toml_file(path).map_err(|e| Failure::Input(e.to_string()))?,
        (None, Some(f)) => RelayLinks {
            forward: f.clone(),
            reverse: args.reverse.clone(),
        },
        (None, None) => return Err(Failure::Input("give --forward or --config".into())),
    };
    let (forward, reverse) = links.configs().map_err(|e| Failure::Input(e.to_string()))?;
    let rt = runtime()?;
    rt.block_on(async move {
        let relay = relay::Relay::bind(RelayConfig {
            listen: args.listen,
            to: args.to,
            forward,
            reverse,
            seed: args.seed,
        })
        .await
        .map_err(|e| match e {
            tput_lab::Error::Invalid(m) => Failure::Input(m),
            e => Failure::Run(e.into()),
        })?;
        let relay = relay.rebind_every(args.rebind_every.unwrap_or_default());
        let local = relay.local_addr().map_err(|e| Failure::Run(e.into()))?;
        if !args.json {
            outln!("relaying {local} -> {} (Ctrl-C to stop)", args.to);
        }
        let time = args.time;
        let stop = async move {
            let ctrl_c = async {
                if tokio::signal::ctrl_c().await.is_err() {
                    std::future::pending::<()>().await;
                }
            };
            match time {
                Some(t) => tokio::select! {
                    _ = tokio::time::sleep(t) => {}
                    _ = ctrl_c => {}
                },
                None => ctrl_c.await,
            }
        };
        let json = args.json;
        let mut last = RelayStats::default();
        let stats = relay
            .run(stop, args.interval, |s| {
                if !json {
                    print_relay_interval(&last, s);
                }
                last = s.clone();
            })
            .await
            .map_err(|e| Failure::Run(e.into()))?;
        for (name, d) in [("forward", &stats.forward), ("reverse", &stats.reverse)] {
            if d.dropped_overload.packets > 0 {
                eprintln!(
                    "tputctl: warning: the relay could not keep up: {} {name} datagrams dropped by overload",
                    d.dropped_overload.packets
                );
            }
        }
        if json {
            let doc = serde_json::json!({
                "tputctl": env!("CARGO_PKG_VERSION"),
                "command": "relay",
                "listen": local.to_string(),
                "to": args.to.to_string(),
                "forward": links.forward,
                "reverse": links.reverse,
                "stats": stats,
            });
            outln!("{doc}");
        } else {
            print_relay_summary(&stats);
        }
        Ok(true)
    })
}

/// One line per direction for the interval from `last` to `now`.
pub(crate) fn print_relay_interval(last: &RelayStats, now: &RelayStats) {
    let secs = (now.elapsed_secs - last.elapsed_secs).max(1e-9);
    for (name, a, b) in [
        ("fwd", &last.forward, &now.forward),
        ("rev", &last.reverse, &now.reverse),
    ] {
        let bits = (b.delivered.bytes - a.delivered.bytes) as f64 * 8.0;
        outln!(
            "{:7.2}-{:<7.2} s {name} {:>9.3} Mbit/s {:>7} pkts  drops queue {} aqm {} cutoff {} random {} overload {}  marked {}  queue max {} pkts {} B",
            last.elapsed_secs,
            now.elapsed_secs,
            bits / secs / 1e6,
            b.delivered.packets - a.delivered.packets,
            b.dropped_queue.packets - a.dropped_queue.packets,
            b.dropped_aqm.packets - a.dropped_aqm.packets,
            b.dropped_cutoff.packets - a.dropped_cutoff.packets,
            b.dropped_random.packets - a.dropped_random.packets,
            b.dropped_overload.packets - a.dropped_overload.packets,
            b.marked.packets - a.marked.packets,
            b.queue_high_water.packets,
            b.queue_high_water.bytes,
        );
    }
}

pub(crate) fn print_relay_summary(s: &RelayStats) {
    outln!(
        "relayed for {:.2} s, {} client address(es), {} rebinding(s)",
        s.elapsed_secs,
        s.clients,
        s.rebinds
    );
    for (name, d) in [("forward", &s.forward), ("reverse", &s.reverse)] {
        outln!(
            "{name}: offered {} pkts {} B ({} ECN-capable), delivered {} pkts {} B ({:.3} Mbit/s over {:.2} s active); drops queue {} aqm {} cutoff {} random {} overload {}; marked CE {}; queue max {} pkts {} B; queueing delay p50 {:.2} ms p99 {:.2} ms; late p50 {:.0} us p99 {:.0} us max {:.0} us",
            d.offered.packets,
            d.offered.bytes,
            d.offered_ecn_capable.packets,
            d.delivered.packets,
            d.delivered.bytes,
            d.delivered_bps / 1e6,
            d.active_secs,
            d.dropped_queue.packets,
            d.dropped_aqm.packets,
            d.dropped_cutoff.packets,
            d.dropped_random.packets,
            d.dropped_overload.packets,
            d.marked.packets,
            d.queue_high_water.packets,
            d.queue_high_water.bytes,
            d.queue_delay_p50_ms,
            d.queue_delay_p99_ms,
            d.late_p50_us,
            d.late_p99_us,
            d.late_max_us,
        );
        for f in &d.flows {
            outln!(
                "  client {}: offered {} pkts ({} ECN-capable), delivered {} pkts ({:.3} Mbit/s), lost {}, marked CE {}; queueing delay p50 {:.1} ms p99 {:.1} ms",
                f.client,
                f.offered.packets,
                f.offered_ecn_capable.packets,
                f.delivered.packets,
                f.delivered_bps / 1e6,
                f.offered.packets.saturating_sub(f.delivered.packets),
                f.marked.packets,
                f.queue_delay_p50_ms,
                f.queue_delay_p99_ms,
            );
        }
    }
}
