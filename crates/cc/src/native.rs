//! quinn-proto's own controllers, run unchanged beside ours.
//!
//! quinn-proto 0.11 ships NewReno, CUBIC and a BBR of its own (a BBRv1
//! after Google's QUIC implementation, not this crate's BBRv3). A
//! [`NativeFactory`] builds one of them for a connection, exactly as
//! quinn-proto's `TransportConfig` would, and only reports its window to a
//! [`ControllerProbe`], so that a simulation can compare, say, `bbr` with
//! [`QuinnCc::Bbr`] on the same path. quinn-proto's controllers have no
//! pacing hook of their own: a [`NativeFactory`]'s controller reports no
//! pacing rate to the probe, so it runs under quinn-proto's pacer (1.25 x
//! cwnd / srtt) alone, as it does in quinn. [`QuinnCc::BbrPaced`] is the
//! one exception: quinn-proto's BBR with the pacing rate it computes (and
//! reports in its `metrics()`) passed to the probe, so that a node paces it
//! as BBR means to be paced, as this crate's `bbr` is.

use std::any::Any;
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Instant;

use quinn_proto::RttEstimator;
use quinn_proto::congestion::{
    BbrConfig, Controller, ControllerFactory, ControllerMetrics, CubicConfig, NewRenoConfig,
};

use crate::adapter::ControllerProbe;
use crate::controller::{AlgorithmState, Phase, Snapshot};
use crate::spec::ControllerSpec;

/// One of quinn-proto's own controllers, by name: `quinn-newreno`,
/// `quinn-cubic` or `quinn-bbr` (with quinn-proto's defaults).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum QuinnCc {
    /// quinn-proto's `NewReno` (RFC 9002 §7).
    NewReno,
    /// quinn-proto's `Cubic` (RFC 9438), its default controller.
    Cubic,
    /// quinn-proto's `Bbr` (BBRv1).
    Bbr,
    /// quinn-proto's `Bbr`, paced by the node at the rate it computes
    /// (`metrics().pacing_rate`) rather than by quinn-proto's pacer alone.
    BbrPaced,
}

/// A name that is not one of quinn-proto's controllers.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown quinn-proto controller `{0}`: expected quinn-newreno, quinn-cubic, quinn-bbr or quinn-bbr-paced")]
pub struct QuinnCcError(String);

impl QuinnCc {
    /// Every one, in the order of [`name`](Self::name)s above.
    pub const ALL: [QuinnCc; 4] = [QuinnCc::NewReno, QuinnCc::Cubic, QuinnCc::Bbr, QuinnCc::BbrPaced];

    /// `quinn-newreno`, `quinn-cubic`, `quinn-bbr` or `quinn-bbr-paced`.
    pub fn name(self) -> &'static str {
        match self {
            QuinnCc::NewReno => "quinn-newreno",
            QuinnCc::Cubic => "quinn-cubic",
            QuinnCc::Bbr => "quinn-bbr",
            QuinnCc::BbrPaced => "quinn-bbr-paced",
        }
    }

    /// Whether the node paces it at the rate it reports ([`QuinnCc::BbrPaced`]).
    pub fn paced(self) -> bool {
        self == QuinnCc::BbrPaced
    }

    /// This crate's controller of the same algorithm, with its defaults
    /// (`newreno`, `cubic`, `bbr`).
    pub fn counterpart(self) -> ControllerSpec {
        match self {
            QuinnCc::NewReno => ControllerSpec::NewReno(Default::default()),
            QuinnCc::Cubic => ControllerSpec::Cubic(Default::default()),
            QuinnCc::Bbr | QuinnCc::BbrPaced => ControllerSpec::Bbr(Default::default()),
        }
    }

    /// quinn-proto's controller of the same algorithm as `spec`, if it has
    /// one and `spec` asks for no parameter but the defaults (quinn-proto's
    /// controllers have parameters of their own, not ours); for `bbr`,
    /// [`QuinnCc::Bbr`], under quinn-proto's pacer alone.
    pub fn for_spec(spec: &ControllerSpec) -> Option<Self> {
        Self::ALL.into_iter().find(|q| q.counterpart() == *spec)
    }

    /// quinn-proto's factory, with its defaults.
    pub fn factory(self) -> Arc<dyn ControllerFactory + Send + Sync> {
        match self {
            QuinnCc::NewReno => Arc::new(NewRenoConfig::default()),
            QuinnCc::Cubic => Arc::new(CubicConfig::default()),
            QuinnCc::Bbr | QuinnCc::BbrPaced => Arc::new(BbrConfig::default()),
        }
    }
}

impl fmt::Display for QuinnCc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for QuinnCc {
    type Err = QuinnCcError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL
            .into_iter()
            .find(|q| q.name() == s.trim())
            .ok_or_else(|| QuinnCcError(s.to_string()))
    }
}

/// Builds one of quinn-proto's own controllers per connection, reporting
/// its window to a probe.
#[derive(Debug, Clone)]
pub struct NativeFactory {
    cc: QuinnCc,
    probe: Option<ControllerProbe>,
}

impl NativeFactory {
    /// A factory of `cc`.
    pub fn new(cc: QuinnCc) -> Self {
        Self { cc, probe: None }
    }
    /// Report snapshots to `probe`: the window and quinn-proto's `ssthresh`
    /// metric, phase [`Phase::CongestionAvoidance`] (quinn-proto does not
    /// tell its phase) and [`AlgorithmState::Custom`] with the controller's
    /// name and no fields. No pacing rate (see the module's documentation),
    /// but for [`QuinnCc::BbrPaced`]: quinn-proto's BBR's own.
    pub fn with_probe(mut self, probe: ControllerProbe) -> Self {
        self.probe = Some(probe);
        self
    }
}

impl ControllerFactory for NativeFactory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        let inner = self.cc.factory().build(now, current_mtu);
        let c = NativeController {
            cc: self.cc,
            inner,
            probe: self.probe.clone(),
        };
        c.report();
        Box::new(c)
    }
}

/// One of quinn-proto's controllers, forwarding every call unchanged.
struct NativeController {
    cc: QuinnCc,
    inner: Box<dyn Controller>,
    probe: Option<ControllerProbe>,
}

impl NativeController {
    fn report(&self) {
        if let Some(p) = &self.probe {
            let m = self.inner.metrics();
            if self.cc.paced() {
                // quinn-proto reports bits per second; no send quantum of its own.
                p.store_rate(m.pacing_rate.map_or(0, |bits| bits / 8), 0);
            }
            p.store(Snapshot::new(
                self.inner.window(),
                m.ssthresh,
                Phase::CongestionAvoidance,
                AlgorithmState::Custom {
                    name: self.cc.name().into(),
                    fields: Vec::new(),
                },
            ));
        }
    }
}

impl Controller for NativeController {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        self.inner.on_sent(now, bytes, last_packet_number);
    }
    fn on_ack(&mut self, now: Instant, sent: Instant, bytes: u64, app_limited: bool, rtt: &RttEstimator) {
        self.inner.on_ack(now, sent, bytes, app_limited, rtt);
    }
    fn on_end_acks(&mut self, now: Instant, in_flight: u64, app_limited: bool, largest_acked: Option<u64>) {
        self.inner.on_end_acks(now, in_flight, app_limited, largest_acked);
        self.report();
    }
    fn on_congestion_event(&mut self, now: Instant, sent: Instant, is_persistent_congestion: bool, lost_bytes: u64) {
        self.inner
            .on_congestion_event(now, sent, is_persistent_congestion, lost_bytes);
        self.report();
    }
    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.inner.on_mtu_update(new_mtu);
    }
    fn window(&self) -> u64 {
        self.inner.window()
    }
    fn metrics(&self) -> ControllerMetrics {
        self.inner.metrics()
    }
    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(NativeController {
            cc: self.cc,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_print_back() {
        for cc in QuinnCc::ALL {
            assert_eq!(cc.name().parse::<QuinnCc>(), Ok(cc));
            assert_eq!(cc.to_string(), cc.name());
            // `bbr` maps to quinn-proto's BBR under its own pacer, not the paced one.
            let plain = if cc == QuinnCc::BbrPaced { QuinnCc::Bbr } else { cc };
            assert_eq!(QuinnCc::for_spec(&cc.counterpart()), Some(plain));
            assert_eq!(cc.paced(), cc == QuinnCc::BbrPaced);
        }
        let err = "quinn-vegas".parse::<QuinnCc>().unwrap_err().to_string();
        assert_eq!(
            err,
            "unknown quinn-proto controller `quinn-vegas`: expected quinn-newreno, quinn-cubic, quinn-bbr or quinn-bbr-paced"
        );
        // Our parameters have no meaning for quinn-proto's controllers.
        assert_eq!(QuinnCc::for_spec(&"cubic:beta=0.5".parse().unwrap()), None);
        assert_eq!(QuinnCc::for_spec(&"vegas".parse().unwrap()), None);
    }

    #[test]
    fn the_probe_sees_quinn_s_own_window() {
        let probe = ControllerProbe::new();
        let factory = Arc::new(NativeFactory::new(QuinnCc::NewReno).with_probe(probe.clone()));
        let now = Instant::now();
        let mut c = factory.build(now, 1200);
        let snap = probe.latest().expect("reported at build");
        assert_eq!(snap.cwnd_bytes, c.window());
        assert_eq!(
            snap.state,
            AlgorithmState::Custom {
                name: "quinn-newreno".into(),
                fields: Vec::new()
            }
        );
        assert_eq!(probe.pacing(), None, "quinn's controllers report no pacing rate");
        // quinn-proto's NewReno halves its window on a loss of a packet sent
        // after its recovery period, which starts at its creation (RFC 9002 §7.3.2).
        let before = c.window();
        let sent = now + std::time::Duration::from_millis(1);
        c.on_sent(sent, 1200, 0);
        c.on_congestion_event(now + std::time::Duration::from_millis(10), sent, false, 1200);
        assert_eq!(c.window(), before / 2);
        assert_eq!(probe.latest().unwrap().cwnd_bytes, before / 2);
        let inner = c.into_any().downcast::<NativeController>().unwrap();
        assert!(
            inner
                .inner
                .into_any()
                .downcast::<quinn_proto::congestion::NewReno>()
                .is_ok()
        );
    }
}
