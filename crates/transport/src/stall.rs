//! Stall probes: a sender whose packets have gone unacknowledged for a
//! while sends one more, at a fixed interval, beyond its congestion window
//! ([`NodeConfig::stall_probe`](crate::NodeConfig::stall_probe)).
//!
//! Why: a sender whose tail is lost sends nothing but probes, each after a
//! probe timeout that doubles every time (RFC 9002 §6.2.1); quinn-proto's
//! keep-alive PING, and even the acknowledgement of a PING from the peer,
//! wait behind the congestion window like data. On a path with periodic
//! outages whose period is near a multiple of the PTO (20 ms dead in every
//! 100 ms, with a PTO of 100 ms, on the live fault table), every doubled
//! probe lands in the same phase of the period, so in an outage: the
//! sender goes silent for seconds, longer each time, and the idle timeout
//! ends a transfer over a path that works 80 % of the time. A probe at a
//! jittered interval after the last acknowledgement keeps step with no
//! period; once one is acknowledged, the backoff ends (RFC 9002 §6.2.1).
//! RFC 9002 §7.5 lets probes ignore the congestion window; this one is
//! counted in flight like any packet.
//!
//! How: the connection's controller is wrapped ([`StallFactory`]); the
//! wrapper notes when packets were last acknowledged and whether any are
//! outstanding ([`StallState`]), and widens the window for exactly one
//! transmit while the node holds the gate open.

use std::any::Any;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use quinn_proto::RttEstimator;
use quinn_proto::congestion::{Controller, ControllerFactory, ControllerMetrics};

/// What a connection's controller wrapper and its node share.
#[derive(Debug)]
pub(crate) struct StallState {
    /// Times below count from here.
    epoch: Instant,
    /// Nanoseconds from `epoch` to the last acknowledgement of new packets
    /// (or to the send that made packets outstanding after none were).
    progress_ns: AtomicU64,
    /// Whether ack-eliciting packets are in flight, as far as the
    /// controller's calls tell.
    outstanding: AtomicBool,
    /// While set, the window lets one more transmit go.
    open: AtomicBool,
}

impl StallState {
    pub(crate) fn new(epoch: Instant) -> Arc<Self> {
        Arc::new(Self {
            epoch,
            progress_ns: AtomicU64::new(0),
            outstanding: AtomicBool::new(false),
            open: AtomicBool::new(false),
        })
    }

    fn progress(&self, now: Instant) {
        let ns = now.saturating_duration_since(self.epoch).as_nanos();
        self.progress_ns
            .store(u64::try_from(ns).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// When packets have been outstanding without an acknowledgement since;
    /// `None` when none are outstanding.
    pub(crate) fn stalled_since(&self) -> Option<Instant> {
        if !self.outstanding.load(Ordering::Relaxed) {
            return None;
        }
        self.epoch
            .checked_add(Duration::from_nanos(self.progress_ns.load(Ordering::Relaxed)))
    }

    /// Let the next transmit past the congestion window (one call of
    /// `poll_transmit` for one datagram: the node's job), or stop letting it.
    pub(crate) fn set_open(&self, open: bool) {
        self.open.store(open, Ordering::Relaxed);
    }
}

/// Builds the wrapped controller of one connection (and again when
/// quinn-proto resets the path), all sharing the connection's [`StallState`].
pub(crate) struct StallFactory {
    pub(crate) inner: Arc<dyn ControllerFactory + Send + Sync>,
    pub(crate) state: Arc<StallState>,
}

impl ControllerFactory for StallFactory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        Box::new(StallGate {
            inner: self.inner.clone().build(now, current_mtu),
            state: self.state.clone(),
        })
    }
}

/// A controller that tells its [`StallState`] what it sees and opens its
/// window while the node holds the gate open.
struct StallGate {
    inner: Box<dyn Controller>,
    state: Arc<StallState>,
}

impl Controller for StallGate {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        // The gate lets one transmit through.
        self.state.open.store(false, Ordering::Relaxed);
        if !self.state.outstanding.swap(true, Ordering::Relaxed) {
            self.state.progress(now);
        }
        self.inner.on_sent(now, bytes, last_packet_number);
    }

    fn on_ack(&mut self, now: Instant, sent: Instant, bytes: u64, app_limited: bool, rtt: &RttEstimator) {
        self.state.progress(now);
        self.inner.on_ack(now, sent, bytes, app_limited, rtt);
    }

    fn on_end_acks(&mut self, now: Instant, in_flight: u64, app_limited: bool, largest_packet_num_acked: Option<u64>) {
        self.state.progress(now);
        self.state.outstanding.store(in_flight > 0, Ordering::Relaxed);
        self.inner
            .on_end_acks(now, in_flight, app_limited, largest_packet_num_acked);
    }

    fn on_congestion_event(&mut self, now: Instant, sent: Instant, is_persistent_congestion: bool, lost_bytes: u64) {
        self.inner
            .on_congestion_event(now, sent, is_persistent_congestion, lost_bytes);
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.inner.on_mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        if self.state.open.load(Ordering::Relaxed) {
            // Past any bytes in flight; quinn-proto's pacer does not delay
            // a window this large, and the node asks for one datagram.
            u64::MAX
        } else {
            self.inner.window()
        }
    }

    fn metrics(&self) -> ControllerMetrics {
        self.inner.metrics()
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(StallGate {
            inner: self.inner.clone_box(),
            state: self.state.clone(),
        })
    }

    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self.inner.into_any()
    }
}
