//! The bandwidth oracle of Yamanegi, Hasegawa and Murata ("Congestion control mechanism of TCP for achieving predictable throughput"): on a chosen link,
//! available bandwidth `A = P - (throughput of every flow except the
//! controller's own)`, exact and always current, as the paper's own
//! simulations assumed.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{FlowId, LinkId, Rate};

/// Number of full buckets in the sliding window.
const BUCKETS: u64 = 100;

#[derive(Debug, Default)]
struct Shared {
    capacity: AtomicU64,
    available: AtomicU64,
    cross: AtomicU64,
}

/// A read-only view of one oracle, updated by the simulator as packets leave
/// the link's transmitter (and at least once per bucket of virtual time).
///
/// Created with [`crate::Simulator::add_oracle`]. Cheap to clone, `Send +
/// Sync`; reads are relaxed atomic loads. Rates count wire bits (payload +
/// header overhead), as the link rate does.
#[derive(Clone, Debug)]
pub struct OracleHandle {
    shared: Arc<Shared>,
    link: LinkId,
}

impl OracleHandle {
    /// The link observed.
    pub fn link(&self) -> LinkId {
        self.link
    }

    /// `P`: the link's current rate.
    pub fn capacity(&self) -> Rate {
        Rate::from_bits_per_sec(self.shared.capacity.load(Ordering::Relaxed))
    }

    /// `A = max(0, P - cross)` over the sliding window.
    pub fn available(&self) -> Rate {
        Rate::from_bits_per_sec(self.shared.available.load(Ordering::Relaxed))
    }

    /// Throughput of the traffic that is not the own flows, over the window.
    pub fn cross(&self) -> Rate {
        Rate::from_bits_per_sec(self.shared.cross.load(Ordering::Relaxed))
    }
}

/// The simulator's side of an oracle: a ring of per-bucket byte counts.
#[derive(Debug)]
pub(crate) struct OracleState {
    shared: Arc<Shared>,
    /// Sorted.
    own: Vec<FlowId>,
    bucket_ns: u64,
    start_ns: u64,
    /// `BUCKETS + 1` slots: the full buckets plus the current partial one.
    ring: Vec<u64>,
    /// Absolute index of the current bucket.
    cur: u64,
    /// Sum of `ring`.
    sum: u64,
}

impl OracleState {
    pub(crate) fn new(
        link: LinkId,
        own: impl IntoIterator<Item = FlowId>,
        window_ns: u64,
        now_ns: u64,
        capacity: u64,
    ) -> (OracleState, OracleHandle) {
        let mut own: Vec<FlowId> = own.into_iter().collect();
        own.sort_unstable();
        own.dedup();
        let bucket_ns = (window_ns / BUCKETS).max(1);
        let shared = Arc::new(Shared::default());
        shared.capacity.store(capacity, Ordering::Relaxed);
        shared.available.store(capacity, Ordering::Relaxed);
        let state = OracleState {
            shared: shared.clone(),
            own,
            bucket_ns,
            start_ns: now_ns,
            ring: vec![0; BUCKETS as usize + 1],
            cur: now_ns / bucket_ns,
            sum: 0,
        };
        (state, OracleHandle { shared, link })
    }

    pub(crate) fn bucket_ns(&self) -> u64 {
        self.bucket_ns
    }

    fn advance(&mut self, now_ns: u64) {
        let k = now_ns / self.bucket_ns;
        if k <= self.cur {
            return;
        }
        let n = self.ring.len() as u64;
        // Amortised O(1): each bucket is cleared once per lap.
        let first = self.cur + 1;
        let last = k.min(self.cur + n);
        for i in first..=last {
            let slot = &mut self.ring[(i % n) as usize];
            self.sum -= *slot;
            *slot = 0;
        }
        self.cur = k;
    }

    /// A packet of `wire_bytes` of flow `flow` left the transmitter at `now`.
    #[inline]
    pub(crate) fn on_packet(&mut self, now_ns: u64, flow: FlowId, wire_bytes: u64) {
        self.advance(now_ns);
        if self.own.binary_search(&flow).is_err() {
            let n = self.ring.len() as u64;
            self.ring[(self.cur % n) as usize] += wire_bytes;
            self.sum += wire_bytes;
        }
        self.publish(now_ns);
    }

    /// Rolls the window forward with no packet (timer tick).
    pub(crate) fn tick(&mut self, now_ns: u64) {
        self.advance(now_ns);
        self.publish(now_ns);
    }

    pub(crate) fn set_capacity(&mut self, rate: u64, now_ns: u64) {
        self.shared.capacity.store(rate, Ordering::Relaxed);
        self.publish(now_ns);
    }

    fn publish(&self, now_ns: u64) {
        // The window spans the full buckets plus the elapsed part of the
        // current one, but never more than the oracle has existed.
        let span = (BUCKETS * self.bucket_ns + now_ns.saturating_sub(self.cur * self.bucket_ns))
            .min(now_ns.saturating_sub(self.start_ns))
            .max(self.bucket_ns);
        let cross = (self.sum as u128 * 8 * 1_000_000_000 / span as u128) as u64;
        let cap = self.shared.capacity.load(Ordering::Relaxed);
        self.shared.cross.store(cross, Ordering::Relaxed);
        self.shared
            .available
            .store(cap.saturating_sub(cross), Ordering::Relaxed);
    }
}
