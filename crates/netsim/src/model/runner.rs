//! [`LinkRunner`]: one [`LinkModel`] with its own timer heap, for a caller
//! outside the simulator (a live relay maps [`SimTime`] onto a wall clock).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

use super::{Frame, LinkDriver, LinkEvent, LinkModel, PacketTag, Verdict};
use crate::{LinkConfig, LinkStats, Rate, Rng, SimTime};

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
#[non_exhaustive]
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
        /// The new rate.
        rate: Rate,
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
                    rate: self.model.on_rate_change(k),
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
    use crate::{CutMode, CutOff, QueueLimit, RandomLoss, RateStep};

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
        let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::from_millis(5)).with_overhead(0);
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
        let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::ZERO)
            .with_overhead(0)
            .with_queue(QueueLimit::Packets(1));
        let mut r = LinkRunner::new(&cfg, 1).unwrap();
        let v: Vec<_> = (0..3).map(|i| r.offer(SimTime::ZERO, 1000, i)).collect();
        assert_eq!(v, [Verdict::Accepted, Verdict::Accepted, Verdict::DroppedQueue]);

        // Cut from 1 ms to 2 ms of every 2 ms: an arrival at 1.5 ms is dropped.
        let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::ZERO).with_cutoff(CutOff::new(
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

        let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::ZERO).with_loss(RandomLoss::PacketLoss(1.0));
        let mut r = LinkRunner::new(&cfg, 1).unwrap();
        assert_eq!(r.offer(SimTime::ZERO, 100, 0), Verdict::Accepted);
        assert!(drain(&mut r, SimTime::from_secs(1)).is_empty());
        assert_eq!(r.stats(SimTime::from_secs(1)).dropped_random.packets, 1);
    }

    #[test]
    fn runner_steps_rate() {
        let cfg = LinkConfig::new(Rate::from_mbit_per_sec(8), Duration::ZERO)
            .with_overhead(0)
            .with_rate_schedule(vec![RateStep::new(
                SimTime::from_millis(10),
                Rate::from_mbit_per_sec(80),
            )]);
        let mut r = LinkRunner::new(&cfg, 1).unwrap();
        match r.poll(SimTime::from_millis(10)) {
            Some(LinkOutput::RateChange { at, rate }) => {
                assert_eq!((at, rate), (SimTime::from_millis(10), Rate::from_mbit_per_sec(80)));
            }
            other => panic!("expected a rate change, got {other:?}"),
        }
        r.offer(SimTime::from_millis(10), 1000, 7);
        assert_eq!(drain(&mut r, SimTime::from_secs(1)), vec![(10_100_000, 7)]);
    }
}
