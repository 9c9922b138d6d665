//! One unidirectional link as a sans-IO state machine: the transmitter with
//! its serialization timing, the queue (DropTail, or an AQM: [`crate::QueueDiscipline`]),
//! propagation, periodic cut-offs, rate steps, seeded random loss, and
//! trace-driven delivery opportunities ([`crate::DeliveryTrace`]).
//!
//! [`LinkModel`] owns the state and every transition; it reads no clock and
//! keeps no timers. Each transition takes `now` and a [`LinkDriver`], which it
//! asks to call a [`LinkEvent`] back at a given time. The [`Simulator`]
//! drives its links this way from its event queue, in virtual time;
//! [`LinkRunner`] drives one link on its own (a small timer heap), for a
//! caller that maps [`SimTime`] onto a wall clock, such as a live relay.
//!
//! [`Simulator`]: crate::Simulator

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use crate::aqm::{DropCause, Histogram, Limits, Out, Queue};
use crate::delivery_trace::TraceCursor;
use crate::link::{CutMode, CutTiming, RandomLoss, RateStep, serialization_ns};
use crate::metrics::{Counter, LinkStats};
use crate::time::duration_to_nanos;
use crate::{Ecn, FlowId, LinkConfig, QueueLimit, Rng, SimTime};

/// A transition a [`LinkModel`] asks its driver to run at a given time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum LinkEvent {
    /// The transmission of this generation ends ([`LinkModel::on_tx_done`]).
    TxDone(u32),
    /// The head of the propagating packets reaches the far end
    /// ([`LinkModel::on_arrive`]).
    Arrive,
    /// A cut begins ([`LinkModel::on_cut_start`]).
    CutStart,
    /// A cut ends ([`LinkModel::on_cut_end`]).
    CutEnd,
    /// The transmitter stops ahead of a cut ([`LinkModel::on_pause_start`]).
    PauseStart,
    /// Step `n` of the rate schedule takes effect ([`LinkModel::on_rate_change`]).
    RateChange(u32),
}

/// What a [`LinkModel`] reports to its driver, for a trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkTrace {
    /// A packet was accepted into the queue.
    Offer,
    /// An arrival found the queue full (or, with FQ-CoDel, a packet of the
    /// fattest flow was dropped to make room).
    DropQueue,
    /// The queue discipline's AQM dropped a packet (never with DropTail).
    DropAqm,
    /// The queue discipline marked a packet CE (never with DropTail).
    Mark,
    /// A packet was lost to a cut-off.
    DropCutoff,
    /// A packet was lost to random loss.
    DropRandom,
}

/// The driver of a [`LinkModel`]: it runs the model's timed transitions.
pub trait LinkDriver {
    /// Call `event` back on the model at `at` (never earlier than the `now`
    /// of the call that asks). Events at the same time run in the order they
    /// were asked for.
    fn schedule(&mut self, at: SimTime, event: LinkEvent);
    /// A packet's last bit left the transmitter at `done` (a packet lost to
    /// random loss is not reported).
    #[inline]
    fn transmitted(&mut self, done: SimTime, flow: FlowId, wire: u64) {
        let _ = (done, flow, wire);
    }
    /// A counted event, at its time, with the packet's wire bytes.
    #[inline]
    fn trace(&mut self, time: SimTime, what: LinkTrace, wire: u64) {
        let _ = (time, what, wire);
    }
    /// Whether [`LinkDriver::transmitted`] must be called at the end of every
    /// transmission even when nothing waits behind it (costs one event per
    /// packet).
    #[inline]
    fn watches_transmissions(&self) -> bool {
        false
    }
}

/// A packet on a link: its wire bytes (payload plus the link's overhead),
/// its flow, its ECN codepoint (CE if this link's queue marked it), and the
/// caller's item.
#[derive(Debug)]
pub struct Frame<P> {
    /// Wire bytes on this link.
    pub wire: u64,
    /// The flow it belongs to.
    pub flow: FlowId,
    /// Its ECN codepoint.
    pub ecn: Ecn,
    /// The caller's packet.
    pub item: P,
    /// The hash FQ-CoDel classifies it by.
    pub(crate) hash: u64,
    /// When it entered the queue (ns).
    pub(crate) enqueued: u64,
}

/// What a link knows of a packet besides its size: its flow, its ECN
/// codepoint and the hash of its addresses and ports that a flow-queueing
/// discipline ([`crate::QueueDiscipline::FqCodel`]) classifies it by.
///
/// ```
/// use tput_netsim::{Ecn, PacketTag};
/// let t = PacketTag::new(3).with_ecn(Ecn::Ect0).with_hash(0xfeed);
/// assert_eq!((t.flow, t.ecn, t.hash), (3, Ecn::Ect0, 0xfeed));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct PacketTag {
    /// The flow (per-flow metrics, the bandwidth oracle).
    pub flow: FlowId,
    /// The ECN codepoint.
    pub ecn: Ecn,
    /// Flow-queue hash (default: the flow id).
    pub hash: u64,
}

impl PacketTag {
    /// A `Not-ECT` packet of `flow`, hashed by its flow id.
    pub fn new(flow: FlowId) -> Self {
        PacketTag {
            flow,
            ecn: Ecn::NotEct,
            hash: flow as u64,
        }
    }
    /// With ECN codepoint `ecn`.
    pub fn with_ecn(mut self, ecn: Ecn) -> Self {
        self.ecn = ecn;
        self
    }
    /// With flow-queue hash `hash`.
    pub fn with_hash(mut self, hash: u64) -> Self {
        self.hash = hash;
        self
    }
}

/// The outcome of [`LinkModel::offer`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted: queued or being serialized.
    Accepted,
    /// Dropped: the queue was full.
    DroppedQueue,
    /// Dropped (or, with ECN, marked and queued: then [`Verdict::Accepted`])
    /// by the queue discipline's AQM on arrival (RED).
    DroppedAqm,
    /// Dropped: the link is cut in [`CutMode::Drop`].
    DroppedCutoff,
}

#[derive(Clone, Copy, Debug)]
struct Tx {
    start: u64,
    done: u64,
    wire: u64,
    flow: FlowId,
    /// Random loss, decided when serialization starts, counted at `done`.
    lost: bool,
}

/// One unidirectional link's state and transitions (see the module docs).
#[derive(Debug)]
pub struct LinkModel<P> {
    rate: u64,
    delay: u64,
    overhead: u64,
    limit_packets: u64,
    limit_bytes: u64,
    queue: Queue<P>,
    /// The discipline is not DropTail (the DropTail path stays as it was).
    aqm: bool,
    /// The packet being serialized (its item is already at the tail of
    /// `prop` unless it is doomed by random loss). Completion is settled
    /// lazily: at the next touch of the link at or after `done`.
    tx: Option<Tx>,
    /// Finish time of the last packet started (for back-to-back timing).
    last_done: u64,
    /// Generation of `TxDone` events; bumped when a cut aborts a packet.
    tx_gen: u32,
    /// A `TxDone` event is scheduled for `tx.done`.
    kick_armed: bool,
    /// Serialization is timed from the start of a back-to-back run so that
    /// per-packet rounding never accumulates.
    anchor_valid: bool,
    anchor_time: u64,
    anchor_bits: u64,
    /// Propagating packets with their arrival times; only the head has an
    /// `Arrive` event scheduled (FIFO: every packet has the same delay).
    prop: VecDeque<(u64, Frame<P>)>,
    cut: bool,
    paused: bool,
    cut_timing: Option<CutTiming>,
    schedule: Vec<RateStep>,
    loss: Option<RandomLoss>,
    /// A trace-driven link's next delivery opportunity.
    trace: Option<TraceCursor>,
    rng: Rng,
    offered: Counter,
    delivered: Counter,
    dropped_queue: Counter,
    dropped_cutoff: Counter,
    dropped_random: Counter,
    dropped_aqm: Counter,
    marked: Counter,
    sojourn: Histogram,
    queued: Counter,
    queued_max: Counter,
    in_transmission: Counter,
    in_flight: Counter,
    busy_ns: u64,
}

impl<P> LinkModel<P> {
    /// A link at time zero with `config` (validate it first:
    /// [`LinkConfig::validate`]) drawing its random losses from `rng`. Call
    /// [`LinkModel::start`] before anything else.
    pub fn new(config: &LinkConfig, rng: Rng) -> Self {
        let (limit_packets, limit_bytes) = match config.queue {
            QueueLimit::Packets(p) => (p as u64, u64::MAX),
            QueueLimit::Bytes(b) => (u64::MAX, b),
        };
        let limits = Limits {
            packets: limit_packets,
            bytes: limit_bytes,
        };
        LinkModel {
            rate: config.rate_bps,
            delay: duration_to_nanos(config.delay),
            overhead: config.overhead_bytes as u64,
            limit_packets,
            limit_bytes,
            queue: Queue::new(&config.discipline, limits, &rng),
            aqm: !matches!(config.discipline, crate::QueueDiscipline::DropTail),
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
            cut_timing: config.cut_timing(),
            schedule: config.rate_schedule.clone(),
            loss: config.loss,
            trace: config.trace.as_ref().map(TraceCursor::new),
            rng,
            offered: Counter::default(),
            delivered: Counter::default(),
            dropped_queue: Counter::default(),
            dropped_cutoff: Counter::default(),
            dropped_random: Counter::default(),
            dropped_aqm: Counter::default(),
            marked: Counter::default(),
            sojourn: Histogram::default(),
            queued: Counter::default(),
            queued_max: Counter::default(),
            in_transmission: Counter::default(),
            in_flight: Counter::default(),
            busy_ns: 0,
        }
    }

    /// Schedules the rate steps and puts a link with a cut-off into its
    /// state at time zero.
    pub fn start(&mut self, d: &mut impl LinkDriver) {
        for (k, step) in self.schedule.iter().enumerate() {
            d.schedule(step.at, LinkEvent::RateChange(k as u32));
        }
        let Some(ct) = self.cut_timing else { return };
        // Position within the cycle that starts with a connected interval.
        let pos = (ct.period - ct.phase) % ct.period;
        if pos >= ct.connected {
            self.cut = true;
            d.schedule(SimTime::from_nanos(ct.period - pos), LinkEvent::CutEnd);
        } else {
            let pause_at = ct.connected - ct.lead;
            if ct.mode == CutMode::Pause {
                if pos >= pause_at {
                    self.paused = true;
                } else {
                    d.schedule(SimTime::from_nanos(pause_at - pos), LinkEvent::PauseStart);
                }
            }
            d.schedule(SimTime::from_nanos(ct.connected - pos), LinkEvent::CutStart);
        }
    }

    #[inline]
    fn can_send(&self) -> bool {
        !self.cut && !self.paused
    }

    /// The current rate in bits per second.
    #[inline]
    pub fn rate_bps(&self) -> u64 {
        self.rate
    }

    /// Whether the link is cut now.
    pub fn is_cut(&self) -> bool {
        self.cut
    }

    /// The packets waiting in the queue now.
    #[inline]
    pub fn queued(&self) -> Counter {
        self.queued
    }

    /// The packets that have reached the far end.
    #[inline]
    pub fn delivered(&self) -> Counter {
        self.delivered
    }

    /// The most packets and the most bytes the queue has held (each its own
    /// maximum).
    pub fn queue_high_water(&self) -> Counter {
        self.queued_max
    }

    /// Hands the link a `Not-ECT` packet of `flow` and `payload_bytes` (the
    /// link adds its overhead) at `now`.
    #[inline]
    pub fn offer(
        &mut self,
        now: SimTime,
        payload_bytes: u64,
        flow: FlowId,
        item: P,
        d: &mut impl LinkDriver,
    ) -> Verdict {
        self.offer_tagged(now, payload_bytes, PacketTag::new(flow), item, d)
    }

    /// Hands the link a packet of `payload_bytes` (the link adds its
    /// overhead) with its flow, ECN codepoint and flow hash at `now`.
    #[inline]
    pub fn offer_tagged(
        &mut self,
        now: SimTime,
        payload_bytes: u64,
        tag: PacketTag,
        item: P,
        d: &mut impl LinkDriver,
    ) -> Verdict {
        let t = now.as_nanos();
        self.pump(now, d);
        let wire = payload_bytes + self.overhead;
        self.offered.add(wire);
        if self.cut && self.cut_timing.is_some_and(|c| c.mode == CutMode::Drop) {
            self.dropped_cutoff.add(wire);
            d.trace(now, LinkTrace::DropCutoff, wire);
            return Verdict::DroppedCutoff;
        }
        let f = Frame {
            wire,
            flow: tag.flow,
            ecn: tag.ecn,
            item,
            hash: tag.hash,
            enqueued: t,
        };
        if self.aqm {
            return self.offer_aqm(now, f, d);
        }
        // After `pump`, an idle transmitter that may send has an empty queue:
        // the packet goes straight through.
        // (A guarded `hold` link may also keep a packet that does not fit
        // before the cut waiting: then the queue is not empty.)
        let idle = self.tx.is_none() && self.can_send() && self.queue.is_empty();
        if !idle
            && (self.queued.packets >= self.limit_packets || self.queued.bytes.saturating_add(wire) > self.limit_bytes)
        {
            self.dropped_queue.add(wire);
            d.trace(now, LinkTrace::DropQueue, wire);
            return Verdict::DroppedQueue;
        }
        self.queued.add(wire);
        self.queued_max.packets = self.queued_max.packets.max(self.queued.packets);
        self.queued_max.bytes = self.queued_max.bytes.max(self.queued.bytes);
        if let Queue::DropTail(q) = &mut self.queue {
            q.push_back(f);
        }
        d.trace(SimTime::from_nanos(t), LinkTrace::Offer, wire);
        self.pump(now, d);
        Verdict::Accepted
    }

    /// An arrival into an AQM discipline, which may drop or mark it (RED),
    /// or drop another packet to make room (FQ-CoDel).
    fn offer_aqm(&mut self, now: SimTime, f: Frame<P>, d: &mut impl LinkDriver) -> Verdict {
        let wire = f.wire;
        // Counted in before the discipline sees it, so that its drops of
        // queued packets (this one included) count out.
        self.queued.add(wire);
        let mut acct = Acct {
            now,
            d: &mut *d,
            queued: &mut self.queued,
            dropped_queue: &mut self.dropped_queue,
            dropped_aqm: &mut self.dropped_aqm,
            marked: &mut self.marked,
        };
        if let Err((_, cause)) = self.queue.enqueue(now.as_nanos(), self.rate, f, &mut acct) {
            self.queued.sub(wire);
            return match cause {
                DropCause::Overflow => {
                    self.dropped_queue.add(wire);
                    d.trace(now, LinkTrace::DropQueue, wire);
                    Verdict::DroppedQueue
                }
                DropCause::Aqm => {
                    self.dropped_aqm.add(wire);
                    d.trace(now, LinkTrace::DropAqm, wire);
                    Verdict::DroppedAqm
                }
            };
        }
        self.queued_max.packets = self.queued_max.packets.max(self.queued.packets);
        self.queued_max.bytes = self.queued_max.bytes.max(self.queued.bytes);
        d.trace(now, LinkTrace::Offer, wire);
        self.pump(now, d);
        Verdict::Accepted
    }

    /// Settles a finished transmission, starts the next packet if the
    /// transmitter may send, and makes sure a `TxDone` is scheduled for the
    /// end of the current transmission when something must happen then (a
    /// waiting packet, or a driver that watches transmissions). An idle link
    /// therefore costs one event per packet (its arrival), not two.
    #[inline]
    pub fn pump(&mut self, now: SimTime, d: &mut impl LinkDriver) {
        self.settle(now, d);
        if self.tx.is_none() && self.can_send() && !self.queue.is_empty() {
            let t = now.as_nanos();
            let next = if self.aqm {
                let mut acct = Acct {
                    now,
                    d: &mut *d,
                    queued: &mut self.queued,
                    dropped_queue: &mut self.dropped_queue,
                    dropped_aqm: &mut self.dropped_aqm,
                    marked: &mut self.marked,
                };
                self.queue.dequeue(t, self.rate, &mut acct)
            } else if self.queue.front_wire().is_some_and(|w| self.fits_before_cut(t, w)) {
                self.queue.dequeue(t, self.rate, &mut Silent)
            } else {
                None
            };
            if let Some(f) = next {
                self.queued.sub(f.wire);
                self.sojourn.record(t - f.enqueued);
                self.start_tx(t, f, d);
            }
        }
        if let Some(tx) = &self.tx
            && !self.kick_armed
            && (!self.queue.is_empty() || d.watches_transmissions())
        {
            self.kick_armed = true;
            debug_assert!(tx.done >= now.as_nanos());
            d.schedule(SimTime::from_nanos(tx.done), LinkEvent::TxDone(self.tx_gen));
        }
    }

    /// The guard interval of [`CutMode::Hold`]: whether a packet of `wire`
    /// bytes started at `t` ends before the next cut begins (always true in
    /// the other modes). Timed without the back-to-back anchor, which can
    /// only finish earlier, so a packet that passes never meets the cut.
    #[inline]
    fn fits_before_cut(&self, t: u64, wire: u64) -> bool {
        match self.cut_timing {
            Some(ct) if ct.mode == CutMode::Hold => {
                t.saturating_add(serialization_ns(wire * 8, self.rate)) <= ct.next_cut_start(t)
            }
            _ => true,
        }
    }

    /// Completes the transmission if its last bit has left by now.
    #[inline]
    fn settle(&mut self, now: SimTime, d: &mut impl LinkDriver) {
        let Some(tx) = self.tx else { return };
        if tx.done > now.as_nanos() {
            return;
        }
        self.tx = None;
        self.in_transmission.sub(tx.wire);
        self.busy_ns += tx.done - tx.start;
        if tx.lost {
            self.dropped_random.add(tx.wire);
            d.trace(SimTime::from_nanos(tx.done), LinkTrace::DropRandom, tx.wire);
        } else {
            self.in_flight.add(tx.wire);
            d.transmitted(SimTime::from_nanos(tx.done), tx.flow, tx.wire);
        }
    }

    fn start_tx(&mut self, now: u64, f: Frame<P>, d: &mut impl LinkDriver) {
        let done = match &mut self.trace {
            // A trace-driven link: the packet leaves at the next unused
            // delivery opportunity (it counts as in transmission, and the
            // link as busy, while it waits for it).
            Some(trace) => trace.take(now),
            None => {
                if !(self.anchor_valid && self.last_done == now) {
                    self.anchor_valid = true;
                    self.anchor_time = now;
                    self.anchor_bits = 0;
                }
                self.anchor_bits += f.wire * 8;
                self.anchor_time + serialization_ns(self.anchor_bits, self.rate)
            }
        };
        self.last_done = done;
        let lost = match self.loss {
            None => false,
            Some(RandomLoss::PacketLoss(p)) => self.rng.bernoulli(p),
            Some(RandomLoss::BitErrorRate(ber)) => {
                // 1 - (1 - ber)^(8n), computed without cancellation.
                // Transcendental functions (`log1p`, `expm1`) come from the `libm` crate, not `std`:
                // `std` calls the platform's C library, whose results may differ in the last
                // bits between machines; `libm` gives bit-identical results on every target,
                // so one scenario and seed give the same bytes on x86_64 and aarch64.
                let p = -libm::expm1((8 * f.wire) as f64 * libm::log1p(-ber));
                self.rng.bernoulli(p)
            }
        };
        self.in_transmission.add(f.wire);
        self.tx = Some(Tx {
            start: now,
            done,
            wire: f.wire,
            flow: f.flow,
            lost,
        });
        if !lost {
            let at = done + self.delay;
            let was_empty = self.prop.is_empty();
            self.prop.push_back((at, f));
            if was_empty {
                d.schedule(SimTime::from_nanos(at), LinkEvent::Arrive);
            }
        }
    }

    /// [`LinkEvent::TxDone`]: the transmission of generation `gen_` ends.
    #[inline]
    pub fn on_tx_done(&mut self, now: SimTime, gen_: u32, d: &mut impl LinkDriver) {
        if gen_ != self.tx_gen {
            return; // the transmission it was scheduled for was aborted by a cut
        }
        self.kick_armed = false;
        self.pump(now, d);
    }

    /// [`LinkEvent::Arrive`]: returns the packet that reaches the far end
    /// now, if any (a packet aborted by a cut leaves a stale event).
    #[inline]
    pub fn on_arrive(&mut self, now: SimTime, d: &mut impl LinkDriver) -> Option<Frame<P>> {
        // With zero delay the arriving packet may be the one just finishing.
        self.settle(now, d);
        match self.prop.front() {
            Some(&(at, _)) if at == now.as_nanos() => {}
            _ => return None,
        }
        let (_, f) = self.prop.pop_front()?;
        self.in_flight.sub(f.wire);
        self.delivered.add(f.wire);
        if let Some(&(next, _)) = self.prop.front() {
            d.schedule(SimTime::from_nanos(next), LinkEvent::Arrive);
        }
        Some(f)
    }

    /// [`LinkEvent::CutStart`]: the link goes dark; a packet on the wire is
    /// lost.
    pub fn on_cut_start(&mut self, now: SimTime, d: &mut impl LinkDriver) {
        // A packet whose last bit leaves exactly at the cut completes.
        self.settle(now, d);
        let Some(ct) = self.cut_timing else { return };
        let t = now.as_nanos();
        self.cut = true;
        self.paused = false;
        if let Some(tx) = self.tx.take() {
            // The wire goes dark mid-frame: the frame is lost in every mode.
            self.in_transmission.sub(tx.wire);
            self.busy_ns += t - tx.start;
            self.tx_gen = (self.tx_gen + 1) & 0xFF_FFFF;
            self.kick_armed = false;
            self.anchor_valid = false;
            if !tx.lost {
                // Its item is the newest in `prop`; an `Arrive` event
                // scheduled for it will find a different head and do nothing.
                self.prop.pop_back();
            }
            self.dropped_cutoff.add(tx.wire);
            d.trace(now, LinkTrace::DropCutoff, tx.wire);
        }
        d.schedule(SimTime::from_nanos(t + (ct.period - ct.connected)), LinkEvent::CutEnd);
    }

    /// [`LinkEvent::CutEnd`]: the link is connected again.
    pub fn on_cut_end(&mut self, now: SimTime, d: &mut impl LinkDriver) {
        let Some(ct) = self.cut_timing else { return };
        self.cut = false;
        self.anchor_valid = false;
        let next_cut = now.as_nanos() + ct.connected;
        if ct.mode == CutMode::Pause {
            if ct.lead >= ct.connected {
                self.paused = true;
            } else {
                self.paused = false;
                d.schedule(SimTime::from_nanos(next_cut - ct.lead), LinkEvent::PauseStart);
            }
        }
        d.schedule(SimTime::from_nanos(next_cut), LinkEvent::CutStart);
        self.pump(now, d);
    }

    /// [`LinkEvent::PauseStart`]: the transmitter stops starting packets.
    pub fn on_pause_start(&mut self) {
        self.paused = true;
    }

    /// [`LinkEvent::RateChange`]: step `step` of the schedule takes effect;
    /// returns the new rate. The packet on the wire keeps its finish time;
    /// the next starts a fresh anchor at the new rate.
    pub fn on_rate_change(&mut self, step: u32) -> u64 {
        if let Some(s) = self.schedule.get(step as usize) {
            self.rate = s.rate_bps;
            self.anchor_valid = false;
        }
        self.rate
    }

    /// A snapshot of the counters at `now` (the link field is left at its
    /// default: the caller names the link).
    pub fn stats(&self, now: SimTime) -> LinkStats {
        let now = now.as_nanos();
        // Settle a finished transmission on the copy (completion is lazy).
        let mut busy = self.busy_ns;
        let (mut in_tx, mut in_flight, mut dropped_random) =
            (self.in_transmission, self.in_flight, self.dropped_random);
        if let Some(tx) = self.tx {
            if tx.done <= now {
                busy += tx.done - tx.start;
                in_tx.sub(tx.wire);
                if tx.lost {
                    dropped_random.add(tx.wire);
                } else {
                    in_flight.add(tx.wire);
                }
            } else {
                busy += now.saturating_sub(tx.start);
            }
        }
        LinkStats {
            offered: self.offered,
            delivered: self.delivered,
            dropped_queue: self.dropped_queue,
            dropped_cutoff: self.dropped_cutoff,
            dropped_random,
            dropped_aqm: self.dropped_aqm,
            marked: self.marked,
            sojourn_p50_ns: self.sojourn.quantile(0.5),
            sojourn_p99_ns: self.sojourn.quantile(0.99),
            queued: self.queued,
            in_transmission: in_tx,
            in_flight,
            busy_ns: busy,
            elapsed_ns: now,
            utilisation: if now == 0 { 0.0 } else { busy as f64 / now as f64 },
            queued_max: self.queued_max,
            ..LinkStats::default()
        }
    }
}

/// The link's accounting of what its discipline does to queued packets.
struct Acct<'a, D> {
    now: SimTime,
    d: &'a mut D,
    queued: &'a mut Counter,
    dropped_queue: &'a mut Counter,
    dropped_aqm: &'a mut Counter,
    marked: &'a mut Counter,
}

impl<P, D: LinkDriver> Out<P> for Acct<'_, D> {
    #[inline]
    fn dropped(&mut self, f: Frame<P>, cause: DropCause) {
        self.queued.sub(f.wire);
        match cause {
            DropCause::Overflow => {
                self.dropped_queue.add(f.wire);
                self.d.trace(self.now, LinkTrace::DropQueue, f.wire);
            }
            DropCause::Aqm => {
                self.dropped_aqm.add(f.wire);
                self.d.trace(self.now, LinkTrace::DropAqm, f.wire);
            }
        }
    }
    #[inline]
    fn marked(&mut self, wire: u64) {
        self.marked.add(wire);
        self.d.trace(self.now, LinkTrace::Mark, wire);
    }
}

/// DropTail reports nothing.
struct Silent;

impl<P> Out<P> for Silent {
    fn dropped(&mut self, _: Frame<P>, _: DropCause) {}
    fn marked(&mut self, _: u64) {}
}

/// A timer heap ordered by (time, order of scheduling).
#[derive(Debug, Default)]
struct Timers {
    heap: BinaryHeap<Reverse<(u64, u64, LinkEvent)>>,
    seq: u64,
}

impl LinkDriver for Timers {
    fn schedule(&mut self, at: SimTime, event: LinkEvent) {
        self.seq += 1;
        self.heap.push(Reverse((at.as_nanos(), self.seq, event)));
    }
}

/// What [`LinkRunner::poll`] reports.
#[derive(Debug)]
pub enum LinkOutput<P> {
    /// A packet reached the far end at `at` (hand it on now; `at` is its
    /// exact due time).
    Deliver {
        /// When it is due.
        at: SimTime,
        /// The packet.
        frame: Frame<P>,
    },
    /// A cut began at `at`.
    CutStart {
        /// When.
        at: SimTime,
    },
    /// A cut ended at `at`.
    CutEnd {
        /// When.
        at: SimTime,
    },
    /// The rate changed at `at`.
    RateChange {
        /// When.
        at: SimTime,
        /// The new rate in bits per second.
        rate_bps: u64,
    },
}

/// A [`LinkModel`] with its own timers: a driver for one link outside the
/// simulator. Its caller chooses what [`SimTime`] means (a wall clock's
/// offset from an epoch, say) and calls [`LinkRunner::offer`] for every
/// packet and [`LinkRunner::poll`] at (or after) [`LinkRunner::next_event`].
/// Times passed in must not decrease.
#[derive(Debug)]
pub struct LinkRunner<P> {
    model: LinkModel<P>,
    timers: Timers,
    /// Outputs of events run by `offer` that `poll` has not returned yet.
    ready: VecDeque<LinkOutput<P>>,
    now: u64,
}

impl<P> LinkRunner<P> {
    /// A link at time zero with `config` (validated here), its random losses
    /// drawn from a stream of `seed`.
    pub fn new(config: &LinkConfig, seed: u64) -> Result<Self, crate::Error> {
        config.validate()?;
        let mut model = LinkModel::new(config, Rng::derive(seed, 0x4C49_4E4B << 32));
        let mut timers = Timers::default();
        model.start(&mut timers);
        Ok(LinkRunner {
            model,
            timers,
            ready: VecDeque::new(),
            now: 0,
        })
    }

    /// The model (rate, queue, counters).
    pub fn model(&self) -> &LinkModel<P> {
        &self.model
    }

    /// The link's counters at `now`.
    pub fn stats(&self, now: SimTime) -> LinkStats {
        self.model.stats(now.max(SimTime::from_nanos(self.now)))
    }

    /// Hands the link a packet of `payload_bytes` at `now`, after running
    /// every event due by then.
    pub fn offer(&mut self, now: SimTime, payload_bytes: u64, item: P) -> Verdict {
        self.offer_tagged(now, payload_bytes, PacketTag::new(0), item)
    }

    /// [`LinkRunner::offer`] with the packet's ECN codepoint and flow hash
    /// (for FQ-CoDel).
    pub fn offer_tagged(&mut self, now: SimTime, payload_bytes: u64, tag: PacketTag, item: P) -> Verdict {
        let now = self.advance(now);
        self.model.offer_tagged(now, payload_bytes, tag, item, &mut self.timers)
    }

    fn advance(&mut self, now: SimTime) -> SimTime {
        let now = SimTime::from_nanos(now.as_nanos().max(self.now));
        while let Some(out) = self.step(now) {
            self.ready.push_back(out);
        }
        self.now = now.as_nanos();
        now
    }

    /// Runs the next event due by `now`; returns its output, if it has one,
    /// or `None` when nothing else is due.
    fn step(&mut self, now: SimTime) -> Option<LinkOutput<P>> {
        while let Some(&Reverse((t, _, ev))) = self.timers.heap.peek() {
            if t > now.as_nanos() {
                return None;
            }
            self.timers.heap.pop();
            self.now = self.now.max(t);
            let at = SimTime::from_nanos(t);
            let out = match ev {
                LinkEvent::TxDone(g) => {
                    self.model.on_tx_done(at, g, &mut self.timers);
                    None
                }
                LinkEvent::Arrive => self
                    .model
                    .on_arrive(at, &mut self.timers)
                    .map(|frame| LinkOutput::Deliver { at, frame }),
                LinkEvent::CutStart => {
                    self.model.on_cut_start(at, &mut self.timers);
                    Some(LinkOutput::CutStart { at })
                }
                LinkEvent::CutEnd => {
                    self.model.on_cut_end(at, &mut self.timers);
                    Some(LinkOutput::CutEnd { at })
                }
                LinkEvent::PauseStart => {
                    self.model.on_pause_start();
                    None
                }
                LinkEvent::RateChange(k) => Some(LinkOutput::RateChange {
                    at,
                    rate_bps: self.model.on_rate_change(k),
                }),
            };
            if out.is_some() {
                return out;
            }
        }
        None
    }

    /// The next output due by `now`, in time order; `None` when nothing else
    /// is due.
    pub fn poll(&mut self, now: SimTime) -> Option<LinkOutput<P>> {
        if let Some(out) = self.ready.pop_front() {
            return Some(out);
        }
        let now = SimTime::from_nanos(now.as_nanos().max(self.now));
        let out = self.step(now);
        if out.is_none() {
            self.now = now.as_nanos();
        }
        out
    }

    /// When [`LinkRunner::poll`] has something to do next (`None`: nothing
    /// until the next offer).
    pub fn next_event(&self) -> Option<SimTime> {
        if !self.ready.is_empty() {
            return Some(SimTime::from_nanos(self.now));
        }
        self.timers
            .heap
            .peek()
            .map(|Reverse((t, _, _))| SimTime::from_nanos(*t))
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::{CutOff, RandomLoss};

    fn drain(r: &mut LinkRunner<u32>, now: SimTime) -> Vec<(u64, u32)> {
        let mut v = Vec::new();
        while let Some(o) = r.poll(now) {
            if let LinkOutput::Deliver { at, frame } = o {
                v.push((at.as_nanos(), frame.item));
            }
        }
        v
    }

    #[test]
    fn runner_times_serialization_and_delay() {
        // 8 Mbit/s: 1000 wire bytes take 1 ms; 5 ms delay.
        let cfg = LinkConfig::new(8_000_000, Duration::from_millis(5)).with_overhead(0);
        let mut r = LinkRunner::new(&cfg, 1).unwrap();
        for i in 0..3 {
            assert_eq!(r.offer(SimTime::ZERO, 1000, i), Verdict::Accepted);
        }
        assert_eq!(r.next_event(), Some(SimTime::from_millis(1)));
        assert!(drain(&mut r, SimTime::from_micros(5_999)).is_empty());
        let got = drain(&mut r, SimTime::from_secs(1));
        assert_eq!(got, vec![(6_000_000, 0), (7_000_000, 1), (8_000_000, 2)]);
        let s = r.stats(SimTime::from_secs(1));
        assert_eq!(s.delivered.packets, 3);
        assert_eq!(r.model().queue_high_water().packets, 2);
    }

    #[test]
    fn runner_drops_by_cause() {
        let cfg = LinkConfig::new(8_000_000, Duration::ZERO)
            .with_overhead(0)
            .with_queue(QueueLimit::Packets(1));
        let mut r = LinkRunner::new(&cfg, 1).unwrap();
        let v: Vec<_> = (0..3).map(|i| r.offer(SimTime::ZERO, 1000, i)).collect();
        assert_eq!(v, [Verdict::Accepted, Verdict::Accepted, Verdict::DroppedQueue]);

        // Cut from 1 ms to 2 ms of every 2 ms: an arrival at 1.5 ms is dropped.
        let cfg = LinkConfig::new(8_000_000, Duration::ZERO).with_cutoff(CutOff::new(
            Duration::from_millis(2),
            0.5,
            CutMode::Drop,
        ));
        let mut r = LinkRunner::new(&cfg, 1).unwrap();
        assert_eq!(r.offer(SimTime::from_micros(1_500), 100, 0), Verdict::DroppedCutoff);
        assert!(matches!(
            r.poll(SimTime::from_micros(1_500)),
            Some(LinkOutput::CutStart { .. })
        ));

        let cfg = LinkConfig::new(8_000_000, Duration::ZERO).with_loss(RandomLoss::PacketLoss(1.0));
        let mut r = LinkRunner::new(&cfg, 1).unwrap();
        assert_eq!(r.offer(SimTime::ZERO, 100, 0), Verdict::Accepted);
        assert!(drain(&mut r, SimTime::from_secs(1)).is_empty());
        assert_eq!(r.stats(SimTime::from_secs(1)).dropped_random.packets, 1);
    }

    #[test]
    fn runner_steps_rate() {
        let cfg = LinkConfig::new(8_000_000, Duration::ZERO)
            .with_overhead(0)
            .with_rate_schedule(vec![RateStep {
                at: SimTime::from_millis(10),
                rate_bps: 80_000_000,
            }]);
        let mut r = LinkRunner::new(&cfg, 1).unwrap();
        match r.poll(SimTime::from_millis(10)) {
            Some(LinkOutput::RateChange { at, rate_bps }) => {
                assert_eq!((at, rate_bps), (SimTime::from_millis(10), 80_000_000));
            }
            other => panic!("expected a rate change, got {other:?}"),
        }
        r.offer(SimTime::from_millis(10), 1000, 7);
        assert_eq!(drain(&mut r, SimTime::from_secs(1)), vec![(10_100_000, 7)]);
    }
}
