//! The `live` figure: the guarantee controller over real UDP through the
//! relay on 127.0.0.1 (100 Mbit/s, 10 ms each way, a 30-packet queue), one
//! tested connection (`tputctl send --cc SPEC --target 10Mbit/s`) against
//! ten competing connections (`tputctl send -P 10 --cc newreno`, then
//! `cubic`), judged as `tputctl send` judges it: the receiver's 1-s slots.
//!
//! Wall-clock experiments on a shared machine: the relay reports the
//! datagrams it dropped because it fell behind its schedule (`overload`),
//! and the table prints the load average beside each run.

use std::time::Duration;

use serde::Serialize;
use tput_cc::units::Rate;
use tput_cc::{ControllerSpec, EvalSlot};
use tput_lab::live::TransferSummary;
use tput_lab::live::relay::RelayLinks;
use tput_lab::scenario::LinkSpec;
use tput_transport::{Identity, NodeConfig, ServerTrust, TransferOutcome, TransferSpec, udp};

/// The tested flows, as `tputctl send --cc` takes them.
pub const TESTED: [(&str, &str); 3] = [
    ("default", "guarantee:target=10Mbit/s"),
    ("paper", "guarantee:target=10Mbit/s,eval=32rtt,slot=16rtt,mode=paper"),
    ("newreno", "newreno"),
];
/// The competitors' controllers.
pub const COMPETITORS: [&str; 2] = ["newreno", "cubic"];
/// The target, bits per second.
const TARGET_BPS: u64 = 10_000_000;

/// One live run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LiveRow {
    /// The tested flow.
    pub variant: String,
    /// The competitors' controller.
    pub competitor: String,
    /// Competing connections.
    pub competitors: u32,
    /// The tested connection's success ratio as `tputctl send` prints it.
    pub success: f64,
    /// The tested connection's goodput, Mbit/s over its transfer.
    pub tested_mbps: f64,
    /// A competing connection's mean goodput, Mbit/s.
    pub competitor_mbps: f64,
    /// Intervals at whose end the tested controller declared its target infeasible.
    pub infeasible_intervals: usize,
    /// Every transfer ended cleanly with every byte verified.
    pub verified: bool,
    /// Forward-direction drops at the relay's queue.
    pub queue_drops: u64,
    /// Datagrams the relay dropped because it ran behind its schedule.
    pub overload_drops: u64,
    /// The 1-minute load average before the run.
    pub load: f64,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

fn load_average() -> f64 {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse().ok())
        .unwrap_or(f64::NAN)
}

fn node_config() -> NodeConfig {
    NodeConfig::default()
        .with_idle_timeout(Duration::from_secs(10))
        .with_mtu(1200)
        .with_mtu_discovery(false)
}

/// `count` uploads of `cc` for `duration`, judged against the target over 1-s slots.
fn specs(cc: &str, count: u32, duration: Duration) -> Result<Vec<TransferSpec>, String> {
    let cc: ControllerSpec = cc.parse().map_err(|e: tput_cc::SpecError| e.to_string())?;
    Ok((0..count)
        .map(|_| {
            let mut s = TransferSpec::upload(0, cc.clone());
            s.bytes = None;
            s.duration = Some(duration);
            s.target = Some(Rate::from_bits_per_sec(TARGET_BPS));
            s.eval_slot = EvalSlot::Time(Duration::from_secs(1));
            s.interval = Duration::from_secs(1);
            s
        })
        .collect())
}

/// Run `specs` from a client of its own on a thread of its own.
fn client(
    relay: std::net::SocketAddr,
    trust: ServerTrust,
    specs: Vec<TransferSpec>,
    limit: Duration,
) -> std::thread::JoinHandle<Result<Vec<TransferOutcome>, String>> {
    std::thread::spawn(move || {
        crate::runtime().block_on(async move {
            match tokio::time::timeout(
                limit,
                udp::transfer(relay, "localhost", &trust, node_config(), specs, |_, _| {}),
            )
            .await
            {
                Ok(r) => r.map_err(|e| e.to_string()),
                Err(_) => Err(format!("no result within {} s", limit.as_secs())),
            }
        })
    })
}

/// Every pair of `tested` (name, spec) and `kinds` (the competitors'
/// controller) for `duration` against `competitors` connections; `progress`
/// gets one line per run.
pub fn run(
    tested: &[(&str, &str)],
    kinds: &[&str],
    duration: Duration,
    competitors: u32,
    mut progress: impl FnMut(&str),
) -> Result<Vec<LiveRow>, String> {
    let id = Identity::self_signed(&["localhost"]).map_err(|e| e.to_string())?;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let (server, _failed) = crate::spawn_server(id, node_config(), |_| {})?;
    let link = LinkSpec::new(Rate::from_bits_per_sec(100_000_000), Duration::from_millis(10)).with_queue_packets(30);
    let mut rows = Vec::new();
    for &comp in kinds {
        for &(variant, cc) in tested {
            let load = load_average();
            let relay = crate::LiveRelay::start(
                server,
                RelayLinks {
                    forward: link.clone(),
                    reverse: None,
                },
                1,
            )?;
            let limit = duration + Duration::from_secs(40);
            let others = client(relay.addr, trust.clone(), specs(comp, competitors, duration)?, limit);
            let tested = client(relay.addr, trust.clone(), specs(cc, 1, duration)?, limit);
            let joined = |h: std::thread::JoinHandle<_>| h.join().unwrap_or_else(|_| Err("a client panicked".into()));
            let (tested, others) = (joined(tested), joined(others));
            let stats = relay.finish()?;
            let mut row = LiveRow {
                variant: variant.into(),
                competitor: comp.into(),
                competitors,
                load,
                queue_drops: stats.forward.dropped_queue.packets,
                overload_drops: stats.forward.dropped_overload.packets,
                ..LiveRow::default()
            };
            match (tested, others) {
                (Ok(t), Ok(o)) => {
                    let ts = TransferSummary::new(&t, None);
                    let os = TransferSummary::new(&o, None);
                    row.success = ts.success_ratio.unwrap_or(f64::NAN);
                    row.tested_mbps = ts.goodput_bps / 1e6;
                    row.competitor_mbps = os.goodput_bps / 1e6 / f64::from(competitors.max(1));
                    row.infeasible_intervals = ts.infeasible_intervals;
                    row.verified = ts.ok && os.ok;
                    if !row.verified {
                        row.error = t
                            .iter()
                            .chain(&o)
                            .find_map(|x| x.error.as_ref().map(ToString::to_string));
                    }
                }
                (Err(e), _) | (_, Err(e)) => row.error = Some(e),
            }
            progress(&format!(
                "[live] {variant} vs {competitors} {comp}: success {:.2}, {:.2} Mbit/s, competitors {:.2} Mbit/s each, {}{}",
                row.success,
                row.tested_mbps,
                row.competitor_mbps,
                if row.verified {
                    "every byte verified"
                } else {
                    "NOT verified"
                },
                row.error.as_ref().map_or(String::new(), |e| format!(": {e}"))
            ));
            rows.push(row);
        }
    }
    Ok(rows)
}

/// The table of `rows`.
pub fn table(rows: &[LiveRow], duration: Duration) -> String {
    use std::fmt::Write as _;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "\n== live: through the relay on 127.0.0.1 (100 Mbit/s, 10 ms each way, 30 packets), {} s, target 10 Mbit/s of goodput ==",
        duration.as_secs(),
    );
    let mut table = tput_lab::report::Table::new()
        .left("tested", 9)
        .right("competitors", 16)
        .right("success", 8)
        .right("Mbit/s", 8)
        .right("each other", 13)
        .right("verified", 10)
        .right("infeas.", 9)
        .right("drops q/late", 13)
        .right("load", 5);
    for r in rows {
        table.row([
            r.variant.to_string(),
            format!("{} x {}", r.competitors, r.competitor),
            format!("{:.2}", r.success),
            format!("{:.2}", r.tested_mbps),
            format!("{:.2}", r.competitor_mbps),
            (if r.verified { "yes" } else { "NO" }).to_string(),
            r.infeasible_intervals.to_string(),
            format!("{}/{}", r.queue_drops, r.overload_drops),
            format!("{:.1}", r.load),
        ]);
        if let Some(e) = &r.error {
            table.note(format!("          FAILED: {e}"));
        }
    }
    t += &table.text();
    t
}
