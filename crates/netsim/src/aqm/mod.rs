//! Queue disciplines of a link: DropTail (the default), CoDel (RFC 8289),
//! FQ-CoDel (RFC 8290) and RED (Floyd and Jacobson, "Random Early Detection
//! gateways for congestion avoidance", IEEE/ACM ToN 1(4), 1993, as ns-2's
//! `Queue/RED`), with ECN marking (RFC 3168 §5).
//!
//! A discipline holds the packets waiting for the transmitter. The link
//! model hands it every arrival ([`Queue::enqueue`]) and asks it for the
//! next packet when the transmitter is free ([`Queue::dequeue`]); it reports
//! the packets it drops or marks through an [`Out`]. The link's
//! [`QueueLimit`](crate::QueueLimit) is every discipline's hard limit.
//! DropTail is a plain FIFO and draws no random number, so a link without a
//! discipline behaves exactly as before they existed.

use std::collections::VecDeque;
use std::time::Duration;

use crate::model::Frame;
use crate::time::duration_to_nanos;
use crate::{Ecn, Error, Rate, Rng};

mod codel;
mod fq_codel;
mod red;

pub(crate) use codel::Codel;
pub(crate) use fq_codel::FqCodel;
pub(crate) use red::Red;

/// `with_*` setters of a config struct: `with_x: x: T;` sets field `x`.
macro_rules! setters {
    ($($method:ident: $field:ident: $ty:ty;)*) => {
        $(
            #[doc = concat!("With [`", stringify!($field), "`](Self::", stringify!($field), ") set to `", stringify!($field), "`.")]
            #[must_use]
            pub fn $method(mut self, $field: $ty) -> Self {
                self.$field = $field;
                self
            }
        )*
    };
}

/// The queue discipline of a link (see the module docs of each variant's
/// configuration for its RFC or paper).
///
/// ```
/// use std::time::Duration;
/// use tput_netsim::{CodelConfig, LinkConfig, QueueDiscipline, Rate};
/// let fq = QueueDiscipline::FqCodel(Default::default());
/// let link = LinkConfig::new(Rate::from_mbit_per_sec(10), Duration::from_millis(5)).with_discipline(fq);
/// assert!(link.validate().is_ok());
/// let bad = QueueDiscipline::Codel(CodelConfig::default().with_target(Duration::ZERO));
/// assert_eq!(bad.validate().unwrap_err().to_string(), "queue.target: must be greater than 0");
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[cfg_attr(feature = "serde", serde(tag = "kind", rename_all = "snake_case"))]
#[non_exhaustive]
pub enum QueueDiscipline {
    /// A FIFO that drops arrivals when full (the default).
    #[default]
    DropTail,
    /// CoDel, RFC 8289.
    Codel(CodelConfig),
    /// FQ-CoDel, RFC 8290.
    FqCodel(FqCodelConfig),
    /// RED as ns-2's `Queue/RED`.
    Red(RedConfig),
}

impl QueueDiscipline {
    /// Checks every parameter; the error names the bad key (`queue.KEY`).
    pub fn validate(&self) -> Result<(), Error> {
        let bad = |key: &'static str, reason: String| Err(Error::BadQueueParameter { key, reason });
        match self {
            QueueDiscipline::DropTail => Ok(()),
            QueueDiscipline::Codel(c) => check_codel(c.target, c.interval),
            QueueDiscipline::FqCodel(c) => {
                check_codel(c.target, c.interval)?;
                if c.quantum == 0 {
                    return bad("quantum", "must be at least 1 byte".into());
                }
                if c.flows == 0 || c.flows > 65_536 {
                    return bad("flows", format!("must be in 1..=65536, got {}", c.flows));
                }
                Ok(())
            }
            QueueDiscipline::Red(r) => {
                let finite_pos = |x: f64| x.is_finite() && x > 0.0;
                if !(r.min_th.is_finite() && r.min_th >= 0.0) {
                    return bad("min_th", format!("must be finite and at least 0, got {}", r.min_th));
                }
                if !(r.max_th.is_finite() && r.max_th > r.min_th) {
                    return bad(
                        "max_th",
                        format!("must be greater than min_th ({}), got {}", r.min_th, r.max_th),
                    );
                }
                if !(finite_pos(r.max_p) && r.max_p <= 1.0) {
                    return bad("max_p", format!("must be in (0, 1], got {}", r.max_p));
                }
                if !(finite_pos(r.weight) && r.weight <= 1.0) {
                    return bad("weight", format!("must be in (0, 1], got {}", r.weight));
                }
                if r.mean_packet == 0 {
                    return bad("mean_packet", "must be at least 1 byte".into());
                }
                Ok(())
            }
        }
    }

    /// The discipline's name as scenarios spell it (`drop_tail`, `codel`,
    /// `fq_codel`, `red`).
    pub fn name(&self) -> &'static str {
        match self {
            QueueDiscipline::DropTail => "drop_tail",
            QueueDiscipline::Codel(_) => "codel",
            QueueDiscipline::FqCodel(_) => "fq_codel",
            QueueDiscipline::Red(_) => "red",
        }
    }
}

fn check_codel(target: Duration, interval: Duration) -> Result<(), Error> {
    if duration_to_nanos(target) == 0 {
        return Err(Error::BadQueueParameter {
            key: "target",
            reason: "must be greater than 0".into(),
        });
    }
    if interval <= target {
        return Err(Error::BadQueueParameter {
            key: "interval",
            reason: format!("must be longer than target ({target:?}), got {interval:?}"),
        });
    }
    Ok(())
}

/// CoDel's parameters (RFC 8289 §4.2-4.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct CodelConfig {
    /// Acceptable standing queue delay (RFC 8289 §4.4; default 5 ms).
    pub target: Duration,
    /// Sliding window over which the minimum sojourn time must exceed
    /// `target` before dropping starts (RFC 8289 §4.3; default 100 ms).
    pub interval: Duration,
    /// Mark ECT packets CE instead of dropping them (RFC 8289 §5.2 "ECN";
    /// default off, as Linux's `codel`).
    pub ecn: bool,
}

impl Default for CodelConfig {
    fn default() -> Self {
        CodelConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: false,
        }
    }
}

impl CodelConfig {
    setters! {
        with_target: target: Duration;
        with_interval: interval: Duration;
        with_ecn: ecn: bool;
    }
}

/// FQ-CoDel's parameters (RFC 8290 §5.2, §4.1-4.2).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct FqCodelConfig {
    /// CoDel target of every flow queue (default 5 ms).
    pub target: Duration,
    /// CoDel interval of every flow queue (default 100 ms).
    pub interval: Duration,
    /// Mark ECT packets CE instead of dropping them (default on, as Linux's
    /// `fq_codel` and RFC 8290 §5.2.7).
    pub ecn: bool,
    /// Bytes a flow may dequeue per round of the deficit round robin
    /// (RFC 8290 §4.2 and §5.2.4; default 1514, one Ethernet frame).
    pub quantum: u32,
    /// Number of flow queues packets are hashed into (RFC 8290 §5.2.3;
    /// default 1024).
    pub flows: u32,
}

impl Default for FqCodelConfig {
    fn default() -> Self {
        FqCodelConfig {
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: true,
            quantum: 1514,
            flows: 1024,
        }
    }
}

impl FqCodelConfig {
    setters! {
        with_target: target: Duration;
        with_interval: interval: Duration;
        with_ecn: ecn: bool;
        with_quantum: quantum: u32;
        with_flows: flows: u32;
    }
}

/// RED's parameters, named and defaulted as ns-2's `Queue/RED` (Floyd and
/// Jacobson 1993, §4 and the "gentle" variant of Floyd 2000).
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub struct RedConfig {
    /// Minimum threshold of the average queue, in packets (ns-2 `thresh_`,
    /// default 5).
    pub min_th: f64,
    /// Maximum threshold, in packets (ns-2 `maxthresh_`, default 15).
    pub max_th: f64,
    /// Drop probability at `max_th` (ns-2 `1/linterm_`, default 0.1).
    pub max_p: f64,
    /// Weight of the exponentially weighted average queue (ns-2 `q_weight_`,
    /// default 0.002).
    pub weight: f64,
    /// Gentle RED: between `max_th` and `2 max_th` the probability rises
    /// linearly from `max_p` to 1 instead of jumping to 1 (ns-2 `gentle_`,
    /// default on).
    pub gentle: bool,
    /// Byte mode (ns-2 `queue_in_bytes_` and `bytes_` together): the average
    /// is of the queue in bytes, the thresholds are in units of
    /// `mean_packet` bytes, and the drop probability scales with the packet's
    /// size over `mean_packet` (default off: packet mode).
    pub bytes: bool,
    /// Mean packet size in wire bytes, for byte mode and for the decay of
    /// the average over idle time (ns-2 `mean_pktsize_`; default 1000).
    pub mean_packet: u32,
    /// Wait between drops (ns-2 `wait_`, default on): the count-based
    /// uniformisation of §7 with the probability 0 until `count * p >= 1`.
    pub wait: bool,
    /// Mark ECT packets CE instead of dropping them early (ns-2 `setbit_`;
    /// default off). Forced drops (the average above the top threshold) are
    /// always drops.
    pub ecn: bool,
}

impl Default for RedConfig {
    fn default() -> Self {
        RedConfig {
            min_th: 5.0,
            max_th: 15.0,
            max_p: 0.1,
            weight: 0.002,
            gentle: true,
            bytes: false,
            mean_packet: 1000,
            wait: true,
            ecn: false,
        }
    }
}

impl RedConfig {
    /// With thresholds `min_th` and `max_th` (packets).
    #[must_use]
    pub fn with_thresholds(mut self, min_th: f64, max_th: f64) -> Self {
        self.min_th = min_th;
        self.max_th = max_th;
        self
    }
    setters! {
        with_max_p: max_p: f64;
        with_weight: weight: f64;
        with_gentle: gentle: bool;
        with_bytes: bytes: bool;
        with_mean_packet: mean_packet: u32;
        with_wait: wait: bool;
        with_ecn: ecn: bool;
    }
}

/// Why a discipline dropped a packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DropCause {
    /// The queue's limit (an arrival into a full FIFO, or FQ-CoDel's drop
    /// from the fattest flow).
    Overflow,
    /// The AQM's decision (CoDel's control law, RED's probability).
    Aqm,
}

/// Where a discipline reports what it does to packets already queued.
pub(crate) trait Out<P> {
    /// A queued packet is dropped.
    fn dropped(&mut self, f: Frame<P>, cause: DropCause);
    /// A packet of `wire` bytes is marked CE.
    fn marked(&mut self, wire: u64);
}

/// Marks `f` CE if it is ECN-capable and `ecn` is on; whether it did.
#[inline]
pub(crate) fn try_mark<P>(ecn: bool, f: &mut Frame<P>, out: &mut impl Out<P>) -> bool {
    if ecn && f.ecn.is_ect() {
        f.ecn = Ecn::Ce;
        out.marked(f.wire);
        true
    } else {
        false
    }
}

/// A FIFO of frames with its byte count.
#[derive(Debug)]
pub(crate) struct Fifo<P> {
    pub q: VecDeque<Frame<P>>,
    pub bytes: u64,
}

impl<P> Default for Fifo<P> {
    fn default() -> Self {
        Fifo {
            q: VecDeque::new(),
            bytes: 0,
        }
    }
}

impl<P> Fifo<P> {
    #[inline]
    pub fn push(&mut self, f: Frame<P>) {
        self.bytes += f.wire;
        self.q.push_back(f);
    }
    #[inline]
    pub fn pop(&mut self) -> Option<Frame<P>> {
        let f = self.q.pop_front()?;
        self.bytes -= f.wire;
        Some(f)
    }
}

/// A link's packet limits (`u64::MAX` = none).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub packets: u64,
    pub bytes: u64,
}

impl Limits {
    /// Whether a queue of `packets` and `bytes` is over the limit.
    #[inline]
    pub fn exceeded(&self, packets: u64, bytes: u64) -> bool {
        packets > self.packets || bytes > self.bytes
    }
}

/// The packets waiting for a link's transmitter, in one of the disciplines.
#[derive(Debug)]
pub(crate) enum Queue<P> {
    DropTail(VecDeque<Frame<P>>),
    Codel(Box<Codel<P>>),
    FqCodel(Box<FqCodel<P>>),
    Red(Box<Red<P>>),
}

impl<P> Queue<P> {
    /// The queue of `d` under `limits`; RED draws from a stream derived from
    /// `rng` without advancing it.
    pub fn new(d: &QueueDiscipline, limits: Limits, rng: &Rng) -> Self {
        match d {
            QueueDiscipline::DropTail => Queue::DropTail(VecDeque::new()),
            QueueDiscipline::Codel(c) => Queue::Codel(Box::new(Codel::new(c, limits))),
            QueueDiscipline::FqCodel(c) => Queue::FqCodel(Box::new(FqCodel::new(c, limits))),
            QueueDiscipline::Red(c) => {
                let seed = rng.clone().next_u64();
                Queue::Red(Box::new(Red::new(c, limits, Rng::derive(seed, 0x0052_4544))))
            }
        }
    }

    /// Whether no packet waits.
    #[inline]
    pub fn is_empty(&self) -> bool {
        match self {
            Queue::DropTail(q) => q.is_empty(),
            Queue::Codel(c) => c.is_empty(),
            Queue::FqCodel(c) => c.is_empty(),
            Queue::Red(r) => r.is_empty(),
        }
    }

    /// The wire size of the packet [`Queue::dequeue`] would return next, if
    /// the discipline knows it without dequeuing (not FQ-CoDel).
    #[inline]
    pub fn front_wire(&self) -> Option<u64> {
        match self {
            Queue::DropTail(q) => q.front().map(|f| f.wire),
            Queue::Codel(c) => c.front_wire(),
            Queue::FqCodel(_) => None,
            Queue::Red(r) => r.front_wire(),
        }
    }

    /// An arrival at `now` (ns) on a link of `rate` (DropTail's limit
    /// check is the link's own). `Err` gives the arrival back when it is
    /// dropped.
    #[inline]
    pub fn enqueue(
        &mut self,
        now: u64,
        rate: Rate,
        f: Frame<P>,
        out: &mut impl Out<P>,
    ) -> Result<(), (Frame<P>, DropCause)> {
        match self {
            Queue::DropTail(q) => {
                q.push_back(f);
                Ok(())
            }
            Queue::Codel(c) => c.enqueue(now, f),
            Queue::FqCodel(c) => {
                c.enqueue(now, f, out);
                Ok(())
            }
            Queue::Red(r) => r.enqueue(now, rate, f, out),
        }
    }

    /// The next packet for the transmitter at `now` (ns), if any.
    #[inline]
    pub fn dequeue(&mut self, now: u64, rate: Rate, out: &mut impl Out<P>) -> Option<Frame<P>> {
        match self {
            Queue::DropTail(q) => q.pop_front(),
            Queue::Codel(c) => c.dequeue(now, out),
            Queue::FqCodel(c) => c.dequeue(now, out),
            Queue::Red(r) => r.dequeue(now, rate),
        }
    }
}

/// A histogram of sojourn times in nanoseconds with 16 linear sub-buckets
/// per power of two (at most 1/16 = 6.25 % relative error), so that
/// percentiles cost no allocation per packet and no sorting.
///
/// The buckets are held only up to the largest sample's: every link has
/// one, and most (a host's access link) see sojourns of a few microseconds
/// at most, a hundred buckets of the 1 024 that reach 2^64 ns.
#[derive(Clone, Debug, Default)]
pub(crate) struct Histogram {
    /// Count per bucket, up to the largest sample's bucket.
    counts: Vec<u64>,
    total: u64,
}

const SUB_BITS: u32 = 4;
const SUB: u64 = 1 << SUB_BITS;

impl Histogram {
    #[inline]
    fn index(v: u64) -> usize {
        if v < SUB {
            return v as usize;
        }
        let e = 63 - v.leading_zeros(); // >= SUB_BITS
        let sub = (v >> (e - SUB_BITS)) & (SUB - 1);
        ((e - SUB_BITS + 1) as u64 * SUB + sub) as usize
    }

    /// The middle of bucket `i`.
    fn value(i: usize) -> u64 {
        let i = i as u64;
        if i < SUB {
            return i;
        }
        let e = i / SUB + SUB_BITS as u64 - 1;
        let sub = i % SUB;
        let width = 1u64 << (e - SUB_BITS as u64);
        (SUB + sub) * width + width / 2
    }

    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = Self::index(v);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        self.total += 1;
    }

    /// The `q`-quantile (0..=1), `0` without samples.
    pub fn quantile(&self, q: f64) -> u64 {
        if self.total == 0 {
            return 0;
        }
        let rank = ((q * self.total as f64).ceil() as u64).clamp(1, self.total);
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                return Self::value(i);
            }
        }
        0
    }
}

#[cfg(test)]
pub(crate) mod testutil {
    use super::*;

    /// Records what a discipline reports.
    #[derive(Default, Debug)]
    pub struct Record {
        pub dropped: Vec<(u32, DropCause)>,
        pub marked: u64,
    }

    impl Out<u32> for Record {
        fn dropped(&mut self, f: Frame<u32>, cause: DropCause) {
            self.dropped.push((f.item, cause));
        }
        fn marked(&mut self, _: u64) {
            self.marked += 1;
        }
    }

    pub fn frame(item: u32, wire: u64, hash: u64, ecn: Ecn, now: u64) -> Frame<u32> {
        Frame {
            wire,
            flow: 0,
            ecn,
            item,
            hash,
            enqueued: now,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_quantiles_within_a_sixteenth() {
        let mut h = Histogram::default();
        assert_eq!(h.quantile(0.5), 0);
        for v in 1..=1000u64 {
            h.record(v * 1000);
        }
        let p50 = h.quantile(0.5) as f64;
        let p99 = h.quantile(0.99) as f64;
        assert!((p50 / 500_000.0 - 1.0).abs() < 0.07, "{p50}");
        assert!((p99 / 990_000.0 - 1.0).abs() < 0.07, "{p99}");
        let mut h = Histogram::default();
        for v in 0..16 {
            h.record(v);
        }
        assert_eq!(h.quantile(1.0), 15);
        assert_eq!(h.total, 16);
        h.record(u64::MAX);
        assert!(h.quantile(1.0) > 1 << 62);
    }

    /// An access link's sojourns (a few microseconds) take at most 128
    /// buckets, not all 1 024; a later long sojourn adds the rest, and the
    /// quantiles are those of the buckets' middles either way.
    #[test]
    fn histogram_holds_buckets_up_to_its_largest_sample() {
        let mut h = Histogram::default();
        assert!(h.counts.is_empty());
        for v in (0..2_000u64).step_by(7) {
            h.record(v);
        }
        assert_eq!(h.counts.len(), Histogram::index(1_995) + 1);
        assert!(h.counts.len() <= 128, "{}", h.counts.len());
        assert_eq!(h.quantile(1.0), Histogram::value(Histogram::index(1_995)));
        let p50 = h.quantile(0.5);
        h.record(10_000_000_000);
        assert_eq!(h.counts.len(), Histogram::index(10_000_000_000) + 1);
        assert_eq!(h.quantile(0.5), p50);
        assert_eq!(h.quantile(1.0), Histogram::value(Histogram::index(10_000_000_000)));
    }

    #[test]
    fn validation_names_the_key() {
        let e = QueueDiscipline::Red(RedConfig::default().with_thresholds(10.0, 5.0))
            .validate()
            .unwrap_err();
        assert_eq!(e.to_string(), "queue.max_th: must be greater than min_th (10), got 5");
        let e = QueueDiscipline::FqCodel(FqCodelConfig::default().with_quantum(0))
            .validate()
            .unwrap_err();
        assert_eq!(e.to_string(), "queue.quantum: must be at least 1 byte");
        let e = QueueDiscipline::Codel(CodelConfig::default().with_interval(Duration::from_millis(1)))
            .validate()
            .unwrap_err();
        assert!(
            e.to_string().starts_with("queue.interval: must be longer than target"),
            "{e}"
        );
        assert!(
            QueueDiscipline::Red(RedConfig::default().with_max_p(0.0))
                .validate()
                .is_err()
        );
        assert!(QueueDiscipline::default().validate().is_ok());
    }
}
