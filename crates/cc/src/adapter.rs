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
//!
//! quinn-proto builds a connection's controller when the connection is
//! created, which on a server is inside `Endpoint::accept`, before the peer
//! has said anything. A factory made [`switchable`](QuinnFactory::switchable)
//! hands out a [`ControllerSwitch`] per controller it builds, through which a
//! driver replaces the algorithm once it knows which one the peer asked for.

use std::any::Any;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU16, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use quinn_proto::RttEstimator;
use quinn_proto::congestion::{Controller, ControllerFactory, ControllerMetrics};

use crate::aggregate::Aggregate;
use crate::bandwidth::BandwidthSource;
#[cfg(doc)]
use crate::controller::AlgorithmState;
use crate::controller::{Ack, Congestion, CongestionController, CongestionKind, Phase, RttSample, Snapshot, WindowUse};
use crate::error::ConfigError;
use crate::guarantee::AbwSource;
use crate::spec::ControllerSpec;

/// A shared handle to the latest [`Snapshot`] of the controllers a
/// [`QuinnFactory`] built, updated at the end of every ACK batch and at every
/// congestion event. quinn-proto only hands out `&dyn Controller`, which cannot
/// be downcast, so this is how a driver reads internal state.
///
/// A probe given with [`QuinnFactory::with_probe`] serves every controller
/// the factory builds, so it suits one connection; a server's one
/// `TransportConfig` serves many, and each then needs its own probe:
/// [`QuinnFactory::with_connection_probes`] hands out one per connection.
#[derive(Debug, Clone, Default)]
pub struct ControllerProbe {
    latest: Arc<Mutex<Option<Snapshot>>>,
    pacing: Arc<PacingCell>,
}

/// A controller's pacing rate and send quantum, as its
/// [`CongestionController::pacing_rate`] and
/// [`CongestionController::send_quantum`] last reported them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Pacing {
    /// Bytes per second, positive.
    pub rate_bytes_per_sec: u64,
    /// The largest burst the controller wants sent back to back, bytes, if it says.
    pub send_quantum: Option<u64>,
}

/// [`Pacing`] in two atomics (0 for none): a driver reads it before every
/// transmission, so it takes no lock.
#[derive(Debug, Default)]
struct PacingCell {
    rate: AtomicU64,
    quantum: AtomicU64,
}

impl ControllerProbe {
    /// An empty probe.
    pub fn new() -> Self {
        Self::default()
    }
    /// The latest snapshot, if any controller has reported one yet.
    pub fn latest(&self) -> Option<Snapshot> {
        self.latest.lock().unwrap_or_else(PoisonError::into_inner).clone()
    }
    /// The controller's pacing rate and send quantum as of its latest
    /// callback from quinn-proto (every send, ACK batch and congestion
    /// event); `None` while it reports no pacing rate (or a rate of 0).
    pub fn pacing(&self) -> Option<Pacing> {
        let rate = self.pacing.rate.load(Ordering::Relaxed);
        (rate > 0).then(|| Pacing {
            rate_bytes_per_sec: rate,
            send_quantum: Some(self.pacing.quantum.load(Ordering::Relaxed)).filter(|&q| q > 0),
        })
    }
    pub(crate) fn store(&self, snapshot: Snapshot) {
        *self.latest.lock().unwrap_or_else(PoisonError::into_inner) = Some(snapshot);
    }
    fn store_pacing(&self, controller: &dyn CongestionController) {
        self.store_rate(
            controller.pacing_rate().unwrap_or(0),
            controller.send_quantum().unwrap_or(0),
        );
    }
    /// Stores a pacing rate in bytes per second and a send quantum in bytes (0: none).
    pub(crate) fn store_rate(&self, rate: u64, quantum: u64) {
        self.pacing.rate.store(rate, Ordering::Relaxed);
        self.pacing.quantum.store(quantum, Ordering::Relaxed);
    }
}

/// Replaces the algorithm of one built [`QuinnController`].
///
/// [`install`](Self::install) builds the new algorithm for the path's current
/// datagram size and arms the switch; the controller swaps it in at its next
/// callback from quinn-proto (and reports the new algorithm's window from
/// then on). Bytes in flight are quinn-proto's business, not the
/// controller's, so nothing is lost; the new algorithm starts from its
/// initial window (RFC 9002 §7.2) as a fresh connection would.
#[derive(Debug, Clone)]
pub struct ControllerSwitch {
    shared: Arc<SwitchShared>,
}

#[derive(Debug)]
struct SwitchShared {
    armed: AtomicBool,
    pending: Mutex<Option<Box<dyn CongestionController>>>,
    /// The path's current maximum datagram size, bytes.
    mtu: AtomicU16,
    probe: ControllerProbe,
}

impl ControllerSwitch {
    fn new(mtu: u16) -> Self {
        Self {
            shared: Arc::new(SwitchShared {
                armed: AtomicBool::new(false),
                pending: Mutex::new(None),
                mtu: AtomicU16::new(mtu),
                probe: ControllerProbe::new(),
            }),
        }
    }

    /// The probe the switched controller reports its snapshots to (before and
    /// after a switch).
    pub fn probe(&self) -> ControllerProbe {
        self.shared.probe.clone()
    }

    /// Replace the controller's algorithm by `spec`, built as
    /// [`ControllerSpec::build_in`] does with `bandwidth` and `aggregate`.
    pub fn install(
        &self,
        spec: &ControllerSpec,
        bandwidth: Option<Arc<dyn BandwidthSource>>,
        aggregate: Option<&Aggregate>,
    ) {
        let mtu = self.shared.mtu.load(Ordering::Relaxed);
        let next = spec.build_in(mtu, bandwidth, aggregate);
        self.shared.probe.store(next.snapshot());
        self.shared.probe.store_pacing(&*next);
        *self.shared.pending.lock().unwrap_or_else(PoisonError::into_inner) = Some(next);
        self.shared.armed.store(true, Ordering::Release);
    }

    /// The window of an installed algorithm not yet swapped in.
    fn pending_window(&self) -> Option<u64> {
        if !self.shared.armed.load(Ordering::Acquire) {
            return None;
        }
        let pending = self.shared.pending.lock().unwrap_or_else(PoisonError::into_inner);
        pending.as_ref().map(|c| c.window())
    }

    /// The installed algorithm, once.
    fn take(&self) -> Option<Box<dyn CongestionController>> {
        if !self.shared.armed.swap(false, Ordering::AcqRel) {
            return None;
        }
        self.shared
            .pending
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }
}

/// Where a [`switchable`](QuinnFactory::switchable) factory leaves the
/// [`ControllerSwitch`] of each controller it builds, for the driver to take
/// right after the call that made quinn-proto build one (`Endpoint::accept`,
/// or an event that reset the path). One slot holds one switch: a new one
/// replaces a switch nobody took.
#[derive(Debug, Clone, Default)]
pub struct SwitchSlot {
    slot: Arc<SlotShared>,
}

#[derive(Debug, Default)]
struct SlotShared {
    switch: Mutex<Option<ControllerSwitch>>,
    /// Whether `switch` may hold one: a driver asks after every event, and
    /// almost always finds it empty, without taking the lock.
    full: AtomicBool,
}

impl SwitchSlot {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }
    /// The switch of the controller built last, if nobody took it yet.
    pub fn take(&self) -> Option<ControllerSwitch> {
        if !self.slot.full.load(Ordering::Acquire) {
            return None;
        }
        let mut switch = self.slot.switch.lock().unwrap_or_else(PoisonError::into_inner);
        self.slot.full.store(false, Ordering::Release);
        switch.take()
    }
    fn put(&self, switch: ControllerSwitch) {
        let mut slot = self.slot.switch.lock().unwrap_or_else(PoisonError::into_inner);
        *slot = Some(switch);
        self.slot.full.store(true, Ordering::Release);
    }
}

/// One [`ControllerProbe`] per controller a [`QuinnFactory`] builds, for the
/// driver to take right after the call that made quinn-proto build one
/// (`Endpoint::connect`, `Incoming::accept` in quinn, `Endpoint::accept` in
/// quinn-proto): each build appends a fresh probe, [`take`](Self::take)
/// returns the oldest not yet taken. Take them on the task that accepts
/// connections, one after each accept, and they pair up with the
/// connections in order.
#[derive(Debug, Clone, Default)]
pub struct ConnectionProbes {
    built: Arc<Mutex<VecDeque<ControllerProbe>>>,
}

impl ConnectionProbes {
    /// No probe yet.
    pub fn new() -> Self {
        Self::default()
    }
    /// The probe of the oldest controller built and not yet taken.
    pub fn take(&self) -> Option<ControllerProbe> {
        self.built.lock().unwrap_or_else(PoisonError::into_inner).pop_front()
    }
    /// Probes built and not yet taken.
    pub fn pending(&self) -> usize {
        self.built.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
    fn fresh(&self) -> ControllerProbe {
        let p = ControllerProbe::new();
        self.built
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push_back(p.clone());
        p
    }
}

/// Why a [`QuinnFactory`] refuses its configuration.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum FactoryError {
    /// A parameter of the spec is out of range.
    #[error("bad controller spec `{spec}`: {error}")]
    Spec {
        /// The spec, as it prints.
        spec: String,
        /// What is wrong with it.
        error: ConfigError,
    },
    /// [`QuinnFactory::with_aggregate`] on a factory whose controllers would
    /// not join the group; the message says why.
    #[error("with_aggregate: {0}")]
    Aggregate(String),
}

/// A user's controller constructor for [`QuinnFactory::from_fn`]: called
/// once per connection (or path reset) with quinn-proto's current maximum
/// datagram size.
pub type BuildController = dyn Fn(u16) -> Box<dyn CongestionController> + Send + Sync;

/// What a [`QuinnFactory`] builds from.
#[derive(Clone)]
enum Source {
    Spec(ControllerSpec),
    Fn(Arc<BuildController>),
}

impl std::fmt::Debug for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Spec(spec) => write!(f, "Spec({spec})"),
            Source::Fn(_) => f.write_str("Fn(..)"),
        }
    }
}

/// Builds a [`QuinnController`] per quinn-proto connection (or path reset)
/// from a [`ControllerSpec`], or from any [`CongestionController`] through
/// [`QuinnFactory::from_fn`].
///
/// A controller written outside this crate runs in quinn-proto like the
/// built-in ones; its [`Snapshot`] (with [`AlgorithmState::Custom`] for its
/// own fields) reaches a [`ControllerProbe`]:
///
/// ```
/// use std::sync::Arc;
/// use std::time::Instant;
/// use tput_cc::{
///     Ack, AlgorithmState, Congestion, CongestionController, ControllerProbe, Phase, QuinnFactory, Snapshot,
/// };
///
/// /// A fixed-increase, halve-on-loss controller (AIMD, RFC 5681 §3.1 in spirit).
/// #[derive(Debug, Clone)]
/// struct Aimd {
///     mss: u64,
///     window: u64,
///     losses: u32,
/// }
///
/// impl CongestionController for Aimd {
///     fn on_ack(&mut self, _now: Instant, ack: &Ack) {
///         self.window += self.mss * ack.bytes / self.window.max(1);
///     }
///     fn on_congestion(&mut self, _now: Instant, _event: &Congestion) {
///         self.losses += 1;
///         self.window = (self.window / 2).max(2 * self.mss);
///     }
///     fn on_mtu_update(&mut self, mtu: u16) {
///         self.mss = u64::from(mtu);
///     }
///     fn window(&self) -> u64 {
///         self.window
///     }
///     fn initial_window(&self) -> u64 {
///         10 * self.mss
///     }
///     fn snapshot(&self) -> Snapshot {
///         Snapshot::new(
///             self.window,
///             None,
///             Phase::CongestionAvoidance,
///             AlgorithmState::Custom {
///                 name: "aimd".into(),
///                 fields: vec![("losses".into(), f64::from(self.losses))],
///             },
///         )
///     }
///     fn clone_box(&self) -> Box<dyn CongestionController> {
///         Box::new(self.clone())
///     }
/// }
///
/// let probe = ControllerProbe::new();
/// let factory = QuinnFactory::from_fn(|mtu| {
///     let mss = u64::from(mtu);
///     Box::new(Aimd { mss, window: 10 * mss, losses: 0 })
/// })
/// .with_probe(probe.clone());
/// let mut transport = quinn_proto::TransportConfig::default();
/// transport.congestion_controller_factory(Arc::new(factory));
/// // Every connection with `transport` now runs `Aimd`; tests/quinn_inmemory.rs
/// // runs a transfer with it and reads its fields back through `probe`.
/// ```
#[derive(Debug, Clone)]
pub struct QuinnFactory {
    source: Source,
    bandwidth: Option<Arc<dyn BandwidthSource>>,
    aggregate: Option<Aggregate>,
    probe: Option<ControllerProbe>,
    probes: Option<ConnectionProbes>,
    switches: Option<SwitchSlot>,
}

impl QuinnFactory {
    /// A factory for `spec`, or an error naming its first parameter out of
    /// range (a spec parsed from a string is already checked; one built
    /// field by field may not be).
    ///
    /// ```
    /// use tput_cc::{ControllerSpec, QuinnFactory};
    ///
    /// let spec: ControllerSpec = "guarantee:target=20Mbit/s".parse().unwrap();
    /// let factory = QuinnFactory::try_new(spec).unwrap();
    /// assert_eq!(factory.spec().unwrap().to_string(), "guarantee:target=20Mbit/s");
    /// ```
    pub fn try_new(spec: ControllerSpec) -> Result<Self, FactoryError> {
        spec.validate().map_err(|error| FactoryError::Spec {
            spec: spec.to_string(),
            error,
        })?;
        Ok(Self::with_source(Source::Spec(spec)))
    }
    /// A factory for a controller of the user's own: `build` makes one per
    /// connection from quinn-proto's current maximum datagram size.
    /// [`with_bandwidth`](Self::with_bandwidth) and
    /// [`with_aggregate`](Self::with_aggregate) do not reach it (give the
    /// closure what it needs); probes and switches work as for a spec.
    pub fn from_fn(build: impl Fn(u16) -> Box<dyn CongestionController> + Send + Sync + 'static) -> Self {
        Self::with_source(Source::Fn(Arc::new(build)))
    }
    fn with_source(source: Source) -> Self {
        Self {
            source,
            bandwidth: None,
            aggregate: None,
            probe: None,
            probes: None,
            switches: None,
        }
    }
    /// Give controllers that need `A` and `P` (the guarantee controller) this source.
    pub fn with_bandwidth(mut self, bandwidth: Arc<dyn BandwidthSource>) -> Self {
        self.bandwidth = Some(bandwidth);
        self
    }
    /// Guarantee controllers built by this factory join `group` (see
    /// [`Aggregate`]): the group divides the available bandwidth `A` among
    /// its members, so each member needs the bandwidth source. Refused,
    /// with the reason, where the controllers would not join: a factory
    /// without a bandwidth source (give [`with_bandwidth`](Self::with_bandwidth)
    /// first), a guarantee with `abw=inline` (its own estimate of `A` already
    /// counts the other members as cross traffic), a spec other than the
    /// guarantee, or a [`from_fn`](Self::from_fn) factory.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use tput_cc::{Aggregate, QuinnFactory, SharedBandwidth};
    ///
    /// let spec = "guarantee:target=10Mbit/s".parse().unwrap();
    /// let group = Aggregate::new();
    /// let e = QuinnFactory::try_new(spec).unwrap().with_aggregate(group.clone()).unwrap_err();
    /// assert!(e.to_string().contains("no bandwidth source"), "{e}");
    /// let ok = QuinnFactory::try_new("guarantee:target=10Mbit/s".parse().unwrap())
    ///     .unwrap()
    ///     .with_bandwidth(Arc::new(SharedBandwidth::new()))
    ///     .with_aggregate(group);
    /// assert!(ok.is_ok());
    /// ```
    pub fn with_aggregate(mut self, group: Aggregate) -> Result<Self, FactoryError> {
        let why = match (&self.source, &self.bandwidth) {
            (Source::Fn(_), _) => Some(
                "a factory from from_fn builds your own controller, which joins no group: give the closure the Aggregate"
                    .to_string(),
            ),
            (Source::Spec(ControllerSpec::Guarantee(c)), _) if c.abw == AbwSource::Inline => Some(
                "abw=inline: an inline estimate of A already counts the other members as cross traffic; \
                 use abw=auto with a bandwidth source"
                    .to_string(),
            ),
            (Source::Spec(ControllerSpec::Guarantee(_)), None) => Some(
                "no bandwidth source: the group divides the available bandwidth A among its members; \
                 call with_bandwidth first"
                    .to_string(),
            ),
            (Source::Spec(ControllerSpec::Guarantee(_)), Some(_)) => None,
            (Source::Spec(other), _) => Some(format!(
                "only the guarantee controller joins an Aggregate, not `{other}`"
            )),
        };
        match why {
            Some(why) => Err(FactoryError::Aggregate(why)),
            None => {
                self.aggregate = Some(group);
                Ok(self)
            }
        }
    }
    /// Report every controller's snapshots to `probe`: for a factory that
    /// serves one connection (a client's). A server's factory serves many:
    /// use [`with_connection_probes`](Self::with_connection_probes).
    pub fn with_probe(mut self, probe: ControllerProbe) -> Self {
        self.probe = Some(probe);
        self
    }
    /// Give every controller built its own probe, left in `probes` for the
    /// driver to take after each accept or connect ([`ConnectionProbes`]);
    /// replaces [`with_probe`](Self::with_probe).
    pub fn with_connection_probes(mut self, probes: ConnectionProbes) -> Self {
        self.probes = Some(probes);
        self
    }
    /// The spec this factory builds; `None` for [`from_fn`](Self::from_fn).
    pub fn spec(&self) -> Option<&ControllerSpec> {
        match &self.source {
            Source::Spec(spec) => Some(spec),
            Source::Fn(_) => None,
        }
    }
    /// Make every controller built switchable: each gets its own
    /// [`ControllerSwitch`] (with its own probe, which replaces any
    /// [`with_probe`](Self::with_probe)), left in `slot` for the driver.
    pub fn switchable(mut self, slot: SwitchSlot) -> Self {
        self.switches = Some(slot);
        self
    }
}

impl ControllerFactory for QuinnFactory {
    fn build(self: Arc<Self>, _now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        let inner = match &self.source {
            Source::Spec(spec) => spec.build_in(current_mtu, self.bandwidth.clone(), self.aggregate.as_ref()),
            Source::Fn(build) => build(current_mtu),
        };
        let switch = self.switches.as_ref().map(|slot| {
            let switch = ControllerSwitch::new(current_mtu);
            slot.put(switch.clone());
            switch
        });
        let probe = match (&switch, &self.probes) {
            (Some(s), _) => Some(s.probe()),
            (None, Some(probes)) => Some(probes.fresh()),
            (None, None) => self.probe.clone(),
        };
        if let Some(p) = &probe {
            p.store(inner.snapshot());
            p.store_pacing(&*inner);
        }
        Box::new(QuinnController {
            inner,
            probe,
            switch,
            usage: WindowUse::new(),
        })
    }
}

/// A [`CongestionController`] wearing quinn-proto's `Controller` trait.
#[derive(Debug)]
pub struct QuinnController {
    inner: Box<dyn CongestionController>,
    probe: Option<ControllerProbe>,
    switch: Option<ControllerSwitch>,
    /// Whether the window is used (RFC 9002 §7.8): quinn-proto's
    /// `app_limited` is false for a sender held back by the CPU or its own
    /// rate limit, so an ACK is also marked application-limited when the
    /// flight before it was under half the window.
    usage: WindowUse,
}

impl QuinnController {
    /// Wrap a controller.
    pub fn new(inner: Box<dyn CongestionController>) -> Self {
        Self {
            inner,
            probe: None,
            switch: None,
            usage: WindowUse::new(),
        }
    }
    /// The wrapped controller.
    pub fn inner(&self) -> &dyn CongestionController {
        &*self.inner
    }
    fn report(&self) {
        if let Some(p) = &self.probe {
            p.store(self.inner.snapshot());
            p.store_pacing(&*self.inner);
        }
    }
    /// Only the pacing rate: cheap enough for every send.
    fn report_pacing(&self) {
        if let Some(p) = &self.probe {
            p.store_pacing(&*self.inner);
        }
    }
    /// Swap in an algorithm installed through the switch, if any.
    fn switch(&mut self) {
        if let Some(next) = self.switch.as_ref().and_then(ControllerSwitch::take) {
            self.inner = next;
            self.report();
        }
    }
}

impl Controller for QuinnController {
    fn on_sent(&mut self, now: Instant, bytes: u64, _last_packet_number: u64) {
        self.switch();
        self.usage.on_sent(bytes);
        self.inner.on_sent(now, bytes);
        self.report_pacing();
    }

    fn on_ack(&mut self, now: Instant, sent: Instant, bytes: u64, app_limited: bool, rtt: &RttEstimator) {
        self.switch();
        // quinn-proto 0.11's RTT estimator has not yet taken this ACK's sample: the
        // packet's own RTT is `now - sent`, RFC 9002 §5.1 `latest_rtt`.
        let latest = now.saturating_duration_since(sent);
        let rtt = RttSample {
            latest,
            smoothed: rtt.get(),
            min: rtt.min().min(latest),
        };
        // RFC 9002 §7.8: no growth while the window is not used.
        let inner = &self.inner;
        let used = self.usage.window_used(inner.window(), || {
            matches!(inner.snapshot().phase, Phase::SlowStart | Phase::ConservativeSlowStart)
        });
        let app_limited = app_limited || !used;
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
        self.switch();
        self.usage.on_end_acks(in_flight);
        self.inner.on_end_acks(now, in_flight, app_limited);
        self.report();
    }

    fn on_congestion_event(&mut self, now: Instant, sent: Instant, is_persistent_congestion: bool, lost_bytes: u64) {
        self.switch();
        let kind = if is_persistent_congestion {
            CongestionKind::PersistentCongestion
        } else if lost_bytes == 0 {
            CongestionKind::Ecn
        } else {
            CongestionKind::Loss
        };
        self.usage.on_lost(lost_bytes);
        self.inner.on_congestion(now, &Congestion { kind, sent, lost_bytes });
        self.report();
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        if let Some(s) = &self.switch {
            s.shared.mtu.store(new_mtu, Ordering::Relaxed);
        }
        self.switch();
        self.inner.on_mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        // quinn-proto asks for the window before sending, through `&self`:
        // an installed algorithm governs from the moment it is installed.
        match self.switch.as_ref().and_then(ControllerSwitch::pending_window) {
            Some(w) => w,
            None => self.inner.window(),
        }
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
        // A copy for a new path (quinn-proto's migration) shares the switch:
        // whichever copy sees an installed algorithm first takes it.
        Box::new(Self {
            inner: self.inner.clone_box(),
            probe: self.probe.clone(),
            switch: self.switch.clone(),
            // The new path has nothing in flight yet.
            usage: WindowUse::new(),
        })
    }

    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::controller::AlgorithmState;

    #[test]
    fn a_switchable_controller_takes_the_installed_algorithm() {
        let slot = SwitchSlot::new();
        let factory = Arc::new(
            QuinnFactory::try_new("newreno".parse().unwrap())
                .unwrap()
                .switchable(slot.clone()),
        );
        let now = Instant::now();
        let mut c = factory.clone().build(now, 1200);
        let switch = slot.take().expect("the build left its switch");
        assert!(slot.take().is_none(), "taken once");
        assert_eq!(switch.probe().latest().unwrap().state, AlgorithmState::NewReno);
        // A loss halves NewReno's window (RFC 9002 §7.3.2), so the installed
        // algorithm's initial window tells the two apart.
        c.on_sent(now, 1200, 0);
        c.on_congestion_event(now + std::time::Duration::from_millis(10), now, false, 1200);
        let newreno_window = c.window();
        assert!(newreno_window < c.initial_window());

        switch.install(&"fixed:rate=1Gbit/s".parse().unwrap(), None, None);
        assert!(matches!(
            switch.probe().latest().unwrap().state,
            AlgorithmState::Fixed { .. }
        ));
        let installed = c.window();
        assert_ne!(installed, newreno_window, "the installed algorithm governs at once");
        c.on_sent(now, 1200, 1);
        assert_eq!(c.window(), installed);
        let inner = c.into_any().downcast::<QuinnController>().unwrap();
        assert!(matches!(inner.inner().snapshot().state, AlgorithmState::Fixed { .. }));

        // Every build hands over a fresh switch.
        let _second = factory.build(now, 1200);
        assert!(slot.take().is_some());
    }

    #[test]
    fn a_factory_refuses_a_spec_out_of_range() {
        let c = crate::CubicConfig {
            beta: 1.5,
            ..Default::default()
        };
        let e = QuinnFactory::try_new(ControllerSpec::Cubic(c)).unwrap_err();
        assert!(matches!(e, FactoryError::Spec { .. }));
        assert!(e.to_string().contains("beta: 1.5 must be in (0, 1)"), "{e}");
        assert!(QuinnFactory::try_new("cubic".parse().unwrap()).is_ok());
    }

    #[test]
    fn an_aggregate_is_joined_or_refused_with_a_reason() {
        let group = Aggregate::new();
        let factory = |spec: &str| QuinnFactory::try_new(spec.parse().unwrap()).unwrap();
        let bw: Arc<dyn BandwidthSource> = Arc::new(crate::SharedBandwidth::new());
        let refused = |f: QuinnFactory| match f.with_aggregate(group.clone()) {
            Err(FactoryError::Aggregate(why)) => why,
            other => panic!("not refused: {other:?}"),
        };
        assert!(refused(factory("guarantee:target=10Mbit/s")).contains("no bandwidth source"));
        assert!(
            refused(factory("guarantee:target=10Mbit/s,abw=inline").with_bandwidth(bw.clone())).contains("abw=inline")
        );
        assert!(refused(factory("cubic").with_bandwidth(bw.clone())).contains("not `cubic`"));
        let own = QuinnFactory::from_fn(|mtu| "newreno".parse::<ControllerSpec>().unwrap().build(mtu));
        assert!(refused(own).contains("from_fn"));
        // With a source the members join: the group counts them.
        let joined = Arc::new(
            factory("guarantee:target=10Mbit/s")
                .with_bandwidth(bw)
                .with_aggregate(group.clone())
                .unwrap(),
        );
        let now = Instant::now();
        let _a = joined.clone().build(now, 1200);
        let _b = joined.build(now, 1200);
        assert_eq!(group.members(), 2);
    }

    #[test]
    fn each_connection_gets_its_own_probe() {
        let probes = ConnectionProbes::new();
        let factory = Arc::new(
            QuinnFactory::try_new("newreno".parse().unwrap())
                .unwrap()
                .with_connection_probes(probes.clone()),
        );
        let now = Instant::now();
        let mut a = factory.clone().build(now, 1200);
        let first = probes.take().expect("the first connection's probe");
        let b = factory.build(now, 1200);
        let second = probes.take().expect("the second connection's probe");
        assert!(probes.take().is_none() && probes.pending() == 0);
        // A loss on the first connection shows on its probe only.
        a.on_sent(now, 1200, 0);
        a.on_congestion_event(now + std::time::Duration::from_millis(10), now, false, 1200);
        assert_eq!(first.latest().unwrap().cwnd_bytes, a.window());
        assert_eq!(second.latest().unwrap().cwnd_bytes, b.window());
        assert_ne!(a.window(), b.window());
    }
}
