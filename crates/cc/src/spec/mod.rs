//! Controller spec strings: `name[:key=value,...]`.
//!
//! Every controller parses from and prints back to a spec string;
//! `spec.to_string().parse() == Ok(spec)`. Display prints the parameters that
//! differ from their defaults (and the required ones), in registry order.
//!
//! ```
//! use tput_cc::ControllerSpec;
//! let spec: ControllerSpec = "guarantee:target=20Mbit/s,eval=32rtt,slot=8rtt".parse().unwrap();
//! assert_eq!(spec.to_string(), "guarantee:target=20Mbit/s,slot=8rtt");
//! assert_eq!(spec.to_string().parse::<ControllerSpec>().unwrap(), spec);
//! let err = "vegas:alpha=two".parse::<ControllerSpec>().unwrap_err();
//! assert_eq!(err.to_string(), "bad controller spec `vegas:alpha=two`: alpha: `two` is not a number");
//! ```

use std::fmt;
use std::sync::Arc;

use crate::aggregate::Aggregate;
use crate::bandwidth::BandwidthSource;
use crate::bbr::{Bbr, BbrConfig};
use crate::compound::{Compound, CompoundConfig};
use crate::controller::CongestionController;
use crate::cubic::{Cubic, CubicConfig};
use crate::error::ConfigError;
use crate::estimator::{Estimating, EstimatorConfig, InlineEstimator};
use crate::fixed::{FixedConfig, FixedWindow};
use crate::guarantee::{AbwSource, Guarantee, GuaranteeConfig, GuaranteeMode};
use crate::newreno::{NewReno, NewRenoConfig};
use crate::units::format_duration;
use crate::vegas::{Vegas, VegasConfig};

/// A controller and its parameters, as named by a spec string.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum ControllerSpec {
    /// `newreno`
    NewReno(NewRenoConfig),
    /// `cubic[:beta=..,c=..,fast_convergence=..,reno_friendly=..,hystart=..]`
    Cubic(CubicConfig),
    /// `vegas[:alpha=..,beta=..,gamma=..]`
    Vegas(VegasConfig),
    /// `ctcp[:alpha=..,beta=..,k=..,gamma=..,zeta=..]`
    Compound(CompoundConfig),
    /// `fixed:rate=RATE`
    Fixed(FixedConfig),
    /// `guarantee:target=RATE[,eval=..,slot=..,k_min=..,kmax_cwnd=..,physical=..,abw=..,mode=..,margin=..,overhead=..]`
    Guarantee(GuaranteeConfig),
    /// `bbr[:startup_gain=..,cwnd_gain=..,drain_gain=..,down_gain=..,up_gain=..,up_cwnd_gain=..,probe_rtt_gain=..,probe_rtt_interval=..,probe_rtt_duration=..,min_rtt_window=..,loss_thresh=..,beta=..,headroom=..,margin=..,iw=..,seed=..]`
    Bbr(BbrConfig),
}

mod error;
mod parse;
mod registry;

pub use error::{SpecError, SpecErrorKind};
pub use registry::{ControllerInfo, ParamInfo, registry};

impl fmt::Display for GuaranteeMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GuaranteeMode::Floor => "floor",
            GuaranteeMode::Paper => "paper",
        })
    }
}

impl fmt::Display for AbwSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AbwSource::Auto => "auto",
            AbwSource::Inline => "inline",
        })
    }
}

impl ControllerSpec {
    /// The canonical name of the controller.
    pub fn name(&self) -> &'static str {
        match self {
            Self::NewReno(_) => "newreno",
            Self::Cubic(_) => "cubic",
            Self::Vegas(_) => "vegas",
            Self::Compound(_) => "ctcp",
            Self::Fixed(_) => "fixed",
            Self::Guarantee(_) => "guarantee",
            Self::Bbr(_) => "bbr",
        }
    }

    /// Check parameter ranges; the error names the bad parameter.
    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            Self::NewReno(c) => c.validate(),
            Self::Cubic(c) => c.validate(),
            Self::Vegas(c) => c.validate(),
            Self::Compound(c) => c.validate(),
            Self::Fixed(c) => c.validate(),
            Self::Guarantee(c) => c.validate(),
            Self::Bbr(c) => c.validate(),
        }
    }

    /// The same spec for a transport whose acknowledged bytes are all payload
    /// (the simulator's TCP model counts segment payload): a guarantee
    /// controller with no explicit `overhead` gets 0, so that its target is
    /// not scaled up for QUIC's headers. Other specs are returned unchanged.
    ///
    /// ```
    /// use tput_cc::ControllerSpec;
    /// let spec: ControllerSpec = "guarantee:target=10Mbit/s".parse().unwrap();
    /// assert_eq!(spec.for_payload_acks().to_string(), "guarantee:target=10Mbit/s,overhead=0");
    /// let spec: ControllerSpec = "guarantee:target=10Mbit/s,overhead=40".parse().unwrap();
    /// assert_eq!(spec.for_payload_acks(), spec);
    /// ```
    pub fn for_payload_acks(&self) -> ControllerSpec {
        match self {
            Self::Guarantee(c) if c.overhead.is_none() => Self::Guarantee(GuaranteeConfig {
                overhead: Some(0),
                ..c.clone()
            }),
            other => other.clone(),
        }
    }

    /// Build the controller for a path whose maximum datagram size is `mss` bytes.
    ///
    /// The guarantee controller built this way has no external bandwidth
    /// source, so it measures `A` and `P` inline; see [`build_with`](Self::build_with).
    pub fn build(&self, mss: u16) -> Box<dyn CongestionController> {
        self.build_with(mss, None)
    }

    /// Build the controller; the guarantee controller reads `A` and `P` from `bandwidth`.
    /// Other controllers ignore it.
    ///
    /// With `abw=inline`, or `abw=auto` and no `bandwidth`, the guarantee
    /// controller reads them from an [`InlineEstimator`] instead (given
    /// `physical=` as its `P`), and comes wrapped in the [`Estimating`]
    /// decorator that feeds the estimator.
    pub fn build_with(&self, mss: u16, bandwidth: Option<Arc<dyn BandwidthSource>>) -> Box<dyn CongestionController> {
        self.build_in(mss, bandwidth, None)
    }

    /// [`build_with`](Self::build_with), and a guarantee controller fed by
    /// `bandwidth` joins `aggregate` (see [`Aggregate`]). One that measures
    /// `A` inline does not (its estimate already excludes the other members),
    /// nor do other controllers.
    pub fn build_in(
        &self,
        mss: u16,
        bandwidth: Option<Arc<dyn BandwidthSource>>,
        aggregate: Option<&Aggregate>,
    ) -> Box<dyn CongestionController> {
        let join = |g: Guarantee| match aggregate {
            Some(group) => g.with_aggregate(group),
            None => g,
        };
        match self {
            Self::NewReno(c) => Box::new(NewReno::new(c.clone(), mss)),
            Self::Cubic(c) => Box::new(Cubic::new(c.clone(), mss)),
            Self::Vegas(c) => Box::new(Vegas::new(c.clone(), mss)),
            Self::Compound(c) => Box::new(Compound::new(c.clone(), mss)),
            Self::Fixed(c) => Box::new(FixedWindow::new(c.clone(), mss)),
            Self::Bbr(c) => Box::new(Bbr::new(c.clone(), mss)),
            Self::Guarantee(c) => match (c.abw, bandwidth) {
                (AbwSource::Auto, Some(source)) => Box::new(join(Guarantee::new(c.clone(), mss, Some(source)))),
                _ => {
                    let estimator = InlineEstimator::new(EstimatorConfig {
                        physical: c.physical,
                        ..EstimatorConfig::default()
                    });
                    // Not joined to `aggregate`: an inline estimate of A already
                    // counts the other members as cross traffic, and the
                    // coordinator would subtract their rates a second time.
                    let inner = Guarantee::new(c.clone(), mss, Some(Estimating::source(&estimator)));
                    Box::new(Estimating::new(estimator, Box::new(inner)))
                }
            },
        }
    }
}

impl fmt::Display for ControllerSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::new();
        let mut put = |cond: bool, k: &str, v: String| {
            if cond {
                parts.push(format!("{k}={v}"));
            }
        };
        match self {
            Self::NewReno(c) => {
                let d = NewRenoConfig::default();
                if let Some(iw) = c.initial_window {
                    put(true, "iw", iw.to_string());
                }
                put(c.loss_window != d.loss_window, "lw", c.loss_window.to_string());
                put(c.count != d.count, "count", "acks".to_string());
                put(c.hystart != d.hystart, "hystart", c.hystart.to_string());
            }
            Self::Cubic(c) => {
                let d = CubicConfig::default();
                put(c.beta != d.beta, "beta", c.beta.to_string());
                put(c.c != d.c, "c", c.c.to_string());
                put(
                    c.fast_convergence != d.fast_convergence,
                    "fast_convergence",
                    c.fast_convergence.to_string(),
                );
                put(
                    c.reno_friendly != d.reno_friendly,
                    "reno_friendly",
                    c.reno_friendly.to_string(),
                );
                put(c.hystart != d.hystart, "hystart", c.hystart.to_string());
            }
            Self::Vegas(c) => {
                let d = VegasConfig::default();
                put(c.alpha != d.alpha, "alpha", c.alpha.to_string());
                put(c.beta != d.beta, "beta", c.beta.to_string());
                put(c.gamma != d.gamma, "gamma", c.gamma.to_string());
            }
            Self::Compound(c) => {
                let d = CompoundConfig::default();
                put(c.alpha != d.alpha, "alpha", c.alpha.to_string());
                put(c.beta != d.beta, "beta", c.beta.to_string());
                put(c.k != d.k, "k", c.k.to_string());
                put(c.gamma != d.gamma, "gamma", c.gamma.to_string());
                put(c.zeta != d.zeta, "zeta", c.zeta.to_string());
            }
            Self::Fixed(c) => put(true, "rate", c.rate.to_string()),
            Self::Guarantee(c) => {
                let d = GuaranteeConfig::new(c.target);
                put(true, "target", c.target.to_string());
                put(c.eval != d.eval, "eval", c.eval.to_string());
                if let Some(s) = c.slot_rtts {
                    put(true, "slot", format!("{s}rtt"));
                }
                put(c.k_min != d.k_min, "k_min", c.k_min.to_string());
                put(c.kmax_cwnd != d.kmax_cwnd, "kmax_cwnd", c.kmax_cwnd.to_string());
                if let Some(r) = c.physical {
                    put(true, "physical", r.to_string());
                }
                put(c.abw != d.abw, "abw", c.abw.to_string());
                put(c.mode != d.mode, "mode", c.mode.to_string());
                put(c.margin != d.margin, "margin", c.margin.to_string());
                if let Some(o) = c.overhead {
                    put(true, "overhead", o.to_string());
                }
            }
            Self::Bbr(c) => {
                let d = BbrConfig::default();
                for (key, v, dv) in [
                    ("startup_gain", c.startup_gain, d.startup_gain),
                    ("cwnd_gain", c.cwnd_gain, d.cwnd_gain),
                    ("drain_gain", c.drain_gain, d.drain_gain),
                    ("down_gain", c.down_gain, d.down_gain),
                    ("up_gain", c.up_gain, d.up_gain),
                    ("up_cwnd_gain", c.up_cwnd_gain, d.up_cwnd_gain),
                    ("probe_rtt_gain", c.probe_rtt_gain, d.probe_rtt_gain),
                ] {
                    put(v != dv, key, v.to_string());
                }
                for (key, v, dv) in [
                    ("probe_rtt_interval", c.probe_rtt_interval, d.probe_rtt_interval),
                    ("probe_rtt_duration", c.probe_rtt_duration, d.probe_rtt_duration),
                    ("min_rtt_window", c.min_rtt_window, d.min_rtt_window),
                ] {
                    put(v != dv, key, format_duration(v));
                }
                for (key, v, dv) in [
                    ("loss_thresh", c.loss_thresh, d.loss_thresh),
                    ("beta", c.beta, d.beta),
                    ("headroom", c.headroom, d.headroom),
                    ("margin", c.pacing_margin, d.pacing_margin),
                ] {
                    put(v != dv, key, v.to_string());
                }
                if let Some(iw) = c.initial_window {
                    put(true, "iw", iw.to_string());
                }
                put(c.seed != d.seed, "seed", c.seed.to_string());
            }
        }
        f.write_str(self.name())?;
        if !parts.is_empty() {
            write!(f, ":{}", parts.join(","))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests;
