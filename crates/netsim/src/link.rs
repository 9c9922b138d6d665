//! Link configuration: rate, delay, queue and impairments.

use std::time::Duration;

use crate::time::duration_to_nanos;
use crate::{Error, Rate, SimTime};

/// Default per-packet header overhead: IPv4 (20 B) + UDP (8 B).
pub const DEFAULT_OVERHEAD_BYTES: u32 = 28;

/// Largest frame, in wire bytes, the automatic pause lead is sized for.
pub const PAUSE_MAX_FRAME_BYTES: u64 = 1500;

/// Capacity of a link's DropTail queue.
///
/// The queue holds packets waiting for the transmitter; the packet being
/// serialized is not in it. Byte limits count wire bytes (payload plus the
/// link's header overhead).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
#[non_exhaustive]
pub enum QueueLimit {
    /// At most this many waiting packets.
    Packets(u32),
    /// At most this many waiting wire bytes.
    Bytes(u64),
}

/// What a periodic cut-off does to traffic (Morokoshi and Yakoh, "The effect of periodic data-link cut-offs on TCP throughput").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
#[non_exhaustive]
pub enum CutMode {
    /// The paper's S-TDMA switch: packets arriving at the link during the cut
    /// are discarded, and a packet being serialized when the cut begins is
    /// lost. Packets already queued before the cut wait and are sent after it.
    Drop,
    /// Remedy (1) of Morokoshi and Yakoh as the paper proposes it: the switch knows its
    /// own schedule, so it starts a packet only if its last bit leaves before
    /// the next cut (a guard interval of at most one frame), and arrivals wait
    /// in the queue through the guard and the cut (DropTail still applies).
    /// Nothing is lost to the cut itself. A frame longer than the connected
    /// interval can never be sent: it blocks the queue (the link's limit, not
    /// the transport's).
    Hold,
    /// The unguarded variant of [`CutMode::Hold`]: the link stops
    /// transmitting during the cut and arrivals wait in the queue (DropTail
    /// applies), but the cut is not announced to the transmitter, so a packet
    /// being serialized when it begins is lost (one packet per cut when the
    /// link is busy).
    HoldAbort,
    /// Remedy (2) of Morokoshi and Yakoh, modelled on an IEEE 802.3x PAUSE frame: the link's
    /// own transmitter stops starting new packets `pause_lead` before the cut
    /// and resumes when it ends; arrivals wait in the queue (DropTail
    /// applies). With the default lead no packet of up to
    /// [`PAUSE_MAX_FRAME_BYTES`] wire bytes is on the wire when the cut
    /// begins, so nothing is lost to the cut itself; with a shorter explicit
    /// lead a packet still on the wire at the cut is lost, as in `Hold`.
    Pause,
}

/// A periodic cut-off: in every period the link is connected for the first
/// `connected_fraction` of the period and cut for the rest.
///
/// Period `k` (any integer) is connected during
/// `[phase + k*period, phase + k*period + round(connected_fraction*period))`
/// and cut until `phase + (k+1)*period`.
///
/// Build one with [`CutOff::new`] and the `with_*` setters (the struct is
/// `#[non_exhaustive]`; its fields are public for reading).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct CutOff {
    /// Length of one connected + cut cycle.
    pub period: Duration,
    /// Share of each period the link is connected, in `(0, 1]` (the paper's
    /// "occupancy"). 1 means never cut.
    pub connected_fraction: f64,
    /// Start of a connected interval.
    pub phase: Duration,
    /// What happens to traffic during the cut.
    pub mode: CutMode,
    /// For [`CutMode::Pause`]: how long before the cut the transmitter stops.
    /// `None` = the serialization time of a [`PAUSE_MAX_FRAME_BYTES`] frame at
    /// the slowest rate the link will ever have, clamped to the connected
    /// interval.
    pub pause_lead: Option<Duration>,
}

impl CutOff {
    /// A cut-off with phase 0 and the default pause lead.
    pub fn new(period: Duration, connected_fraction: f64, mode: CutMode) -> Self {
        CutOff {
            period,
            connected_fraction,
            phase: Duration::ZERO,
            mode,
            pause_lead: None,
        }
    }

    /// Sets the phase (start of a connected interval).
    pub fn with_phase(mut self, phase: Duration) -> Self {
        self.phase = phase;
        self
    }

    /// Sets an explicit pause lead (only used by [`CutMode::Pause`]).
    pub fn with_pause_lead(mut self, lead: Duration) -> Self {
        self.pause_lead = Some(lead);
        self
    }

    /// The PAUSE schedule of the link feeding this one (Morokoshi and Yakoh's remedy
    /// (2): the switch pauses the *sender* just before each cut, as an IEEE
    /// 802.3x PAUSE frame would): the same period and connected share in
    /// [`CutMode::Pause`], shifted earlier by `upstream_delay`, the
    /// propagation delay of the upstream link, so that its last frame has
    /// arrived when this link's cut begins and its first frame after the
    /// pause arrives as the cut ends. The lead (default: one
    /// [`PAUSE_MAX_FRAME_BYTES`] frame at the upstream rate) is kept.
    pub fn upstream_pause(&self, upstream_delay: Duration) -> CutOff {
        let period = self.period.as_nanos().max(1);
        let shift = upstream_delay.as_nanos() % period;
        let phase = (self.phase.as_nanos() % period + period - shift) % period;
        CutOff {
            period: self.period,
            connected_fraction: self.connected_fraction,
            phase: Duration::from_nanos(phase as u64),
            mode: CutMode::Pause,
            pause_lead: self.pause_lead,
        }
    }
}

/// A change of the link rate at a given time (a power-saving port,
/// Araki 2011). A packet being serialized when the rate changes
/// finishes at the rate it started with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct RateStep {
    /// When the new rate takes effect.
    pub at: SimTime,
    /// The new rate (> 0). Serialized as `rate_bps`, bits per second.
    #[cfg_attr(feature = "serde", serde(rename = "rate_bps"))]
    pub rate: Rate,
}

impl RateStep {
    /// The rate becomes `rate` at `at`.
    pub fn new(at: SimTime, rate: Rate) -> Self {
        RateStep { at, rate }
    }
}

/// Random loss. Drawn from the link's own seeded stream when a packet starts
/// serialization; the packet still occupies the link for its serialization
/// time and is counted as dropped when that ends (a packet lost this way
/// never reaches the far end).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(
    feature = "serde",
    derive(serde::Serialize, serde::Deserialize),
    serde(rename_all = "snake_case")
)]
#[non_exhaustive]
pub enum RandomLoss {
    /// Bit error rate: a packet of `n` wire bytes is lost with probability
    /// `1 - (1 - ber)^(8n)` (Miyake, Kato and Suzuki used 1e-8).
    BitErrorRate(f64),
    /// Every packet is lost with this probability.
    PacketLoss(f64),
}

/// A unidirectional link's configuration.
///
/// Build one with [`LinkConfig::new`] and the `with_*` setters (the struct
/// is `#[non_exhaustive]`; its fields are public for reading).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct LinkConfig {
    /// Initial rate. Serialized as `rate_bps`, bits per second.
    #[cfg_attr(feature = "serde", serde(rename = "rate_bps"))]
    pub rate: Rate,
    /// Propagation delay.
    pub delay: Duration,
    /// Header bytes added to each datagram's payload on this link
    /// (serialization time, byte counters and byte queue limits use
    /// payload + overhead). Default [`DEFAULT_OVERHEAD_BYTES`].
    pub overhead_bytes: u32,
    /// Queue capacity (every discipline's hard limit).
    pub queue: QueueLimit,
    /// Queue discipline (default DropTail).
    #[cfg_attr(feature = "serde", serde(default))]
    pub discipline: crate::QueueDiscipline,
    /// Optional periodic cut-off.
    pub cutoff: Option<CutOff>,
    /// Rate changes, in increasing time order.
    pub rate_schedule: Vec<RateStep>,
    /// Optional random loss.
    pub loss: Option<RandomLoss>,
    /// Delivery opportunities from a packet-delivery trace instead of
    /// serialization at `rate` ([`crate::DeliveryTrace`]); `rate`
    /// still sizes the reverse direction of builders and the oracle's capacity.
    #[cfg_attr(feature = "serde", serde(default, skip_serializing_if = "Option::is_none"))]
    pub trace: Option<crate::DeliveryTrace>,
}

impl LinkConfig {
    /// A link of `rate` and one-way `delay`, 28 B overhead, a 100-packet
    /// DropTail queue and no impairments.
    pub fn new(rate: Rate, delay: Duration) -> Self {
        LinkConfig {
            rate,
            delay,
            overhead_bytes: DEFAULT_OVERHEAD_BYTES,
            queue: QueueLimit::Packets(100),
            discipline: crate::QueueDiscipline::DropTail,
            cutoff: None,
            rate_schedule: Vec::new(),
            loss: None,
            trace: None,
        }
    }

    /// Takes its delivery opportunities from `trace` (an impairment: the
    /// reverse direction of builders runs at `rate`).
    pub fn with_trace(mut self, trace: crate::DeliveryTrace) -> Self {
        self.trace = Some(trace);
        self
    }

    /// Sets the queue limit.
    pub fn with_queue(mut self, queue: QueueLimit) -> Self {
        self.queue = queue;
        self
    }

    /// Sets the queue discipline.
    pub fn with_discipline(mut self, discipline: crate::QueueDiscipline) -> Self {
        self.discipline = discipline;
        self
    }

    /// Sets the per-packet header overhead in bytes.
    pub fn with_overhead(mut self, bytes: u32) -> Self {
        self.overhead_bytes = bytes;
        self
    }

    /// Adds a periodic cut-off.
    pub fn with_cutoff(mut self, cutoff: CutOff) -> Self {
        self.cutoff = Some(cutoff);
        self
    }

    /// Sets the rate schedule.
    pub fn with_rate_schedule(mut self, steps: Vec<RateStep>) -> Self {
        self.rate_schedule = steps;
        self
    }

    /// Adds random loss.
    pub fn with_loss(mut self, loss: RandomLoss) -> Self {
        self.loss = Some(loss);
        self
    }

    /// The same rate, delay, overhead and queue with no impairments (used for
    /// the reverse direction of builders).
    pub fn without_impairments(&self) -> Self {
        LinkConfig {
            cutoff: None,
            rate_schedule: Vec::new(),
            loss: None,
            trace: None,
            ..self.clone()
        }
    }

    /// Checks every value; the error names the first bad one.
    pub fn validate(&self) -> Result<(), Error> {
        if self.rate.is_zero() {
            return Err(Error::ZeroRate(0));
        }
        match self.queue {
            QueueLimit::Packets(0) | QueueLimit::Bytes(0) => return Err(Error::ZeroQueue),
            _ => {}
        }
        self.discipline.validate()?;
        if self.discipline != crate::QueueDiscipline::DropTail
            && self.cutoff.as_ref().is_some_and(|c| c.mode == CutMode::Hold)
        {
            return Err(Error::BadQueueParameter {
                key: "kind",
                reason: format!(
                    "{} cannot be combined with a `hold` cut-off (its guard needs the next packet's size before dequeuing)",
                    self.discipline.name()
                ),
            });
        }
        if let Some(c) = &self.cutoff {
            if c.period.is_zero() {
                return Err(Error::ZeroPeriod(c.period));
            }
            let f = c.connected_fraction;
            if !(f > 0.0 && f <= 1.0) {
                return Err(Error::BadConnectedFraction(f));
            }
        }
        if self.trace.is_some() && (self.cutoff.is_some() || !self.rate_schedule.is_empty()) {
            return Err(Error::TraceWithSchedule);
        }
        let mut last = None;
        for s in &self.rate_schedule {
            if s.rate.is_zero() {
                return Err(Error::ZeroRate(0));
            }
            if last.is_some_and(|l| s.at <= l) {
                return Err(Error::UnsortedRateSchedule(s.at));
            }
            last = Some(s.at);
        }
        match self.loss {
            Some(RandomLoss::BitErrorRate(b)) if !(0.0..=1.0).contains(&b) => {
                return Err(Error::BadBitErrorRate(b));
            }
            Some(RandomLoss::PacketLoss(p)) if !(0.0..=1.0).contains(&p) => {
                return Err(Error::BadLossProbability(p));
            }
            _ => {}
        }
        Ok(())
    }

    /// The slowest rate this link will ever run at.
    pub(crate) fn min_rate(&self) -> Rate {
        self.rate_schedule.iter().map(|s| s.rate).fold(self.rate, Rate::min)
    }

    /// Cut-off timing in nanoseconds: (period, connected length, phase, lead).
    pub(crate) fn cut_timing(&self) -> Option<CutTiming> {
        let c = self.cutoff.as_ref()?;
        let period = duration_to_nanos(c.period);
        let connected = ((c.connected_fraction * period as f64).round() as u64).min(period);
        if connected >= period {
            return None; // never cut
        }
        let lead = match c.mode {
            CutMode::Pause => c
                .pause_lead
                .map(duration_to_nanos)
                .unwrap_or_else(|| serialization_ns(PAUSE_MAX_FRAME_BYTES * 8, self.min_rate()))
                .min(connected),
            _ => 0,
        };
        Some(CutTiming {
            period,
            connected,
            phase: duration_to_nanos(c.phase) % period,
            lead,
            mode: c.mode,
        })
    }
}

#[derive(Clone, Copy, Debug)]
pub(crate) struct CutTiming {
    pub period: u64,
    pub connected: u64,
    pub phase: u64,
    pub lead: u64,
    pub mode: CutMode,
}

impl CutTiming {
    /// Start of the first cut at or after `t` (nanoseconds since time 0), for
    /// `t` inside a connected interval; `t` itself while cut.
    pub fn next_cut_start(&self, t: u64) -> u64 {
        let pos = (t + self.period - self.phase) % self.period;
        if pos >= self.connected {
            t
        } else {
            t + (self.connected - pos)
        }
    }
}

/// Time to serialize `bits` at `rate`: `ceil(bits * 1e9 / rate)` ns,
/// computed in `u128` so it is exact for every input. `rate` must not be
/// zero.
#[inline]
pub fn serialization_ns(bits: u64, rate: Rate) -> u64 {
    let rate_bps = rate.bits_per_sec();
    // Fast path: a 64-bit division is several times cheaper than a 128-bit
    // one, and exact whenever the product fits.
    if let Some(num) = bits.checked_mul(1_000_000_000) {
        return num.div_ceil(rate_bps);
    }
    let num = bits as u128 * 1_000_000_000u128;
    let r = u128::from(rate_bps);
    u64::try_from(num.div_ceil(r)).unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serialization_is_exact_ceil() {
        let bps = Rate::from_bits_per_sec;
        assert_eq!(serialization_ns(8000, bps(8_000_000)), 1_000_000);
        assert_eq!(serialization_ns(8000, bps(3_000_000)), 2_666_667);
        assert_eq!(serialization_ns(1, bps(1)), 1_000_000_000);
        assert_eq!(serialization_ns(u64::MAX, bps(1)), u64::MAX);
    }

    #[test]
    fn next_cut_and_upstream_pause() {
        // Period 10 us, connected 8 us, phase 3 us: cuts [1, 3), [11, 13), ...
        let c = CutOff::new(Duration::from_micros(10), 0.8, CutMode::Drop).with_phase(Duration::from_micros(3));
        let ct = LinkConfig::new(Rate::from_gbit_per_sec(1), Duration::ZERO)
            .with_cutoff(c)
            .cut_timing()
            .unwrap();
        assert_eq!(ct.next_cut_start(3_000), 11_000);
        assert_eq!(ct.next_cut_start(10_999), 11_000);
        assert_eq!(ct.next_cut_start(0), 1_000);
        assert_eq!(ct.next_cut_start(1_500), 1_500, "already cut");
        // Shifted earlier by 4 us; a shift of several periods wraps.
        let p = c.upstream_pause(Duration::from_micros(4));
        assert_eq!((p.phase, p.mode), (Duration::from_micros(9), CutMode::Pause));
        assert_eq!(c.upstream_pause(Duration::from_micros(24)).phase, p.phase);
        assert_eq!(p.connected_fraction, 0.8);
    }

    #[test]
    fn validation_names_the_bad_value() {
        let ok = LinkConfig::new(Rate::from_mbit_per_sec(1), Duration::from_millis(1));
        assert!(ok.validate().is_ok());
        let e = LinkConfig::new(Rate::ZERO, Duration::ZERO).validate().unwrap_err();
        assert_eq!(e.to_string(), "link rate must be greater than 0 bit/s, got 0 bit/s");
        let e = ok
            .clone()
            .with_cutoff(CutOff::new(Duration::from_millis(1), 1.5, CutMode::Drop))
            .validate()
            .unwrap_err();
        assert_eq!(e, Error::BadConnectedFraction(1.5));
        let e = ok
            .clone()
            .with_cutoff(CutOff::new(Duration::from_millis(1), 0.0, CutMode::Drop))
            .validate()
            .unwrap_err();
        assert_eq!(e, Error::BadConnectedFraction(0.0));
        let e = ok.clone().with_queue(QueueLimit::Packets(0)).validate().unwrap_err();
        assert_eq!(e, Error::ZeroQueue);
        let e = ok
            .clone()
            .with_loss(RandomLoss::PacketLoss(2.0))
            .validate()
            .unwrap_err();
        assert_eq!(e, Error::BadLossProbability(2.0));
        let e = ok
            .with_rate_schedule(vec![
                RateStep::new(SimTime::from_secs(2), Rate::from_bits_per_sec(1)),
                RateStep::new(SimTime::from_secs(1), Rate::from_bits_per_sec(1)),
            ])
            .validate()
            .unwrap_err();
        assert_eq!(e, Error::UnsortedRateSchedule(SimTime::from_secs(1)));
    }
}
