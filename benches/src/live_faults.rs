//! Live transfers through faults: a QUIC server, `tputctl relay`'s relay
//! ([`RelayThread`]) and a client, all on 127.0.0.1 in this process; every
//! transfer's bytes are verified by the receiver. Each fault runs as an
//! upload and as a download, and the table says what arrived, how long it
//! took and how the transfer ended.
//!
//! Each fault sits on the path the data takes (the relay's forward link for
//! an upload, its reverse link for a download). The faults: none (the baseline), 1 % random loss, 5 % loss in both
//! directions, a `drop` cut-off every 100 ms (connected 80 % of each
//! period), the rate dropping 10x and coming back, a NAT rebinding every
//! 500 ms (the client's address, as the server sees it, changes: QUIC's path
//! migration, RFC 9000 §9, must carry the transfer on), and a path that dies
//! for longer than the idle timeout (the transfer must fail with a clear
//! error within max(idle timeout, 3 PTO), RFC 9000 §10.1).

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tput_lab::relay::{RelayConfig, RelayLinks, RelayStats, RelayThread, parse_link_list};
use tput_transport::{Direction, Identity, NodeConfig, ServerTrust, TransferOutcome, TransferSpec, udp};

/// One fault: the link that carries the data and the one that carries the
/// acknowledgements (an upload's data goes through the relay's forward link,
/// a download's through its reverse link), and how often the NAT rebinds.
#[derive(Debug, Clone)]
pub struct Fault {
    /// Short name for the table.
    pub name: String,
    /// The data direction's link, in `tputctl relay --forward` syntax.
    pub data: String,
    /// The acknowledgement direction's link (`None`: the same rate and
    /// delay, unimpaired).
    pub acks: Option<String>,
    /// NAT rebinding period (`--rebind-every`).
    pub rebind_every: Option<Duration>,
    /// `true` when the path is dead for longer than the idle timeout: the
    /// expected result is a clear error, not a completed transfer.
    pub expect_failure: bool,
}

/// The faults of the table, on a `rate` link with `delay` each way, each
/// applied to the direction that carries the data. The rate drops at
/// `step` and comes back at `3 step`; the NAT rebinds every `step / 2`; the
/// dead path dies at `step` for ten minutes.
pub fn faults(rate_mbps: u64, delay_ms: u64, step: Duration) -> Vec<Fault> {
    let base = base_link(rate_mbps, delay_ms);
    let ms = step.as_millis();
    let f = |name: &str, data: String, acks: Option<String>| Fault {
        name: name.to_string(),
        data,
        acks,
        rebind_every: None,
        expect_failure: false,
    };
    let low = (rate_mbps / 10).max(1);
    vec![
        f("none", base.clone(), None),
        f("loss 1%", format!("{base},loss=0.01"), None),
        f(
            "loss 5% both ways",
            format!("{base},loss=0.05"),
            Some(format!("{base},loss=0.05")),
        ),
        f(
            "cut-off 100 ms, 95%",
            format!("{base},cutoff.period=100ms,cutoff.connected=0.95,cutoff.mode=drop"),
            None,
        ),
        f(
            "cut-off 100 ms, 80%",
            format!("{base},cutoff.period=100ms,cutoff.connected=0.8,cutoff.mode=drop"),
            None,
        ),
        f(
            "rate /10 and back",
            format!("{base},rate_schedule={ms}ms:{low}Mbit/s;{}ms:{rate_mbps}Mbit/s", 3 * ms),
            None,
        ),
        Fault {
            rebind_every: Some(step / 2),
            ..f(&format!("NAT rebinding / {} ms", ms / 2), base.clone(), None)
        },
        Fault {
            expect_failure: true,
            ..f(
                &format!("dead after {ms} ms"),
                // Connected for `step` of a 600 s period.
                format!(
                    "{base},cutoff.period=600s,cutoff.connected={},cutoff.mode=drop",
                    step.as_secs_f64() / 600.0
                ),
                None,
            )
        },
    ]
}

/// The unimpaired link: `rate`, `delay` and a 200-packet DropTail queue.
fn base_link(rate_mbps: u64, delay_ms: u64) -> String {
    format!("rate={rate_mbps}Mbit/s,delay={delay_ms}ms,queue_packets=200")
}

/// One transfer through one fault.
#[derive(Debug, Clone)]
pub struct Row {
    /// The fault's name.
    pub fault: String,
    /// Upload or download.
    pub direction: Direction,
    /// Bytes the transfer asked for.
    pub bytes: u64,
    /// Bytes the receiver verified against the pattern.
    pub verified: u64,
    /// Seconds from the start of the connection to the end of the transfer.
    pub secs: f64,
    /// `ok`, or the error the client reported.
    pub result: String,
    /// Whether the result is what the fault should produce (complete and
    /// verified; or, for a dead path, a clear error in bounded time).
    pub as_expected: bool,
    /// The relay's counters for this transfer.
    pub relay: RelayStats,
}

/// Sizes and timeouts of a run.
#[derive(Debug, Clone)]
pub struct Options {
    /// Bytes per transfer.
    pub bytes: u64,
    /// Link rate, Mbit/s.
    pub rate_mbps: u64,
    /// One-way delay, ms.
    pub delay_ms: u64,
    /// When the rate drops (it comes back at 3x this).
    pub step: Duration,
    /// Idle timeout of both ends.
    pub idle_timeout: Duration,
}

impl Options {
    /// The bench's size: 10 MB through 50 Mbit/s (1.6 s unimpaired), and
    /// `tputctl`'s idle timeout of 10 s.
    pub fn full() -> Options {
        Options {
            bytes: 10_000_000,
            rate_mbps: 50,
            delay_ms: 5,
            step: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(10),
        }
    }
}

fn config(idle_timeout: Duration) -> NodeConfig {
    NodeConfig {
        idle_timeout,
        mtu_discovery: false,
        ..NodeConfig::default()
    }
}

/// Starts a QUIC server on a thread of its own; returns its address and
/// the identity its client pins.
fn start_server(idle_timeout: Duration) -> Result<(SocketAddr, Identity), String> {
    let id = Identity::self_signed(&["localhost"]).map_err(|e| e.to_string())?;
    let (addr, _failure) = crate::spawn_server(id.clone(), config(idle_timeout), |_| {})?;
    Ok((addr, id))
}

/// Runs every fault of `faults` as an upload and a download; `progress`
/// sees one line per transfer.
pub fn run(o: &Options, faults: &[Fault], mut progress: impl FnMut(&str)) -> Result<Vec<Row>, String> {
    let (server, id) = start_server(o.idle_timeout)?;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let mut rows = Vec::new();
    for fault in faults {
        for direction in [Direction::Upload, Direction::Download] {
            let data = parse_link_list(&fault.data, "data link").map_err(|e| e.to_string())?;
            let acks = parse_link_list(
                fault.acks.as_deref().unwrap_or(&base_link(o.rate_mbps, o.delay_ms)),
                "acknowledgement link",
            )
            .map_err(|e| e.to_string())?;
            let links = match direction {
                Direction::Upload => RelayLinks {
                    forward: data,
                    reverse: Some(acks),
                },
                Direction::Download => RelayLinks {
                    forward: acks,
                    reverse: Some(data),
                },
            };
            let (forward, reverse) = links.configs().map_err(|e| e.to_string())?;
            let relay = RelayThread::start(
                RelayConfig {
                    listen: "127.0.0.1:0".parse().expect("an address"),
                    to: server,
                    forward,
                    reverse,
                    seed: 1,
                },
                fault.rebind_every,
            )
            .map_err(|e| e.to_string())?;
            let mut spec = TransferSpec::upload(o.bytes, "cubic".parse().expect("a controller"));
            spec.direction = direction;
            let t = Instant::now();
            // Bounded: a transfer that neither completes nor fails within
            // this long is a hang, reported as such.
            let limit = Duration::from_secs(300);
            let out = crate::runtime().block_on(async {
                tokio::time::timeout(
                    limit,
                    udp::transfer(
                        relay.addr(),
                        "localhost",
                        &trust,
                        config(o.idle_timeout),
                        vec![spec],
                        |_, _| {},
                    ),
                )
                .await
            });
            let secs = t.elapsed().as_secs_f64();
            let stats = relay.stop().map_err(|e| e.to_string())?;
            let outcome: Option<TransferOutcome> = match out {
                Ok(Ok(v)) => v.into_iter().next(),
                Ok(Err(e)) => return Err(format!("{}: {e}", fault.name)),
                Err(_) => None,
            };
            let (verified, result) = match &outcome {
                None => (0, format!("HANG: no result within {} s", limit.as_secs())),
                Some(o) => (
                    o.receiver.as_ref().map_or(0, |r| r.bytes),
                    o.error.clone().unwrap_or_else(|| "ok".into()),
                ),
            };
            let completed = outcome.as_ref().is_some_and(|x| x.ok()) && verified == o.bytes;
            let as_expected = if fault.expect_failure {
                // Connected for `step`, then silent. quinn-proto arms the
                // idle timer for max(idle, 3 PTO) (RFC 9000 §10.1) at the
                // last packet received and again at the first ack-eliciting
                // packet sent after it, so the end comes up to about two
                // timer lengths after the path died; 2 s more for the
                // handshake and slack.
                outcome.as_ref().is_some_and(|x| x.error.is_some())
                    && secs < o.step.as_secs_f64() + 2.0 * o.idle_timeout.as_secs_f64() + 2.0
            } else {
                completed
            };
            let row = Row {
                fault: fault.name.clone(),
                direction,
                bytes: o.bytes,
                verified,
                secs,
                result,
                as_expected,
                relay: stats,
            };
            progress(&format!(
                "{} {:?}: {} of {} B verified in {:.2} s: {}",
                row.fault, row.direction, row.verified, row.bytes, row.secs, row.result
            ));
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The table: one line per transfer.
pub fn table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| fault (on the data path) | direction | bytes | verified | time (s) | Mbit/s | data-path drops (random/cut/queue) | ack-path drops | rebinds | result | as expected |\n\
         |---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (data, acks) = match r.direction {
            Direction::Upload => (&r.relay.forward, &r.relay.reverse),
            Direction::Download => (&r.relay.reverse, &r.relay.forward),
        };
        let d = |x: &tput_lab::relay::DirectionStats| {
            format!(
                "{}/{}/{}",
                x.dropped_random.packets, x.dropped_cutoff.packets, x.dropped_queue.packets
            )
        };
        s += &format!(
            "| {} | {:?} | {} | {} | {:.2} | {:.1} | {} | {} | {} | {} | {} |\n",
            r.fault,
            r.direction,
            r.bytes,
            r.verified,
            r.secs,
            r.verified as f64 * 8.0 / r.secs.max(1e-9) / 1e6,
            d(data),
            d(acks),
            r.relay.rebinds,
            r.result,
            if r.as_expected { "yes" } else { "NO" }
        );
    }
    s
}
