//! Where the throughput-guarantee controller gets `A` (available bandwidth)
//! and `P` (physical bandwidth of the bottleneck) from.
//!
//! Yamanegi, Hasegawa and Murata ("Congestion control mechanism of TCP for achieving predictable throughput") reads `A` from ImTCP's inline
//! measurement in principle, and from an exact oracle (`A = P - background
//! throughput`) in its own simulations. [`BandwidthSource`] abstracts over
//! both: [`SharedBandwidth`] is a handle that a simulator oracle, a test or an
//! estimator writes and the controller reads.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::units::Rate;

/// A source of the available and physical bandwidth of the path.
pub trait BandwidthSource: Send + Sync + fmt::Debug {
    /// Available bandwidth `A` at `now`; `None` if not known yet.
    fn available(&self, now: Instant) -> Option<Rate>;
    /// Physical bandwidth `P` of the bottleneck; `None` if not known.
    fn physical(&self, now: Instant) -> Option<Rate>;
}

const UNKNOWN: u64 = u64::MAX;

/// A shared, lock-free pair of rates (`A`, `P`), kept in whole bits per second.
///
/// Clones share the same values; writers call [`set_available`](Self::set_available)
/// and [`set_physical`](Self::set_physical) and the controller reads them at every ACK.
///
/// ```
/// use std::time::Instant;
/// use tput_cc::units::Rate;
/// use tput_cc::{BandwidthSource, SharedBandwidth};
///
/// let bw = SharedBandwidth::new();
/// assert_eq!(bw.available(Instant::now()), None);
/// bw.set_physical(Rate::from_mbit_per_sec(100));
/// bw.set_available(Rate::from_mbit_per_sec(80));
/// let a = bw.available(Instant::now()).unwrap();
/// assert_eq!(a.bits_per_sec(), 80_000_000);
/// assert_eq!(a.bytes_per_sec(), 10_000_000.0);
/// ```
#[derive(Clone, Default)]
pub struct SharedBandwidth {
    inner: Arc<Values>,
}

struct Values {
    available_bps: AtomicU64,
    physical_bps: AtomicU64,
}

impl Default for Values {
    fn default() -> Self {
        Self {
            available_bps: AtomicU64::new(UNKNOWN),
            physical_bps: AtomicU64::new(UNKNOWN),
        }
    }
}

impl SharedBandwidth {
    /// A handle with both values unknown.
    pub fn new() -> Self {
        Self::default()
    }
    /// Set the available bandwidth `A`.
    pub fn set_available(&self, rate: Rate) {
        Self::write(&self.inner.available_bps, rate);
    }
    /// Set the physical bandwidth `P`.
    pub fn set_physical(&self, rate: Rate) {
        Self::write(&self.inner.physical_bps, rate);
    }
    fn write(v: &AtomicU64, rate: Rate) {
        v.store(rate.bits_per_sec().min(UNKNOWN - 1), Ordering::Relaxed);
    }
    fn read(v: &AtomicU64) -> Option<Rate> {
        match v.load(Ordering::Relaxed) {
            UNKNOWN => None,
            bits_per_sec => Some(Rate::from_bits_per_sec(bits_per_sec)),
        }
    }
}

impl BandwidthSource for SharedBandwidth {
    fn available(&self, _now: Instant) -> Option<Rate> {
        Self::read(&self.inner.available_bps)
    }
    fn physical(&self, _now: Instant) -> Option<Rate> {
        Self::read(&self.inner.physical_bps)
    }
}

impl fmt::Debug for SharedBandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedBandwidth")
            .field("available", &Self::read(&self.inner.available_bps))
            .field("physical", &Self::read(&self.inner.physical_bps))
            .finish()
    }
}
