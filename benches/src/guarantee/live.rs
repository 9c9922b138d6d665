//! The `live` figure: the guarantee controller over real UDP through the
//! relay on 127.0.0.1 (100 Mbit/s, 10 ms each way, a 30-packet queue), one
//! tested connection (`tputctl send --cc SPEC --target 10Mbit/s`) against
//! ten competing connections (`tputctl send -P 10 --cc newreno`, then
//! `cubic`), judged as `tputctl send` judges it: the receiver's 1-s slots.
//!
//! Wall-clock experiments on a shared machine: the relay reports the
//! datagrams it dropped because it fell behind its schedule (`overload`),
//! and the table prints the load average beside each run.
//!
//! [`run_case`] runs one [`LiveCase`] of RFC 9743's evaluation live: any
//! link (with a rate schedule: a capacity step), any number of tested
//! connections with any target (an infeasible one, an overbooked link),
//! and reports the competitors' goodput per second beside the verdicts.

use std::time::Duration;

use serde::Serialize;
use tput_cc::units::Rate;
use tput_cc::{ControllerSpec, EvalSlot};
use tput_lab::live::TransferSummary;
use tput_lab::live::relay::RelayLinks;
use tput_lab::scenario::{LinkSpec, RateChange};
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

/// `count` uploads of `cc` for `duration`, judged against `target` over 1-s slots.
fn specs_for(cc: &str, count: u32, duration: Duration, target: Rate) -> Result<Vec<TransferSpec>, String> {
    let cc: ControllerSpec = cc.parse().map_err(|e: tput_cc::SpecError| e.to_string())?;
    Ok((0..count)
        .map(|_| {
            let mut s = TransferSpec::upload(0, cc.clone());
            s.bytes = None;
            s.duration = Some(duration);
            s.target = Some(target);
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
            let case = LiveCase {
                name: variant.into(),
                link: link.clone(),
                tested_cc: cc.into(),
                tested: 1,
                target: Rate::from_bits_per_sec(TARGET_BPS),
                competitor_cc: comp.into(),
                competitors,
                duration,
            };
            let r = run_on(server, &trust, &case)?;
            let row = LiveRow {
                variant: variant.into(),
                competitor: comp.into(),
                competitors,
                load: r.load,
                success: r.success.unwrap_or(f64::NAN),
                tested_mbps: r.tested_mbps,
                competitor_mbps: r.competitor_mbps,
                infeasible_intervals: r.infeasible_intervals,
                verified: r.verified,
                queue_drops: r.queue_drops,
                overload_drops: r.overload_drops,
                error: r.error,
            };
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

/// One live case of the safety evaluation: `tested` connections of
/// `tested_cc`, each judged against `target`, beside `competitors`
/// connections of `competitor_cc`, through the relay's `link`.
#[derive(Debug, Clone)]
pub struct LiveCase {
    /// Its name in tables.
    pub name: String,
    /// The relay's forward link (rate, delay, queue, rate schedule).
    pub link: LinkSpec,
    /// The tested connections' controller, as `tputctl send --cc` takes it.
    pub tested_cc: String,
    /// Tested connections.
    pub tested: u32,
    /// Each tested connection's target of goodput.
    pub target: Rate,
    /// The competitors' controller.
    pub competitor_cc: String,
    /// Competing connections.
    pub competitors: u32,
    /// How long every connection sends.
    pub duration: Duration,
}

impl LiveCase {
    /// `tested_cc` asking `target` beside `competitors` NewReno connections
    /// on `link`, for `duration`.
    pub fn new(
        name: &str,
        link: LinkSpec,
        tested_cc: &str,
        target: Rate,
        competitors: u32,
        duration: Duration,
    ) -> Self {
        LiveCase {
            name: name.into(),
            link,
            tested_cc: tested_cc.into(),
            tested: 1,
            target,
            competitor_cc: "newreno".into(),
            competitors,
            duration,
        }
    }

    /// The relay's link of the live figure (100 Mbit/s, 10 ms each way, 30
    /// packets), with the rate changes `steps` (time from the relay's
    /// start, new rate).
    pub fn figure_link(steps: &[(Duration, Rate)]) -> LinkSpec {
        let mut l =
            LinkSpec::new(Rate::from_bits_per_sec(100_000_000), Duration::from_millis(10)).with_queue_packets(30);
        l.rate_schedule = steps.iter().map(|&(at, rate)| RateChange { at, rate }).collect();
        l
    }
}

/// What one [`LiveCase`] gave.
#[derive(Debug, Clone, Default, Serialize)]
pub struct LiveCaseRow {
    /// The case's name.
    pub name: String,
    /// The tested connections' success ratio over all their slots (`None`: no slot).
    pub success: Option<f64>,
    /// The tested connections' goodput together, Mbit/s.
    pub tested_mbps: f64,
    /// A competing connection's mean goodput, Mbit/s.
    pub competitor_mbps: f64,
    /// The competitors' goodput together in each second of their transfers
    /// (interval `i` of every competitor summed), Mbit/s.
    pub competitors_per_sec_mbps: Vec<f64>,
    /// The tested connections' goodput together per second, Mbit/s.
    pub tested_per_sec_mbps: Vec<f64>,
    /// Interval records (tested connections) at whose end the controller declared its target infeasible.
    pub infeasible_intervals: usize,
    /// Of those, the ones with the breaker open (no floor).
    pub breaker_open_intervals: usize,
    /// The first second (interval end, s from the tested transfer's start)
    /// at which a tested connection declared its target infeasible.
    pub infeasible_at_secs: Option<f64>,
    /// Bytes every tested connection verified.
    pub tested_bytes: u64,
    /// Every transfer ended cleanly with every byte verified.
    pub verified: bool,
    /// Forward-direction drops at the relay's queue.
    pub queue_drops: u64,
    /// Datagrams offered to the relay's forward link.
    pub offered: u64,
    /// Datagrams the relay dropped because it ran behind its schedule.
    pub overload_drops: u64,
    /// The relay's forward queueing delay, p50 and p99, ms.
    pub queue_delay_ms: (f64, f64),
    /// The 1-minute load average before the run.
    pub load: f64,
    /// What went wrong, if anything.
    pub error: Option<String>,
}

/// Goodput per interval index, summed over `outcomes`, Mbit/s.
fn per_second(outcomes: &[TransferOutcome]) -> Vec<f64> {
    let mut out: Vec<f64> = Vec::new();
    for o in outcomes {
        for (i, r) in o.intervals.iter().enumerate() {
            if out.len() <= i {
                out.resize(i + 1, 0.0);
            }
            out[i] += r.goodput_bps / 1e6;
        }
    }
    out
}

/// Run `case` through a relay on 127.0.0.1 against a server of its own.
pub fn run_case(case: &LiveCase) -> Result<LiveCaseRow, String> {
    let id = Identity::self_signed(&["localhost"]).map_err(|e| e.to_string())?;
    let trust = ServerTrust::Pinned(id.fingerprint());
    let (server, _failed) = crate::spawn_server(id, node_config(), |_| {})?;
    run_on(server, &trust, case)
}

/// Run `case` through a relay of its own in front of `server`, which
/// `trust` trusts.
fn run_on(server: std::net::SocketAddr, trust: &ServerTrust, case: &LiveCase) -> Result<LiveCaseRow, String> {
    let load = load_average();
    let relay = crate::LiveRelay::start(
        server,
        RelayLinks {
            forward: case.link.clone(),
            reverse: None,
        },
        1,
    )?;
    let limit = case.duration + Duration::from_secs(40);
    let others = (case.competitors > 0)
        .then(|| specs_for(&case.competitor_cc, case.competitors, case.duration, case.target))
        .transpose()?
        .map(|s| client(relay.addr, trust.clone(), s, limit));
    let tested = client(
        relay.addr,
        trust.clone(),
        specs_for(&case.tested_cc, case.tested, case.duration, case.target)?,
        limit,
    );
    let joined = |h: std::thread::JoinHandle<_>| h.join().unwrap_or_else(|_| Err("a client panicked".into()));
    let tested = joined(tested);
    let others = others.map_or(Ok(Vec::new()), joined);
    let stats = relay.finish()?;
    let mut row = LiveCaseRow {
        name: case.name.clone(),
        load,
        queue_drops: stats.forward.dropped_queue.packets,
        offered: stats.forward.offered.packets,
        overload_drops: stats.forward.dropped_overload.packets,
        queue_delay_ms: (stats.forward.queue_delay_p50_ms, stats.forward.queue_delay_p99_ms),
        ..LiveCaseRow::default()
    };
    match (tested, others) {
        (Ok(t), Ok(o)) => {
            let ts = TransferSummary::new(&t, None);
            let os = TransferSummary::new(&o, None);
            row.success = ts.success_ratio;
            row.tested_mbps = ts.goodput_bps / 1e6;
            row.tested_bytes = ts.bytes;
            row.competitor_mbps = os.goodput_bps / 1e6 / f64::from(case.competitors.max(1));
            row.competitors_per_sec_mbps = per_second(&o);
            row.tested_per_sec_mbps = per_second(&t);
            row.infeasible_intervals = ts.infeasible_intervals;
            row.breaker_open_intervals = ts.breaker_open_intervals;
            row.infeasible_at_secs = t
                .iter()
                .flat_map(|x| &x.intervals)
                .filter(|r| tput_lab::live::infeasible(r))
                .map(|r| r.end_secs)
                .reduce(f64::min);
            row.verified = ts.ok && (case.competitors == 0 || os.ok);
            if !row.verified {
                row.error = t
                    .iter()
                    .chain(&o)
                    .find_map(|x| x.error.as_ref().map(ToString::to_string));
            }
        }
        (Err(e), _) | (_, Err(e)) => row.error = Some(e),
    }
    Ok(row)
}

/// The lines of one [`LiveCaseRow`]: a summary, then the goodput per second.
pub fn case_lines(r: &LiveCaseRow) -> String {
    use std::fmt::Write as _;
    let mut t = String::new();
    let _ = writeln!(
        t,
        "{}: success {}, tested {:.2} Mbit/s, competitors {:.2} Mbit/s each, infeasible {} intervals ({} breaker open){}, \
         relay drops {}/{} offered ({} late), queue delay p50/p99 {:.1}/{:.1} ms, load {:.1}, {}{}",
        r.name,
        r.success.map_or("-".into(), |s| format!("{s:.2}")),
        r.tested_mbps,
        r.competitor_mbps,
        r.infeasible_intervals,
        r.breaker_open_intervals,
        r.infeasible_at_secs
            .map_or(String::new(), |s| format!(" from {s:.0} s")),
        r.queue_drops,
        r.offered,
        r.overload_drops,
        r.queue_delay_ms.0,
        r.queue_delay_ms.1,
        r.load,
        if r.verified {
            "every byte verified"
        } else {
            "NOT verified"
        },
        r.error.as_ref().map_or(String::new(), |e| format!(": {e}"))
    );
    let fmt = |v: &[f64]| v.iter().map(|x| format!("{x:.1}")).collect::<Vec<_>>().join(" ");
    let _ = writeln!(t, "  tested, Mbit/s per second:      {}", fmt(&r.tested_per_sec_mbps));
    let _ = writeln!(
        t,
        "  competitors, Mbit/s per second: {}",
        fmt(&r.competitors_per_sec_mbps)
    );
    t
}

/// The `live-safety` figure's cases on [`LiveCase::figure_link`], every
/// connection sending for `duration` beside `competitors` NewReno
/// connections (RFC 9743's safety cases, live): a feasible target (50 %
/// of the link), an infeasible one (120 %), an overbooked link
/// (`overbooked` connections asking 100 % of it together) and a capacity
/// step (10 Mbit/s while the link steps from 100 to 15 Mbit/s over the
/// middle third of the run, then back).
pub fn safety_cases(duration: Duration, competitors: u32, overbooked: u32) -> Vec<LiveCase> {
    let mbit = |m: u64| Rate::from_bits_per_sec(m * 1_000_000);
    let guarantee = |t: Rate| format!("guarantee:target={t}");
    let case = |name: &str, steps: &[(Duration, Rate)], target: Rate| {
        LiveCase::new(
            name,
            LiveCase::figure_link(steps),
            &guarantee(target),
            target,
            competitors,
            duration,
        )
    };
    let each = Rate::from_bits_per_sec(100_000_000 / u64::from(overbooked.max(1)));
    vec![
        case("50 %", &[], mbit(50)),
        case("120 %", &[], mbit(120)),
        LiveCase {
            tested: overbooked.max(1),
            ..case(&format!("overbooked {}x{each}", overbooked.max(1)), &[], each)
        },
        case(
            "step 100-15-100",
            &[(duration / 3, mbit(15)), (duration * 2 / 3, mbit(100))],
            mbit(10),
        ),
    ]
}

/// `case` with NewReno in the tested seat(s), judged against the same
/// target: the run the competitors' goodput is compared with.
pub fn seat_case(case: &LiveCase) -> LiveCase {
    LiveCase {
        name: format!("{} seat", case.name),
        tested_cc: "newreno".into(),
        ..case.clone()
    }
}

/// The seconds of a per-second series that a run's steady state is judged
/// on: the first (handshake and slow start) and the last (the close; the
/// last record also counts later arrivals) left out.
fn steady(per_sec: &[f64]) -> &[f64] {
    per_sec.get(1..per_sec.len().saturating_sub(1)).unwrap_or(&[])
}

/// The lowest mean over `width` consecutive seconds of `per_sec`'s steady
/// seconds (`None`: fewer than `width` of them).
pub fn worst_window(per_sec: &[f64], width: usize) -> Option<f64> {
    steady(per_sec)
        .windows(width.max(1))
        .map(|w| w.iter().sum::<f64>() / w.len() as f64)
        .reduce(f64::min)
}

/// The mean of `per_sec`'s steady seconds (NaN: none).
pub fn steady_mean(per_sec: &[f64]) -> f64 {
    tput_lab::stats::mean_or_nan(steady(per_sec).iter().copied())
}

/// Every case of `cases` run with its controller and then with NewReno in
/// the seat ([`seat_case`]), in that order; `progress` gets each run's
/// [`case_lines`].
pub fn run_safety(cases: &[LiveCase], mut progress: impl FnMut(&str)) -> Result<Vec<LiveCaseRow>, String> {
    let mut rows = Vec::new();
    for case in cases {
        for c in [case.clone(), seat_case(case)] {
            let r = run_case(&c)?;
            progress(&case_lines(&r));
            rows.push(r);
        }
    }
    Ok(rows)
}

/// The `live-safety` summary of `rows` (pairs of a case's run and its seat
/// run, as [`run_safety`] gives them): each run's success, goodput, the
/// competitors' mean against the seat run's, their worst 2-s window
/// against the seat run's steady mean, when the target was declared
/// infeasible, the relay's drops and queueing delay, and the load.
pub fn safety_table(cases: &[LiveCase], rows: &[LiveCaseRow]) -> tput_lab::report::Table {
    let mut table = tput_lab::report::Table::new()
        .left("case", 22)
        .left("seat", 9)
        .right("target", 10)
        .right("success", 8)
        .right("tested Mbit/s", 14)
        .right("comp. each", 11)
        .right("vs seat", 8)
        .right("worst 2 s", 10)
        .right("vs seat mean", 13)
        .right("infeasible from s", 18)
        .right("drop %", 7)
        .right("late", 6)
        .right("queue p50/p99 ms", 17)
        .right("load", 5)
        .left("verified", 8);
    for (case, pair) in cases.iter().zip(rows.chunks(2)) {
        let Some(seat) = pair.get(1) else { continue };
        for (r, who) in pair
            .iter()
            .zip([case.tested_cc.split(':').next().unwrap_or("tested"), "newreno"])
        {
            let worst = worst_window(&r.competitors_per_sec_mbps, 2);
            table.row([
                case.name.clone(),
                who.to_string(),
                case.target.to_string(),
                r.success.map_or("-".into(), |s| format!("{s:.2}")),
                format!("{:.2}", r.tested_mbps),
                format!("{:.2}", r.competitor_mbps),
                format!("{:.2}", r.competitor_mbps / seat.competitor_mbps),
                worst.map_or("-".into(), |w| format!("{w:.1}")),
                worst.map_or("-".into(), |w| {
                    format!("{:.2}", w / steady_mean(&seat.competitors_per_sec_mbps))
                }),
                r.infeasible_at_secs.map_or("-".into(), |s| format!("{s:.0}")),
                format!("{:.2}", 100.0 * r.queue_drops as f64 / r.offered.max(1) as f64),
                r.overload_drops.to_string(),
                format!("{:.1}/{:.1}", r.queue_delay_ms.0, r.queue_delay_ms.1),
                format!("{:.1}", r.load),
                (if r.verified { "yes" } else { "NO" }).to_string(),
            ]);
        }
    }
    table
}

/// Each run's goodput per second, tested and competitors: one row per
/// (run, second).
pub fn per_second_table(rows: &[LiveCaseRow]) -> tput_lab::report::Table {
    let mut table = tput_lab::report::Table::new()
        .left("run", 0)
        .right("second", 0)
        .right("tested_mbps", 0)
        .right("competitors_mbps", 0);
    for r in rows {
        let n = r.tested_per_sec_mbps.len().max(r.competitors_per_sec_mbps.len());
        for i in 0..n {
            let at = |v: &[f64]| v.get(i).map_or(String::new(), |x| format!("{x:.3}"));
            table.row([
                r.name.clone(),
                i.to_string(),
                at(&r.tested_per_sec_mbps),
                at(&r.competitors_per_sec_mbps),
            ]);
        }
    }
    table
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_window_leaves_out_the_first_and_last_second() {
        // Start-up 1.0 and close 0.0 are left out; of 8, 6, 2, 4, 9 the
        // lowest 2-s mean is (2 + 4) / 2.
        let v = [1.0, 8.0, 6.0, 2.0, 4.0, 9.0, 0.0];
        assert_eq!(worst_window(&v, 2), Some(3.0));
        assert_eq!(worst_window(&v, 1), Some(2.0));
        assert_eq!(steady_mean(&v), 29.0 / 5.0);
        // Fewer steady seconds than the window: none.
        assert_eq!(worst_window(&[5.0, 6.0, 7.0], 2), None);
        assert_eq!(worst_window(&[], 2), None);
        assert!(steady_mean(&[3.0]).is_nan());
    }

    #[test]
    fn the_safety_cases_and_their_seats() {
        let cases = safety_cases(Duration::from_secs(60), 10, 20);
        let names: Vec<&str> = cases.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["50 %", "120 %", "overbooked 20x5Mbit/s", "step 100-15-100"]);
        assert!(
            cases
                .iter()
                .all(|c| c.competitors == 10 && c.competitor_cc == "newreno")
        );
        assert_eq!(cases[0].tested_cc, "guarantee:target=50Mbit/s");
        assert_eq!(cases[1].target, Rate::from_bits_per_sec(120_000_000));
        assert_eq!(
            (cases[2].tested, cases[2].tested_cc.as_str()),
            (20, "guarantee:target=5Mbit/s")
        );
        let steps: Vec<(u64, u64)> = cases[3]
            .link
            .rate_schedule
            .iter()
            .map(|s| (s.at.as_secs(), s.rate.bits_per_sec() / 1_000_000))
            .collect();
        assert_eq!(steps, [(20, 15), (40, 100)]);
        let seat = seat_case(&cases[2]);
        assert_eq!(
            (seat.tested, seat.tested_cc.as_str(), seat.target, seat.name.as_str()),
            (20, "newreno", cases[2].target, "overbooked 20x5Mbit/s seat")
        );
        for c in cases.iter().chain([&seat]) {
            assert!(c.tested_cc.parse::<ControllerSpec>().is_ok(), "{}", c.tested_cc);
        }
    }

    #[test]
    fn the_summary_compares_each_run_with_its_seat() {
        let cases = safety_cases(Duration::from_secs(6), 2, 2);
        let row = |name: &str, comp: f64, per_sec: Vec<f64>| LiveCaseRow {
            name: name.into(),
            competitor_mbps: comp,
            competitors_per_sec_mbps: per_sec,
            verified: true,
            ..LiveCaseRow::default()
        };
        let rows = [
            row("50 %", 20.0, vec![0.0, 30.0, 10.0, 20.0, 40.0, 0.0]),
            row("50 % seat", 40.0, vec![0.0, 80.0, 80.0, 80.0, 80.0, 0.0]),
        ];
        let csv = safety_table(&cases[..1], &rows).csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 3, "{csv}");
        // The guarantee run: half the seat's competitor goodput, its worst
        // 2 s (10 + 20) / 2 = 15 against the seat's steady mean 80.
        assert!(lines[1].starts_with("50 %,guarantee,50Mbit/s,"), "{csv}");
        assert!(lines[1].contains(",20.00,0.50,15.0,0.19,"), "{csv}");
        assert!(lines[2].contains(",40.00,1.00,80.0,1.00,"), "{csv}");
        let per_sec = per_second_table(&rows).csv();
        assert_eq!(per_sec.lines().count(), 1 + 6 + 6, "{per_sec}");
    }
}
