//! Seed 002's live figure: the same transfers over real sockets, through
//! the relay on 127.0.0.1.

use std::fmt::Write as _;
use std::net::SocketAddr;
use std::time::Duration;

use tput_cc::units::Rate;
use tput_lab::live::relay::RelayLinks;
use tput_lab::plot::{Series, line_chart};
use tput_lab::scenario::LinkSpec;
use tput_transport::{AppBuffers, Identity, NodeConfig, ServerTrust, TransferSpec, udp};

use super::tables::{cell, find, measured};
use super::{
    BOTTLENECK_BPS, BUFFER_BYTES, LivePoint, MTU, Options, PointResult, QUEUE_PACKETS, Variant, load_average, spec,
    steady_mbps,
};
use crate::repro::Csv;

fn rt() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("starting a runtime: {e}"))
}

fn live_node_config() -> NodeConfig {
    NodeConfig::default()
        .with_idle_timeout(Duration::from_secs(10))
        .with_mtu(MTU)
        .with_mtu_discovery(false)
}

/// A QUIC server on its own thread for the rest of the process (what
/// `tputctl serve` runs).
fn start_server() -> Result<(SocketAddr, Identity), String> {
    let id = Identity::self_signed(&["localhost"]).map_err(|e| e.to_string())?;
    let (addr, _failed) = crate::spawn_server(id.clone(), live_node_config(), |_| {})?;
    Ok((addr, id))
}

/// The relay of `tputctl relay` emulating the bottleneck at `rtt_ms` (half each way).
fn start_relay(to: SocketAddr, rtt_ms: u32, seed: u64) -> Result<crate::LiveRelay, String> {
    let link = LinkSpec::new(
        Rate::from_bits_per_sec(BOTTLENECK_BPS),
        Duration::from_micros(u64::from(rtt_ms) * 500),
    )
    .with_queue_packets(QUEUE_PACKETS);
    crate::LiveRelay::start(
        to,
        RelayLinks {
            forward: link,
            reverse: None,
        },
        seed,
    )
}

pub(super) fn live_sweep(o: &Options, mut progress: impl FnMut(&str)) -> Result<Vec<LivePoint>, String> {
    let (server, id) = start_server()?;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let mut out = Vec::new();
    let total = o.live_rtts_ms.len() * o.live_buffers.len();
    for &rtt_ms in &o.live_rtts_ms {
        for &n in &o.live_buffers {
            let load = load_average();
            let relay = start_relay(server, rtt_ms, o.seed)?;
            let mut spec = TransferSpec::upload(0, spec("cubic"));
            spec.bytes = None;
            spec.duration = Some(o.live_duration);
            spec.interval = Duration::from_secs(1);
            spec.buffers = Some(AppBuffers {
                count: n,
                size: BUFFER_BYTES,
            });
            let limit = o.live_duration + Duration::from_secs(30);
            let outcome = rt()?.block_on(async {
                tokio::time::timeout(
                    limit,
                    udp::transfer(
                        relay.addr,
                        "localhost",
                        &trust,
                        live_node_config(),
                        vec![spec],
                        |_, _| {},
                    ),
                )
                .await
            });
            let stats = relay.finish()?;
            let p = match outcome {
                Err(_) => LivePoint {
                    rtt_ms,
                    n,
                    mbps: f64::NAN,
                    verified_bytes: 0,
                    error: Some(format!("no result within {} s", limit.as_secs())),
                    drops: (0, 0),
                    min_rtt_ms: f64::NAN,
                    load,
                },
                Ok(Err(e)) => LivePoint {
                    rtt_ms,
                    n,
                    mbps: f64::NAN,
                    verified_bytes: 0,
                    error: Some(e.to_string()),
                    drops: (0, 0),
                    min_rtt_ms: f64::NAN,
                    load,
                },
                Ok(Ok(v)) => {
                    let o1 = v.into_iter().next().ok_or("no transfer outcome")?;
                    let verified = o1.receiver.as_ref().map_or(0, |r| r.bytes);
                    let error = o1.error.as_ref().map(ToString::to_string).or_else(|| {
                        (verified == 0 || verified != o1.bytes)
                            .then(|| format!("receiver verified {verified} of {} bytes", o1.bytes))
                    });
                    LivePoint {
                        rtt_ms,
                        n,
                        mbps: steady_mbps(&o1.intervals, o.live_warmup),
                        verified_bytes: verified,
                        error,
                        drops: (
                            stats.forward.dropped_queue.packets,
                            stats.forward.dropped_overload.packets,
                        ),
                        min_rtt_ms: o1.intervals.iter().map(|i| i.min_rtt_ms).fold(f64::INFINITY, f64::min),
                        load,
                    }
                }
            };
            progress(&format!(
                "[live {}/{total}] rtt={rtt_ms}ms N={n}: {:.2} Mbit/s, {} bytes verified, drops queue {} overload {}{}",
                out.len() + 1,
                p.mbps,
                p.verified_bytes,
                p.drops.0,
                p.drops.1,
                p.error.as_ref().map_or(String::new(), |e| format!(", FAILED: {e}"))
            ));
            out.push(p);
        }
    }
    Ok(out)
}

pub(super) fn live_table(o: &Options, points: &[PointResult], live: &[LivePoint]) -> String {
    let mut t = String::new();
    let _ = writeln!(
        t,
        "\n== Live vs simulated: QUIC CUBIC with N x 512 KiB buffers through the relay on 127.0.0.1, goodput after {} s of {} s (simulated: {} s of {} s), Mbit/s ==",
        o.live_warmup.as_secs(),
        o.live_duration.as_secs(),
        o.warmup.as_secs(),
        o.duration.as_secs()
    );
    let mut table = tput_lab::report::Table::new()
        .right("RTT ms", 7)
        .right("N", 3)
        .right("live", 9)
        .right("sim", 9)
        .right("diff %", 8)
        .right("min RTT", 10)
        .right("verified MB", 13)
        .right("drops q/late", 14)
        .right("load", 6);
    let mut worst: Option<f64> = None;
    let mut worst_clean: Option<f64> = None;
    for l in live {
        let sim = find(points, "rtt", Variant::Quic { cubic: true, n: l.n }, l.rtt_ms, 0.0).map(|p| p.mbps);
        let diff = sim.map(|s| (l.mbps - s) / s * 100.0).filter(|d| d.is_finite());
        if let Some(d) = diff {
            worst = Some(worst.map_or(d.abs(), |w: f64| w.max(d.abs())));
            if l.drops.1 == 0 {
                worst_clean = Some(worst_clean.map_or(d.abs(), |w: f64| w.max(d.abs())));
            }
        }
        table.row([
            l.rtt_ms.to_string(),
            l.n.to_string(),
            cell(Some(l.mbps), 2),
            cell(sim, 2),
            cell(diff, 1),
            cell(Some(l.min_rtt_ms), 1),
            format!("{:.1}", l.verified_bytes as f64 / 1e6),
            format!("{}/{}", l.drops.0, l.drops.1),
            cell(Some(l.load), 1),
        ]);
        if let Some(e) = &l.error {
            table.note(format!("        FAILED: {e}"));
        }
    }
    t += &table.text();
    if let Some(w) = worst {
        let _ = writeln!(
            t,
            "largest |live - sim| / sim: {w:.1}% (goal: within 10% at every RTT): {}",
            if w <= 10.0 { "met" } else { "not met" }
        );
        let _ = writeln!(
            t,
            "among the points where the relay kept up (no late drop): {}\n\
             (late = departures the relay dropped because it ran more than 25 ms behind its schedule, i.e. was\n\
             starved of CPU: a loss the simulated link does not have. load = the 1-minute load average at the start.)",
            worst_clean.map_or("none".into(), |w| format!("largest difference {w:.1}%"))
        );
    }
    t
}

pub(super) fn live_files(o: &Options, points: &[PointResult], live: &[LivePoint]) -> Vec<(String, String)> {
    let mut csv = Csv::new(&[
        "rtt_ms",
        "buffers",
        "live_mbps",
        "sim_mbps",
        "diff_pct",
        "min_rtt_ms",
        "verified_bytes",
        "queue_drops",
        "late_drops",
        "error",
    ]);
    let mut series = Vec::new();
    for &n in &o.live_buffers {
        let v = Variant::Quic { cubic: true, n };
        series.push(measured(points, o, v, false, &format!("simulated N={n}")));
        series.push(Series {
            name: format!("live N={n}"),
            points: live
                .iter()
                .filter(|l| l.n == n)
                .map(|l| (f64::from(l.rtt_ms), l.mbps))
                .collect(),
        });
    }
    for l in live {
        let sim = find(points, "rtt", Variant::Quic { cubic: true, n: l.n }, l.rtt_ms, 0.0).map(|p| p.mbps);
        crate::csv_row!(
            csv,
            l.rtt_ms,
            l.n,
            format!("{:.4}", l.mbps),
            sim.map_or(String::new(), |s| format!("{s:.4}")),
            sim.map_or(String::new(), |s| format!("{:.2}", (l.mbps - s) / s * 100.0)),
            format!("{:.2}", l.min_rtt_ms),
            l.verified_bytes,
            l.drops.0,
            l.drops.1,
            l.error.as_deref().unwrap_or("").replace(',', ";")
        );
    }
    vec![
        ("live.csv".into(), csv.finish()),
        (
            "live.svg".into(),
            line_chart(
                "QUIC CUBIC, N x 512 KiB: live (relay) vs simulated",
                "RTT (ms)",
                "goodput (Mbit/s)",
                &series,
            ),
        ),
    ]
}
