//! Live tooling in one place: what runs over real sockets, and how live
//! transfers are rendered.
//!
//! - this module: live transfers, rendered: the end-of-run
//!   [`TransferSummary`] of `tputctl send`/`loopback` (bytes, goodput, slots
//!   met, RTT min/mean/max, lost packets, congestion events, CPU use), the
//!   `--json` document [`SendReport`], the text lines the command prints,
//!   and the guarantee verdicts of an interval record ([`infeasible`],
//!   [`breaker_open`]);
//! - `spawn_server` (feature `live`): a local server for live experiments
//!   and tests;
//! - `relay` (feature `live`): the UDP relay through simulated links
//!   (`tputctl relay`), its link lists and counters, and the timed probe
//!   that measures it;
//! - `faults` (feature `live`): the live fault table, verified transfers
//!   through the relay's faults, for the relay's tests and the `live_faults`
//!   bench.
//!
//! The rendering needs no sockets: it formats [`TransferOutcome`]s and
//! interval records, and the simulated reports (`report`, `harm`) judge
//! their records with the same verdicts, so it is built without the
//! feature. The relay, the fault table and the server bind sockets and run
//! tokio: they sit behind the `live` cargo feature, so that an experiment
//! built on this crate alone pulls in neither (`tputctl` and the benches
//! turn it on).

use serde::Serialize;
use tput_transport::{Direction, IntervalStats, TransferOutcome};

#[cfg(feature = "live")]
pub mod faults;
#[cfg(feature = "live")]
pub mod relay;

/// A live QUIC server on 127.0.0.1 (an ephemeral port) on a thread of its
/// own, serving with `identity` and `config` on a current-thread runtime
/// (as `tputctl serve` runs) and handing every event to `on_event`, until
/// the process ends. Returns its address once it is bound (an error if the
/// runtime or the socket cannot be had, or nothing is bound within 10 s),
/// and a receiver that gets `Some(error)` if the serving loop ever fails
/// (`None` if it stops).
#[cfg(feature = "live")]
pub fn spawn_server(
    identity: tput_transport::Identity,
    config: tput_transport::NodeConfig,
    mut on_event: impl FnMut(tput_transport::NodeEvent) + Send + 'static,
) -> Result<(std::net::SocketAddr, std::sync::mpsc::Receiver<Option<String>>), String> {
    use tput_transport::udp;
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (fail_tx, fail_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let rt = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
            Ok(rt) => rt,
            Err(e) => {
                let _ = addr_tx.send(Err(format!("starting a runtime: {e}")));
                return;
            }
        };
        rt.block_on(async move {
            let socket = match udp::bind_server("127.0.0.1:0".parse().expect("an address")).await {
                Ok(s) => s,
                Err(e) => {
                    let _ = addr_tx.send(Err(e.to_string()));
                    return;
                }
            };
            let _ = addr_tx.send(socket.local_addr().map_err(|e| e.to_string()));
            let r = udp::serve(&socket, &identity, config, |_, ev| {
                on_event(ev);
                std::ops::ControlFlow::Continue(())
            })
            .await;
            let _ = fail_tx.send(r.err().map(|e| e.to_string()));
        });
    });
    let addr = addr_rx
        .recv_timeout(std::time::Duration::from_secs(10))
        .map_err(|_| "the server did not start".to_string())??;
    Ok((addr, fail_rx))
}

/// The end-of-run figures of one or more parallel transfers.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TransferSummary {
    /// Whether every transfer verified every byte and ended cleanly.
    pub ok: bool,
    /// Payload bytes the receivers verified, summed.
    pub bytes: u64,
    /// The longest transfer, seconds.
    pub seconds: f64,
    /// `bytes * 8 / seconds`; 0 when a transfer failed (no rate is printed then).
    pub goodput_bps: f64,
    /// Evaluation slots judged (all transfers).
    pub slots: usize,
    /// Slots that met the target.
    pub slots_met: usize,
    /// `slots_met / slots`.
    pub success_ratio: Option<f64>,
    /// Smallest RTT any interval record saw, milliseconds.
    pub rtt_min_ms: Option<f64>,
    /// Mean smoothed RTT over the interval records, milliseconds.
    pub rtt_mean_ms: Option<f64>,
    /// Largest smoothed RTT of any interval record, milliseconds.
    pub rtt_max_ms: Option<f64>,
    /// Packets the senders declared lost.
    pub lost_packets: u64,
    /// Congestion events (window reductions) at the senders.
    pub congestion_events: u64,
    /// Interval records at whose end the sending controller declared its
    /// target infeasible (a guarantee controller whose breaker tripped and
    /// that has met no slot since: its breaker open, or retrying).
    pub infeasible_intervals: usize,
    /// Of those, the records at whose end its breaker was open (no floor:
    /// plain Reno); the others ended during a retry with the floor engaged.
    #[serde(default)]
    pub breaker_open_intervals: usize,
    /// Interval records, all transfers.
    pub intervals: usize,
    /// CPU seconds this process used during the run (user + system), if known.
    pub local_cpu_secs: Option<f64>,
    /// CPU seconds the peer's process used during the transfers (user +
    /// system), as its report says (the largest over parallel transfers,
    /// which share the peer's process), if it measured them.
    pub remote_cpu_secs: Option<f64>,
    /// The largest UDP payload, bytes, path MTU discovery validated on any
    /// of the connections (0 without one).
    pub path_mtu: u16,
}

/// The largest UDP payload path MTU discovery reaches without `--max-mtu`
/// (quinn-proto's bound for a 1500-byte MTU).
const DEFAULT_PATH_MTU: u16 = 1452;

impl TransferSummary {
    /// Summarise `outcomes`; `local_cpu_secs` is what the caller measured
    /// around the run.
    pub fn new(outcomes: &[TransferOutcome], local_cpu_secs: Option<f64>) -> Self {
        let bytes: u64 = outcomes.iter().map(|o| o.bytes).sum();
        let seconds = outcomes.iter().map(|o| o.elapsed_secs).fold(0.0, f64::max);
        let slots: Vec<_> = outcomes
            .iter()
            .filter_map(|o| o.receiver.as_ref())
            .flat_map(|r| &r.slots)
            .collect();
        let met = slots.iter().filter(|s| s.met).count();
        let records: Vec<&IntervalStats> = outcomes
            .iter()
            .flat_map(|o| &o.intervals)
            .filter(|i| i.srtt_ms > 0.0)
            .collect();
        let (min, mean, max) = if records.is_empty() {
            (None, None, None)
        } else {
            (
                Some(records.iter().map(|i| i.min_rtt_ms).fold(f64::INFINITY, f64::min)),
                Some(records.iter().map(|i| i.srtt_ms).sum::<f64>() / records.len() as f64),
                Some(records.iter().map(|i| i.srtt_ms).fold(0.0, f64::max)),
            )
        };
        let all = || outcomes.iter().flat_map(|o| &o.intervals);
        let ok = !outcomes.is_empty() && outcomes.iter().all(TransferOutcome::ok);
        TransferSummary {
            ok,
            bytes,
            seconds,
            goodput_bps: if seconds > 0.0 && ok {
                bytes as f64 * 8.0 / seconds
            } else {
                0.0
            },
            slots: slots.len(),
            slots_met: met,
            success_ratio: (!slots.is_empty()).then(|| met as f64 / slots.len() as f64),
            rtt_min_ms: min,
            rtt_mean_ms: mean,
            rtt_max_ms: max,
            lost_packets: all().map(|i| i.lost_packets).sum(),
            congestion_events: all().map(|i| i.congestion_events).sum(),
            infeasible_intervals: all().filter(|i| infeasible(i)).count(),
            breaker_open_intervals: all().filter(|i| breaker_open(i)).count(),
            intervals: all().count(),
            local_cpu_secs,
            remote_cpu_secs: outcomes
                .iter()
                .filter_map(|o| {
                    if o.local_sender {
                        o.receiver.as_ref().and_then(|r| r.cpu_secs)
                    } else {
                        o.sender.as_ref().and_then(|r| r.cpu_secs)
                    }
                })
                .reduce(f64::max),
            path_mtu: outcomes.iter().map(|o| o.path_mtu).max().unwrap_or(0),
        }
    }

    /// The summary as text lines (`[SUM]` lines, as iperf3 prints them).
    pub fn lines(&self) -> String {
        // A failed or refused transfer has no rate: its bytes and time
        // describe an attempt, not a transfer.
        let rate = if self.ok {
            crate::report::mbps(self.goodput_bps)
        } else {
            "FAILED (no rate)".to_string()
        };
        let mut out = format!(
            "[SUM] {} in {:.2} s, {rate}{}\n",
            human_bytes(self.bytes),
            self.seconds,
            self.success_ratio.map_or(String::new(), |x| format!(
                ", success ratio {x:.2} ({}/{} slots)",
                self.slots_met, self.slots
            ))
        );
        if let (Some(min), Some(mean), Some(max)) = (self.rtt_min_ms, self.rtt_mean_ms, self.rtt_max_ms) {
            out += &format!(
                "[SUM] RTT min/mean/max {min:.2}/{mean:.2}/{max:.2} ms, {} packets lost, {} congestion events\n",
                self.lost_packets, self.congestion_events
            );
        }
        if self.infeasible_intervals > 0 {
            out += &format!(
                "[SUM] the controller declared its target infeasible at the end of {} of {} intervals; \
                 its breaker was open (Reno, no floor) at the end of {} of them, the others were retries \
                 with the floor engaged (see docs/guarantee.md)\n",
                self.infeasible_intervals, self.intervals, self.breaker_open_intervals
            );
        }
        if self.path_mtu > DEFAULT_PATH_MTU {
            out += &format!(
                "[SUM] path MTU discovery reached {} bytes of UDP payload (--max-mtu)\n",
                self.path_mtu
            );
        }
        let pct = |cpu: f64| 100.0 * cpu / self.seconds.max(1e-9);
        match (self.local_cpu_secs, self.remote_cpu_secs) {
            (Some(l), Some(r)) => {
                out += &format!(
                    "[SUM] CPU: this end {l:.2} s ({:.1}%), the peer {r:.2} s ({:.1}%)\n",
                    pct(l),
                    pct(r)
                )
            }
            (Some(l), None) => out += &format!("[SUM] CPU: this end {l:.2} s ({:.1}%)\n", pct(l)),
            (None, Some(r)) => out += &format!("[SUM] CPU: the peer {r:.2} s ({:.1}%)\n", pct(r)),
            (None, None) => {}
        }
        out
    }
}

/// The `--json` document of `send` and `loopback` (schema in docs/cli.md).
#[derive(Debug, Clone, Serialize)]
pub struct SendReport<'a> {
    /// The tool's version.
    pub tputctl: &'static str,
    /// `send` or `loopback`.
    pub command: &'a str,
    /// The server's address.
    pub server: String,
    /// Controller spec of the sending end.
    pub cc: String,
    /// Who sent.
    pub direction: Direction,
    /// The target, bits per second.
    pub target_bps: Option<u64>,
    /// Every transfer, as its outcome.
    pub transfers: &'a [TransferOutcome],
    /// The end-of-run figures.
    pub summary: TransferSummary,
}

/// Bytes for people: `123 B`, `45.6 kB`, `78.9 MB`.
pub fn human_bytes(b: u64) -> String {
    match b {
        b if b >= 10_000_000 => format!("{:.1} MB", b as f64 / 1e6),
        b if b >= 10_000 => format!("{:.1} kB", b as f64 / 1e3),
        b => format!("{b} B"),
    }
}

/// The header of the interval lines; with a target, a `target` column.
pub fn interval_header(target: bool) -> String {
    let mut h = "[id]  interval          bytes      goodput         cwnd        srtt     lost".to_string();
    if target {
        h += "  target";
    }
    h
}

/// One interval line of transfer `id`. With a target (bits per second) the
/// line ends with the interval's verdict: `met` if the goodput the receiver
/// verified in it reached the target, `MISS` if not, then `infeasible`
/// while the sending guarantee controller declares its target infeasible
/// (its breaker tripped and no slot has met the target since), followed by
/// `breaker open` only while the breaker is open (no floor: plain Reno),
/// not during a retry with the floor engaged.
pub fn interval_line(id: u64, s: &IntervalStats, target_bps: Option<u64>) -> String {
    let mut line = format!(
        "[{id:>2}]  {:>6.2}-{:<6.2} s {:>10} {:>14} {:>10} {:>8.2} ms {:>6}",
        s.start_secs,
        s.end_secs,
        human_bytes(s.bytes),
        crate::report::mbps(s.goodput_bps),
        human_bytes(s.cwnd_bytes),
        s.srtt_ms,
        s.lost_packets
    );
    if let Some(t) = target_bps {
        line += if s.goodput_bps >= t as f64 { "  met" } else { "  MISS" };
    }
    if infeasible(s) {
        line += "  infeasible";
    }
    if breaker_open(s) {
        line += "  breaker open";
    }
    line
}

/// Whether the record's controller snapshot shows the guarantee's breaker
/// open: the target declared infeasible and no floor (plain Reno). During a
/// retry the floor is engaged again while the verdict stands.
pub fn breaker_open(s: &IntervalStats) -> bool {
    matches!(
        s.controller.as_ref().map(|c| &c.state),
        Some(tput_cc::AlgorithmState::Guarantee {
            infeasible: true,
            floor_bytes: 0,
            ..
        })
    )
}

/// Whether the record's controller snapshot declares its target infeasible.
pub fn infeasible(s: &IntervalStats) -> bool {
    matches!(
        s.controller.as_ref().map(|c| &c.state),
        Some(tput_cc::AlgorithmState::Guarantee { infeasible: true, .. })
    )
}

/// The closing lines of one transfer: its total, and its slots against `target`.
pub fn outcome_lines(o: &TransferOutcome) -> String {
    match &o.error {
        None => {
            let r = o.receiver.as_ref();
            let mut out = format!(
                "[{:>2}]  total {:.2} s, {}, {}, receiver verified {} bytes\n",
                o.id,
                o.elapsed_secs,
                human_bytes(o.bytes),
                crate::report::mbps(o.bytes as f64 * 8.0 / o.elapsed_secs.max(1e-9)),
                r.map_or(0, |r| r.bytes)
            );
            // A download's client received the bytes: what it counted per
            // interval (its own clock, from the request).
            if let Some(r) = r.filter(|r| !o.local_sender && !r.interval_bytes.is_empty()) {
                let counts: Vec<String> = r.interval_bytes.iter().map(|&b| human_bytes(b)).collect();
                out += &format!("[{:>2}]  received per interval: {}\n", o.id, counts.join(", "));
            }
            if let Some(r) = r.filter(|r| !r.slots.is_empty()) {
                let met = r.slots.iter().filter(|s| s.met).count();
                out += &format!(
                    "[{:>2}]  {met}/{} evaluation slots met{}\n",
                    o.id,
                    r.slots.len(),
                    r.success_ratio
                        .map_or(String::new(), |x| format!(" (success ratio {x:.2})"))
                );
            }
            out
        }
        Some(e) => format!("[{:>2}]  FAILED: {e}\n", o.id),
    }
}

/// CPU seconds (user + system) this process has used so far, threads that
/// have exited included; `None` off Linux.
pub use tput_transport::usage::process_cpu_secs;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fixtures::{guarantee_snapshot, interval};
    use tput_transport::{ReceiverReport, SenderReport, TransferError};

    fn record(srtt_ms: f64, min_rtt_ms: f64, lost: u64, events: u64) -> IntervalStats {
        let mut r = interval(0.0, 1.0, 1000);
        r.srtt_ms = srtt_ms;
        r.min_rtt_ms = min_rtt_ms;
        r.lost_packets = lost;
        r.congestion_events = events;
        r
    }

    fn outcome(intervals: Vec<IntervalStats>, bytes: u64, secs: f64) -> TransferOutcome {
        let mut o = TransferOutcome::new(0, Direction::Upload, true, "cubic");
        o.bytes = bytes;
        o.elapsed_secs = secs;
        o.intervals = intervals;
        o
    }

    #[test]
    fn interval_lines_judge_the_target_and_say_when_it_is_infeasible() {
        let r = record(10.0, 4.0, 0, 0); // 8000 bit/s
        assert!(!interval_line(1, &r, None).contains("met"));
        assert!(interval_line(1, &r, Some(8000)).ends_with("  met"));
        assert!(interval_line(1, &r, Some(8001)).ends_with("  MISS"));
        assert!(interval_header(true).ends_with("target") && !interval_header(false).contains("target"));
        let mut bad = record(10.0, 4.0, 0, 0);
        bad.controller = Some(guarantee_snapshot(0, true));
        assert!(interval_line(1, &bad, Some(9000)).ends_with("  MISS  infeasible  breaker open"));
        // A retry: the floor engaged again, the verdict not yet lifted.
        let mut retry = record(10.0, 4.0, 0, 0);
        retry.controller = Some(guarantee_snapshot(24_000, true));
        let line = interval_line(1, &retry, Some(9000));
        assert!(
            line.ends_with("  MISS  infeasible") && !line.contains("breaker open"),
            "{line}"
        );
        let mut good = r.clone();
        good.controller = Some(guarantee_snapshot(24_000, false));
        assert!(!interval_line(1, &good, Some(8000)).contains("infeasible"));
        let s = TransferSummary::new(&[outcome(vec![bad, retry, good.clone(), good], 4000, 4.0)], None);
        assert_eq!(
            (s.infeasible_intervals, s.breaker_open_intervals, s.intervals),
            (2, 1, 4)
        );
        assert!(
            s.lines()
                .contains("infeasible at the end of 2 of 4 intervals; its breaker was open (Reno, no floor) at the end of 1 of them"),
            "{}",
            s.lines()
        );
        let s = TransferSummary::new(&[outcome(vec![r], 1000, 1.0)], None);
        assert!(!s.lines().contains("infeasible"));
    }

    #[test]
    fn the_summary_adds_up_the_records() {
        let a = outcome(vec![record(10.0, 4.0, 3, 1), record(20.0, 5.0, 0, 0)], 1_000_000, 2.0);
        let b = outcome(vec![record(30.0, 6.0, 2, 2)], 500_000, 4.0);
        let s = TransferSummary::new(&[a, b], Some(0.5));
        assert!(s.ok);
        assert_eq!(s.bytes, 1_500_000);
        assert_eq!(s.seconds, 4.0);
        assert_eq!(s.goodput_bps, 3e6);
        assert_eq!(s.rtt_min_ms, Some(4.0));
        assert_eq!(s.rtt_mean_ms, Some(20.0));
        assert_eq!(s.rtt_max_ms, Some(30.0));
        assert_eq!((s.lost_packets, s.congestion_events), (5, 3));
        assert_eq!(s.remote_cpu_secs, None, "no report carried the peer's CPU");
        let text = s.lines();
        assert!(text.contains("RTT min/mean/max 4.00/20.00/30.00 ms"), "{text}");
        assert!(text.contains("5 packets lost, 3 congestion events"), "{text}");
        assert!(text.contains("this end 0.50 s (12.5%)"), "{text}");
        // The peer's CPU comes from its report: the receiver's after an
        // upload, the sender's after a download; parallel transfers share it.
        let mut up = outcome(Vec::new(), 10, 1.0);
        let mut report = ReceiverReport::default();
        report.bytes = 10;
        report.duration_secs = 1.0;
        report.interval_bytes = vec![10];
        report.cpu_secs = Some(0.25);
        up.receiver = Some(report);
        let mut up2 = up.clone();
        up2.receiver.as_mut().unwrap().cpu_secs = Some(0.75);
        let mut down = outcome(Vec::new(), 10, 1.0);
        down.local_sender = false;
        let mut sender = SenderReport::default();
        sender.cc = "cubic".into();
        sender.written_bytes = 10;
        sender.cpu_secs = Some(0.5);
        down.sender = Some(sender);
        assert_eq!(
            TransferSummary::new(&[up.clone(), up2], None).remote_cpu_secs,
            Some(0.75)
        );
        assert_eq!(TransferSummary::new(&[down], Some(0.1)).remote_cpu_secs, Some(0.5));
        let text = TransferSummary::new(&[up], Some(0.5)).lines();
        assert!(
            text.contains("this end 0.50 s (50.0%), the peer 0.25 s (25.0%)"),
            "{text}"
        );
        // No records: no RTT line; no transfers: not ok.
        let s = TransferSummary::new(&[outcome(Vec::new(), 10, 1.0)], None);
        assert_eq!(s.rtt_mean_ms, None);
        assert!(!s.lines().contains("RTT"));
        assert!(!TransferSummary::new(&[], None).ok);
    }

    #[test]
    fn a_download_prints_what_it_received_per_interval() {
        let mut down = outcome(Vec::new(), 30_000, 2.0);
        down.local_sender = false;
        let mut report = ReceiverReport::default();
        report.bytes = 30_000;
        report.duration_secs = 2.0;
        report.interval_bytes = vec![20_000, 10_000];
        down.receiver = Some(report);
        let text = outcome_lines(&down);
        assert!(text.contains("received per interval: 20.0 kB, 10.0 kB"), "{text}");
        let mut up = down.clone();
        up.local_sender = true;
        assert!(!outcome_lines(&up).contains("per interval"));
    }

    #[test]
    fn a_failed_transfer_prints_no_rate() {
        let mut refused = outcome(Vec::new(), 52_300, 0.001);
        refused.error = Some(TransferError::ServerBusy { live: true });
        let s = TransferSummary::new(&[refused], None);
        assert!(!s.ok);
        assert_eq!(s.goodput_bps, 0.0);
        let text = s.lines();
        assert!(text.starts_with("[SUM] 52.3 kB in 0.00 s, FAILED (no rate)"), "{text}");
        assert!(!text.contains("bit/s"), "{text}");
    }
}
