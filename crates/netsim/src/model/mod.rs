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

use std::collections::VecDeque;

use crate::aqm::{DropCause, Histogram, Limits, Out, Queue};
use crate::delivery_trace::TraceCursor;
use crate::link::{CutMode, CutTiming, RandomLoss, RateStep, serialization_ns};
use crate::metrics::{Counter, LinkStats};
use crate::time::duration_to_nanos;
use crate::{FlowId, LinkConfig, QueueLimit, Rate, Rng, SimTime};

mod driver;
mod runner;

pub use driver::{Frame, LinkDriver, LinkEvent, LinkTrace, PacketTag, Verdict};
pub use runner::{LinkOutput, LinkRunner};

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
    rate: Rate,
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
    /// What [`LinkStats`] reports.
    count: Counters,
    sojourn: Histogram,
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
            rate: config.rate,
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
            count: Counters::default(),
            sojourn: Histogram::default(),
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

    /// The current rate.
    #[inline]
    pub fn rate(&self) -> Rate {
        self.rate
    }

    /// Whether the link is cut now.
    pub fn is_cut(&self) -> bool {
        self.cut
    }

    /// The packets waiting in the queue now.
    #[inline]
    pub fn queued(&self) -> Counter {
        self.count.queued
    }

    /// The packets that have reached the far end.
    #[inline]
    pub fn delivered(&self) -> Counter {
        self.count.delivered
    }

    /// The most packets and the most bytes the queue has held (each its own
    /// maximum).
    pub fn queue_high_water(&self) -> Counter {
        self.count.queued_max
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
        self.count.offered.add(wire);
        if self.cut && self.cut_timing.is_some_and(|c| c.mode == CutMode::Drop) {
            self.count.dropped_cutoff.add(wire);
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
            && (self.count.queued.packets >= self.limit_packets
                || self.count.queued.bytes.saturating_add(wire) > self.limit_bytes)
        {
            self.count.dropped_queue.add(wire);
            d.trace(now, LinkTrace::DropQueue, wire);
            return Verdict::DroppedQueue;
        }
        self.count.queued.add(wire);
        self.count.queued_max.packets = self.count.queued_max.packets.max(self.count.queued.packets);
        self.count.queued_max.bytes = self.count.queued_max.bytes.max(self.count.queued.bytes);
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
        self.count.queued.add(wire);
        let mut acct = Acct {
            now,
            d: &mut *d,
            count: &mut self.count,
        };
        if let Err((_, cause)) = self.queue.enqueue(now.as_nanos(), self.rate, f, &mut acct) {
            self.count.queued.sub(wire);
            return match cause {
                DropCause::Overflow => {
                    self.count.dropped_queue.add(wire);
                    d.trace(now, LinkTrace::DropQueue, wire);
                    Verdict::DroppedQueue
                }
                DropCause::Aqm => {
                    self.count.dropped_aqm.add(wire);
                    d.trace(now, LinkTrace::DropAqm, wire);
                    Verdict::DroppedAqm
                }
            };
        }
        self.count.queued_max.packets = self.count.queued_max.packets.max(self.count.queued.packets);
        self.count.queued_max.bytes = self.count.queued_max.bytes.max(self.count.queued.bytes);
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
                    count: &mut self.count,
                };
                self.queue.dequeue(t, self.rate, &mut acct)
            } else if self.queue.front_wire().is_some_and(|w| self.fits_before_cut(t, w)) {
                self.queue.dequeue(t, self.rate, &mut Silent)
            } else {
                None
            };
            if let Some(f) = next {
                self.count.queued.sub(f.wire);
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
        self.count.in_transmission.sub(tx.wire);
        self.count.busy_ns += tx.done - tx.start;
        if tx.lost {
            self.count.dropped_random.add(tx.wire);
            d.trace(SimTime::from_nanos(tx.done), LinkTrace::DropRandom, tx.wire);
        } else {
            self.count.in_flight.add(tx.wire);
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
        self.count.in_transmission.add(f.wire);
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
        self.count.in_flight.sub(f.wire);
        self.count.delivered.add(f.wire);
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
            self.count.in_transmission.sub(tx.wire);
            self.count.busy_ns += t - tx.start;
            self.tx_gen = (self.tx_gen + 1) & 0xFF_FFFF;
            self.kick_armed = false;
            self.anchor_valid = false;
            if !tx.lost {
                // Its item is the newest in `prop`; an `Arrive` event
                // scheduled for it will find a different head and do nothing.
                self.prop.pop_back();
            }
            self.count.dropped_cutoff.add(tx.wire);
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
    pub fn on_rate_change(&mut self, step: u32) -> Rate {
        if let Some(s) = self.schedule.get(step as usize) {
            self.rate = s.rate;
            self.anchor_valid = false;
        }
        self.rate
    }

    /// A snapshot of the counters at `now` (the link field is left at its
    /// default: the caller names the link).
    pub fn stats(&self, now: SimTime) -> LinkStats {
        let now = now.as_nanos();
        // Settle a finished transmission on the copy (completion is lazy).
        let mut busy = self.count.busy_ns;
        let (mut in_tx, mut in_flight, mut dropped_random) = (
            self.count.in_transmission,
            self.count.in_flight,
            self.count.dropped_random,
        );
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
            offered: self.count.offered,
            delivered: self.count.delivered,
            dropped_queue: self.count.dropped_queue,
            dropped_cutoff: self.count.dropped_cutoff,
            dropped_random,
            dropped_aqm: self.count.dropped_aqm,
            marked: self.count.marked,
            sojourn_p50_ns: self.sojourn.quantile(0.5),
            sojourn_p99_ns: self.sojourn.quantile(0.99),
            queued: self.count.queued,
            in_transmission: in_tx,
            in_flight,
            busy_ns: busy,
            elapsed_ns: now,
            utilisation: if now == 0 { 0.0 } else { busy as f64 / now as f64 },
            queued_max: self.count.queued_max,
            fq_codel: match &self.queue {
                Queue::FqCodel(q) => Some(q.stats()),
                _ => None,
            },
            ..LinkStats::default()
        }
    }
}

/// A link's packet and byte counters: what [`LinkStats`] reports (see its
/// conservation law), kept together so that the accounting of a
/// discipline's drops and marks ([`Acct`]) borrows them as one.
#[derive(Clone, Copy, Debug, Default)]
struct Counters {
    offered: Counter,
    delivered: Counter,
    dropped_queue: Counter,
    dropped_cutoff: Counter,
    dropped_random: Counter,
    dropped_aqm: Counter,
    marked: Counter,
    queued: Counter,
    queued_max: Counter,
    in_transmission: Counter,
    in_flight: Counter,
    /// Nanoseconds the transmitter has spent serializing.
    busy_ns: u64,
}

/// The link's accounting of what its discipline does to queued packets.
struct Acct<'a, D> {
    now: SimTime,
    d: &'a mut D,
    count: &'a mut Counters,
}

impl<P, D: LinkDriver> Out<P> for Acct<'_, D> {
    #[inline]
    fn dropped(&mut self, f: Frame<P>, cause: DropCause) {
        self.count.queued.sub(f.wire);
        match cause {
            DropCause::Overflow => {
                self.count.dropped_queue.add(f.wire);
                self.d.trace(self.now, LinkTrace::DropQueue, f.wire);
            }
            DropCause::Aqm => {
                self.count.dropped_aqm.add(f.wire);
                self.d.trace(self.now, LinkTrace::DropAqm, f.wire);
            }
        }
    }
    #[inline]
    fn marked(&mut self, wire: u64) {
        self.count.marked.add(wire);
        self.d.trace(self.now, LinkTrace::Mark, wire);
    }
}

/// DropTail reports nothing.
struct Silent;

impl<P> Out<P> for Silent {
    fn dropped(&mut self, _: Frame<P>, _: DropCause) {}
    fn marked(&mut self, _: u64) {}
}
