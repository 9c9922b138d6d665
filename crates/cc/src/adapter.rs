//! Plugs any [`CongestionController`] into quinn-proto.
//!
//! quinn-proto's hook differs from ours in three ways that the adapter
//! bridges (all checked against quinn-proto 0.11.19):
//! - its `RttEstimator` has not yet taken the sample of the ACK being
//!   processed, so the latest RTT is computed here as `now - sent`;
//! - a congestion event carries `is_persistent_congestion` (the timeout
//!   analogue, RFC 9002 §7.6) and `lost_bytes == 0` for ECN (§7.1);
//! - a PTO expiry calls nothing on the controller, so controllers never see a
//!   timeout other than persistent congestion.

use std::any::Any;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use quinn_proto::RttEstimator;
use quinn_proto::congestion::{Controller, ControllerFactory, ControllerMetrics};

use crate::aggregate::Aggregate;
use crate::bandwidth::BandwidthSource;
use crate::controller::{Ack, Congestion, CongestionController, CongestionKind, RttSample, Snapshot};
use crate::spec::ControllerSpec;

/// A shared handle to the latest [`Snapshot`] of the controllers a
/// [`QuinnFactory`] built, updated at the end of every ACK batch and at every
/// congestion event. quinn-proto only hands out `&dyn Controller`, which cannot
/// be downcast, so this is how a driver reads internal state.
///
/// One probe serves one connection: give each connection its own factory when
/// you need per-connection snapshots.
#[derive(Debug, Clone, Default)]
pub struct ControllerProbe {
    latest: Arc<Mutex<Option<Snapshot>>>,
}

impl ControllerProbe {
    /// An empty probe.
    pub fn new() -> Self {
        Self::default()
    }
    /// The latest snapshot, if any controller has reported one yet.
    pub fn latest(&self) -> Option<Snapshot> {
        *self.latest.lock().unwrap_or_else(PoisonError::into_inner)
    }
    fn store(&self, snapshot: Snapshot) {
        *self.latest.lock().unwrap_or_else(PoisonError::into_inner) = Some(snapshot);
    }
}

/// Builds a [`QuinnController`] per quinn-proto connection (or path reset)
/// from a [`ControllerSpec`].
#[derive(Debug, Clone)]
pub struct QuinnFactory {
    spec: ControllerSpec,
    bandwidth: Option<Arc<dyn BandwidthSource>>,
    aggregate: Option<Aggregate>,
    probe: Option<ControllerProbe>,
}

impl QuinnFactory {
    /// A factory for `spec`.
    pub fn new(spec: ControllerSpec) -> Self {
        Self {
            spec,
            bandwidth: None,
            aggregate: None,
            probe: None,
        }
    }
    /// Give controllers that need `A` and `P` (the guarantee controller) this source.
    pub fn with_bandwidth(mut self, bandwidth: Arc<dyn BandwidthSource>) -> Self {
        self.bandwidth = Some(bandwidth);
        self
    }
    /// Guarantee controllers built by this factory join `group` (see [`Aggregate`]).
    pub fn with_aggregate(mut self, group: Aggregate) -> Self {
        self.aggregate = Some(group);
        self
    }
    /// Report snapshots to `probe`.
    pub fn with_probe(mut self, probe: ControllerProbe) -> Self {
        self.probe = Some(probe);
        self
    }
    /// The spec this factory builds.
    pub fn spec(&self) -> &ControllerSpec {
        &self.spec
    }
}

impl ControllerFactory for QuinnFactory {
    fn build(self: Arc<Self>, _now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        let inner = self
            .spec
            .build_in(current_mtu, self.bandwidth.clone(), self.aggregate.as_ref());
        let probe = self.probe.clone();
        if let Some(p) = &probe {
            p.store(inner.snapshot());
        }
        Box::new(QuinnController { inner, probe })
    }
}

/// A [`CongestionController`] wearing quinn-proto's `Controller` trait.
#[derive(Debug)]
pub struct QuinnController {
    inner: Box<dyn CongestionController>,
    probe: Option<ControllerProbe>,
}

impl QuinnController {
    /// Wrap a controller.
    pub fn new(inner: Box<dyn CongestionController>) -> Self {
        Self { inner, probe: None }
    }
    /// The wrapped controller.
    pub fn inner(&self) -> &dyn CongestionController {
        &*self.inner
    }
    fn report(&self) {
        if let Some(p) = &self.probe {
            p.store(self.inner.snapshot());
        }
    }
}

impl Controller for QuinnController {
    fn on_sent(&mut self, now: Instant, bytes: u64, _last_packet_number: u64) {
        self.inner.on_sent(now, bytes);
    }

    fn on_ack(&mut self, now: Instant, sent: Instant, bytes: u64, app_limited: bool, rtt: &RttEstimator) {
        // The estimator has not yet taken this ACK's sample (QUINN_NOTES): the
        // packet's own RTT is `now - sent`, RFC 9002 §5.1 `latest_rtt`.
        let latest = now.saturating_duration_since(sent);
        let rtt = RttSample {
            latest,
            smoothed: rtt.get(),
            min: rtt.min().min(latest),
        };
        self.inner.on_ack(
            now,
            &Ack {
                sent,
                bytes,
                rtt,
                app_limited,
            },
        );
    }

    fn on_end_acks(&mut self, now: Instant, in_flight: u64, app_limited: bool, _largest_acked: Option<u64>) {
        self.inner.on_end_acks(now, in_flight, app_limited);
        self.report();
    }

    fn on_congestion_event(&mut self, now: Instant, sent: Instant, is_persistent_congestion: bool, lost_bytes: u64) {
        let kind = if is_persistent_congestion {
            CongestionKind::PersistentCongestion
        } else if lost_bytes == 0 {
            CongestionKind::Ecn
        } else {
            CongestionKind::Loss
        };
        self.inner.on_congestion(now, &Congestion { kind, sent, lost_bytes });
        self.report();
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.inner.on_mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        self.inner.window()
    }

    fn metrics(&self) -> ControllerMetrics {
        let snap = self.inner.snapshot();
        let mut m = ControllerMetrics::default();
        m.congestion_window = snap.cwnd_bytes;
        m.ssthresh = snap.ssthresh_bytes;
        m.pacing_rate = self.inner.pacing_rate().map(|r| r.saturating_mul(8));
        m
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(Self {
            inner: self.inner.clone_box(),
            probe: self.probe.clone(),
        })
    }

    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}
