//! Running a scenario: hosts for every flow, the simulation, the results.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tput_cc::{Aggregate, BandwidthSource, ControllerSpec};
use tput_netsim::{Addr, FileArrivals, LinkId, LinkStats, Rng, SimTime, Simulator};

use tput_transport::{
    BufferPool, Direction, EvalSlot, Identity, IntervalStats, Node, NodeConfig, SenderController, ServerTrust,
    SimOptions, TransferOutcome, TransferSpec,
};

use super::build::{Net, build};
use super::results::{AggregateResult, FlowResult, Headline, MeasuredWindow, ScenarioResult};
use super::schema::{FilesSpec, FlowGroup, Scenario, Transport};
use super::tcp::{interval_stats, slot_and_target};
use super::validate::validate;
use crate::Error;
use crate::files::{FileStats, tcp_file_stats};
use crate::host::{CcSamples, CcTrace, FileWorkload, OracleBandwidth, QuicHost};
use tput_tcp::files::{TcpFileClient, TcpFileServer};
use tput_tcp::{Amount, TcpSender, TcpSink, TcpTransfer};

/// A TCP sender of a bulk flow, its controller traced unless the run says not to.
type TracedSender = TcpSender<Option<CcTrace>>;

/// What a client host recorded: outcomes, interval records, start errors, controller traces.
type HostRecords = (
    Vec<TransferOutcome>,
    Vec<(u64, IntervalStats)>,
    Vec<String>,
    Vec<(u64, CcSamples)>,
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
    let (slot, target) = slot_and_target(g);
    let (slots, success_ratio) = target.map_or((Vec::new(), None), |t| {
        tput_transport::SlotStats::judge(&report.slot_bytes, slot, t)
    });
    let snd = sim.host::<TracedSender>(sender);
    let mut errors = Vec::new();
    if !snd.is_some_and(TracedSender::is_finished) {
        errors.push("the transfer did not finish within the drain time".into());
    }
    let mut intervals: Vec<IntervalStats> = snd
        .map(|s| s.intervals().iter().map(interval_stats).collect())
        .unwrap_or_default();
    // Record i pairs with the sink's interval i (both count from the flow's
    // start); the last takes every later byte.
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
        active_secs: report.active.as_secs_f64(),
        intervals,
        cc_trace: snd
            .and_then(|s| s.observer().clone())
            .map(|mut t| t.finish())
            .unwrap_or_default(),
        slots,
        success_ratio,
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
    /// flow-second, held compactly ([`crate::host::CcSamples`]: about 7
    /// bytes a NewReno sample, 28 a guarantee controller's). Everything
    /// else in the result is the same.
    pub no_cc_trace: bool,
    /// Encrypt 1-RTT packets for real (AES-128-GCM, as live). By default a
    /// simulation runs the real TLS handshake and then leaves packets in
    /// the clear with the same sizes ([`tput_transport::SimOptions::null_packet_protection`]):
    /// every metric is the same either way, and the run costs less CPU.
    pub real_packet_protection: bool,
    /// Senders write payload up to the receiver's flow-control credit
    /// instead of a few congestion windows ahead
    /// ([`tput_transport::SimOptions::write_ahead_to_credit`]): the same packets but for
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
    // Every hop's queue is sampled (sampling is not a simulator event and
    // leaves the trace hash alone); the headline hop's samples are kept.
    for &hop in &net.hops {
        net.sim.watch_queue(hop).map_err(|e| Error::Invalid(e.to_string()))?;
    }

    // Flow ids are 1-based, in group order.
    let mut group_of = Vec::with_capacity(total);
    for (g, group) in s.flows.iter().enumerate() {
        group_of.extend(std::iter::repeat_n(g, group.count as usize));
    }
    let oracle = add_oracle(s, &mut net, &group_of)?;
    let identity = Identity::self_signed_from_seed(&["localhost"], s.seed)?;
    let setup = Setup {
        s,
        options,
        oracle,
        aggregates: s.flows.iter().map(|g| g.aggregate.then(Aggregate::new)).collect(),
        epoch: Instant::now(),
        trust: ServerTrust::Root(identity.cert_der().to_vec()),
        identity,
        buffers: BufferPool::new(),
    };
    let mut hosts = Vec::with_capacity(total);
    let mut starts = Vec::with_capacity(total);
    for (i, &(src, dst)) in net.pairs.iter().enumerate() {
        let flow = i as u32 + 1;
        let start = setup.start_of(&s.flows[group_of[i]], flow);
        starts.push(start);
        hosts.push(setup.attach(&mut net.sim, group_of[i], flow, (src, dst), start)?);
    }

    let window = simulate(s, &mut net, &mut progress);
    progress(1.0);
    let headline = Headline::choose(s.topology.headline_hop(), &net.hops, &window);

    let mut flows = Vec::with_capacity(total);
    for (i, &fh) in hosts.iter().enumerate() {
        let g = &s.flows[group_of[i]];
        let (flow, group, start) = (i as u32 + 1, group_of[i], starts[i]);
        let mut f = match fh {
            FlowHosts::Quic(client) => quic_result(&mut net.sim, client, flow, group, g, start),
            FlowHosts::TcpFiles(client, server) => tcp_files_result(&net.sim, client, server, flow, group, g, start)?,
            FlowHosts::Tcp(sender, sink) => tcp_result(&net.sim, sender, sink, flow, group, g, start),
        };
        if g.files.is_some() {
            // A file workload's transfers overlap: the sum of their times
            // can exceed the run. Its active time is its own span, from its
            // start to its stop (each file's times are in `files`).
            f.active_secs = g.stop.unwrap_or(s.duration).saturating_sub(start).as_secs_f64();
        }
        judge_unconnected(g, &mut f);
        flows.push(f);
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
        bottleneck: net.sim.link_stats(headline.link),
        links: (0..net.sim.link_count())
            .map(|i| net.sim.link_stats(LinkId(i as u32)))
            .collect(),
        queue: net
            .sim
            .queue_samples()
            .iter()
            .filter(|q| q.link == headline.link)
            .copied()
            .collect(),
        window: MeasuredWindow {
            bottleneck: window.links[headline.link.index()].clone(),
            ..window
        },
        hops: net.hops.clone(),
        headline,
        delivered: net.sim.flow_samples().to_vec(),
        trace_hash: net.sim.trace_hash(),
        link_packets: net.sim.link_packets(),
        events_processed: net.sim.events_processed(),
        simulated_secs: net.sim.now().as_secs_f64(),
    })
}

/// The bandwidth oracle on the bottleneck, if any flow feeds on it: the
/// flows of groups with `oracle_own` (by default, guarantee controllers).
fn add_oracle(s: &Scenario, net: &mut Net, group_of: &[usize]) -> Result<Option<Arc<dyn BandwidthSource>>, Error> {
    let own: BTreeSet<u32> = group_of
        .iter()
        .enumerate()
        .filter(|&(_, &g)| {
            let gr = &s.flows[g];
            gr.oracle_own.unwrap_or(matches!(gr.cc, ControllerSpec::Guarantee(_)))
        })
        .map(|(i, _)| i as u32 + 1)
        .collect();
    if own.is_empty() {
        return Ok(None);
    }
    let h = net
        .sim
        .add_oracle(net.oracle_link, own.iter().copied(), s.oracle_window)
        .map_err(|e| Error::Invalid(e.to_string()))?;
    Ok(Some(Arc::new(OracleBandwidth(h))))
}

/// Run the simulation to the end of the scenario (calling `progress` every
/// tenth), take the measured window, then drain.
fn simulate(s: &Scenario, net: &mut Net, progress: &mut impl FnMut(f64)) -> MeasuredWindow {
    let end = SimTime::from_duration(s.duration);
    let step = (s.duration / 10).max(Duration::from_millis(1));
    net.sim.run_until_with(end, step, |sim| {
        progress(sim.now().as_secs_f64() / s.duration.as_secs_f64())
    });
    // `bottleneck` is set once the headline hop is chosen from `links`.
    let window = MeasuredWindow {
        end_secs: s.duration.as_secs_f64(),
        bottleneck: LinkStats::default(),
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
    window
}

/// What every flow's hosts share.
struct Setup<'a> {
    s: &'a Scenario,
    options: &'a RunOptions,
    oracle: Option<Arc<dyn BandwidthSource>>,
    /// Per group, its [`Aggregate`] if it has `aggregate = true`.
    aggregates: Vec<Option<Aggregate>>,
    epoch: Instant,
    identity: Identity,
    trust: ServerTrust,
    /// The datagram buffers every QUIC node of the run shares.
    buffers: BufferPool,
}

impl Setup<'_> {
    /// When `flow` of group `g` starts: the group's start plus its jitter.
    fn start_of(&self, g: &FlowGroup, flow: u32) -> Duration {
        let jitter = g.effective_start_jitter();
        let jitter = if jitter.is_zero() {
            Duration::ZERO
        } else {
            let max = u64::try_from(jitter.as_nanos()).unwrap_or(u64::MAX);
            Duration::from_nanos(Rng::derive(self.s.seed, 3_000_000 + u64::from(flow)).below(max))
        };
        g.start.unwrap_or_default() + jitter
    }

    /// The simulator-only switches of a node seeded with `seed`.
    fn sim_options(&self, seed: u64) -> SimOptions {
        SimOptions::seeded(seed)
            .with_null_packet_protection(!self.options.real_packet_protection)
            .with_write_ahead_to_credit(self.options.write_ahead_to_credit)
    }

    /// A QUIC node's configuration for `flow`, with its qlog directory created.
    fn node_config(&self, flow: u32) -> Result<NodeConfig, Error> {
        let qlog_dir = match &self.options.qlog_dir {
            Some(dir) => {
                let d = dir.join(format!("flow-{flow}"));
                std::fs::create_dir_all(&d)
                    .map_err(|e| Error::Run(format!("creating the qlog directory {}: {e}", d.display())))?;
                Some(d)
            }
            None => None,
        };
        Ok(NodeConfig::default()
            .with_mtu(self.s.mtu)
            .with_mtu_discovery(false)
            .with_idle_timeout(Duration::from_secs(30))
            .with_qlog_dir(qlog_dir)
            .with_stall_probe(self.options.stall_probe))
    }

    /// The file arrivals of `flow` from `start`: the same for QUIC and TCP
    /// for the same seed and flow (comparisons are paired).
    fn arrivals(&self, f: &FilesSpec, flow: u32, start: Duration) -> Result<FileArrivals, Error> {
        FileArrivals::new(
            Rng::derive(self.s.seed, 2_000_000 + u64::from(flow)),
            SimTime::from_duration(start),
            f.mean_gap,
            f.mean_size as f64,
            f.shape,
        )
        .map_err(|e| Error::Invalid(e.to_string()))
    }

    /// Attach the hosts of `flow` (of group `group`, from `src` to `dst`,
    /// starting at `start`) to `sim`.
    fn attach(
        &self,
        sim: &mut Simulator,
        group: usize,
        flow: u32,
        (src, dst): (Addr, Addr),
        start: Duration,
    ) -> Result<FlowHosts, Error> {
        let g = &self.s.flows[group];
        let stop = g.stop.unwrap_or(self.s.duration);
        // Seeds per endpoint, derived from the scenario's.
        let seed = Rng::derive(self.s.seed, 1_000_000 + u64::from(flow)).next_u64();
        let direction = g.direction.unwrap_or(Direction::Upload);
        let mut server_cfg = self.node_config(flow)?;
        server_cfg.receive_window = g.receive_window;
        server_cfg.server_bandwidth = self.oracle.clone();
        // Only the sending end's controller joins the group: quinn builds one
        // on the receiving end too, which must not count as a member.
        let aggregate = self.aggregates[group].clone();
        if g.transport == Transport::Tcp {
            return self.attach_tcp(sim, group, flow, (src, dst), start, aggregate);
        }
        if direction == Direction::Download {
            server_cfg.server_aggregate = aggregate.clone();
        }
        let options = |seed| self.sim_options(seed).with_flow(flow);
        let mut server = Node::simulated(server_cfg, Some(&self.identity), options(seed ^ 1))?;
        server.share_buffers(self.buffers.clone());
        let mut server_host = QuicHost::new(server, self.epoch, self.trust.clone());
        if g.ecn {
            server_host = server_host.with_ecn();
        }
        sim.attach(dst, server_host)
            .map_err(|e| Error::Invalid(e.to_string()))?;
        let spec = TransferSpec::new(direction, g.cc.clone())
            .with_bytes(g.bytes)
            .with_duration(if g.bytes.is_some() { None } else { Some(stop - start) })
            .with_target(g.target)
            .with_eval_slot(g.eval_slot.unwrap_or(EvalSlot::Time(Duration::from_secs(1))))
            .with_interval(self.s.interval)
            .with_rate_limit(g.rate_limit)
            .with_bandwidth(self.oracle.clone())
            .with_aggregate(if direction == Direction::Upload {
                aggregate
            } else {
                None
            })
            .with_buffers(g.app_buffers())
            .with_controller(
                g.quinn_cc()
                    .map_or_else(|| g.cc.clone().into(), SenderController::Quinn),
            );
        let mut client_cfg = self.node_config(flow)?;
        client_cfg.receive_window = g.receive_window;
        let mut client_node = Node::simulated(client_cfg, None, options(seed ^ 2))?;
        client_node.share_buffers(self.buffers.clone());
        let mut client = QuicHost::new(client_node, self.epoch, self.trust.clone());
        if self.options.no_cc_trace {
            client = client.without_cc_traces();
        }
        if g.ecn {
            client = client.with_ecn();
        }
        match &g.files {
            None => client.schedule(SimTime::from_duration(start), dst, spec),
            Some(f) => {
                let arrivals = self.arrivals(f, flow, start)?;
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
        let client_id = sim.attach(src, client).map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(FlowHosts::Quic(client_id))
    }

    /// [`Setup::attach`] for a flow over the TCP model: a sender and its
    /// sink, or a file client and server.
    fn attach_tcp(
        &self,
        sim: &mut Simulator,
        group: usize,
        flow: u32,
        (src, dst): (Addr, Addr),
        start: Duration,
        aggregate: Option<Aggregate>,
    ) -> Result<FlowHosts, Error> {
        let g = &self.s.flows[group];
        let stop = g.stop.unwrap_or(self.s.duration);
        let spec = g.tcp.clone().unwrap_or_default();
        let bad = |e: String| Error::Invalid(format!("flows[{group}].tcp.{e}"));
        let cfg = spec.config().map_err(bad)?;
        let cc_spec = spec.controller(&g.cc).map_err(bad)?;
        let (slot, target) = slot_and_target(g);
        if let Some(f) = &g.files {
            // A TCP connection per file, with the same arrivals as QUIC's
            // for the same seed and flow (the comparison is paired).
            let arrivals = self.arrivals(f, flow, start)?;
            let server = sim
                .attach(dst, TcpFileServer::new(cfg.clone()))
                .map_err(|e| Error::Invalid(e.to_string()))?;
            let client = TcpFileClient::new(
                cfg,
                cc_spec,
                self.oracle.clone(),
                self.epoch,
                dst,
                flow,
                arrivals,
                SimTime::from_duration(stop),
            );
            let client = sim.attach(src, client).map_err(|e| Error::Invalid(e.to_string()))?;
            return Ok(FlowHosts::TcpFiles(client, server));
        }
        // Intervals from the flow's start, as the sender's records count them.
        let sink = TcpSink::new(cfg.clone(), self.s.interval, target.is_some().then_some(slot))
            .with_interval_origin(SimTime::from_duration(start));
        let sink_id = sim.attach(dst, sink).map_err(|e| Error::Invalid(e.to_string()))?;
        let cc = cc_spec
            .for_payload_acks()
            .build_in(cfg.segment as u16, self.oracle.clone(), aggregate.as_ref());
        let amount = match g.bytes {
            Some(b) => Amount::Bytes(b),
            None => Amount::Until(SimTime::from_duration(stop)),
        };
        let transfer =
            TcpTransfer::new(dst, flow, SimTime::from_duration(start), amount).with_interval(self.s.interval);
        let trace = (!self.options.no_cc_trace).then(CcTrace::default);
        let sender = TcpSender::with_observer(cfg, cc, self.epoch, transfer, trace);
        let sender_id = sim.attach(src, sender).map_err(|e| Error::Invalid(e.to_string()))?;
        Ok(FlowHosts::Tcp(sender_id, sink_id))
    }
}

/// The result of a flow of TCP file transfers.
fn tcp_files_result(
    sim: &Simulator,
    client: tput_netsim::HostId,
    server: tput_netsim::HostId,
    flow: u32,
    group: usize,
    g: &FlowGroup,
    start: Duration,
) -> Result<FlowResult, Error> {
    let (Some(c), Some(sv)) = (sim.host::<TcpFileClient>(client), sim.host::<TcpFileServer>(server)) else {
        return Err(Error::Run(format!("flow {flow}: the TCP file hosts are gone")));
    };
    let files = tcp_file_stats(c, sv);
    Ok(FlowResult {
        flow,
        group,
        cc: g.cc.to_string(),
        bytes: files.sizes.iter().sum(),
        start_secs: start.as_secs_f64(),
        active_secs: files.transfer_secs.iter().sum(),
        intervals: Vec::new(),
        cc_trace: CcSamples::default(),
        slots: Vec::new(),
        success_ratio: None,
        file_times: files.total_secs.clone(),
        errors: Vec::new(),
        files: Some(files),
        tcp: None,
    })
}

/// A judged flow (a bulk transfer with a target) that never connected,
/// failing without a verified byte, met none of its slots: its success
/// ratio is 0, not unknown, so that means over flows and groups count it.
fn judge_unconnected(g: &FlowGroup, f: &mut FlowResult) {
    if g.target.is_some() && g.files.is_none() && f.slots.is_empty() && f.bytes == 0 && !f.errors.is_empty() {
        f.success_ratio = Some(0.0);
    }
}

/// The result of a QUIC flow, from its client host's records.
fn quic_result(
    sim: &mut Simulator,
    client_id: tput_netsim::HostId,
    flow: u32,
    group: usize,
    g: &FlowGroup,
    start: Duration,
) -> FlowResult {
    let (client_out, intervals, mut errors, traces) = take_host(sim, client_id);
    let mut bytes = 0;
    let mut active_secs = 0.0;
    let mut slots = Vec::new();
    let mut success_ratio = None;
    let mut file_times = Vec::new();
    let start_errors = errors.len() as u64;
    let mut files = g.files.as_ref().map(|_| FileStats {
        started: files_started(sim, client_id),
        ..FileStats::default()
    });
    for o in &client_out {
        if let Some(e) = &o.error {
            if let Some(f) = &mut files {
                // The server's connection limit (quinn-proto's CONNECTION_REFUSED).
                if e.is_refusal() {
                    f.refused += 1;
                } else {
                    f.failed += 1;
                }
            }
            errors.push(e.to_string());
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
    FlowResult {
        flow,
        group,
        cc: g.quinn_cc().map_or_else(|| g.cc.to_string(), |q| q.to_string()),
        bytes,
        start_secs: start.as_secs_f64(),
        active_secs,
        intervals: intervals.into_iter().map(|(_, r)| r).collect(),
        cc_trace: traces.into_iter().next().map(|(_, t)| t).unwrap_or_default(),
        slots,
        success_ratio,
        file_times,
        files,
        errors,
        tcp: None,
    }
}
