//! The event engine.

use std::collections::{BTreeMap, VecDeque};
use std::time::Duration;

use bytes::Bytes;

use crate::host::AnyHost;
use crate::link::{CutMode, CutTiming, RandomLoss, RateStep, serialization_ns};
use crate::metrics::{Counter, FlowSample, FlowStats, LinkStats, Metrics, QueueSample};
use crate::oracle::OracleState;
use crate::queue::{Ev, EventQueue};
use crate::time::duration_to_nanos;
use crate::{
    Addr, Datagram, Error, FlowId, Host, HostId, LinkId, NodeId, OracleHandle, QueueLimit, Rng, SimTime, Topology,
};

const NO_ROUTE: u32 = u32::MAX;
/// Flow ids below this live in a vector; larger ones in a map.
const DENSE_FLOWS: u32 = 1 << 16;
/// Random streams of links are `LINK_STREAM | link index`.
const LINK_STREAM: u64 = 0x4C49_4E4B << 32;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
enum Kind {
    /// End of a transmission that someone waits for.
    Kick,
    Arrive,
    Timer,
    CutStart,
    CutEnd,
    PauseStart,
    RateChange,
    Sample,
    OracleTick,
}

/// Trace event codes folded into the trace hash.
#[derive(Clone, Copy)]
#[repr(u8)]
enum TraceKind {
    Offer = 1,
    DropQueue,
    DropCut,
    DropRandom,
    Arrive,
    Deliver,
}

impl Ev {
    #[inline]
    fn kind(&self) -> Kind {
        KINDS[(self.aux & 0xFF) as usize]
    }
    #[inline]
    fn arg(&self) -> u32 {
        self.aux >> 8
    }
}

const KINDS: [Kind; 9] = [
    Kind::Kick,
    Kind::Arrive,
    Kind::Timer,
    Kind::CutStart,
    Kind::CutEnd,
    Kind::PauseStart,
    Kind::RateChange,
    Kind::Sample,
    Kind::OracleTick,
];

#[derive(Clone, Copy, Debug)]
struct Tx {
    start: u64,
    done: u64,
    wire: u64,
    flow: FlowId,
    /// Random loss, decided when serialization starts, counted at `done`.
    lost: bool,
}

#[derive(Debug)]
struct Packet {
    src: Addr,
    dst: Addr,
    flow: FlowId,
    /// Wire bytes on the current link.
    wire: u64,
    payload: Bytes,
}

struct LinkRt {
    to: NodeId,
    rate: u64,
    delay: u64,
    overhead: u64,
    limit_packets: u64,
    limit_bytes: u64,
    queue: VecDeque<Packet>,
    /// The packet being serialized (its payload is already at the tail of
    /// `prop` unless it is doomed by random loss). Completion is settled
    /// lazily: at the next touch of the link at or after `done`.
    tx: Option<Tx>,
    /// Finish time of the last packet started (for back-to-back timing).
    last_done: u64,
    /// Generation of `kick` events; bumped when a cut aborts a packet.
    tx_gen: u32,
    /// A `Kick` event is queued for `tx.done`.
    kick_armed: bool,
    /// Serialization is timed from the start of a back-to-back run so that
    /// per-packet rounding never accumulates.
    anchor_valid: bool,
    anchor_time: u64,
    anchor_bits: u64,
    /// Propagating packets with their arrival times; only the head has an
    /// `Arrive` event queued (FIFO: every packet has the same delay).
    prop: VecDeque<(u64, Packet)>,
    cut: bool,
    paused: bool,
    cut_timing: Option<CutTiming>,
    schedule: Vec<RateStep>,
    loss: Option<RandomLoss>,
    rng: Rng,
    oracles: Vec<u32>,
    offered: Counter,
    delivered: Counter,
    dropped_queue: Counter,
    dropped_cutoff: Counter,
    dropped_random: Counter,
    queued: Counter,
    in_transmission: Counter,
    in_flight: Counter,
    busy_ns: u64,
}

impl LinkRt {
    #[inline]
    fn can_send(&self) -> bool {
        !self.cut && !self.paused
    }
}

struct HostSlot {
    host: Box<dyn AnyHost>,
    addr: Addr,
    /// The host's last reported wake-up.
    wake: Option<u64>,
    /// Earliest timer event known to be in the heap for this host.
    armed: Option<u64>,
}

#[derive(Clone, Copy, Default)]
struct FlowEntry {
    used: bool,
    stats: FlowStats,
    last_sampled: u64,
}

#[derive(Default)]
struct FlowTable {
    dense: Vec<FlowEntry>,
    sparse: BTreeMap<FlowId, FlowEntry>,
}

impl FlowTable {
    #[inline]
    fn entry(&mut self, flow: FlowId) -> &mut FlowEntry {
        let e = if flow < DENSE_FLOWS {
            let i = flow as usize;
            if i >= self.dense.len() {
                self.dense.resize(i + 1, FlowEntry::default());
            }
            &mut self.dense[i]
        } else {
            self.sparse.entry(flow).or_default()
        };
        if !e.used {
            e.used = true;
            e.stats.flow = flow;
        }
        e
    }

    fn get(&self, flow: FlowId) -> Option<&FlowEntry> {
        let e = if flow < DENSE_FLOWS {
            self.dense.get(flow as usize)
        } else {
            self.sparse.get(&flow)
        };
        e.filter(|e| e.used)
    }

    fn iter_mut(&mut self) -> impl Iterator<Item = &mut FlowEntry> {
        self.dense.iter_mut().chain(self.sparse.values_mut()).filter(|e| e.used)
    }

    fn iter(&self) -> impl Iterator<Item = &FlowEntry> {
        self.dense.iter().chain(self.sparse.values()).filter(|e| e.used)
    }
}

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
    /// `routes[node * n + dst]` = link index.
    routes: Vec<u32>,
    /// Hosts per node: (port, host index).
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
            let (limit_packets, limit_bytes) = match cfg.queue {
                QueueLimit::Packets(p) => (p as u64, u64::MAX),
                QueueLimit::Bytes(b) => (u64::MAX, b),
            };
            let cut_timing = cfg.cut_timing();
            sim.links.push(LinkRt {
                to,
                rate: cfg.rate_bps,
                delay: duration_to_nanos(cfg.delay),
                overhead: cfg.overhead_bytes as u64,
                limit_packets,
                limit_bytes,
                queue: VecDeque::new(),
                tx: None,
                last_done: 0,
                tx_gen: 0,
                kick_armed: false,
                anchor_valid: false,
                anchor_time: 0,
                anchor_bits: 0,
                prop: VecDeque::new(),
                cut: false,
                paused: false,
                cut_timing,
                schedule: cfg.rate_schedule.clone(),
                loss: cfg.loss,
                rng: Rng::derive(seed, LINK_STREAM | i as u64),
                oracles: Vec::new(),
                offered: Counter::default(),
                delivered: Counter::default(),
                dropped_queue: Counter::default(),
                dropped_cutoff: Counter::default(),
                dropped_random: Counter::default(),
                queued: Counter::default(),
                in_transmission: Counter::default(),
                in_flight: Counter::default(),
                busy_ns: 0,
            });
            for (k, step) in cfg.rate_schedule.iter().enumerate() {
                sim.push(step.at.as_nanos(), Kind::RateChange, i as u32, k as u32);
            }
            if let Some(ct) = cut_timing {
                sim.init_cut(i, ct);
            }
        }
        sim
    }

    /// Puts a link with a cut-off into its state at time zero.
    fn init_cut(&mut self, li: usize, ct: CutTiming) {
        // Position within the cycle that starts with a connected interval.
        let pos = (ct.period - ct.phase) % ct.period;
        let l = &mut self.links[li];
        if pos >= ct.connected {
            l.cut = true;
            self.push(ct.period - pos, Kind::CutEnd, li as u32, 0);
        } else {
            let pause_at = ct.connected - ct.lead;
            if ct.mode == CutMode::Pause {
                if pos >= pause_at {
                    l.paused = true;
                } else {
                    self.push(pause_at - pos, Kind::PauseStart, li as u32, 0);
                }
            }
            self.push(ct.connected - pos, Kind::CutStart, li as u32, 0);
        }
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
        self.links.iter().map(|l| l.delivered.packets).sum()
    }

    #[inline]
    fn push(&mut self, time: u64, kind: Kind, id: u32, arg: u32) {
        debug_assert!(arg < 1 << 24);
        self.seq += 1;
        self.heap.push(Ev {
            time,
            seq: self.seq,
            id,
            aux: arg << 8 | kind as u32,
        });
    }

    #[inline]
    fn trace(&mut self, time: u64, kind: TraceKind, id: u32, size: u64) {
        let word = (kind as u64) << 56 | (id as u64) << 32 | (size & 0xFFFF_FFFF);
        self.trace = (self.trace ^ time).wrapping_mul(FNV_PRIME);
        self.trace = (self.trace ^ word).wrapping_mul(FNV_PRIME);
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
        if slots.iter().any(|&(p, _)| p == addr.port) {
            return Err(Error::AddressInUse(addr));
        }
        let id = self.hosts.len() as u32;
        slots.push((addr.port, id));
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
    /// already queued for the host (QUINN_NOTES "Timers").
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
        let route = if dst_node < self.n_nodes {
            self.routes[src.node.index() * self.n_nodes + dst_node]
        } else {
            NO_ROUTE
        };
        if route == NO_ROUTE {
            self.unroutable += 1;
            return;
        }
        let pkt = Packet {
            src,
            dst: d.dst,
            flow: d.flow,
            wire: 0,
            payload: d.payload,
        };
        self.enqueue(route as usize, pkt);
    }

    fn arrive_at_node(&mut self, node: NodeId, pkt: Packet) {
        if pkt.dst.node == node {
            self.deliver(pkt);
            return;
        }
        let route = self.routes[node.index() * self.n_nodes + pkt.dst.node.index()];
        if route == NO_ROUTE {
            self.unroutable += 1;
        } else {
            self.enqueue(route as usize, pkt);
        }
    }

    fn deliver(&mut self, pkt: Packet) {
        let h = self.node_hosts[pkt.dst.node.index()]
            .iter()
            .find(|&&(p, _)| p == pkt.dst.port)
            .map(|&(_, h)| h as usize);
        let Some(h) = h else {
            self.no_listener += 1;
            return;
        };
        let len = pkt.payload.len() as u64;
        self.flows.entry(pkt.flow).stats.delivered.add(len);
        self.trace(self.now, TraceKind::Deliver, h as u32, len);
        let now = self.now();
        self.hosts[h].host.on_datagram(now, pkt.src, pkt.flow, pkt.payload);
        self.service(h);
    }

    // ----- links -------------------------------------------------------

    fn enqueue(&mut self, li: usize, mut pkt: Packet) {
        let now = self.now;
        self.pump(li);
        let l = &mut self.links[li];
        let wire = pkt.payload.len() as u64 + l.overhead;
        pkt.wire = wire;
        l.offered.add(wire);
        if l.cut && l.cut_timing.is_some_and(|c| c.mode == CutMode::Drop) {
            l.dropped_cutoff.add(wire);
            self.trace(now, TraceKind::DropCut, li as u32, wire);
            return;
        }
        // After `pump`, an idle transmitter that may send has an empty queue:
        // the packet goes straight through.
        let idle = l.tx.is_none() && l.can_send();
        if !idle && (l.queued.packets >= l.limit_packets || l.queued.bytes.saturating_add(wire) > l.limit_bytes) {
            l.dropped_queue.add(wire);
            self.trace(now, TraceKind::DropQueue, li as u32, wire);
            return;
        }
        l.queued.add(wire);
        l.queue.push_back(pkt);
        self.trace(now, TraceKind::Offer, li as u32, wire);
        self.pump(li);
    }

    /// Settles a finished transmission, starts the next packet if the
    /// transmitter may send, and makes sure a `Kick` is queued for the end
    /// of the current transmission when something must happen then (a
    /// waiting packet, or an oracle to feed). An idle access link therefore
    /// costs one event per packet (its arrival), not two.
    #[inline]
    fn pump(&mut self, li: usize) {
        self.settle(li);
        let now = self.now;
        let l = &mut self.links[li];
        if l.tx.is_none()
            && l.can_send()
            && let Some(pkt) = l.queue.pop_front()
        {
            l.queued.sub(pkt.wire);
            self.start_tx(li, pkt);
        }
        let l = &mut self.links[li];
        if let Some(tx) = &l.tx
            && !l.kick_armed
            && (!l.queue.is_empty() || !l.oracles.is_empty())
        {
            l.kick_armed = true;
            let (done, g) = (tx.done, l.tx_gen);
            debug_assert!(done >= now);
            self.push(done, Kind::Kick, li as u32, g);
        }
    }

    /// Completes the transmission if its last bit has left by now.
    #[inline]
    fn settle(&mut self, li: usize) {
        let l = &mut self.links[li];
        let Some(tx) = l.tx else { return };
        if tx.done > self.now {
            return;
        }
        l.tx = None;
        l.in_transmission.sub(tx.wire);
        l.busy_ns += tx.done - tx.start;
        if tx.lost {
            l.dropped_random.add(tx.wire);
            self.trace(tx.done, TraceKind::DropRandom, li as u32, tx.wire);
        } else {
            l.in_flight.add(tx.wire);
            for &o in &l.oracles {
                self.oracles[o as usize].on_packet(tx.done, tx.flow, tx.wire);
            }
        }
    }

    fn start_tx(&mut self, li: usize, pkt: Packet) {
        let now = self.now;
        let l = &mut self.links[li];
        if !(l.anchor_valid && l.last_done == now) {
            l.anchor_valid = true;
            l.anchor_time = now;
            l.anchor_bits = 0;
        }
        l.anchor_bits += pkt.wire * 8;
        let done = l.anchor_time + serialization_ns(l.anchor_bits, l.rate);
        l.last_done = done;
        let lost = match l.loss {
            None => false,
            Some(RandomLoss::PacketLoss(p)) => l.rng.bernoulli(p),
            Some(RandomLoss::BitErrorRate(ber)) => {
                // 1 - (1 - ber)^(8n), computed without cancellation.
                // Transcendental functions (`log1p`, `expm1`) come from the `libm` crate, not `std`:
                // `std` calls the platform's C library, whose results may differ in the last
                // bits between machines; `libm` gives bit-identical results on every target,
                // so one scenario and seed give the same bytes on x86_64 and aarch64.
                let p = -libm::expm1((8 * pkt.wire) as f64 * libm::log1p(-ber));
                l.rng.bernoulli(p)
            }
        };
        l.in_transmission.add(pkt.wire);
        l.tx = Some(Tx {
            start: now,
            done,
            wire: pkt.wire,
            flow: pkt.flow,
            lost,
        });
        if !lost {
            let at = done + l.delay;
            let was_empty = l.prop.is_empty();
            l.prop.push_back((at, pkt));
            if was_empty {
                self.push(at, Kind::Arrive, li as u32, 0);
            }
        }
    }

    fn on_kick(&mut self, li: usize, gen_: u32) {
        let l = &mut self.links[li];
        if gen_ != l.tx_gen {
            return; // the transmission it was armed for was aborted by a cut
        }
        l.kick_armed = false;
        self.pump(li);
    }

    fn on_arrive(&mut self, li: usize) {
        let now = self.now;
        // With zero delay the arriving packet may be the one just finishing.
        self.settle(li);
        let l = &mut self.links[li];
        // An event whose packet was aborted by a cut finds another head.
        match l.prop.front() {
            Some(&(at, _)) if at == now => {}
            _ => return,
        }
        let Some((_, pkt)) = l.prop.pop_front() else { return };
        l.in_flight.sub(pkt.wire);
        l.delivered.add(pkt.wire);
        let to = l.to;
        if let Some(&(next, _)) = l.prop.front() {
            self.push(next, Kind::Arrive, li as u32, 0);
        }
        self.trace(now, TraceKind::Arrive, li as u32, pkt.wire);
        self.arrive_at_node(to, pkt);
    }

    fn on_cut_start(&mut self, li: usize) {
        let now = self.now;
        // A packet whose last bit leaves exactly at the cut completes.
        self.settle(li);
        let l = &mut self.links[li];
        let Some(ct) = l.cut_timing else { return };
        l.cut = true;
        l.paused = false;
        if let Some(tx) = l.tx.take() {
            // The wire goes dark mid-frame: the frame is lost in every mode.
            l.in_transmission.sub(tx.wire);
            l.busy_ns += now - tx.start;
            l.tx_gen = (l.tx_gen + 1) & 0xFF_FFFF;
            l.kick_armed = false;
            l.anchor_valid = false;
            if !tx.lost {
                // Its payload is the newest in `prop`; an `Arrive` event
                // queued for it will find a different head and do nothing.
                l.prop.pop_back();
            }
            l.dropped_cutoff.add(tx.wire);
            self.trace(now, TraceKind::DropCut, li as u32, tx.wire);
        }
        self.push(now + (ct.period - ct.connected), Kind::CutEnd, li as u32, 0);
    }

    fn on_cut_end(&mut self, li: usize) {
        let now = self.now;
        let l = &mut self.links[li];
        let Some(ct) = l.cut_timing else { return };
        l.cut = false;
        l.anchor_valid = false;
        let next_cut = now + ct.connected;
        if ct.mode == CutMode::Pause {
            if ct.lead >= ct.connected {
                l.paused = true;
            } else {
                l.paused = false;
                self.push(next_cut - ct.lead, Kind::PauseStart, li as u32, 0);
            }
        }
        self.push(next_cut, Kind::CutStart, li as u32, 0);
        self.pump(li);
    }

    fn on_rate_change(&mut self, li: usize, step: usize) {
        let now = self.now;
        let l = &mut self.links[li];
        let rate = l.schedule[step].rate_bps;
        l.rate = rate;
        // The packet on the wire keeps its finish time; the next starts a
        // fresh anchor at the new rate.
        l.anchor_valid = false;
        for &o in &l.oracles {
            self.oracles[o as usize].set_capacity(rate, now);
        }
    }

    // ----- running -----------------------------------------------------

    fn dispatch(&mut self, ev: Ev) {
        let id = ev.id as usize;
        match ev.kind() {
            Kind::Kick => self.on_kick(id, ev.arg()),
            Kind::Arrive => self.on_arrive(id),
            Kind::Timer => self.on_timer(id),
            Kind::CutStart => self.on_cut_start(id),
            Kind::CutEnd => self.on_cut_end(id),
            Kind::PauseStart => self.links[id].paused = true,
            Kind::RateChange => self.on_rate_change(id, ev.arg() as usize),
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
        while let Some(top) = self.heap.peek() {
            if top.time > t {
                break;
            }
            let ev = self.heap.pop().expect("peeked");
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

    /// The current rate of `link` in bits per second.
    pub fn link_rate(&self, link: LinkId) -> Option<u64> {
        self.links.get(link.index()).map(|l| l.rate)
    }

    /// A snapshot of `link`'s counters (default values for an unknown link).
    pub fn link_stats(&self, link: LinkId) -> LinkStats {
        let Some(l) = self.links.get(link.index()) else {
            return LinkStats::default();
        };
        // Settle a finished transmission on the copy (completion is lazy).
        let mut busy = l.busy_ns;
        let (mut in_tx, mut in_flight, mut dropped_random) = (l.in_transmission, l.in_flight, l.dropped_random);
        if let Some(tx) = l.tx {
            if tx.done <= self.now {
                busy += tx.done - tx.start;
                in_tx.sub(tx.wire);
                if tx.lost {
                    dropped_random.add(tx.wire);
                } else {
                    in_flight.add(tx.wire);
                }
            } else {
                busy += self.now - tx.start;
            }
        }
        LinkStats {
            link,
            offered: l.offered,
            delivered: l.delivered,
            dropped_queue: l.dropped_queue,
            dropped_cutoff: l.dropped_cutoff,
            dropped_random,
            queued: l.queued,
            in_transmission: in_tx,
            in_flight,
            busy_ns: busy,
            elapsed_ns: self.now,
            utilisation: if self.now == 0 {
                0.0
            } else {
                busy as f64 / self.now as f64
            },
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
            let q = self.links[link.index()].queued;
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

    /// Creates a bandwidth oracle on `link` (seed 000, Yamanegi et al.; docs/papers.md): available
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
        let rate = self.links[link.index()].rate;
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
