//! Running a scenario: hosts for every flow, the simulation, the results.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tput_cc::{Aggregate, BandwidthSource, ControllerSpec};
use tput_netsim::{FileArrivals, LinkId, Rng, SimTime, Simulator};

use tput_transport::{
    Direction, EvalSlot, Identity, IntervalStats, Node, NodeConfig, ServerTrust, TransferOutcome, TransferSpec,
};

use super::build::build;
use super::results::{AggregateResult, FlowResult, MeasuredWindow, ScenarioResult};
use super::schema::{FlowGroup, Scenario, Transport};
use super::validate::validate;
use crate::Error;
use crate::files::{FileStats, TcpFileClient, TcpFileServer, tcp_file_stats};
use crate::host::{CcSample, FileWorkload, OracleBandwidth, QuicHost};
use crate::tcp::{Amount, TcpSender, TcpSink, TcpTransfer};

/// What a client host recorded: outcomes, interval records, start errors, controller traces.
type HostRecords = (
    Vec<TransferOutcome>,
    Vec<(u64, IntervalStats)>,
    Vec<String>,
    Vec<(u64, Vec<CcSample>)>,
);

fn take_host(sim: &mut Simulator, id: tput_netsim::HostId) -> HostRecords {
    match sim.host_mut::<QuicHost>(id) {
        Some(h) => (
            h.outcomes().to_vec(),
            h.intervals().to_vec(),
            h.start_errors().to_vec(),
            h.take_cc_traces(),
        ),
        None => Default::default(),
    }
}

/// The hosts of one flow: a QUIC client, or a TCP sender and its sink, or
/// the TCP model's file client and server.
#[derive(Debug, Clone, Copy)]
enum FlowHosts {
    Quic(tput_netsim::HostId),
    Tcp(tput_netsim::HostId, tput_netsim::HostId),
    TcpFiles(tput_netsim::HostId, tput_netsim::HostId),
}

/// Files a QUIC client host started.
fn files_started(sim: &Simulator, id: tput_netsim::HostId) -> u64 {
    sim.host::<QuicHost>(id).map_or(0, QuicHost::files_started)
}

/// The result of a TCP flow: goodput, slots and interval bytes as the sink
/// measured them, the rest from the sender.
fn tcp_result(
    sim: &Simulator,
    sender: tput_netsim::HostId,
    sink: tput_netsim::HostId,
    flow: u32,
    group: usize,
    g: &FlowGroup,
    start: Duration,
) -> FlowResult {
    let report = sim.host::<TcpSink>(sink).map(TcpSink::report).unwrap_or_default();
    let snd = sim.host::<TcpSender>(sender);
    let mut errors = Vec::new();
    if !snd.is_some_and(TcpSender::is_finished) {
        errors.push("the transfer did not finish within the drain time".into());
    }
    let mut intervals: Vec<IntervalStats> = snd.map(|s| s.intervals().to_vec()).unwrap_or_default();
    // Record i pairs with the sink's interval i; the last takes every later byte.
    let n = intervals.len();
    let mut counted = 0;
    for (i, rec) in intervals.iter_mut().enumerate() {
        let bytes = if i + 1 == n {
            report.bytes.saturating_sub(counted)
        } else {
            report.interval_bytes.get(i).copied().unwrap_or(0)
        };
        counted += bytes;
        rec.bytes = bytes;
        let secs = rec.end_secs - rec.start_secs;
        rec.goodput_bps = if secs > 0.0 { bytes as f64 * 8.0 / secs } else { 0.0 };
    }
    FlowResult {
        flow,
        group,
        cc: g.cc.to_string(),
        bytes: report.bytes,
        start_secs: start.as_secs_f64(),
        active_secs: report.active_secs,
        intervals,
        cc_trace: snd.map(TcpSender::cc_trace).unwrap_or_default(),
        slots: report.slots,
        success_ratio: report.success_ratio,
        file_times: Vec::new(),
        files: None,
        errors,
        tcp: snd.map(|s| s.stats().clone()),
    }
}

/// How long after `duration` the simulation goes on so that transfers can
/// finish (their last bytes, the report, the close).
const DRAIN: Duration = Duration::from_secs(5);

/// How to run a scenario, beyond what the scenario itself says; nothing
/// here but `write_ahead_to_credit` and `stall_probe` changes what the
/// simulation does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunOptions {
    /// Write a qlog trace of every QUIC connection under this directory,
    /// one folder per flow (`flow-N/client-ID.sqlog`, `flow-N/server-ID.sqlog`),
    /// with virtual times.
    pub qlog_dir: Option<std::path::PathBuf>,
    /// Keep no controller traces: every [`FlowResult::cc_trace`] is empty
    /// (and `cc.csv` has no rows). A trace holds a sample per window change,
    /// up to one per millisecond of window growth: tens of samples per
    /// flow-second, most of a long many-flow run's memory. Everything else
    /// in the result is the same.
    pub no_cc_trace: bool,
    /// Encrypt 1-RTT packets for real (AES-128-GCM, as live). By default a
    /// simulation runs the real TLS handshake and then leaves packets in
    /// the clear with the same sizes ([`NodeConfig::null_packet_protection`]):
    /// every metric is the same either way, and the run costs less CPU.
    pub real_packet_protection: bool,
    /// Senders write payload up to the receiver's flow-control credit
    /// instead of a few congestion windows ahead
    /// ([`NodeConfig::write_ahead_to_credit`]): the same packets but for
    /// STREAM_DATA_BLOCKED/DATA_BLOCKED frames where the credit is reached,
    /// and more memory. For comparisons.
    pub write_ahead_to_credit: bool,
    /// Give every QUIC node the live nodes' stall probes
    /// ([`NodeConfig::stall_probe`]): a sender with nothing acknowledged for
    /// this long sends a packet past its window. Off by default, as in
    /// plain QUIC: in virtual time nothing jitters the probe timeouts, and
    /// a sender whose PTO is close to a multiple of a periodic cut-off's
    /// period over a power of two loses every doubled probe to a cut and
    /// stays silent until the idle timeout.
    pub stall_probe: Option<Duration>,
}

/// Run `s`; `progress` is called with the fraction of simulated time done,
/// every tenth of the scenario.
pub fn run(s: &Scenario, progress: impl FnMut(f64)) -> Result<ScenarioResult, Error> {
    run_with(s, &RunOptions::default(), progress)
}

/// [`run`] with [`RunOptions`].
pub fn run_with(s: &Scenario, options: &RunOptions, mut progress: impl FnMut(f64)) -> Result<ScenarioResult, Error> {
    validate(s)?;
    let total: usize = s.flows.iter().map(|g| g.count as usize).sum();
    if total > 60_000 {
        return Err(Error::Invalid(format!("{total} flows: at most 60000")));
    }
    let mut net = build(s, total)?;
    net.sim
        .set_sample_interval(s.interval)
        .map_err(|e| Error::Invalid(e.to_string()))?;
    net.sim
        .watch_queue(net.bottleneck)
        .map_err(|e| Error::Invalid(e.to_string()))?;

    // Flow ids are 1-based, in group order.
    let mut group_of = Vec::with_capacity(total);
    for (g, group) in s.flows.iter().enumerate() {
        group_of.extend(std::iter::repeat_n(g, group.count as usize));
    }
    let own: BTreeSet<u32> = group_of
        .iter()
        .enumerate()
        .filter(|&(_, &g)| {
            let gr = &s.flows[g];
            gr.oracle_own.unwrap_or(matches!(gr.cc, ControllerSpec::Guarantee(_)))
        })
        .map(|(i, _)| i as u32 + 1)
        .collect();
    let oracle: Option<Arc<dyn BandwidthSource>> = if own.is_empty() {
        None
    } else {
        let h = net
            .sim
            .add_oracle(net.bottleneck, own.iter().copied(), s.oracle_window)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        Some(Arc::new(OracleBandwidth(h)))
    };

    let aggregates: Vec<Option<Aggregate>> = s.flows.iter().map(|g| g.aggregate.then(Aggregate::new)).collect();
    let epoch = Instant::now();
    let identity = Identity::self_signed_from_seed(&["localhost"], s.seed)?;
    let trust = ServerTrust::Root(identity.cert_der().to_vec());
    let node_config = |seed: u64, flow: u32| -> Result<NodeConfig, Error> {
        let qlog_dir = match &options.qlog_dir {
            Some(dir) => {
                let d = dir.join(format!("flow-{flow}"));
                std::fs::create_dir_all(&d)
                    .map_err(|e| Error::Run(format!("creating the qlog directory {}: {e}", d.display())))?;
                Some(d)
            }
            None => None,
        };
        Ok(NodeConfig {
            seed: Some(seed),
            mtu: s.mtu,
            mtu_discovery: false,
            idle_timeout: Duration::from_secs(30),
            qlog_dir,
            null_packet_protection: !options.real_packet_protection,
            write_ahead_to_credit: options.write_ahead_to_credit,
            stall_probe: options.stall_probe,
            ..NodeConfig::default()
        })
    };
    let mut hosts = Vec::with_capacity(total);
    let mut starts = Vec::with_capacity(total);
    for (i, &(src, dst)) in net.pairs.iter().enumerate() {
        let g = &s.flows[group_of[i]];
        let flow = i as u32 + 1;
        let jitter = g.effective_start_jitter();
        let jitter = if jitter.is_zero() {
            Duration::ZERO
        } else {
            let max = u64::try_from(jitter.as_nanos()).unwrap_or(u64::MAX);
            Duration::from_nanos(Rng::derive(s.seed, 3_000_000 + u64::from(flow)).below(max))
        };
        let start = g.start.unwrap_or_default() + jitter;
        starts.push(start);
        let stop = g.stop.unwrap_or(s.duration);
        // Seeds per endpoint, derived from the scenario's.
        let seed = Rng::derive(s.seed, 1_000_000 + u64::from(flow)).next_u64();
        let direction = g.direction.unwrap_or(Direction::Upload);
        let mut server_cfg = node_config(seed ^ 1, flow)?;
        server_cfg.receive_window = g.receive_window;
        server_cfg.server_bandwidth = oracle.clone();
        // Only the sending end's controller joins the group: quinn builds one
        // on the receiving end too, which must not count as a member.
        let aggregate = aggregates[group_of[i]].clone();
        if g.transport == Transport::Tcp {
            let cfg = g
                .tcp
                .clone()
                .unwrap_or_default()
                .config()
                .map_err(|e| Error::Invalid(format!("flows[{}].tcp.{e}", group_of[i])))?;
            let slot = match g.eval_slot {
                Some(EvalSlot::Time(d)) => d,
                _ => Duration::from_secs(1),
            };
            if let Some(f) = &g.files {
                // A TCP connection per file, with the same arrivals as QUIC's
                // for the same seed and flow (the comparison is paired).
                let arrivals = FileArrivals::new(
                    Rng::derive(s.seed, 2_000_000 + u64::from(flow)),
                    SimTime::from_duration(start),
                    f.mean_gap.as_secs_f64(),
                    f.mean_size as f64,
                    f.shape,
                )
                .map_err(|e| Error::Invalid(e.to_string()))?;
                let server = net
                    .sim
                    .attach(dst, TcpFileServer::new(cfg.clone()))
                    .map_err(|e| Error::Invalid(e.to_string()))?;
                let client = TcpFileClient::new(
                    cfg,
                    g.cc.clone(),
                    oracle.clone(),
                    epoch,
                    dst,
                    flow,
                    arrivals,
                    SimTime::from_duration(stop),
                );
                let client = net.sim.attach(src, client).map_err(|e| Error::Invalid(e.to_string()))?;
                hosts.push(FlowHosts::TcpFiles(client, server));
                continue;
            }
            let target_bps = g.target.map_or(0.0, |t| t.bits_per_sec() as f64);
            let sink = TcpSink::new(cfg.clone(), s.interval, slot, target_bps);
            let sink_id = net.sim.attach(dst, sink).map_err(|e| Error::Invalid(e.to_string()))?;
            let cc =
                g.cc.for_payload_acks()
                    .build_in(cfg.segment as u16, oracle.clone(), aggregate.as_ref());
            let amount = match g.bytes {
                Some(b) => Amount::Bytes(b),
                None => Amount::Until(SimTime::from_duration(stop)),
            };
            let transfer = TcpTransfer {
                dst,
                flow,
                start: SimTime::from_duration(start),
                amount,
                interval: s.interval,
            };
            let mut sender = TcpSender::new(cfg, cc, epoch, transfer);
            if options.no_cc_trace {
                sender = sender.without_cc_trace();
            }
            let sender_id = net.sim.attach(src, sender).map_err(|e| Error::Invalid(e.to_string()))?;
            hosts.push(FlowHosts::Tcp(sender_id, sink_id));
            continue;
        }
        if direction == Direction::Download {
            server_cfg.server_aggregate = aggregate.clone();
        }
        let server = Node::server(server_cfg, &identity)?;
        net.sim
            .attach(dst, QuicHost::new(server, epoch, trust.clone()))
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let spec = TransferSpec {
            direction,
            bytes: g.bytes,
            duration: if g.bytes.is_some() { None } else { Some(stop - start) },
            cc: g.cc.clone(),
            target: g.target,
            eval_slot: g.eval_slot.unwrap_or(EvalSlot::Time(Duration::from_secs(1))),
            interval: s.interval,
            rate_limit: g.rate_limit,
            flow,
            bandwidth: oracle.clone(),
            aggregate: if direction == Direction::Upload {
                aggregate
            } else {
                None
            },
            buffers: g.app_buffers(),
        };
        let mut client_cfg = node_config(seed ^ 2, flow)?;
        client_cfg.receive_window = g.receive_window;
        let mut client = QuicHost::new(Node::client(client_cfg)?, epoch, trust.clone());
        if options.no_cc_trace {
            client = client.without_cc_traces();
        }
        match &g.files {
            None => client.schedule(SimTime::from_duration(start), dst, spec),
            Some(f) => {
                let arrivals = FileArrivals::new(
                    Rng::derive(s.seed, 2_000_000 + u64::from(flow)),
                    SimTime::from_duration(start),
                    f.mean_gap.as_secs_f64(),
                    f.mean_size as f64,
                    f.shape,
                )
                .map_err(|e| Error::Invalid(e.to_string()))?;
                let mut template = spec;
                template.interval = Duration::ZERO;
                client.set_files(FileWorkload {
                    arrivals,
                    until: SimTime::from_duration(stop),
                    template,
                    server: dst,
                });
            }
        }
        let client_id = net.sim.attach(src, client).map_err(|e| Error::Invalid(e.to_string()))?;
        hosts.push(FlowHosts::Quic(client_id));
    }

    let end = SimTime::from_duration(s.duration);
    let step = (s.duration / 10).max(Duration::from_millis(1));
    net.sim.run_until_with(end, step, |sim| {
        progress(sim.now().as_secs_f64() / s.duration.as_secs_f64())
    });
    let window = MeasuredWindow {
        end_secs: s.duration.as_secs_f64(),
        bottleneck: net.sim.link_stats(net.bottleneck),
        links: (0..net.sim.link_count())
            .map(|i| net.sim.link_stats(LinkId(i as u32)))
            .collect(),
    };
    let drain = s
        .flows
        .iter()
        .filter_map(|g| g.files.as_ref().and_then(|f| f.drain))
        .fold(DRAIN, Duration::max);
    net.sim.run_until(end + drain);
    progress(1.0);

    let mut flows = Vec::with_capacity(total);
    for (i, &fh) in hosts.iter().enumerate() {
        let g = &s.flows[group_of[i]];
        let client_id = match fh {
            FlowHosts::Quic(id) => id,
            FlowHosts::TcpFiles(client, server) => {
                let (Some(c), Some(sv)) = (
                    net.sim.host::<TcpFileClient>(client),
                    net.sim.host::<TcpFileServer>(server),
                ) else {
                    return Err(Error::Run(format!("flow {}: the TCP file hosts are gone", i + 1)));
                };
                let files = tcp_file_stats(c, sv);
                flows.push(FlowResult {
                    flow: i as u32 + 1,
                    group: group_of[i],
                    cc: g.cc.to_string(),
                    bytes: files.sizes.iter().sum(),
                    start_secs: starts[i].as_secs_f64(),
                    active_secs: files.transfer_secs.iter().sum(),
                    intervals: Vec::new(),
                    cc_trace: Vec::new(),
                    slots: Vec::new(),
                    success_ratio: None,
                    file_times: files.total_secs.clone(),
                    errors: Vec::new(),
                    files: Some(files),
                    tcp: None,
                });
                continue;
            }
            FlowHosts::Tcp(sender, sink) => {
                flows.push(tcp_result(
                    &net.sim,
                    sender,
                    sink,
                    i as u32 + 1,
                    group_of[i],
                    g,
                    starts[i],
                ));
                continue;
            }
        };
        let (client_out, intervals, mut errors, traces) = take_host(&mut net.sim, client_id);
        let mut bytes = 0;
        let mut active_secs = 0.0;
        let mut slots = Vec::new();
        let mut success_ratio = None;
        let mut file_times = Vec::new();
        let start_errors = errors.len() as u64;
        let mut files = g.files.as_ref().map(|_| FileStats {
            started: files_started(&net.sim, client_id),
            ..FileStats::default()
        });
        for o in &client_out {
            if let Some(e) = &o.error {
                if let Some(f) = &mut files {
                    // The server's connection limit (quinn-proto's CONNECTION_REFUSED).
                    if e.to_ascii_lowercase().contains("refused") {
                        f.refused += 1;
                    } else {
                        f.failed += 1;
                    }
                }
                errors.push(e.clone());
                continue;
            }
            if let Some(r) = &o.receiver {
                bytes += r.bytes;
                active_secs += r.duration_secs;
                if let Some(f) = &mut files {
                    file_times.push(o.elapsed_secs);
                    f.transfer_secs.push(r.duration_secs);
                    f.total_secs.push(o.elapsed_secs);
                    f.sizes.push(r.bytes);
                } else {
                    slots = r.slots.clone();
                    success_ratio = r.success_ratio;
                }
            }
        }
        if client_out.is_empty() && g.files.is_none() {
            errors.push("the transfer did not finish within the drain time".into());
        }
        if let Some(f) = &mut files {
            // Files that could not start at all failed; the rest never ended.
            f.failed += start_errors;
            f.unfinished = f.started.saturating_sub(client_out.len() as u64 + start_errors);
        }
        flows.push(FlowResult {
            flow: i as u32 + 1,
            group: group_of[i],
            cc: g.cc.to_string(),
            bytes,
            start_secs: starts[i].as_secs_f64(),
            active_secs,
            intervals: intervals.into_iter().map(|(_, r)| r).collect(),
            cc_trace: traces.into_iter().next().map(|(_, t)| t).unwrap_or_default(),
            slots,
            success_ratio,
            file_times,
            files,
            errors,
            tcp: None,
        });
    }
    let aggregates = s
        .flows
        .iter()
        .enumerate()
        .filter(|(_, g)| g.aggregate)
        .map(|(gi, g)| {
            let members: Vec<&FlowResult> = flows.iter().filter(|f| f.group == gi).collect();
            let target = g.target.map_or(0.0, |t| t.bits_per_sec() as f64 * f64::from(g.count));
            AggregateResult::judge(gi, target, &members)
        })
        .collect();
    Ok(ScenarioResult {
        aggregates,
        name: s.name.clone(),
        flows,
        bottleneck: net.sim.link_stats(net.bottleneck),
        links: (0..net.sim.link_count())
            .map(|i| net.sim.link_stats(LinkId(i as u32)))
            .collect(),
        queue: net.sim.queue_samples().to_vec(),
        delivered: net.sim.flow_samples().to_vec(),
        trace_hash: net.sim.trace_hash(),
        link_packets: net.sim.link_packets(),
        simulated_secs: net.sim.now().as_secs_f64(),
        window,
    })
}
