//! The live fault table: verified QUIC transfers through the relay's faults,
//! each as an upload and as a download, with a server, the relay
//! ([`RelayThread`]) and a client on 127.0.0.1 in this process.
//!
//! One list of faults ([`faults`]) serves the relay's tests (at toy size,
//! [`Options::toy`]) and `cargo bench -p tput-benches --bench live_faults`
//! (at full size, [`Options::full`]). Each fault sits on the path the data
//! takes (the relay's forward link for an upload, its reverse link for a
//! download): none (the baseline), 1 % random loss, 5 % loss in both
//! directions, a `drop` cut-off every 100 ms (connected 95 % and 80 % of each
//! period), the rate dropping tenfold and coming back, a NAT rebinding (the
//! client's address, as the server sees it, changes: QUIC's path migration,
//! RFC 9000 §9, must carry the transfer on), 100 ms of delay each way, and a
//! path that dies for longer than the idle timeout.
//!
//! What a row must show holds on any machine, however loaded: the transfer
//! completes with every byte verified by the receiver (or, on the dead path,
//! fails with "timed out" within the idle timeout of the path's death plus
//! [`DEAD_PATH_SLACK`]), and the relay's counters show that the fault
//! happened (drops by cause on the right link, the rate back at the end,
//! rebindings, an RTT no shorter than the delay allows). How long a
//! transfer took is printed, never judged.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use tput_transport::{Direction, Identity, NodeConfig, ServerTrust, TransferOutcome, TransferSpec, udp};

use super::relay::{DirectionStats, RelayConfig, RelayLinks, RelayStats, RelayThread, parse_link_list};

/// How long after the idle timeout (counted from the path's death) a
/// transfer over a dead path may still take to report its failure: packets
/// still in the relay's queue when the path dies, the close's draining at
/// the end that learns of it from the other's close (three probe timeouts,
/// RFC 9000 §10.2: under a second on these links), and a loaded machine's
/// late timers.
pub const DEAD_PATH_SLACK: Duration = Duration::from_secs(3);

/// What the relay must show for a fault to have happened.
#[derive(Debug, Clone, PartialEq)]
pub enum Evidence {
    /// Nothing (the baseline).
    None,
    /// Random drops on the data link of about this probability, and on the
    /// acknowledgement link too when `both_ways`.
    Loss {
        /// The configured loss probability.
        p: f64,
        /// The acknowledgement link loses too.
        both_ways: bool,
    },
    /// Cut-off drops on the data link, none on the acknowledgement link.
    Cutoff,
    /// The data link is back at this rate at the end.
    RateBack(u64),
    /// At least two NAT rebindings.
    Rebinding,
    /// No RTT sample below twice this one-way delay.
    Delay(Duration),
    /// The path dies at this moment of the relay's clock: the transfer must
    /// fail with "timed out" within the idle timeout after it (plus
    /// [`DEAD_PATH_SLACK`]).
    DeadAfter(Duration),
}

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
    /// What the relay must show.
    pub evidence: Evidence,
}

impl Fault {
    /// Whether the expected end is a clear error rather than a verified transfer.
    pub fn expect_failure(&self) -> bool {
        matches!(self.evidence, Evidence::DeadAfter(_))
    }
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
    /// When the rate drops (it comes back at 3x this), and when the dead
    /// path dies.
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

    /// The tests' size: 1 MB through 50 Mbit/s with 2 ms each way, the rate
    /// step at 100 ms, a 2 s idle timeout.
    pub fn toy() -> Options {
        Options {
            bytes: 1_000_000,
            rate_mbps: 50,
            delay_ms: 2,
            step: Duration::from_millis(100),
            idle_timeout: Duration::from_secs(2),
        }
    }

    /// The unimpaired link: the rate, the delay and a 200-packet DropTail queue.
    fn base_link(&self) -> String {
        format!(
            "rate={}Mbit/s,delay={}ms,queue_packets=200",
            self.rate_mbps, self.delay_ms
        )
    }
}

/// The faults of the table for `o`'s link, each applied to the direction
/// that carries the data. The rate drops at `step` and comes back at
/// `3 step`; the NAT rebinds every `step / 2`; the dead path dies at `step`
/// for ten minutes.
pub fn faults(o: &Options) -> Vec<Fault> {
    let base = o.base_link();
    let ms = o.step.as_millis();
    let f = |name: &str, data: String, acks: Option<String>, evidence: Evidence| Fault {
        name: name.to_string(),
        data,
        acks,
        rebind_every: None,
        evidence,
    };
    let low = (o.rate_mbps / 10).max(1);
    let long = Duration::from_millis(100);
    vec![
        f("none", base.clone(), None, Evidence::None),
        f(
            "loss 1%",
            format!("{base},loss=0.01"),
            None,
            Evidence::Loss {
                p: 0.01,
                both_ways: false,
            },
        ),
        f(
            "loss 5% both ways",
            format!("{base},loss=0.05"),
            Some(format!("{base},loss=0.05")),
            Evidence::Loss {
                p: 0.05,
                both_ways: true,
            },
        ),
        f(
            "cut-off 100 ms, 95%",
            format!("{base},cutoff.period=100ms,cutoff.connected=0.95,cutoff.mode=drop"),
            None,
            Evidence::Cutoff,
        ),
        f(
            "cut-off 100 ms, 80%",
            format!("{base},cutoff.period=100ms,cutoff.connected=0.8,cutoff.mode=drop"),
            None,
            Evidence::Cutoff,
        ),
        f(
            "rate /10 and back",
            format!(
                "{base},rate_schedule={ms}ms:{low}Mbit/s;{}ms:{}Mbit/s",
                3 * ms,
                o.rate_mbps
            ),
            None,
            Evidence::RateBack(o.rate_mbps * 1_000_000),
        ),
        Fault {
            rebind_every: Some(o.step / 2),
            ..f(
                &format!("NAT rebinding / {} ms", ms / 2),
                base.clone(),
                None,
                Evidence::Rebinding,
            )
        },
        {
            let link = format!("rate={}Mbit/s,delay=100ms,queue_packets=200", o.rate_mbps);
            f("delay 100 ms", link.clone(), Some(link), Evidence::Delay(long))
        },
        f(
            &format!("dead after {ms} ms"),
            // Connected for `step` of a 600 s period.
            format!(
                "{base},cutoff.period=600s,cutoff.connected={},cutoff.mode=drop",
                o.step.as_secs_f64() / 600.0
            ),
            None,
            Evidence::DeadAfter(o.step),
        ),
    ]
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
    /// The smallest RTT the sender measured, ms (`None` without records).
    pub min_rtt_ms: Option<f64>,
    /// What did not go as the fault should make it go (empty: as expected):
    /// not complete and verified (or, for a dead path, no clear error in
    /// bounded time), or no sign in the relay's counters that the fault
    /// happened.
    pub problems: Vec<String>,
    /// The relay's counters for this transfer.
    pub relay: RelayStats,
}

impl Row {
    /// Whether the transfer ended as its fault should make it end.
    pub fn as_expected(&self) -> bool {
        self.problems.is_empty()
    }

    /// The relay's counters for the link that carried the data, and for the
    /// one that carried the acknowledgements.
    pub fn links(&self) -> (&DirectionStats, &DirectionStats) {
        match self.direction {
            Direction::Upload => (&self.relay.forward, &self.relay.reverse),
            Direction::Download => (&self.relay.reverse, &self.relay.forward),
        }
    }
}

fn config(idle_timeout: Duration) -> NodeConfig {
    NodeConfig::default()
        .with_idle_timeout(idle_timeout)
        .with_mtu_discovery(false)
}

/// A current-thread runtime, as `tputctl` runs its live loops.
fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("a tokio runtime: {e}"))
}

/// Starts a QUIC server on a thread of its own (it serves until the process
/// ends); returns its address and the identity its client pins.
fn start_server(idle_timeout: Duration) -> Result<(SocketAddr, Identity), String> {
    let id = Identity::self_signed(&["localhost"]).map_err(|e| e.to_string())?;
    let (addr, _failed) = super::spawn_server(id.clone(), config(idle_timeout), |_| {})?;
    Ok((addr, id))
}

/// Runs every fault of `faults` as an upload and a download; `progress`
/// sees one line per transfer.
pub fn run(o: &Options, faults: &[Fault], mut progress: impl FnMut(&str)) -> Result<Vec<Row>, String> {
    let (server, id) = start_server(o.idle_timeout)?;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let rt = runtime()?;
    let mut rows = Vec::new();
    for fault in faults {
        for direction in [Direction::Upload, Direction::Download] {
            let data = parse_link_list(&fault.data, "data link").map_err(|e| e.to_string())?;
            let acks = parse_link_list(fault.acks.as_deref().unwrap_or(&o.base_link()), "acknowledgement link")
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
            // A transfer that neither completes nor fails within this long
            // is a hang, reported as such.
            let limit = Duration::from_secs(600);
            let out = rt.block_on(async {
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
                Some(x) => (
                    x.receiver.as_ref().map_or(0, |r| r.bytes),
                    x.error.as_ref().map_or_else(|| "ok".into(), ToString::to_string),
                ),
            };
            let min_rtt_ms = outcome.as_ref().and_then(|x| {
                x.intervals
                    .iter()
                    .map(|i| i.min_rtt_ms)
                    .filter(|r| *r > 0.0)
                    .reduce(f64::min)
            });
            let mut row = Row {
                fault: fault.name.clone(),
                direction,
                bytes: o.bytes,
                verified,
                secs,
                result,
                min_rtt_ms,
                problems: Vec::new(),
                relay: stats,
            };
            row.problems = problems(fault, o, &row, outcome.as_ref());
            progress(&format!(
                "{} {:?}: {} of {} B verified in {:.2} s: {}{}",
                row.fault,
                row.direction,
                row.verified,
                row.bytes,
                row.secs,
                row.result,
                if row.as_expected() {
                    String::new()
                } else {
                    format!(" (NOT as expected: {})", row.problems.join("; "))
                }
            ));
            rows.push(row);
        }
    }
    Ok(rows)
}

/// What in `row` does not go as `fault` should make it go.
fn problems(fault: &Fault, o: &Options, row: &Row, outcome: Option<&TransferOutcome>) -> Vec<String> {
    let mut bad = Vec::new();
    let (data, acks) = row.links();
    let share = |d: &DirectionStats| d.dropped_random.packets as f64 / d.offered.packets.max(1) as f64;
    match &fault.evidence {
        Evidence::DeadAfter(at) => {
            if !row.result.contains("timed out") {
                bad.push(format!("expected a time-out, got: {}", row.result));
            }
            let bound = *at + o.idle_timeout + DEAD_PATH_SLACK;
            if row.secs > bound.as_secs_f64() {
                bad.push(format!(
                    "failed after {:.1} s, beyond {:.1} s (death + idle timeout + {} s)",
                    row.secs,
                    bound.as_secs_f64(),
                    DEAD_PATH_SLACK.as_secs()
                ));
            }
            return bad;
        }
        Evidence::None => {}
        Evidence::Loss { p, both_ways } => {
            let mut links = vec![("data", data)];
            if *both_ways {
                links.push(("acknowledgement", acks));
            }
            for (what, d) in links {
                // Seeded losses: about p of what the link was offered.
                if !(p / 5.0..p * 3.0).contains(&share(d)) {
                    bad.push(format!(
                        "{what} link lost {} of {} datagrams at random, not about {p}",
                        d.dropped_random.packets, d.offered.packets
                    ));
                }
            }
            if !both_ways && acks.dropped_random.packets > 0 {
                bad.push("the acknowledgement link has no loss, yet dropped some".into());
            }
        }
        Evidence::Cutoff => {
            if data.dropped_cutoff.packets == 0 {
                bad.push("no datagram dropped by the cut-off on the data link".into());
            }
            if acks.dropped_cutoff.packets > 0 {
                bad.push("cut-off drops on the acknowledgement link, which has no cut-off".into());
            }
        }
        Evidence::RateBack(bps) => {
            if data.rate_bps != *bps {
                bad.push(format!(
                    "the data link ended at {} bit/s, not back at {bps}",
                    data.rate_bps
                ));
            }
        }
        Evidence::Rebinding => {
            if row.relay.rebinds < 2 {
                bad.push(format!("{} NAT rebindings, expected at least 2", row.relay.rebinds));
            }
        }
        Evidence::Delay(one_way) => {
            // The relay never forwards early: no RTT below the two delays.
            let floor = 2.0 * one_way.as_secs_f64() * 1e3;
            match row.min_rtt_ms {
                Some(rtt) if rtt >= floor => {}
                other => bad.push(format!("minimum RTT {other:?} ms, expected at least {floor} ms")),
            }
        }
    }
    let complete = outcome.is_some_and(TransferOutcome::ok) && row.verified == row.bytes;
    if !complete {
        bad.insert(
            0,
            format!(
                "not complete: {} of {} B verified: {}",
                row.verified, row.bytes, row.result
            ),
        );
    }
    bad
}

/// The table: one line per transfer.
pub fn table(rows: &[Row]) -> String {
    let mut s = String::from(
        "| fault (on the data path) | direction | bytes | verified | time (s) | Mbit/s | min RTT (ms) | data-path drops (random/cut/queue/overload) | ack-path drops | rebinds | result | as expected |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for r in rows {
        let (data, acks) = r.links();
        let d = |x: &DirectionStats| {
            format!(
                "{}/{}/{}/{}",
                x.dropped_random.packets, x.dropped_cutoff.packets, x.dropped_queue.packets, x.dropped_overload.packets
            )
        };
        s += &format!(
            "| {} | {:?} | {} | {} | {:.2} | {:.1} | {} | {} | {} | {} | {} | {} |\n",
            r.fault,
            r.direction,
            r.bytes,
            r.verified,
            r.secs,
            r.verified as f64 * 8.0 / r.secs.max(1e-9) / 1e6,
            r.min_rtt_ms.map_or("-".into(), |m| format!("{m:.1}")),
            d(data),
            d(acks),
            r.relay.rebinds,
            r.result,
            if r.as_expected() {
                "yes".to_string()
            } else {
                format!("NO: {}", r.problems.join("; "))
            }
        );
    }
    s
}
