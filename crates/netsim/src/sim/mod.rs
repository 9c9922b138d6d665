//! The event engine.

use std::time::Duration;

use crate::metrics::{FlowSample, FlowStats, LinkStats, Metrics, QueueSample};
use crate::model::{LinkModel, PacketTag};
use crate::oracle::OracleState;
use crate::queue::{Ev, EventQueue};
use crate::time::duration_to_nanos;
use crate::{
    Addr, Datagram, Ecn, Error, FlowId, Host, HostId, LinkId, NodeId, OracleHandle, Rate, Rng, SimTime, Topology,
};

mod parts;

use parts::{
    FNV_OFFSET, FlowTable, HostSlot, Kind, LINK_STREAM, LinkRt, NO_ROUTE, Packet, SimDriver, TraceKind, fold_trace,
    push_ev,
};

/// The discrete-event simulator: a topology, the hosts attached to it, and
/// one event queue in virtual time.
///
/// A run is a pure function of the topology, the hosts' behaviour and the
/// seed: events at the same nanosecond run in the order they were scheduled,
/// and all randomness comes from [`Rng`] streams derived from the seed.
///
/// Hosts are owned by the simulator as boxed trait objects. Get them back
/// (during or after a run) with [`Simulator::host`] / [`Simulator::host_mut`],
/// which downcast to the concrete type; after mutating a host from outside,
/// call [`Simulator::kick`] so the simulator re-polls it.
pub struct Simulator {
    now: u64,
    seed: u64,
    seq: u64,
    heap: EventQueue,
    n_nodes: usize,
    /// Next hop (link index) per node and destination node.
    routes: crate::topology::RoutingTable,
    /// Hosts per node: (port, host index), sorted by port.
    node_hosts: Vec<Vec<(u16, u32)>>,
    links: Vec<LinkRt>,
    hosts: Vec<HostSlot>,
    flows: FlowTable,
    oracles: Vec<OracleState>,
    sample_interval: u64,
    sample_gen: u32,
    watched: Vec<LinkId>,
    queue_samples: Vec<QueueSample>,
    flow_samples: Vec<FlowSample>,
    unroutable: u64,
    no_listener: u64,
    events: u64,
    trace: u64,
}

impl Simulator {
    /// A simulator at time zero over `topology` (already validated by its
    /// builder), with every random stream derived from `seed`.
    pub fn new(topology: Topology, seed: u64) -> Simulator {
        let routes = topology.routing_table();
        let n_nodes = topology.node_count();
        tracing::debug!(
            nodes = n_nodes,
            links = topology.link_count(),
            seed,
            "netsim: building simulator"
        );
        let mut sim = Simulator {
            now: 0,
            seed,
            seq: 0,
            heap: EventQueue::with_capacity(1024),
            n_nodes,
            routes,
            node_hosts: vec![Vec::new(); n_nodes],
            links: Vec::with_capacity(topology.links.len()),
            hosts: Vec::new(),
            flows: FlowTable::default(),
            oracles: Vec::new(),
            sample_interval: 0,
            sample_gen: 0,
            watched: Vec::new(),
            queue_samples: Vec::new(),
            flow_samples: Vec::new(),
            unroutable: 0,
            no_listener: 0,
            events: 0,
            trace: FNV_OFFSET,
        };
        for (i, (_, to, cfg)) in topology.links.into_iter().enumerate() {
            sim.links.push(LinkRt {
                model: LinkModel::new(&cfg, Rng::derive(seed, LINK_STREAM | i as u64)),
                to,
                oracles: Vec::new(),
            });
            let (l, mut d) = sim.link_ctx(i);
            l.start(&mut d);
        }
        sim
    }

    /// A link's model with the simulator as its driver.
    #[inline]
    fn link_ctx(&mut self, li: usize) -> (&mut LinkModel<Packet>, SimDriver<'_>) {
        let LinkRt { model, oracles, .. } = &mut self.links[li];
        (
            model,
            SimDriver {
                heap: &mut self.heap,
                seq: &mut self.seq,
                trace: &mut self.trace,
                oracles: &mut self.oracles,
                watched: oracles,
                li: li as u32,
            },
        )
    }

    /// The seed the run was built with.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// A random stream for a caller's component (e.g. a host's start
    /// jitter), independent of the simulator's own streams.
    pub fn rng(&self, stream_id: u64) -> Rng {
        Rng::derive(self.seed, stream_id)
    }

    /// Current virtual time.
    pub fn now(&self) -> SimTime {
        SimTime::from_nanos(self.now)
    }

    /// Number of events processed so far.
    pub fn events_processed(&self) -> u64 {
        self.events
    }

    /// Events waiting in the queue (including stale timer entries).
    pub fn pending_events(&self) -> usize {
        self.heap.len()
    }

    /// FNV-style 64-bit hash of every link event (offer, drop by cause,
    /// arrival) and host delivery so far, with its time, link or host, and
    /// size. Two runs with equal hashes took the same path.
    pub fn trace_hash(&self) -> u64 {
        self.trace
    }

    /// Packets that have crossed a link (sum of `delivered` over links).
    pub fn link_packets(&self) -> u64 {
        self.links.iter().map(|l| l.model.delivered().packets).sum()
    }

    #[inline]
    fn push(&mut self, time: u64, kind: Kind, id: u32, arg: u32) {
        push_ev(&mut self.heap, &mut self.seq, time, kind, id, arg);
    }

    #[inline]
    fn trace(&mut self, time: u64, kind: TraceKind, id: u32, size: u64) {
        fold_trace(&mut self.trace, time, kind, id, size);
    }

    // ----- hosts -------------------------------------------------------

    /// Attaches `host` at `addr` at the current time: calls
    /// [`Host::on_attach`], drains its transmits and arms its timer. A
    /// `Box<dyn Host>` is a host too (get it back as `Box<dyn Host>`).
    ///
    /// A host that reports a wake-up in the past is woken at the current
    /// time; one that keeps reporting `now` without progressing would stall
    /// the run, as it would stall a real event loop.
    pub fn attach<H: Host>(&mut self, addr: Addr, host: H) -> Result<HostId, Error> {
        if addr.node.index() >= self.n_nodes {
            return Err(Error::UnknownNode(addr.node));
        }
        let slots = &mut self.node_hosts[addr.node.index()];
        let Err(at) = slots.binary_search_by_key(&addr.port, |&(p, _)| p) else {
            return Err(Error::AddressInUse(addr));
        };
        let id = self.hosts.len() as u32;
        slots.insert(at, (addr.port, id));
        self.hosts.push(HostSlot {
            host: Box::new(host),
            addr,
            wake: None,
            armed: None,
        });
        let now = self.now();
        self.hosts[id as usize].host.on_attach(now, addr);
        self.service(id as usize);
        Ok(HostId(id))
    }

    /// The host `id` as its concrete type, or `None` if the id is unknown or
    /// the type differs.
    pub fn host<T: Host>(&self, id: HostId) -> Option<&T> {
        // Deref first: `Box<dyn AnyHost>` is itself a host.
        (*self.hosts.get(id.index())?.host).as_any().downcast_ref()
    }

    /// Mutable access to host `id`. Call [`Simulator::kick`] afterwards if
    /// the change may make it send or move its timer.
    pub fn host_mut<T: Host>(&mut self, id: HostId) -> Option<&mut T> {
        (*self.hosts.get_mut(id.index())?.host).as_any_mut().downcast_mut()
    }

    /// The address host `id` was attached at.
    pub fn host_addr(&self, id: HostId) -> Option<Addr> {
        self.hosts.get(id.index()).map(|h| h.addr)
    }

    /// Re-polls host `id` at the current time: drains its transmits and
    /// re-reads its wake-up time.
    pub fn kick(&mut self, id: HostId) -> Result<(), Error> {
        if id.index() >= self.hosts.len() {
            return Err(Error::UnknownHost(id.0));
        }
        self.service(id.index());
        Ok(())
    }

    /// Drains a host's transmits, then (re-)arms its timer. A timer event is
    /// pushed only when the wake-up moves earlier than every timer event
    /// already queued for the host: pushing one per change filled the heap
    /// with stale entries and cost 13 % of the CPU in a quinn-proto run.
    fn service(&mut self, h: usize) {
        let now = self.now();
        while let Some(d) = self.hosts[h].host.poll_transmit(now) {
            self.send(h, d);
        }
        let slot = &mut self.hosts[h];
        let wake = slot.host.poll_timeout().map(|t| t.as_nanos().max(self.now));
        slot.wake = wake;
        if let Some(w) = wake
            && slot.armed.is_none_or(|a| w < a)
        {
            slot.armed = Some(w);
            self.push(w, Kind::Timer, h as u32, 0);
        }
    }

    fn on_timer(&mut self, h: usize) {
        let now = self.now;
        let slot = &mut self.hosts[h];
        if slot.armed == Some(now) {
            slot.armed = None;
        }
        match slot.wake {
            Some(w) if w <= now => {
                slot.wake = None;
                slot.host.on_timeout(SimTime::from_nanos(now));
                self.service(h);
            }
            // Stale (the wake-up moved later or went away): re-arm only if no
            // earlier event is already queued.
            Some(w) if slot.armed.is_none_or(|a| w < a) => {
                slot.armed = Some(w);
                self.push(w, Kind::Timer, h as u32, 0);
            }
            _ => {}
        }
    }

    fn send(&mut self, h: usize, d: Datagram) {
        let src = self.hosts[h].addr;
        self.flows.entry(d.flow).stats.sent.add(d.payload.len() as u64);
        let dst_node = d.dst.node.index();
        let route = self.routes.route(src.node.index(), dst_node);
        if route == NO_ROUTE {
            self.unroutable += 1;
            return;
        }
        let pkt = Packet {
            src,
            dst: d.dst,
            payload: d.payload,
        };
        self.enqueue(route as usize, d.flow, d.ecn, pkt);
    }

    fn arrive_at_node(&mut self, node: NodeId, flow: FlowId, ecn: Ecn, pkt: Packet) {
        if pkt.dst.node == node {
            self.deliver(flow, ecn, pkt);
            return;
        }
        let route = self.routes.route(node.index(), pkt.dst.node.index());
        if route == NO_ROUTE {
            self.unroutable += 1;
        } else {
            self.enqueue(route as usize, flow, ecn, pkt);
        }
    }

    fn deliver(&mut self, flow: FlowId, ecn: Ecn, pkt: Packet) {
        let slots = &self.node_hosts[pkt.dst.node.index()];
        let h = slots
            .binary_search_by_key(&pkt.dst.port, |&(p, _)| p)
            .ok()
            .map(|i| slots[i].1 as usize);
        let Some(h) = h else {
            self.no_listener += 1;
            return;
        };
        let len = pkt.payload.len() as u64;
        self.flows.entry(flow).stats.delivered.add(len);
        self.trace(self.now, TraceKind::Deliver, h as u32, len);
        let now = self.now();
        self.hosts[h].host.on_datagram(now, pkt.src, flow, ecn, pkt.payload);
        self.service(h);
    }

    // ----- links -------------------------------------------------------

    #[inline]
    fn enqueue(&mut self, li: usize, flow: FlowId, ecn: Ecn, pkt: Packet) {
        let now = self.now();
        let len = pkt.payload.len() as u64;
        let tag = PacketTag::new(flow).with_ecn(ecn).with_hash(pkt.flow_hash());
        let (l, mut d) = self.link_ctx(li);
        l.offer_tagged(now, len, tag, pkt, &mut d);
    }

    #[inline]
    fn pump(&mut self, li: usize) {
        let now = self.now();
        let (l, mut d) = self.link_ctx(li);
        l.pump(now, &mut d);
    }

    fn on_arrive(&mut self, li: usize) {
        let now = self.now();
        let (l, mut d) = self.link_ctx(li);
        let Some(f) = l.on_arrive(now, &mut d) else { return };
        let to = self.links[li].to;
        self.trace(self.now, TraceKind::Arrive, li as u32, f.wire);
        self.arrive_at_node(to, f.flow, f.ecn, f.item);
    }

    fn on_rate_change(&mut self, li: usize, step: u32) {
        let now = self.now;
        let l = &mut self.links[li];
        let rate = l.model.on_rate_change(step);
        for &o in &l.oracles {
            self.oracles[o as usize].set_capacity(rate.bits_per_sec(), now);
        }
    }

    // ----- running -----------------------------------------------------

    fn dispatch(&mut self, ev: Ev) {
        let id = ev.id as usize;
        match ev.kind() {
            Kind::Kick => {
                let now = self.now();
                let (l, mut d) = self.link_ctx(id);
                l.on_tx_done(now, ev.arg(), &mut d);
            }
            Kind::Arrive => self.on_arrive(id),
            Kind::Timer => self.on_timer(id),
            Kind::CutStart => {
                let now = self.now();
                let (l, mut d) = self.link_ctx(id);
                l.on_cut_start(now, &mut d);
            }
            Kind::CutEnd => {
                let now = self.now();
                let (l, mut d) = self.link_ctx(id);
                l.on_cut_end(now, &mut d);
            }
            Kind::PauseStart => self.links[id].model.on_pause_start(),
            Kind::RateChange => self.on_rate_change(id, ev.arg()),
            Kind::Sample => {
                if ev.arg() == self.sample_gen {
                    self.take_samples();
                    let next = self.now + self.sample_interval;
                    self.push(next, Kind::Sample, 0, self.sample_gen);
                }
            }
            Kind::OracleTick => {
                let o = &mut self.oracles[id];
                o.tick(self.now);
                let next = self.now + o.bucket_ns();
                self.push(next, Kind::OracleTick, id as u32, 0);
            }
        }
    }

    /// Processes every event scheduled at or before `t`, then sets the clock
    /// to `t` (if it is later than now).
    pub fn run_until(&mut self, t: SimTime) {
        let t = t.as_nanos();
        while let Some(ev) = self.heap.pop_due(t) {
            self.now = ev.time;
            self.events += 1;
            self.dispatch(ev);
        }
        self.now = self.now.max(t);
    }

    /// Runs for `d` of virtual time.
    pub fn run_for(&mut self, d: Duration) {
        let t = self.now() + d;
        self.run_until(t);
    }

    /// Runs until `t` in steps of `step`, calling `progress` after each step
    /// (for progress bars, or to inject changes between steps).
    pub fn run_until_with<F: FnMut(&mut Simulator)>(&mut self, t: SimTime, step: Duration, mut progress: F) {
        let step = step.max(Duration::from_nanos(1));
        while self.now() < t {
            let next = (self.now() + step).min(t);
            self.run_until(next);
            progress(self);
        }
    }

    /// Time of the next queued event, if any.
    pub fn next_event_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| SimTime::from_nanos(e.time))
    }

    // ----- metrics -----------------------------------------------------

    fn check_link(&self, link: LinkId) -> Result<(), Error> {
        if link.index() < self.links.len() {
            Ok(())
        } else {
            Err(Error::UnknownLink(link))
        }
    }

    /// Number of links.
    pub fn link_count(&self) -> usize {
        self.links.len()
    }

    /// The current rate of `link`.
    pub fn link_rate(&self, link: LinkId) -> Option<Rate> {
        self.links.get(link.index()).map(|l| l.model.rate())
    }

    /// A snapshot of `link`'s counters (default values for an unknown link).
    pub fn link_stats(&self, link: LinkId) -> LinkStats {
        let Some(l) = self.links.get(link.index()) else {
            return LinkStats::default();
        };
        LinkStats {
            link,
            ..l.model.stats(self.now())
        }
    }

    /// A flow's counters, if it has sent or received anything.
    pub fn flow_stats(&self, flow: FlowId) -> Option<FlowStats> {
        self.flows.get(flow).map(|e| e.stats)
    }

    /// Samples, every `interval` from now on, the queue of each watched link
    /// and the delivered bytes of every flow. Replaces an earlier interval.
    pub fn set_sample_interval(&mut self, interval: Duration) -> Result<(), Error> {
        let ns = duration_to_nanos(interval);
        if ns == 0 {
            return Err(Error::ZeroDuration {
                what: "sample interval",
                value: interval,
            });
        }
        self.sample_interval = ns;
        self.sample_gen = (self.sample_gen + 1) & 0xFF_FFFF;
        self.push(self.now + ns, Kind::Sample, 0, self.sample_gen);
        Ok(())
    }

    /// Adds `link` to the links whose queue length is sampled.
    pub fn watch_queue(&mut self, link: LinkId) -> Result<(), Error> {
        self.check_link(link)?;
        if !self.watched.contains(&link) {
            self.watched.push(link);
        }
        Ok(())
    }

    fn take_samples(&mut self) {
        let now = self.now;
        for &link in &self.watched {
            let q = self.links[link.index()].model.queued();
            self.queue_samples.push(QueueSample {
                time_ns: now,
                link,
                packets: q.packets,
                bytes: q.bytes,
            });
        }
        for e in self.flows.iter_mut() {
            let d = e.stats.delivered.bytes;
            self.flow_samples.push(FlowSample {
                time_ns: now,
                flow: e.stats.flow,
                delivered_bytes: d,
                interval_bytes: d - e.last_sampled,
            });
            e.last_sampled = d;
        }
    }

    /// Queue samples so far.
    pub fn queue_samples(&self) -> &[QueueSample] {
        &self.queue_samples
    }

    /// Per-flow delivered-bytes samples so far.
    pub fn flow_samples(&self) -> &[FlowSample] {
        &self.flow_samples
    }

    /// Everything measured so far, as one serializable value.
    pub fn metrics(&self) -> Metrics {
        Metrics {
            time_ns: self.now,
            links: (0..self.links.len())
                .map(|i| self.link_stats(LinkId(i as u32)))
                .collect(),
            flows: self.flows.iter().map(|e| e.stats).collect(),
            queue_samples: self.queue_samples.clone(),
            flow_samples: self.flow_samples.clone(),
            unroutable: self.unroutable,
            no_listener: self.no_listener,
        }
    }

    /// Creates a bandwidth oracle on `link` (Yamanegi, Hasegawa and Murata): available
    /// bandwidth = link rate minus the throughput, over the last `window`,
    /// of every flow not in `own_flows`. The window is a ring of 100 buckets
    /// of `window / 100` plus the current partial bucket; the handle is
    /// updated on every packet that leaves the link's transmitter and at
    /// every bucket boundary.
    pub fn add_oracle(
        &mut self,
        link: LinkId,
        own_flows: impl IntoIterator<Item = FlowId>,
        window: Duration,
    ) -> Result<OracleHandle, Error> {
        self.check_link(link)?;
        let w = duration_to_nanos(window);
        if w == 0 {
            return Err(Error::ZeroDuration {
                what: "oracle window",
                value: window,
            });
        }
        let rate = self.links[link.index()].model.rate().bits_per_sec();
        let (state, handle) = OracleState::new(link, own_flows, w, self.now, rate);
        let idx = self.oracles.len() as u32;
        let first_tick = self.now + state.bucket_ns();
        self.oracles.push(state);
        self.links[link.index()].oracles.push(idx);
        self.push(first_tick, Kind::OracleTick, idx, 0);
        // Feed the oracle the packet on the wire now, at its finish time.
        self.pump(link.index());
        Ok(handle)
    }
}

impl std::fmt::Debug for Simulator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Simulator")
            .field("now", &self.now())
            .field("seed", &self.seed)
            .field("nodes", &self.n_nodes)
            .field("links", &self.links.len())
            .field("hosts", &self.hosts.len())
            .field("pending_events", &self.heap.len())
            .finish()
    }
}
