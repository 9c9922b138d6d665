//! An inline estimator of the available bandwidth `A` and the physical
//! bandwidth `P` of the bottleneck, computed from the connection's own send and
//! ACK stream: no probe traffic, no clock reads, O(1) amortised work and no
//! allocation per event once built.
//!
//! The method, its sources and its known bias are documented on [`InlineEstimator`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::bandwidth::{BandwidthSource, SharedBandwidth};
use crate::controller::{Ack, Congestion, CongestionController, Snapshot};
use crate::filter::WindowedMax;
use crate::send_ring::{SendRecord, SendRing};
use crate::units::Rate;

/// Records of the delivery state at send time kept at most; sends beyond that
/// reuse the latest older record, which yields a valid sample over a longer interval.
const SEND_RECORDS: usize = 1024;

/// Largest rate reported, bytes per second (8 Tbit/s): keeps outputs finite.
const MAX_RATE: f64 = 1e12;

/// Queueing delay, as a fraction of `min_rtt`, above which the queue counts as standing.
const STANDING_FRACTION: f64 = 0.125;

/// Floor of the standing-queue threshold, for paths with a tiny `min_rtt`.
const STANDING_FLOOR: Duration = Duration::from_micros(100);

/// Parameters of [`InlineEstimator`].
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub struct EstimatorConfig {
    /// A known physical bandwidth `P`; replaces the estimate.
    pub physical: Option<Rate>,
    /// Length of the own-rate max filter, in smoothed RTTs; default 8
    /// (BBR's bandwidth filter spans 10 round trips; 8 is one pacing-gain cycle).
    pub available_rtts: u32,
    /// Length of the long max filter and of a CapProbe epoch; default 10 s
    /// (BBR's `min_rtt` filter length, a time over which paths rarely change).
    pub physical_window: Duration,
}

impl Default for EstimatorConfig {
    fn default() -> Self {
        Self {
            physical: None,
            available_rtts: 8,
            physical_window: Duration::from_secs(10),
        }
    }
}

/// The packets acknowledged at one instant (one ACK frame).
#[derive(Debug, Clone, Copy)]
struct Batch {
    time: Instant,
    bytes: u64,
    /// Send time of the newest packet in it.
    newest_sent: Instant,
    /// That packet's RTT.
    newest_rtt: Duration,
}

/// A packet-pair dispersion sample.
#[derive(Debug, Clone, Copy)]
struct Pair {
    /// `d1 + d2 + gap_in`: both packets' delays, measured from the first one's
    /// send (so pairs sent apart compare fairly with back-to-back ones).
    delay_sum: Duration,
    rate: f64,
}

/// The pairs of one epoch: the smallest delay sum, and the fastest pair within
/// `slack` of it.
#[derive(Debug, Clone, Copy)]
struct Epoch {
    min_sum: Duration,
    best: Pair,
}

/// Packet-pair state: the current batch, the previous one, and two epochs.
#[derive(Debug, Clone, Copy, Default)]
struct CapProbe {
    current: Option<Batch>,
    previous: Option<Batch>,
    epoch: Option<Epoch>,
    last_epoch: Option<Epoch>,
    epoch_start: Option<Instant>,
}

impl CapProbe {
    fn estimate(&self) -> Option<f64> {
        [self.epoch, self.last_epoch]
            .into_iter()
            .flatten()
            .map(|e| e.best.rate)
            .reduce(f64::max)
    }

    /// Note a packet acknowledged at `now`.
    fn on_ack(&mut self, now: Instant, ack: &Ack, epoch: Duration, slack: Duration) {
        if self.current.is_some_and(|b| b.time != now) {
            self.close(epoch, slack);
        }
        let latest = now.saturating_duration_since(ack.sent);
        match self.current.as_mut() {
            Some(b) => {
                b.bytes = b.bytes.saturating_add(ack.bytes);
                if ack.sent >= b.newest_sent {
                    b.newest_sent = ack.sent;
                    b.newest_rtt = latest;
                }
            }
            None => {
                self.current = Some(Batch {
                    time: now,
                    bytes: ack.bytes,
                    newest_sent: ack.sent,
                    newest_rtt: latest,
                })
            }
        }
    }

    /// The current batch is complete: pair it with the previous one.
    fn close(&mut self, epoch: Duration, slack: Duration) {
        let Some(cur) = self.current.take() else {
            return;
        };
        if let Some(prev) = self.previous
            && cur.newest_sent >= prev.newest_sent
            && cur.time > prev.time
        {
            let gap_out = cur.time.duration_since(prev.time);
            let gap_in = cur.newest_sent.duration_since(prev.newest_sent);
            // Spread by a queue (not by the sender): a dispersion sample.
            if gap_in * 2 <= gap_out {
                let rate = (cur.bytes as f64 / gap_out.as_secs_f64()).min(MAX_RATE);
                let delay_sum = prev.newest_rtt.saturating_add(cur.newest_rtt).saturating_add(gap_in);
                self.offer(cur.time, epoch, slack, Pair { delay_sum, rate });
            }
        }
        self.previous = Some(cur);
    }

    fn offer(&mut self, now: Instant, epoch: Duration, slack: Duration, pair: Pair) {
        let start = *self.epoch_start.get_or_insert(now);
        if now.saturating_duration_since(start) > epoch && self.epoch.is_some() {
            self.last_epoch = self.epoch.take();
            self.epoch_start = Some(now);
        }
        let e = self.epoch.get_or_insert(Epoch {
            min_sum: pair.delay_sum,
            best: pair,
        });
        e.min_sum = e.min_sum.min(pair.delay_sum);
        let band = e.min_sum.saturating_add(slack);
        if e.best.delay_sum > band || (pair.delay_sum <= band && pair.rate > e.best.rate) {
            e.best = pair;
        }
    }
}

/// Estimates `A` and `P` inline from the connection's own sends and ACKs.
///
/// Yamanegi, Hasegawa and Murata take `A` from ImTCP's inline
/// measurement (Cao Le Thanh Man, G. Hasegawa, M. Murata, "ImTCP: TCP with an
/// inline measurement mechanism for available bandwidth", Computer
/// Communications 29(10), 2006) and, in its own simulations, from an oracle.
/// ImTCP shapes the transmission intervals of its data packets to probe; a
/// window-based QUIC sender whose pacing belongs to the transport cannot, so
/// this estimator only *observes*. It combines three published techniques:
///
/// 1. **Delivery-rate samples**, exactly the algorithm of
///    draft-cheng-iccrg-delivery-rate-estimation-02 §3 (Cheng, Cardwell,
///    Hassas Yeganeh, Jacobson): each send records the connection's
///    `delivered`, `delivered_time` and `first_sent_time`; when the packet is
///    acknowledged, `rate = (delivered_now - P.delivered) /
///    max(P.sent_time - P.first_sent_time, now - P.delivered_time)`, and a
///    sample whose interval is shorter than `min_rtt` is discarded (as Linux
///    `tcp_rate_gen` does). Sends made under the same delivery state share one
///    record, since the state is all a sample needs besides `ack.sent`.
/// 2. **Windowed max filters** over those samples, as BBR's `BtlBw` filter
///    (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR:
///    Congestion-Based Congestion Control", ACM Queue 14(5), 2016;
///    draft-cardwell-iccrg-bbr-congestion-control), implemented with Kathleen
///    Nichols' three-sample running max (Linux `lib/minmax.c`): a short one of
///    [`EstimatorConfig::available_rtts`] smoothed RTTs (the flow's own recent
///    rate) and a long one of [`EstimatorConfig::physical_window`].
/// 3. **Packet-pair dispersion with a CapProbe-style delay filter** for `P`
///    (Kapoor, Chen, Lao, Gerla, Sanadidi, "CapProbe: A Simple and Accurate
///    Capacity Estimation Technique", SIGCOMM 2004; Dovrolis, Ramanathan,
///    Moore, "Packet-dispersion techniques and a capacity-estimation
///    methodology", IEEE/ACM ToN 12(6), 2004): two consecutive ACK batches
///    whose newest packets left the sender less than half the ACK gap apart
///    were spread by a queue, `sample = bytes of the second batch / ACK gap`.
///    Each pair's delay sum `d1 + d2 + gap_in` is kept; among the pairs whose
///    sum lies within twice the standing-queue threshold (below) of the
///    smallest, the *fastest* is taken: such pairs met no standing queue, cross
///    traffic slipping between them only widens their gap, and compressed ACKs
///    (queued on the way back) carry a larger sum. CapProbe itself takes the
///    single minimum-sum pair; with pairs that were not sent back to back, the
///    minimum can be a pair spread by a cross packet, hence the band and max.
///    A pair is kept until a newer [`EstimatorConfig::physical_window`] epoch
///    has produced one of its own.
///
/// # From samples to `A` and `P`
///
/// - `P` = the configured value if given (spec `physical=`), else
///   `max(CapProbe pair rate, long-window max delivery rate)`.
/// - *Saturation test*: the bottleneck queue is taken to be standing (never
///   drained during the last round trip) when the minimum RTT over the last
///   smoothed RTT exceeds `min_rtt` by more than `min_rtt / 8` — Copa's
///   "standing RTT" (Arun, Balakrishnan, NSDI 2018). Queueing that one flight
///   causes and drains within the round (slow-start bursts) does not count.
/// - While the queue stands, the link is busy, so a FIFO serves every flow at
///   its arrival rate: cross traffic gets what it sends, `X`, and this flow the
///   rest, `P - X`. Its own delivery rate *is* `A`; the estimator records the
///   cross traffic as `X = P - own` (own = short-window max).
/// - Always `A = min(P, max(own, P - X))`, with `X = 0` until the queue has
///   stood once. When the flow does not fill the path its own rate says
///   nothing about the headroom (a window-based sender's rate is
///   `cwnd / srtt`, so `A = own` would make the paper's `k_max = A * srtt -
///   2 cwnd` permanently negative); `P - X` with the last measured `X` does.
///
/// # Assumptions and known bias
///
/// - FIFO bottleneck, cross traffic that does not react within a few RTTs, and
///   an ACK path that preserves dispersion for at least one pair per epoch.
/// - **Cross traffic is invisible until this flow builds a standing queue.**
///   Before that `A` is over-estimated by exactly `X` (it reports `P`), and
///   after the flow backs off it reports `P - X` with the last `X` seen, so a
///   later rise in cross traffic shows only when the queue stands again
///   (a later fall shows as soon as the flow's own rate exceeds `P - X`).
/// - If no dispersed pair was ever seen (fully paced sender, compressed ACKs)
///   and cross traffic was always present, `P` falls back to the flow's own
///   best delivery rate and is under-estimated by up to `X`; set `physical=`.
/// - `A` lags by up to the short window (`available_rtts` RTTs) when it falls
///   while the queue stands, since the max filter holds the older, higher rate.
/// - ACK compression that survives the RTT-sum filter inflates `P`.
/// - App-limited samples are kept: they can only lower a max filter's input.
/// - The unit tests' shared-FIFO model (fixed window, constant cross traffic)
///   measures `A` within 0.05% and `P` exactly once the queue has stood; that
///   is the method's best case, not a field accuracy.
///
/// # Use
///
/// Feed it every [`on_sent`](Self::on_sent), [`on_ack`](Self::on_ack),
/// [`on_end_acks`](Self::on_end_acks) and [`on_congestion`](Self::on_congestion)
/// (the [`Estimating`] decorator does); it publishes its estimates, after every
/// ACK, to the [`SharedBandwidth`] returned by [`shared`](Self::shared).
///
/// ```
/// use std::time::{Duration, Instant};
/// use tput_cc::{Ack, BandwidthSource, InlineEstimator, RttSample};
///
/// let mut est = InlineEstimator::default();
/// let t0 = Instant::now();
/// let ms = Duration::from_millis(1);
/// // Ten 1200-byte packets sent back to back, acknowledged 1 ms apart after a 20 ms RTT:
/// for _ in 0..10 {
///     est.on_sent(t0, 1200);
/// }
/// for i in 1..=10u32 {
///     let now = t0 + 20 * ms + i * ms;
///     let rtt = RttSample::uniform(now - t0);
///     est.on_ack(now, &Ack::new(t0, 1200, rtt));
///     est.on_end_acks(now, u64::from(10 - i) * 1200, false);
/// }
/// let p = est.shared().physical(t0).unwrap().bytes_per_sec();
/// assert!((p - 1.2e6).abs() < 1.0, "{p}"); // the pairs' dispersion: 1200 B per ms
/// ```
#[derive(Debug, Clone)]
pub struct InlineEstimator {
    config: EstimatorConfig,
    shared: SharedBandwidth,
    /// `C.delivered`, bytes.
    delivered: u64,
    /// `C.delivered_time`.
    delivered_time: Option<Instant>,
    /// `C.first_sent_time`.
    first_sent_time: Option<Instant>,
    /// Bytes in flight as last known.
    in_flight: u64,
    sends: SendRing<SendRecord>,
    /// The delivery state changed since the last record.
    dirty: bool,
    min_rtt: Option<Duration>,
    /// Windowed min of the RTT over the last smoothed RTT (stored negated, seconds).
    standing_rtt: WindowedMax<Instant, f64>,
    /// Short-window max of delivery-rate samples (own rate).
    own_rate: WindowedMax<Instant, f64>,
    /// Long-window max of delivery-rate samples.
    max_rate: WindowedMax<Instant, f64>,
    capprobe: CapProbe,
    /// Cross-traffic estimate `X`, bytes per second.
    cross: f64,
    /// The configured `P`, if valid.
    fixed_physical: Option<f64>,
    last_sample: Option<f64>,
    /// Delivery-rate samples taken.
    samples: u64,
    available: Option<f64>,
    physical: Option<f64>,
}

impl Default for InlineEstimator {
    fn default() -> Self {
        Self::new(EstimatorConfig::default())
    }
}

impl InlineEstimator {
    /// An estimator publishing to a fresh [`SharedBandwidth`].
    pub fn new(config: EstimatorConfig) -> Self {
        Self::with_shared(config, SharedBandwidth::new())
    }

    /// An estimator publishing to `shared`.
    pub fn with_shared(config: EstimatorConfig, shared: SharedBandwidth) -> Self {
        let physical = config
            .physical
            .map(Rate::bytes_per_sec)
            .filter(|p| p.is_finite() && *p > 0.0)
            .map(|p| p.min(MAX_RATE));
        if let Some(p) = physical {
            shared.set_physical(to_rate(p));
        }
        Self {
            config,
            shared,
            delivered: 0,
            delivered_time: None,
            first_sent_time: None,
            in_flight: 0,
            sends: SendRing::new(SEND_RECORDS, SEND_RECORDS),
            dirty: true,
            min_rtt: None,
            standing_rtt: WindowedMax::new(),
            own_rate: WindowedMax::new(),
            max_rate: WindowedMax::new(),
            capprobe: CapProbe::default(),
            cross: 0.0,
            fixed_physical: physical,
            last_sample: None,
            samples: 0,
            available: None,
            physical,
        }
    }

    /// The handle the estimates are published to (clones share the values).
    pub fn shared(&self) -> &SharedBandwidth {
        &self.shared
    }

    /// The estimated available bandwidth `A`, as published.
    pub fn available(&self) -> Option<Rate> {
        self.available.map(to_rate)
    }

    /// The estimated (or configured) physical bandwidth `P`, as published.
    pub fn physical(&self) -> Option<Rate> {
        self.physical.map(to_rate)
    }

    /// The cross-traffic estimate `X` from the last standing queue.
    pub fn cross_traffic(&self) -> Rate {
        to_rate(self.cross)
    }

    /// The last delivery-rate sample.
    pub fn last_rate_sample(&self) -> Option<Rate> {
        self.last_sample.map(to_rate)
    }

    /// How many delivery-rate samples have been taken.
    pub fn rate_samples(&self) -> u64 {
        self.samples
    }

    /// `bytes` were sent at `now` (one call per transmission, which may hold
    /// several packets; they share the delivery state).
    pub fn on_sent(&mut self, now: Instant, bytes: u64) {
        if self.in_flight == 0 {
            // Draft §3.2: an idle connection restarts both clocks.
            self.delivered_time = Some(now);
            self.first_sent_time = Some(now);
            self.dirty = true;
        }
        if (self.dirty || self.sends.is_empty()) && !self.sends.is_full() {
            self.sends.push(SendRecord {
                send_time: now,
                delivered: self.delivered,
                delivered_time: self.delivered_time.unwrap_or(now),
                first_send_time: self.first_sent_time.unwrap_or(now),
            });
            self.dirty = false;
        }
        self.in_flight = self.in_flight.saturating_add(bytes);
    }

    /// A packet was newly acknowledged at `now`.
    pub fn on_ack(&mut self, now: Instant, ack: &Ack) {
        let latest = now.saturating_duration_since(ack.sent);
        let min_rtt = [ack.rtt.min, latest, self.min_rtt.unwrap_or(Duration::MAX)]
            .into_iter()
            .filter(|d| !d.is_zero())
            .min()
            .filter(|d| *d != Duration::MAX);
        self.min_rtt = min_rtt;
        self.delivered = self.delivered.saturating_add(ack.bytes);
        self.delivered_time = Some(now);
        self.first_sent_time = Some(self.first_sent_time.map_or(ack.sent, |t| t.max(ack.sent)));
        self.in_flight = self.in_flight.saturating_sub(ack.bytes);
        self.dirty = true;

        let srtt = [ack.rtt.smoothed, latest, min_rtt.unwrap_or_default()]
            .into_iter()
            .find(|d| !d.is_zero())
            .unwrap_or(Duration::from_millis(1));
        if let Some(rate) = self.rate_sample(now, ack, min_rtt.unwrap_or_default()) {
            self.last_sample = Some(rate);
            self.samples += 1;
            self.own_rate
                .update(rate, now, srtt * self.config.available_rtts.max(1));
            self.max_rate.update(rate, now, self.config.physical_window);
        }
        self.capprobe
            .on_ack(now, ack, self.config.physical_window, self.pair_slack());
        let standing_rtt = -self.standing_rtt.update(-latest.as_secs_f64(), now, srtt);
        let standing = min_rtt.is_some_and(|m| standing_rtt - m.as_secs_f64() > self.threshold().as_secs_f64());
        self.publish(standing);
    }

    /// An ACK frame has been processed; `bytes_in_flight` remain.
    pub fn on_end_acks(&mut self, now: Instant, bytes_in_flight: u64, app_limited: bool) {
        let _ = (now, app_limited);
        self.in_flight = bytes_in_flight;
        self.capprobe.close(self.config.physical_window, self.pair_slack());
    }

    /// Lost bytes leave the flight.
    pub fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        let _ = now;
        self.in_flight = self.in_flight.saturating_sub(event.lost_bytes);
    }

    /// Queueing delay above which the queue counts as standing.
    fn threshold(&self) -> Duration {
        self.min_rtt
            .map_or(Duration::ZERO, |m| m.mul_f64(STANDING_FRACTION))
            .max(STANDING_FLOOR)
    }

    /// How far above the smallest delay sum a pair may be and still count:
    /// both packets below the standing-queue threshold.
    fn pair_slack(&self) -> Duration {
        self.threshold() * 2
    }

    /// Draft §3.3: the delivery rate over the interval since the acknowledged
    /// packet was sent; `None` if that send is no longer recorded or the
    /// interval is shorter than `min_rtt`.
    fn rate_sample(&mut self, now: Instant, ack: &Ack, min_rtt: Duration) -> Option<f64> {
        // Records are in send order and ACKs mostly are too: the records
        // that no later ACK can need are dropped.
        let rec = self.sends.latest_at_or_before(ack.sent)?;
        let send_elapsed = ack.sent.saturating_duration_since(rec.first_send_time);
        let ack_elapsed = now.saturating_duration_since(rec.delivered_time);
        let interval = send_elapsed.max(ack_elapsed);
        if interval.is_zero() || interval < min_rtt {
            return None;
        }
        let bytes = self.delivered.saturating_sub(rec.delivered);
        Some((bytes as f64 / interval.as_secs_f64()).min(MAX_RATE))
    }

    /// Combine the filters into `A` and `P` and publish them.
    fn publish(&mut self, standing: bool) {
        let physical = self
            .fixed_physical
            .or_else(|| match (self.capprobe.estimate(), self.max_rate.get()) {
                (Some(a), Some(b)) => Some(a.max(b)),
                (a, b) => a.or(b),
            });
        let own = self.own_rate.get();
        if standing && let (Some(p), Some(own)) = (physical, own) {
            self.cross = (p - own).max(0.0);
        }
        let available = match (own, physical) {
            (Some(own), Some(p)) => Some(own.max(p - self.cross).min(p)),
            (own, p) => own.or(p),
        };
        self.physical = physical.filter(|p| p.is_finite());
        self.available = available.filter(|a| a.is_finite()).map(|a| a.max(0.0));
        if let Some(p) = self.physical {
            self.shared.set_physical(to_rate(p));
        }
        if let Some(a) = self.available {
            self.shared.set_available(to_rate(a));
        }
    }
}

/// Bytes per second as the whole bits per second of a [`Rate`].
fn to_rate(bytes_per_sec: f64) -> Rate {
    Rate::from_bits_per_sec((bytes_per_sec.clamp(0.0, MAX_RATE) * 8.0).round() as u64)
}

/// A decorator that feeds an [`InlineEstimator`] every event before passing
/// it to the wrapped controller, which reads the estimates as its
/// [`BandwidthSource`] (build it with [`Estimating::source`]).
///
/// Window, pacing rate, snapshot and initial window are the inner
/// controller's.
///
/// **Clones share the estimate.** [`clone_box`](CongestionController::clone_box)
/// deep-copies the estimator's state and the inner controller, but both copies
/// keep publishing to and reading from the same [`SharedBandwidth`]: the inner
/// controller holds its source as an opaque `Arc`, which cannot be re-pointed.
/// quinn-proto clones a controller only on path migration and drops the old
/// one (quinn-proto 0.11, `Connection::migrate`), so exactly one writer remains.
///
/// ```
/// use tput_cc::{ControllerSpec, CongestionController};
/// let spec: ControllerSpec = "guarantee:target=20Mbit/s,abw=inline".parse().unwrap();
/// let cc = spec.build(1200); // a Guarantee wrapped in Estimating
/// assert_eq!(cc.window(), 12_000);
/// ```
#[derive(Debug, Clone)]
pub struct Estimating {
    estimator: InlineEstimator,
    inner: Box<dyn CongestionController>,
}

impl Estimating {
    /// Wrap `inner`, which should read its bandwidth from
    /// [`source`](Self::source) of `estimator` (or from a clone of its
    /// [`shared`](InlineEstimator::shared) handle).
    pub fn new(estimator: InlineEstimator, inner: Box<dyn CongestionController>) -> Self {
        Self { estimator, inner }
    }

    /// `estimator`'s published values as a [`BandwidthSource`] for the inner controller.
    pub fn source(estimator: &InlineEstimator) -> Arc<dyn BandwidthSource> {
        Arc::new(estimator.shared().clone())
    }

    /// The estimator.
    pub fn estimator(&self) -> &InlineEstimator {
        &self.estimator
    }

    /// The wrapped controller.
    pub fn inner(&self) -> &dyn CongestionController {
        &*self.inner
    }
}

impl CongestionController for Estimating {
    fn on_sent(&mut self, now: Instant, bytes: u64) {
        self.estimator.on_sent(now, bytes);
        self.inner.on_sent(now, bytes);
    }
    fn on_ack(&mut self, now: Instant, ack: &Ack) {
        self.estimator.on_ack(now, ack);
        self.inner.on_ack(now, ack);
    }
    fn on_end_acks(&mut self, now: Instant, bytes_in_flight: u64, app_limited: bool) {
        self.estimator.on_end_acks(now, bytes_in_flight, app_limited);
        self.inner.on_end_acks(now, bytes_in_flight, app_limited);
    }
    fn on_congestion(&mut self, now: Instant, event: &Congestion) {
        self.estimator.on_congestion(now, event);
        self.inner.on_congestion(now, event);
    }
    fn on_recovery_end(&mut self, now: Instant) {
        self.inner.on_recovery_end(now);
    }
    fn on_mtu_update(&mut self, max_datagram_size: u16) {
        self.inner.on_mtu_update(max_datagram_size);
    }
    fn window(&self) -> u64 {
        self.inner.window()
    }
    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }
    fn pacing_rate(&self) -> Option<u64> {
        self.inner.pacing_rate()
    }
    fn send_quantum(&self) -> Option<u64> {
        self.inner.send_quantum()
    }
    fn counts_selective_acks(&self) -> bool {
        self.inner.counts_selective_acks()
    }
    fn on_spurious_loss(&mut self, now: Instant) {
        self.inner.on_spurious_loss(now);
    }
    fn snapshot(&self) -> Snapshot {
        self.inner.snapshot()
    }
    fn clone_box(&self) -> Box<dyn CongestionController> {
        Box::new(self.clone())
    }
}

#[cfg(test)]
mod tests;
