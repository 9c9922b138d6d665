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

/// A source of the available and physical bandwidth of the path, bytes per second.
pub trait BandwidthSource: Send + Sync + fmt::Debug {
    /// Available bandwidth `A` at `now`, bytes per second; `None` if not known yet.
    fn available(&self, now: Instant) -> Option<f64>;
    /// Physical bandwidth `P` of the bottleneck, bytes per second; `None` if not known.
    fn physical(&self, now: Instant) -> Option<f64>;
}

const UNKNOWN: u64 = u64::MAX;

/// A shared, lock-free pair of values (`A`, `P`) in bits per second.
///
/// Clones share the same values; writers call [`set_available`](Self::set_available)
/// and [`set_physical`](Self::set_physical) and the controller reads them at every ACK.
///
/// ```
/// use std::time::Instant;
/// use tput_cc::{BandwidthSource, SharedBandwidth};
///
/// let bw = SharedBandwidth::new();
/// assert_eq!(bw.available(Instant::now()), None);
/// bw.set_physical(100_000_000);
/// bw.set_available(80_000_000);
/// assert_eq!(bw.available(Instant::now()), Some(10_000_000.0)); // bytes per second
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
    /// Set the available bandwidth, bits per second.
    pub fn set_available(&self, bits_per_sec: u64) {
        self.inner
            .available_bps
            .store(bits_per_sec.min(UNKNOWN - 1), Ordering::Relaxed);
    }
    /// Set the physical bandwidth, bits per second.
    pub fn set_physical(&self, bits_per_sec: u64) {
        self.inner
            .physical_bps
            .store(bits_per_sec.min(UNKNOWN - 1), Ordering::Relaxed);
    }
    fn read(v: &AtomicU64) -> Option<f64> {
        match v.load(Ordering::Relaxed) {
            UNKNOWN => None,
            bps => Some(bps as f64 / 8.0),
        }
    }
}

impl BandwidthSource for SharedBandwidth {
    fn available(&self, _now: Instant) -> Option<f64> {
        Self::read(&self.inner.available_bps)
    }
    fn physical(&self, _now: Instant) -> Option<f64> {
        Self::read(&self.inner.physical_bps)
    }
}

impl fmt::Debug for SharedBandwidth {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedBandwidth")
            .field("available_bytes_per_sec", &Self::read(&self.inner.available_bps))
            .field("physical_bytes_per_sec", &Self::read(&self.inner.physical_bps))
            .finish()
    }
}
